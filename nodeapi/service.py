"""The root services of ``twistd nodeapi``: :class:`ModeService` (the
parent of what one mode runs) and :class:`NodeService` (a node with a
chain: replays the block log, from its newest checkpoint, before its
children start, graphene ``application::startup`` order), and
:class:`ListeningService` (a port bound in ``privilegedStartService``,
before privileges are dropped, serving once the root has started).

Children start in order and stop in reverse; a startup failure is one log
line, then the process exits with status 1 (systemd's
``Restart=on-failure`` applies).  Which children each mode attaches, and
the start and stop in order: DESIGN.rst "Service trees".
"""

import atexit
import os
import sys
from typing import Any, Optional

from twisted.application import internet, service
from twisted.internet import defer
from twisted.internet.interfaces import ILoggingContext, IProtocolFactory
from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import implementer

from nodeapi.errors import ConfigError, NodeAPIError


class ListenFailed(ConfigError):
    """A port of the node cannot be bound (address in use, permission
    denied, unknown interface); the message names the endpoint string and
    the error, e.g. ``RPC (WebSocket and HTTP) cannot listen on tcp:8090:
    Couldn't listen on any:8090: [Errno 98] Address already in use.``"""


class _Outcome:
    """A result known once (a value or a Failure) that any number of callers
    wait for: each :meth:`when` call gets a Deferred of its own, so a failure
    nobody asked for is never an "Unhandled error in Deferred"."""

    def __init__(self) -> None:
        self.known = False
        self._result: Any = None
        self._waiting: list = []

    def when(self) -> defer.Deferred:
        """A new Deferred firing with the value (failing with the Failure)."""
        if not self.known:
            d = defer.Deferred()
            self._waiting.append(d)
            return d
        if isinstance(self._result, Exception):
            return defer.fail(self._result)
        return defer.succeed(self._result)

    def settle(self, result) -> None:
        """Record ``result`` (an exception or Failure means failed) and fire
        every waiting Deferred; later calls are ignored."""
        if self.known:
            return
        if isinstance(result, Failure):
            result = result.value
        self.known, self._result = True, result
        waiting, self._waiting = self._waiting, []
        for d in waiting:
            if isinstance(result, Exception):
                d.errback(result)
            else:
                d.callback(result)


@implementer(IProtocolFactory, ILoggingContext)
class _Gate:
    """The protocol factory a :class:`ListeningService` listens with: the
    real factory's protocols once :attr:`open`, None before (the port then
    closes the new connection at once, like a refused one)."""

    def __init__(self, factory) -> None:
        self.factory = factory
        self.open = False

    def doStart(self) -> None:
        self.factory.doStart()

    def doStop(self) -> None:
        self.factory.doStop()

    def buildProtocol(self, addr):
        return self.factory.buildProtocol(addr) if self.open else None

    def logPrefix(self) -> str:
        prefix = getattr(self.factory, "logPrefix", None)
        return prefix() if prefix is not None else type(self.factory).__name__


class _Reporting:
    """An ``IStreamServerEndpoint`` handing its listen outcome to the
    :class:`ListeningService` before Twisted's service sees it (which would
    log a failure with a traceback)."""

    def __init__(self, endpoint, listening: "ListeningService") -> None:
        self.endpoint = endpoint
        self._listening = listening

    def listen(self, factory) -> defer.Deferred:
        return self.endpoint.listen(factory).addCallbacks(self._listening._bound,
                                                          self._listening._not_bound)


