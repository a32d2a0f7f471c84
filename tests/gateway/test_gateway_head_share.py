"""Per-block sharing of identical head-dependent reads through the gateway
(nodeapi.gateway.head_share): a real RPC site of a chain is the upstream
(its own metrics count the calls it answers), the gateway's site
(kit.gateway, per-block sharing on) serves real WebSocket clients
(kit.rpc).  Within one head block identical getters cost the upstream one
call; a new head block (seen by the health check, or first by the
subscription hub's notices) or a broadcast through the gateway ends the
sharing."""

import pytest
import pytest_twisted
from twisted.internet import defer, reactor, task

from nodeapi.gateway.figures import GatewayCollector
from nodeapi.gateway.head_share import notice_head, shareable
from nodeapi.metrics import Metrics
from nodeapi.rpc.access import ApiAccess

from kit.access import VECTORS
from kit.api import create_gold
from kit.chain import produce, transfer_op
from kit.gateway import GatewaySite
from kit.rpc import ws_connect
from kit.signing import sign
from kit.site import RunningSite, make_node
from kit.wait import wait_for


@pytest.fixture
def upstream(funded):
    metrics = Metrics(funded)
    site = RunningSite(make_node(funded), ApiAccess.from_json(VECTORS), metrics=metrics)
    site.metrics = metrics
    yield site
    site.stop_blocking()


@pytest.fixture
def gw(upstream):
    gw = GatewaySite([f"ws://127.0.0.1:{upstream.port}"], ApiAccess.from_json(VECTORS),
                     share_seconds=30)
    pytest_twisted.blockon(gw.start())
    yield gw
    gw.stop_blocking()


def served(upstream, function):
    """Calls of ``database.function`` the upstream answered."""
    return upstream.metrics.registry.get_sample_value(
        "nodeapi_rpc_calls_total", {"api": "database", "function": function,
                                    "outcome": "ok"}) or 0


READS = (("get_order_book", "TEST", "GOLD", 10), ("get_limit_orders", "TEST", "GOLD", 10),
         ("get_objects", ["2.1.0", "1.3.0"]), ("get_account_balances", "1.2.6", []))


@defer.inlineCallbacks
def read_all(clients):
    """Each client makes each read of :data:`READS` at once: the answers."""
    replies = yield defer.gatherResults(
        [c.request("database", r[0], list(r[1:])) for c in clients for r in READS])
    for reply in replies:
        assert "result" in reply, reply
    return [r["result"] for r in replies]


@pytest_twisted.inlineCallbacks
def test_identical_reads_of_one_block_share_one_upstream_call(funded, upstream, gw):
    create_gold(funded)
    share = gw.gateway.share
    yield wait_for(lambda: share.generation()[0] == funded.head_block_num)
    a, b = (yield ws_connect(gw.port)), (yield ws_connect(gw.port))
    before = {r[0]: served(upstream, r[0]) for r in READS}
    first = yield read_all([a])
    second = yield read_all([b, a])
    assert second == first * 2
    assert {r[0]: served(upstream, r[0]) - before[r[0]] for r in READS} == \
        {r[0]: 1 for r in READS}
    assert (share.hits, share.misses) == (8, 4) and len(share) == 4
    # a new head block: the health check sees it, the reads go upstream again
    funded.push_transaction(sign(funded, [transfer_op(777)]))
    produce(funded)
    yield wait_for(lambda: share.generation()[0] == funded.head_block_num)
    third = yield read_all([a, b])
    assert {r[0]: served(upstream, r[0]) - before[r[0]] for r in READS} == \
        {r[0]: 2 for r in READS}
    assert third[2][0]["head_block_number"] == funded.head_block_num
    assert int(third[3][0]["amount"]) < int(first[3][0]["amount"])  # init0 paid
    figures = {m.name: m.samples[0].value for m in GatewayCollector(gw.gateway).collect()
               if m.name.startswith("nodeapi_gateway_head_share")}
    # b's reads came while a's were in flight: misses here, shared in flight
    assert gw.gateway.shared == 4
    assert figures == {"nodeapi_gateway_head_share_hits": 8,
                       "nodeapi_gateway_head_share_misses": 12,
                       "nodeapi_gateway_head_share_answers": 4}
    for c in (a, b):
        c.dropConnection()


