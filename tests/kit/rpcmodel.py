"""A reference model of docs/wire-contract.rst sections 3 and 4 for checking
replies to arbitrary request bodies (used by test_rpc_fuzz.py).

:func:`check_reply` takes the raw body sent, the parsed reply (None for no
reply) and the HTTP status (None over WebSocket) and raises AssertionError
unless the reply is one the contract allows:

* body not JSON (strict RFC 8259 in UTF-8, no NaN/Infinity) -> -32700
  ``Invalid JSON message``, ``"id": null``, HTTP 400;
* JSON but not a valid request -> one of the applicable -32600/-32602
  messages (the contract gives no precedence when several apply),
  ``"id": null``, HTTP 400;
* valid request without id (or ``"id": null`` without ``jsonrpc``) -> no
  reply, HTTP 204;
* otherwise the id echoed (same type and value), ``jsonrpc`` echoed only
  when sent, key order ``id, [jsonrpc,] result|error``, and ``result`` (200),
  -32601 ``Method not found`` (400), ``Execution error: ...`` (200) or -32603
  ``Internal error`` (500); never a traceback or a file path.

An integer literal outside [-2**63, 2**64) anywhere fails the whole message
as fc's JSON parser fails it (-32700 ``Invalid JSON message``); a 64-bit
parser may also refuse infinities, lone surrogates and very deep nesting,
so for such documents both readings are accepted.
"""

import json
import math
import re

from kit.paths import ROOT

VALIDATION = {  # message -> code (docs/wire-contract.rst section 4)
    "Invalid JSON message": -32700, "Batch requests not supported": -32600,
    "Invalid JSON request": -32600, "Invalid id": -32600, "Missing or invalid method": -32600,
    "Unsupported JSON-RPC version": -32600, "Invalid parameters": -32600,
    "Named parameters not supported": -32602,
}
#: what an error must not show: a traceback, a source file, the checkout's
#: or the installed packages' directories
LEAKS = re.compile(r"Traceback|File \"|\.py\b|site-packages|" + re.escape(ROOT))


class _NotJson(ValueError):
    pass


def _reject_constant(name):
    raise _NotJson(name)


def reference_parse(raw: bytes):
    """Parse ``raw`` as strict RFC 8259 JSON in UTF-8 (no NaN/Infinity);
    raises ValueError when it is not JSON."""
    return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)


def _walk(doc, depth=0):
    yield doc, depth
    if isinstance(doc, dict):
        for v in doc.values():
            yield from _walk(v, depth + 1)
    elif isinstance(doc, list):
        for v in doc:
            yield from _walk(v, depth + 1)


def beyond_json_parser(doc) -> bool:
    """True when a strict 64-bit JSON parser may refuse ``doc`` although it
    is JSON: floats overflowing to infinity, lone surrogates, nesting deeper
    than 1,000 (fc and orjson both limit these)."""
    for value, depth in _walk(doc):
        if depth > 1000 or (isinstance(value, float) and math.isinf(value)):
            return True
        if isinstance(value, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            return True
    return False


def beyond_64_bits(doc) -> bool:
    """True when ``doc`` holds an integer outside [-2**63, 2**64), which
    fc's parser refuses (``Couldn't parse uint64_t``)."""
    return any(isinstance(v, int) and not isinstance(v, bool)
               and not -(2 ** 63) <= v < 2 ** 64 for v, _depth in _walk(doc))


def validation_errors(doc) -> set:
    """The wire-contract section 4 validation messages that apply to the
    parsed ``doc`` (empty: a valid request).  When several apply, the node
    may report any one of them."""
    if isinstance(doc, list):
        return {"Batch requests not supported"}
    if not isinstance(doc, dict):
        return {"Invalid JSON request"}
    found = set()
    rid = doc.get("id")
    if isinstance(rid, bool) or not isinstance(rid, (int, str, type(None))):
        found.add("Invalid id")
    if "jsonrpc" in doc and doc["jsonrpc"] != "2.0":
        found.add("Unsupported JSON-RPC version")
    method = doc.get("method")
    if not isinstance(method, str) or not method:
        found.add("Missing or invalid method")
    params = doc.get("params", [])
    if isinstance(params, dict):
        found.add("Named parameters not supported")
    elif not isinstance(params, list):
        found.add("Invalid parameters")
    elif method == "call":
        if len(params) != 3 or not isinstance(params[2], list):
            found.add("Invalid parameters")
        elif (isinstance(params[0], bool) or not isinstance(params[0], (int, str))
              or not isinstance(params[1], str)):
            found.add("Invalid parameters")
    return found


def expected(raw: bytes) -> list:
    """Acceptable outcomes for ``raw``: a list of ``("invalid", {messages})``
    or ``("valid", request_dict)`` alternatives."""
    try:
        doc = reference_parse(raw)
    except (ValueError, RecursionError):
        return [("invalid", {"Invalid JSON message"})]
    if beyond_64_bits(doc):
        return [("invalid", {"Invalid JSON message"})]
    errors = validation_errors(doc)
    outcomes = [("invalid", errors) if errors else ("valid", doc)]
    if beyond_json_parser(doc):
        outcomes.append(("invalid", {"Invalid JSON message"}))
    return outcomes


def _same_id(got, sent) -> bool:
    return type(got) is type(sent) and got == sent


def check_reply(raw: bytes, reply, status=None) -> str:
    """Assert ``reply`` (parsed JSON or None for no reply; ``status`` for
    HTTP) is an acceptable answer to ``raw``; returns a short outcome tag."""
    problems = []
    for kind, what in expected(raw):
        try:
            tag = _check_one(kind, what, reply, status)
        except AssertionError as exc:
            problems.append(f"{kind}: {exc}")
        else:
            return tag
    raise AssertionError(f"bad answer {status} {reply!r} to {raw[:300]!r}: {problems}")


def _check_one(kind, what, reply, status) -> str:
    if kind == "invalid":
        assert reply is not None, "no reply to an invalid request"
        assert list(reply) in (["id", "jsonrpc", "error"], ["id", "error"]), "key order"
        assert reply["id"] is None, "validation errors carry id null"
        error = reply["error"]
        assert error["message"] in what, f"message not in {what}"
        assert error["code"] == VALIDATION[error["message"]], "code"
        assert status in (None, 400), "HTTP status"
        return "invalid"
    request = what
    wants = "id" in request and (request["id"] is not None or "jsonrpc" in request)
    if not wants:
        assert reply is None, "a reply to a request without id"
        assert status in (None, 204), "HTTP status without id"
        return "no-reply"
    assert reply is not None, "no reply"
    keys = ["id", "jsonrpc"] if "jsonrpc" in request else ["id"]
    assert list(reply) in (keys + ["result"], keys + ["error"]), "key order / jsonrpc echo"
    assert _same_id(reply["id"], request["id"]), "id echo"
    if "jsonrpc" in request:
        assert reply["jsonrpc"] == "2.0"
    if "result" in reply:
        assert status in (None, 200)
        return "result"
    error = reply["error"]
    assert isinstance(error["code"], int) and isinstance(error["message"], str)
    assert error["code"] not in (-32700, -32600, -32602), "validation error on a valid request"
    assert not LEAKS.search(json.dumps(error)), "traceback or path leaked"
    if error["code"] == -32601:
        assert error["message"] == "Method not found"
        assert status in (None, 400)
    elif error["code"] == -32603:
        assert error["message"] == "Internal error" and status in (None, 500)
    else:
        assert error["message"].startswith("Execution error: ") or error["code"] == -32000
        assert status in (None, 200)
    return f"error {error['code']}"
