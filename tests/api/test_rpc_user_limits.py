"""Limits per user and per source address (nodeapi.rpc.limits): calls per
second, logged-in WebSocket connections and subscribed items, set in the
api-access file (an entry's ``limits``) and by the ``--max-*-per-ip``
options; over real loopback sockets, the buckets on the site's clock (a
``task.Clock``, advanced by hand).  docs/rpc-access.rst "Limits per user and
per source address"."""

import base64

import orjson
import pytest
import pytest_twisted
import treq
from twisted.internet import defer, task, threads
from twisted.python import usage

from nodeapi.config import Options
from nodeapi.errors import ConfigError
from nodeapi.metrics import Metrics
from nodeapi.rpc.access import ApiAccess, hash_password
from nodeapi.rpc.guard import RpcLimits

from kit.api import create_gold
from kit.chain import fund, produce, transfer_wire
from kit.signing import sign_wire
from kit.keys import CHAIN_ID
from kit.rpc import ws_connect
from kit.site import RunningSite, log_events, make_node
from kit.wait import wait_for
from kit.rpc import error_of, limit_refusals as refusals

SALT = b"limits!!"


def entry(password, apis, limits=None):
    """An api-access entry for ``password`` (``*``: any) and ``limits``."""
    doc = {"password_hash_b64": "*" if password == "*" else hash_password(password, SALT),
           "password_salt_b64": "*" if password == "*" else base64.b64encode(SALT).decode(),
           "allowed_apis": apis}
    if limits is not None:
        doc["limits"] = limits
    return doc


READ = ["database_api", "history_api"]
#: alice: 2 calls/s, burst 3, 2 connections, 3 items; bob: no limits;
#: anonymous ("*"): 1 call/s, burst 2 per source address
ACCESS = {"permission_map": [
    ["alice", entry("alice-pw", READ, {"calls_per_second": 2, "burst": 3, "connections": 2,
                                       "subscriptions": 3})],
    ["bob", entry("bob-pw", READ)],
    ["*", entry("*", READ, {"calls_per_second": 1, "burst": 2})],
]}


@pytest.fixture
def clock():
    return task.Clock()


@pytest.fixture
def metrics(chain, clock):
    return Metrics(chain, clock=clock)


def serve(chain, clock, metrics=None, access=ACCESS, **limits):
    return RunningSite(make_node(chain), ApiAccess.from_json(access), clock=clock,
                       metrics=metrics, limits=RpcLimits(handshake_timeout=0, **limits))


def assert_rate_error(error, whom, rate, burst):
    """The refusal of a call over its rate: code -32005, the text naming
    the limit and where it is set, the machine-readable name and values."""
    assert error["code"] == -32005
    assert error["message"].startswith(f"Execution error: Too many calls: over {rate} per "
                                       f"second (burst {burst}) for {whom}")
    assert error["data"]["name"] == "rate_limit_exceeded"
    values = error["data"]["stack"][0]["data"]
    assert values["calls_per_second"] == rate and values["burst"] == burst
    assert values["retry_after"] > 0


@defer.inlineCallbacks
def post(server, body, user=None, password=None):
    headers = {}
    if user is not None:
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        headers["Authorization"] = "Basic " + token
    resp = yield treq.post(server.url + "/rpc", data=orjson.dumps(body), headers=headers)
    return resp.code, orjson.loads((yield resp.content()))


class Rested:
    """A client each of whose calls comes two seconds (of the site's clock)
    after the previous one: its call buckets are never what refuses."""

    def __init__(self, proto, clock):
        self.proto, self.clock = proto, clock

    def call(self, *args):
        self.clock.advance(2)
        return self.proto.call(*args)

    def request(self, api, function, args=()):
        self.clock.advance(2)
        return self.proto.request(api, function, args)


CHAIN_ID_CALL = {"jsonrpc": "2.0", "id": 7, "method": "get_chain_id", "params": []}


# -- calls per second ------------------------------------------------------------------

