"""The node as a Twisted service: start in order, stop gracefully.

Start (graphene ``application::startup`` order): history plugins prepare
(searchdb asks the database where to resume), the chain replays its block
log (plugins see ``replay=True``), then the services that act on the live
chain start: history shipping, the witness, the peers, the RPC port and the
metrics port; each port must be listening before the next service starts.
A startup failure (a bad block, a port that cannot be bound) is logged in
one line, stops the reactor and makes the process exit with status 1, so
systemd's ``Restart=on-failure`` applies.  Stop (SIGTERM/SIGINT, ``twistd``
calls ``stopService``): stop a replay still running, stop listening, stop
the witness (block production is synchronous in the reactor thread, so a
stop never interrupts a block; the next wake is cancelled), stop following
peers, flush the history plugins (bounded by their own timeouts), close the
block log.  Data flow: block -> chain -> plugins -> bulk -> search database.
"""

import atexit
import os
import sys
from typing import Any, Optional

from twisted.application import service
from twisted.internet import defer
from twisted.logger import Logger

from nodeapi.errors import ConfigError, NodeAPIError


class ListenFailed(ConfigError):
    """A port of the node cannot be bound (address in use, permission
    denied, unknown interface); the message names the endpoint string and
    the error, e.g. ``RPC (WebSocket and HTTP) cannot listen on tcp:8090:
    Couldn't listen on any:8090: [Errno 98] Address already in use.``"""


class ListeningService(service.Service):
    """Listen on a server endpoint with a factory while running.

    Like :class:`twisted.application.internet.StreamServerEndpointService`,
    but exposes the listening port (:attr:`port`) and a :attr:`ready`
    Deferred.  A listen failure is not logged here: :attr:`ready` fails with
    :class:`ListenFailed` naming the endpoint and the error, and whoever
    started the service reports it (:class:`NodeService` makes it a startup
    failure); the owner must consume :attr:`ready`.

    :param endpoint: an ``IStreamServerEndpoint``.
    :param factory: the protocol factory to listen with.
    :param description: the endpoint string, used in messages
        (``tcp:8090:interface=127.0.0.1``).
    :param what: what listens, used in messages (``RPC (WebSocket and HTTP)``).
    :ivar port: the ``IListeningPort`` while listening, else None.
    :ivar ready: Deferred firing with the port once listening, or failing
        with :class:`ListenFailed` (``CancelledError`` if stopped first).
    """

    log = Logger()

    def __init__(self, endpoint, factory, description: str, what: str) -> None:
        self.endpoint = endpoint
        self.factory = factory
        self.description = description
        self.what = what
        self.port = None
        self.ready: defer.Deferred = defer.Deferred()
        self._listening: Optional[defer.Deferred] = None

    def startService(self) -> None:
        """Start listening; returns nothing - :attr:`ready` tells the outcome."""
        super().startService()
        self._listening = d = self.endpoint.listen(self.factory)

        def listening(port):
            if not self.running:  # stopped while the listen was under way
                if not self.ready.called:
                    self.ready.errback(defer.CancelledError())
                return port.stopListening()
            self.port = port
            host = port.getHost()
            self.log.info("{what} listening on {host}:{port}", what=self.what,
                          host=getattr(host, "host", "?"), port=getattr(host, "port", "?"))
            if not self.ready.called:
                self.ready.callback(port)
            return None

        def failed(failure):
            if not self.ready.called:
                if failure.check(defer.CancelledError):
                    self.ready.errback(failure)
                else:
                    self.ready.errback(ListenFailed(
                        f"{self.what} cannot listen on {self.description}: "
                        f"{failure.getErrorMessage()}"))
            return None

        d.addCallbacks(listening, failed)

    def stopService(self) -> defer.Deferred:
        """Stop listening.  The Deferred fires once the port is closed
        (``stopListening``); at once when nothing listens (the listen
        failed); after the listen when it is still under way (the new port
        is closed at once, :attr:`ready` fails with ``CancelledError``)."""
        super().stopService()
        listening, self._listening = self._listening, None
        if self.port is not None:
            port, self.port = self.port, None
            return defer.maybeDeferred(port.stopListening)
        if listening is not None and not listening.called:
            done = defer.Deferred()
            listening.addBoth(lambda result: (done.callback(None), result)[1])
            return done
        return defer.succeed(None)


