"""The HTTP transport: JSON-RPC on ``POST /rpc`` and ``POST /``.

Every request is a fresh session, logged in from its ``Authorization: Basic``
header or as ``login("", "")`` (docs/wire-contract.rst section 1), so restricted
sets are reachable over HTTP only with credentials that allow them; ids other
than 0 and 1 mean nothing here (forms 2, 3 and 4 of docs/rpc-access.rst).
Status codes and bodies: docs/wire-contract.rst section 4; a malformed Basic
header is refused with 400 before the body is read as JSON-RPC (see
:func:`nodeapi.rpc.websocket.basic_credentials`).

The body limit is enforced while the body arrives (:class:`BoundedRequest`):
a declared ``Content-Length`` over ``max_message_size`` is answered 413 as
soon as the headers are in, a chunked body as soon as its running total
passes the limit; nothing past the limit is stored.

The request head (the request line and headers, including those of a
WebSocket upgrade) must be complete within ``handshake_timeout`` seconds of
its first byte (:class:`RpcChannel`); trickling bytes does not extend it.
Timers run on the site's reactor (``channel.callLater``), never the global
one.
"""

from io import BytesIO
from typing import Optional

import orjson
from twisted.internet.defer import Deferred, succeed
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.http import RESPONSES, HTTPChannel
from twisted.web.server import NOT_DONE_YET, Request

from nodeapi.rpc.answer import answer
from nodeapi.rpc.jsonrpc import RpcError, encode_error, parse_request
from nodeapi.rpc.login import RpcSession
from nodeapi.rpc.websocket import MalformedCredentials, basic_credentials

log = Logger()


def write_json(request, status: int, body: Optional[bytes]) -> None:
    """Finish ``request`` with ``status`` and a JSON ``body`` (None: 204)."""
    request.setResponseCode(status)
    if body is None:
        request.finish()
        return
    request.setHeader(b"content-type", b"application/json")
    request.setHeader(b"content-length", str(len(body)).encode())
    request.write(body)
    request.finish()


def plain_error(status: int, code: int, message: str) -> bytes:
    """A JSON-RPC error body for requests that never reached RPC parsing
    (wrong path or method, body too large)."""
    return orjson.dumps({"id": None, "jsonrpc": "2.0",
                         "error": {"code": code, "message": message}})


#: After a 413, the request bytes still arriving are read and dropped (so the
#: client sees the answer instead of a reset) for at most this many seconds
#: and this many bytes; then the connection is aborted.
LINGER_SECONDS = 2.0
LINGER_BYTES = 1024 * 1024


def too_large_body(limit: int) -> bytes:
    """The JSON error body of a 413 answer (docs/wire-contract.rst section 4:
    ``-32600``, ``"id": null``)."""
    return plain_error(413, -32600, f"Request body over {limit} bytes")


class BoundedRequest(Request):
    """A :class:`twisted.web.server.Request` that refuses an oversized body
    while it arrives instead of after twisted.web has stored all of it.

    The limit is ``channel.site.max_message_size`` (bytes; no limit when the
    site has none).  ``gotLength`` refuses a declared ``Content-Length``
    over it before any body byte is read (and drops ``Expect: 100-continue``
    so no ``100 Continue`` follows the answer); ``handleContentChunk``
    refuses once the running total of a chunked body passes it.  A refusal
    writes ``413`` with the JSON error of :func:`too_large_body` and
    ``Connection: close``, half-closes the connection, and from then on drops
    whatever the client still sends (at most :data:`LINGER_BYTES` bytes or
    :data:`LINGER_SECONDS` seconds, then the connection is aborted); the
    request never reaches a resource.  Bodies are kept in memory (at most
    the limit), never in a temporary file.

    :ivar received: body bytes accepted so far.
    :ivar refused: True once the request was answered 413.
    """

    received = 0
    refused = False
    _linger = None
    _dropped = 0

    def _limit(self) -> Optional[int]:
        return getattr(self.channel.site, "max_message_size", None)

    def getClientAddress(self):
        """The client's address: the connection's peer, or, when that is
        one of the site's trusted proxies, the client its
        ``X-Forwarded-For`` header names (:mod:`nodeapi.rpc.proxies`)."""
        peer = super().getClientAddress()
        proxies = getattr(self.channel.site, "trusted_proxies", None)
        if not proxies:
            return peer
        return proxies.client_address(
            peer, [v.decode("latin-1") for v in
                   self.requestHeaders.getRawHeaders(b"x-forwarded-for", ())])

    def gotLength(self, length: Optional[int]) -> None:
        """The headers are in; ``length`` is the declared body length or
        None (chunked)."""
        limit = self._limit()
        if limit is not None and length is not None and length > limit:
            self.requestHeaders.removeHeader(b"expect")
            self._refuse(limit)
            return
        self.content = BytesIO()

    def handleContentChunk(self, data: bytes) -> None:
        """Store a piece of the body unless the total passes the limit."""
        if self.refused:
            return
        self.received += len(data)
        limit = self._limit()
        if limit is not None and self.received > limit:
            self._refuse(limit)
            return
        self.content.write(data)

    def requestReceived(self, command: bytes, path: bytes, version: bytes) -> None:
        """The whole request is in: processed unless it was refused."""
        if not self.refused:
            super().requestReceived(command, path, version)

    def _refuse(self, limit: int) -> None:
        self.refused = True
        if self.content is not None:
            self.content.close()
            self.content = None
        channel = self.channel
        log.info("Refused an HTTP body over {limit} bytes from {peer}", limit=limit,
                 peer=str(channel.transport.getPeer()))
        channel.persistent = False
        # every later byte of this connection is dropped, not parsed
        channel.rawDataReceived = self._drop
        body = too_large_body(limit)
        transport = channel.transport
        transport.write(b"HTTP/1.1 413 " + RESPONSES[413] + b"\r\n"
                        b"Content-Type: application/json\r\n"
                        b"Content-Length: " + str(len(body)).encode() + b"\r\n"
                        b"Connection: close\r\n\r\n" + body)
        if hasattr(transport, "loseWriteConnection"):
            transport.loseWriteConnection()
            # the channel's callLater is the site's reactor (HTTPFactory)
            self._linger = channel.callLater(LINGER_SECONDS, transport.abortConnection)
        else:
            transport.loseConnection()

    def _drop(self, data: bytes) -> None:
        """What the client sends after a refusal: counted and dropped."""
        self._dropped += len(data)
        if self._dropped > LINGER_BYTES and self.channel is not None:
            self.channel.transport.abortConnection()

    def connectionLost(self, reason) -> None:
        """The connection is gone: stop the linger timer too."""
        if self._linger is not None and self._linger.active():
            self._linger.cancel()
        self._linger = None
        super().connectionLost(reason)


