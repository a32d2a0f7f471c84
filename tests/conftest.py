"""Shared fixtures: the bundled genesis, a chain over a block log in a tmp
dir, the dev key, and python-bitshares registered for the test chain."""

import os

# Every wire-cache hit is recomputed and compared (nodeapi.rpc.jsonrpc): a
# chain object changed in place after it was stored fails the test that
# reads it.  Set before nodeapi is imported; daemons started by tests inherit it.
os.environ["NODEAPI_CHECK_WIRE_CACHE"] = "1"

import graphenebase.ecdsa  # noqa: E402
import pytest  # noqa: E402
from bitsharesbase.chains import known_chains  # noqa: E402

from nodeapi.chain.genesis import load_genesis  # noqa: E402

DEV_WIF = "5KQwrPbwdL6PhXujxW37FSSQZ1JiwsST4cqQzDeyXtP79zkvFD3"
DEV_PUB = "TEST6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV"
CHAIN_ID = "569cba9a00ee6e807a62389ea67de7c6954835390be62371709ec804c6bfe1f2"

# python-bitshares' "cryptography" signer is broken with the installed ecdsa
# package; its pure "ecdsa" path works.
graphenebase.ecdsa.SECP256K1_MODULE = "ecdsa"
known_chains["TESTNODE"] = {"chain_id": CHAIN_ID, "core_symbol": "TEST", "prefix": "TEST"}


class ListBlockLog:
    """An in-memory block log with the BlockLog contract, used until
    nodeapi.chain.blocklog is available."""

    def __init__(self):
        self._blocks = []

    @property
    def head_num(self):
        return len(self._blocks)

    def append(self, block):
        self._blocks.append(block)

    def read(self, num):
        return self._blocks[num - 1] if 1 <= num <= len(self._blocks) else None

    def blocks(self, start=1):
        for i in range(start, len(self._blocks) + 1):
            yield i, self._blocks[i - 1]

    def close(self):
        pass


@pytest.fixture(scope="session")
def genesis():
    return load_genesis()


@pytest.fixture
def dev_key():
    return DEV_WIF


@pytest.fixture
def block_log(tmp_path):
    try:
        from nodeapi.chain.blocklog import BlockLog
    except ImportError:
        log = ListBlockLog()
    else:
        log = BlockLog(str(tmp_path / "blocks"))
        log.open()
    yield log
    log.close()


@pytest.fixture
def chain(genesis, block_log):
    from nodeapi.chain.chain import Chain

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
def producer(genesis):
    """A chain in memory that produces blocks (the node followed by peers tests)."""
    from nodeapi.chain.chain import Chain

    return Chain(genesis, ListBlockLog())


@pytest.fixture
def follower(genesis):
    """A second chain in memory on the same genesis (the following node)."""
    from nodeapi.chain.chain import Chain

    return Chain(genesis, ListBlockLog())
