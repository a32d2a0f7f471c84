"""Fuzzing the RPC site over real loopback sockets ("How we will
know": at least 2,000 random and malformed requests over HTTP and WebSocket,
every one answered with a JSON-RPC error or result, the server never crashes).

The site runs in the test reactor (pytest-twisted's greenlet); Hypothesis
drives blocking clients (``requests`` for HTTP, ``websocket-client`` for
WebSocket) from a worker thread started with ``threads.deferToThread`` and
yielded from the ``pytest_twisted.inlineCallbacks`` test, so the reactor
keeps serving while the worker thread blocks.

Each generated body is sent both as an HTTP ``POST /rpc`` and as one
WebSocket message (a binary frame when it is not UTF-8: text frames must be
valid UTF-8 by RFC 6455).  The reply is checked against an independent model
of docs/wire-contract.rst sections 3 and 4 (tests/rpcmodel.py): validation errors
with ``"id": null`` and their exact code/message/HTTP status, otherwise the
request id echoed, ``jsonrpc`` echoed only when sent, key order ``id,
[jsonrpc,] result|error``, no reply (HTTP 204) for requests without an id.
"""

import base64
import json

import orjson
import pytest
import pytest_twisted
import requests
import websocket
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from twisted.internet import threads

from nodeapi.api.registry import default_registry
from nodeapi.rpc.login import ACCESSORS

from kit.keys import CHAIN_ID
from kit.rpcmodel import check_reply


EXAMPLES = 1100  # each example is one HTTP request and one WebSocket message
REGISTRY = default_registry()
LOGIN_FUNCTIONS = ["login", "logout", "get_info", "get_config", "get_available_api_sets",
                   "dummy", "is_database_api_allowed", *ACCESSORS]
FUNCTIONS = sorted({f for cls in REGISTRY.values() for f in cls.function_names()}
                   | set(LOGIN_FUNCTIONS))
API_NAMES = sorted(REGISTRY) + [n + "_api" for n in REGISTRY]


# -- strategies --------------------------------------------------------------

huge_ints = st.integers(min_value=2 ** 63 - 2, max_value=2 ** 64 + 2) | st.integers(
    min_value=-(2 ** 70), max_value=2 ** 70) | st.sampled_from([2 ** 200, -(2 ** 100)])
scalars = (st.none() | st.booleans() | st.integers(-(2 ** 31), 2 ** 31) | huge_ints
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20)
           | st.sampled_from(["1.2.6", "1.3.0", "2.1.0", "1.11.0", "init0", "TEST", "", "0",
                              "-1", "1.2.99999999999", "9.9.9", "1.2.x", CHAIN_ID]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                      max_leaves=12)
