"""One upstream node of the gateway: its connection, login, chain id,
health and figures.

An :class:`Upstream` owns one connection to a bitshares-core-compatible
node (``ws://[user:password@]host:port``), a
:class:`~nodeapi.peers.remote.RemoteNode` (login: bitshares-core
libraries/app/api.cpp ``login_api::login``; ``database.get_chain_id``
checked against the pool's), and checks it every ``interval`` seconds with
``database.get_dynamic_global_properties``: :attr:`usable`,
:attr:`healthy`, :attr:`suspect`, :attr:`head`, :attr:`lib` (the cache's
bound).  Every call has a timeout (:mod:`nodeapi.peers.client`).  The
connection's life (login, chain check, failures, reconnection delays):
docs/DESIGN.rst, "A connection to another node"; what a timeout or a bad
message does to a read: "A read forwarded by a gateway".
"""

from typing import Any, Callable, Optional

from twisted.application import service
from twisted.application.internet import backoffPolicy
from twisted.internet import defer
from twisted.logger import Logger
from zope.interface import implementer

from nodeapi.peers.alarm import Alarm
from nodeapi.peers.errors import MessageTooLarge, UpstreamTimeout
from nodeapi.peers.remote import MAX_BLOCK_NUM, IRemoteOwner, RemoteNode, read_head
from nodeapi.peers.replies import BadReply

#: seconds without a trip after which an upstream's trips in a row are forgotten
BREAKER_MEMORY = 60.0
#: calls sent at once on one upstream connection (more wait their turn)
MAX_IN_FLIGHT = 1000


def _of_remote(path: str, doc: str) -> property:
    """A read-only property: ``self.remote.<path>`` (dotted)."""
    names = path.split(".")

    def read(self):
        value = self.remote
        for name in names:
            value = getattr(value, name)
        return value

    return property(read, doc=f"The connection's {doc} (``remote.{path}``).")


