"""The gateway's merged subscriptions (nodeapi.gateway.subscriptions) in one
reactor: real RPC sites of one chain are the upstreams, the gateway's own
site (an UpstreamPool, the forwarded sets, the SubscriptionHub installed as
in tap.py: kit.gateway) serves real WebSocket clients (kit.rpc).  What a client gets
through the gateway is compared with what the same calls get from the
upstream directly; the rules are bitshares-core's
(libraries/app/database_api.cpp ``handle_object_changed``,
``on_applied_block``; libraries/chain/db_notify.cpp
``get_relevant_accounts``)."""

import orjson
import pytest
import pytest_twisted
import treq
from bitsharesbase import operations
from twisted.internet import defer, reactor, task

from nodeapi.protocol.wire import to_wire
from nodeapi.rpc.access import ApiAccess

from kit.access import VECTORS
from kit.api import RecordingSession, create_gold
from kit.chain import amt, limit_order, produce, transfer_op, with_fee
from kit.gateway import GatewaySite
from kit.rpc import ws_connect
from kit.signing import sign
from kit.site import RunningSite, make_node
from kit.wait import wait_for


def _site(chain, everything=True):
    return RunningSite(make_node(chain, enable_subscribe_to_all=everything),
                       ApiAccess.from_json(VECTORS))


@pytest.fixture
def upstream(funded):
    site = _site(funded)
    yield site
    site.stop_blocking()


@defer.inlineCallbacks
def start_gateway(ports):
    """A started kit.gateway.GatewaySite over the upstreams on ``ports``."""
    gw = GatewaySite([f"ws://127.0.0.1:{port}" for port in ports],
                     ApiAccess.from_json(VECTORS))
    yield gw.start()
    return gw


@pytest.fixture
def gw(upstream):
    gw = pytest_twisted.blockon(start_gateway([upstream.port]))
    yield gw
    pytest_twisted.blockon(gw.stop())


@defer.inlineCallbacks
def connect(port, n):
    """``n`` WebSocket clients of ``port``."""
    out = []
    for _ in range(n):
        out.append((yield ws_connect(port)))
    return out


def db(proto, function, *args):
    return proto.call("database", function, *args)


def sleep(seconds=0.15):
    return task.deferLater(reactor, seconds, lambda: None)


@defer.inlineCallbacks
def settle(*clients, count=None):
    """Wait until each client got ``count`` notices (or until they stop
    coming), then a little longer for stragglers."""
    if count is not None:
        yield wait_for(lambda: all(len(c.notices) >= count for c in clients), timeout=10.0)
    yield sleep()


def stats_of(chain, account):
    return chain.state.get(account)["statistics"]


@pytest_twisted.inlineCallbacks
def test_overlapping_interests_get_what_the_upstream_sends_each(funded, upstream, gw):
    s6, s7 = stats_of(funded, "1.2.6"), stats_of(funded, "1.2.7")
    a, b, c, d, e = yield connect(gw.port, 5)
    yield db(d, "get_objects", ["2.1.0"])
    assert gw.hub.link is None  # no client subscribed yet: the hub is off the upstreams
    direct_a, direct_b = (yield ws_connect(upstream.port)), (yield ws_connect(upstream.port))
    for proto in (a, direct_a):
        yield db(proto, "set_subscribe_callback", 5, False)
        yield db(proto, "get_objects", [s6])
    for proto in (b, direct_b):
        yield db(proto, "set_subscribe_callback", 8, False)
        yield db(proto, "get_objects", [s6, s7])
    yield db(c, "set_subscribe_callback", 9, False)  # a callback, nothing read
    yield db(d, "get_objects", [s7], True)  # no callback: nothing subscribes
    yield db(e, "set_subscribe_callback", 4, False)
    yield db(e, "get_objects", [s6], False)  # explicitly not subscribed
    yield db(e, "set_auto_subscription", False)
    yield db(e, "get_accounts", ["1.2.7"])  # auto-subscription off
    funded.push_transaction(sign(funded, [transfer_op(1000)]))
    produce(funded)
    yield settle(a, b, direct_a, direct_b, count=1)
    assert a.notices == direct_a.notices and b.notices == direct_b.notices
    assert [n[0] for n in a.notices] == [5] and [n[0] for n in b.notices] == [8]
    assert [o["id"] for o in a.notices[0][1][0]] == [s6]
    assert sorted(o["id"] for o in b.notices[0][1][0]) == sorted([s6, s7])
    assert c.notices == d.notices == e.notices == []  # nor 2.1.0, which the hub subscribes
    # one upstream subscription for both: the hub's link subscribed each id once
    assert set(gw.hub.interests.by_id) == {s6, s7}
    assert len(gw.hub.clients) == 4  # d set no callback: it never became one
    a.sendClose()
    yield wait_for(lambda: len(gw.hub.clients) == 3)  # a's interest is gone with it
    funded.push_transaction(sign(funded, [transfer_op(1000)]))
    produce(funded)
    yield settle(b, direct_b, count=2)
    assert b.notices == direct_b.notices and len(a.notices) == 1
    assert set(gw.hub.interests.by_id) == {s6, s7}  # b still has both


