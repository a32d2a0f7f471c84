"""RPC transport limits and failure paths over real loopback sockets:
results that cannot be encoded (-32603 / HTTP 500, logged, connection still
usable), max_calls_in_flight, auto-ping of silent peers, the slow-reader
close (asynchronous results a client does not read), and the HTTP body limit
enforced while the body arrives (raw sockets; docs/wire-contract.rst
section 4)."""

import datetime
import select
import socket

import orjson
import pytest
import pytest_twisted
import treq
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from autobahn.twisted.websocket import WebSocketClientFactory, connectWS
from twisted.internet import defer, reactor, task, threads
from twisted.internet.endpoints import serverFromString
from twisted.internet.ssl import CertificateOptions

from nodeapi.api.base import api_function
from nodeapi.api.database import DatabaseApi
from nodeapi.api.registry import default_registry
from nodeapi.rpc.access import ApiAccess
from nodeapi.rpc.http import LINGER_BYTES, BoundedRequest
from nodeapi.rpc.site import rpc_site

from kit.chain import claim_op, produce, transfer_op
from kit.keys import CHAIN_ID
from kit.rpc import RpcClientProtocol, ws_connect
from kit.signing import sign
from kit.site import RunningSite, late_registry, log_events, make_node


UNENCODABLE = {(1, 2): "a dict key orjson refuses"}


class UnencodableDatabase(DatabaseApi):
    """The database set plus functions whose results orjson cannot encode."""

    @api_function
    def bad_sync(self):
        """A result with a tuple dict key."""
        return UNENCODABLE

    @api_function
    def bad_async(self):
        """The same result, from a Deferred that fires on a later turn."""
        return task.deferLater(reactor, 0.01, lambda: UNENCODABLE)


@pytest.fixture
def logged():
    """Twisted log events carrying a failure, while the test runs."""
    with log_events(lambda event: "log_failure" in event) as events:
        yield events


@pytest.fixture
def bad_server(chain):
    registry = dict(default_registry(), database=UnencodableDatabase)
    running = RunningSite(make_node(chain), ApiAccess.default(), registry=registry)
    yield running
    running.stop_blocking()


@defer.inlineCallbacks
def post(server, body):
    resp = yield treq.post(server.url + "/rpc", data=orjson.dumps(body))
    content = yield resp.content()
    return resp.code, orjson.loads(content)


@pytest_twisted.inlineCallbacks
def test_unencodable_result_http(bad_server, logged):
    for function in ("bad_sync", "bad_async"):
        status, body = yield post(bad_server, {"jsonrpc": "2.0", "id": 5, "method": function,
                                               "params": []})
        assert (status, body) == (500, {"id": 5, "jsonrpc": "2.0", "error": {
            "code": -32603, "message": "Internal error"}})
    assert len(logged) == 2
    assert all(e["log_failure"].check(TypeError) for e in logged)
    assert {e.get("where") for e in logged} == {"0.bad_sync", "0.bad_async"}
    status, body = yield post(bad_server, {"jsonrpc": "2.0", "id": 6, "method": "get_chain_id",
                                           "params": []})
    assert (status, body["result"]) == (200, CHAIN_ID)


@pytest_twisted.inlineCallbacks
def test_unencodable_result_websocket(bad_server, logged):
    ws = yield ws_connect(bad_server.port)
    try:
        for function in ("bad_sync", "bad_async", "bad_async"):
            reply = yield ws.request(0, function)
            assert reply == {"id": reply["id"], "error": {"code": -32603,
                                                          "message": "Internal error"}}
        assert len(logged) == 3
        proto = next(iter(bad_server.site.ws_factory.connections))
        assert proto._in_flight == 0  # the asynchronous failures were counted out
        assert (yield ws.call(0, "get_chain_id")) == CHAIN_ID
    finally:
        ws.dropConnection()


# -- max_calls_in_flight -------------------------------------------------------

@pytest.fixture
def funded_server(chain):
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    running = RunningSite(make_node(chain), ApiAccess.default(), max_calls_in_flight=4)
    yield running
    running.stop_blocking()


