"""Reconnecting to another node without flooding the log: the
``ClientService`` whose retry line is quiet, the endpoint that reports why a
connection attempt failed, and the one line per failed attempt (with the
growing delay) that replaces them (:class:`RetryReport`), and the endpoint
that connects to a node chosen anew at each attempt
(:class:`ChoosingEndpoint`).  Used by the
peers (:mod:`nodeapi.peers.peer`) and the indexer's upstream
(:mod:`nodeapi.peers.upstream`).
"""

from twisted.application.internet import ClientService
from twisted.internet import defer
from twisted.internet.endpoints import HostnameEndpoint
from twisted.logger import (
    FilteringLogObserver, Logger, LogLevel, LogLevelFilterPredicate, globalLogPublisher)


class QuietClientService(ClientService):
    """A ``ClientService`` without its "Scheduling retry N to connect ..."
    info line at each retry (the owner logs the failure with the delay);
    its warnings still go to the log."""

    _log = Logger(observer=FilteringLogObserver(
        globalLogPublisher, [LogLevelFilterPredicate(defaultLogLevel=LogLevel.warn)]))


class ReportingEndpoint:
    """A client endpoint that tells ``on_failure(text)`` why a connection
    attempt failed (refused, unreachable, timed out) before the failure
    goes on to the ``ClientService``, whose own retry line is quiet
    (:class:`QuietClientService`).

    :param endpoint: the ``IStreamClientEndpoint`` to connect with.
    """

    def __init__(self, endpoint, on_failure) -> None:
        self.endpoint, self.on_failure = endpoint, on_failure

    def connect(self, factory) -> defer.Deferred:
        def failed(failure):
            self.on_failure(failure.getErrorMessage())
            return failure

        return self.endpoint.connect(factory).addErrback(failed)



class ChoosingEndpoint:
    """A client endpoint connecting to the node address ``choose()`` gives
    at each attempt (a :class:`~nodeapi.protocol.node_address.NodeAddress`):
    ``on_choice(address)`` is told first, and the WebSocket factory's URL
    (Host header, path) follows it.

    :param reactor: the reactor of the ``HostnameEndpoint``."""

    def __init__(self, reactor, choose, on_choice) -> None:
        self.reactor, self.choose, self.on_choice = reactor, choose, on_choice

    def connect(self, factory) -> defer.Deferred:
        address = self.choose()
        self.on_choice(address)
        factory.setSessionParameters(url=address.url)
        if ":" in factory.host:  # as PeerRpcFactory writes an IPv6 Host header
            factory.host = f"[{factory.host}]"
        return HostnameEndpoint(self.reactor, address.host, address.port).connect(factory)


#: WebSocket close code of a node that stops (RFC 6455 7.4.1 "going away";
#: a nodeapi node sends it at a clean stop)
GOING_AWAY = 1001
#: seconds after another node's planned stop during which failed
#: reconnections are not logged (a restart); past them each one is, as for
#: any node lost without notice
RESTART_GRACE = 300.0


class RetryReport:
    """The retry policy of a ``ClientService`` that also logs why the last
    attempt failed, once, with the delay.

    :param log: the owner's ``twisted.logger.Logger``.
    :param what: how lines name the other node (``"Upstream ws://h:p/"``).
    :param backoff: ``backoff(n) -> seconds`` (``twisted.application.
        internet.backoffPolicy``).
    :param clock: ``IReactorTime`` of :meth:`closed`'s grace, or None (a
        planned stop is then not told apart).

    After the other node's planned stop (:meth:`closed` with
    :data:`GOING_AWAY`: one info line) the retries are not logged for
    :data:`RESTART_GRACE` seconds or until a WebSocket opens again.

    The delay after ``attempt`` failed connections (the ``ClientService``'s
    count, which restarts at each TCP connection) is
    ``backoff(attempt + handshake_failures)``: a port that accepts TCP but is
    no WebSocket server still backs off.
    """

    def __init__(self, log, what: str, backoff, clock=None) -> None:
        self.log, self.what, self.backoff, self.clock = log, what, backoff, clock
        self.stopping_since = None  # clock time of the other node's planned stop
        self.handshake_failures = 0  # failed WebSocket handshakes in a row
        self._handshake = None  # reasons to log with the next delay
        self._connect = None

    def connect_failed(self, reason: str) -> None:
        """A connection attempt failed (:class:`ReportingEndpoint`)."""
        self._connect = reason

    def handshake_failed(self, reason: str) -> None:
        """The port answered, but not as a WebSocket server."""
        self.handshake_failures += 1
        self._handshake = reason

    def opened(self) -> None:
        """A WebSocket opened: the backoff starts afresh."""
        self.handshake_failures = 0
        self.stopping_since = None

    def closed(self, code, reason) -> None:
        """The WebSocket closed with ``code`` and ``reason``: one info line,
        naming a planned stop (:data:`GOING_AWAY`) as such."""
        if code == GOING_AWAY and self.clock is not None:
            self.stopping_since = self.clock.seconds()
            self.log.info("{what} is stopping ({code} going away: {reason}); following it "
                          "again when it is back", what=self.what, code=code,
                          reason=reason or "no reason given")
        else:
            self.log.info("{what} disconnected ({code} {reason})", what=self.what, code=code,
                          reason=reason or "")

    def restarting(self) -> bool:
        """True within :data:`RESTART_GRACE` seconds of a planned stop."""
        return (self.stopping_since is not None
                and self.clock.seconds() - self.stopping_since < RESTART_GRACE)

    def delay(self, attempt: int) -> float:
        """The ``ClientService`` retry policy; logs one line (none while
        the other node restarts, :meth:`restarting`)."""
        delay = self.backoff(attempt + self.handshake_failures)
        if self.restarting() and self._handshake is None:
            self._connect = None
            return delay
        if self._handshake is not None:
            self.log.error("{what} is not a WebSocket RPC server ({reason}); retrying in "
                           "{delay:.1f} s", what=self.what, reason=self._handshake, delay=delay)
        elif self._connect is not None:
            self.log.warn("{what} unreachable ({reason}); retrying in {delay:.1f} s",
                          what=self.what, reason=self._connect, delay=delay)
        else:
            self.log.info("{what}: reconnecting in {delay:.1f} s", what=self.what,
                          delay=delay)
        self._handshake = self._connect = None
        return delay
