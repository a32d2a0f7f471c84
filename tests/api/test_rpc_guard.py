"""The RPC port under hostile clients (nodeapi.rpc.guard, RpcChannel): clients
that never read their replies, connections that trickle their request head,
too many connections; over real loopback sockets, with the site's clock a
``task.Clock`` where time matters (docs/rpc-access.rst, README "Limits
against hostile clients")."""

import gc
import socket
import weakref

import orjson
import pytest
import pytest_twisted
from twisted.internet import defer, protocol, reactor, task
from twisted.internet.address import IPv4Address
from twisted.internet.interfaces import ISSLTransport, ITCPTransport
from twisted.internet.testing import StringTransport
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.logger import Logger
from zope.interface import Interface, classImplements, directlyProvides

from nodeapi.rpc.access import ApiAccess
from nodeapi.rpc.guard import ConnectionGuard, RpcLimits
from nodeapi.rpc.throttled_log import ThrottledLog

from kit.rpc import ws_connect
from kit.site import RunningSite, late_registry, log_events, make_node

CHAIN_ID = "569cba9a00ee6e807a62389ea67de7c6954835390be62371709ec804c6bfe1f2"
#: 100 ids of genesis accounts: a reply of about 100 account objects
HUNDRED_IDS = [f"1.2.{i % 17}" for i in range(100)]


def turns(seconds=0.02):
    """Let the real reactor run for ``seconds``."""
    return task.deferLater(reactor, seconds, lambda: None)


@pytest.fixture
def warnings():
    """Warnings logged while the test runs (structured events)."""
    with log_events(lambda event: getattr(event.get("log_level"), "name", "") == "warn") as events:
        yield events


def limit_events(events, kind):
    return [e for e in events if e.get("event") == kind]


# -- clients that do not read ---------------------------------------------------

@pytest.fixture
def big_cap_server(chain):
    running = RunningSite(make_node(chain), ApiAccess.default())
    yield running
    running.stop_blocking()


def server_side_of(running, before=()):
    (proto,) = set(running.site.ws_factory.connections) - set(before)
    return proto


@pytest_twisted.inlineCallbacks
def test_websocket_client_that_does_not_read_is_paused_not_buffered(big_cap_server):
    """A client pipelining get_objects of 100 ids without reading: the node
    stops reading its requests instead of answering them into memory, and
    once the client reads again every reply arrives."""
    ws = yield ws_connect(big_cap_server.port)
    proto = server_side_of(big_cap_server)
    ws.transport.pauseProducing()  # the client stops reading
    sent = 600
    pending = [ws.request(0, "get_objects", [HUNDRED_IDS]) for _ in range(sent)]
    most = 0
    for _ in range(150):
        yield turns(0.01)
        most = max(most, proto.unsent)
    assert proto._open  # paused, not closed
    assert proto.meter.paused
    # what the node holds for it is one read's worth of replies, not 3000
    assert most < 8 * 1024 * 1024
    assert big_cap_server.site.guard.unsent == proto.transport.unsent
    ws.transport.resumeProducing()
    replies = yield defer.gatherResults(pending)
    assert len(replies) == sent
    assert all(len(r["result"]) == 100 for r in replies)
    assert not proto.meter.paused and proto.unsent == 0
    assert (yield ws.call(0, "get_chain_id")) == CHAIN_ID
    ws.dropConnection()


@pytest.fixture
def budget_server(chain):
    running = RunningSite(make_node(chain), ApiAccess.default(), registry=late_registry(),
                          limits=RpcLimits(max_unsent_bytes=1024 * 1024))
    yield running
    running.stop_blocking()


LATE_CALL = orjson.dumps({"id": 1, "method": "late_blob", "params": [64 * 1024]})


@pytest_twisted.inlineCallbacks
def test_unsent_bytes_stay_within_the_node_wide_budget(budget_server, warnings):
    """Ten clients that never read, each with calls whose results arrive
    later (those cannot be held back like unread requests): the node-wide
    total of unsent reply bytes stays within the budget, past it the largest
    holder is aborted (logged once), and others are still served."""
    guard = budget_server.site.guard
    hostile = []
    for _ in range(10):
        ws = yield ws_connect(budget_server.port)
        ws.transport.pauseProducing()
        hostile.append(ws)
    most = 0
    for _ in range(100):
        for ws in hostile:
            if ws.transport.connected:
                for _ in range(10):
                    ws.sendMessage(LATE_CALL, isBinary=False)
        yield turns(0.01)
        most = max(most, guard.unsent)
        if sum(not ws.transport.connected for ws in hostile) >= 3:
            break
    assert most <= 1024 * 1024 + 65 * 1024  # at most one result past the budget
    aborted = limit_events(warnings, "max_unsent_bytes")
    assert len(aborted) == 1  # once, then throttled (the site's clock is real)
    assert aborted[0]["limit"] == 1024 * 1024
    assert sum(not ws.transport.connected for ws in hostile) >= 3
    polite = yield ws_connect(budget_server.port)
    try:
        assert (yield polite.call(0, "get_chain_id")) == CHAIN_ID
    finally:
        polite.dropConnection()
        for ws in hostile:
            ws.dropConnection(abort=True)


