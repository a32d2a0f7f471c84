"""Real clients' subscriptions through the gateway (nodeapi.gateway): a
chain whose witness produces at the wall clock (graphene's account
statistics numbering, 2.6.N, which python-bitshares' ``Notify`` and
bitsharesjs' ChainStore recognise) is served by a real RPC site, the
upstream; the gateway (an UpstreamPool, the forwarded sets, the
SubscriptionHub installed as tap.py does) serves python-bitshares
``Notify`` (on_account, on_block) and bitsharesjs' ChainStore
(tests/js/statistics.js)."""

import importlib
import json
import os
import threading

import pytest
import pytest_twisted
from twisted.internet import defer, reactor, task, threads, utils

from nodeapi.rpc.access import ApiAccess
from nodeapi.plugins.witness.service import WitnessService

from kit.access import VECTORS
from kit.chain import claim_op, open_chain, transfer_op
from kit.gateway import GatewaySite
from kit.js import JS_DIR
from kit.keys import DEV_WIF, WITNESS_KEYS
from kit.signing import sign
from kit.site import RunningSite, make_node
from kit.wait import wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def live(genesis, tmp_path):
    """(chain with 2.6.N statistics produced at the wall clock, its site)."""
    chain = open_chain(genesis, tmp_path / "blocks", statistics_type=6)
    witness = WitnessService(chain, WITNESS_KEYS, enable_stale_production=True, clock=reactor)
    server = RunningSite(make_node(chain, witness=witness), ApiAccess.from_json(VECTORS))
    witness.startService()
    pytest_twisted.blockon(wait_for(lambda: chain.head_block_num >= 1, timeout=15.0))
    chain.push_transaction(sign(chain, [claim_op()]))
    yield chain, server
    pytest_twisted.blockon(defer.maybeDeferred(witness.stopService))
    server.stop_blocking()
    chain.block_log.close()


@pytest.fixture
def gateway_url(live):
    _chain, server = live
    gw = GatewaySite([f"ws://127.0.0.1:{server.port}"], ApiAccess.from_json(VECTORS))
    pytest_twisted.blockon(gw.start())
    yield f"ws://127.0.0.1:{gw.port}"
    gw.stop_blocking()


def _notify(url, timeout=30.0):
    """python-bitshares ``Notify(accounts=["init1"])`` through ``url``, in
    a thread; once its block callback fires (python-bitshares sets it last)
    init0 sends init1 12.5 TEST through the gateway.  Returns (block ids,
    account updates) seen."""
    from bitshares import BitShares
    from bitshares.notify import Notify

    bts = BitShares(node=url, keys=[DEV_WIF], num_retries=0)
    blocks, updates = [], []
    subscribed, updated = threading.Event(), threading.Event()

    def on_block(block_id):
        blocks.append(block_id)
        subscribed.set()

    def on_account(update):
        updates.append(dict(update))
        updated.set()

    notify = Notify(accounts=["init1"], markets=[], on_account=on_account, on_block=on_block,
                    blockchain_instance=bts)
    listener = threading.Thread(target=notify.listen, daemon=True)
    listener.start()
    try:
        assert subscribed.wait(timeout), "Notify never got a block notice"
        bts.transfer("init1", 12.5, "TEST", account="init0")
        updated.wait(timeout)
    finally:
        notify.close()
        listener.join(10)
    return blocks, updates


@pytest_twisted.inlineCallbacks
def test_python_bitshares_notify_through_the_gateway(live, gateway_url):
    importlib.import_module("bitshares.notify")  # sets a signal handler: main thread only

    chain, _server = live
    blocks, updates = yield threads.deferToThread(_notify, gateway_url)
    # block ids (graphene: the block number in the first 4 bytes), in order
    nums = [int(b[:8], 16) for b in blocks]
    assert all(len(b) == 40 for b in blocks) and nums == sorted(nums)
    assert 1 <= nums[0] and nums[-1] <= chain.head_block_num
    assert updates, "no account update reached Notify through the gateway"
    assert updates[-1]["id"] == "2.6.7" and updates[-1]["owner"] == "1.2.7"
    # the transfer counted (core_in_balance waits for the next maintenance)
    assert updates[-1]["total_ops"] >= 1


@pytest_twisted.inlineCallbacks
def test_bitsharesjs_chainstore_through_the_gateway(live, gateway_url, js_client):
    """ChainStore (``set_subscribe_callback``, then ``get_full_accounts``
    with subscribe) keeps init1's statistics current through the gateway:
    transfers to init1 reach it."""
    chain, _server = live
    done = utils.getProcessOutputAndValue(
        js_client, [os.path.join(JS_DIR, "statistics.js"), gateway_url, "init1"], path=JS_DIR,
        env=dict(os.environ))
    finished = []
    done.addBoth(finished.append)
    for i in range(40):
        if finished:
            break
        chain.push_transaction(sign(chain, [transfer_op(100 + i)]))
        yield task.deferLater(reactor, 1.5, lambda: None)
    yield wait_for(lambda: bool(finished), timeout=30.0)
    out, err, code = finished[0]
    assert code == 0, err.decode()
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["statistics_id"] == "2.6.7"
    assert result["after"]["owner"] == "1.2.7" and result["after"]["total_ops"] > result["before"]


@pytest_twisted.inlineCallbacks
def test_btsdex_through_the_gateway(funded_pair, js_client):
    """btsdex's everyday flows (tests/js/btsdex.js, as in
    tests/clients/test_clients_btsdex.py) through the gateway, ending with
    its 'block' event (``set_subscribe_callback`` and ``get_objects(["2.1.0"])``:
    the dynamic global properties of a new block) routed by the hub."""
    from nodeapi.plugins.market_history.history import MarketHistory, MarketHistoryOptions
    from kit.clients import LiveNode
    from kit.keys import CHAIN_ID

    plugin = MarketHistory(MarketHistoryOptions(bucket_sizes=(60,)))
    funded_pair.add_consumer(plugin)
    live = LiveNode(funded_pair, market_history=plugin)
    yield live.start()
    gw = GatewaySite([live.ws_url], ApiAccess.from_json(VECTORS))
    try:
        yield gw.start()
        out, err, code = yield utils.getProcessOutputAndValue(
            js_client, [os.path.join(JS_DIR, "btsdex.js"), f"ws://127.0.0.1:{gw.port}",
                        CHAIN_ID, DEV_WIF], env=dict(os.environ), path=JS_DIR)
        assert code == 0, err.decode()[-3000:]
        seen = json.loads(out.decode().strip().splitlines()[-1])
        assert seen["chain"]["chainId"] == CHAIN_ID
        assert seen["block"]["id"] == "2.1.0" and seen["block"]["head_block_number"] > 1
    finally:
        yield gw.stop()
        yield live.stop()
