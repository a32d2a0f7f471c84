"""Limits per user and per source address through the gateway
(nodeapi.rpc.limits in front of nodeapi.gateway): a real RPC site of a
chain is the upstream, the gateway's own site (kit.gateway) has an
api-access file with limits; real WebSocket clients (kit.rpc) and
python-bitshares connect to it over loopback.  The call buckets run on the
gateway site's clock (a ``task.Clock``, advanced by hand); the subscription
budget (nodeapi.api.budget) is charged by the gateway's merged
subscriptions and broadcast callbacks exactly as by the node's own
database and network_broadcast sets (docs/rpc-access.rst "Limits per user
and per source address")."""

import base64

import pytest
import pytest_twisted
from twisted.internet import task, threads

from nodeapi.metrics import Metrics
from nodeapi.rpc.access import ApiAccess, hash_password
from nodeapi.rpc.guard import RpcLimits

from kit.access import VECTORS
from kit.api import create_gold
from kit.chain import produce, transfer_op
from kit.gateway import GatewaySite
from kit.rpc import ws_connect
from kit.signing import sign
from kit.site import RunningSite, make_node
from kit.wait import wait_for
from kit.rpc import error_of, limit_refusals as refusals

SALT = b"gwlimits"
APIS = ["database_api", "network_broadcast_api"]


def entry(password, limits=None):
    doc = {"password_hash_b64": "*" if password == "*" else hash_password(password, SALT),
           "password_salt_b64": "*" if password == "*" else base64.b64encode(SALT).decode(),
           "allowed_apis": APIS}
    if limits is not None:
        doc["limits"] = limits
    return doc


#: alice: 3 subscribed items; carol: 2 calls/s, burst 30 (python-bitshares
#: makes a few calls as it connects); anonymous: 1 call/s, burst 2
ACCESS = {"permission_map": [
    ["alice", entry("alice-pw", {"subscriptions": 3})],
    ["carol", entry("carol-pw", {"calls_per_second": 2, "burst": 30})],
    ["*", entry("*", {"calls_per_second": 1, "burst": 2})],
]}


@pytest.fixture
def upstream(funded):
    site = RunningSite(make_node(funded), ApiAccess.from_json(VECTORS))
    yield site
    site.stop_blocking()


@pytest.fixture
def clock():
    return task.Clock()


@pytest.fixture
def gw(upstream, clock):
    gw = GatewaySite([f"ws://127.0.0.1:{upstream.port}"], ApiAccess.from_json(ACCESS),
                     clock=clock, limits=RpcLimits(handshake_timeout=0))
    pytest_twisted.blockon(gw.start())
    yield gw
    gw.stop_blocking()


@pytest.fixture
def local(funded, clock):
    """The node itself with the same api-access file: the reference."""
    site = RunningSite(make_node(funded), ApiAccess.from_json(ACCESS), clock=clock,
                       metrics=Metrics(funded, clock=clock),
                       limits=RpcLimits(handshake_timeout=0))
    yield site
    site.stop_blocking()


def db(proto, function, *args):
    return proto.request("database", function, list(args))