@pytest_twisted.inlineCallbacks
def test_full_account_subscriber_gets_the_batches_of_its_account(funded, upstream, gw):
    """bitshares-core ``is_impacted_account``: a batch concerning the
    subscribed account goes whole (with everything else the upstream sent
    the gateway, here the statistics another client subscribed and 2.1.0);
    a batch not concerning it, not at all."""
    s6, s7 = stats_of(funded, "1.2.6"), stats_of(funded, "1.2.7")
    f, g = (yield ws_connect(gw.port)), (yield ws_connect(gw.port))
    yield db(f, "set_subscribe_callback", 3, False)
    yield db(f, "get_full_accounts", ["init1"], True)
    yield db(g, "set_subscribe_callback", 6, False)
    yield db(g, "get_objects", [s6])
    funded.push_transaction(sign(funded, [transfer_op(500, to="1.2.8")]))  # init0 -> init2
    produce(funded)
    yield settle(g, count=1)
    assert f.notices == [] and [[o["id"] for o in g.notices[0][1][0]]] == [[s6]]
    funded.push_transaction(sign(funded, [transfer_op(700)]))  # init0 -> init1
    produce(funded)
    yield settle(f, count=2)
    (cb1, (created,)), (cb2, (changed,)) = f.notices
    assert cb1 == cb2 == 3
    assert [(o["owner"], o["balance"]) for o in created] == [("1.2.7", 700)]
    # the upstream's whole changed batch (its witness, init0's balance too)
    assert {"2.1.0", s6, s7} <= {o["id"] for o in changed}
    assert [[o["id"] for o in n[1][0]] for n in g.notices] == [[s6], [s6]]


@pytest_twisted.inlineCallbacks
def test_created_and_removed_objects(funded, upstream, gw):
    """``notify_remove_create``: created objects and removed ids reach
    that client only; a removal reaches a client whose account the removed
    object belonged to (the order's seller) and not the others."""
    create_gold(funded)
    everything, seller, other = yield connect(gw.port, 3)
    direct = yield ws_connect(upstream.port)
    for proto in (everything, direct):
        yield db(proto, "set_subscribe_callback", 1, True)
    yield db(seller, "set_subscribe_callback", 2, False)
    yield db(seller, "get_full_accounts", ["1.2.7"], True)
    yield db(other, "set_subscribe_callback", 3, False)
    yield db(other, "get_objects", ["1.3.0"])
    order = limit_order(funded, "1.2.7", amt(100, "1.3.1"), amt(10 ** 6))
    produce(funded)
    yield settle(everything, seller, count=1)
    created = [o for _, (batch,) in everything.notices for o in batch
               if isinstance(o, dict) and o["id"] == order]
    assert len(created) == 1 and created[0]["seller"] == "1.2.7"
    assert "2.1.0" not in [o["id"] for o in everything.notices[0][1][0]]  # a created batch
    op, _ = with_fee(funded, operations.Limit_order_cancel, fee_paying_account="1.2.7",
                     order=order, extensions=[])
    funded.push_transaction(sign(funded, [op]))
    before = len(everything.notices), len(seller.notices)
    produce(funded)
    yield wait_for(lambda: len(everything.notices) > before[0]
                   and len(seller.notices) > before[1])
    yield settle()
    assert [order] in [n[1][0] for n in everything.notices[before[0]:]]
    assert [order] in [n[1][0] for n in seller.notices[before[1]:]]
    assert all(n[1][0] != [order] for n in other.notices)
    yield wait_for(lambda: len(direct.notices) == len(everything.notices))
    assert everything.notices == direct.notices  # what the upstream sends it directly


