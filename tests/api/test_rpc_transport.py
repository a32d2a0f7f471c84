"""The RPC access layer over real loopback sockets: transport forms 1-5,
the login state table, api-access over WebSocket and HTTP, the error table of
docs/wire-contract.rst section 4, and the limits."""

import base64

import orjson
import pytest
import pytest_twisted
import treq
from twisted.internet import defer

from nodeapi.rpc.access import ApiAccess, hash_password

from kit.access import VECTORS
from kit.keys import CHAIN_ID
from kit.rpc import ws_connect
from kit.site import RunningSite, make_node


ACCESS_DENIED = "Execution error: Assert Exception: is_allowed: Access denied"


@pytest.fixture
def server(chain):
    running = RunningSite(make_node(chain, api_node_info="test node"),
                          ApiAccess.from_json(VECTORS), max_message_size=64 * 1024,
                          max_calls_in_flight=4)
    yield running
    running.stop_blocking()


@pytest.fixture
def open_server(chain):
    running = RunningSite(make_node(chain), ApiAccess.default())
    yield running
    running.stop_blocking()


def basic(user, password):
    return {b"Authorization": [b"Basic " + base64.b64encode(f"{user}:{password}".encode())]}


@defer.inlineCallbacks
def post(server, body, path="/rpc", headers=None):
    data = body if isinstance(body, bytes) else orjson.dumps(body)
    resp = yield treq.post(server.url + path, data=data, headers=headers)
    content = yield resp.content()
    return resp.code, (orjson.loads(content) if content else None), resp.headers


# -- transport forms ---------------------------------------------------------

@pytest_twisted.inlineCallbacks
def test_form1_websocket_call_and_ids(server):
    ws = yield ws_connect(server.port)
    try:
        reply = yield ws.request(0, "get_chain_id")
        assert reply == {"id": reply["id"], "result": CHAIN_ID}  # no jsonrpc echoed
        assert list(reply) == ["id", "result"]
        reply = yield ws.request(0, "get_chain_id", jsonrpc=True)
        assert list(reply) == ["id", "jsonrpc", "result"]
        assert (yield ws.call(1, "login", "", "")) is True
        assert (yield ws.call(1, "history")) == 2
        assert (yield ws.call(1, "network_broadcast")) == 3
        assert (yield ws.call(1, "history")) == 2  # same id again
        assert (yield ws.call(1, "database")) == 0
        props = yield ws.call(0, "get_dynamic_global_properties")
        assert props["id"] == "2.1.0"
    finally:
        ws.dropConnection()


@pytest_twisted.inlineCallbacks
def test_http_forms_2_3_4(server):
    code, body, headers = yield post(server, {"jsonrpc": "2.0", "id": 7, "method": "call",
                                              "params": [0, "get_chain_id", []]})
    assert (code, body) == (200, {"id": 7, "jsonrpc": "2.0", "result": CHAIN_ID})
    assert headers.getRawHeaders(b"content-type") == [b"application/json"]
    code, body, _ = yield post(server, {"jsonrpc": "2.0", "id": 8, "method": "get_chain_id",
                                        "params": []})
    assert (code, body["result"]) == (200, CHAIN_ID)
    code, body, _ = yield post(server, {"jsonrpc": "2.0", "id": 9, "method": "call",
                                        "params": ["history", "get_account_history",
                                                   ["1.2.6", "1.11.0", 10, "1.11.0"]]})
    assert (code, body) == (200, {"id": 9, "jsonrpc": "2.0", "result": []})
    # python-bitshares posts to "/"
    code, body, _ = yield post(server, {"jsonrpc": "2.0", "id": 1, "method": "get_chain_id",
                                        "params": []}, path="/")
    assert body["result"] == CHAIN_ID


@pytest_twisted.inlineCallbacks
def test_http_network_node_needs_basic_credentials(server):
    call = {"jsonrpc": "2.0", "id": 1, "method": "call", "params": ["network_node", "get_info",
                                                                     []]}
    code, body, _ = yield post(server, call)
    assert code == 200
    assert body["error"]["code"] == 10
    assert body["error"]["message"] == ACCESS_DENIED
    code, body, _ = yield post(server, call, headers=basic("bytemaster", "wrong"))
    assert body["error"]["message"] == ACCESS_DENIED
    code, body, _ = yield post(server, call, headers=basic("bytemaster", "supersecret"))
    assert code == 200 and "error" not in body
    assert body["result"]["connection_count"] == 0
    # numeric ids other than 0 and 1 mean nothing over HTTP
    code, body, _ = yield post(server, {"jsonrpc": "2.0", "id": 2, "method": "call",
                                        "params": [2, "get_info", []]},
                               headers=basic("bytemaster", "supersecret"))
    assert "No API set with id 2" in body["error"]["message"]


