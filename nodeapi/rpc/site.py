"""One twisted.web Site on ``--rpc-endpoint`` serving WebSocket and HTTP.

Every request first passes the :class:`~nodeapi.rpc.browser_guard.BrowserGuard`
(``Host`` and ``Origin`` refused with 403, a POST body that is not
``application/json`` with 415), then: ``/`` (and any path) with
``Upgrade: websocket`` -> the Autobahn WebSocket resource; a path of
``routes`` (the devnet's faucet) -> its resource, each request charged as
one call to the per-address limits and the anonymous entry's; ``POST /``
and ``POST /rpc`` -> HTTP JSON-RPC; anything else -> a JSON error (404 for
other paths, 405 for other methods, 400 for a request with more than one
``Authorization`` header), never an HTML page or a traceback.  The access
log is off (one line per call would dominate the cost of a call).  Request bodies are bounded while they arrive
(:class:`nodeapi.rpc.http.BoundedRequest`, 413 past ``max_message_size``).
"""

from typing import Optional

from autobahn.twisted.resource import WebSocketResource
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Site

from nodeapi.errors import ClientLimitExceeded
from nodeapi.rpc.browser_guard import BrowserGuard
from nodeapi.rpc.failed_logins import FailedLogins
from nodeapi.rpc.guard import ConnectionGuard, RpcLimits
from nodeapi.rpc.http import BoundedRequest, HttpRpc, RpcChannel, plain_error, write_json
from nodeapi.rpc.limits import LimitBook
from nodeapi.rpc.proxies import ProxyHeaderReader, TrustedProxies
from nodeapi.rpc.websocket import RpcWebSocketFactory

RPC_PATHS = (b"/", b"/rpc", b"/rpc/", b"/ws")

#: The error text of a request (HTTP or WebSocket upgrade) carrying more than
#: one ``Authorization`` header, refused with HTTP 400.
DUPLICATE_AUTHORIZATION = "More than one Authorization header"


class RpcRoot(Resource):
    """The root resource: routes every request itself (``isLeaf``; module
    text).

    :param browser_guard: the :class:`BrowserGuard` (default: loopback
        names only, :meth:`BrowserGuard.from_options`).
    :param access: the :class:`~nodeapi.rpc.access.ApiAccess` whose
        anonymous entry's limits a route's request is charged to, with
        ``limit_book`` (the site's :class:`~nodeapi.rpc.limits.LimitBook`,
        or None: nothing charged).
    :param events: the site's :class:`~nodeapi.rpc.throttled_log.ThrottledLog`
        (a refused Host, Origin or Content-Type is logged through it, one
        line a minute per kind), or None.
    """

    isLeaf = True

    def __init__(self, ws_resource: WebSocketResource, http: HttpRpc,
                 routes: Optional[dict] = None, *, browser_guard: Optional[BrowserGuard] = None,
                 access=None, limit_book=None, events=None) -> None:
        super().__init__()
        self.ws_resource = ws_resource
        self.http = http
        self.routes = dict(routes or {})
        self.browser_guard = browser_guard or BrowserGuard.from_options()
        self.access, self.limit_book, self.events = access, limit_book, events

    def render(self, request):
        """``IResource.render`` of every path: a request with two
        Authorization headers is refused (400), then the browser guard
        (Host, Origin: 403), then a WebSocket upgrade goes to the WebSocket
        resource; any other request passes the content type check (415),
        then goes to its route (charged a call: 429 over the rate) or, on
        ``/`` and ``/rpc``, to the HTTP JSON-RPC resource as a POST (404
        elsewhere, 405 for another method)."""
        if len(request.requestHeaders.getRawHeaders(b"authorization", ())) > 1:
            # which one would count is ambiguous (twisted.web reads the last,
            # Autobahn joins them): refused on both transports
            write_json(request, 400, plain_error(400, -32600, DUPLICATE_AUTHORIZATION))
            return NOT_DONE_YET
        guard = self.browser_guard
        refusal = guard.host_refusal(request) or guard.origin_refusal(request)
        if refusal is not None:
            return self._refuse(request, 403, refusal)
        upgrade = (request.getHeader(b"upgrade") or b"").lower()
        if upgrade == b"websocket":
            return self.ws_resource.render(request)
        refusal = guard.content_type_refusal(request)
        if refusal is not None:
            return self._refuse(request, 415, refusal)
        route = self.routes.get(request.path)
        if route is not None:
            refusal = self._charge_route_call(request)
            if refusal is not None:
                write_json(request, 429, plain_error(429, refusal.code, refusal.message))
                return NOT_DONE_YET
            return route.render(request)
        if request.path not in RPC_PATHS:
            write_json(request, 404, plain_error(404, -32601,
                                                 "Not found: JSON-RPC is served on POST /rpc "
                                                 "and POST /, WebSocket on /"))
            return NOT_DONE_YET
        if request.method != b"POST":
            request.setHeader(b"allow", b"POST")
            write_json(request, 405, plain_error(405, -32600,
                                                 "Method not allowed: use POST with a JSON-RPC "
                                                 "body, or a WebSocket upgrade"))
            return NOT_DONE_YET
        return self.http.render_POST(request)


    def _refuse(self, request, status: int, reason: str):
        """Answer a request the browser guard refused, and log it."""
        if self.events is not None:
            self.events.event("browser_refused", "RPC request from {peer} refused: {reason}",
                              peer=str(getattr(request.getClientAddress(), "host", "?")),
                              reason=reason)
        write_json(request, status, plain_error(status, -32600, reason))
        return NOT_DONE_YET

    def _charge_route_call(self, request) -> Optional[ClientLimitExceeded]:
        """Charge a route's request as one call of an anonymous session
        from its address (the per-address limits and the ``*`` entry's,
        as an HTTP JSON-RPC call is charged); the refusal, or None."""
        if self.limit_book is None:
            return None
        host = str(getattr(request.getClientAddress(), "host", "?"))
        limits = self.limit_book.session(host, websocket=False)
        try:
            entry = self.access.anonymous_entry() if self.access is not None else None
            if entry is not None:
                limits.log_in(entry.user, entry.limits)
            limits.call()
        except ClientLimitExceeded as exc:
            return exc
        finally:
            limits.close()
        return None


