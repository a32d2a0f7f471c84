"""Fixtures of the devnet modules: each module starts its own ``devnet``
(a :class:`nodeapi.devnet.pytest_plugin.DevnetProcess` with its arguments); ``fresh`` hands
a test that devnet and reverts it afterwards.  Every devnet subprocess runs
this checkout's nodeapi (``PYTHONPATH``), not one installed elsewhere."""

import os

import pytest

from kit.clients import forget_cached_objects
from kit.daemon import ROOT


@pytest.fixture(scope="session", autouse=True)
def _devnets_run_this_checkout():
    """``PYTHONPATH`` starts with the checkout for the session's devnets
    (DevnetProcess passes the environment on)."""
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = ROOT + (os.pathsep + old if old else "")
    yield
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old


@pytest.fixture
def fresh(devnet):
    """The module's devnet, put back after the test (snapshot, revert);
    python-bitshares' object caches emptied first (another module's
    devnet has accounts of the same names and other keys)."""
    forget_cached_objects()
    sid = devnet.snapshot()
    yield devnet
    devnet.revert(sid)