class ListeningService(internet.StreamServerEndpointService):
    """Listen on a server endpoint with a factory: bound in
    ``privilegedStartService`` (before ``twistd --uid`` drops privileges),
    serving from ``startService`` on (connections before that are closed at
    once), closed by ``stopService``.

    :class:`twisted.application.internet.StreamServerEndpointService` with
    the listening port exposed (:attr:`port`, :meth:`whenListening`) and a
    bind failure turned into :class:`ListenFailed` naming the endpoint and
    the error instead of a logged traceback: whoever starts the service
    reports it (:class:`NodeService` makes it a startup failure).

    :param endpoint: an ``IStreamServerEndpoint``.
    :param factory: the protocol factory to serve with.
    :param description: the endpoint string, used in messages
        (``tcp:8090:interface=127.0.0.1``).
    :param what: what listens, used in messages (``RPC (WebSocket and HTTP)``).
    :param serve_early: serve as soon as bound, before ``startService``
        (the metrics port: ``/status`` shows the replay's progress and
        ``/healthz`` answers 503 while the node replays).
    :param going_away: ``() -> Deferred`` run by :meth:`stopService` once
        the port is closed, e.g. closing the open WebSockets with 1001
        (:meth:`nodeapi.rpc.websocket.RpcWebSocketFactory.going_away`), or
        None.
    :ivar port: the ``IListeningPort`` while bound, else None.
    """

    log = Logger()

    def __init__(self, endpoint, factory, description: str, what: str,
                 serve_early: bool = False, going_away=None) -> None:
        self._gate = _Gate(factory)
        self.going_away = going_away
        self.serve_early = serve_early
        self._outcome = _Outcome()
        super().__init__(_Reporting(endpoint, self), self._gate)
        self.description = description
        self.what = what
        self.port = None

    def whenListening(self) -> defer.Deferred:
        """A new Deferred firing with the ``IListeningPort`` once bound,
        failing with :class:`ListenFailed` (``CancelledError`` when stopped
        before the bind finished)."""
        return self._outcome.when()

    def _bound(self, port):
        self.port = port
        if self.serve_early:
            self._gate.open = True
        host = port.getHost()
        self.log.info("{what} listening on {host}:{port}", what=self.what,
                      host=getattr(host, "host", "?"), port=getattr(host, "port", "?"))
        self._outcome.settle(port)
        return port

    def _not_bound(self, failure) -> None:
        if failure.check(defer.CancelledError):
            self._outcome.settle(failure)
        else:
            self._outcome.settle(ListenFailed(
                f"{self.what} cannot listen on {self.description}: "
                f"{failure.getErrorMessage()}"))
        return None

    def startService(self) -> None:
        """Serve: bind first if ``privilegedStartService`` did not run (the
        outcome is :meth:`whenListening`).  Returns nothing (``IService``)."""
        super().startService()
        self._gate.open = True

    def stopService(self) -> defer.Deferred:
        """Stop serving and close the port.  The Deferred fires once the
        port is closed (and ``going_away`` has finished); at once when it
        was never bound (never started, or the bind failed); after the bind when it is still under way (the
        port is closed at once, :meth:`whenListening` fails with
        ``CancelledError``)."""
        self._gate.open = False
        self.port = None
        if self._waitingForPort is None:  # never started
            self.running = False
            return defer.succeed(None)
        closed = super().stopService()
        if self.going_away is not None:
            closed.addCallback(lambda _: self.going_away())
        return closed


#: seconds between two startup-timeout extensions sent to systemd (each asks
#: for three times this long)
EXTEND_EVERY = 10.0


