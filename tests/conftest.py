"""Shared fixtures: the bundled genesis, chains over real block logs in tmp
dirs, funded chains, the dev key, a chain with history, an osmem-server.
Helpers are in the kit package (tests/kit/); importing it registers
python-bitshares for the test chain (kit.signing)."""

import os
import shutil

import pytest
from osmem_server import OsmemServer

from nodeapi.chain.blocklog import BlockLog
from nodeapi.chain.chain import Chain
from nodeapi.chain.genesis import load_genesis
from nodeapi.plugins.account_history.history import AccountHistory

from kit.api import make_api
from kit.chain import fund, open_chain
from kit.history import Recorder, build_history_chain
from kit.keys import CHAIN_ID, DEV_PUB, DEV_WIF  # noqa: F401  (kit.keys is the home)
from kit.searchdb import write_history_log


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist with ``--dist loadfile``: whole modules per
    worker, and tests/e2e as one unit (kit.parallel); other modes as
    pytest-xdist has them."""
    if config.getvalue("dist") != "loadfile":
        return None
    from kit.parallel import SharedSetupScheduling

    return SharedSetupScheduling(config, log)


@pytest.fixture(scope="session")
def genesis():
    return load_genesis()


@pytest.fixture
def dev_key():
    return DEV_WIF


@pytest.fixture
def block_log(tmp_path):
    log = BlockLog(str(tmp_path / "blocks"))
    log.open()
    yield log
    log.close()


@pytest.fixture
def chain(genesis, block_log):
    return Chain(genesis, block_log)


@pytest.fixture
def captured():
    """Log events emitted during the test: ``[(level name, text, event)]``."""
    from twisted.logger import formatEvent, globalLogPublisher

    events = []

    def observer(event):
        events.append((event["log_level"].name, formatEvent(event), event))

    globalLogPublisher.addObserver(observer)
    yield events
    globalLogPublisher.removeObserver(observer)


@pytest.fixture
def producer(new_chain):
    """A chain that produces blocks (the node followed by peers tests)."""
    return new_chain()


@pytest.fixture
def follower(new_chain):
    """A second chain on the same genesis (the following node)."""
    return new_chain()


@pytest.fixture
def new_chain(genesis, tmp_path):
    """A factory of more chains: ``new_chain(genesis=None, clock=None,
    restart_of=None)`` is a Chain (the bundled genesis unless given) over
    its own block log in ``tmp_path``: empty, or with ``restart_of`` a copy
    of that chain's block log (a node restarted over the same blocks; call
    ``replay()``).  The logs are closed after the test."""
    made = []

    def make(other_genesis=None, clock=None, restart_of=None):
        path = tmp_path / f"chain-{len(made)}"
        if restart_of is not None:
            shutil.copyfile(restart_of.block_log.path, path)
        chain = open_chain(other_genesis or genesis, path, clock=clock)
        made.append(chain)
        return chain

    yield make
    for chain in made:
        chain.block_log.close()


@pytest.fixture
def funded(chain):
    """init0 claimed the genesis balance in block 1."""
    return fund(chain)


@pytest.fixture(scope="module")
def built(genesis, tmp_path_factory):
    """A chain with history (kit.history, 4 rounds of 6 transfers),
    recorded by a Recorder and the in-memory AccountHistory; one per
    module: ``(chain, recorder, account_history, facts)``."""
    chain = open_chain(genesis, tmp_path_factory.mktemp("built") / "blocks")
    rec, hist = Recorder(), AccountHistory()
    chain.add_consumer(rec)
    chain.add_consumer(hist)
    info = build_history_chain(chain, rounds=4, per_trx=6)
    yield chain, rec, hist, info
    chain.block_log.close()


@pytest.fixture(scope="session")
def history_log_built(genesis, tmp_path_factory):
    """The block log of :func:`history_log`, written once per session:
    ``(path, expected)``; tests use their own copy."""
    path = str(tmp_path_factory.mktemp("history-log") / "blocks")
    return path, write_history_log(genesis, path)


@pytest.fixture
def history_log(history_log_built, tmp_path):
    """A block log with transfers, account creation, asset create/issue,
    fills and a second calendar month; returns (path, expected) where
    expected maps N -> (account, M, block number).  A copy (with its
    index) of the session's :func:`history_log_built`: the test may append
    to it."""
    built, expected = history_log_built
    path = str(tmp_path / "blocks")
    for suffix in ("", ".index"):
        if os.path.exists(built + suffix):
            shutil.copyfile(built + suffix, path + suffix)
    return path, dict(expected)


@pytest.fixture(scope="module")
def osmem():
    """A private osmem-server on loopback, one per module."""
    server = OsmemServer.start(addr="127.0.0.1:0", japanese=False)
    yield server
    server.close()


@pytest.fixture
def db(funded):
    """The database API (kit.api.make_api) over ``funded``."""
    return make_api(funded)[0]


@pytest.fixture(scope="session")
def js_client():
    """The ``node`` executable, with tests/js's bitsharesjs installed."""
    import shutil as _shutil

    from kit.js import npm_install

    npm_install()
    return _shutil.which("node")


@pytest.fixture
def funded_pair(new_chain):
    """A fresh chain where init0 claimed the genesis balance and sent init1
    10^10 core satoshis (100,000 TEST), both in block 1."""
    from kit.chain import CORE, claim_wire, produce, push_wire

    chain = new_chain()
    push_wire(chain, claim_wire())
    push_wire(chain, [0, {"from": "1.2.6", "to": "1.2.7",
                          "amount": {"amount": 10 ** 10, "asset_id": CORE}, "extensions": []}])
    produce(chain)
    return chain


@pytest.fixture
def site(chain):
    """The real RPC site of ``chain`` on a loopback port, default
    api-access (:class:`kit.site.RunningSite`); stopped after the test."""
    from nodeapi.rpc.access import ApiAccess
    from kit.site import RunningSite, make_node

    running = RunningSite(make_node(chain), ApiAccess.default())
    yield running
    running.stop_blocking()


@pytest.fixture
def vectors_site(chain):
    """Like :func:`site`, with the api-access users of
    :data:`kit.access.VECTORS` (logins with restricted API sets)."""
    from nodeapi.rpc.access import ApiAccess
    from kit.access import VECTORS
    from kit.site import RunningSite, make_node

    running = RunningSite(make_node(chain), ApiAccess.from_json(VECTORS))
    yield running
    running.stop_blocking()

