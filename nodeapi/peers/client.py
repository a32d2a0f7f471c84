"""The WebSocket side of a connection to another node: an Autobahn client
protocol that speaks graphene's JSON-RPC (docs/wire-contract.rst sections
3-5), owned by a :class:`~nodeapi.peers.remote.RemoteNode`.

:class:`RemoteProtocol` sends ``{"id", "method": "call", "params": [api,
function, args]}`` requests (``api`` a set name or a numeric id), at most
``max_in_flight`` at once (more wait in order, at most ``max_waiting``),
each failing with :class:`~nodeapi.peers.errors.UpstreamTimeout` when no
reply came within ``timeout`` seconds (waiting included).  Every message
is checked first (:func:`~nodeapi.peers.replies.read_message`: JSON, depth,
fc's number range, one integer id), and a reply must answer a call this
connection asked and that is still open; a late reply to a call that timed
out is dropped quietly (the :data:`ABANDONED_KEPT` newest such ids are
remembered).  A message that fails, and one over the size limit (Autobahn
closes with 1009), is reported to the remote node, which drops the
connection.

A raw call (``raw=True``) fires with the reply's result as JSON bytes: the
upstream's own text when the reply has the form bitshares-core writes,
``{"id":N,"jsonrpc":"2.0","result":...}`` (bitshares-fc
src/rpc/websocket_api.cpp ``fc::json::to_string(reply)`` of an
``fc::rpc::response``, members in the order ``(id)(jsonrpc)(result)(error)``,
include/fc/rpc/state.hpp), else encoded again; the gateway passes them on
unchanged (:func:`~nodeapi.peers.replies.raw_result`).
"""

import bisect
import collections

import orjson
import txaio
from autobahn.twisted.websocket import WebSocketClientFactory, WebSocketClientProtocol
from twisted.internet import defer

from nodeapi.peers.errors import PeerDisconnected, PeerRpcError, RemoteBusy, UpstreamTimeout
from nodeapi.peers.replies import BadReply, raw_result, read_message

#: Seconds between WebSocket pings, and the wait for the pong: a node
#: silent for that long is dropped (then the remote node reconnects).
PING_INTERVAL = 20
#: ids of calls that timed out whose late replies are still expected
ABANDONED_KEPT = 1024
#: upper bounds (seconds) of the latency histogram buckets
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                   10.0)


def _errors_only():
    """Autobahn's logger for these connections: errors only (a failed
    opening handshake is an info and a warning line of Autobahn's at every
    retry; the remote node logs one line of its own)."""
    logger = txaio.make_logger()
    logger.set_log_level("error")
    return logger


