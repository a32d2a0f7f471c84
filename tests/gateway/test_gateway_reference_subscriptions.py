"""The gateway's merged subscriptions in front of bitshares-core 7.0.2's
``witness_node`` (kit.reference): the reference subscribes at most
``api_limit_get_full_accounts_subscribe`` (100) accounts per connection
(libraries/app/database_api.cpp ``get_full_accounts``), so a direct client
subscribing 101 accounts is not told of the 101st's payment, while
through the gateway, whose clients subscribe the same 101 accounts, the
accounts are spread over two upstream connections and both payments are
noticed; and a wallet whose subscription an upstream (a reference
follower) carries hears of its payment when that upstream is killed or
frozen."""

import signal

import pytest
import pytest_twisted
from twisted.internet import threads

from nodeapi.rpc.access import ApiAccess

from kit.access import VECTORS
from kit.chain import claim_op
from kit.gateway import GatewaySite
from kit.reference import requires_reference, start_reference
from kit.rpc import ws_connect
from kit.signing import signed_over_head
from kit.wait import wait_for
from kit.wallets import create_accounts_over_rpc, paid, pay_over_rpc, wallet_names

pytestmark = [pytest.mark.reference, pytest.mark.slow, requires_reference]


@pytest.fixture(scope="module")
def producer(tmp_path_factory):
    """One reference producer for the module, init0's genesis balance
    claimed: the tests only add accounts of their own and pay, each
    reading balances before it pays (their followers are their own)."""
    node = start_reference(tmp_path_factory.mktemp("gateway-reference"), "producer")
    try:
        node.wait_head(1)
        node.call("broadcast_transaction_synchronous", signed_over_head(node, [claim_op()]),
                  api="network_broadcast", timeout=60)
        yield node
    finally:
        node.stop()


def db(proto, function, *args):
    return proto.call("database", function, *args)


@pytest_twisted.inlineCallbacks
def test_101_accounts_through_the_gateway_in_front_of_bitshares_core(producer):
    ids = yield threads.deferToThread(create_accounts_over_rpc, producer, wallet_names(101))
    direct = yield ws_connect(int(producer.ws_url.rsplit(":", 1)[1]))
    gw = GatewaySite([producer.ws_url], ApiAccess.from_json(VECTORS))
    yield gw.start()
    try:
        yield db(direct, "set_subscribe_callback", 1, False)
        many = yield ws_connect(gw.port)
        yield db(many, "set_subscribe_callback", 2, False)
        for proto in (direct, many):
            for i in range(0, 100, 50):  # api_limit_get_full_accounts: 50 per call
                yield db(proto, "get_full_accounts", ids[i:i + 50], True)
        yield db(direct, "get_full_accounts", ids[100:], True)
        last = yield ws_connect(gw.port)
        yield db(last, "set_subscribe_callback", 3, False)
        yield db(last, "get_full_accounts", ids[100:], True)
        assert len(gw.hub.links) == 2  # the 101st account on a second connection
        yield threads.deferToThread(pay_over_rpc, producer, ids[100:], 700)
        yield threads.deferToThread(pay_over_rpc, producer, ids[99:100], 600)
        yield wait_for(lambda: paid(direct.notices, ids[99], 600)
                       and paid(many.notices, ids[99], 600), timeout=30.0)
        yield wait_for(lambda: paid(last.notices, ids[100], 700), timeout=30.0)
        # bitshares-core's limit: the direct connection never heard of the 101st
        assert not paid(direct.notices, ids[100], 700)
        assert not paid(many.notices, ids[100], 700)
    finally:
        direct.dropConnection()
        yield gw.stop()


@pytest.fixture
def pair(producer, tmp_path):
    """The producer and a reference follower over P2P."""
    follower = start_reference(tmp_path, "follower", produce=False, seed_node=producer.p2p)
    try:
        follower.wait_head(producer.head())
        yield producer, follower
    finally:
        if follower.proc is not None and follower.proc.poll() is None:
            follower.proc.send_signal(signal.SIGCONT)
        follower.stop()


@pytest.mark.parametrize("how", ["kill", "freeze"])
@pytest_twisted.inlineCallbacks
def test_a_wallet_on_a_lost_reference_upstream_hears_of_its_payment(pair, how):
    """Two reference upstreams (the producer, its P2P follower); the
    follower carries a wallet's subscription to init1 and is killed
    (SIGKILL) or frozen (SIGSTOP); a payment to init1 follows on the
    producer: the subscription moves there and the wallet is told."""
    producer, follower = pair
    gw = GatewaySite([producer.ws_url, follower.ws_url], ApiAccess.from_json(VECTORS))
    yield gw.start()
    try:
        wallet = yield ws_connect(gw.port)
        yield db(wallet, "set_subscribe_callback", 1, False)
        found = yield db(wallet, "get_full_accounts", ["init1"], True)
        before = sum(int(b["balance"]) for b in found[0][1]["balances"]
                     if b["asset_type"] == "1.3.0")
        shard = gw.hub.shards[0]
        producer_up, follower_up = gw.pool.upstreams
        if shard.upstream is producer_up:  # the follower carries it
            shard.avoid = producer_up
            shard.detach(shard.link)
            shard.pick()
        yield wait_for(lambda: shard.link is follower_up and shard.noticed_head is not None,
                       timeout=30.0)
        follower.proc.send_signal(signal.SIGKILL if how == "kill" else signal.SIGSTOP)
        yield threads.deferToThread(pay_over_rpc, producer, ["1.2.7"], 4242)
        yield wait_for(lambda: paid(wallet.notices, "1.2.7", before + 4242), timeout=60.0)
        assert shard.upstream is producer_up
    finally:
        yield gw.stop()
