"""Peers against misbehaving or unusual nodes: oversized and malformed
messages (one log line, growing reconnect delays on an injected clock),
IPv6 and ws:// addresses, the service tree, structured errors."""

import ast
import os
import socket

import pytest
import pytest_twisted
from twisted.application.service import MultiService
from twisted.internet import reactor, task
from twisted.python.failure import Failure

from nodeapi.errors import AccessDenied, ApiLimitExceeded
from nodeapi.peers.errors import PeerRpcError
from nodeapi.peers.service import PeerService
from nodeapi.protocol.errors import InvalidPeerAddress
from nodeapi.protocol.node_address import NodeAddress, parse_node_address
from nodeapi.rpc.jsonrpc import error_from_failure

from kit.chain import produce
from kit.daemon import ACCESS
from kit.peer_stub import ChainRpcFactory
from kit.peers import FAST, close, listen
from kit.site import RunningSite, make_node
from kit.wait import wait_for
from kit.paths import ROOT


BACKOFF = {"reconnect_initial_delay": 1, "reconnect_factor": 2, "reconnect_max_delay": 100,
           "reconnect_jitter": 0}


@pytest_twisted.inlineCallbacks
def retry_delays(clock, count):
    """The next ``count`` reconnect delays scheduled on ``clock`` (each one
    is run, so the follower reconnects)."""
    delays = []
    for _ in range(count):
        yield wait_for(lambda: clock.getDelayedCalls())
        [call] = clock.getDelayedCalls()
        delays.append(call.getTime() - clock.seconds())
        clock.advance(delays[-1])
    return delays


def test_node_addresses():
    p = parse_node_address
    assert p("node.example:8090") == NodeAddress("node.example", 8090)
    assert p("[::1]:8090") == NodeAddress("::1", 8090)
    assert p("[::1]:8090").address == "[::1]:8090"
    assert p("[::1]:8090").url == "ws://[::1]:8090/"
    assert p("bob:pw@[::1]:8090") == NodeAddress("::1", 8090, "/", ("bob", "pw"))
    assert p("bob:p@ss@10.0.0.1:1") == NodeAddress("10.0.0.1", 1, "/", ("bob", "p@ss"))
    assert p("ws://bob:p%40ss@node.example:8090/ws") == NodeAddress(
        "node.example", 8090, "/ws", ("bob", "p@ss"))
    assert p("WS://node.example:80").url == "ws://node.example:80/"
    for bad, why in [("::1:8090", "brackets"), ("[::1]", "port"), ("wss://h:1", "only ws://"),
                     ("http://h:1", "only ws://"), ("h:65536", "port"), ("", "port"),
                     (None, "not a string")]:
        with pytest.raises(InvalidPeerAddress, match=why):
            p(bad)
    with pytest.raises(InvalidPeerAddress) as info:
        p("bob:secret@nohost")
    assert "secret" not in str(info.value) and "bob:***@nohost" in str(info.value)


def test_peer_rpc_error_reads_names_not_texts():
    """nodeapi's errors carry error.data.name and, for api limits, fc's
    stack values; the follower reads those; the texts decide only for a
    server that sends no name, or fc's generic assert_exception."""
    wire = error_from_failure(Failure(ApiLimitExceeded(100, "Too many blocks: 120 "
                                                            "requested, "))).to_json()
    assert wire["data"]["name"] == "api_limit_exceeded"
    assert wire["data"]["stack"] == [{
        "format": "Too many blocks: 120 requested, limit can not be greater than 100",
        "data": {"configured_limit": 100}}]
    limit = PeerRpcError("get_blocks", wire)
    assert limit.configured_limit == 100 and not limit.access_denied
    denied = PeerRpcError("get_blocks", error_from_failure(Failure(AccessDenied())).to_json())
    assert denied.remote_name == "access_denied" and denied.access_denied
    assert denied.configured_limit is None
    # a name that says something else wins over a misleading text
    other = PeerRpcError("x", {"code": 10, "message": "Execution error: Access denied; "
                               "limit can not be greater than 5",
                               "data": {"code": 10, "name": "invalid_field", "stack": []}})
    assert not other.access_denied and other.configured_limit is None
    # bitshares-core: fc's assert_exception, the text, and the FC_ASSERT values
    fc_stack = [{"context": {"level": "error"}, "format": "limit can not be greater than "
                 "${configured_limit}", "data": {"configured_limit": 50}}]
    graphene = PeerRpcError("x", {"code": 10, "message": "Assert Exception: limit <= "
                                  "configured_limit: limit can not be greater than 50",
                                  "data": {"code": 10, "name": "assert_exception",
                                           "stack": fc_stack}})
    assert graphene.configured_limit == 50 and not graphene.access_denied
    assert PeerRpcError("x", {"code": 10, "message": "Assert Exception: is_allowed: Access "
                              "denied", "data": {"name": "assert_exception"}}).access_denied
    # no data at all: the texts
    bare = PeerRpcError("x", {"code": 10, "message": "limit can not be greater than 7"})
    assert bare.configured_limit == 7 and not bare.access_denied
    assert PeerRpcError("x", "not an object").remote_message == "not an object"


