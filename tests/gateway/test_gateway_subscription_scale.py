"""The gateway's merged subscriptions beyond one upstream connection's
accounts (nodeapi.gateway.shards, nodeapi.gateway.subscriptions): a nodeapi
upstream subscribes at most ``api_limit_get_full_accounts_subscribe``
accounts per connection, as bitshares-core does
(libraries/app/database_api.cpp ``get_full_accounts``:
``_subscribed_accounts.size() < api_limit_get_full_accounts_subscribe``,
cleared only by ``cancel_all_subscriptions``), so the gateway spreads its
clients over several connections, releases what departed clients held,
refuses clearly past its bound, and brings its clients up to date after a
failover."""

import pytest
import pytest_twisted
from bitsharesbase import operations
from twisted.internet import defer, reactor, task

from nodeapi.node import ApiLimits
from nodeapi.rpc.access import ApiAccess
from nodeapi.rpc.guard import RpcLimits

from kit.access import VECTORS
from kit.chain import amt, create_asset, limit_order, produce, transfer_op, with_fee
from kit.gateway import GatewaySite
from kit.rpc import error_of, ws_connect
from kit.signing import sign
from kit.site import RunningSite, make_node
from kit.wait import wait_for
from kit.wallets import create_accounts, paid, pay_each, wallet_names

#: every client connects from 127.0.0.1
MANY = RpcLimits(max_connections=10_000, max_connections_per_ip=10_000)


def _site(chain, port=0, **node_args):
    return RunningSite(make_node(chain, **node_args), ApiAccess.from_json(VECTORS),
                       limits=MANY, port=port)


@defer.inlineCallbacks
def _gateway(ports, **hub_args):
    gw = GatewaySite([f"ws://127.0.0.1:{port}" for port in ports],
                     ApiAccess.from_json(VECTORS), limits=MANY, hub_args=hub_args)
    yield gw.start()
    return gw


def db(proto, function, *args):
    return proto.call("database", function, *args)


