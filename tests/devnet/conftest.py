"""Fixtures of the devnet modules: each module starts its own ``devnet``
(a :class:`nodeapi.devnet.pytest_plugin.DevnetProcess` with its arguments); ``fresh`` hands
a test that devnet and reverts it afterwards."""

import pytest

from kit.clients import forget_cached_objects


@pytest.fixture
def fresh(devnet):
    """The module's devnet, put back after the test (snapshot, revert);
    python-bitshares' object caches emptied first (another module's
    devnet has accounts of the same names and other keys)."""
    forget_cached_objects()
    sid = devnet.snapshot()
    yield devnet
    devnet.revert(sid)