@pytest_twisted.inlineCallbacks
def test_websocket_user_over_its_rate_then_served_after_refill(chain, clock, metrics):
    server = serve(chain, clock, metrics)
    try:
        alice = yield ws_connect(server.port, "alice", "alice-pw")
        for _ in range(3):  # the burst
            assert (yield alice.call(0, "get_chain_id")) == CHAIN_ID
        reply = yield alice.request(0, "get_chain_id")
        assert_rate_error(error_of(reply), "user 'alice'", 2, 3)
        assert "api-access limits.calls_per_second" in reply["error"]["message"]
        assert reply["id"] is not None  # answered to that request, connection open
        clock.advance(0.25)  # half a call refilled: still refused
        error = error_of((yield alice.request(0, "get_chain_id")))
        assert 0.2 < error["data"]["stack"][0]["data"]["retry_after"] <= 0.25
        clock.advance(0.25)
        assert (yield alice.call(0, "get_chain_id")) == CHAIN_ID
        error_of((yield alice.request(0, "get_chain_id")))
        clock.advance(10)  # refills to the burst, never beyond
        for _ in range(3):
            assert (yield alice.call(0, "get_chain_id")) == CHAIN_ID
        error_of((yield alice.request(0, "get_chain_id")))
        assert refusals(metrics, "calls", "user") == 4
        assert refusals(metrics, "calls", "source") == 0
        alice.dropConnection()
    finally:
        yield server.stop()


@pytest_twisted.inlineCallbacks
def test_http_calls_share_the_user_bucket(chain, clock):
    """HTTP requests (each its own session) draw from the same bucket as the
    user's WebSocket calls; the refusal is HTTP 200 with the error, like any
    failed call (docs/wire-contract.rst section 4)."""
    server = serve(chain, clock)
    try:
        alice = yield ws_connect(server.port, "alice", "alice-pw")
        assert (yield alice.call(0, "get_chain_id")) == CHAIN_ID
        for _ in range(2):
            status, body = yield post(server, CHAIN_ID_CALL, "alice", "alice-pw")
            assert (status, body["result"]) == (200, CHAIN_ID)
        status, body = yield post(server, CHAIN_ID_CALL, "alice", "alice-pw")
        assert status == 200 and body["id"] == 7
        assert_rate_error(body["error"], "user 'alice'", 2, 3)
        error_of((yield alice.request(0, "get_chain_id")))
        clock.advance(0.5)
        status, body = yield post(server, CHAIN_ID_CALL, "alice", "alice-pw")
        assert body["result"] == CHAIN_ID
        alice.dropConnection()
    finally:
        yield server.stop()


@pytest_twisted.inlineCallbacks
def test_restricted_user_limit_differs_from_anonymous(chain, clock):
    """Anonymous clients (the ``*`` entry) get burst 2 per address, alice
    her own 3, bob (no limits) any number; logging in moves a connection
    from the anonymous bucket to the user's."""
    server = serve(chain, clock)
    try:
        anon = yield ws_connect(server.port)
        for _ in range(2):
            assert (yield anon.call(0, "get_chain_id")) == CHAIN_ID
        assert_rate_error(error_of((yield anon.request(0, "get_chain_id"))),
                          "the '*' entry from 127.0.0.1", 1, 2)
        # a second anonymous connection from the same address shares the bucket
        other = yield ws_connect(server.port)
        error_of((yield other.request(0, "get_chain_id")))
        # HTTP without credentials too
        status, body = yield post(server, CHAIN_ID_CALL)
        assert body["error"]["data"]["name"] == "rate_limit_exceeded"
        bob = yield ws_connect(server.port, "bob", "bob-pw")
        for _ in range(20):
            assert (yield bob.call(0, "get_chain_id")) == CHAIN_ID
        clock.advance(1)  # one anonymous call: the login itself
        assert (yield other.call(1, "login", "alice", "alice-pw")) is True
        for _ in range(3):
            assert (yield other.call(0, "get_chain_id")) == CHAIN_ID
        assert_rate_error(error_of((yield other.request(0, "get_chain_id"))),
                          "user 'alice'", 2, 3)
        for proto in (anon, other, bob):
            proto.dropConnection()
    finally:
        yield server.stop()


