"""JSON-RPC envelopes: parsing requests, encoding replies, mapping errors.

The one place where exceptions become JSON-RPC errors (docs/wire-contract.rst
section 4) and where values become wire JSON (section 3: 64-bit integers
outside the signed 32-bit range, and floats, are written as strings).

Shapes:

* a request is an object ``{"id", "method", "params", ["jsonrpc"]}``;
  ``method == "call"`` takes ``params = [api, function, [args]]``, any other
  method is a function of API 0 with ``params`` as its arguments;
* a reply is ``{"id", ["jsonrpc",] "result"|"error"}`` in that key order,
  ``jsonrpc`` only when the request had it;
* an error is ``{"code", "message", ["data": {"code", "name", "message",
  "stack"}]}``.
"""

import re
from typing import Any, Optional

import attr
import orjson
from twisted.logger import Logger
from twisted.python.failure import Failure

from nodeapi.api.answers import EncodedObjects
from nodeapi.chain.state import AnnotatedObject, StateObject
from nodeapi.errors import NodeAPIError
from nodeapi.protocol.wire import json_default, to_wire

log = Logger()


class RpcError(Exception):
    """A JSON-RPC error to send as is.

    :ivar code: JSON-RPC error code (-32700 ... -32600, 10, ...).
    :ivar message: the ``message`` member.
    :ivar data: the optional ``data`` member (JSON value) or None.
    :ivar http_status: status for the HTTP transport (docs/wire-contract.rst s. 4).
    :ivar request_id: the id to reply with (None for validation errors).
    """

    def __init__(self, code: int, message: str, data: Any = None, http_status: int = 400,
                 request_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status
        self.request_id = request_id

    def to_json(self) -> dict:
        """The JSON-RPC ``error`` member: ``{"code", "message"}``, with
        ``"data"`` when set (docs/wire-contract.rst section 4)."""
        error = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def method_not_found(name: str, request_id: Any = None) -> RpcError:
    """-32601 ``Method not found`` for function ``name``."""
    return RpcError(-32601, "Method not found", f"No method with name '{name}'", 400,
                    request_id)


@attr.s(slots=True, auto_attribs=True)
class Request:
    """A validated request.

    :ivar id: the client's id (int, str or None); ``has_id`` tells whether a
        reply is wanted.
    :ivar api: the API set: an int id or a set name (str).
    :ivar function: the function name.
    :ivar args: positional arguments (a list).
    :ivar jsonrpc: True if the request carried ``"jsonrpc": "2.0"``.
    :ivar api_name: the name of the set the call reached, once dispatched
        (for metrics); "" before or when it could not be resolved.
    """

    id: Any
    has_id: bool
    api: Any
    function: str
    args: list
    jsonrpc: bool
    api_name: str = ""

    @property
    def wants_reply(self) -> bool:
        """A reply is sent when the request has an id; for ``"id": null``
        only when ``jsonrpc`` is present (docs/wire-contract.rst section 3)."""
        return self.has_id and (self.id is not None or self.jsonrpc)


#: Deepest nesting of a call's argument list (the list itself is level 1):
#: graphene parses requests with ``GRAPHENE_NET_MAX_NESTED_OBJECTS`` (200,
#: fc ``json::from_string`` max_depth).  Deeper arguments are refused here,
#: once for every function, before any of them walks (or prints) them.
MAX_PARAMS_DEPTH = 200


def nesting_depth(value: Any, limit: int) -> int:
    """Levels of lists and dicts in ``value`` (a scalar is 0), counted
    without recursion; stops at ``limit + 1`` (enough to refuse)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        if type(item) is list:
            children = item
        elif type(item) is dict:
            children = item.values()
        else:
            continue
        if level > deepest:
            deepest = level
            if deepest > limit:
                return deepest
        todo.extend((child, level + 1) for child in children
                    if type(child) is list or type(child) is dict)
    return deepest


def parse_request(raw: bytes) -> Request:
    """Parse and validate one request body.

    A string API set made of ASCII digits (``"0"``, ``"12"``) is a set id;
    any other string is a set name, so ``"\u00b2"`` or ``"1\u2070"``
    (``str.isdigit`` but not ``int``-able) is an unknown set like any name.

    :raises RpcError: -32700 invalid JSON, -32600 batch / not an object / bad
        id / bad method / bad jsonrpc / bad params, -32602 named params or
        arguments nested deeper than :data:`MAX_PARAMS_DEPTH`.
    """
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise RpcError(-32700, "Invalid JSON message") from None
    if _LONG_RUN in raw.translate(_DIGIT_MARKS):
        _check_integer_literals(raw)
    if type(doc) is not dict:
        if isinstance(doc, list):
            raise RpcError(-32600, "Batch requests not supported")
        raise RpcError(-32600, "Invalid JSON request")
    has_id = "id" in doc
    rid = doc.get("id")
    trid = type(rid)
    if trid is not int and trid is not str and rid is not None:
        raise RpcError(-32600, "Invalid id")
    jsonrpc = "jsonrpc" in doc
    if jsonrpc and doc["jsonrpc"] != "2.0":
        raise RpcError(-32600, "Unsupported JSON-RPC version")
    method = doc.get("method")
    if type(method) is not str or not method:
        raise RpcError(-32600, "Missing or invalid method")
    params = doc.get("params", [])
    if type(params) is not list:
        if isinstance(params, dict):
            raise RpcError(-32602, "Named parameters not supported")
        raise RpcError(-32600, "Invalid parameters")
    if method != "call":
        return Request(rid, has_id, 0, method, _checked_args(raw, params), jsonrpc)
    if len(params) != 3 or type(params[2]) is not list:
        raise RpcError(-32600, "Invalid parameters")
    api, function = params[0], params[1]
    tapi = type(api)
    if (tapi is not int and tapi is not str) or type(function) is not str:
        raise RpcError(-32600, "Invalid parameters")
    if tapi is str and api.isascii() and api.isdigit() and len(api) <= 9:
        api = int(api)
    return Request(rid, has_id, api, function, _checked_args(raw, params[2]), jsonrpc)


# 19 digits in a row: the shortest integer literal that can leave the range
# (found as a run of "0" in the body with every digit made "0" and every
# other byte " ": one translate and one substring search)
_DIGIT_MARKS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"0" * 19
# a JSON string (skipped) or a number token
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?')
_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(1 << 63), (1 << 63) - 1, (1 << 64) - 1


def _check_integer_literals(raw: bytes) -> None:
    """Refuse a message holding an integer literal outside the 64-bit
    range, as fc's JSON parser does (fc/src/io/json.cpp
    ``number_from_stream``: a literal without a dot is ``fc::to_int64`` when
    negative, else ``fc::to_uint64``, fc/src/string.cpp, which throw
    ``parse_error_exception``), where orjson would read a double.

    :raises RpcError: -32700 "Invalid JSON message" with fc's exception as
        ``data``: its stack ends with the frame of ``json::from_string``
        whose ``data.str`` is the message (python-bitshares' asyncio
        websocket reads the request id from it when the reply carries
        ``"id": null``)."""
    for match in _TOKENS.finditer(raw):
        token = match.group()
        if token[:1] == b'"' or b"." in token or b"e" in token or b"E" in token:
            continue
        value = int(token)
        negative = token[:1] == b"-"
        if (_INT64_MIN <= value <= _INT64_MAX) if negative else value <= _UINT64_MAX:
            continue
        kind, line = ("int64_t", 42) if negative else ("uint64_t", 55)
        method = "to_int64" if negative else "to_uint64"
        text = token.decode("ascii")
        stack = [
            {"context": {"level": "error", "file": "string.cpp", "line": line, "method": method},
             "format": f"Couldn't parse {kind}", "data": {}},
            {"context": {"level": "warn", "file": "json.cpp", "line": 463,
                         "method": "from_string"},
             "format": "", "data": {"str": raw.decode("utf-8", "replace")}},
        ]
        if not negative:  # to_uint64's FC_CAPTURE_AND_RETHROW( (i) )
            stack.insert(1, {"context": {"level": "warn", "file": "string.cpp", "line": 58,
                                         "method": method},
                             "format": "", "data": {"i": text}})
        raise RpcError(-32700, "Invalid JSON message",
                       {"code": 4, "name": "parse_error_exception", "message": "Parse Error",
                        "stack": stack})


def _checked_args(raw: bytes, args: list) -> list:
    """``args`` unless nested deeper than :data:`MAX_PARAMS_DEPTH` (the walk
    runs only for bodies with that many brackets at all)."""
    if (len(raw) > MAX_PARAMS_DEPTH and raw.count(b"[") + raw.count(b"{") > MAX_PARAMS_DEPTH
            and nesting_depth(args, MAX_PARAMS_DEPTH) > MAX_PARAMS_DEPTH):
        raise RpcError(-32602, f"Invalid params: nested deeper than {MAX_PARAMS_DEPTH} levels")
    return args


def encode_value(value: Any, objects: Optional[EncodedObjects] = None) -> bytes:
    """The wire JSON of a result: :func:`~nodeapi.protocol.wire.to_wire`
    then orjson.  With ``objects`` (the node's
    :class:`~nodeapi.api.answers.EncodedObjects`), the chain objects at the
    top level of ``value`` or in its (nested) top-level lists are placed as
    their kept encodings, and those deeper as their kept wire forms."""
    if objects is None:
        return orjson.dumps(to_wire(value), default=json_default)
    return orjson.dumps(_reply_wire(value, objects), default=json_default)


def _reply_wire(value: Any, objects: EncodedObjects) -> Any:
    t = type(value)
    if t is StateObject or t is AnnotatedObject:
        return objects.fragment(value)
    if t is list or t is tuple:
        return [_reply_wire(v, objects) if type(v) in _SHALLOW else to_wire(v, objects.wire)
                for v in value]
    return to_wire(value, objects.wire)


_SHALLOW = (StateObject, AnnotatedObject, list, tuple)


def envelope(request: Request, result: bytes) -> bytes:
    """The reply bytes for a successful call whose result encodes as
    ``result`` (:func:`encode_value`): ``{"id", ["jsonrpc",] "result"}``,
    byte for byte what encoding the whole reply at once gives."""
    return b"".join((b'{"id":', orjson.dumps(request.id),
                     b',"jsonrpc":"2.0","result":' if request.jsonrpc else b',"result":',
                     result, b"}"))


def encode_result(request: Request, result: Any,
                  objects: Optional[EncodedObjects] = None) -> bytes:
    """The reply bytes for a successful call (:func:`encode_value`,
    :func:`envelope`)."""
    return envelope(request, encode_value(result, objects))


def encode_error(error: RpcError, request: Optional[Request] = None) -> bytes:
    """The reply bytes for ``error``; validation errors (no request) carry
    ``"id": null`` and ``"jsonrpc": "2.0"``."""
    reply = {"id": request.id if request is not None else None}
    if request is None or request.jsonrpc:
        reply["jsonrpc"] = "2.0"
    reply["error"] = error.to_json()
    return orjson.dumps(reply, default=json_default)


def _http_status(code: int) -> int:
    """The HTTP status of an error another node sent with ``code``, as
    that node's HTTP transport would set it (bitshares-fc
    src/rpc/websocket_api.cpp ``on_http_handler``: 500 for -32603, 400 for
    the other codes up to -32600, else 200)."""
    return 500 if code == -32603 else 400 if code <= -32600 else 200


def error_from_failure(failure: Failure, request: Optional[Request] = None) -> RpcError:
    """Map an exception raised by a call to the RpcError sent back.

    :class:`RpcError` passes through; a :class:`NodeAPIError` carrying
    another node's error (``wire_error``: a call this node forwarded) is
    that error unchanged (HTTP status by its code, :func:`_http_status`);
    another :class:`NodeAPIError` becomes
    code ``exc.code`` with ``Execution error: <text>`` (HTTP 200); anything else is
    logged with its traceback and answered -32603 ``Internal error``
    (HTTP 500) without detail."""
    exc = failure.value
    if isinstance(exc, RpcError):
        return exc
    if isinstance(exc, NodeAPIError) and exc.wire_error is not None:
        wire = exc.wire_error
        return RpcError(wire["code"], wire["message"], wire.get("data"),
                        _http_status(wire["code"]))
    if isinstance(exc, NodeAPIError):
        text = exc.message
        # fc's stack entries carry the message format and its values
        # ("data"); an fc exception (``what``) always has one, and fc's
        # description as its message
        stack = [{"format": exc.log_format, "data": exc.details or {}}] \
            if exc.details or exc.what else []
        return RpcError(exc.code, f"Execution error: {text}",
                        {"code": exc.code, "name": exc.name, "message": exc.what or text,
                         "stack": stack},
                        200)
    where = f"{request.api}.{request.function}" if request is not None else "request"
    log.failure("Internal error in {where}", failure, where=where)
    return RpcError(-32603, "Internal error", None, 500)