@pytest_twisted.inlineCallbacks
def test_a_broadcast_through_the_gateway_ends_the_sharing(funded, upstream, gw):
    """bitshares-core's reads see a pending transaction at once
    (libraries/chain/db_block.cpp ``_push_transaction`` applies it to the
    state): a read after a broadcast through the gateway goes upstream."""
    share = gw.gateway.share
    client = yield ws_connect(gw.port)
    balances = ("get_account_balances", "1.2.6", ["1.3.0"])
    (before,) = (yield client.call("database", *balances))
    assert (yield client.call("database", *balances)) == [before]
    calls = served(upstream, "get_account_balances")
    net = yield client.call(1, "network_broadcast")
    yield client.call(net, "broadcast_transaction", sign(funded, [transfer_op(555)]))
    (after,) = yield client.call("database", *balances)
    assert served(upstream, "get_account_balances") == calls + 1
    assert share.generation()[1] == 1
    # the pending transfer seen at once: 555 sent + the 2,000,000 fee of
    # kit.chain.transfer_op
    assert int(after["amount"]) == int(before["amount"]) - 555 - 2_000_000
    client.dropConnection()


@pytest_twisted.inlineCallbacks
def test_the_hubs_notices_teach_the_head_before_the_client_reads(funded, upstream, gw):
    """A client told of block N by its subscription reads after it through
    the gateway: the hub learned N from the same notice first, so no answer
    kept for an older block is shared."""
    share = gw.gateway.share
    client = yield ws_connect(gw.port)
    yield client.call("database", "set_subscribe_callback", 3, False)
    yield client.call("database", "get_objects", ["2.1.0"])
    yield client.call("database", "get_dynamic_global_properties")
    notice = client.next_notice()
    produce(funded)
    _cb, (objects,) = yield notice
    head = objects[0]["head_block_number"]
    assert head == funded.head_block_num
    assert share.head_of(gw.hub.link) >= head
    dgp = yield client.call("database", "get_dynamic_global_properties")
    assert dgp["head_block_number"] == head
    client.dropConnection()


def test_what_is_shared():
    """Getters of the database, history, orders, asset and block sets;
    never broadcasts, subscription functions or other sets."""
    assert shareable("database", "get_order_book") and shareable("history",
                                                                 "get_account_history")
    assert shareable("database", "lookup_accounts") and shareable("block", "get_blocks")
    assert not shareable("database", "set_subscribe_callback")
    assert not shareable("database", "subscribe_to_market")
    assert not shareable("database", "validate_transaction")
    assert not shareable("network_broadcast", "broadcast_transaction")
    assert not shareable("network_node", "get_info")
    assert not shareable("crypto", "get_something")
    assert notice_head("0000002a" + "ab" * 16) == 42
    assert notice_head([{"id": "2.1.0", "head_block_number": 7}, {"id": "2.5.1"}]) == 7
    assert notice_head([{"id": "2.5.1"}]) is None and notice_head(["1.7.0"]) is None


@pytest_twisted.inlineCallbacks
def test_an_answer_is_shared_for_max_age_at_most(funded, upstream, gw):
    """No new block, no broadcast: an answer still goes stale after
    ``max_age`` seconds (what the gateway cannot see)."""
    share = gw.gateway.share
    share.max_age = 0.3
    client = yield ws_connect(gw.port)
    calls = served(upstream, "get_objects")
    for _ in range(3):
        yield client.call("database", "get_objects", ["1.3.0"])
    assert served(upstream, "get_objects") == calls + 1
    yield task.deferLater(reactor, 0.4, lambda: None)
    yield client.call("database", "get_objects", ["1.3.0"])
    assert served(upstream, "get_objects") == calls + 2
    client.dropConnection()


@pytest_twisted.inlineCallbacks
def test_a_lagging_upstreams_answer_is_not_shared(new_chain):
    """Two upstreams of one chain, one three blocks behind: the reads it
    answers reach their caller only; those of the one at the head the
    gateway knows are shared."""
    ahead, behind = new_chain(), new_chain()
    produce(ahead, 5)
    produce(behind, 2)
    sites = [RunningSite(make_node(c), ApiAccess.from_json(VECTORS)) for c in (ahead, behind)]
    gw = GatewaySite([f"ws://127.0.0.1:{s.port}" for s in sites],
                     ApiAccess.from_json(VECTORS), share_seconds=30)
    try:
        yield gw.start()
        share = gw.gateway.share
        assert share.generation()[0] == 5
        client = yield ws_connect(gw.port)
        heads = []
        for i in range(8):  # distinct reads: each goes upstream, in turn
            dgp = yield client.call("database", "get_objects", ["2.1.0", f"1.2.{i}"])
            heads.append(dgp[0]["head_block_number"])
        assert set(heads) == {5, 2}
        assert len(share) == heads.count(5)  # the lagging one's are not kept
        assert all(b'"head_block_number":5' in answer for answer, _ in share._answers.values())
        for i in range(8):  # shared or asked again: never the lagging answer twice
            dgp = yield client.call("database", "get_objects", ["2.1.0", f"1.2.{i}"])
            assert heads[i] == 2 or dgp[0]["head_block_number"] == 5
        client.dropConnection()
    finally:
        yield gw.stop()
        for s in sites:
            yield s.stop()