class NodeService(service.MultiService):
    """The ``twistd nodeapi`` application service.

    :param chain: the :class:`nodeapi.chain.chain.Chain`.
    :param block_log: its opened block log (closed on stop).
    :param plugins: history plugins in start order; objects with an optional
        ``prepare() -> Deferred`` run before replay; those that are services
        are started after replay.
    :param live: services started after replay, in order (witness, peers,
        RPC listening, metrics); stopped in reverse order.  A
        :class:`ListeningService` must be listening before the next one starts.
    :param reactor: the process's reactor.  When given, a startup failure
        stops it and makes the process exit with status 1 (an ``atexit`` hook,
        after ``twistd`` has stopped the services and cleaned up: ``twistd``
        itself exits 0 after ``reactor.stop()``).  None in tests: a startup
        failure is only logged and reported by :meth:`whenStarted`.
    """

    log = Logger()

    def __init__(self, chain, block_log, plugins=(), live=(), reactor: Optional[Any] = None):
        super().__init__()
        self.chain = chain
        self.block_log = block_log
        self.plugins = list(plugins)
        self.live = list(live)
        self.reactor = reactor
        self._startup: Optional[defer.Deferred] = None
        self._outcome: Optional[Any] = None  # True, or the startup Failure
        self._waiting: list = []

    def whenStarted(self) -> defer.Deferred:
        """A Deferred firing with None once replay is done and every live
        service has been started (every port listening); failing with the
        startup failure (:class:`ListenFailed`, a replay error) or with
        ``CancelledError`` when the node was stopped during startup.  Each
        call returns a new Deferred, so an unobserved failure is never an
        "Unhandled error in Deferred"."""
        if self._outcome is None:
            d = defer.Deferred()
            self._waiting.append(d)
            return d
        if self._outcome is True:
            return defer.succeed(None)
        return defer.fail(self._outcome)

    def _settle(self, outcome) -> None:
        self._outcome = outcome
        waiting, self._waiting = self._waiting, []
        for d in waiting:
            if outcome is True:
                d.callback(None)
            else:
                d.errback(outcome)

    def startService(self) -> None:
        """Start the node: prepare the plugins, replay the block log, then
        start the live services, in the background (see :meth:`whenStarted`).
        Returns nothing (``IService``); a failure stops the node (class doc)."""
        service.Service.startService(self)
        self._startup = defer.ensureDeferred(self._start())
        self._startup.addCallbacks(lambda _: self._settle(True), self._start_failed)

    async def _start(self) -> None:
        for plugin in self.plugins:
            prepare = getattr(plugin, "prepare", None)
            if prepare is not None:
                await defer.maybeDeferred(prepare)
        replayed = await self.chain.replay()
        self.log.info("Chain ready: head block {num} ({id}), {replayed} blocks replayed",
                      num=self.chain.head_block_num, id=self.chain.head_block_id,
                      replayed=replayed)
        for svc in self.plugins + self.live:
            if not self.running:
                raise defer.CancelledError()
            if service.IService.providedBy(svc):
                svc.setServiceParent(self)  # starts it, since we are running
                if isinstance(svc, ListeningService):
                    await svc.ready  # fails with ListenFailed
        if not self.running:
            raise defer.CancelledError()

    def _start_failed(self, failure) -> None:
        if failure.check(defer.CancelledError):
            self._settle(failure)
            return
        if failure.check(NodeAPIError):
            self.log.error("Node startup failed: {error}", error=failure.getErrorMessage())
        else:
            self.log.failure("Node startup failed", failure)
        self._settle(failure)
        if self.reactor is not None:
            atexit.register(_exit_with_status, 1)
            if self.reactor.running:
                self.reactor.stop()
            else:
                self.reactor.callWhenRunning(self.reactor.stop)

    @defer.inlineCallbacks
    def stopService(self):
        """Stop the node.  The Deferred fires once a replay still running has
        stopped (cancelled between two steps: no block is read after that),
        every started service has stopped (in reverse start order; each
        one's Deferred waited for, errors logged), and the block log is closed."""
        service.Service.stopService(self)
        if self._startup is not None and not self._startup.called:
            self._startup.cancel()
        if self._startup is not None:
            yield self._startup  # the replay has stopped (errors: _start_failed)
        order = [s for s in reversed(self.plugins + self.live) if s in list(self)]
        # RPC and metrics first (reverse of start), then peers and witness,
        # then the history plugins, which flush what is still pending.
        for svc in order:
            try:
                yield defer.maybeDeferred(svc.stopService)
            except Exception:
                self.log.failure("Error stopping {service}", service=svc)
            svc.disownServiceParent()
        self.block_log.close()
        self.log.info("Node stopped at head block {num}", num=self.chain.head_block_num)


def _exit_with_status(status: int) -> None:
    """``atexit`` hook ending the process with ``status`` once ``twistd`` has
    returned (services stopped, log flushed); the standard streams are
    flushed first, later ``atexit`` hooks do not run."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(status)