@pytest_twisted.inlineCallbacks
def test_http_client_that_does_not_read_is_paused_not_buffered(big_cap_server):
    """The same over HTTP: 150 pipelined POSTs of get_objects of 100 ids
    and no reading; the node answers a request only once the previous
    responses have drained, and every response arrives once the client
    reads."""
    body = orjson.dumps({"id": 1, "method": "call",
                         "params": [0, "get_objects", [HUNDRED_IDS]]})
    post = (b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n%s"
            % (len(body), body))
    client = yield raw_connect(big_cap_server.port)
    client.transport.getHandle().setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    client.transport.pauseProducing()  # never read
    client.transport.write(post * 150)
    guard = big_cap_server.site.guard
    most = 0
    for _ in range(100):
        yield turns(0.01)
        most = max(most, guard.unsent)
    (connection,) = guard.connections
    assert connection.meter.paused
    assert most < 1024 * 1024  # one response past the transport's buffer
    client.transport.resumeProducing()
    for _ in range(100):
        yield turns(0.1)
        if client.received.count(b"HTTP/1.1 200 OK") == 150:
            break
    assert client.received.count(b"HTTP/1.1 200 OK") == 150
    client.transport.loseConnection()


def bottom_transport(proto):
    transport = proto.transport
    while "transport" in vars(transport):
        transport = transport.transport
    return transport


@pytest_twisted.inlineCallbacks
def test_closed_connection_frees_its_buffers_without_gc(big_cap_server):
    """The socket of a connection that held unsent replies is freed when
    the connection is lost, by reference counting (no garbage collection)."""
    ws = yield ws_connect(big_cap_server.port)
    proto = server_side_of(big_cap_server)
    ws.transport.pauseProducing()
    for _ in range(200):
        ws.request(0, "get_objects", [HUNDRED_IDS])
    for _ in range(50):
        yield turns(0.01)
        if proto.unsent:
            break
    assert proto.unsent > 0
    socket_transport = weakref.ref(bottom_transport(proto))
    del proto
    gc.collect()
    gc.disable()
    try:
        ws.transport.abortConnection()
        for _ in range(100):
            yield turns(0.01)
            if not big_cap_server.site.guard.connections:
                break
        yield turns(0.05)
        assert socket_transport() is None
    finally:
        gc.enable()
    assert big_cap_server.site.guard.unsent == 0


# -- connection limits -------------------------------------------------------------

class Raw(protocol.Protocol):
    """A bare TCP client: records what it receives and when it is lost."""

    def __init__(self):
        self.chunks = []
        self.lost = defer.Deferred()

    @property
    def received(self):
        return b"".join(self.chunks)

    def dataReceived(self, data):
        self.chunks.append(data)

    def connectionLost(self, reason):
        self.lost.callback(None)


def raw_connect(port):
    return connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port), Raw())


@pytest.fixture
def clock():
    return task.Clock()


def clocked_server(chain, clock, **limits):
    return RunningSite(make_node(chain), ApiAccess.default(), clock=clock,
                       limits=RpcLimits(**limits))


@pytest_twisted.inlineCallbacks
def test_per_address_limit(chain, clock, warnings):
    server = clocked_server(chain, clock, max_connections_per_ip=3, handshake_timeout=0)
    try:
        admitted = yield defer.gatherResults([raw_connect(server.port) for _ in range(3)])
        yield turns()
        refused = yield defer.gatherResults([raw_connect(server.port) for _ in range(4)])
        yield defer.gatherResults([r.lost for r in refused])  # closed at once
        yield turns()
        assert server.site.guard.connection_count("127.0.0.1") == 3
        assert not any(r.lost.called for r in admitted)
        lines = limit_events(warnings, "max_connections_per_ip")
        assert len(lines) == 1 and lines[0]["peer"] == "127.0.0.1"
        # once one closes, the address may connect again
        admitted[0].transport.loseConnection()
        yield admitted[0].lost
        yield turns()
        again = yield raw_connect(server.port)
        yield turns()
        assert not again.lost.called
        # refused again, not logged again (the log is throttled per kind)
        late = yield raw_connect(server.port)
        yield late.lost
        assert len(limit_events(warnings, "max_connections_per_ip")) == 1
        for r in admitted[1:] + [again]:
            r.transport.loseConnection()
    finally:
        yield server.stop()


@pytest_twisted.inlineCallbacks
def test_total_limit(chain, clock, warnings):
    server = clocked_server(chain, clock, max_connections=2, max_connections_per_ip=0,
                            handshake_timeout=0)
    try:
        first = yield ws_connect(server.port)
        second = yield raw_connect(server.port)
        third = yield raw_connect(server.port)
        yield third.lost
        assert server.site.guard.connection_count() == 2
        assert len(limit_events(warnings, "max_connections")) == 1
        assert (yield first.call(0, "get_chain_id")) == CHAIN_ID
        second.transport.loseConnection()
        first.dropConnection()
    finally:
        yield server.stop()