@pytest_twisted.inlineCallbacks
def test_user_over_its_subscription_limit_through_the_gateway(funded, upstream, gw, local):
    """alice holds at most 3 items, on all her connections together: the
    subscribe callback, each subscribed object id, market and callback, and
    each broadcast callback until its confirmation; a refused call gets the
    error the node itself gives (compared with the node serving the same
    api-access file), and what was given back can be taken again."""
    create_gold(funded)
    alice = yield ws_connect(gw.port, "alice", "alice-pw")
    here = yield ws_connect(local.port, "alice", "alice-pw")
    for proto in (alice, here):
        assert (yield db(proto, "set_subscribe_callback", 5, False))["result"] is None
        reply = yield db(proto, "get_objects", ["2.1.0", "1.3.0"])  # 1 + 2 items
        assert [o["id"] for o in reply["result"]] == ["2.1.0", "1.3.0"]
        proto.refused = error_of((yield db(proto, "get_objects", ["1.3.1"])))
    assert alice.refused == here.refused
    assert alice.refused["code"] == -32005
    assert alice.refused["data"]["name"] == "subscription_limit_exceeded"
    assert alice.refused["message"].startswith(
        "Execution error: Subscription limit reached: 3 subscribed items for user 'alice'")
    assert alice.refused["data"]["stack"][0]["data"] == {"limit": 3, "scope": "user"}
    # the items subscribed before stay: 1.3.0's change still reaches alice
    assert gw.hub.interests.by_id.keys() >= {"2.1.0", "1.3.0"}
    assert "1.3.1" not in gw.hub.interests.by_id  # refused: nobody's interest
    # callbacks and markets are items too; a second connection shares them
    other = yield ws_connect(gw.port, "alice", "alice-pw")
    for proto, call in ((alice, ("set_block_applied_callback", 9)),
                        (other, ("subscribe_to_market", 31, "GOLD", "TEST")),
                        (other, ("set_pending_transaction_callback", 8))):
        error = error_of((yield db(proto, *call)))
        assert error["data"]["name"] == "subscription_limit_exceeded"
    assert gw.hub.interests.by_market == {} and not gw.hub.interests.block
    # cancel_all_subscriptions gives the three back
    assert (yield db(alice, "cancel_all_subscriptions"))["result"] is None
    assert (yield db(other, "subscribe_to_market", 31, "GOLD", "TEST"))["result"] is None
    assert (yield db(alice, "set_block_applied_callback", 9))["result"] is None
    net = yield alice.call(1, "network_broadcast")
    trx = sign(funded, [transfer_op(4321)])
    assert (yield alice.request(net, "broadcast_transaction_with_callback", [7, trx]))[
        "result"] is None
    late = sign(funded, [transfer_op(4322)])
    error = error_of((yield alice.request(net, "broadcast_transaction_with_callback",
                                          [8, late])))
    assert error["data"]["name"] == "subscription_limit_exceeded"
    assert len(funded.pending.transactions) == 1  # the refused one was not sent
    # the confirmation ends the broadcast's item; the market's end frees another
    notice = alice.next_notice()
    produce(funded)
    while (yield notice)[0] != 7:
        notice = alice.next_notice()
    assert (yield db(other, "unsubscribe_from_market", "TEST", "GOLD"))["result"] is None
    assert (yield db(other, "set_pending_transaction_callback", 8))["result"] is None
    assert (yield db(alice, "set_subscribe_callback", 6, False))["result"] is None
    error_of((yield db(alice, "get_objects", ["2.1.0"])))  # 3 held: block, pending, callback
    # a closed connection gives back what it held
    other.sendClose()
    yield wait_for(lambda: not gw.hub.interests.pending)
    reply = yield db(alice, "get_objects", ["2.1.0"])
    assert reply["result"][0]["id"] == "2.1.0"
    assert refusals(gw.metrics, "subscriptions", "user") == 6
    assert refusals(gw.metrics, "subscriptions", "source") == 0
    for proto in (alice, here):
        proto.dropConnection()


def assert_rate_error(error, whom, rate, burst):
    assert error["code"] == -32005
    assert error["message"].startswith(f"Execution error: Too many calls: over {rate} per "
                                       f"second (burst {burst}) for {whom}")
    assert error["data"]["name"] == "rate_limit_exceeded"
    assert error["data"]["stack"][0]["data"]["retry_after"] > 0


