"""Real clients against a live node, shared by every test that drives
python-bitshares or uptick over RPC.

- :class:`LiveNode`: a chain whose witness produces at the wall clock,
  served by the real RPC site on 127.0.0.1 (``ws_url``/``http_url``);
- :func:`bitshares_client`: a python-bitshares ``BitShares`` instance on a
  URL with the given keys (the TESTNODE chain is registered by
  :mod:`kit.signing`);
- :func:`run_uptick`: the ``uptick`` command line in a child process with
  its own wallet directory, so the reactor of the test keeps serving it;
- :data:`NODE_KINDS` and :func:`start_client_node`: the same client flow
  against nodeapi (a ``twistd -n nodeapi`` daemon) and against the reference
  node (bitshares-core's witness_node, kit.reference), so a client's quirk
  (fails on both) is told from a node difference (fails on one).

python-bitshares and uptick are synchronous: call :func:`bitshares_client`
and friends through ``twisted.internet.threads.deferToThread``."""

import os
import sys

import pytest
import pytest_twisted
from twisted.internet import defer, reactor, utils

from nodeapi.rpc.access import ApiAccess
from nodeapi.plugins.witness.service import WitnessService

from kit import signing  # noqa: F401  (registers TESTNODE, the ecdsa signer)
from kit.access import VECTORS
from kit.daemon import Daemon
from kit.keys import CHAIN_ID, DEV_WIF, WITNESS_KEYS
from kit.reference import requires_reference, start_reference
from kit.side_by_side import Side
from kit.site import RunningSite, make_node
from kit.wait import wait_for

UNLOCK = "uptick-test-passphrase"

_UPTICK_MAIN = (
    "import os, sys, graphenebase.ecdsa\n"
    "from bitsharesbase.chains import known_chains\n"
    "graphenebase.ecdsa.SECP256K1_MODULE = 'ecdsa'\n"
    "known_chains['TESTNODE'] = {'chain_id': os.environ['NODEAPI_TEST_CHAIN_ID'],\n"
    "                            'core_symbol': 'TEST', 'prefix': 'TEST'}\n"
    "from uptick.cli import main\n"
    "sys.argv[0] = 'uptick'\n"
    "main()\n")


class LiveNode:
    """``chain`` produced by its witnesses at the wall clock (stale
    production on) and served with the test access vectors (``*`` may use
    every API set).  ``history``: an account-history consumer or None for
    a fresh one."""

    def __init__(self, chain, history=None, **node_kwargs):
        self.chain = chain
        self.witness = WitnessService(chain, WITNESS_KEYS, enable_stale_production=True,
                                      clock=reactor)
        self.server = RunningSite(make_node(chain, history=history, witness=self.witness,
                                            **node_kwargs),
                                  ApiAccess.from_json(VECTORS))
        self.node = self.server.node
        self.port = self.server.port
        self.ws_url = f"ws://127.0.0.1:{self.port}"
        self.http_url = f"http://127.0.0.1:{self.port}"

    def start(self):
        """Start producing; a Deferred firing once the head block is recent
        (produced within the last minute of the wall clock), so clients'
        expirations (wall clock based) fit the chain's limits."""
        import time

        self.witness.startService()
        return wait_for(lambda: self.chain.head_block_num >= 1
                        and self.chain.head_block_time >= time.time() - 60, timeout=15.0)

    @defer.inlineCallbacks
    def stop(self):
        """Stop producing and serving; a Deferred."""
        yield defer.maybeDeferred(self.witness.stopService)
        yield self.server.stop()

    def blocks_later(self, count=1, timeout=30.0):
        """A Deferred firing once ``count`` more blocks are on the chain."""
        target = self.chain.head_block_num + count
        return wait_for(lambda: self.chain.head_block_num >= target, timeout=timeout)


def live_node(chain, **kwargs):
    """A started :class:`LiveNode` from a (non-reactor) pytest fixture;
    stop it with ``pytest_twisted.blockon(node.stop())``."""
    node = LiveNode(chain, **kwargs)
    pytest_twisted.blockon(node.start())
    return node


