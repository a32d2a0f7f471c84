"""Reconnecting to another node without flooding the log: the
``ClientService`` whose retry line is quiet, the endpoint that reports
each connection attempt and why it failed (the remote node logs one line
per failed attempt with the growing delay instead,
:class:`~nodeapi.peers.remote.RemoteNode`), the endpoint that connects to
a node chosen anew at each attempt (:class:`ChoosingEndpoint`), and the
planned-stop grace.  Used by :mod:`nodeapi.peers.remote` and the P2P node.
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