@pytest_twisted.inlineCallbacks
def test_client_over_its_rate_through_the_gateway_then_served_after_refill(gw, clock):
    """Anonymous clients from 127.0.0.1 share 2 calls, 1 more per second of
    the site's clock: forwarded calls are refused once the bucket is empty
    (the connection stays open), and answered again once it refilled."""
    anon = yield ws_connect(gw.port)
    other = yield ws_connect(gw.port)
    for proto in (anon, other):
        reply = yield db(proto, "get_dynamic_global_properties")
        assert reply["result"]["id"] == "2.1.0"
    calls_before = sum(u.calls for u in gw.pool.upstreams)
    for proto in (anon, other):
        reply = yield db(proto, "get_objects", ["1.3.0"])
        assert_rate_error(error_of(reply), "the '*' entry from 127.0.0.1", 1, 2)
        assert reply["id"] is not None
    assert sum(u.calls for u in gw.pool.upstreams) - calls_before <= 2  # checks only
    clock.advance(0.5)  # half a call: still refused
    error = error_of((yield db(anon, "get_objects", ["1.3.0"])))
    assert 0.4 < error["data"]["stack"][0]["data"]["retry_after"] <= 0.5
    clock.advance(0.5)
    assert (yield db(anon, "get_objects", ["1.3.0"]))["result"][0]["symbol"] == "TEST"
    error_of((yield db(other, "get_objects", ["1.3.0"])))
    clock.advance(10)  # refilled to the burst, no more
    for proto in (other, anon):
        assert (yield db(proto, "get_objects", ["1.3.0"]))["result"][0]["id"] == "1.3.0"
    error_of((yield db(anon, "get_objects", ["1.3.0"])))
    assert refusals(gw.metrics, "calls", "user") == 5
    for proto in (anon, other):
        proto.dropConnection()


def _bitshares_until_refused(url):
    """python-bitshares logged in as carol reads through ``url`` until a
    call is refused: (the instance, calls answered, the exception)."""
    from bitshares import BitShares
    from grapheneapi.exceptions import RPCError

    bts = BitShares(node=url, rpcuser="carol", rpcpassword="carol-pw", num_retries=0)
    for answered in range(40):
        try:
            bts.rpc.get_dynamic_global_properties()
        except RPCError as exc:
            return bts, answered, exc
    raise AssertionError("never refused")


@pytest_twisted.inlineCallbacks
def test_python_bitshares_sees_the_rate_error_through_the_gateway(gw, clock):
    url = f"ws://127.0.0.1:{gw.port}"
    bts, answered, exc = yield threads.deferToThread(_bitshares_until_refused, url)
    assert 0 < answered < 30
    assert "Too many calls: over 2 per second (burst 30) for user 'carol'" in str(exc)
    clock.advance(5)  # ten calls refilled
    dgp = yield threads.deferToThread(bts.rpc.get_dynamic_global_properties)
    assert dgp["id"] == "2.1.0"
    account, = yield threads.deferToThread(bts.rpc.get_objects, ["1.2.7"])
    assert account["name"] == "init1"
    yield threads.deferToThread(bts.rpc.connection.disconnect)
    assert refusals(gw.metrics, "calls", "user") == 1


@pytest_twisted.inlineCallbacks
def test_a_refused_broadcast_gives_its_callback_back(funded, upstream, gw):
    """The upstream refuses the transaction (a duplicate): the callback's
    item goes back at once, so alice (3 items) may try again and again;
    the upstream's own error reaches her each time."""
    alice = yield ws_connect(gw.port, "alice", "alice-pw")
    net = yield alice.call(1, "network_broadcast")
    trx = sign(funded, [transfer_op(999)])
    funded.push_transaction(trx)  # the upstream has it already
    for cb in range(5):
        error = error_of((yield alice.request(net, "broadcast_transaction_with_callback",
                                              [cb, trx])))
        assert error["data"]["name"] != "subscription_limit_exceeded"
        assert "duplicate" in error["message"].lower()
    for call in (("set_block_applied_callback", 11), ("set_pending_transaction_callback", 12),
                 ("set_subscribe_callback", 13, False)):  # all three items are free
        assert (yield db(alice, *call))["result"] is None
    alice.dropConnection()
