"""The metrics port's defences: a cap on open connections and a deadline
for each request head, so that clients which open connections and never
finish a request cannot take the node's file descriptors (and with them
the RPC port's clients).

:class:`GuardedSite` serves ``/metrics``, ``/status`` and ``/healthz``
(:meth:`nodeapi.metrics.Metrics.site`) with the RPC port's channel
(:class:`nodeapi.rpc.http.RpcChannel`: the head of a request must be
complete :data:`METRICS_HEAD_TIMEOUT` seconds after the connection opened,
or after the first byte of a later request on a kept-alive connection),
no access log, and at most :data:`METRICS_MAX_CONNECTIONS` connections: a
connection over the cap is closed as soon as it is accepted.  Each kind
of event is logged at most once a minute
(:class:`~nodeapi.rpc.throttled_log.ThrottledLog`).
"""

from typing import Callable, Optional

from twisted.internet.protocol import Protocol
from twisted.logger import Logger
from twisted.web.server import Site

from nodeapi.rpc.http import RpcChannel
from nodeapi.rpc.throttled_log import ThrottledLog

#: open connections the metrics port serves at once (Prometheus, a few
#: browsers, a load balancer's checks)
METRICS_MAX_CONNECTIONS = 64
#: seconds a connection has to send a complete request head
METRICS_HEAD_TIMEOUT = 10.0
#: seconds a kept-alive connection may stay idle between two requests
METRICS_IDLE_TIMEOUT = 60


class _Refused(Protocol):
    """A connection over the cap: closed before anything is read."""

    def connectionMade(self) -> None:
        self.transport.abortConnection()


class _MetricsChannel(RpcChannel):
    """:class:`~nodeapi.rpc.http.RpcChannel` counted in its site's open
    connections."""

    def connectionMade(self) -> None:
        self.site.open_channels.add(self)
        super().connectionMade()

    def connectionLost(self, reason) -> None:
        self.site.open_channels.discard(self)
        super().connectionLost(reason)


class _Events:
    """What :class:`~nodeapi.rpc.http.RpcChannel` reads as its site's
    ``guard``: the throttled log of the site's events."""

    def __init__(self, events: ThrottledLog) -> None:
        self.events = events


class GuardedSite(Site):
    """A ``twisted.web`` Site over ``resource`` with a connection cap and
    request-head deadlines (module doc), without access log, tracebacks
    or "Starting factory" lines.

    :param reactor: ``IReactorTime`` of the deadlines and the log throttle.
    :param max_connections: open connections served at once (>= 1).
    :param head_timeout: seconds to complete a request head (> 0).
    :param idle_timeout: seconds a connection may stay idle between
        requests (twisted.web's ``timeout``).
    :param refused: called once for each connection refused over the cap
        (the ``nodeapi_metrics_connections_refused_total`` counter), or None.
    :ivar open_channels: the open connections' channels.
    :raises ValueError: for a cap below 1 or a deadline not above 0.
    """

    _log = Logger()
    noisy = False
    displayTracebacks = False
    protocol = _MetricsChannel
    head_timeout_text = ("Metrics connection from {peer} aborted: request head not complete "
                         "after {timeout} s")

    def __init__(self, resource, *, reactor, max_connections: int = METRICS_MAX_CONNECTIONS,
                 head_timeout: float = METRICS_HEAD_TIMEOUT,
                 idle_timeout: float = METRICS_IDLE_TIMEOUT,
                 refused: Optional[Callable[[], None]] = None) -> None:
        if not (isinstance(max_connections, int) and max_connections >= 1):
            raise ValueError(f"max_connections must be an int >= 1, got {max_connections!r}")
        if not head_timeout > 0:
            raise ValueError(f"head_timeout must be > 0 s, got {head_timeout!r}")
        super().__init__(resource, reactor=reactor, timeout=idle_timeout)
        self.max_connections = max_connections
        self.handshake_timeout = head_timeout  # RpcChannel's name for it
        self.refused = refused
        self.open_channels: set = set()
        self.guard = _Events(ThrottledLog(self._log, reactor))

    def buildProtocol(self, addr):
        """The channel for a new connection, or, with
        :attr:`max_connections` open, a protocol closing it at once."""
        if len(self.open_channels) >= self.max_connections:
            if self.refused is not None:
                self.refused()
            self.guard.events.event(
                "metrics_connections", "Metrics connection from {peer} refused: {limit} "
                "connections open", peer=str(getattr(addr, "host", addr)),
                limit=self.max_connections)
            return _Refused()
        return super().buildProtocol(addr)

    def log(self, request) -> None:
        """No access log."""