def test_no_global_reactor_in_the_peers_package(follower):
    """The package takes its reactor from the caller (twistd's, via tap)."""
    root = os.path.join(ROOT, "nodeapi", "peers")
    for name in os.listdir(root):
        if name.endswith(".py"):
            tree = ast.parse(open(os.path.join(root, name)).read())
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module == "twisted.internet":
                    assert "reactor" not in [a.name for a in node.names], name
    with pytest.raises(TypeError):
        PeerService(follower)


@pytest_twisted.inlineCallbacks
def test_peer_clients_are_children_of_the_service(producer, follower):
    """Starting the tree starts each peer's ClientService; stopping it
    returns a Deferred that waits for their connections to close."""
    produce(producer, 3)
    port = yield listen(ChainRpcFactory(producer))
    top = MultiService()
    svc = PeerService(follower, seed_nodes=[f"127.0.0.1:{port.getHost().port}"],
                      reactor=reactor, parameters=FAST)
    svc.setServiceParent(top)
    [peer] = svc.peers.values()
    assert list(svc) == [peer.remote] and peer.remote.parent is svc
    assert not peer.remote.running
    top.startService()
    assert peer.remote.running
    yield wait_for(lambda: follower.head_block_num == 3 and peer.state == "live")
    d = top.stopService()
    assert not d.called  # the WebSocket is still closing
    yield d
    assert not peer.remote.running and peer.protocol is None
    assert peer.state == "disconnected"
    yield port.stopListening()


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback on this machine")
@pytest_twisted.inlineCallbacks
def test_ipv6_seed_node_against_the_real_site(producer, follower):
    from nodeapi.rpc.access import ApiAccess
    from nodeapi.rpc.site import rpc_site


    produce(producer, 3)
    site = rpc_site(make_node(producer), ApiAccess.default(), reactor=reactor)
    listening = reactor.listenTCP(0, site, interface="::1")
    portnum = listening.getHost().port
    svc = PeerService(follower, seed_nodes=[f"[::1]:{portnum}"], reactor=reactor,
                      parameters=FAST)
    svc.startService()
    try:
        yield wait_for(lambda: follower.head_block_num == 3)
        assert follower.head_block_id == producer.head_block_id
        assert svc.potential_peers()[0]["addr"] == f"[::1]:{portnum}"
        [proto] = site.ws_factory.connections
        assert proto.http_headers["host"] == f"[::1]:{portnum}"
    finally:
        yield svc.stopService()
        yield listening.stopListening()


@pytest_twisted.inlineCallbacks
def test_ws_url_with_credentials_against_the_real_site(producer, follower):
    """A ws:// URL with user:password logs in (bytemaster gets block_api)."""
    from nodeapi.rpc.access import ApiAccess


    produce(producer, 4)
    site = RunningSite(make_node(producer), ApiAccess.load(ACCESS))
    svc = PeerService(follower, reactor=reactor, parameters=FAST)
    svc.startService()
    try:
        yield svc.add_node(f"ws://bytemaster:supersecret@127.0.0.1:{site.port}/")
        yield wait_for(lambda: follower.head_block_num == 4)
        [peer] = svc.peers.values()
        assert peer.address == f"127.0.0.1:{site.port}"
        assert peer.follower.use_get_block is False  # block_api granted after login
    finally:
        yield svc.stopService()
        yield site.stop()


