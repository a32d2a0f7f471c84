"""Reconnecting to another node without flooding the log: the
``ClientService`` whose retry line is quiet, the endpoint that reports
each connection attempt and why it failed (the remote node logs one line
per failed attempt with the growing delay instead,
:class:`~nodeapi.peers.remote.RemoteNode`), the endpoint that connects to
a node chosen anew at each attempt (:class:`ChoosingEndpoint`), and the
planned-stop grace, and :class:`Reconnection`: the one reconnection
policy and failure report of a connection to another node, whichever its
transport (the RPC WebSocket of :mod:`nodeapi.peers.remote`, a P2P seed of
:mod:`nodeapi.peers.p2p_node`).
"""

from typing import Any, Callable, Optional

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
    """A client endpoint that tells ``on_attempt()`` that a connection
    attempt starts and ``on_failure(text)`` why one failed (refused,
    unreachable, timed out) before the failure goes on to the
    ``ClientService``, whose own retry line is quiet
    (:class:`QuietClientService`).

    :param endpoint: the ``IStreamClientEndpoint`` to connect with.
    """

    def __init__(self, endpoint, on_failure, on_attempt=lambda: None) -> None:
        self.endpoint, self.on_failure, self.on_attempt = endpoint, on_failure, on_attempt

    def connect(self, factory) -> defer.Deferred:
        """``IStreamClientEndpoint.connect``: tell ``on_attempt()``, then
        connect with the wrapped endpoint; a failure is told to
        ``on_failure(text)`` and passed on (a Deferred of the protocol)."""
        def failed(failure):
            self.on_failure(failure.getErrorMessage())
            return failure

        self.on_attempt()
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
        """``IStreamClientEndpoint.connect``: the address ``choose()`` gives is
        told to ``on_choice``, set as ``factory``'s URL (``set_url``), and
        connected to by a ``HostnameEndpoint`` (a Deferred of the protocol)."""
        address = self.choose()
        self.on_choice(address)
        factory.set_url(address.url)
        return HostnameEndpoint(self.reactor, address.host, address.port).connect(factory)


#: WebSocket close code of a node that stops (RFC 6455 7.4.1 "going away";
#: a nodeapi node sends it at a clean stop)
GOING_AWAY = 1001
#: seconds after another node's planned stop during which failed
#: reconnections are not logged (a restart); past them each one is, as for
#: any node lost without notice
RESTART_GRACE = 300.0


class Reconnection:
    """The reconnection policy and failure report of one connection to
    another node, the same for each transport: the delay before the next
    attempt is ``backoff(attempt + failures - 1)`` seconds (``attempt``
    counts the failed connection attempts since the last TCP connection, as
    ``ClientService`` does; ``failures`` the connections in a row that
    failed after it), and each failure is ONE line, written with that
    delay when the reconnection is scheduled:

    - ``"<what> failed (N in a row): <error>; reconnecting in D s"``
      (error) for a connection dropped because of ``error``
      (:meth:`failed`);
    - ``"<what> unreachable (<reason>); reconnecting in D s"`` (warn) for
      a connection attempt that failed (refused, unreachable, timed out),
      not within :data:`RESTART_GRACE` seconds of the other node's planned
      stop (:meth:`stopping`).

    Its :meth:`retry_delay` is the ``ClientService``'s retry policy, and
    :meth:`attempt_starts` and :meth:`attempt_failed` are what a
    :class:`ReportingEndpoint` tells.

    :param backoff: ``backoff(n) -> seconds`` before reconnecting after
        ``n`` failures (``twisted.application.internet.backoffPolicy``).
    :param clock: ``IReactorTime`` of the reconnection delays and the
        restart grace.
    :param log: the owner's ``twisted.logger.Logger`` the lines go to.
    :param what: how the lines name the other node (``"Peer h:p"``).
    :param remote: the other node's ``host:port`` (the lines' ``remote``
        field; the owner updates it when the address changes).

    :ivar failures: failures in a row; :meth:`succeeded` starts afresh.
    :ivar attempts: connection attempts made.
    :ivar waiting: a reconnection delay runs.
    :ivar stopping_since: clock time of the other node's planned stop,
        until a connection opens again (:meth:`opened`); else None.
    """

    def __init__(self, *, backoff: Callable[[int], float], clock: Any, log: Logger,
                 what: str, remote: str) -> None:
        self.backoff, self.clock, self.log = backoff, clock, log
        self.what, self.remote = what, remote
        self.failures = self.attempts = 0
        self.waiting = False
        self.stopping_since: Optional[float] = None
        self._pending: Optional[str] = None  # a failure to log with the next delay
        self._connect_error: Optional[str] = None

    def attempt_starts(self) -> None:
        """A connection attempt starts (the reconnection delay is over)."""
        self.waiting = False
        self.attempts += 1

    def attempt_failed(self, reason: str) -> None:
        """A connection attempt failed (``reason``: refused, unreachable,
        timed out): logged with the delay by :meth:`retry_delay`."""
        self._connect_error = reason

    def failed(self, error: str) -> None:
        """The connection is dropped because of ``error`` (one line of
        text): one more failure in a row, logged with the delay."""
        self.failures += 1
        self._pending = error

    def counted(self) -> None:
        """One more failure in a row, logged already (with its traceback)."""
        self.failures += 1

    def succeeded(self) -> None:
        """The other node served what was asked: the backoff starts afresh."""
        self.failures = 0

    def stopping(self) -> None:
        """The other node said it stops (a planned stop, :data:`GOING_AWAY`)."""
        self.stopping_since = self.clock.seconds()

    def opened(self) -> None:
        """A connection opened again: the planned stop is over."""
        self.stopping_since = None

    def restarting(self) -> bool:
        """True within :data:`RESTART_GRACE` seconds of the other node's
        planned stop."""
        return (self.stopping_since is not None
                and self.clock.seconds() - self.stopping_since < RESTART_GRACE)

    def retry_delay(self, attempt: int) -> float:
        """The ``ClientService`` retry policy (class docstring): the delay
        in seconds; the failure waiting to be reported is logged here,
        once, with it."""
        self.waiting = True
        delay = self.backoff(attempt + max(self.failures - 1, 0))
        if self._pending is not None:
            self.log.error("{what} failed ({failures} in a row): {error}; reconnecting in "
                           "{delay:.1f} s", what=self.what, remote=self.remote,
                           failures=self.failures, error=self._pending, delay=delay)
        elif self._connect_error is not None and not self.restarting():
            self.log.warn("{what} unreachable ({error}); reconnecting in {delay:.1f} s",
                          what=self.what, remote=self.remote,
                          error=self._connect_error, delay=delay)
        self._pending = self._connect_error = None
        return delay

    def report(self) -> None:
        """Log a failure not logged yet (the connection stops before a
        reconnection is scheduled)."""
        if self._pending is not None:
            self.log.error("{what} failed ({failures} in a row): {error}", what=self.what,
                           remote=self.remote, failures=self.failures, error=self._pending)
            self._pending = None

    def client(self, endpoint, factory) -> QuietClientService:
        """A :class:`QuietClientService` connecting ``factory`` through
        ``endpoint`` (an ``IStreamClientEndpoint``, wrapped in a
        :class:`ReportingEndpoint` telling this policy) with this retry
        policy, its delays on :attr:`clock`."""
        return QuietClientService(
            ReportingEndpoint(endpoint, self.attempt_failed, self.attempt_starts),
            factory, retryPolicy=self.retry_delay, clock=self.clock)