# -- request-head deadline ------------------------------------------------------------

BODY = b'{"jsonrpc":"2.0","id":1,"method":"get_chain_id","params":[]}'
HEAD = (b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(BODY), BODY))
UPGRADE = (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
           b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
           b"Sec-WebSocket-Version: 13\r\n\r\n")


@pytest.mark.parametrize("head", [HEAD, UPGRADE], ids=["http", "websocket"])
@pytest_twisted.inlineCallbacks
def test_trickled_head_is_cut_at_the_deadline(chain, clock, warnings, head):
    """One byte per (clock) second: each byte would reset the idle timer,
    but the head deadline (10 s) still cuts the connection."""
    server = clocked_server(chain, clock, handshake_timeout=10)
    try:
        trickler = yield raw_connect(server.port)
        for byte in head[:30]:
            trickler.transport.write(bytes([byte]))
            yield turns(0.005)
            clock.advance(1)
            yield turns(0.005)
            if trickler.lost.called:
                break
        assert trickler.lost.called
        assert clock.seconds() == 10
        assert trickler.received == b""
        (line,) = limit_events(warnings, "handshake_timeout")
        assert line["timeout"] == 10
    finally:
        yield server.stop()


@pytest_twisted.inlineCallbacks
def test_complete_head_is_not_cut(chain, clock):
    """A request whose head arrives in time is served, and the connection
    then idles under twisted.web's own timeout, not the head deadline."""
    server = clocked_server(chain, clock, handshake_timeout=10)
    try:
        client = yield raw_connect(server.port)
        client.transport.write(HEAD)
        for _ in range(100):
            yield turns(0.01)
            if client.received.endswith(b"}"):
                break
        assert b" 200 " in client.received.split(b"\r\n")[0]
        assert CHAIN_ID.encode() in client.received
        clock.advance(30)
        yield turns()
        assert not client.lost.called
        # the next head on the same connection has its own deadline, from its first byte
        client.transport.write(HEAD[:10])
        yield turns()
        clock.advance(10)
        yield turns()
        assert client.lost.called
    finally:
        yield server.stop()


# -- the wrapper as a transport --------------------------------------------------------

class _TLS(StringTransport):
    """A transport that is its own TLS layer."""


classImplements(_TLS, ISSLTransport, ITCPTransport)


class IOwn(Interface):
    """An interface one transport instance declares for itself."""


def guarded(guard, transport):
    connection = guard.protocol_for(transport.getPeer(), protocol.Protocol)
    connection.makeConnection(transport)
    return connection


def test_guarded_connection_is_its_transport_but_tls(clock):
    guard = ConnectionGuard(clock)
    first, second = (guarded(guard, _TLS(peerAddress=IPv4Address("TCP", "10.0.0.1", 5)))
                     for _ in range(2))
    for connection in (first, second):
        assert ITCPTransport.providedBy(connection)
        assert not ISSLTransport.providedBy(connection)
    # one declaration for the wrappers of one transport class
    assert first.__provides__ is second.__provides__
    owns = []
    for _ in range(2):  # as a trusted proxy's reader, declaring on the instance
        own = _TLS()
        directlyProvides(own, IOwn)
        owns.append(guarded(guard, own))
    for third in owns:
        assert IOwn.providedBy(third) and ITCPTransport.providedBy(third)
        assert not ISSLTransport.providedBy(third)
    assert owns[0].__provides__ is owns[1].__provides__
    assert not IOwn.providedBy(first)


def test_guarded_connection_addresses_read_once(clock):
    transport = StringTransport(hostAddress=IPv4Address("TCP", "127.0.0.1", 8090),
                                peerAddress=IPv4Address("TCP", "10.0.0.1", 5))
    connection = guarded(ConnectionGuard(clock), transport)
    assert connection.getPeer() == IPv4Address("TCP", "10.0.0.1", 5)
    assert connection.getHost() == IPv4Address("TCP", "127.0.0.1", 8090)
    assert connection.getPeer() is connection.getPeer()
    connection.connectionLost(None)
    assert connection.getPeer() == IPv4Address("TCP", "10.0.0.1", 5)
    assert connection.getHost() == IPv4Address("TCP", "127.0.0.1", 8090)


# -- ThrottledLog ---------------------------------------------------------------------

def test_throttled_log_one_line_per_kind_per_interval(clock, warnings):
    log = ThrottledLog(Logger(), clock, interval=60)
    assert log.event("a", "first {n}", n=1)
    assert not log.event("a", "again {n}", n=2)
    assert log.event("b", "other kind")
    assert not log.event("a", "again {n}", n=3)
    clock.advance(60)
    assert log.event("a", "later {n}", n=4)
    lines = [(e["event"], e["suppressed"], e.get("n")) for e in warnings]
    assert lines == [("a", 0, 1), ("b", 0, None), ("a", 2, 4)]