@defer.inlineCallbacks
def _wallet(port, cb, names):
    """A client of ``port`` subscribed to the accounts ``names``."""
    proto = yield ws_connect(port)
    yield db(proto, "set_subscribe_callback", cb, False)
    found = yield db(proto, "get_full_accounts", names, True)
    assert [pair[0] for pair in found] == sorted(names)
    return proto


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_the_upstream_subscribes_100_accounts_per_connection(funded):
    """A direct client of a nodeapi upstream subscribes 101 accounts: the
    first 100 (in the order asked) are noticed of a payment, the 101st is
    not (bitshares-core's default ``api_limit_get_full_accounts_subscribe``)."""
    ids = create_accounts(funded, wallet_names(101))
    site = _site(funded)
    try:
        proto = yield ws_connect(site.port)
        yield db(proto, "set_subscribe_callback", 1, False)
        for i in range(0, 101, 50):  # api_limit_get_full_accounts: 50 per call
            yield db(proto, "get_full_accounts", ids[i:i + 50], True)
        pay_each(funded, [ids[100]], 777)
        produce(funded)
        pay_each(funded, [ids[99]], 778)
        produce(funded)  # a later block: the notices of the first are all in
        yield wait_for(lambda: paid(proto.notices, ids[99], 778))
        assert not paid(proto.notices, ids[100], 777)
        assert proto.notices[0][1][0][0]["owner"] == ids[99]  # nothing before it
    finally:
        yield site.stop()


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_1000_wallets_with_distinct_accounts_each_hear_of_its_payment(funded):
    """1,000 distinct accounts subscribed through the gateway (100 client
    connections of 10 accounts each) in front of a nodeapi upstream that
    subscribes 100 accounts per connection: the hub spreads them over 10
    upstream connections; one block pays each account, and every account's
    subscribers are noticed of its new balance."""
    names = wallet_names(1000)
    ids = create_accounts(funded, names)
    site = _site(funded)
    gw = yield _gateway([site.port])
    try:
        wallets = []
        for w in range(100):
            wallets.append((yield _wallet(gw.port, 1000 + w, names[10 * w:10 * w + 10])))
        assert len(gw.hub.interests.by_account) == 1000
        assert len(gw.hub.links) == 10  # 100 accounts per upstream connection
        pay_each(funded, ids, 4321)
        produce(funded)
        yield wait_for(lambda: all(paid(wallets[i // 10].notices, account, 4321)
                                   for i, account in enumerate(ids)), timeout=60.0)
        figures = gw.hub.figures()
        assert figures["accounts"] == 1000 and figures["connections"] == 10
        assert figures["notices_routed"] >= 100
        # under its own callback id, once per batch (one connection carries it)
        for w, proto in enumerate(wallets):
            assert {n[0] for n in proto.notices} == {1000 + w}
            batches = [tuple(o["id"] for o in batch) for _cb, (batch,) in proto.notices]
            assert len(batches) == len(set(batches))
        for proto in wallets:
            proto.sendClose()
        yield wait_for(lambda: not gw.hub.clients)
        yield wait_for(lambda: len(gw.hub.links) == 1)  # the other connections closed
    finally:
        yield gw.stop()
        yield site.stop()


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_accounts_spread_released_and_bounded(funded):
    """An upstream subscribing 2 accounts per connection, a gateway allowed
    2 connections: a third account opens the second connection; two more
    are refused with a clear error and nothing subscribed; once the first
    client leaves, its connection subscribes its union again (releasing
    the departed accounts) and takes them; each payment reaches exactly
    the subscribers of its account."""
    ids = create_accounts(funded, wallet_names(5))
    site = _site(funded, limits=ApiLimits(get_full_accounts_subscribe=2))
    gw = yield _gateway([site.port], full_accounts_limit=2, max_connections=2)
    try:
        a = yield _wallet(gw.port, 1, ids[0:2])
        b = yield _wallet(gw.port, 2, ids[2:3])
        assert len(gw.hub.links) == 2
        c = yield ws_connect(gw.port)
        yield db(c, "set_subscribe_callback", 3, False)
        refused = error_of((yield c.request("database", "get_full_accounts",
                                            [ids[3:5], True])))
        assert refused["data"]["name"] == "subscription_capacity"
        assert "2 subscription connections hold 2 accounts each" in refused["message"]
        assert set(gw.hub.interests.by_account) == set(ids[:3])
        a.sendClose()
        yield wait_for(lambda: len(gw.hub.clients) == 2)
        yield db(c, "get_full_accounts", ids[3:5], True)
        assert gw.hub.refreshes == 1 and len(gw.hub.links) == 2
        for account in ids:  # a block each: a batch goes whole to its account's subscribers
            pay_each(funded, [account], 55)
            produce(funded)
        yield wait_for(lambda: paid(b.notices, ids[2], 55) and paid(c.notices, ids[3], 55)
                       and paid(c.notices, ids[4], 55))
        assert not any(paid(c.notices, x, 55) for x in ids[:3])
        assert not any(paid(b.notices, x, 55) for x in ids[:2] + ids[3:])
        sample = gw.metrics.registry.get_sample_value
        p = "nodeapi_gateway_subscription_"
        assert [sample(p + name) for name in ("accounts", "objects", "clients",
                                              "connections", "refreshes_total")] == [
            3, 3, 2, 2, 1]
        assert sample(p + "notices_routed_total") == len(b.notices) + len(c.notices)
        assert sample(p + "upstream_notices_total") >= 3
        per = p + "clients_per_interest_"
        assert sample(per + "count", {"kind": "account"}) == 3  # one client each
        assert sample(per + "bucket", {"kind": "account", "le": "1"}) == 3
        assert sample(per + "sum", {"kind": "object"}) == 3
    finally:
        yield gw.stop()
        yield site.stop()


@pytest_twisted.inlineCallbacks
def test_limits_are_checked_before_anything_is_subscribed(funded):
    """A read whose ids do not fit the client's subscription budget is
    refused before it is sent: the upstream subscribes none of them (its
    notices of those objects never come)."""
    site = _site(funded)
    gw = GatewaySite([f"ws://127.0.0.1:{site.port}"], ApiAccess.from_json(VECTORS),
                     limits=RpcLimits(max_connections=100, max_connections_per_ip=100,
                                      max_subscriptions_per_ip=3))
    yield gw.start()
    try:
        proto = yield ws_connect(gw.port)
        yield db(proto, "set_subscribe_callback", 1, False)
        stats = funded.state.get("1.2.6")["statistics"]
        refused = error_of((yield proto.request("database", "get_objects",
                                                [["2.1.0", stats, "1.2.7"], True])))
        assert refused["data"]["name"] == "subscription_limit_exceeded"
        assert gw.hub.interests.by_id == {}
        assert (yield db(proto, "get_objects", ["1.3.0"]))[0]["id"] == "1.3.0"
        shard = gw.hub.shards[0]
        heard, notice = [], shard.notice
        shard.notice = lambda link, cb, params: (heard.append(params[0]),
                                                 notice(link, cb, params))
        funded.push_transaction(sign(funded, [transfer_op(1000)]))
        produce(funded)
        yield wait_for(lambda: heard)
        produce(funded)
        yield wait_for(lambda: len(heard) >= 2)
        # the link heard of 2.1.0 (the hub's own), never of init0's statistics
        assert all(o.get("id") != stats for batch in heard for o in batch)
        assert any(o.get("id") == "2.1.0" for batch in heard for o in batch)
    finally:
        yield gw.stop()
        yield site.stop()


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_a_failover_brings_every_wallet_up_to_date(funded):
    """Two upstreams of one chain, one account per upstream connection: the
    upstream carrying the first connection is killed as a block pays both
    wallets' accounts (its notices are lost with it); the first wallet's
    connection moves to the other upstream, reads its account's state
    there and notices the new balance; the other wallet hears of its own
    as usual; later payments reach both."""
    ids = create_accounts(funded, wallet_names(2))
    sites = [_site(funded), _site(funded)]
    gw = yield _gateway([s.port for s in sites], full_accounts_limit=1)
    try:
        a = yield _wallet(gw.port, 1, ids[0:1])
        b = yield _wallet(gw.port, 2, ids[1:2])
        assert len(gw.hub.links) == 2
        carrier = gw.hub.shards[0].upstream
        stopped = sites[gw.pool.upstreams.index(carrier)].stop()
        pay_each(funded, ids[0:1], 91)
        pay_each(funded, ids[1:2], 92)
        produce(funded)
        yield stopped
        yield wait_for(lambda: paid(a.notices, ids[0], 91) and paid(b.notices, ids[1], 92))
        assert gw.hub.shards[0].upstream is not carrier
        pay_each(funded, ids[0:1], 93)
        produce(funded)
        yield wait_for(lambda: paid(a.notices, ids[0], 91 + 93))
    finally:
        yield gw.stop()
        for site in sites:
            yield site.stop()


def _removal_notices(notices, oid: str) -> list:
    """The batches of removed ids in ``notices`` (``[cb, [batch]]``) holding ``oid``."""
    return [batch for _cb, (batch,) in notices
            if all(type(x) is str for x in batch) and oid in batch]


@pytest_twisted.inlineCallbacks
def test_a_failover_notices_the_orders_removed_meanwhile(funded):
    """Two upstreams of one chain; a wallet subscribed to an account with
    two open limit orders, another subscribed to one of the orders by id.
    The upstream carrying them is killed as a block cancels both orders
    (their removal notices are lost with it).  The connection moves to the
    other upstream, and each wallet receives the removal as a
    bitshares-core subscriber does (libraries/app/database_api.cpp
    ``on_objects_removed``: ``handle_object_changed`` with ``full_object``
    false sends the removed objects' id strings): the account's wallet
    both ids, the other wallet the id it subscribed, once; the digests
    forget them, as they forget an order removed later with the link up,
    and later blocks notice nothing more of them."""
    ids = create_accounts(funded, wallet_names(1, prefix="seller"))
    seller = ids[0]
    gold, _fee = create_asset(funded, "GOLD")
    pay_each(funded, ids, 10 ** 8)
    produce(funded)
    orders = [limit_order(funded, seller, amt(1000 + k), amt(10 ** 6, gold)) for k in range(2)]
    produce(funded)
    sites = [_site(funded), _site(funded)]
    gw = yield _gateway([s.port for s in sites])
    try:
        a = yield _wallet(gw.port, 1, ids)
        b = yield ws_connect(gw.port)
        yield db(b, "set_subscribe_callback", 2, False)
        found = yield db(b, "get_objects", [orders[1]], True)
        assert found[0]["seller"] == seller
        shard = gw.hub.shards[0]
        assert all(order in shard.digests for order in orders)
        carrier = shard.upstream
        stopped = sites[gw.pool.upstreams.index(carrier)].stop()
        for order in orders:
            op, _ = with_fee(funded, operations.Limit_order_cancel, fee_paying_account=seller,
                             order=order, extensions=[])
            funded.push_transaction(sign(funded, [op]))
        produce(funded)
        yield stopped
        yield wait_for(lambda: all(_removal_notices(a.notices, o) for o in orders)
                       and _removal_notices(b.notices, orders[1]))
        assert shard.upstream is not carrier
        assert funded.state.get(orders[0]) is None and funded.state.get(orders[1]) is None
        assert [sorted(batch) for batch in _removal_notices(a.notices, orders[0])] == [
            sorted(orders)]
        assert _removal_notices(b.notices, orders[1]) == [[orders[1]]]
        assert not _removal_notices(b.notices, orders[0])
        assert not any(order in shard.digests for order in orders)
        assert orders[1] not in gw.hub.interests.by_id
        before = len(a.notices), len(b.notices)
        live = limit_order(funded, seller, amt(3000), amt(10 ** 6, gold))
        produce(funded)
        yield wait_for(lambda: live in shard.digests)
        op, _ = with_fee(funded, operations.Limit_order_cancel, fee_paying_account=seller,
                         order=live, extensions=[])
        funded.push_transaction(sign(funded, [op]))
        produce(funded)
        yield wait_for(lambda: _removal_notices(a.notices, live))
        assert live not in shard.digests  # a live removal is forgotten too
        assert not any(_removal_notices(a.notices[before[0]:], o) for o in orders)
        assert len(b.notices) == before[1]
    finally:
        yield gw.stop()
        for site in sites:
            yield site.stop()


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_a_restarted_upstream_brings_every_wallet_up_to_date(funded):
    """One upstream carrying two connections (one account each) stops; a
    block pays both accounts while it is down; it starts again on the same
    port: both connections come back, read their accounts' state and
    notice the payments made in between."""
    ids = create_accounts(funded, wallet_names(2))
    site = _site(funded)
    port = site.port
    gw = yield _gateway([port], full_accounts_limit=1)
    try:
        a = yield _wallet(gw.port, 1, ids[0:1])
        b = yield _wallet(gw.port, 2, ids[1:2])
        assert len(gw.hub.links) == 2
        yield site.stop()
        yield wait_for(lambda: not gw.hub.links)
        pay_each(funded, ids[0:1], 81)
        produce(funded)
        pay_each(funded, ids[1:2], 82)
        produce(funded)
        site = _site(funded, port=port)
        yield wait_for(lambda: len(gw.hub.links) == 2, timeout=30.0)
        yield wait_for(lambda: paid(a.notices, ids[0], 81) and paid(b.notices, ids[1], 82))
        assert not paid(a.notices, ids[1], 82) and not paid(b.notices, ids[0], 81)
    finally:
        yield gw.stop()
        yield site.stop()


@pytest_twisted.inlineCallbacks
def test_pending_subscribers_hear_of_every_broadcast_once(funded, new_chain):
    """Two upstreams on two copies of one chain (a transaction is pending
    only where it was sent): transactions broadcast through the gateway go
    to either; a client's ``set_pending_transaction_callback`` hears of
    each exactly once, whether the upstream carrying the subscription saw
    it (its notice and the gateway's own are one) or not."""
    twin = new_chain(restart_of=funded)
    yield twin.replay()
    assert twin.head_block_id == funded.head_block_id
    chains = [funded, twin]
    sites = [_site(funded), _site(twin)]
    gw = yield _gateway([s.port for s in sites])
    try:
        watcher = yield ws_connect(gw.port)
        sender = yield ws_connect(gw.port)
        yield db(watcher, "set_pending_transaction_callback", 7)
        yield wait_for(lambda: gw.hub.link is not None)
        net = yield sender.call(1, "network_broadcast")
        sent = []
        for amount in range(1, 5):
            trx = sign(funded, [transfer_op(amount)])
            yield sender.call(net, "broadcast_transaction", trx)
            sent.append(amount)
        yield wait_for(lambda: len(watcher.notices) >= 4)
        yield task.deferLater(reactor, 0.3, lambda: None)  # a duplicate would come by now
        carrier = sites[gw.pool.upstreams.index(gw.hub.shards[0].upstream)]
        other = chains[1 - sites.index(carrier)]
        assert other.pending.transactions  # some went where the link never saw them
        amounts = sorted(n[1][0]["operations"][0][1]["amount"]["amount"]
                         for n in watcher.notices)
        assert [n[0] for n in watcher.notices] == [7] * 4 and amounts == sent
    finally:
        yield gw.stop()
        for site in sites:
            yield site.stop()