@pytest_twisted.inlineCallbacks
def test_form5_websocket_basic_credentials_log_in_at_connect(server):
    ws = yield ws_connect(server.port, "bytemaster", "supersecret")
    try:
        assert "network_node_api" in (yield ws.call(1, "get_available_api_sets"))
        info = yield ws.call("network_node", "get_info")
        assert info["connection_count"] == 0
    finally:
        ws.dropConnection()
    ws = yield ws_connect(server.port, "bytemaster", "bad")
    try:
        assert (yield ws.call(1, "get_available_api_sets")) == []
        assert (yield ws.call(0, "dummy")) is False  # id 0 is the dummy API
    finally:
        ws.dropConnection()


MALFORMED_HEADERS = [
    b"Basic !!!not-base64!!!",                      # not base64
    b"Basic " + base64.b64encode(b"no-colon"),     # no user:password separator
    b"Basic " + base64.b64encode(b"\xff\xfe:x"),   # not UTF-8
    b"Basic",                                       # no value at all
]


@pytest_twisted.inlineCallbacks
def test_malformed_basic_header_is_refused_over_http(server):
    """A broken Basic header never becomes an anonymous login (graphene
    FC_ASSERTs on it): 400 with a JSON-RPC error, whatever the body."""
    call = {"jsonrpc": "2.0", "id": 1, "method": "get_chain_id", "params": []}
    for value in MALFORMED_HEADERS:
        code, body, headers = yield post(server, call, headers={b"Authorization": [value]})
        assert (code, body) == (400, {"id": None, "jsonrpc": "2.0", "error": {
            "code": -32600, "message": "Malformed Authorization header: expected Basic "
                                       "base64(user:password)"}}), value
        assert headers.getRawHeaders(b"content-type") == [b"application/json"]
    # other schemes are not credentials: anonymous, as without a header
    code, body, _ = yield post(server, call, headers={b"Authorization": [b"Bearer abc"]})
    assert (code, body["result"]) == (200, CHAIN_ID)
    # a password may contain ":" (the user name ends at the first one)
    code, body, _ = yield post(server, call, headers=basic("stranger", "a:b"))
    assert (code, body["result"]) == (200, CHAIN_ID)


@pytest_twisted.inlineCallbacks
def test_malformed_basic_header_refuses_the_websocket_upgrade(server):
    from autobahn.twisted.websocket import WebSocketClientFactory, connectWS
    from kit.rpc import RpcClientProtocol

    for value in MALFORMED_HEADERS:
        factory = WebSocketClientFactory(f"ws://127.0.0.1:{server.port}/",
                                         headers={"Authorization": value.decode("latin-1")})
        factory.protocol = RpcClientProtocol
        factory.opened = defer.Deferred()
        connectWS(factory)
        with pytest.raises(ConnectionError, match="refused.*400"):
            yield factory.opened
    ws = yield ws_connect(server.port, "bytemaster", "supersecret")  # good ones still work
    try:
        assert "network_node_api" in (yield ws.call(1, "get_available_api_sets"))
    finally:
        ws.dropConnection()


# -- login state table -------------------------------------------------------