@pytest_twisted.inlineCallbacks
def test_source_address_limit_across_users(chain, clock, metrics):
    """--max-calls-per-second-per-ip 1 with burst 4: alice, bob and
    anonymous clients from 127.0.0.1 share four calls; bob (no limits of
    his own) is refused by the address' limit."""
    server = serve(chain, clock, metrics, max_calls_per_second_per_ip=1,
                   max_call_burst_per_ip=4)
    try:
        bob = yield ws_connect(server.port, "bob", "bob-pw")
        alice = yield ws_connect(server.port, "alice", "alice-pw")
        anon = yield ws_connect(server.port)
        for proto in (bob, alice, anon, bob):
            assert (yield proto.call(0, "get_chain_id")) == CHAIN_ID
        error = error_of((yield bob.request(0, "get_chain_id")))
        assert_rate_error(error, "source address 127.0.0.1", 1, 4)
        assert "--max-calls-per-second-per-ip" in error["message"]
        assert error["data"]["stack"][0]["data"]["scope"] == "source"
        status, body = yield post(server, CHAIN_ID_CALL, "bob", "bob-pw")
        assert body["error"]["data"]["name"] == "rate_limit_exceeded"
        # a refused call costs nothing: alice's own bucket still has 2 calls
        error_of((yield alice.request(0, "get_chain_id")))
        clock.advance(2)
        for proto in (alice, alice):
            assert (yield proto.call(0, "get_chain_id")) == CHAIN_ID
        error = error_of((yield alice.request(0, "get_chain_id")))
        assert error["data"]["stack"][0]["data"]["scope"] in ("user", "source")
        assert refusals(metrics, "calls", "source") >= 3
        for proto in (bob, alice, anon):
            proto.dropConnection()
    finally:
        yield server.stop()


# -- connections -------------------------------------------------------------------------

@pytest_twisted.inlineCallbacks
def test_connections_per_user(chain, clock, metrics):
    """alice may have two WebSocket connections logged in: a third with her
    credentials in the upgrade is refused with HTTP 429 and the text; a
    ``login`` as her on an open connection answers the error and leaves
    that connection as it was; once one of hers closes, she may again."""
    server = serve(chain, clock, metrics)
    try:
        first = yield ws_connect(server.port, "alice", "alice-pw")
        second = yield ws_connect(server.port, "alice", "alice-pw")
        with pytest.raises(ConnectionError):
            yield ws_connect(server.port, "alice", "alice-pw")
        anon = Rested((yield ws_connect(server.port)), clock)
        reply = yield anon.request(1, "login", ["alice", "alice-pw"])
        error = error_of(reply)
        assert error["code"] == -32005
        assert error["message"] == ("Execution error: Too many connections: 2 WebSocket "
                                    "connections are logged in for user 'alice' "
                                    "(api-access limits.connections)")
        assert error["data"]["name"] == "connection_limit_exceeded"
        assert error["data"]["stack"][0]["data"] == {"limit": 2, "scope": "user"}
        # still the anonymous session, open
        assert (yield anon.call(1, "get_available_api_sets")) == READ
        # HTTP requests are not connections: served
        status, body = yield post(server, CHAIN_ID_CALL, "alice", "alice-pw")
        assert body["result"] == CHAIN_ID
        assert refusals(metrics, "connections", "user") == 2
        # a connection logging in as someone else frees its slot
        assert (yield second.call(1, "login", "bob", "bob-pw")) is True
        assert (yield anon.call(1, "login", "alice", "alice-pw")) is True
        account = server.site.limit_book.accounts[("user", "alice")]
        first.dropConnection()
        yield wait_for(lambda: account.connections == 1, timeout=5)
        third = yield ws_connect(server.port, "alice", "alice-pw")
        assert (yield third.call(0, "get_chain_id")) == CHAIN_ID
        for proto in (second, anon.proto, third):
            proto.dropConnection()
    finally:
        yield server.stop()