ids = (st.integers(-(2 ** 31), 2 ** 31) | huge_ints | st.text(max_size=10) | st.none()
       | st.booleans() | st.floats(allow_nan=False) | st.lists(st.integers(), max_size=2)
       | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
function_names = st.sampled_from(FUNCTIONS) | st.text(max_size=12)
apis = (st.integers(-2, 12) | huge_ints | st.sampled_from(API_NAMES)
        | st.sampled_from(["0", "1", "2", "01", " 1", "-1"]) | st.text(max_size=8) | values)
args = st.lists(values, max_size=5)


@st.composite
def envelopes(draw):
    """A request object: mostly well formed, sometimes with a key missing,
    of the wrong type, or extra."""
    doc = {}
    if draw(st.integers(0, 9)):
        doc["id"] = draw(ids)
    if draw(st.booleans()):
        doc["jsonrpc"] = draw(st.sampled_from(["2.0", "2.0", "1.0", 2.0, None]) | values)
    form = draw(st.integers(0, 9))
    if form <= 5:
        doc["method"] = "call"
        params = [draw(apis), draw(function_names), draw(args)]
        if form == 5:  # wrong length, wrong third element
            params = draw(st.sampled_from([params[:2], params + [1], params[:2] + [{}],
                                           params[:2] + ["x"], []]))
        doc["params"] = params
    elif form <= 8:
        doc["method"] = draw(function_names)
        doc["params"] = draw(args | st.just([]))
        if form == 8:
            doc.pop("params")
    else:
        doc["method"] = draw(values)
        doc["params"] = draw(values)
    if draw(st.integers(0, 9)) == 0:
        doc[draw(st.text(max_size=6))] = draw(values)
    items = list(doc.items())
    if draw(st.booleans()):
        items = draw(st.permutations(items))
    return dict(items)


SET_FUNCTIONS = [(name, f) for name, cls in sorted(REGISTRY.items())
                 for f in cls.function_names()] + [(1, f) for f in LOGIN_FUNCTIONS]
plausible_values = st.recursive(
    st.sampled_from(["1.2.6", "1.2.7", "1.2.0", "1.3.0", "2.1.0", "2.0.0", "1.11.0", "1.6.1",
                     "init0", "init1", "nathan", "TEST", "1.2.6000", "2.9.0", ""])
    | st.integers(-1, 200) | st.booleans() | st.none(),
    lambda inner: st.lists(inner, max_size=3), max_leaves=6)


@st.composite
def plausible_calls(draw):
    """A well-formed call of a function the node has, on its set (by name or
    by id 0/1), with arguments that look like what it takes (or not)."""
    api, function = draw(st.sampled_from(SET_FUNCTIONS))
    if api == "database" and draw(st.booleans()):
        api = 0
    doc = {"id": draw(st.integers(0, 2 ** 40) | st.text(max_size=6))}
    if draw(st.booleans()):
        doc["jsonrpc"] = "2.0"
    doc["method"] = "call"
    doc["params"] = [api, function, draw(st.lists(plausible_values, max_size=4))]
    return doc


def encode(doc, ascii_only: bool) -> bytes:
    """JSON text of ``doc`` as Python writes it (arbitrary-size integers;
    NaN/Infinity tokens for non-finite floats, which are not JSON)."""
    return json.dumps(doc, ensure_ascii=ascii_only).encode("utf-8")


@st.composite
def broken_json(draw):
    """A JSON text cut, spliced or with garbage inserted."""
    text = encode(draw(envelopes() | values), True)
    i = draw(st.integers(0, len(text)))
    how = draw(st.integers(0, 3))
    if how == 0:
        return text[:i]
    if how == 1:
        return text[:i] + draw(st.binary(min_size=1, max_size=4)) + text[i:]
    if how == 2:
        return text[:i] + draw(st.sampled_from([b"{", b"}", b"[", b"]", b",", b":", b'"', b"\\",
                                                b"\\ud800", b"\x00", b"NaN", b"-", b"1e999"]))
    return text.replace(b'"', b"'", 1)


bodies = st.one_of(
    st.binary(max_size=120),
    st.text(alphabet='{}[]",:0123456789.eE-+ tuefalsn\\\t\n', max_size=60).map(str.encode),
    broken_json(),
    st.builds(encode, values, st.booleans()),
    st.builds(encode, envelopes(), st.booleans()),
    st.builds(encode, plausible_calls(), st.booleans()),
    st.builds(encode, plausible_calls(), st.booleans()),
    st.builds(encode, plausible_calls(), st.booleans()),
)


# -- clients -----------------------------------------------------------------

class Clients:
    """The blocking HTTP session and WebSocket used by the worker thread."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/rpc"
        self.http = requests.Session()
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}/", timeout=10)
        self.sentinels = 0
        self.notices = 0
        self.sent = 0
        self.outcomes = {}
        self.internal = []

    def post(self, raw: bytes, headers=None):
        resp = self.http.post(self.url, data=raw, headers=headers, timeout=10)
        self.sent += 1
        if resp.status_code == 204:
            assert resp.content == b""
            return None, 204
        assert resp.headers["content-type"] == "application/json"
        return orjson.loads(resp.content), resp.status_code

    def ws_send(self, raw: bytes):
        """Send ``raw``, then a sentinel call; return the replies that came
        before the sentinel's (notices skipped)."""
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            self.ws.send_binary(raw)
        else:
            self.ws.send(raw, opcode=websocket.ABNF.OPCODE_TEXT)
        self.sent += 1
        self.sentinels += 1
        sentinel = f"\x00sentinel-{self.sentinels}"
        self.ws.send(json.dumps({"id": sentinel, "method": "get_chain_id", "params": []}))
        replies = []
        while True:
            msg = orjson.loads(self.ws.recv())
            if msg.get("method") == "notice" and "id" not in msg:
                self.notices += 1
                continue
            if msg.get("id") == sentinel:
                assert msg["result"] == CHAIN_ID
                return replies
            replies.append(msg)

    def close(self):
        self.ws.close()
        self.http.close()


def malformed_basic(header) -> bool:
    """A Basic Authorization value that is not base64 of UTF-8 user:password
    (the node refuses it with 400, wire-contract s1 / graphene FC_ASSERT)."""
    scheme, _, value = (header or "").strip().partition(" ")
    if scheme.lower() != "basic":
        return False
    try:
        return ":" not in base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
        return True


def fuzz_settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


authorization = st.none() | st.sampled_from([
    "Basic", "Basic !!!", "Basic Og==", "Bearer x", "Basic dXNlcg==", "basic Ojo="]) | st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30).map(
        str.strip)  # requests refuses header values with leading or trailing spaces