@implementer(IRemoteOwner)
class Upstream(service.MultiService):
    """One upstream node.

    :param address: a :class:`~nodeapi.protocol.node_address.NodeAddress`.
    :param pool: the owner, told of changes (``pool.changed(self)``) and
        asked for the chain id (``pool.chain_id``, None until one is
        known; ``pool.claim_chain(self, chain_id)`` proposes one).
    :param reactor: the reactor (connections).
    :param clock: ``IReactorTime`` of the checks, call timeouts and
        latencies (default the reactor).
    :param interval: seconds between health checks.
    :param max_head_age: seconds; an older head block makes the upstream
        not :attr:`healthy` (still usable when no healthy one is left).
    :param max_message_size: bytes, the largest message accepted.
    :param timeout: seconds a call waits for its answer.
    :param outage_retry: seconds; the longest reconnection delay while no
        upstream of the pool is usable.
    :param name: the service name and how log lines name it (default
        ``host:port``).
    :ivar remote: the :class:`~nodeapi.peers.remote.RemoteNode`.
    :ivar head_block_num, head_time, lib: from the last check (0 before).
    :ivar suspect: a call timed out and no check answered since.
    :ivar trips: breaker trips; :ivar fault: why the breaker last tripped
        (text), or None.
    :ivar in_flight, calls, errors, calls_lost, timeouts, latency_sum,
        latency_buckets: (properties) the connection's call figures
        (:class:`~nodeapi.peers.client.CallFigures`); :ivar bad_replies:
        messages refused; :ivar attempts, connections: connection attempts
        made, connections opened.
    """

    log = Logger()

    def __init__(self, address, pool, reactor: Any, clock: Optional[Any] = None,
                 interval: float = 3.0, max_head_age: float = 60.0,
                 max_message_size: int = 4194304, timeout: float = 5.0,
                 outage_retry: float = 0.5, name: Optional[str] = None) -> None:
        super().__init__()
        self.address, self.pool, self.reactor = address, pool, reactor
        self.clock = clock if clock is not None else reactor
        self.interval, self.max_head_age = interval, max_head_age
        self.timeout, self.outage_retry = timeout, outage_retry
        self.name = name or address.address
        self.logged_in = False
        self.chain_id: Optional[str] = None
        self.checked = False
        self.head_block_num = self.head_time = self.lib = 0
        self.suspect = False
        self.trips = 0
        self.fault: Optional[str] = None
        self._last_trip = None  # clock time of the last trip
        self._noticed_head = 0  # highest head shown outside the checks
        self._next_callback = 1
        self._handlers: dict = {}
        self._alarm = Alarm(self.clock)  # the poll's sleep, cut short by a close
        self._backoff = backoffPolicy(0.5, 10.0)
        self.remote = RemoteNode(address, self, reactor=reactor, clock=self.clock,
                                 timeouts=self.clock, backoff=self._delay,
                                 what=f"Upstream {self.name}",
                                 max_message_size=max_message_size, timeout=timeout,
                                 max_in_flight=MAX_IN_FLIGHT)
        self.remote.setServiceParent(self)

    def _delay(self, failures: int) -> float:
        """Seconds before reconnecting after ``failures`` trips in a row
        (each lengthens the delay): at most ``outage_retry`` while no
        upstream of the pool is usable (:meth:`hurry` cuts a longer wait
        short), so the gateway serves again within about a second of an
        upstream's return."""
        delay = self._backoff(failures)
        if not any(u.usable for u in self.pool.upstreams):
            delay = min(delay, self.outage_retry)
        return delay

    def hurry(self) -> None:
        """Not connected and waiting to reconnect: try again now (the pool
        lost its last usable upstream; the wait was set while another
        served)."""
        if self.running:
            self.remote.hurry()

    # -- the connection's figures ------------------------------------------------------

    @property
    def protocol(self):
        """The open connection, or None."""
        return self.remote.protocol

    connections = _of_remote("connections", "WebSocket connections opened")
    attempts = _of_remote("attempts", "connection attempts made")
    bad_replies = _of_remote("bad_messages", "messages refused")
    in_flight = _of_remote("figures.in_flight", "calls sent or waiting, not answered")
    calls = _of_remote("figures.calls", "calls made")
    errors = _of_remote("figures.errors", "calls answered with an error")
    calls_lost = _of_remote("figures.lost", "calls lost with their connection")
    timeouts = _of_remote("figures.timeouts", "calls not answered in time")
    latency_sum = _of_remote("figures.latency_sum", "seconds from call to answer, in total")
    latency_buckets = _of_remote("figures.latency_buckets",
                                 "cumulative answered calls per latency bucket")

    # -- state ---------------------------------------------------------------------

    @property
    def chain_ok(self) -> bool:
        """Whether this upstream's chain id is known and is the pool's
        (``pool.chain_id``)."""
        return self.chain_id is not None and self.chain_id == self.pool.chain_id

    @property
    def usable(self) -> bool:
        """Connected, logged in, checked once and serving the pool's chain."""
        proto = self.protocol
        return proto is not None and not proto.closed and self.logged_in and self.chain_ok

    @property
    def in_rotation(self) -> bool:
        """Usable and not :attr:`suspect`: given calls (the pool also
        leaves out an upstream whose head lags)."""
        return self.usable and not self.suspect

    @property
    def head(self) -> int:
        """The highest head block number known of this connection (its
        last check, or a notice or answer since, :meth:`saw_head`)."""
        return max(self.head_block_num, self._noticed_head)

    def saw_head(self, num) -> None:
        """A notice or an answer of this upstream showed head block
        ``num`` (ignored unless a block number, :data:`MAX_BLOCK_NUM`)."""
        if type(num) is int and self._noticed_head < num <= MAX_BLOCK_NUM:
            self._noticed_head = num
            self.pool.rotation_changed(self)

    @property
    def head_age(self) -> Optional[float]:
        """Seconds since the head block's time at the last check, or None."""
        if not self.checked:
            return None
        return max(self.clock.seconds() - self.head_time, 0.0)

    @property
    def healthy(self) -> bool:
        """Usable, checked, and its head at most ``max_head_age`` old."""
        age = self.head_age
        return self.usable and age is not None and age <= self.max_head_age

    def pending(self, method: str) -> int:
        """Calls of ``method`` sent on the current connection and not answered."""
        proto = self.protocol
        return proto.pending_methods().count(method) if proto is not None else 0

    # -- calls -----------------------------------------------------------------------

    def call(self, api, method: str, args: list) -> defer.Deferred:
        """``method`` of set ``api`` (a name such as ``"database"``: the
        upstream resolves it with its login API, bitshares-fc
        src/rpc/websocket_api.cpp ``"call"`` with a string set) with
        ``args``; a Deferred firing with the decoded result or failing
        with :class:`~nodeapi.peers.errors.PeerRpcError` (the upstream's
        error) or :class:`~nodeapi.peers.errors.PeerDisconnected`."""
        return self.remote.call(api, method, args)

    def call_raw(self, api, method: str, args: list) -> defer.Deferred:
        """:meth:`call` whose result is the JSON bytes of the upstream's
        answer (:mod:`nodeapi.peers.client`)."""
        return self.remote.call(api, method, args, raw=True)

    # -- notices ----------------------------------------------------------------------

    def new_callback_id(self) -> int:
        """A callback id not used before with this upstream (on any of its
        connections, so a stale id never names a newer registration)."""
        n = self._next_callback
        self._next_callback += 1
        return n

    def listen(self, callback_id: int, handler: Optional[Callable[[list], None]]) -> None:
        """Send the notices of ``callback_id`` on the current connection to
        ``handler(payload)`` (``payload``: the notice's list); None stops.
        Every handler is dropped when the connection closes."""
        if handler is None:
            self._handlers.pop(callback_id, None)
        else:
            self._handlers[callback_id] = handler

    # -- IRemoteOwner ------------------------------------------------------------------

    def claim_chain(self, remote, chain_id: str) -> bool:
        """The pool's chain (the first upstream's when the pool has none)."""
        self.chain_id = chain_id
        return self.pool.claim_chain(self, chain_id)

    def connected(self, remote, head) -> defer.Deferred:
        """Logged in, on the pool's chain, ``head`` read: usable from now
        on; the checks run every ``interval`` seconds on this connection."""
        self._checked(head)
        self.logged_in = True
        self.pool.changed(self)
        return defer.Deferred.fromCoroutine(self._run(remote.protocol))

    def notice(self, remote, callback_id, payload) -> None:
        """To the handler of ``callback_id`` (:meth:`listen`), if any."""
        handler = self._handlers.get(callback_id)
        if handler is not None:
            handler(payload)

    def call_timed_out(self, remote, method: str) -> None:
        """A call was not answered in time: :attr:`suspect`, out of
        rotation until a check answers in time (one is made now)."""
        if not self.logged_in or self.suspect:
            return
        self.suspect = True
        self.log.warn("Upstream {upstream} did not answer {method} within {timeout:g} s; "
                      "out of rotation until it answers a check", upstream=self.name,
                      method=method, timeout=self.timeout)
        self.pool.rotation_changed(self)
        self._alarm.ring()

    def failed(self, remote, error) -> bool:
        """A check not answered in time (or answering a head block number
        or last irreversible block that cannot be: ``uint32_t`` in
        graphene, the irreversible block at most the head; or a time that
        cannot be read), a message that does not pass
        :mod:`nodeapi.peers.replies` or answers an id not asked, or one too
        large opens the circuit breaker: the connection is dropped (the
        remote node logs why, with the delay), every call on it fails as
        lost, and the upstream is unusable until a new connection has
        logged in and passed a check."""
        if isinstance(error, (UpstreamTimeout, BadReply, MessageTooLarge)):
            self.trips += 1
            self._last_trip = self.clock.seconds()
            self.fault = str(error)
            self.log.error("Upstream {upstream} out of rotation (breaker open): {reason}",
                           upstream=self.name, reason=self.fault)
        return False

    def lost(self, remote) -> None:
        """The connection is gone; the pool is told if it was usable."""
        was = self.logged_in and self.chain_ok  # usable until this close
        self.logged_in = self.checked = self.suspect = False
        self._noticed_head = 0
        self._handlers = {}
        if was:
            self.pool.changed(self)
        self._alarm.ring()

    def check_soon(self) -> None:
        """Check the upstream now rather than at the end of the interval
        (a call waits for its head to move)."""
        self._alarm.ring()

    # -- the loop ----------------------------------------------------------------------

    async def _run(self, proto) -> None:
        while proto is self.protocol and self.running:
            if not self.suspect:  # a suspect one is checked at once
                await self._alarm.sleep(self.interval)
            if proto is not self.protocol:
                return
            was = self.healthy
            self._checked(read_head(await proto.call(
                "database", "get_dynamic_global_properties", []), self.chain_id))
            if proto is not self.protocol:
                return
            if self.suspect:
                self.suspect = False
                self.log.info("Upstream {upstream} answered its check: back in rotation",
                              upstream=self.name)
            if self.healthy != was:
                self.pool.changed(self)
            self.pool.rotation_changed(self)

    def _checked(self, head) -> None:
        """A check answered with ``head`` (a
        :class:`~nodeapi.peers.remote.RemoteHead`); the trips in a row are
        forgotten :data:`BREAKER_MEMORY` seconds after the last one."""
        self.head_time, self.head_block_num = head.time, head.head_block_num
        self.lib = head.last_irreversible_block_num
        self.checked = True
        if self._last_trip is None or \
                self.clock.seconds() - self._last_trip > BREAKER_MEMORY:
            self.remote.succeeded()