@pytest_twisted.inlineCallbacks
def test_login_state_table(server):
    ws = yield ws_connect(server.port)
    star = ["database_api", "history_api", "network_broadcast_api"]
    try:
        assert (yield ws.call(1, "get_available_api_sets")) == star  # before login: login("","")
        assert (yield ws.call(1, "login")) == 1
        assert (yield ws.call(1, "login", None, None)) == 1
        with pytest.raises(RuntimeError, match="Must provide both user and password"):
            yield ws.call(1, "login", "bytemaster")
        assert (yield ws.call(1, "login", "bytemaster", "supersecret")) is True
        assert (yield ws.call(1, "get_available_api_sets")) == [
            "block_api", "database_api", "history_api", "network_broadcast_api",
            "network_node_api"]
        node_id = yield ws.call(1, "network_node")
        assert node_id == 2
        assert (yield ws.call(node_id, "get_info"))["connection_count"] == 0
        assert (yield ws.call(1, "logout")) is False
        assert (yield ws.call(1, "get_available_api_sets")) == []
        # ids stay callable after logout
        assert (yield ws.call(node_id, "get_info"))["connection_count"] == 0
        with pytest.raises(RuntimeError, match="Access denied, please login"):
            yield ws.call(1, "get_config")
        with pytest.raises(RuntimeError) as info:
            yield ws.call(1, "network_node")
        assert info.value.args[0]["message"] == ACCESS_DENIED
        # wrong password: false, logged out, ids kept
        assert (yield ws.call(1, "login", "user2", "superpassword2")) is True
        assert (yield ws.call(1, "get_available_api_sets")) == ["database_api", "history_api"]
        assert (yield ws.call(1, "login", "user2", "nope")) is False
        assert (yield ws.call(1, "get_available_api_sets")) == []
        assert (yield ws.call(node_id, "get_info"))["connection_count"] == 0
        # unknown user falls to "*"
        assert (yield ws.call(1, "login", "stranger", "x")) is True
        assert (yield ws.call(1, "get_available_api_sets")) == star
        config = yield ws.call(1, "get_config")
        assert config["api_limit_get_account_history"] == 100
        assert (yield ws.call(1, "get_info")) == "test node"
    finally:
        ws.dropConnection()


@pytest_twisted.inlineCallbacks
def test_not_reflected_and_unknown_methods(server):
    ws = yield ws_connect(server.port)
    try:
        for name in ("dummy", "is_database_api_allowed", "no_such_function"):
            reply = yield ws.request(1, name)
            assert reply["error"]["code"] == -32601
            assert reply["error"]["message"] == "Method not found"
            assert reply["error"]["data"] == f"No method with name '{name}'"
        reply = yield ws.request(99, "get_info")
        assert reply["error"]["code"] == 10
        reply = yield ws.request("nonsense", "get_info")
        assert "Unknown API set 'nonsense'" in reply["error"]["message"]
    finally:
        ws.dropConnection()


@pytest_twisted.inlineCallbacks
def test_default_access_without_file(open_server):
    ws = yield ws_connect(open_server.port)
    try:
        assert (yield ws.call(1, "get_available_api_sets")) == [
            "custom_operations_api", "database_api", "history_api", "network_broadcast_api",
            "orders_api"]
        for restricted in ("network_node", "block", "asset", "crypto", "debug"):
            reply = yield ws.request(1, restricted)
            assert reply["error"]["message"] == ACCESS_DENIED
        assert (yield ws.call(1, "orders")) == 2
        reply = yield ws.request(2, "get_grouped_limit_orders_nonexistent")
        assert reply["error"]["code"] == -32601
    finally:
        ws.dropConnection()


# -- errors (docs/wire-contract.rst section 4) -------------------------------------

ERROR_ROWS = [
    (b"{nope", 400, -32700, "Invalid JSON message"),
    (b"[]", 400, -32600, "Batch requests not supported"),
    (b'"text"', 400, -32600, "Invalid JSON request"),
    (b'{"id": 1.5, "method": "get_chain_id", "params": []}', 400, -32600, "Invalid id"),
    (b'{"id": true, "method": "get_chain_id", "params": []}', 400, -32600, "Invalid id"),
    (b'{"id": 1, "params": []}', 400, -32600, "Missing or invalid method"),
    (b'{"id": 1, "method": 5, "params": []}', 400, -32600, "Missing or invalid method"),
    (b'{"id": 1, "jsonrpc": "1.0", "method": "get_chain_id"}', 400, -32600,
     "Unsupported JSON-RPC version"),
    (b'{"id": 1, "method": "get_chain_id", "params": "x"}', 400, -32600, "Invalid parameters"),
    (b'{"id": 1, "method": "call", "params": [0, "get_chain_id"]}', 400, -32600,
     "Invalid parameters"),
    (b'{"id": 1, "method": "get_chain_id", "params": {"a": 1}}', 400, -32602,
     "Named parameters not supported"),
    (b'{"id": 1, "method": "no_such", "params": []}', 400, -32601, "Method not found"),
    (b'{"id": 1, "method": "get_objects", "params": [["1.2.x"]]}', 200, 10, None),
    (b'{"id": 1, "method": "get_block", "params": []}', 200, 10, None),
]


