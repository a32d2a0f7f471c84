"""The WebSocket transport: one Autobahn protocol instance per connection.

Each connection owns an :class:`nodeapi.rpc.login.RpcSession` (login state,
allowed sets, API ids, callbacks).  Credentials in the connection address
(``ws://user:pass@host``) arrive as the upgrade request's Basic header and are
used to log in at connect (docs/rpc-access.rst transport form 5).

Limits: ``max_message_size`` (Autobahn closes with 1009 "message
too big"), ``max_calls_in_flight`` per connection (further calls answered
with an error), back-pressure and an outgoing buffer cap, and auto-ping to
drop vanished peers.

Back-pressure uses Twisted's producer/consumer interfaces, never transport
internals (:class:`_ReplyPacer`): a client that pipelines without reading
costs the node one read's worth of requests, not their replies; past
``max_outgoing_buffer`` bytes written while paused it is closed with 1008
(:class:`nodeapi.rpc.guard.PausedWriteMeter`; the node-wide budget is
:class:`nodeapi.rpc.guard.ConnectionGuard`'s).  A call's way through:
docs/DESIGN.rst, "A JSON-RPC call".
"""

import base64
import binascii
from collections import deque
from typing import Any, Optional

from autobahn.twisted.websocket import WebSocketServerFactory
from autobahn.websocket.types import ConnectionDeny
from twisted.internet.defer import Deferred, succeed
from twisted.internet.interfaces import IPushProducer
from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import implementer

from nodeapi.rpc.answer import Answer, answer
from nodeapi.rpc.framing import FramingProtocol
from nodeapi.rpc.jsonrpc import RpcError, encode_error, parse_request
from nodeapi.rpc.guard import PausedWriteMeter
from nodeapi.rpc.limits import ConnectionLimitExceeded
from nodeapi.rpc.login import RpcSession
from nodeapi.rpc.notices import NoticeFrames
from nodeapi.rpc.proxies import TrustedProxies

#: Shortest auto-ping interval and timeout, seconds (Autobahn's timers have
#: whole-second resolution, see :class:`RpcWebSocketFactory`).
MIN_PING_INTERVAL, MIN_PING_TIMEOUT = 1.0, 2.0

#: The error text for a Basic header that cannot be decoded.
MALFORMED_BASIC = "Malformed Authorization header: expected Basic base64(user:password)"


class MalformedCredentials(ValueError):
    """An ``Authorization: Basic`` header that is not ``base64(user:password)``."""


def _forwarded_for(headers) -> list:
    """The ``X-Forwarded-For`` values of a handshake's headers (Autobahn
    joins repeated headers with commas)."""
    value = headers.get("x-forwarded-for")
    return [value] if value else []


def _host(address) -> str:
    """The host part of a transport's peer address (``"?"`` without one)."""
    return str(getattr(address, "host", None) or "?")


def basic_credentials(header: Optional[str]) -> Optional[tuple]:
    """``(user, password)`` from an ``Authorization: Basic ...`` value, or
    None when there is no header or its scheme is not Basic (then the
    connection logs in as ``("", "")``, docs/wire-contract.rst section 1).

    :raises MalformedCredentials: a Basic value that is not valid base64 of
        UTF-8 ``user:password`` (graphene's ``FC_ASSERT`` on the header
        fails the connection): the request or WebSocket upgrade is refused
        with HTTP 400, so broken credentials never silently become an
        anonymous (``*``) login.  The password may contain ``:``
        (RFC 7617: the user name ends at the first one).
    """
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise MalformedCredentials(MALFORMED_BASIC) from None
    user, sep, password = decoded.partition(":")
    if not sep:
        raise MalformedCredentials(MALFORMED_BASIC)
    return (user, password)