class ModeService(service.MultiService):
    """The ``twistd nodeapi`` application service of one mode: the parent
    of every service the mode runs, which it starts once its ports are
    bound and its children prepared (a node's: once its chain is replayed,
    :class:`NodeService`; a gateway's at once).

    Children (attached by the mode's maker, :mod:`nodeapi.modes`, in
    start order) are started in order and stopped in reverse order; a child
    with a ``prepare() -> Deferred`` method (searchdb, the indexer) runs it
    first.  Every :class:`ListeningService` child must be bound before
    anything starts.

    :param reactor: the process's reactor.  When given, a startup failure
        stops it and makes the process exit with status 1 (an ``atexit`` hook,
        after ``twistd`` has stopped the services and cleaned up: ``twistd``
        itself exits 0 after ``reactor.stop()``).  None in tests: a startup
        failure is only logged and reported by :meth:`whenStarted`.
    :param node: the :class:`nodeapi.node.Node` the API sets see, or None.
    :param notifier: a :class:`nodeapi.service_systemd.Notifier` (systemd
        ``Type=notify``), or None: it is sent ``READY=1`` once every child
        has started (the RPC port serves), ``STOPPING=1`` when a stop
        begins, ``STATUS=`` lines, and every :data:`EXTEND_EVERY` seconds
        of the startup ``EXTEND_TIMEOUT_USEC`` (a long replay is progress,
        not a hung start).
    """

    log = Logger()
    #: what the log's last line calls this mode
    mode = "Gateway"

    def __init__(self, reactor: Optional[Any] = None, node: Any = None,
                 notifier: Any = None) -> None:
        super().__init__()
        self.notifier = notifier
        self._extending = None
        self.reactor = reactor
        self.node = node
        self._bound = False
        self._startup: Optional[defer.Deferred] = None
        self._outcome = _Outcome()

    def whenStarted(self) -> defer.Deferred:
        """A Deferred firing with None once every child has been started
        (after a node's replay); failing with the startup failure
        (:class:`ListenFailed`, a replay error) or with ``CancelledError``
        when stopped during startup.  Each call returns a new Deferred."""
        return self._outcome.when()

    def privilegedStartService(self) -> None:
        """Bind every port (``twistd`` calls this before dropping
        privileges); nothing starts here.  Returns nothing."""
        self._bound = True
        super().privilegedStartService()

    def startService(self) -> None:
        """Start the mode in the background (see :meth:`whenStarted`): bind
        the ports if :meth:`privilegedStartService` did not run, check them,
        prepare the children, run :meth:`before_children` (a node's
        replay), then start the children.  Returns nothing
        (``IService``); a failure stops the process (class doc)."""
        service.Service.startService(self)
        if not self._bound:
            self.privilegedStartService()
        self._startup = defer.Deferred.fromCoroutine(self._start())
        self._startup.addBoth(self._startup_over)
        self._startup.addCallbacks(self._started, self._start_failed)

    def rpc_url(self) -> str:
        """``ws://host:port`` of the ``rpc`` child's bound port (once bound)."""
        host = self.getServiceNamed("rpc").port.getHost()
        return f"ws://{host.host}:{host.port}"

    # -- what a mode adds --------------------------------------------------------------

    def ready_status(self) -> str:
        """The systemd ``STATUS`` once serving."""
        return "Serving"

    def starting_status(self) -> str:
        """The systemd ``STATUS`` while starting."""
        return "Starting"

    async def before_children(self) -> None:
        """Run after the children are prepared, before they start."""

    def stop_order(self) -> list:
        """The children in the order to stop them: reverse start order."""
        return list(reversed(list(self)))

    def after_children(self) -> None:
        """Run once every child has stopped: log the end."""
        self.log.info("{mode} stopped", mode=self.mode)

    # ----------------------------------------------------------------------------------

    def _startup_over(self, result):
        if self._extending is not None and self._extending.running:
            self._extending.stop()
        return result

    def _started(self, _result) -> None:
        self._outcome.settle(None)
        if self.notifier is not None:
            self.notifier.send("READY=1", f"STATUS={self.ready_status()}")

    def _extend_startup(self) -> None:
        self.notifier.send(f"EXTEND_TIMEOUT_USEC={int(EXTEND_EVERY * 3 * 1e6)}",
                           f"STATUS={self.starting_status()}")

    async def _start(self) -> None:
        if self.notifier is not None and self.reactor is not None:
            from twisted.internet.task import LoopingCall

            self._extending = LoopingCall(self._extend_startup)
            self._extending.clock = self.reactor
            self._extending.start(EXTEND_EVERY, now=True)
        for svc in self:
            if isinstance(svc, ListeningService):
                await svc.whenListening()  # fails with ListenFailed
        for svc in self:
            prepare = getattr(svc, "prepare", None)
            if prepare is not None:
                await defer.maybeDeferred(prepare)
        await self.before_children()
        for svc in self:
            if not self.running:
                raise defer.CancelledError()
            svc.startService()
        if not self.running:
            raise defer.CancelledError()

    def _start_failed(self, failure) -> None:
        self._outcome.settle(failure)
        if failure.check(defer.CancelledError):
            return
        if self.notifier is not None:
            self.notifier.send(f"STATUS=Startup failed: {failure.getErrorMessage()}")
        if failure.check(NodeAPIError):
            self.log.error("Node startup failed: {error}", error=failure.getErrorMessage())
        else:
            self.log.failure("Node startup failed", failure)
        if self.reactor is not None:
            atexit.register(_exit_with_status, 1)
            if self.reactor.running:
                self.reactor.stop()
            else:
                self.reactor.callWhenRunning(self.reactor.stop)

    def stopService(self) -> defer.Deferred:
        """Stop the mode.  The Deferred fires once a startup still running
        has stopped (a replay is cancelled between two steps: no block is
        read after that), every started child has stopped and every bound
        port is closed (in :meth:`stop_order`; each one's Deferred waited
        for, errors logged), and :meth:`after_children` has run."""
        return defer.Deferred.fromCoroutine(self._stop())

    async def _stop(self) -> None:
        service.Service.stopService(self)
        if self.notifier is not None:
            self.notifier.send("STOPPING=1", "STATUS=Stopping")
        if self._startup is not None:
            if not self._startup.called:
                self._startup.cancel()
            await self._startup  # the startup has stopped (errors: _start_failed)
        for svc in self.stop_order():
            if not (svc.running or isinstance(svc, ListeningService)):
                continue  # never started (stopped during the startup)
            try:
                await defer.maybeDeferred(svc.stopService)
            except Exception:
                self.log.failure("Error stopping {service}", service=svc)
        self.after_children()