@pytest_twisted.inlineCallbacks
def test_error_table_http_and_websocket(server):
    ws = yield ws_connect(server.port)
    try:
        for raw, status, code, message in ERROR_ROWS:
            got_status, body, headers = yield post(server, raw)
            assert (got_status, body["error"]["code"]) == (status, code), raw
            if message:
                assert body["error"]["message"] == message, raw
            else:
                assert body["error"]["message"].startswith("Execution error: "), raw
                assert "Traceback" not in body["error"]["message"]
            if status == 400 and code != -32601:
                assert body["id"] is None
            assert headers.getRawHeaders(b"content-type") == [b"application/json"]
            rid = orjson.loads(raw)["id"] if status == 200 or code == -32601 else None
            reply = yield ws.send_raw(raw, rid if rid is not None else None) \
                if rid is not None else _next_raw(ws, raw)
            assert reply["error"]["code"] == code, raw
    finally:
        ws.dropConnection()


def _next_raw(ws, raw):
    """Send ``raw`` and wait for the reply with id null (validation errors)."""
    d = defer.Deferred()
    ws._waiting[None] = d
    ws.sendMessage(raw, isBinary=False)
    return d


@pytest_twisted.inlineCallbacks
def test_http_paths_methods_and_notifications(server):
    resp = yield treq.get(server.url + "/rpc")
    body = orjson.loads((yield resp.content()))
    assert resp.code == 405 and body["error"]["code"] == -32600
    resp = yield treq.post(server.url + "/elsewhere", data=b"{}")
    body = orjson.loads((yield resp.content()))
    assert resp.code == 404 and "POST /rpc" in body["error"]["message"]
    # no id: 204 and no body
    resp = yield treq.post(server.url + "/rpc", data=b'{"method": "get_chain_id", "params": []}')
    assert resp.code == 204 and (yield resp.content()) == b""
    # too large
    resp = yield treq.post(server.url + "/rpc", data=b" " * (65 * 1024))
    assert resp.code == 413


@pytest_twisted.inlineCallbacks
def test_websocket_message_too_big_closes_cleanly(server):
    ws = yield ws_connect(server.port)
    ws.sendMessage(b'{"id": 1, "method": "get_chain_id", "params": ["' + b"x" * 70000 + b'"]}')
    code = yield ws.closed
    assert code == 1009
    ws = yield ws_connect(server.port)  # the server still serves
    try:
        assert (yield ws.call(0, "get_chain_id")) == CHAIN_ID
    finally:
        ws.dropConnection()


@pytest_twisted.inlineCallbacks
def test_numbers_outside_int32_are_strings(server):
    ws = yield ws_connect(server.port)
    try:
        asset = (yield ws.call(0, "get_assets", ["1.3.0"]))[0]
        assert isinstance(asset["options"]["max_supply"], str)
        assert int(asset["options"]["max_supply"]) > 2 ** 31
    finally:
        ws.dropConnection()


def test_wire_numbers_follow_the_field_type():
    """64-bit values beyond int32 become strings; uint32 fields such as the
    TaPoS ``ref_block_prefix`` stay numbers up to 2^32-1 (fc writes them so)."""
    from nodeapi.rpc.jsonrpc import to_wire

    trx = {"ref_block_num": 7, "ref_block_prefix": 4000000000, "operations": [
        [0, {"amount": {"amount": 4000000000, "asset_id": "1.3.0"}, "memo": {"nonce": 2 ** 63}}]]}
    assert to_wire(trx) == {"ref_block_num": 7, "ref_block_prefix": 4000000000, "operations": [
        [0, {"amount": {"amount": "4000000000", "asset_id": "1.3.0"},
             "memo": {"nonce": "9223372036854775808"}}]]}
    assert to_wire({"block_num": 2 ** 31}) == {"block_num": 2 ** 31}
    assert to_wire({"block_num": 2 ** 32}) == {"block_num": "4294967296"}
    assert to_wire([-2 ** 31, 2 ** 31 - 1, 2 ** 31, 1.5]) == [-2 ** 31, 2 ** 31 - 1, "2147483648",
                                                              "1.5"]
    # fc json.cpp to_stream: a uint64_t (votes, a fee parameter) is a number
    # up to 0xffffffff, a share_type (int64_t) only up to INT32_MAX
    witness = {"total_votes": 3000000000, "last_aslot": 2 ** 32, "total_missed": 3000000000}
    assert to_wire(witness) == {"total_votes": 3000000000, "last_aslot": "4294967296",
                                "total_missed": "3000000000"}
    assert to_wire([0, {"fee": 3000000000, "price_per_kbyte": 10}]) == [
        0, {"fee": 3000000000, "price_per_kbyte": 10}]
    assert to_wire({"options": {"max_market_fee": 3000000000, "max_supply": 1000000}}) == {
        "options": {"max_market_fee": "3000000000", "max_supply": 1000000}}