@pytest_twisted.inlineCallbacks
def test_max_calls_in_flight(funded_server, chain):
    ws = yield ws_connect(funded_server.port)
    try:
        trxs = [sign(chain, [transfer_op(100 + i)]) for i in range(5)]
        pending = [ws.request("network_broadcast", "broadcast_transaction_synchronous", [t])
                   for t in trxs]
        refused = yield pending[4]
        assert refused == {"id": refused["id"], "error": {
            "code": -32000,
            "message": "Too many calls in flight on this connection (limit 4)"}}
        assert not any(d.called for d in pending[:4])
        produce(chain)
        replies = yield defer.gatherResults(pending[:4])
        head = chain.head_block_num
        for i, reply in enumerate(replies):
            result = reply["result"]
            assert (result["block_num"], result["trx_num"]) == (head, i)
            assert result["trx"]["operations"][0][1]["amount"]["amount"] == 100 + i
        # the slots are free again
        assert (yield ws.call(0, "get_chain_id")) == CHAIN_ID
    finally:
        ws.dropConnection()


# -- auto-ping -----------------------------------------------------------------

class SilentClient(RpcClientProtocol):
    """Answers no ping (Autobahn's automatic pong is skipped)."""

    pings = 0

    def onPing(self, payload):
        SilentClient.pings += 1


@pytest.fixture
def ping_server(chain):
    running = RunningSite(make_node(chain), ApiAccess.default(), auto_ping_interval=1)
    yield running
    running.stop_blocking()


def connect(port, protocol, headers=None):
    factory = WebSocketClientFactory(f"ws://127.0.0.1:{port}/", headers=headers or {})
    factory.protocol = protocol
    factory.setProtocolOptions(autoPingInterval=0)
    factory.opened = defer.Deferred()
    connectWS(factory)
    return factory.opened


@pytest_twisted.inlineCallbacks
def test_auto_ping_drops_a_silent_client(ping_server):
    SilentClient.pings = 0
    silent = yield connect(ping_server.port, SilentClient)
    polite = yield ws_connect(ping_server.port)  # answers pings automatically
    try:
        assert (yield silent.call(0, "get_chain_id")) == CHAIN_ID
        code = yield silent.closed
        assert SilentClient.pings >= 1
        assert code != 1000  # dropped, not closed by the client
        assert len(ping_server.site.ws_factory.connections) == 1
        # the polite client survived the same ping rounds and still works
        yield task.deferLater(reactor, 1.5, lambda: None)
        assert (yield polite.call(0, "get_chain_id")) == CHAIN_ID
    finally:
        polite.dropConnection()
        silent.dropConnection()


# -- slow reader -----------------------------------------------------------------

# A client that stops reading is paused (its unread requests wait, see
# test_rpc_guard.py); what cannot wait -- asynchronous results, notices -- is
# counted, and past max_outgoing_buffer the client is closed with 1008.
# LATE_CALL's result (64 KiB) arrives 50 ms after the call.
LATE_CALL = orjson.dumps({"id": 1, "method": "late_blob", "params": [64 * 1024]})


def answered_or_refused(reply):
    """A reply a slow reader may see: the result, or the in-flight refusal."""
    return (reply.get("result") == "x" * 64 * 1024
            or reply.get("error", {}).get("message", "").startswith("Too many calls"))


@pytest.fixture
def small_buffer_server(chain):
    running = RunningSite(make_node(chain), ApiAccess.default(), registry=late_registry(),
                          max_outgoing_buffer=64 * 1024)
    yield running
    running.stop_blocking()