@pytest_twisted.inlineCallbacks
def test_block_and_pending_notices_encoded_once(funded, upstream, gw):
    sessions = [RecordingSession() for _ in range(3)]
    clients = [gw.hub.client_of(s) for s in sessions]
    for i, client in enumerate(clients):
        yield client.set_block_applied_callback(10 + i)
    yield clients[0].set_pending_transaction_callback(77)
    yield clients[1].set_subscribe_callback(20)
    yield clients[1].read("get_objects", [["2.1.0"]])
    yield clients[2].set_subscribe_callback(21)
    yield clients[2].read("get_objects", [["2.1.0"]])
    funded.push_transaction(sign(funded, [transfer_op(3)]))
    produce(funded)
    yield wait_for(lambda: all(len(s.notices) >= 1 for s in sessions)
                   and len(sessions[1].notices) >= 2 and len(sessions[0].notices) >= 2)
    yield sleep()
    blocks = [[n for n in s.notices if n[0] in (10, 11, 12)] for s in sessions]
    assert [[cb for cb, _ in b] for b in blocks] == [[10], [11], [12]]
    payloads = [b[0][1] for b in blocks]
    assert payloads[0] is payloads[1] is payloads[2]  # one encoding for all
    assert orjson.loads(orjson.dumps(payloads[0])) == funded.head_block_id
    pending = [n for n in sessions[0].notices if n[0] == 77]
    assert len(pending) == 1 and orjson.loads(orjson.dumps(pending[0][1]))["operations"][0][0] == 0
    dgp = [[n[1] for n in s.notices if n[0] in (20, 21)] for s in sessions[1:]]
    assert dgp[0][0] is dgp[1][0]  # the same selection, the same bytes


@pytest_twisted.inlineCallbacks
def test_markets_share_one_upstream_subscription(funded, upstream, gw):
    create_gold(funded)
    a, b, direct = (yield ws_connect(gw.port)), (yield ws_connect(gw.port)), \
        (yield ws_connect(upstream.port))
    yield db(a, "subscribe_to_market", 31, "GOLD", "TEST")
    yield db(b, "subscribe_to_market", 32, "1.3.0", "1.3.1")
    yield db(direct, "subscribe_to_market", 32, "TEST", "1.3.1")
    assert list(gw.hub.shards[0]._market_cbs) == [("1.3.0", "1.3.1")]
    order = limit_order(funded, "1.2.7", amt(100, "1.3.1"), amt(10 ** 6))
    produce(funded)
    yield settle(a, b, count=1)
    assert [n[0] for n in a.notices] == [31] and [n[0] for n in b.notices] == [32]
    assert a.notices[0][1] == b.notices[0][1] and a.notices[0][1][0][0]["id"] == order
    yield db(a, "unsubscribe_from_market", "TEST", "GOLD")
    limit_order(funded, "1.2.7", amt(101, "1.3.1"), amt(10 ** 6))
    limit_order(funded, "1.2.6", amt(10 ** 6), amt(100, "1.3.1"))  # takes the first
    produce(funded)
    yield settle(b, direct, count=2)
    assert len(a.notices) == 1
    # the taker took the better order, both gone within the block: the
    # fills only (an order created and removed by one block is not noticed)
    assert b.notices == direct.notices
    assert [[fill[0][0] for fill in n[1][0]] for n in b.notices[1:]] == [[4, 4]]
    yield db(b, "cancel_all_subscriptions")
    assert gw.hub.shards[0]._market_cbs == {}  # the last client left: unsubscribed upstream


@pytest_twisted.inlineCallbacks
def test_bad_input_gets_the_upstreams_error_and_loses_nothing(funded, upstream, gw):
    proto, direct = (yield ws_connect(gw.port)), (yield ws_connect(upstream.port))
    yield db(proto, "set_subscribe_callback", 2, False)
    yield db(proto, "get_objects", ["2.1.0"])
    for p in (proto, direct):
        bad = yield p.request("database", "subscribe_to_market", [1, "NOPE", "TEST"])
        p.bad = bad["error"]
    assert proto.bad["message"] == direct.bad["message"]
    bad = yield proto.request("database", "set_subscribe_callback", [2, "maybe"])
    assert "true or false" in bad["error"]["message"]
    produce(funded)
    yield settle(proto, count=1)
    assert [o["id"] for o in proto.notices[0][1][0]] == ["2.1.0"]


@pytest_twisted.inlineCallbacks
def test_notify_remove_create_refused_by_the_upstream(funded):
    site = _site(funded, everything=False)
    gw = yield start_gateway([site.port])
    try:
        proto = yield ws_connect(gw.port)
        reply = yield proto.request("database", "set_subscribe_callback", [1, True])
        assert "disallowed in this server" in reply["error"]["message"]
        yield db(proto, "set_subscribe_callback", 1, False)
        yield db(proto, "get_objects", ["2.1.0"])
        produce(funded)
        yield settle(proto, count=1)
    finally:
        yield gw.stop()
        yield site.stop()