class CallFigures:
    """What the calls of one remote node did, over all its connections
    (the gateway's per-upstream metrics).

    :ivar in_flight: calls sent or waiting, not answered.
    :ivar calls, errors, lost, timeouts: calls made; answered with an
        error; lost with their connection; not answered in time.
    :ivar latency_sum: seconds from call to answer, in total.
    """

    def __init__(self) -> None:
        self.in_flight = self.calls = self.errors = self.lost = self.timeouts = 0
        self.latency_sum = 0.0
        self._counts = [0] * (len(LATENCY_BUCKETS) + 1)  # per bucket, not cumulative

    @property
    def latency_buckets(self) -> list:
        """Cumulative counts of answered calls per :data:`LATENCY_BUCKETS`
        bound, +Inf last (Prometheus' histogram form)."""
        out, total = [], 0
        for count in self._counts:
            total += count
            out.append(total)
        return out

    def started(self) -> None:
        """A call is made."""
        self.in_flight += 1
        self.calls += 1

    def answered(self, seconds: float) -> None:
        """A call was answered after ``seconds``."""
        self.in_flight -= 1
        self.latency_sum += seconds
        self._counts[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1

    def failed(self, error: Exception) -> None:
        """A call failed with ``error``."""
        self.in_flight -= 1
        if isinstance(error, UpstreamTimeout):
            self.timeouts += 1
        elif isinstance(error, PeerDisconnected):
            self.lost += 1
        else:
            self.errors += 1


class _Call:
    """One call of a connection: sent (``call_id`` set) or waiting."""

    __slots__ = ("api", "method", "args", "raw", "d", "timer", "call_id", "started")

    def __init__(self, api, method, args, raw, d, started) -> None:
        self.api, self.method, self.args, self.raw, self.d = api, method, args, raw, d
        self.started = started
        self.timer = None
        self.call_id = None


class RemoteProtocol(WebSocketClientProtocol):
    """One WebSocket connection to another node's RPC endpoint (module
    docstring); ``factory.remote`` is its
    :class:`~nodeapi.peers.remote.RemoteNode`, told of the opening
    (``opened``), notices (``noticed``), bad messages (``bad_message``),
    timed-out calls (``call_timed_out``), a failed handshake
    (``handshake_failed``) and the close (``closed``).

    :ivar opened: a Deferred firing with this protocol when the WebSocket
        handshake is done, failing with ``PeerDisconnected`` when it fails.
    :ivar handshake_error: why the opening handshake failed, or None.
    """

    log = _errors_only()

    def __init__(self) -> None:
        super().__init__()
        self.opened = defer.Deferred()
        self.handshake_error = None
        self._next_id = 1
        self._sent: dict = {}  # call id -> _Call
        self._waiting: collections.deque = collections.deque()
        self._abandoned: collections.OrderedDict = collections.OrderedDict()
        self._closed = False

    @property
    def closed(self) -> bool:
        """True once the connection is closing or closed (its pending calls
        fail before the owner hears of the close)."""
        return self._closed

    def pending_methods(self) -> list:
        """The method names of the calls sent or waiting, not answered,
        oldest first."""
        return [c.method for c in self._sent.values()] + [c.method for c in self._waiting]

    def onOpen(self) -> None:
        """Autobahn calls this once the opening handshake is done: fire
        :attr:`opened`, then tell the remote node."""
        self.opened.callback(self)
        self.factory.remote.opened(self)

    def call(self, api, method: str, args: list, raw: bool = False) -> defer.Deferred:
        """Call ``method`` of API set ``api`` with positional ``args``
        (ids from 1, per connection; docs/wire-contract.rst section 3).

        :returns: a Deferred firing with the reply's ``result`` (decoded,
            or its JSON bytes when ``raw``); failing with
            :class:`~nodeapi.peers.errors.PeerRpcError` for an ``error``
            reply, :class:`~nodeapi.peers.errors.UpstreamTimeout` when no
            reply came within the factory's ``timeout`` seconds,
            :class:`~nodeapi.peers.errors.RemoteBusy` when ``max_waiting``
            calls wait already, :class:`~nodeapi.peers.errors.PeerDisconnected`
            when the connection is (or gets) closed first."""
        factory = self.factory
        figures = factory.remote.figures
        if self._closed:
            return defer.fail(PeerDisconnected(
                f"{factory.remote.what}: connection closed before {method}"))
        if len(self._sent) >= factory.max_in_flight and \
                len(self._waiting) >= factory.max_waiting:
            return defer.fail(RemoteBusy(
                f"{factory.remote.what}: {len(self._waiting)} calls wait already"))
        clock = factory.clock
        call = _Call(api, method, args, raw, defer.Deferred(), clock.seconds())
        figures.started()
        call.timer = clock.callLater(factory.timeout, self._timed_out, call)
        if len(self._sent) < factory.max_in_flight:
            self._send(call)
        else:
            self._waiting.append(call)

        def counted(result):
            figures.answered(max(clock.seconds() - call.started, 0.0))
            return result

        def failed(failure):
            figures.failed(failure.value)
            return failure

        return call.d.addCallbacks(counted, failed)

    def _send(self, call: _Call) -> None:
        call.call_id = self._next_id
        self._next_id += 1
        self._sent[call.call_id] = call
        self.sendMessage(orjson.dumps({"id": call.call_id, "method": "call",
                                       "params": [call.api, call.method, call.args]}))

    def _send_waiting(self) -> None:
        while self._waiting and len(self._sent) < self.factory.max_in_flight \
                and not self._closed:
            self._send(self._waiting.popleft())

    def _timed_out(self, call: _Call) -> None:
        call.timer = None
        if call.call_id is None:
            self._waiting.remove(call)
        else:
            del self._sent[call.call_id]
            self._abandoned[call.call_id] = None
            while len(self._abandoned) > ABANDONED_KEPT:
                self._abandoned.popitem(last=False)
        remote = self.factory.remote
        call.d.errback(UpstreamTimeout(f"{remote.what} did not answer {call.method} within "
                                       f"{self.factory.timeout:g} s"))
        self._send_waiting()
        remote.call_timed_out(self, call.method)

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        """Autobahn calls this for each complete message (at most the
        factory's ``max_message_size`` bytes): checked (module docstring);
        a notice goes to the remote node, a reply fires its call."""
        if self._closed:
            return
        try:
            msg = read_message(payload, raw_result(payload))
        except BadReply as exc:
            self.factory.remote.bad_message(self, str(exc))
            return
        if msg.notice:
            self.factory.remote.noticed(self, msg.callback, msg.payload)
            return
        call = self._sent.pop(msg.call_id, None)
        if call is None:
            if self._abandoned.pop(msg.call_id, False) is None:
                return  # the late reply of a call that timed out
            self.factory.remote.bad_message(
                self, f"a reply to id {msg.call_id}, which was not asked or was answered "
                      f"already")
            return
        if call.timer is not None and call.timer.active():
            call.timer.cancel()
        self._send_waiting()
        if msg.error is not None:
            call.d.errback(PeerRpcError(call.method, msg.error))
        elif call.raw:
            call.d.callback(msg.raw if msg.raw is not None else orjson.dumps(msg.result))
        else:
            call.d.callback(msg.result)

    def onClose(self, wasClean: bool, code, reason) -> None:
        """Autobahn calls this when the connection is gone, cleanly or not,
        a failed opening handshake included: a message over the size limit
        (Autobahn closed with 1009) is reported first; every pending call
        fails with ``PeerDisconnected`` and later calls fail at once; a
        failed handshake fails :attr:`opened`; then the remote node is told
        (``handshake_failed`` or ``closed``)."""
        self._closed = True
        remote = self.factory.remote
        if self.localCloseCode == self.CLOSE_STATUS_CODE_MESSAGE_TOO_BIG:
            remote.message_too_large(self, self.maxMessagePayloadSize)
        calls = list(self._sent.values()) + list(self._waiting)
        self._sent, self._waiting = {}, collections.deque()
        for call in calls:
            if call.timer is not None and call.timer.active():
                call.timer.cancel()
            call.d.errback(PeerDisconnected(f"{remote.what}: connection closed during "
                                            f"{call.method}"))
        if not self.opened.called:
            self.handshake_error = str(reason or f"closed with {code}")
            self.opened.addErrback(lambda _failure: None)  # nobody waiting: no log
            self.opened.errback(PeerDisconnected(
                f"WebSocket handshake failed: {self.handshake_error}"))
            remote.handshake_failed(self, self.handshake_error)
            return
        remote.closed(self, code, reason)


class RemoteFactory(WebSocketClientFactory):
    """Builds :class:`RemoteProtocol` connections for ``remote`` (a
    :class:`~nodeapi.peers.remote.RemoteNode`; ``url``
    ``ws://host:port/path``, IPv6 hosts in brackets, also in the ``Host``
    header).

    :param max_message_size: the largest message (and frame payload) in
        bytes accepted; a larger one closes the connection with 1009.
    :param timeout: seconds a call waits for its reply.
    :param max_in_flight: calls sent and not answered at once.
    :param max_waiting: calls waiting for their turn, at most.
    :param reactor: the reactor Autobahn schedules its pings on.
    :param clock: ``IReactorTime`` of the call timeouts (default reactor).

    WebSocket pings every :data:`PING_INTERVAL` s.  Not ``noisy``: the
    ``ClientService`` starts and stops the factory at each reconnection."""

    protocol = RemoteProtocol
    noisy = False

    def __init__(self, remote, url: str, *, max_message_size: int, timeout: float,
                 max_in_flight: int, max_waiting: int, reactor, clock=None) -> None:
        super().__init__(url, reactor=reactor)
        self.set_url(url)
        self.remote = remote
        self.timeout = timeout
        self.max_in_flight, self.max_waiting = max_in_flight, max_waiting
        self.clock = clock if clock is not None else reactor
        # failByDrop off: a refused message is answered with a close frame,
        # whose code (1009 for one too large) the protocol reads back.
        self.setProtocolOptions(maxMessagePayloadSize=max_message_size,
                                maxFramePayloadSize=max_message_size, failByDrop=False,
                                autoPingInterval=PING_INTERVAL,
                                autoPingTimeout=PING_INTERVAL)

    def set_url(self, url: str) -> None:
        """Connect to ``url`` from the next connection on (Host header, path)."""
        self.setSessionParameters(url=url)
        if ":" in self.host:  # Autobahn writes "Host: ::1:8090" otherwise
            self.host = f"[{self.host}]"