http_methods = st.sampled_from(["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "POST", "BREW"])
paths = st.sampled_from(["/", "/rpc", "/rpc/", "/ws", "/x", "/rpc/x", "//", "/%00", "/?a=1"]) | \
    st.text(alphabet="abc/%?#.", max_size=12).map(lambda p: "/" + p)


def fuzz_bodies(port: int) -> dict:
    """Run the Hypothesis search in this (worker) thread; returns counts."""
    clients = Clients(port)

    @fuzz_settings(EXAMPLES)
    @given(bodies, st.none() | st.none() | st.none() | authorization)
    @example(b'{"id": 18446744073709551616, "method": "get_chain_id", "params": []}', None)
    @example(b'{"id": 18446744073709551615, "method": "get_chain_id", "params": []}', None)
    @example(b'{"id": null, "jsonrpc": "2.0", "method": "get_chain_id"}', None)
    @example(b'{"id": null, "method": "get_chain_id"}', None)
    @example(b'{"method": "call", "params": [1, "login", ["", ""]]}', None)
    @example(b'{"id": 1, "method": "call", "params": [0, "get_objects", [[1e999]]]}', None)
    @example(b'{"id": 1, "method": "call", "params": [0, "get_block", [18446744073709551615]]}',
             None)
    @example(b'{"id": 2, "method": "call", "params": ["database", "lookup_accounts", '
             b'["", 99999999999999999999999]]}', None)
    @example(b'{"id": 3, "method": "call", "params": [0, "get_objects", [["1.2.6"]]]}',
             "Basic !!!")
    @example(b"\xff\xfe\x00", None)
    @example(b"[" * 3000, None)
    @example(b'"\\ud800"', None)
    def one(raw, auth):
        reply, status = clients.post(raw, {"Authorization": auth} if auth else None)
        if malformed_basic(auth):  # refused before the body is looked at
            assert (status, reply) == (400, {"id": None, "jsonrpc": "2.0", "error": {
                "code": -32600, "message": "Malformed Authorization header: expected "
                                           "Basic base64(user:password)"}}), auth
            tag = "malformed authorization"
        else:
            tag = check_reply(raw, reply, status)
        clients.outcomes[tag] = clients.outcomes.get(tag, 0) + 1
        if tag == "error -32603":
            clients.internal.append(raw)
        replies = clients.ws_send(raw)
        assert len(replies) <= 1, f"several replies to one message: {replies}"
        check_reply(raw, replies[0] if replies else None)

    @fuzz_settings(150)
    @given(http_methods, paths, st.binary(max_size=40))
    def other(method, path, body):
        resp = clients.http.request(method, f"http://127.0.0.1:{port}{path}", data=body,
                                    timeout=10)
        clients.sent += 1
        if method == "POST" and resp.status_code != 404:
            check_reply(body, resp.json() if resp.content else None, resp.status_code)
            return
        assert resp.status_code in (404, 405), (method, path)
        assert resp.headers["content-type"] == "application/json"
        assert resp.json()["error"]["code"] in (-32600, -32601)

    try:
        one()
        other()
    finally:
        clients.close()
    return {"sent": clients.sent, "outcomes": clients.outcomes, "internal": clients.internal}


def _normal_calls(port: int):
    resp = requests.post(f"http://127.0.0.1:{port}/rpc", timeout=10, json={
        "jsonrpc": "2.0", "id": 1, "method": "call",
        "params": ["database", "get_dynamic_global_properties", []]})
    assert resp.status_code == 200 and resp.json()["result"]["id"] == "2.1.0"
    ws = websocket.create_connection(f"ws://127.0.0.1:{port}/", timeout=10)
    try:
        ws.send(json.dumps({"id": 5, "method": "call", "params": [0, "get_chain_id", []]}))
        assert json.loads(ws.recv()) == {"id": 5, "result": CHAIN_ID}
    finally:
        ws.close()


@pytest_twisted.inlineCallbacks
def test_fuzz_http_and_websocket(site):
    stats = yield threads.deferToThread(fuzz_bodies, site.port)
    print(f"fuzz: {stats['sent']} requests, outcomes {stats['outcomes']}")
    assert stats["sent"] >= 2000
    assert stats["outcomes"].get("invalid", 0) > 100
    assert stats["outcomes"].get("result", 0) > 10
    assert sum(v for k, v in stats["outcomes"].items() if k.startswith("error")) > 100
    # bad arguments are the caller's fault (code 10), never an internal error
    assert stats["internal"] == []
    yield threads.deferToThread(_normal_calls, site.port)


def test_reference_model_rejects_wrong_answers():
    """The checker itself: right answers pass, wrong ones are caught."""
    ok = {"id": 7, "result": CHAIN_ID}
    raw = b'{"id": 7, "method": "get_chain_id", "params": []}'
    assert check_reply(raw, ok, 200) == "result"
    for bad in ({"id": "7", "result": 1}, {"id": 7, "jsonrpc": "2.0", "result": 1},
                {"result": 1, "id": 7}, None,
                {"id": None, "jsonrpc": "2.0", "error": {"code": -32600,
                                                        "message": "Invalid id"}}):
        with pytest.raises(AssertionError):
            check_reply(raw, bad, 200)
    with pytest.raises(AssertionError):  # right body, wrong status
        check_reply(raw, ok, 500)
    invalid = {"id": None, "jsonrpc": "2.0", "error": {"code": -32700,
                                                      "message": "Invalid JSON message"}}
    assert check_reply(b"{", invalid, 400) == "invalid"
    with pytest.raises(AssertionError):
        check_reply(b"[]", invalid, 400)
    # fc's parser refuses an integer beyond 64 bits: the whole message is -32700
    big = b'{"id": 18446744073709551616, "method": "get_chain_id"}'
    assert check_reply(big, invalid, 400) == "invalid"
    with pytest.raises(AssertionError):
        check_reply(big, {"id": 2 ** 64, "result": CHAIN_ID}, 200)
    with pytest.raises(AssertionError):
        check_reply(big, {"id": None, "error": {"code": -32600, "message": "Invalid id"}}, 400)
    assert check_reply(b'{"method": "get_chain_id"}', None, 204) == "no-reply"
    with pytest.raises(AssertionError):  # a traceback leaked to the client
        check_reply(raw, {"id": 7, "error": {"code": 10, "message":
                                             'Execution error: File "x.py", line 1'}}, 200)