@pytest_twisted.inlineCallbacks
def test_refused_upgrade_names_the_limit(chain, clock):
    """The handshake refusal itself carries status 429 and the text."""
    server = serve(chain, clock)
    try:
        kept = yield defer.gatherResults([ws_connect(server.port, "alice", "alice-pw")
                                          for _ in range(2)])
        upgrade = (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                   b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                   b"Sec-WebSocket-Version: 13\r\nAuthorization: Basic "
                   + base64.b64encode(b"alice:alice-pw") + b"\r\n\r\n")
        answer = yield threads.deferToThread(raw_exchange, server.port, upgrade)
        assert answer.startswith(b"HTTP/1.1 429"), answer
        assert b"Too many connections" in answer
        for proto in kept:
            proto.dropConnection()
    finally:
        yield server.stop()


def raw_exchange(port, data):
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


# -- subscriptions -----------------------------------------------------------------------

@pytest_twisted.inlineCallbacks
def test_subscriptions_per_user(chain, clock, metrics):
    """alice holds at most 3 items: the subscribe callback, then objects
    read while it is set; past it a reading call is refused with the error
    (those subscribed before stay); cancel_all_subscriptions gives them
    back; markets and the callbacks count too; her connections share the
    limit, and a closed connection gives its items back."""
    create_gold(fund(chain))
    server = serve(chain, clock, metrics)
    book = server.site.limit_book
    try:
        alice = Rested((yield ws_connect(server.port, "alice", "alice-pw")), clock)
        assert (yield alice.call(0, "set_subscribe_callback", 5, False)) is None
        accounts = yield alice.call(0, "get_objects", ["1.2.0", "1.2.1"])
        assert [a["id"] for a in accounts] == ["1.2.0", "1.2.1"]
        # reading them again subscribes nothing new
        yield alice.call(0, "get_objects", ["1.2.1"])
        error = error_of((yield alice.request(0, "get_objects", [["1.2.2"]])))
        assert error["code"] == -32005
        assert error["message"].startswith(
            "Execution error: Subscription limit reached: 3 subscribed items for user "
            "'alice' (api-access limits.subscriptions)")
        assert error["data"]["name"] == "subscription_limit_exceeded"
        # without subscribing, reading is fine
        assert (yield alice.call(0, "get_objects", ["1.2.2"], False))[0]["id"] == "1.2.2"
        error = error_of((yield alice.request(0, "subscribe_to_market", [6, "1.3.0", "GOLD"])))
        assert error["data"]["name"] == "subscription_limit_exceeded"
        assert (yield alice.call(0, "cancel_all_subscriptions")) is None
        assert book.accounts[("user", "alice")].subscriptions == 0
        assert (yield alice.call(0, "subscribe_to_market", 6, "1.3.0", "GOLD")) is None
        assert (yield alice.call(0, "set_block_applied_callback", 7)) is None
        second = Rested((yield ws_connect(server.port, "alice", "alice-pw")), clock)
        assert (yield second.call(0, "set_pending_transaction_callback", 8)) is None
        error = error_of((yield second.request(0, "set_subscribe_callback", [9, False])))
        assert error["data"]["name"] == "subscription_limit_exceeded"
        assert refusals(metrics, "subscriptions", "user") == 3
        assert (yield alice.call(0, "unsubscribe_from_market", "GOLD", "1.3.0")) is None
        assert (yield second.call(0, "set_subscribe_callback", 9, False)) is None
        account = book.accounts[("user", "alice")]
        alice.proto.dropConnection()
        yield wait_for(lambda: account.connections == 1, timeout=5)
        assert account.subscriptions == 2  # second's two callbacks
        second.proto.dropConnection()
        yield wait_for(lambda: account.connections == 0, timeout=5)
        assert account.subscriptions == 0
    finally:
        yield server.stop()