class RpcSite(Site):
    """A Site without access logging and without HTML tracebacks, whose
    requests are :class:`BoundedRequest` (bodies over ``max_message_size``
    bytes are refused with 413 while they arrive), whose channels are
    :class:`RpcChannel` (request-head deadline) and whose connections are
    accepted through a :class:`nodeapi.rpc.guard.ConnectionGuard`
    (connection limits, unsent-bytes budget).

    :param max_message_size: bytes; None: no body limit.
    :param handshake_timeout: seconds; None: no deadline.
    :param guard: the ConnectionGuard, or None (connections not wrapped).
    :param limit_book: the :class:`nodeapi.rpc.limits.LimitBook` of the
        limits per user and per address, or None when none is configured.
    :param trusted_proxies: the :class:`~nodeapi.rpc.proxies.TrustedProxies`
        whose PROXY headers (read here, per connection) and
        ``X-Forwarded-For`` headers (read by :class:`BoundedRequest` and the
        WebSocket handshake) give the client's address; default none.
    """

    displayTracebacks = False
    #: no "Starting factory <... object at 0x...>" lines: the listening
    #: service logs the port once in words
    noisy = False
    requestFactory = BoundedRequest
    protocol = RpcChannel

    def __init__(self, resource, *, ws_factory=None, guard=None, limit_book=None,
                 max_message_size: Optional[int] = None,
                 handshake_timeout: Optional[float] = None,
                 trusted_proxies: TrustedProxies = TrustedProxies(), **kwargs) -> None:
        """``resource``: the root resource; ``ws_factory``: the
        :class:`RpcWebSocketFactory` behind it (its ``connections``);
        the other keyword arguments are ``twisted.web.server.Site``'s."""
        super().__init__(resource, **kwargs)
        self.ws_factory = ws_factory
        self.guard = guard
        self.limit_book = limit_book
        self.max_message_size = max_message_size
        self.handshake_timeout = handshake_timeout
        self.trusted_proxies = trusted_proxies

    def buildProtocol(self, addr):
        """The channel for a new connection, wrapped by the guard (which
        may refuse the connection instead); a trusted proxy's connection
        first passes a :class:`~nodeapi.rpc.proxies.ProxyHeaderReader`
        (the guard then sees the client's address of its PROXY header)."""
        if self.trusted_proxies.trusts(getattr(addr, "host", None)):
            return ProxyHeaderReader(self._guarded, self.reactor, self.handshake_timeout or 0)
        return self._guarded(addr)

    def _guarded(self, addr):
        """The guarded channel for a connection of the client ``addr``."""
        if self.guard is None:
            return super().buildProtocol(addr)
        # a trusted proxy's own connection (no PROXY header) carries its
        # clients' requests: not counted per address
        own = self.trusted_proxies.trusts(getattr(addr, "host", None))
        return self.guard.protocol_for(addr, lambda: super(RpcSite, self).buildProtocol(addr),
                                       per_address=not own)

    def log(self, request) -> None:
        """No access log (see module docstring)."""


