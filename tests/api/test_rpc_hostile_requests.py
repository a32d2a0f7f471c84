"""Hostile request contents over real loopback sockets, both transports:
API set names that look like numbers to ``str.isdigit`` but are not ASCII
digits, arguments nested deeper than graphene parses, and duplicate
``Authorization`` headers (docs/rpc-access.rst, docs/wire-contract.rst
section 4)."""

import base64
import socket

import orjson
import pytest
import pytest_twisted
import treq
from twisted.internet import threads

from nodeapi.rpc.access import ApiAccess
from nodeapi.rpc.jsonrpc import MAX_PARAMS_DEPTH

from kit.rpc import ws_connect
from kit.site import RunningSite, log_events, make_node

CHAIN_ID = "569cba9a00ee6e807a62389ea67de7c6954835390be62371709ec804c6bfe1f2"
ACCESS_FILE = "etc/api-access.json"


@pytest.fixture
def failures():
    """Twisted log events carrying a failure (tracebacks), while the test runs."""
    with log_events(lambda event: "log_failure" in event) as events:
        yield events


@pytest.fixture
def server(chain):
    running = RunningSite(make_node(chain), ApiAccess.load(ACCESS_FILE))
    yield running
    running.stop_blocking()


def post(server, body, headers=None):
    return treq.post(server.url + "/rpc", data=orjson.dumps(body), headers=headers)


@pytest_twisted.inlineCallbacks
def reply_of(server, body, headers=None):
    resp = yield post(server, body, headers)
    content = yield resp.content()
    return resp.code, resp.headers.getRawHeaders(b"content-type"), orjson.loads(content)


# -- 3: a non-ASCII digit as API set -------------------------------------------

NOT_ASCII_DIGITS = ["\u00b2", "1\u2070", "\u0661", "9" * 5000]


@pytest_twisted.inlineCallbacks
def test_non_ascii_digit_api_set_is_an_unknown_set(server, failures):
    ws = yield ws_connect(server.port)
    try:
        for api in NOT_ASCII_DIGITS:
            expected = f"Unknown API set '{api}'"
            status, ctype, body = yield reply_of(
                server, {"id": 1, "method": "call", "params": [api, "get_chain_id", []]})
            assert (status, ctype) == (200, [b"application/json"])
            assert body["id"] == 1 and expected in body["error"]["message"]
            reply = yield ws.request(api, "get_chain_id")
            assert expected in reply["error"]["message"]
        # the connection survived every one of them
        assert (yield ws.call(0, "get_chain_id")) == CHAIN_ID
    finally:
        ws.dropConnection()
    assert failures == []


@pytest_twisted.inlineCallbacks
def test_ascii_digit_strings_still_name_set_ids(server):
    status, _, body = yield reply_of(
        server, {"id": 2, "method": "call", "params": ["0", "get_chain_id", []]})
    assert (status, body["result"]) == (200, CHAIN_ID)


# -- 4: deep arguments ---------------------------------------------------------

def nested(depth):
    """JSON text of ``"1.2.0"`` inside ``depth`` arrays (orjson refuses to
    write more than 255 levels, so the text is built by hand)."""
    return "[" * depth + '"1.2.0"' + "]" * depth


DEEP_CALLS = [("get_objects", "[{deep}]"), ("get_accounts", "[{deep}]"),
              ("lookup_vote_ids", "[{deep}]"), ("get_full_accounts", "[{deep}, false]"),
              ("get_key_references", "[{deep}]")]
TOO_DEEP = {"code": -32602,
            "message": f"Invalid params: nested deeper than {MAX_PARAMS_DEPTH} levels"}


def raw_call(request_id, function, params):
    return ('{"jsonrpc": "2.0", "id": %d, "method": "call", "params": [0, "%s", %s]}'
            % (request_id, function, params)).encode()


@pytest_twisted.inlineCallbacks
def raw_reply(server, raw):
    resp = yield treq.post(server.url + "/rpc", data=raw)
    content = yield resp.content()
    return resp.code, orjson.loads(content)


