"""What another node may send over a connection of this node's
(:mod:`nodeapi.peers.client`): every message is checked before anything in
it reaches a follower, an indexer, or a gateway's clients, cache, per-block
answers and figures.

A message passes (:func:`read_message`) when it is:

* JSON (orjson: UTF-8, no ``NaN``/``Infinity``, nothing after the value),
  no larger than the connection's largest message (Autobahn refuses a
  larger one before it is read);
* nested at most :data:`MAX_DEPTH` deep (bitshares-fc
  include/fc/io/json.hpp ``DEFAULT_MAX_RECURSION_DEPTH``: fc's own parser
  refuses deeper text, so no bitshares-core node answers with it);
* with every number within fc's integer range, -2^63 to 2^64-1
  (``fc::variant`` holds an ``int64_t`` or a ``uint64_t``; bitshares-core
  writes doubles and larger amounts as strings, fc
  ``stringify_large_ints_and_doubles``): an integer beyond it (which orjson
  reads as a float) or a float at or beyond its ends is refused;
* an object: a notice ``{"method": "notice", "params": [callback id
  (integer), [payload...]]}``, or a reply with exactly one integer ``id``
  member and a ``result`` or an ``error`` member.

Whether the reply's id was asked is the connection's business
(:class:`~nodeapi.peers.client.RemoteProtocol`).  A message that does not
pass raises :class:`BadReply`: the connection is dropped
(:class:`~nodeapi.peers.remote.RemoteNode`; a gateway's upstream opens its
circuit breaker, :mod:`nodeapi.gateway.upstream`).

The fast form of a reply (:func:`raw_result`:
``{"id":N,"jsonrpc":"2.0","result":...}``, what bitshares-core writes)
passes when its result bytes alone are one JSON value that passes: then
its id is the one in its head and it has no other member.  Any other form
is decoded whole, and its top-level members are read once more to find a
second ``id`` (orjson keeps the last of two equal keys).
"""

import json
import re
from typing import Any, Optional

import attr
import orjson

#: deepest nesting of arrays and objects accepted (fc's parser's limit)
MAX_DEPTH = 200
#: fc's integer range: int64 below, uint64 above
LOWEST, HIGHEST = -(2 ** 63), 2 ** 64 - 1
#: the head of a reply in the fast form: its id is group 1
_REPLY_HEAD = re.compile(rb'\{"id":(\d{1,18}),(?:"jsonrpc":"2\.0",)?"result":')


class BadReply(ValueError):
    """A message that does not pass (module docstring); its text says why,
    for the log."""


def raw_result(payload: bytes) -> Optional[tuple]:
    """``(call id, result bytes)`` of a reply in the fast form (module
    docstring: bitshares-fc src/rpc/websocket_api.cpp writes
    ``{"id":N,"jsonrpc":"2.0","result":...}``; nodeapi ``{"id":N,"result":...}``),
    else None (spaces, another key order, an ``error`` member).  The result
    bytes are not validated here (:func:`read_message` does)."""
    match = _REPLY_HEAD.match(payload)
    if match is None or payload[-1:] != b"}" or b'"error"' in payload[-24:]:
        return None
    return int(match.group(1)), payload[match.end():-1]


def check_value(value: Any) -> None:
    """Raise :class:`BadReply` when ``value`` (decoded by orjson) nests
    deeper than :data:`MAX_DEPTH` or holds a number outside fc's range.

    Walks the containers without recursion (a hostile value cannot exhaust
    the stack); about 5 ms per MB of typical answers."""
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        item, depth = pop()
        kind = type(item)
        if kind is float:
            if not LOWEST < item < HIGHEST:  # -2^63 - 1 reads as the float -2^63
                raise BadReply(f"a number beyond fc's 64-bit range ({item:g})")
            continue
        if kind is dict:
            members = item.values()
        elif kind is list:
            members = item
        else:
            continue
        if depth > MAX_DEPTH:
            raise BadReply(f"a value nested deeper than {MAX_DEPTH}")
        depth += 1
        for member in members:
            kind = type(member)
            if kind is dict or kind is list or kind is float:
                push((member, depth))


def decode(text: bytes) -> Any:
    """``text`` decoded and checked (:func:`check_value`).

    :raises BadReply: invalid JSON, too deep or a number out of range."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise BadReply(f"invalid JSON ({exc})") from None
    check_value(value)
    return value


@attr.s(frozen=True, slots=True)
class Message:
    """One checked message.

    :ivar call_id: the reply's id (int), or None for a notice.
    :ivar result: the decoded result (None with ``error`` or a notice).
    :ivar raw: the result's JSON bytes as the upstream wrote them (fast
        form), or None.
    :ivar error: the ``error`` member as it came, or None.
    :ivar callback, payload: a notice's callback id and payload list.
    """

    call_id = attr.ib(default=None)
    result = attr.ib(default=None)
    raw = attr.ib(default=None)
    error = attr.ib(default=None)
    callback = attr.ib(default=None)
    payload = attr.ib(default=None)

    @property
    def notice(self) -> bool:
        """Whether the message is a notice (it has no call id)."""
        return self.call_id is None


def _is_int(value) -> bool:
    return type(value) is int


def read_message(payload: bytes, fast: Optional[tuple] = None) -> Message:
    """``payload`` (one WebSocket message) checked (module docstring).

    :param fast: ``(call id, result bytes)`` when the message has the fast
        form (:func:`raw_result`), else None.
    :raises BadReply: the message does not pass."""
    if fast is not None:
        try:
            value = orjson.loads(fast[1])
        except orjson.JSONDecodeError:
            value = fast = None  # e.g. a second member after the result: read whole
        if fast is not None:
            check_value(value)
            return Message(call_id=fast[0], result=value, raw=fast[1])
    msg = decode(payload)
    if type(msg) is not dict:
        raise BadReply(f"a JSON {type(msg).__name__}, not an object")
    if msg.get("method") == "notice":
        params = msg.get("params")
        if not (type(params) is list and len(params) == 2 and _is_int(params[0])
                and type(params[1]) is list):
            raise BadReply("a notice whose params are not [callback, [payload...]]")
        return Message(callback=params[0], payload=params[1])
    if "method" in msg:
        raise BadReply(f"a request or notice of its own ({str(msg['method'])[:40]!r})")
    call_id = msg.get("id")
    if not _is_int(call_id):
        raise BadReply(f"a reply whose id is not an integer ({str(call_id)[:40]})")
    if "result" not in msg and "error" not in msg:
        raise BadReply(f"a reply to {call_id} with neither result nor error")
    if _top_level_keys(payload).count("id") != 1:
        raise BadReply(f"a reply with more than one id (the last {call_id})")
    if "error" in msg:
        return Message(call_id=call_id, error=msg["error"])
    return Message(call_id=call_id, result=msg["result"])


def _top_level_keys(payload: bytes) -> list:
    """The member names of the top-level object of ``payload`` (already
    decoded once, so valid JSON), duplicates kept: the outermost object is
    the last one the decoder completes."""
    last: list = []

    def pairs(members):
        last[:] = [members]
        return None  # the values are not needed

    json.loads(payload, object_pairs_hook=pairs)
    return [key for key, _value in last[0]] if last else []