def forget_cached_objects() -> None:
    """Empty python-bitshares' process-wide object caches (graphenecommon
    ``Caching``: by id and by name, for 60 s in graphenelib >= 1.4.3): the
    shared one and every class's own (``SomeClass.clear_cache()`` gives a
    class a cache of its own, which ``Caching.clear_cache()`` leaves
    alone).  Needed where a test re-reads an object it just changed, or
    talks to two chains whose accounts share names."""
    from graphenecommon.blockchainobject import Caching

    pending = [Caching]
    while pending:
        cls = pending.pop()
        if "_cache" in vars(cls):
            cls.clear_cache()
        pending.extend(cls.__subclasses__())


def bitshares_client(url, keys=(DEV_WIF,), **kwargs):
    """python-bitshares on ``url`` (ws:// or http://) signing with
    ``keys`` (WIF strings); blocking, so call it in a thread."""
    from bitshares import BitShares

    return BitShares(node=url, keys=list(keys), num_retries=0, **kwargs)


def run_uptick(home, url, *args, keys=(DEV_WIF,), chain_id=CHAIN_ID):
    """``uptick --node url <args>`` in a child process whose wallet lives
    under ``home`` (a directory; created on first use, with ``keys``
    added; ``chain_id``: the node's, registered with python-bitshares in
    the child).  Returns a Deferred firing with ``(out, err, exit_code)`` as
    text; the reactor keeps running while uptick talks to the node."""
    env = {"HOME": str(home), "XDG_DATA_HOME": os.path.join(str(home), "data"),
           "XDG_CONFIG_HOME": os.path.join(str(home), "config"), "UNLOCK": UNLOCK,
           "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
           "PYTHONPATH": os.pathsep.join(sys.path), "NODEAPI_TEST_CHAIN_ID": chain_id}
    marker = os.path.join(str(home), ".keys-added")

    @defer.inlineCallbacks
    def run():
        if not os.path.exists(marker) and keys:
            os.makedirs(str(home), exist_ok=True)
            out, err, code = yield _uptick(env, url, ["addkey", *keys])
            if code != 0:
                raise RuntimeError(f"uptick addkey failed: {out}{err}")
            open(marker, "w").close()
        result = yield _uptick(env, url, list(args))
        return result

    return run()


def _uptick(env, url, args):
    argv = ["-c", _UPTICK_MAIN, "--node", url, *args]
    d = utils.getProcessOutputAndValue(sys.executable, argv, env=env)
    return d.addCallback(lambda r: (r[0].decode("utf-8", "replace"),
                                    r[1].decode("utf-8", "replace"), r[2]))


#: the two nodes a client flow runs on, as the ``params`` of a fixture:
#: nodeapi, and the reference (marked ``reference`` and ``slow``, skipped
#: naming the path when its binary is missing)
NODE_KINDS = ("nodeapi", pytest.param(
    "reference", marks=(pytest.mark.reference, pytest.mark.slow, requires_reference)))


def start_client_node(kind: str, tmp) -> Side:
    """A started node of ``kind`` (one of :data:`NODE_KINDS`) under the
    directory ``tmp``, producing 1-second blocks from the bundled genesis
    (same chain id, init0..init10 keyed with the development key), its head
    at block 1 or later, as a :class:`kit.side_by_side.Side` (``.ws_url``,
    ``.call``; ``.node.stop()`` stops it).

    ``nodeapi``: ``twistd -n nodeapi`` with its defaults (the witness
    plugin producing at the wall clock; without login the database,
    network_broadcast, history, orders and custom_operations sets).
    ``reference``: witness_node producing with the 11 init witnesses, every
    API set open to anonymous users."""
    if kind == "nodeapi":
        node = Daemon(os.path.join(str(tmp), "nodeapi")).start()
        try:
            node.wait_head(1)
        except BaseException:
            node.stop()
            raise
    elif kind == "reference":
        node = start_reference(tmp, "reference")
        try:
            node.wait_head(1)
        except BaseException:
            node.stop()
            raise
    else:
        raise ValueError(f"unknown node kind {kind!r}: nodeapi or reference")
    return Side(node, kind)