@pytest_twisted.inlineCallbacks
def test_oversized_message_closes_and_backs_off(producer, follower, captured):
    """A reply larger than max_message_size closes the connection (1009)
    instead of being read into memory; each such close counts as a failure
    (one error line) and the reconnect delay grows.  Before: no limit, the
    200 kB chain id was read, did not match and the peer was marked bad."""
    produce(producer, 2)
    big = b'{"id": 1, "result": "' + b"a" * 200_000 + b'"}'
    factory = ChainRpcFactory(producer, raw=lambda method, call_id: big
                              if method == "get_chain_id" else None)
    port = yield listen(factory)
    clock = task.Clock()
    svc = PeerService(follower, seed_nodes=[f"127.0.0.1:{port.getHost().port}"],
                      reactor=reactor, clock=clock, parameters=BACKOFF,
                      max_message_size=64 * 1024)
    svc.startService()
    delays = yield retry_delays(clock, 3)
    assert delays == [1, 2, 4]
    [peer] = svc.peers.values()
    assert peer.state != "bad" and follower.head_block_num == 0
    assert [m for _a, m in factory.calls] == ["get_chain_id"] * 3
    errors = [t for level, t, _e in captured if level in ("error", "critical")]
    assert len(errors) == 3 and all("larger than 65536 bytes" in t for t in errors), errors
    assert not [e for _l, _t, e in captured if "log_failure" in e]
    yield close(svc, port)


DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("raw,on_open,why", [
    (DEEP, None, "invalid JSON"),
    (b"[1, 2]", None, "not an object"),
    (None, b'{"method": "notice", "params": {"cb": 1}}', "notice whose params"),
    (None, b'{"method": "notice", "params": 5}', "notice whose params"),
    (None, b'{"method": "notice", "params": [1, ["not-a-block-id"]]}', "not a block id"),
])
@pytest_twisted.inlineCallbacks
def test_malformed_messages_back_off(producer, follower, captured, raw, on_open, why):
    """Deeply nested JSON (RecursionError in the json module), a non-object,
    or a notice of the wrong shape: one error line per connection, no
    traceback, the connection dropped and the reconnect delay growing; the
    peer is not marked bad."""
    produce(producer, 2)
    factory = ChainRpcFactory(producer, raw=lambda method, call_id: raw
                              if method == "get_chain_id" else None, on_open=on_open)
    port = yield listen(factory)
    clock = task.Clock()
    svc = PeerService(follower, seed_nodes=[f"127.0.0.1:{port.getHost().port}"],
                      reactor=reactor, clock=clock, parameters=BACKOFF)
    svc.startService()
    delays = yield retry_delays(clock, 3)
    assert delays == [1, 2, 4]
    [peer] = svc.peers.values()
    assert peer.state != "bad" and peer.bad_messages == 3
    errors = [t for level, t, _e in captured if level in ("error", "critical")]
    assert len(errors) == 3 and all(why in t for t in errors), errors
    assert not [e for _l, _t, e in captured if "log_failure" in e]
    yield close(svc, port)


@pytest_twisted.inlineCallbacks
def test_batches_shrink_below_max_message_size(producer, follower):
    """get_blocks replies over max_message_size close the connection; the
    follower halves its batch each time until the replies fit, and catches
    up (from the real RPC site)."""
    import orjson

    from nodeapi.rpc.access import DEFAULT_ALLOWED_APIS, ApiAccess


    produce(producer, 30)
    one_block = len(orjson.dumps(producer.get_block(2)))
    access = ApiAccess.from_json({"permission_map": [["*", {
        "password_hash_b64": "*", "password_salt_b64": "*",
        "allowed_apis": sorted(DEFAULT_ALLOWED_APIS | {"block_api"})}]]})
    site = RunningSite(make_node(producer), access)
    clock = task.Clock()
    svc = PeerService(follower, seed_nodes=[f"127.0.0.1:{site.port}"], reactor=reactor,
                      clock=clock, parameters=dict(BACKOFF, sync_batch_size=20),
                      max_message_size=one_block * 4)
    svc.startService()
    try:
        for _ in range(20):
            if follower.head_block_num == 30:
                break
            yield wait_for(lambda: follower.head_block_num == 30 or clock.getDelayedCalls())
            if clock.getDelayedCalls():
                clock.advance(100)
        assert follower.head_block_id == producer.head_block_id
        [peer] = svc.peers.values()
        assert peer.follower.batch_limit == 2  # 20 -> 10 -> 5 -> 2 blocks per call
    finally:
        yield svc.stopService()
        yield site.stop()