@pytest_twisted.inlineCallbacks
def test_login_converts_numbers_to_text_like_graphene(chain):
    """graphene's login takes optional<string>: fc turns 12345 into "12345"."""
    salt = b"\x01\x02\x03\x04\x05\x06\x07\x08"
    doc = {"permission_map": [
        ["12345", {"password_hash_b64": hash_password("678", salt),
                   "password_salt_b64": base64.b64encode(salt).decode(),
                   "allowed_apis": ["database_api", "network_node_api"]}],
        ["true", {"password_hash_b64": hash_password("false", salt),
                  "password_salt_b64": base64.b64encode(salt).decode(),
                  "allowed_apis": ["history_api"]}]]}
    running = RunningSite(make_node(chain), ApiAccess.from_json(doc))
    ws = yield ws_connect(running.port)
    try:
        assert (yield ws.call(1, "login", 12345, 678)) is True
        assert (yield ws.call(1, "get_available_api_sets")) == ["database_api",
                                                                "network_node_api"]
        assert (yield ws.call(1, "login", 12345, 679)) is False
        assert (yield ws.call(1, "login", "12345", "678")) is True
        assert (yield ws.call(1, "login", True, False)) is True
        assert (yield ws.call(1, "get_available_api_sets")) == ["history_api"]
        for bad in ({}, [1]):
            reply = yield ws.request(1, "login", [bad, "x"])
            assert reply["error"]["code"] == 10
            assert "user must be a string" in reply["error"]["message"]
        reply = yield ws.request(1, "login", ["12345", {"a": 1}])
        assert "password must be a string" in reply["error"]["message"]
    finally:
        ws.dropConnection()
        yield running.stop()


def test_chain_objects_in_replies_are_encoded_once_per_version():
    """A chain object in a reply (alone, in a list, in pairs) is sent as
    the bytes encoded the first time (the node's EncodedObjects); the reply
    equals the plain encoding, and an object changed in place is caught in
    the cache's check mode (the test kit's nodes run in it)."""

    from nodeapi.api.answers import EncodedObjects
    from nodeapi.chain.state import StateObject
    from nodeapi.rpc.jsonrpc import encode_result, parse_request
    from nodeapi.protocol.wire import to_wire

    request = parse_request(b'{"jsonrpc":"2.0","id":7,"method":"call","params":[0,"f",[]]}')
    big = StateObject(id="1.2.6", balance=2 ** 40, name="init0", votes=["1:0"])
    objects, unchecked = EncodedObjects(check=True), EncodedObjects()
    for result in (big, [big, None], [["init0", big]], {"plain": 2 ** 40},
                   {"nested": [big]}):
        expected = orjson.dumps({"id": 7, "jsonrpc": "2.0", "result": to_wire(result)})
        assert encode_result(request, result) == expected
        assert encode_result(request, result, objects) == expected
        assert encode_result(request, result, objects) == expected
        assert encode_result(request, result, unchecked) == expected
    assert objects.fragment(big) is objects.fragment(big) and len(objects) == 1
    assert b'"balance":"1099511627776"' in encode_result(request, big, objects)
    big["balance"] = 1  # never done to a stored object
    assert b'"balance":"1099511627776"' in encode_result(request, big, unchecked)  # kept
    with pytest.raises(AssertionError, match="changed after it was"):
        encode_result(request, big, objects)
