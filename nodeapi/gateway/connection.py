"""One WebSocket connection of the gateway to an upstream node, with calls
whose results come back as the upstream's own JSON text.

:class:`UpstreamProtocol` is the peers package's
:class:`~nodeapi.peers.client.PeerRpcProtocol` (calls, notices, pings,
message size limit, the ``factory.peer`` callbacks) plus :meth:`call_raw`.
A forwarded answer is passed on to the client as it came: the reply is not
decoded when its text has the form a bitshares-core node writes,
``{"id":N,"jsonrpc":"2.0","result":...}`` (bitshares-fc
src/rpc/websocket_api.cpp ``fc::json::to_string(reply)`` of an
``fc::rpc::response``, whose members are reflected in the order
``(id)(jsonrpc)(result)(error)``, include/fc/rpc/state.hpp, an unset
``optional`` left out; nodeapi writes ``{"id":N,"result":...}``): the bytes
between ``"result":`` and the closing brace are the result.  Any other
form (spaces, other key order, an ``error`` member, a tail that names
``"error"``) is decoded and encoded again, so the fast path only ever
saves work.  Large integers and doubles are already strings in the
upstream's text (fc ``stringify_large_ints_and_doubles``), so the client
gets exactly what the upstream sent.

Every message is checked first (:mod:`nodeapi.gateway.replies`: JSON,
depth, fc's number range, one integer id), and a reply must answer a call
this connection asked and has not been answered: a message that fails
goes to ``factory.peer.bad_reply(proto, reason)`` (the upstream drops the
connection, its breaker opens).  Every call has a timeout
(``factory.timeout`` seconds of ``factory.clock``): when it passes, the
call fails with :class:`~nodeapi.peers.errors.UpstreamTimeout`, the
upstream is told (``factory.peer.call_timed_out(proto, method)``), and a
late reply to that call is dropped quietly (the
:data:`ABANDONED_KEPT` newest such ids are remembered; an older one
counts as not asked).
"""

import re
from collections import OrderedDict

import orjson

from nodeapi.gateway.replies import BadReply, read_message
from nodeapi.peers.client import PeerRpcFactory, PeerRpcProtocol
from nodeapi.peers.errors import PeerRpcError, UpstreamTimeout

#: the head of a reply in the form module docstring: its id is group 1
_REPLY_HEAD = re.compile(rb'\{"id":(\d{1,18}),(?:"jsonrpc":"2\.0",)?"result":')
#: ids of calls that timed out whose late replies are still expected
ABANDONED_KEPT = 1024


def raw_result(payload: bytes):
    """``(call id, result bytes)`` of a reply in the fast form (module
    docstring), else None.  The result bytes are not validated here
    (:func:`~nodeapi.gateway.replies.read_message` does)."""
    match = _REPLY_HEAD.match(payload)
    if match is None or payload[-1:] != b"}" or b'"error"' in payload[-24:]:
        return None
    return int(match.group(1)), payload[match.end():-1]


class UpstreamProtocol(PeerRpcProtocol):
    """A :class:`~nodeapi.peers.client.PeerRpcProtocol` whose messages are
    checked, whose calls time out and whose :meth:`call_raw` results are
    bytes of JSON (module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._raw: set = set()
        self._timers: dict = {}  # call id -> its timeout's IDelayedCall
        self._abandoned: OrderedDict = OrderedDict()  # call ids that timed out

    @property
    def closed(self) -> bool:
        """True once the connection is closing or closed (its pending calls
        fail before the owner hears of the close)."""
        return self._closed

    def pending_methods(self) -> list:
        """The method names of the calls sent and not answered, oldest first."""
        return [method for method, _d in self._calls.values()]

    def call(self, api, method: str, args: list):
        """:meth:`~nodeapi.peers.client.PeerRpcProtocol.call` with the
        factory's timeout: fails with
        :class:`~nodeapi.peers.errors.UpstreamTimeout` when no reply came
        in ``factory.timeout`` seconds."""
        d = super().call(api, method, args)
        if not self._closed:
            call_id = self._next_id - 1
            self._timers[call_id] = self.factory.clock.callLater(
                self.factory.timeout, self._timed_out, call_id)
        return d

    def call_raw(self, api, method: str, args: list):
        """Like :meth:`call`, but the Deferred fires with the result as JSON
        bytes (the upstream's own text when the reply has the fast form,
        else encoded again)."""
        d = self.call(api, method, args)
        if self._closed:
            return d
        self._raw.add(self._next_id - 1)
        return d.addCallback(_as_json)

    def _timed_out(self, call_id: int) -> None:
        self._timers.pop(call_id, None)
        self._raw.discard(call_id)
        entry = self._calls.pop(call_id, None)
        if entry is None:
            return
        self._abandoned[call_id] = None
        while len(self._abandoned) > ABANDONED_KEPT:
            self._abandoned.popitem(last=False)
        method, d = entry
        timeout = self.factory.timeout
        d.errback(UpstreamTimeout(f"Upstream {self.factory.peer.name} did not answer "
                                  f"{method} within {timeout:g} s"))
        self.factory.peer.call_timed_out(self, method)

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        """Check the message (module docstring); a notice goes to
        ``factory.peer.notice``, a reply fires its call's Deferred (with
        the result bytes for a :meth:`call_raw` call, the decoded result
        otherwise) or fails it with
        :class:`~nodeapi.peers.errors.PeerRpcError`."""
        if self._closed:
            return
        try:
            msg = read_message(payload, raw_result(payload))
        except BadReply as exc:
            self.factory.peer.bad_reply(self, str(exc))
            return
        if msg.notice:
            self.factory.peer.notice(self, msg.callback, msg.payload)
            return
        call_id = msg.call_id
        entry = self._calls.pop(call_id, None)
        if entry is None:
            if self._abandoned.pop(call_id, False) is None:
                return  # the late reply of a call that timed out
            self.factory.peer.bad_reply(self, f"a reply to id {call_id}, which was not asked "
                                              f"or was answered already")
            return
        timer = self._timers.pop(call_id, None)
        if timer is not None and timer.active():
            timer.cancel()
        method, d = entry
        if msg.error is not None:
            self._raw.discard(call_id)
            d.errback(PeerRpcError(method, msg.error))
        elif call_id in self._raw:
            self._raw.discard(call_id)
            d.callback(msg.raw if msg.raw is not None else orjson.dumps(msg.result))
        else:
            d.callback(msg.result)

    def onClose(self, wasClean: bool, code, reason) -> None:
        self._raw.clear()
        timers, self._timers = self._timers, {}
        for timer in timers.values():
            if timer.active():
                timer.cancel()
        super().onClose(wasClean, code, reason)


def _as_json(result):
    """A raw call's result as JSON bytes (decoded ones encoded again)."""
    return result if type(result) is bytes else orjson.dumps(result)


class UpstreamFactory(PeerRpcFactory):
    """:class:`~nodeapi.peers.client.PeerRpcFactory` building
    :class:`UpstreamProtocol` connections for an
    :class:`~nodeapi.gateway.upstream.Upstream`.

    :param timeout: seconds a call waits for its reply.
    :param clock: ``IReactorTime`` of the timeouts."""

    protocol = UpstreamProtocol

    def __init__(self, peer, url: str, max_message_size: int, reactor, timeout: float = 5.0,
                 clock=None) -> None:
        super().__init__(peer, url, max_message_size, reactor)
        self.timeout = timeout
        self.clock = clock if clock is not None else reactor