@pytest_twisted.inlineCallbacks
def test_subscriptions_per_source_address(chain, clock, metrics):
    """--max-subscriptions-per-ip 2 over every connection of the address."""
    server = serve(chain, clock, metrics, max_subscriptions_per_ip=2)
    try:
        bob = Rested((yield ws_connect(server.port, "bob", "bob-pw")), clock)
        anon = Rested((yield ws_connect(server.port)), clock)
        assert (yield bob.call(0, "set_block_applied_callback", 1)) is None
        assert (yield anon.call(0, "set_block_applied_callback", 1)) is None
        error = error_of((yield bob.request(0, "set_pending_transaction_callback", [2])))
        assert error["message"].startswith(
            "Execution error: Subscription limit reached: 2 subscribed items for source "
            "address 127.0.0.1 (--max-subscriptions-per-ip)")
        assert error["data"]["stack"][0]["data"] == {"limit": 2, "scope": "source"}
        assert refusals(metrics, "subscriptions", "source") == 1
        source = server.site.limit_book.accounts[("ip", "127.0.0.1")]
        anon.proto.dropConnection()
        yield wait_for(lambda: source.connections == 1, timeout=5)
        assert (yield bob.call(0, "set_pending_transaction_callback", 2)) is None
        bob.proto.dropConnection()
    finally:
        yield server.stop()


@pytest_twisted.inlineCallbacks
def test_broadcast_callbacks_count_until_confirmed(chain, clock):
    """A callback of broadcast_transaction_with_callback holds one item
    until its confirmation notice; over the limit the transaction is
    refused before it is pushed (nothing is lost: it is not in the next
    block, and the client may send it again)."""
    fund(chain)
    access = {"permission_map": [["carol", entry("carol-pw", READ + ["network_broadcast_api"],
                                                 {"subscriptions": 2})]]}
    server = serve(chain, clock, access=access)
    try:
        carol = yield ws_connect(server.port, "carol", "carol-pw")
        account = server.site.limit_book.accounts[("user", "carol")]
        assert (yield carol.call(0, "set_block_applied_callback", 1)) is None
        broadcast = yield carol.call(1, "network_broadcast")
        first, second = (sign_wire(chain, [transfer_wire(n)]) for n in (11, 12))
        assert (yield carol.call(broadcast, "broadcast_transaction_with_callback", 4,
                                 first)) is None
        assert account.subscriptions == 2
        error = error_of((yield carol.request(broadcast, "broadcast_transaction_with_callback",
                                              [5, second])))
        assert error["data"]["name"] == "subscription_limit_exceeded"
        produce(chain)
        assert len(chain.get_block(chain.head_block_num)["transactions"]) == 1
        yield wait_for(lambda: any(n[0] == 4 for n in carol.notices), timeout=5)
        assert account.subscriptions == 1
        assert (yield carol.call(broadcast, "broadcast_transaction_with_callback", 5,
                                 second)) is None
        produce(chain)
        yield wait_for(lambda: any(n[0] == 5 for n in carol.notices), timeout=5)
        assert account.subscriptions == 1
        carol.dropConnection()
        yield wait_for(lambda: account.connections == 0, timeout=5)
        assert account.subscriptions == 0
    finally:
        yield server.stop()


# -- metrics and log of the connection guard's limits -------------------------------------

@pytest_twisted.inlineCallbacks
def test_guard_refusals_counted_and_limit_lines_throttled(chain, clock, metrics):
    """--max-connections-per-ip and --max-connections refusals are counted
    under ``limit="connections"`` (scopes ``source`` and ``node``); the
    refusals of the limits per user are logged once per kind per minute."""
    server = serve(chain, clock, metrics, max_connections_per_ip=1)
    try:
        with log_events(lambda e: str(e.get("event", "")).endswith("_per_user")) as lines:
            alice = yield ws_connect(server.port, "alice", "alice-pw")
            with pytest.raises(ConnectionError):
                yield ws_connect(server.port)
            assert refusals(metrics, "connections", "source") == 1
            for _ in range(6):
                yield alice.request(0, "get_chain_id")
            assert refusals(metrics, "calls", "user") == 3
            assert [(e["event"], e["limit"], e["whom"], e["peer"]) for e in lines] == [
                ("calls_per_user", "calls", "user 'alice'", "127.0.0.1")]
            clock.advance(61)
            for _ in range(4):
                yield alice.request(0, "get_chain_id")
            assert len(lines) == 2 and lines[1]["suppressed"] == 2
        alice.dropConnection()
    finally:
        yield server.stop()
    server = serve(chain, clock, metrics, max_connections=1)
    try:
        bob = yield ws_connect(server.port, "bob", "bob-pw")
        with pytest.raises(ConnectionError):
            yield ws_connect(server.port)
        assert refusals(metrics, "connections", "node") == 1
        bob.dropConnection()
    finally:
        yield server.stop()


