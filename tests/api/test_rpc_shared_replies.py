"""Replies shared between identical calls while the chain state is
unchanged (``@api_function(shared=...)``, ``Node.api_answers.replies``,
``nodeapi.rpc.answer``), the HTTP transport's request handling and the
login of a session without credentials."""

import base64

import orjson
import pytest_twisted
import treq

from nodeapi.api.registry import default_registry
from nodeapi.protocol.wire import to_wire
from nodeapi.rpc.access import ApiAccess, hash_password
from nodeapi.rpc.answer import answer
from nodeapi.rpc.jsonrpc import parse_request
from nodeapi.rpc.login import RpcSession

from kit.access import VECTORS
from kit.chain import produce, push_wire, transfer_wire
from kit.site import RunningSite, make_node


def _session(node, notices=None):
    session = RpcSession(node, ApiAccess.default(), default_registry(), websocket=True,
                         notice=lambda cb, payload: notices.append((cb, payload)))
    session.auto_login(None)
    return session


def _call(session, rid, function, args, jsonrpc=True):
    doc = {"id": rid, "method": "call", "params": [0, function, args]}
    if jsonrpc:
        doc["jsonrpc"] = "2.0"
    return answer(session, parse_request(orjson.dumps(doc))).body


def test_identical_reads_share_one_reply_until_the_state_changes(funded):
    """Two sessions asking ``get_dynamic_global_properties`` and
    ``get_order_book`` with the same arguments get the result encoded once
    (only the id differs), byte for byte the plain encoding of the answer;
    after a block the reply is made again from the new state."""
    node = make_node(funded)
    one, two = _session(node, []), _session(node, [])
    state = funded.state
    first = _call(one, 1, "get_dynamic_global_properties", [])
    expected = orjson.dumps({"id": 1, "jsonrpc": "2.0",
                             "result": to_wire(state.objects["2.1.0"])})
    assert first == expected
    again = _call(two, "x", "get_dynamic_global_properties", [], jsonrpc=False)
    assert again == b'{"id":"x","result":' + first[len(b'{"id":1,"jsonrpc":"2.0","result":'):]
    key = ("database", "get_dynamic_global_properties", b"[]")
    kept = node.api_answers.replies.get(key, (state, state.version))
    assert kept is not None and first.endswith(kept + b"}")
    book = _call(one, 2, "get_order_book", ["TEST", "1.3.0", 5])
    assert b"The two assets of a market must differ" in book  # errors are not kept
    assert len(node.api_answers.replies) == 1
    head = orjson.loads(first)["result"]["head_block_number"]
    produce(funded)
    after = orjson.loads(_call(two, 3, "get_dynamic_global_properties", []))
    assert after["result"]["head_block_number"] == head + 1


def test_a_get_full_accounts_that_subscribes_is_not_shared(funded):
    """``get_full_accounts(names, false)`` shares its reply; the same call
    subscribing (a callback set, ``true``) is made and subscribes as
    graphene's does, so a later transfer of init0 is notified; a bad
    ``subscribe`` argument is answered with its error, never a kept reply."""
    node = make_node(funded)
    notices = []
    session = _session(node, notices)
    plain = _call(session, 1, "get_full_accounts", [["init0"], False])
    assert orjson.loads(plain)["result"][0][0] == "init0"
    _call(session, 2, "set_subscribe_callback", [7, False])
    bad = orjson.loads(_call(session, 3, "get_full_accounts", [["init0"], "maybe"]))
    assert "expected true or false" in bad["error"]["message"]
    kept = orjson.loads(_call(session, 4, "get_full_accounts", [["init0"], False]))
    assert kept["result"] == orjson.loads(plain)["result"]
    push_wire(funded, transfer_wire(1000))
    produce(funded)
    assert not [n for n in notices if b'"1.2.6"' in orjson.dumps(n[1])]
    subscribed = orjson.loads(_call(session, 5, "get_full_accounts", [["init0"], True]))
    assert subscribed["result"][0][1]["account"]["id"] == "1.2.6"
    push_wire(funded, transfer_wire(1000))
    produce(funded)
    assert [n for n in notices if n[0] == 7 and b'"1.2.6"' in orjson.dumps(n[1])]