@pytest_twisted.inlineCallbacks
def test_subscription_moves_to_the_other_upstream(funded):
    """Two upstreams of one chain: the one carrying the subscriptions is
    stopped as a block changes a subscribed object (its notice is lost
    with it); the hub subscribes the union on the other, notices the change
    it missed, and the clients' notices carry on under their own callback
    ids."""
    sites = [_site(funded), _site(funded)]
    gw = yield start_gateway([site.port for site in sites])
    try:
        s6 = stats_of(funded, "1.2.6")
        a, b = yield connect(gw.port, 2)
        yield db(a, "set_subscribe_callback", 5, False)
        yield db(a, "get_objects", [s6])
        yield db(b, "set_block_applied_callback", 9)
        produce(funded)  # s6 unchanged: a block notice only
        yield settle(b, count=1)
        seen = [n[1][0] for n in b.notices]
        carrier = gw.hub.link
        stopped = sites[gw.pool.upstreams.index(carrier)].stop()
        funded.push_transaction(sign(funded, [transfer_op(1000)]))
        produce(funded)  # the carrier's connection is gone: its notices too
        missed = funded.head_block_id
        yield stopped
        yield wait_for(lambda: gw.hub.link is not None and gw.hub.link is not carrier)
        yield settle(a, count=1)
        assert a.notices == [[5, [[to_wire(funded.state.get(s6))]]]]  # caught up
        funded.push_transaction(sign(funded, [transfer_op(1001)]))
        produce(funded)
        yield wait_for(lambda: len(a.notices) == 2 and len(b.notices) == 3)
        yield settle()
        assert a.notices[1] == [5, [[to_wire(funded.state.get(s6))]]]
        # the block no upstream noticed is relayed (read from the new link)
        # before the next one: every block once, in order
        assert b.notices[1:] == [[9, [missed]], [9, [funded.head_block_id]]]
        assert seen == [b.notices[0][1][0]]
    finally:
        yield gw.stop()
        for site in sites:
            yield site.stop()


@pytest_twisted.inlineCallbacks
def test_reads_subscribe_what_bitshares_core_subscribes(funded, upstream, gw):
    """database_api.cpp: ``lookup_accounts`` subscribes only with limit 1,
    ``get_objects`` never operation or account history,
    ``lookup_asset_symbols`` never; the answers are the upstream's."""
    proto, direct = (yield ws_connect(gw.port)), (yield ws_connect(upstream.port))
    yield db(proto, "set_subscribe_callback", 1, False)
    client, = gw.hub.clients.values()
    reads = [("lookup_accounts", "init", 2, set()),
             ("lookup_accounts", "init1", 1, {"1.2.7"}),
             ("get_accounts", ["init2"], {"1.2.8"}),
             ("get_assets", ["TEST"], {"1.3.0"}),
             ("lookup_asset_symbols", ["TEST"], set()),
             ("get_objects", ["2.9.0", "2.1.0", "1.2.99"], {"2.1.0"})]
    for function, *args, subscribed in reads:
        before = set(client.interest.ids)
        answer = yield db(proto, function, *args)
        assert answer == (yield db(direct, function, *args))
        assert set(client.interest.ids) - before == subscribed, function
    yield db(proto, "get_full_accounts", ["init3"], True)
    assert client.interest.accounts == {"1.2.9"}


@pytest_twisted.inlineCallbacks
def test_callbacks_need_a_websocket(funded, upstream, gw):
    body = {"id": 1, "method": "call", "params": ["database", "set_subscribe_callback", [1, False]]}
    reply = yield (yield treq.post(f"http://127.0.0.1:{gw.port}", json=body)).json()
    assert "WebSocket" in reply["error"]["message"]
    body["params"] = ["database", "get_objects", [["2.1.0"], True]]
    reply = yield (yield treq.post(f"http://127.0.0.1:{gw.port}", json=body)).json()
    assert reply["result"][0]["id"] == "2.1.0"
    assert gw.hub.clients == {}  # the HTTP request's session is gone