class NodeService(ModeService):
    """The root of a node with a chain (:func:`nodeapi.modes.node.make_node`):
    its children start only once the chain is replayed (graphene
    ``application::startup`` order: the checkpoint restored, the block log
    replayed with the plugins seeing ``replay=True``).

    :param chain: the :class:`nodeapi.chain.chain.Chain`.
    :param block_log: its opened block log (closed on stop).
    :param checkpoints: the :class:`nodeapi.checkpoints.CheckpointService`
        whose ``restore()`` runs before the replay and which stops last
        (the caller attaches it as a child), or None.
    :param reactor, node, notifier: as :class:`ModeService`.
    """

    mode = "Node"

    def __init__(self, chain, block_log, reactor: Optional[Any] = None, node: Any = None,
                 checkpoints: Any = None, notifier: Any = None) -> None:
        super().__init__(reactor=reactor, node=node, notifier=notifier)
        self.chain = chain
        self.block_log = block_log
        self.checkpoints = checkpoints

    def ready_status(self) -> str:
        """The systemd ``STATUS`` once serving, with the head block number."""
        return f"Serving, head block {self.chain.head_block_num}"

    def starting_status(self) -> str:
        """The systemd ``STATUS`` while starting: the replay's progress (block
        N of the target) while the block log replays."""
        if self.chain.replay_target is None:
            return "Starting"
        return (f"Replaying the block log: block {self.chain.head_block_num} of "
                f"{self.chain.replay_target}")

    async def before_children(self) -> None:
        """Restore the newest usable checkpoint, then replay the block log."""
        if self.checkpoints is not None:
            await self.checkpoints.restore()
        await self.chain.replay()  # logs how many blocks it replayed
        self.log.info("Chain ready: head block {num} ({id})",
                      num=self.chain.head_block_num, id=self.chain.head_block_id)

    def stop_order(self) -> list:
        """RPC and metrics first (reverse of start), then peers and witness,
        then the history plugins, which flush what is still pending; the
        checkpoints last, so the checkpoint of a clean stop holds every
        block produced or received until then."""
        children = [svc for svc in reversed(list(self)) if svc is not self.checkpoints]
        if self.checkpoints is not None and self.checkpoints in list(self):
            children.append(self.checkpoints)
        return children

    def after_children(self) -> None:
        """Close the block log."""
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