# -- no limits, bad limits ---------------------------------------------------------------

@pytest_twisted.inlineCallbacks
def test_no_limits_no_book(chain, clock):
    """Without limits in api-access or options nothing is checked per call."""
    server = serve(chain, clock, access={"permission_map": [["*", entry("*", READ)]]})
    try:
        assert server.site.limit_book is None
        anon = yield ws_connect(server.port)
        for _ in range(20):
            assert (yield anon.call(0, "get_chain_id")) == CHAIN_ID
        anon.dropConnection()
    finally:
        yield server.stop()


@pytest.mark.parametrize("limits, text", [
    ({"calls_per_second": -1}, "limits.calls_per_second must be a number from 0"),
    ({"connections": 1.5}, "limits.connections must be an integer from 0"),
    ({"subscriptions": "10"}, "limits.subscriptions must be an integer from 0"),
    ({"burst": True, "calls_per_second": 1}, "limits.burst must be an integer"),
    ({"burst": 5}, "limits.burst needs limits.calls_per_second"),
    ({"calls_per_sec": 5}, "unknown key(s) calls_per_sec in 'limits'; known: "
                           "calls_per_second, burst, connections, subscriptions"),
    ([], "'limits' must be an object"),
])
def test_bad_limits_in_api_access(tmp_path, limits, text):
    doc = {"permission_map": [["alice", entry("pw", READ, limits)]]}
    with pytest.raises(ConfigError) as raised:
        ApiAccess.from_json(doc, "access.json")
    assert str(raised.value).startswith(f"api-access file access.json: permission_map[0]: "
                                        f"{text}")
    # at startup: one usage line naming the option and the file
    path = tmp_path / "access.json"
    path.write_bytes(orjson.dumps(doc))
    with pytest.raises(usage.UsageError) as raised:
        Options().parseOptions(["--data-dir", str(tmp_path / "data"), "--api-access",
                                str(path)])
    assert str(raised.value).startswith(f"--api-access: api-access file {path}: "
                                        f"permission_map[0]: {text}")
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("args, text", [
    (["--max-calls-per-second-per-ip", "-1"], "--max-calls-per-second-per-ip: -1.0 is not "
                                              "between 0 and 1000000"),
    (["--max-calls-per-second-per-ip", "lots"], "--max-calls-per-second-per-ip: 'lots' is "
                                                "not a number of calls per second"),
    (["--max-subscriptions-per-ip", "1.5"], "--max-subscriptions-per-ip: '1.5' is not an "
                                            "integer"),
    (["--max-call-burst-per-ip", "10"], "max-call-burst-per-ip needs "
                                        "max-calls-per-second-per-ip (the burst is the size "
                                        "of that rate's bucket)"),
])
def test_bad_limit_options(tmp_path, args, text):
    with pytest.raises(usage.UsageError) as raised:
        Options().parseOptions(["--data-dir", str(tmp_path / "data")] + args)
    assert str(raised.value) == text


def test_limit_options_reach_the_rpc_limits(tmp_path):
    options = Options()
    options.parseOptions(["--data-dir", str(tmp_path / "data"),
                          "--max-calls-per-second-per-ip", "2.5", "--max-call-burst-per-ip",
                          "7", "--max-subscriptions-per-ip", "300"])
    per_ip = options.rpc_limits().per_ip
    assert (per_ip.calls_per_second, per_ip.bucket_size, per_ip.subscriptions) == (2.5, 7, 300)
    options = Options()
    options.parseOptions(["--data-dir", str(tmp_path / "data")])
    per_ip = options.rpc_limits().per_ip  # subscriptions limited by default, calls not
    assert (per_ip.calls_per_second, per_ip.subscriptions) == (0, 20000)
    options = Options()
    options.parseOptions(["--data-dir", str(tmp_path / "data"),
                          "--max-subscriptions-per-ip", "0"])
    assert not options.rpc_limits().per_ip  # 0: no limit