def test_gateway_mode_answers_subscriptions_with_the_hub(tmp_path):
    """The gateway's maker gives its Gateway the hub (made in the
    constructors, nothing installed afterwards); the forwarded database
    set defines every subscription function itself, each answered by the
    connection's ClientSubscriptions (one dispatch: the set's binding)."""
    from twisted.internet.testing import MemoryReactorClock

    from nodeapi.gateway.apis import SUBSCRIPTION_FUNCTIONS, ForwardedDatabaseApi
    from nodeapi.gateway.client_subscriptions import ClientSubscriptions
    from nodeapi.gateway.subscriptions import SubscriptionHub
    from nodeapi.tap import Options, makeService

    options = Options()
    options.parseOptions(["--data-dir", str(tmp_path / "data"),
                          "--upstream", "ws://127.0.0.1:1", "--upstream", "ws://127.0.0.1:2"])
    top = makeService(options, MemoryReactorClock())
    gateway = top.node.gateway
    assert isinstance(gateway.hub, SubscriptionHub)
    assert gateway.hub.pending_notice in gateway.broadcast_listeners
    functions = set(ForwardedDatabaseApi.function_names())
    assert {f for _set, f in SUBSCRIPTION_FUNCTIONS} == functions
    assert all(callable(getattr(ClientSubscriptions, f)) for f in functions)


@pytest_twisted.inlineCallbacks
def test_full_accounts_subscribe_limit(funded, upstream, gw):
    """database_api.cpp ``get_full_accounts``: a client subscribes at most
    ``api_limit_get_full_accounts_subscribe`` accounts (here 1), the first
    found; a second client's account goes to a second upstream connection,
    since one connection subscribes no more either."""
    gw.hub.full_accounts_limit = 1
    a, b = yield connect(gw.port, 2)
    for proto in (a, b):
        yield db(proto, "set_subscribe_callback", 1, False)
    yield db(a, "get_full_accounts", ["init1", "init2"], True)
    yield db(a, "get_full_accounts", ["init3"], True)
    assert [c.interest.accounts for c in gw.hub.clients.values()] == [{"1.2.7"}, set()]
    yield db(b, "get_full_accounts", ["init4"], True)
    assert set(gw.hub.interests.by_account) == {"1.2.7", "1.2.10"}
    assert [s.link_accounts for s in gw.hub.shards] == [{"1.2.7"}, {"1.2.10"}]
    assert len(gw.hub.links) == 2


@pytest_twisted.inlineCallbacks
def test_block_notices_fill_a_gap_in_order_and_never_twice(funded, upstream, gw):
    """nodeapi.gateway.block_notices on a real upstream link: blocks no
    upstream noticed are read (``get_block_header``: a block's id is the
    next one's ``previous``) and relayed before the next notice, later
    notices wait for them, an id already relayed is not relayed again."""
    from nodeapi.gateway.block_notices import BlockNotices

    produce(funded, 5)
    ids = {n: funded.get_block(n + 1)["previous"] for n in range(1, funded.head_block_num)}
    ids[funded.head_block_num] = funded.head_block_id
    sent = []
    blocks = BlockNotices(sent.append)
    link = gw.pool.upstreams[0]
    blocks.notice(link, ids[2])
    blocks.notice(link, ids[2])  # a new upstream a block behind
    blocks.notice(link, ids[5])  # 3 and 4 were noticed by no upstream
    blocks.notice(link, ids[6])  # waits for them
    assert sent == [ids[2]]
    yield wait_for(lambda: len(sent) == 5)
    assert sent == [ids[n] for n in (2, 3, 4, 5, 6)]
    blocks.notice(link, "not a block id")
    blocks.notice(link, "%08x" % 10_000 + ids[6][8:])  # too far ahead: relayed as it is
    assert len(sent) == 6


@pytest_twisted.inlineCallbacks
def test_an_upstream_without_subscriptions(funded):
    """An upstream that refuses ``set_subscribe_callback`` (kit.peer_stub, a
    small graphene server): a client's subscribing read gets the upstream's
    refusal at once, its other calls are forwarded as usual."""
    from kit.peer_stub import ChainRpcFactory
    from kit.peers import listen

    factory = ChainRpcFactory(funded)
    port = yield listen(factory)
    gw = yield start_gateway([port.getHost().port])
    try:
        proto = yield ws_connect(gw.port)
        assert (yield db(proto, "set_subscribe_callback", 1, False)) is None
        reply = yield proto.request("database", "get_objects", [["2.1.0"]])
        assert reply["error"]["message"] == "Execution error: No method set_subscribe_callback"
        assert (yield db(proto, "get_chain_id")) == funded.chain_id
    finally:
        yield gw.stop()
        yield port.stopListening()