def rpc_site(node, access, *, reactor, registry=None, max_message_size: int = 4 * 1024 * 1024,
             auto_ping_interval: float = 30.0, max_calls_in_flight: int = 100,
             max_outgoing_buffer: int = 16 * 1024 * 1024, metrics=None,
             limits: Optional[RpcLimits] = None,
             routes: Optional[dict] = None,
             browser_guard: Optional[BrowserGuard] = None,
             trusted_proxies: TrustedProxies = TrustedProxies()) -> RpcSite:
    """Build the Site for ``node`` with the ApiAccess ``access``.

    :param registry: accessor name -> ApiSet class (default: every set of
        :func:`nodeapi.api.registry.default_registry`).
    :param max_message_size: bytes, for WebSocket messages and HTTP bodies.
    :param auto_ping_interval: seconds (0 disables WebSocket pings).
    :param max_calls_in_flight: per WebSocket connection.
    :param max_outgoing_buffer: bytes of unsent WebSocket replies before the
        client is closed with 1008.
    :param metrics: a :class:`nodeapi.metrics.Metrics` or None.
    :param reactor: the reactor: every timer of the site (HTTP idle and head
        deadlines, the 413 linger, Autobahn's pings, failed-login and
        per-address bookkeeping) and the log throttling run on it.
    :param limits: the node-wide :class:`RpcLimits` (default: its defaults),
        the per-address limits of the :class:`~nodeapi.rpc.limits.LimitBook`
        included; the api-access entries' ``limits`` are in ``access``.
    :param routes: ``{path bytes: resource}`` served besides RPC (the
        devnet's faucet, ``nodeapi.devnet.faucet``).
    :param browser_guard: the ``Host``/``Origin``/``Content-Type`` checks
        (:class:`~nodeapi.rpc.browser_guard.BrowserGuard`; default: the
        loopback names).
    :param trusted_proxies: the proxies whose PROXY and ``X-Forwarded-For``
        headers give the client's address (:mod:`nodeapi.rpc.proxies`;
        default: none, every peer is its client).
    """
    if limits is None:
        limits = RpcLimits()
    if registry is None:
        from nodeapi.api.registry import default_registry

        registry = default_registry()
    guard = ConnectionGuard(reactor, limits, metrics)
    failed_logins = FailedLogins(reactor)
    # limits per user and per address: no book at all (nothing checked per
    # call) unless some are configured
    limit_book = (LimitBook(reactor, limits.per_ip, metrics, guard.events)
                  if access.has_limits or limits.per_ip else None)
    factory = RpcWebSocketFactory(node, access, registry, max_message_size=max_message_size,
                                  auto_ping_interval=auto_ping_interval,
                                  max_calls_in_flight=max_calls_in_flight,
                                  max_outgoing_buffer=max_outgoing_buffer, metrics=metrics,
                                  reactor=reactor, failed_logins=failed_logins,
                                  limit_book=limit_book, trusted_proxies=trusted_proxies)
    if metrics is not None:
        metrics.watch_rpc(node, lambda: len(guard.connections),
                          lambda: sum(1 for proto in factory.connections
                                      if getattr(proto.session, "user", None)))
    http = HttpRpc(node, access, registry, max_message_size, metrics,
                   failed_logins=failed_logins, limit_book=limit_book)
    # bodies are JSON: twisted.web's parsing of form submissions into
    # request.args (a MIME parse of the Content-Type of every POST) is off
    root = RpcRoot(WebSocketResource(factory), http, routes, browser_guard=browser_guard,
                   access=access, limit_book=limit_book, events=guard.events)
    return RpcSite(root, ws_factory=factory,
                   guard=guard, limit_book=limit_book, max_message_size=max_message_size,
                   handshake_timeout=limits.handshake_timeout or None, reactor=reactor,
                   trusted_proxies=trusted_proxies, parsePOSTFormSubmission=False)