@pytest_twisted.inlineCallbacks
def test_deep_arguments_are_invalid_params(server, failures):
    ws = yield ws_connect(server.port)
    try:
        for function, params in DEEP_CALLS:
            raw = raw_call(3, function, params.format(deep=nested(1000)))
            status, body = yield raw_reply(server, raw)
            assert (status, body) == (400, {"id": None, "jsonrpc": "2.0", "error": TOO_DEEP})
            ws.sendMessage(raw, isBinary=False)
            reply = yield ws.call(0, "get_chain_id")  # the error arrived first
            assert reply == CHAIN_ID
            assert ws.raw_replies[-2] == {"id": None, "jsonrpc": "2.0", "error": TOO_DEEP}
    finally:
        ws.dropConnection()
    assert failures == []


@pytest_twisted.inlineCallbacks
def test_arguments_at_the_depth_limit_reach_the_function(server, failures):
    # the argument list is the first level, the argument the second
    raw = raw_call(4, "get_objects", "[%s]" % nested(MAX_PARAMS_DEPTH - 1))
    status, body = yield raw_reply(server, raw)
    assert status == 200 and body["id"] == 4
    assert body["error"]["message"].startswith("Execution error:")
    raw = raw_call(4, "get_objects", "[%s]" % nested(MAX_PARAMS_DEPTH))
    status, body = yield raw_reply(server, raw)
    assert (status, body["error"]) == (400, TOO_DEEP)
    assert failures == []


# -- 5: duplicate Authorization headers ----------------------------------------

def basic(user, password):
    return b"Basic " + base64.b64encode(f"{user}:{password}".encode())


GOOD = basic("bytemaster", "supersecret")
BAD = basic("bytemaster", "wrong")
NETWORK_NODE_CALL = {"jsonrpc": "2.0", "id": 5, "method": "call",
                     "params": ["network_node", "get_info", []]}


@pytest_twisted.inlineCallbacks
def test_duplicate_authorization_refused_over_http(server):
    # one good header is granted (the control) ...
    status, _, body = yield reply_of(server, NETWORK_NODE_CALL,
                                     headers={b"authorization": [GOOD]})
    assert status == 200 and "result" in body
    # ... a bad one followed by a good one is refused, in either order
    for pair in ([BAD, GOOD], [GOOD, BAD], [GOOD, GOOD]):
        status, ctype, body = yield reply_of(server, NETWORK_NODE_CALL,
                                             headers={b"authorization": pair})
        assert (status, ctype) == (400, [b"application/json"])
        assert body == {"id": None, "jsonrpc": "2.0", "error": {
            "code": -32600, "message": "More than one Authorization header"}}


def upgrade_with(port, authorizations):
    """Send a WebSocket upgrade with these Authorization values; the status
    line and the body of the answer."""
    head = (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            b"Sec-WebSocket-Version: 13\r\n")
    for value in authorizations:
        head += b"Authorization: " + value + b"\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + b"\r\n")
        data = b""
        while True:
            more = sock.recv(65536)
            if not more:
                break
            data += more
            if b"\r\n\r\n" in data and (b" 101 " in data.split(b"\r\n")[0]
                                        or data.endswith(b"}")):
                break
    status_line = data.split(b"\r\n")[0]
    return status_line, data.partition(b"\r\n\r\n")[2]


@pytest_twisted.inlineCallbacks
def test_duplicate_authorization_refused_over_websocket(server):
    status_line, _ = yield threads.deferToThread(upgrade_with, server.port, [GOOD])
    assert b" 101 " in status_line
    for pair in ([BAD, GOOD], [GOOD, GOOD]):
        status_line, body = yield threads.deferToThread(upgrade_with, server.port, pair)
        assert status_line.startswith(b"HTTP/1.1 400")
        assert orjson.loads(body)["error"]["message"] == "More than one Authorization header"