@pytest_twisted.inlineCallbacks
def test_http_bodies_of_other_content_types_get_a_json_415(funded):
    """A JSON-RPC body sent as ``multipart/form-data``, form-urlencoded or
    ``text/plain`` (what a web page may POST without a CORS preflight) is
    refused with HTTP 415 and a JSON-RPC error naming the header (never a
    bare 400 from a form parse: the site does not parse form
    submissions); ``application/json``, with a charset too, is answered."""
    running = RunningSite(make_node(funded), ApiAccess.default())
    try:
        body = b'{"jsonrpc":"2.0","id":1,"method":"call","params":[0,"get_chain_id",[]]}'
        for ctype in (b"multipart/form-data; boundary=xyz",
                      b"application/x-www-form-urlencoded", b"text/plain"):
            resp = yield treq.post(running.url + "/rpc", data=body,
                                   headers={b"Content-Type": [ctype]})
            reply = orjson.loads((yield resp.content()))
            assert resp.code == 415 and reply["error"]["code"] == -32600
            assert "application/json" in reply["error"]["message"]
        for ctype in (b"application/json", b"Application/JSON; charset=utf-8"):
            resp = yield treq.post(running.url + "/rpc", data=body,
                                   headers={b"Content-Type": [ctype]})
            reply = orjson.loads((yield resp.content()))
            assert (resp.code, reply["result"]) == (200, funded.chain_id)
    finally:
        yield running.stop()


def test_a_session_without_credentials_logs_in_as_empty_credentials():
    """A connection or HTTP request without credentials gets what
    ``login("", "")`` gets (docs/wire-contract.rst section 1), made once
    per access map: the ``*`` entry's sets; a map without ``*`` refuses it
    (no sets, id 0 is the dummy set answering false); one with an entry for
    the empty user checks its password, an empty one."""
    salt = b"\x01\x02\x03\x04\x05\x06\x07\x08"
    entry = {"password_hash_b64": hash_password("", salt),
             "password_salt_b64": base64.b64encode(salt).decode(), "allowed_apis": ["block_api"]}
    no_star = {"permission_map": [row for row in VECTORS["permission_map"] if row[0] != "*"]}
    for doc, allowed in ((VECTORS, {"database_api", "network_broadcast_api", "history_api"}),
                         (no_star, None), ({"permission_map": [["", entry]]}, {"block_api"})):
        access = ApiAccess.from_json(doc)
        assert access.anonymous() == access.check("", "")
        assert access.anonymous() == (frozenset(allowed) if allowed else None)
        session = RpcSession(None, access, default_registry(), websocket=False)
        session.auto_login(None)
        assert session.allowed == frozenset(allowed or ())
        assert session.user == ("" if allowed else None)
        assert session.apis[0].name == ("database" if allowed and "database_api" in allowed
                                        else "dummy")


def test_a_result_over_the_size_cap_is_encoded_for_each_call(funded, monkeypatch):
    """A shared result longer than ``SHARED_REPLY_MAX`` bytes is not kept
    (the cache holds at most its size times the cap) and still answered
    the same way."""
    import nodeapi.rpc.answer

    monkeypatch.setattr(nodeapi.rpc.answer, "SHARED_REPLY_MAX", 100)
    node = make_node(funded)
    session = _session(node, [])
    first = _call(session, 1, "get_dynamic_global_properties", [])
    assert _call(session, 1, "get_dynamic_global_properties", []) == first
    assert len(first) > 100 and len(node.api_answers.replies) == 0


def test_account_history_replies_are_shared_until_a_block(funded):
    """``history.get_account_history`` answered by the in-memory
    ``account_history`` plugin shares one encoded reply between identical
    calls (the plugin changes its entries only as blocks are applied, and
    each block changes the state's version first); the next block's
    transfer is in the answer after it."""
    node = make_node(funded)
    one, two = _session(node, []), _session(node, [])

    def history(session, rid):
        doc = {"jsonrpc": "2.0", "id": rid, "method": "call",
               "params": ["history", "get_account_history", ["init0", "1.11.0", 100, "1.11.0"]]}
        return answer(session, parse_request(orjson.dumps(doc))).body

    push_wire(funded, transfer_wire(1111))  # the plugin sees blocks from now on
    produce(funded)
    first = history(one, 1)
    entries = orjson.loads(first)["result"]
    assert [e["op"][1]["amount"]["amount"] for e in entries] == [1111]
    key = ("history", "get_account_history", orjson.dumps(["init0", "1.11.0", 100, "1.11.0"]))
    state = funded.state
    kept = node.api_answers.replies.get(key, (state, state.version))
    assert kept is not None and first.endswith(kept + b"}")
    assert history(two, 1) == first
    push_wire(funded, transfer_wire(4321))
    produce(funded)
    after = orjson.loads(history(two, 2))["result"]
    assert [e["op"][1]["amount"]["amount"] for e in after] == [4321, 1111]