#: the line logged when a request head misses its deadline (a site may
#: give its own as ``head_timeout_text``; fields ``peer`` and ``timeout``)
HEAD_TIMEOUT_TEXT = ("RPC connection from {peer} aborted: request head or WebSocket handshake "
                     "not complete after {timeout} s (--handshake-timeout)")


class RpcChannel(HTTPChannel):
    """An HTTP channel whose request heads have a deadline and which answers
    a request only once its transport can take the response.

    A new connection has ``site.handshake_timeout`` seconds (None or 0: no
    deadline) from its accept to complete its first request head; a
    keep-alive connection has as long from the first byte of each later
    head (the idle time between requests stays under twisted.web's own
    ``timeOut``).  Each byte resets twisted.web's idle timer but never this
    deadline, so a client trickling a head one byte at a time is cut off
    in time.  When it passes, the connection is aborted and the event is
    logged through the ``events`` (:class:`nodeapi.rpc.throttled_log.ThrottledLog`)
    of the site's ``guard``, in the site's ``head_timeout_text``
    (default :data:`HEAD_TIMEOUT_TEXT`).
    """

    _awaiting_head = True
    _deadline = None
    #: True while the transport asks the channel to pause (the client is not
    #: reading its responses); see :meth:`when_writable`.
    writes_paused = False
    _writable = None

    def pauseProducing(self) -> None:
        """``IPushProducer.pauseProducing`` (the transport is full): reads
        pause and :meth:`when_writable` waits."""
        self.writes_paused = True
        super().pauseProducing()

    def resumeProducing(self) -> None:
        """``IPushProducer.resumeProducing`` (the transport drained): reads
        resume and the requests waiting in :meth:`when_writable` go on."""
        self.writes_paused = False
        super().resumeProducing()
        waiting, self._writable = self._writable, None
        for d in waiting or ():
            d.callback(None)

    def when_writable(self) -> Deferred:
        """A Deferred firing once the transport has drained (at once when it
        is not paused): a request read while the client does not take its
        responses waits here, unanswered, so pipelined requests cost the
        node their bytes, not their responses."""
        if not self.writes_paused:
            return succeed(None)
        d = Deferred()
        if self._writable is None:
            self._writable = []
        self._writable.append(d)
        return d

    def connectionMade(self) -> None:
        """``IProtocol.connectionMade``: the first request head's deadline
        (the site's ``handshake_timeout``) starts."""
        super().connectionMade()
        self._start_deadline()

    def dataReceived(self, data: bytes) -> None:
        """``IProtocol.dataReceived``: a head's first byte starts its deadline."""
        if self._awaiting_head and self._deadline is None:
            self._start_deadline()
        super().dataReceived(data)

    def allHeadersReceived(self) -> None:
        """``HTTPChannel.allHeadersReceived``: the head came in time; its
        deadline is cancelled."""
        self._awaiting_head = False
        self._cancel_deadline()
        super().allHeadersReceived()

    def requestDone(self, request) -> None:
        """``HTTPChannel.requestDone``: a keep-alive connection waits for
        its next head."""
        # the next head's deadline starts with its first byte (dataReceived)
        self._awaiting_head = True
        super().requestDone(request)

    def connectionLost(self, reason) -> None:
        """``IProtocol.connectionLost``: the deadline is cancelled."""
        self._cancel_deadline()
        super().connectionLost(reason)

    def _start_deadline(self) -> None:
        timeout = getattr(self.site, "handshake_timeout", None)
        if timeout:
            self._deadline = self.callLater(timeout, self._head_too_slow, timeout)

    def _cancel_deadline(self) -> None:
        deadline, self._deadline = self._deadline, None
        if deadline is not None and deadline.active():
            deadline.cancel()

    def _head_too_slow(self, timeout: float) -> None:
        self._deadline = None
        if self.transport is None:  # upgraded or gone
            return
        guard = getattr(self.site, "guard", None)
        peer = str(getattr(self.transport.getPeer(), "host", "?"))
        if guard is not None:
            guard.events.event("handshake_timeout",
                               getattr(self.site, "head_timeout_text", HEAD_TIMEOUT_TEXT),
                               peer=peer, timeout=timeout)
        self.transport.abortConnection()