@implementer(IPushProducer)
class _ReplyPacer:
    """The producer a WebSocket connection registers with its transport
    (Twisted's IConsumer): while the transport asks it to pause (the client
    is not reading its replies), the connection stops reading, holds the
    requests it had already read unanswered, and counts the reply bytes it
    still writes (asynchronous results, notices); when the transport's
    buffer has drained, held requests are answered and reading resumes."""

    __slots__ = ("_protocol",)

    def __init__(self, protocol: "RpcWebSocketProtocol") -> None:
        self._protocol = protocol

    def pauseProducing(self) -> None:
        protocol = self._protocol
        protocol.meter.pause()
        if protocol.transport is not None:
            protocol.transport.pauseProducing()

    def resumeProducing(self) -> None:
        protocol = self._protocol
        protocol.meter.resume()
        protocol._release_held()
        if protocol.transport is not None and not protocol.meter.paused:
            protocol.transport.resumeProducing()

    def stopProducing(self) -> None:
        """The connection is gone (its close path cleans up)."""


class RpcWebSocketProtocol(FramingProtocol):
    """JSON-RPC over one WebSocket connection (docs/wire-contract.rst sections 1-5)."""

    _log = Logger()

    def __init__(self) -> None:
        super().__init__()
        self.session: Optional[RpcSession] = None
        self.meter = PausedWriteMeter()
        self._held: Optional[deque] = None  # request payloads read while paused
        self._in_flight = 0
        self._open = False

    @property
    def unsent(self) -> int:
        """Reply bytes written while the transport asked to pause (within
        the transport's own buffer size, what the client has not taken)."""
        return self.meter.unsent

    def connectionMade(self) -> None:
        """``IProtocol.connectionMade``: after Autobahn's, this connection
        becomes the transport's streaming producer in place of the HTTP channel
        that carried the upgrade (:class:`_ReplyPacer`: reading pauses while
        replies wait)."""
        super().connectionMade()
        # the HTTP channel that carried the upgrade registered itself as the
        # transport's producer: from now on this connection is the producer
        self.transport.unregisterProducer()
        self.transport.registerProducer(_ReplyPacer(self), True)

    def onConnect(self, request) -> None:
        """Autobahn ``onConnect`` (the handshake): the :class:`RpcSession` for
        the client's address (behind trusted proxies,
        :mod:`nodeapi.rpc.proxies`), logged in with the request's Basic
        credentials or anonymously (:meth:`RpcSession.auto_login`).

        :raises ConnectionDeny: 400 for malformed credentials, 429 when the
            api-access entry's connections are all in use."""
        factory = self.factory
        try:
            creds = basic_credentials(request.headers.get("authorization"))
        except MalformedCredentials as exc:
            raise ConnectionDeny(400, str(exc)) from None
        self.session = RpcSession(factory.node, factory.access, factory.registry,
                                  websocket=True, notice=self._send_notice,
                                  notices=self._send_notices,
                                  peer=_host(factory.trusted_proxies.client_address(
                                      self.transport.getPeer(),
                                      _forwarded_for(request.headers))),
                                  failed_logins=factory.failed_logins,
                                  limit_book=factory.limit_book)
        try:
            self.session.auto_login(creds)
        except ConnectionLimitExceeded as exc:
            session, self.session = self.session, None
            session.close()
            raise ConnectionDeny(429, exc.message) from None
        return None

    def onOpen(self) -> None:
        """Autobahn ``onOpen``: the framing decided
        (:mod:`nodeapi.rpc.framing`), the connection counted
        (``factory.connections``, the ``nodeapi_websocket_connections``
        gauge)."""
        super().onOpen()  # decides the framing (nodeapi.rpc.framing)
        self._open = True
        self.factory.connections.add(self)
        if self.factory.metrics is not None:
            self.factory.metrics.ws_connections.inc()

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        """Autobahn ``onMessage``: answer the request ``payload``, or hold it,
        unanswered, while the client does not read its replies (answered when
        they drain)."""
        if self.meter.paused or self._held:
            # the client is not reading: requests already read (the rest of
            # the last chunk) wait, unanswered, until its replies drain
            if self._held is None:  # made on first use: most connections never pause
                self._held = deque()
            self._held.append(payload)
            return
        self._handle(payload)

    def _release_held(self) -> None:
        """The transport drained: answer held requests until it pauses again."""
        held = self._held or ()
        while held and not self.meter.paused and self._open:
            self._handle(held.popleft())

    def _handle(self, payload: bytes) -> None:
        try:
            request = parse_request(payload)
        except RpcError as exc:
            self._send(encode_error(exc))
            return
        if self._in_flight >= self.factory.max_calls_in_flight:
            if request.wants_reply:
                error = RpcError(-32000, f"Too many calls in flight on this connection "
                                         f"(limit {self.factory.max_calls_in_flight})")
                self._send(encode_error(error, request))
            return
        reply = answer(self.session, request, self.factory.metrics)
        if isinstance(reply, Deferred):  # asynchronous: answer when it fires
            self._in_flight += 1
            reply.addBoth(self._call_done)
            reply.addCallback(self._reply, request)
            reply.addErrback(self._reply_lost, request)
        elif request.wants_reply:
            self._send_reply(reply.body, request)

    def _call_done(self, outcome):
        """An asynchronous call finished (either way): it no longer counts
        against ``max_calls_in_flight``.  Passes ``outcome`` through."""
        self._in_flight -= 1
        return outcome

    def _reply_lost(self, failure: Failure, request) -> None:
        """Last resort when even the error reply could not be built or sent:
        log it (the call was already counted out by :meth:`_call_done`)."""
        self._log.failure("WebSocket reply to {where} failed", failure,
                          where=f"{request.api}.{request.function}")

    def _reply(self, reply: Answer, request) -> None:
        if request.wants_reply:
            self._send_reply(reply.body, request)

    def _send_reply(self, body: bytes, request) -> None:
        """Send the reply ``body`` to ``request``; one over the connection's
        message size limit (``--max-message-size``, which the client's
        side of a graphene connection applies too) is replaced by a
        JSON-RPC error saying so: the client gets an answer, the
        connection stays open."""
        limit = self.maxMessagePayloadSize
        if limit and len(body) > limit:
            body = encode_error(RpcError(
                -32000, f"The reply of {len(body)} bytes is over this node's message "
                        f"size limit of {limit} bytes (max-message-size): ask for less"),
                request)
        self._send(body)

    def _send_notice(self, callback_id: int, payload: Any) -> None:
        """Write the notice frame the factory's :class:`NoticeFrames` made
        (shared by the connections sent the same notice)."""
        if self._open and self.websocket_open:
            self._wrote(self.send_frame(self.factory.notices.frame(callback_id, payload)))

    def _send_notices(self, notices: list) -> None:
        """Write the frames of ``[(callback_id, payload), ...]`` at once."""
        if self._open and self.websocket_open:
            frame = self.factory.notices.frame
            self._wrote(self.send_frames([frame(cb, payload) for cb, payload in notices]))

    def _send(self, data: bytes) -> None:
        """Send one reply (a text message, :meth:`FramingProtocol.send_text`)."""
        if self._open:
            self.send_text(data)
            self._wrote(len(data))

    def _wrote(self, size: int) -> None:
        """``size`` bytes were written: close a client past
        ``max_outgoing_buffer`` unread bytes."""
        self.meter.wrote(size)
        if self.meter.unsent > self.factory.max_outgoing_buffer:
            self._log.warn("Closing a WebSocket client that does not read its replies "
                           "({peer}, {size} bytes unsent)", peer=self.peer,
                           size=self.meter.unsent)
            self._open = False
            self.close_with(1008, b"client too slow reading replies")

    def onClose(self, wasClean: bool, code: Optional[int], reason: Optional[str]) -> None:
        """Autobahn ``onClose``: the connection uncounted, held requests
        dropped, the session closed (its subscriptions and limits end)."""
        if self._open and self.factory.metrics is not None:
            self.factory.metrics.ws_connections.dec()
        self._open = False
        self._held = None
        self.factory.connections.discard(self)
        self.factory.closed_one()
        session, self.session = self.session, None
        if session is not None:
            # the session's callbacks point back here: closing it (and
            # dropping it) breaks the cycle without waiting for the gc
            session.close()