@pytest_twisted.inlineCallbacks
def test_client_that_does_not_read_is_closed_1008(small_buffer_server):
    ws = yield ws_connect(small_buffer_server.port)
    ws.transport.pauseProducing()  # stop reading: replies pile up at the server
    server_side = next(iter(small_buffer_server.site.ws_factory.connections))
    for _ in range(400):
        if not server_side._open:
            break
        for _ in range(20):
            ws.sendMessage(LATE_CALL, isBinary=False)
        yield task.deferLater(reactor, 0.01, lambda: None)
    assert not server_side._open
    ws.transport.resumeProducing()
    code = yield ws.closed
    assert code == 1008
    assert ws.raw_replies and all(answered_or_refused(r) for r in ws.raw_replies)
    # the node still serves others
    other = yield ws_connect(small_buffer_server.port)
    try:
        assert (yield other.call(0, "get_chain_id")) == CHAIN_ID
    finally:
        other.dropConnection()


# -- HTTP body limit while the body arrives ------------------------------------

HTTP_LIMIT = 64 * 1024
TOO_LARGE = {"id": None, "jsonrpc": "2.0",
             "error": {"code": -32600, "message": f"Request body over {HTTP_LIMIT} bytes"}}


class RecordingRequest(BoundedRequest):
    """BoundedRequest that remembers its instances (to look at what the
    server kept of a refused body)."""

    made: list = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        RecordingRequest.made.append(self)


@pytest.fixture
def limited_server(chain):
    running = RunningSite(make_node(chain), ApiAccess.default(), max_message_size=HTTP_LIMIT)
    RecordingRequest.made = []
    running.site.requestFactory = RecordingRequest
    yield running
    running.stop_blocking()


def raw_connect(port):
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_response(sock):
    """``(status, headers, body)`` of one HTTP response (Content-Length body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        more = sock.recv(65536)
        assert more, f"connection closed in the headers: {data!r}"
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    length = int(headers["content-length"])
    while len(body) < length:
        more = sock.recv(65536)
        assert more
        body += more
    return status, headers, body


def request_head(length=None, extra=""):
    framing = (f"Content-Length: {length}\r\n" if length is not None
               else "Transfer-Encoding: chunked\r\n")
    return (f"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"{framing}{extra}\r\n").encode()


def chunk(data):
    return b"%x\r\n%s\r\n" % (len(data), data)


def declared_too_large(port):
    with raw_connect(port) as sock:
        sock.sendall(request_head(100 * 1024 * 1024, "Expect: 100-continue\r\n"))
        status, headers, body = read_response(sock)
        rest = sock.recv(65536)  # the server half-closed: EOF, no "100 Continue"
        return status, headers, body, rest


@pytest_twisted.inlineCallbacks
def test_declared_oversized_body_refused_before_it_is_sent(limited_server):
    status, headers, body, rest = yield threads.deferToThread(
        declared_too_large, limited_server.port)
    assert status == 413
    assert headers["content-type"] == "application/json"
    assert headers["connection"] == "close"
    assert orjson.loads(body) == TOO_LARGE
    assert rest == b""
    (request,) = RecordingRequest.made
    assert request.refused and request.content is None and request.received == 0


def chunked_flood(port, total):
    """Send a chunked body of ``total`` bytes until the server answers; then
    keep sending until it cuts the connection.  ``(response, sent)``."""
    piece = chunk(b" " * 16384)
    sent = 0
    with raw_connect(port) as sock:
        sock.sendall(request_head())
        while not select.select([sock], [], [], 0.002)[0]:
            sock.sendall(piece)
            sent += len(piece)
            assert sent < total, "never answered"
        response = read_response(sock)
        assert sock.recv(65536) == b""  # answer, then EOF
        try:
            while sent < total:
                sock.sendall(piece)
                sent += len(piece)
        except (BrokenPipeError, ConnectionResetError):
            pass
        return response, sent


@pytest_twisted.inlineCallbacks
def test_chunked_oversized_body_refused_and_cut(limited_server):
    total = 64 * 1024 * 1024
    (status, headers, body), sent = yield threads.deferToThread(
        chunked_flood, limited_server.port, total)
    assert status == 413 and orjson.loads(body) == TOO_LARGE
    assert sent < total  # the server closed before the body was all sent
    (request,) = RecordingRequest.made
    # nothing was stored past the limit; what followed was only counted
    assert request.refused and request.content is None
    assert HTTP_LIMIT < request.received <= HTTP_LIMIT + 65536
    assert request._dropped <= LINGER_BYTES + 65536
    # the node still serves
    status, body = yield post(limited_server, {"jsonrpc": "2.0", "id": 1,
                                               "method": "get_chain_id", "params": []})
    assert (status, body["result"]) == (200, CHAIN_ID)


def just_under(port):
    call = b'{"jsonrpc": "2.0", "id": 3, "method": "get_chain_id", "params": []}'
    body = call + b" " * (HTTP_LIMIT - len(call))
    answers = []
    with raw_connect(port) as sock:
        sock.sendall(request_head(len(body)) + body)
        answers.append(read_response(sock))
        # chunked, same connection (keep-alive), in uneven pieces
        sock.sendall(request_head() + chunk(body[:1000]) + chunk(body[1000:40000]))
        sock.sendall(chunk(body[40000:]) + b"0\r\n\r\n")
        answers.append(read_response(sock))
    return answers


@pytest_twisted.inlineCallbacks
def test_body_at_the_limit_is_served(limited_server):
    answers = yield threads.deferToThread(just_under, limited_server.port)
    for status, _, body in answers:
        assert (status, orjson.loads(body)) == (200, {"id": 3, "jsonrpc": "2.0",
                                                      "result": CHAIN_ID})
    assert [r.received for r in RecordingRequest.made] == [HTTP_LIMIT, HTTP_LIMIT]
    assert not any(r.refused for r in RecordingRequest.made)


# -- slow reader over TLS --------------------------------------------------------

def self_signed_pem(path):
    """Write a fresh self-signed key + certificate for 127.0.0.1 to ``path``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption())
                     + cert.public_bytes(serialization.Encoding.PEM))
    return str(path)


