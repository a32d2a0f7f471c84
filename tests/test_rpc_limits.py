"""RPC transport limits and failure paths over real loopback sockets:
results that cannot be encoded (-32603 / HTTP 500, logged, connection still
usable), max_calls_in_flight, auto-ping of silent peers and the slow-reader
close (issue 4, wire-contract.md section 4)."""

import orjson
import pytest
import pytest_twisted
import treq
from autobahn.twisted.websocket import WebSocketClientFactory, connectWS
from twisted.internet import defer, reactor, task
from twisted.logger import globalLogPublisher

from nodeapi.api.base import api_function
from nodeapi.api.database import DatabaseApi
from nodeapi.api.registry import default_registry
from nodeapi.rpc.access import ApiAccess
from rpcserver import RunningSite, make_node
from test_chain_core import claim_op, produce, sign, transfer_op
from wsclient import RpcClientProtocol, ws_connect

CHAIN_ID = "569cba9a00ee6e807a62389ea67de7c6954835390be62371709ec804c6bfe1f2"
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
    events = []

    def observer(event):
        if "log_failure" in event:
            events.append(event)

    globalLogPublisher.addObserver(observer)
    yield events
    globalLogPublisher.removeObserver(observer)


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

@pytest.fixture
def small_buffer_server(chain):
    running = RunningSite(make_node(chain), ApiAccess.default(),
                          max_outgoing_buffer=64 * 1024)
    yield running
    running.stop_blocking()


@pytest_twisted.inlineCallbacks
def test_client_that_does_not_read_is_closed_1008(small_buffer_server):
    ws = yield ws_connect(small_buffer_server.port)
    ws.transport.pauseProducing()  # stop reading: replies pile up at the server
    server_side = next(iter(small_buffer_server.site.ws_factory.connections))
    request = orjson.dumps({"id": 1, "method": "get_global_properties", "params": []})
    for _ in range(400):
        if not server_side._open:
            break
        for _ in range(50):
            ws.sendMessage(request, isBinary=False)
        yield task.deferLater(reactor, 0.01, lambda: None)
    assert not server_side._open
    ws.transport.resumeProducing()
    code = yield ws.closed
    assert code == 1008
    assert ws.raw_replies and all(r.get("result") for r in ws.raw_replies)
    # the node still serves others
    other = yield ws_connect(small_buffer_server.port)
    try:
        assert (yield other.call(0, "get_chain_id")) == CHAIN_ID
    finally:
        other.dropConnection()
