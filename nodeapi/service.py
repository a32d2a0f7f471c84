"""The node as a Twisted service: start in order, stop gracefully.

Start (graphene ``application::startup`` order): history plugins prepare
(searchdb asks the database where to resume), the chain replays its block
log (plugins see ``replay=True``), then the services that act on the live
chain start: history shipping, the witness, the peers, the RPC port and the
metrics port.  Stop (SIGTERM/SIGINT, ``twistd`` calls ``stopService``):
stop listening, finish the block in hand (witness), stop following peers,
flush the history plugins (bounded by their own timeouts), close the block
log.  Data flow: block -> chain -> plugins -> bulk -> search database.
"""

from typing import Any, Optional

from twisted.application import service
from twisted.internet import defer
from twisted.logger import Logger


class ListeningService(service.Service):
    """Listen on a server endpoint with a factory while running.

    Like :class:`twisted.application.internet.StreamServerEndpointService`,
    but exposes the listening port (:attr:`port`) and a :attr:`ready`
    Deferred, and a listen failure is logged with the endpoint string.
    """

    log = Logger()

    def __init__(self, endpoint, factory, description: str, what: str) -> None:
        self.endpoint = endpoint
        self.factory = factory
        self.description = description
        self.what = what
        self.port = None
        self.ready: defer.Deferred = defer.Deferred()

    def startService(self) -> None:
        super().startService()
        d = self.endpoint.listen(self.factory)

        def listening(port):
            self.port = port
            host = port.getHost()
            self.log.info("{what} listening on {host}:{port}", what=self.what,
                          host=getattr(host, "host", "?"), port=getattr(host, "port", "?"))
            self.ready.callback(port)
            return port

        def failed(failure):
            self.log.failure("{what} cannot listen on {endpoint}", failure, what=self.what,
                             endpoint=self.description)
            self.ready.errback(failure)

        d.addCallbacks(listening, failed)

    def stopService(self):
        super().stopService()
        if self.port is not None:
            port, self.port = self.port, None
            return defer.maybeDeferred(port.stopListening)
        return defer.succeed(None)


class NodeService(service.MultiService):
    """The ``twistd nodeapi`` application service.

    :param chain: the :class:`nodeapi.chain.chain.Chain`.
    :param block_log: its opened block log (closed on stop).
    :param plugins: history plugins in start order; objects with an optional
        ``prepare() -> Deferred`` run before replay; those that are services
        are started after replay.
    :param live: services started after replay, in order (witness, peers,
        RPC listening, metrics); stopped in reverse order.
    :param reactor: used to stop the process when startup fails.
    :ivar started: Deferred firing once replay is done and every live
        service has been started.
    """

    log = Logger()

    def __init__(self, chain, block_log, plugins=(), live=(), reactor: Optional[Any] = None):
        super().__init__()
        self.chain = chain
        self.block_log = block_log
        self.plugins = list(plugins)
        self.live = list(live)
        self.reactor = reactor
        self.started: defer.Deferred = defer.Deferred()
        self._startup: Optional[defer.Deferred] = None

    def startService(self) -> None:
        service.Service.startService(self)
        self._startup = defer.ensureDeferred(self._start())
        self._startup.addCallbacks(self.started.callback, self._start_failed)

    async def _start(self) -> None:
        for plugin in self.plugins:
            prepare = getattr(plugin, "prepare", None)
            if prepare is not None:
                await defer.maybeDeferred(prepare)
        replayed = await self.chain.replay()
        self.log.info("Chain ready: head block {num} ({id}), {replayed} blocks replayed",
                      num=self.chain.head_block_num, id=self.chain.head_block_id,
                      replayed=replayed)
        if not self.running:
            return
        for svc in self.plugins + self.live:
            if service.IService.providedBy(svc):
                svc.setServiceParent(self)  # starts it, since we are running

    def _start_failed(self, failure) -> None:
        if failure.check(defer.CancelledError):
            return
        self.log.failure("Node startup failed", failure)
        self.started.errback(failure)
        if self.reactor is not None and self.reactor.running:
            self.reactor.stop()

    @defer.inlineCallbacks
    def stopService(self):
        service.Service.stopService(self)
        if self._startup is not None and not self._startup.called:
            self._startup.cancel()
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