@pytest.fixture
def tls_server(chain, tmp_path):
    pem = self_signed_pem(tmp_path / "server.pem")
    site = rpc_site(make_node(chain), ApiAccess.default(), registry=late_registry(),
                    reactor=reactor, max_outgoing_buffer=64 * 1024)
    endpoint = serverFromString(reactor, f"ssl:0:interface=127.0.0.1:privateKey={pem}")
    port = pytest_twisted.blockon(endpoint.listen(site))
    yield site, port.getHost().port
    for proto in list(site.ws_factory.connections):
        proto.dropConnection(abort=True)
    pytest_twisted.blockon(port.stopListening())


def wss_connect(port):
    factory = WebSocketClientFactory(f"wss://127.0.0.1:{port}/")
    factory.protocol = RpcClientProtocol
    factory.setProtocolOptions(autoPingInterval=0)
    factory.opened = defer.Deferred()
    connectWS(factory, contextFactory=CertificateOptions())  # no verification: test cert
    return factory.opened


@pytest_twisted.inlineCallbacks
def test_tls_client_that_does_not_read_is_closed_1008(tls_server):
    site, port = tls_server
    ws = yield wss_connect(port)
    assert (yield ws.call(0, "get_chain_id")) == CHAIN_ID
    server_side = next(iter(site.ws_factory.connections))
    assert server_side.transport.getHost().port == port  # the TLS connection
    assert "transport" in vars(server_side.transport.transport)  # guard, TLS, TCP
    ws.transport.pauseProducing()  # stop reading: replies pile up at the server
    most = 0
    for _ in range(400):
        if not server_side._open:
            break
        most = max(most, server_side.unsent)
        for _ in range(20):
            ws.sendMessage(LATE_CALL, isBinary=False)
        yield task.deferLater(reactor, 0.01, lambda: None)
    assert not server_side._open
    assert most <= 64 * 1024 + 65 * 1024  # bounded: at most one result past the cap
    ws.transport.resumeProducing()
    code = yield ws.closed
    assert code == 1008
    late = ws.raw_replies[1:]  # after the get_chain_id reply
    assert late and all(answered_or_refused(r) for r in late)
    other = yield wss_connect(port)  # the node still serves TLS clients
    try:
        assert (yield other.call(0, "get_chain_id")) == CHAIN_ID
    finally:
        other.dropConnection()
