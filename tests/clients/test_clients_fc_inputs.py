"""Clients that send fc's loose input forms, against a live node:
python-bitshares ``Blockchain.get_all_accounts()`` (``lookup_accounts(name,
1e3)``: a double limit) and a bitshares-explorer-api style raw JSON-RPC
``get_assets([ids], 0)`` over HTTP (an integer for ``optional<bool>``).
bitshares-core reads both (fc/src/variant.cpp ``as_uint64``, ``as_bool``)."""

import orjson
import pytest
import pytest_twisted
import treq
from twisted.internet import threads

from kit.clients import bitshares_client, live_node


@pytest.fixture
def node(chain):
    running = live_node(chain)
    yield running
    pytest_twisted.blockon(running.stop())


def _all_accounts(url):
    from bitshares.blockchain import Blockchain

    return list(Blockchain(blockchain_instance=bitshares_client(url)).get_all_accounts())


@pytest_twisted.inlineCallbacks
@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_python_bitshares_get_all_accounts(node, chain, scheme):
    url = node.ws_url if scheme == "ws" else node.http_url
    names = yield threads.deferToThread(_all_accounts, url)
    expected = sorted(chain.state.get(oid)["name"] for oid in chain.state.ids_of_type("1.2."))
    assert names == expected and "init0" in names


@pytest_twisted.inlineCallbacks
@pytest.mark.parametrize("subscribe", [0, 1, "false"])
def test_explorer_get_assets_with_integer_subscribe(node, subscribe):
    body = {"jsonrpc": "2.0", "id": 3, "method": "call",
            "params": ["database", "get_assets", [["1.3.0"], subscribe]]}
    resp = yield treq.post(node.http_url, data=orjson.dumps(body),
                           headers={"Content-Type": "application/json"})
    reply = orjson.loads((yield resp.content()))
    assert resp.code == 200, reply
    assert reply["id"] == 3 and [a["symbol"] for a in reply["result"]] == ["TEST"]


@pytest_twisted.inlineCallbacks
def test_integer_beyond_64_bits_over_http(node):
    raw = (b'{"jsonrpc": "2.0", "id": 9, "method": "call", '
           b'"params": ["database", "get_assets", [["1.3.0"], 99999999999999999999]]}')
    resp = yield treq.post(node.http_url, data=raw)
    reply = orjson.loads((yield resp.content()))
    assert resp.code == 400
    assert reply["id"] is None and reply["error"]["code"] == -32700
    assert reply["error"]["message"] == "Invalid JSON message"
    assert orjson.loads(reply["error"]["data"]["stack"][-1]["data"]["str"])["id"] == 9


def _overflowing_call(url):
    from grapheneapi.exceptions import RPCError

    bts = bitshares_client(url)
    try:
        bts.rpc.get_objects(["1.2.0"], 2 ** 70)
    except RPCError as exc:
        error = str(exc)
    else:
        error = None
    return error, bts.rpc.get_objects(["1.2.6"])[0]["name"]


@pytest_twisted.inlineCallbacks
def test_python_bitshares_sees_invalid_json_message(node):
    """python-bitshares' websocket client sends a 71-bit integer literal (its
    json.dumps writes Python ints as they are): the node answers as fc's
    parser does (-32700, "Invalid JSON message", the id null), the client
    raises it as RPCError("Invalid JSON message") and the connection keeps
    serving."""
    error, name = yield threads.deferToThread(_overflowing_call, node.ws_url)
    assert error == "Invalid JSON message" and name == "init0"
