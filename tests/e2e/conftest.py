"""End-to-end fixtures: one osmem-server and ONE ``twistd -n
nodeapi`` daemon for the whole ``tests/e2e`` run, driven only by clients
nobody on the team wrote.

* ``osmem``: an osmem-server on loopback (the search database).
* ``node``: :class:`kit.daemon.Daemon` with ``--plugins "witness searchdb"``
  (see :func:`plugins` for ``witness account_history``),
  ``--searchdb-node-url`` the osmem address, ``--api-access
  etc/api-access.json`` and a small ``--searchdb-bulk-sync``.
* ``scenario``: the python-bitshares story of :mod:`e2e.flows` run once
  against that daemon; its :class:`~e2e.flows.Story` is what the test
  modules assert on.

``tests/e2e`` is a package (``e2e``); ``tests/conftest.py`` (loaded first
by pytest) registers python-bitshares' ``known_chains["TESTNODE"]`` and
selects the pure ``ecdsa`` signer.
"""

import os

import pytest
from osmem_server import OsmemServer

from kit.daemon import ACCESS, Daemon
#: lines per bulk once synchronized: 2 lines per document, so a bulk holds
#: at most 2 documents and every block's documents leave at its end.


BULK_SYNC = 4


@pytest.fixture(scope="session")
def osmem():
    """A private osmem-server for the e2e run; closed at the end."""
    server = OsmemServer.start(addr="127.0.0.1:0", japanese=False)
    yield server
    server.close()


@pytest.fixture(scope="session")
def plugins() -> str:
    """The ``--plugins`` value the daemon runs with: ``witness searchdb``,
    or ``witness account_history`` when the environment says
    ``NODEAPI_E2E_HISTORY=account_history`` (the client scenarios then run
    against the in-memory plugin and the search database checks are
    skipped)."""
    history = os.environ.get("NODEAPI_E2E_HISTORY", "searchdb")
    if history not in ("searchdb", "account_history"):
        raise pytest.UsageError(f"NODEAPI_E2E_HISTORY={history!r}: searchdb or account_history")
    return "witness " + history


@pytest.fixture(scope="session")
def node(tmp_path_factory, osmem, plugins):
    """The one daemon, producing blocks at the wall clock (development
    witness defaults), RPC on a free loopback port."""
    data = tmp_path_factory.mktemp("e2e") / "data"
    daemon = Daemon(data, "--plugins", plugins, "--api-access", ACCESS,
                    "--searchdb-node-url", osmem.url, "--searchdb-bulk-sync", str(BULK_SYNC))
    daemon.start()
    try:
        daemon.wait_head(1)
        yield daemon
    finally:
        daemon.stop()
        log = daemon.log()
        assert "Traceback" not in log, log


@pytest.fixture(scope="session")
def scenario(node):
    """Run the python-bitshares story once (ws with login, then http with
    Basic credentials) and return its :class:`e2e.flows.Story`."""
    from e2e.flows import run_story

    return run_story(node.port)