class HttpRpc:
    """Answers one HTTP JSON-RPC request.

    :param node, access, registry: as for :class:`RpcSession`.
    :param max_message_size: largest accepted body in bytes (413 above).
    :param failed_logins: :class:`nodeapi.rpc.failed_logins.FailedLogins`
        of the site, or None.
    :param limit_book: the site's :class:`nodeapi.rpc.limits.LimitBook`, or None.
    """

    def __init__(self, node, access, registry, max_message_size: int, metrics=None, *,
                 failed_logins=None, limit_book=None) -> None:
        self.node, self.access, self.registry = node, access, registry
        self.failed_logins, self.limit_book = failed_logins, limit_book
        self.max_message_size = max_message_size
        self.metrics = metrics

    def render_POST(self, request):
        """Answer one POST once its channel can take the response (see
        :meth:`RpcChannel.when_writable`)."""
        channel = request.channel
        if not getattr(channel, "writes_paused", False):  # also a channel without pacing
            return self._answer(request)
        d = channel.when_writable()
        d.addCallback(lambda _: None if request.finished else self._answer(request))
        return NOT_DONE_YET

    def _answer(self, request):
        """Answer one POST (its body is already bounded by
        :class:`BoundedRequest`; checked again here for a Site built with
        another request factory)."""
        request.content.seek(0)
        body = request.content.read(self.max_message_size + 1)
        if len(body) > self.max_message_size:
            write_json(request, 413, too_large_body(self.max_message_size))
            return NOT_DONE_YET
        header = request.getHeader(b"authorization")
        try:
            creds = basic_credentials(header.decode("latin-1") if header is not None else None)
        except MalformedCredentials as exc:
            write_json(request, 400, plain_error(400, -32600, str(exc)))
            return NOT_DONE_YET
        try:
            rpc_request = parse_request(body)
        except RpcError as exc:
            write_json(request, exc.http_status, encode_error(exc))
            return NOT_DONE_YET
        session = RpcSession(self.node, self.access, self.registry, websocket=False,
                             peer=str(getattr(request.getClientAddress(), "host", "?")),
                             failed_logins=self.failed_logins, limit_book=self.limit_book)
        session.auto_login(creds)
        try:
            reply = answer(session, rpc_request, self.metrics)
        except Exception:
            session.close()
            reply = Deferred.fromFailure(Failure())
        if not isinstance(reply, Deferred):  # the common case: answered at once
            session.close()
            try:
                self._respond(request, rpc_request, reply)
            except Exception:
                self._last_resort(request, rpc_request, Failure(), False)
            return NOT_DONE_YET
        gone = []
        request.notifyFinish().addErrback(lambda _: gone.append(True))

        def respond(reply):
            session.close()
            if not gone:
                self._respond(request, rpc_request, reply)

        reply.addCallback(respond)
        reply.addErrback(lambda f: self._last_resort(request, rpc_request, f, bool(gone)))
        return NOT_DONE_YET

    @staticmethod
    def _last_resort(request, rpc_request, failure, gone: bool) -> None:
        """Even the reply could not be made or written: log it and answer
        500 if the client is still there and nothing was sent yet."""
        log.failure("HTTP reply to {where} failed", failure,
                    where=f"{rpc_request.api}.{rpc_request.function}")
        if not gone and not request.finished:
            write_json(request, 500, plain_error(500, -32603, "Internal error"))

    @staticmethod
    def _respond(request, rpc_request, reply) -> None:
        """Write ``reply`` (an :class:`~nodeapi.rpc.answer.Answer`), or 204
        when the request wants none."""
        if rpc_request.wants_reply:
            write_json(request, reply.status, reply.body)
        else:
            write_json(request, 204, None)