#: seconds a stopping node waits for its WebSocket clients to answer the
#: 1001 close frame before the reactor drops the rest
GOING_AWAY_TIMEOUT = 2.0


class RpcWebSocketFactory(WebSocketServerFactory):
    """Shared state of all WebSocket connections (not on ``factory.server``,
    which Autobahn uses).

    :param node: :class:`nodeapi.node.Node`; :param access: ApiAccess;
    :param registry: accessor name -> ApiSet class;
    :param max_message_size: bytes per message and per frame;
    :param auto_ping_interval: seconds between pings (0 = off, at least
        :data:`MIN_PING_INTERVAL`); a peer that does not answer within the
        same time (at least :data:`MIN_PING_TIMEOUT`) is dropped;
    :param max_calls_in_flight: unanswered calls allowed per connection;
    :param max_outgoing_buffer: bytes of unsent replies before a client is
        disconnected.
    :param failed_logins: :class:`nodeapi.rpc.failed_logins.FailedLogins`
        of the site, or None.
    :param limit_book: the site's :class:`nodeapi.rpc.limits.LimitBook`, or None.
    :param trusted_proxies: the site's
        :class:`~nodeapi.rpc.proxies.TrustedProxies` (a handshake's
        ``X-Forwarded-For`` from one of them gives the client's address).
    """

    protocol = RpcWebSocketProtocol

    def __init__(self, node, access, registry, *, max_message_size: int = 4 * 1024 * 1024,
                 auto_ping_interval: float = 30.0, max_calls_in_flight: int = 100,
                 max_outgoing_buffer: int = 16 * 1024 * 1024, metrics=None,
                 reactor=None, failed_logins=None, limit_book=None,
                 trusted_proxies: TrustedProxies = TrustedProxies()) -> None:
        super().__init__(reactor=reactor)
        self.node, self.access, self.registry = node, access, registry
        self.trusted_proxies = trusted_proxies
        self.failed_logins, self.limit_book = failed_logins, limit_book
        self.max_calls_in_flight = max_calls_in_flight
        self.max_outgoing_buffer = max_outgoing_buffer
        self.metrics = metrics
        self.connections: set = set()
        self._all_closed: Optional[Deferred] = None
        self.notices = NoticeFrames(self.reactor, node.api_answers.objects)
        options = dict(maxMessagePayloadSize=max_message_size,
                       maxFramePayloadSize=max_message_size, webStatus=False,
                       openHandshakeTimeout=30, closeHandshakeTimeout=5,
                       # protocol violations and oversized messages get a close
                       # frame with their code (1002, 1009) instead of a drop
                       failByDrop=False)
        if auto_ping_interval:
            # Autobahn schedules these through txaio's batched timer, which
            # truncates deadlines to whole seconds: a 0.5 s timeout can fire
            # before the pong is back, and a sub-second interval pings in a
            # loop.  So the interval is at least 1 s and the timeout at least
            # 2 s (an answering peer always has over a second to answer).
            interval = max(float(auto_ping_interval), MIN_PING_INTERVAL)
            options.update(autoPingInterval=interval,
                           autoPingTimeout=max(interval, MIN_PING_TIMEOUT))
        self.setProtocolOptions(**options)

    def going_away(self, timeout: float = GOING_AWAY_TIMEOUT) -> Deferred:
        """A clean stop: send every open connection a close frame with code
        1001 (going away, RFC 6455 7.4.1) and reason ``node stopping``.
        The Deferred fires once every connection has closed, or after
        ``timeout`` seconds (the reactor's shutdown drops the others);
        never fails."""
        if not self.connections:
            return succeed(None)
        for protocol in list(self.connections):
            protocol.close_with(1001, b"node stopping")
        done = self._all_closed = Deferred()
        timer = self.reactor.callLater(timeout, self._give_up)
        done.addBoth(lambda result: timer.cancel() if timer.active() else None)
        return done

    def _give_up(self) -> None:
        done, self._all_closed = self._all_closed, None
        if done is not None and not done.called:
            done.callback(None)

    def closed_one(self) -> None:
        """A connection has closed: fire :meth:`going_away`'s Deferred when
        it was the last."""
        if self._all_closed is not None and not self.connections:
            self._give_up()
