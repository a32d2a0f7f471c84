"""One upstream node of the gateway: its connection, login, chain id,
health and figures.

An :class:`Upstream` keeps one WebSocket connection to a
bitshares-core-compatible node (``ws://[user:password@]host:port``),
reconnecting with a growing delay (``ClientService``, the peers package's
quiet retry lines).  Once open it logs in when the URL carries
credentials (``login_api.login``, bitshares-core libraries/app/api.cpp:
the sets the node's api-access gives that user; without credentials the
node's anonymous ``*`` entry), reads ``database.get_chain_id`` and then
every ``interval`` seconds ``database.get_dynamic_global_properties``:

* :attr:`usable`: connected, logged in, checked once, its chain id the pool's
  (:attr:`chain_ok`; an upstream of another chain, or one refusing the
  login, is dropped and tried again with a growing delay);
* :attr:`healthy`: usable and its head block at most ``max_head_age``
  seconds old (by the injected clock), the check answered;
* :attr:`lib`: its last irreversible block number (the cache's bound);
* :attr:`head`: the highest head block number known of it (its checks,
  and the notices and answers that show one, :meth:`saw_head`).

Never hang: every call has a timeout (``timeout`` seconds,
:mod:`nodeapi.gateway.connection`).  A call that times out makes the
upstream :attr:`suspect` (out of rotation, :attr:`in_rotation`) and
checks it at once; the check answering in time ends the suspicion.  The
circuit breaker opens (:meth:`trip`: the connection is dropped, every call
on it fails as lost, the upstream is unusable until a new connection has
logged in and passed a check) when the upstream fails a check (no answer
in time, or a head block number or last irreversible block that cannot
be, or a time that cannot be read: block numbers are ``uint32_t`` in
graphene, the last irreversible block is at most the head) or sends a message that does not
pass :mod:`nodeapi.gateway.replies` or answers an id it was not asked.
Each trip in a row lengthens the reconnection delay (the trips are
forgotten after :data:`BREAKER_MEMORY` seconds without one); while no
upstream of the pool is usable, reconnection attempts come at most
``outage_retry`` seconds apart (:meth:`hurry` cuts a longer wait short),
so the gateway serves again within about a second of an upstream's return.

Calls go through :meth:`call` / :meth:`call_raw`, which count
:attr:`in_flight`, latency and errors.  Notices of the connection
(``{"method":"notice","params":[callback_id, [payload...]]}``) go to the
handler registered for their callback id (:meth:`listen`; ids handed out
by :meth:`new_callback_id`, never reused).  The
:class:`~nodeapi.gateway.pool.UpstreamPool` is told of every change of
:attr:`usable` (``pool.changed(upstream)``).
"""

import bisect
from typing import Any, Callable, Optional

from twisted.application import service
from twisted.application.internet import backoffPolicy
from twisted.internet import defer
from twisted.internet.endpoints import HostnameEndpoint
from twisted.logger import Logger

from nodeapi.gateway.connection import UpstreamFactory
from nodeapi.gateway.replies import BadReply
from nodeapi.peers.alarm import Alarm
from nodeapi.peers.errors import (
    LoginRefused, PeerDisconnected, PeerRpcError, UpstreamTimeout, WrongChain)
from nodeapi.peers.reconnect import QuietClientService, ReportingEndpoint, RetryReport
from nodeapi.protocol.errors import InvalidTime
from nodeapi.protocol.times import parse_time

#: upper bounds (seconds) of the latency histogram buckets
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                   10.0)
#: seconds without a trip after which an upstream's trips in a row are forgotten
BREAKER_MEMORY = 60.0
#: the largest block number (graphene block numbers are uint32_t)
MAX_BLOCK_NUM = 2 ** 32 - 1


class Upstream(service.MultiService):
    """One upstream node (module docstring).

    :param address: a :class:`~nodeapi.protocol.node_address.NodeAddress`.
    :param pool: the owner, told of changes (``pool.changed(self)``) and
        asked for the chain id (``pool.chain_id``, None until one is
        known; ``pool.claim_chain(self, chain_id)`` proposes one).
    :param reactor: the reactor (connections).
    :param clock: ``IReactorTime`` of the checks and latencies (default
        the reactor).
    :param interval: seconds between health checks.
    :param max_head_age: seconds; an older head block makes the upstream
        not :attr:`healthy` (still usable when no healthy one is left).
    :param max_message_size: bytes, the largest message accepted.
    :param timeout: seconds a call waits for its answer.
    :param outage_retry: seconds; the longest reconnection delay while no
        upstream of the pool is usable.
    :ivar in_flight: calls sent and not answered.
    :ivar head_block_num, head_time, lib: from the last check (0 before).
    :ivar suspect: a call timed out and no check answered since.
    :ivar calls, errors, lost, timeouts, bad_replies, trips: calls made;
        answered with an error; lost with the connection; not answered in
        time; messages refused (:mod:`nodeapi.gateway.replies`, ids not
        asked); breaker trips.
    :ivar fault: why the breaker last tripped (text), or None.
    :ivar attempts: connection attempts made.
    :ivar latency_buckets: (property) cumulative counts per
        :data:`LATENCY_BUCKETS` bound (and +Inf last); :ivar latency_sum:
        seconds in total.
    """

    log = Logger()

    def __init__(self, address, pool, reactor: Any, clock: Optional[Any] = None,
                 interval: float = 3.0, max_head_age: float = 60.0,
                 max_message_size: int = 4194304, timeout: float = 5.0,
                 outage_retry: float = 0.5) -> None:
        super().__init__()
        self.address, self.pool, self.reactor = address, pool, reactor
        self.clock = clock if clock is not None else reactor
        self.interval, self.max_head_age = interval, max_head_age
        self.timeout, self.outage_retry = timeout, outage_retry
        self.name = address.address
        self.protocol = None
        self.logged_in = False
        self.chain_id: Optional[str] = None
        self.checked = False
        self.head_block_num = self.head_time = self.lib = 0
        self.in_flight = 0
        self.calls = self.errors = self.lost = self.timeouts = self.bad_replies = 0
        self.suspect = False
        self.trips = 0
        self.fault: Optional[str] = None
        self._trips_in_row = 0
        self._last_trip = None  # clock time of the last trip
        self._noticed_head = 0  # highest head shown outside the checks
        self._latency_counts = [0] * (len(LATENCY_BUCKETS) + 1)  # per bucket, not cumulative
        self.latency_sum = 0.0
        self.connections = 0
        self._next_callback = 1
        self._handlers: dict = {}
        self._alarm = Alarm(self.clock)  # the poll's sleep, cut short by a close
        self._backoff = backoffPolicy(0.5, 10.0)
        self.retries = RetryReport(self.log, f"Upstream {address.url}", self._delay,
                                   clock=self.clock)
        # a connection attempt waits ``timeout`` at most too; the next address
        # of the name (happy eyeballs) is tried 0.1 s after the last, and a
        # refused attempt fails that soon (Twisted's default: 0.3 s)
        endpoint = ReportingEndpoint(
            HostnameEndpoint(reactor, address.host, address.port, timeout=max(timeout, 1.0),
                             attemptDelay=0.1), self.retries.connect_failed)
        factory = UpstreamFactory(self, address.url, max_message_size, reactor,
                                  timeout=timeout, clock=self.clock)
        self._refusals = 0  # connections in a row refused after opening (login, chain)
        self._waiting = False  # a reconnection delay runs
        self.attempts = 0  # connection attempts made
        self.client = QuietClientService(_Attempts(endpoint, self), factory,
                                         retryPolicy=self._retry, clock=self.clock)
        self.client.setServiceParent(self)

    def _delay(self, attempt: int) -> float:
        """Seconds before reconnection attempt ``attempt`` (module
        docstring): longer after refusals and trips in a row, at most
        ``outage_retry`` while no upstream of the pool is usable."""
        delay = self._backoff(attempt + self._refusals + self._trips_in_row)
        if not any(u.usable for u in self.pool.upstreams):
            delay = min(delay, self.outage_retry)
        return delay

    def _retry(self, attempt: int) -> float:
        self._waiting = True
        return self.retries.delay(attempt)

    def hurry(self) -> None:
        """Not connected and waiting to reconnect: try again now (the pool
        lost its last usable upstream; the wait was set while another
        served).  A connection being opened is left alone."""
        if self.protocol is None and self.running and self.client.running and self._waiting:
            self._waiting = False
            self.client.stopService()
            self.client.startService()

    # -- state ---------------------------------------------------------------------

    @property
    def chain_ok(self) -> bool:
        return self.chain_id is not None and self.chain_id == self.pool.chain_id

    @property
    def usable(self) -> bool:
        """Connected, logged in and serving the pool's chain."""
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

    def _set_down(self, was: bool) -> None:
        """The connection is gone; tell the pool if it was usable."""
        self.logged_in = self.checked = self.suspect = False
        self._noticed_head = 0
        self._handlers = {}
        if was:
            self.pool.changed(self)

    def pending(self, method: str) -> int:
        """Calls of ``method`` sent on the current connection and not answered."""
        proto = self.protocol
        return proto.pending_methods().count(method) if proto is not None else 0

    @property
    def latency_buckets(self) -> list:
        """Cumulative counts of answered calls per :data:`LATENCY_BUCKETS`
        bound, +Inf last (Prometheus' histogram form)."""
        out, total = [], 0
        for count in self._latency_counts:
            total += count
            out.append(total)
        return out

    # -- calls -----------------------------------------------------------------------

    def call(self, api, method: str, args: list) -> defer.Deferred:
        """``method`` of set ``api`` (a name such as ``"database"``: the
        upstream resolves it with its login API, bitshares-fc
        src/rpc/websocket_api.cpp ``"call"`` with a string set) with
        ``args``; a Deferred firing with the decoded result or failing
        with :class:`~nodeapi.peers.errors.PeerRpcError` (the upstream's
        error) or :class:`~nodeapi.peers.errors.PeerDisconnected`."""
        return self._counted(self.protocol, False, api, method, args)

    def call_raw(self, api, method: str, args: list) -> defer.Deferred:
        """:meth:`call` whose result is the JSON bytes of the upstream's
        answer (:mod:`nodeapi.gateway.connection`)."""
        return self._counted(self.protocol, True, api, method, args)

    def _counted(self, proto, raw: bool, api, method: str, args: list) -> defer.Deferred:
        if proto is None:
            return defer.fail(PeerDisconnected(f"Upstream {self.name} is not connected"))
        self.in_flight += 1
        self.calls += 1
        started = self.clock.seconds()
        d = proto.call_raw(api, method, args) if raw else proto.call(api, method, args)

        def done(result):
            self.in_flight -= 1
            elapsed = max(self.clock.seconds() - started, 0.0)
            self.latency_sum += elapsed
            self._latency_counts[bisect.bisect_left(LATENCY_BUCKETS, elapsed)] += 1
            return result

        def failed(failure):
            if failure.check(UpstreamTimeout):
                self.timeouts += 1
            elif failure.check(PeerDisconnected):
                self.lost += 1
            else:
                self.errors += 1
            return failure

        return d.addBoth(done).addErrback(failed)

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

    # -- the peer protocol's callbacks (nodeapi.peers.client) ------------------------

    def connected(self, proto) -> None:
        self.protocol = proto
        self.retries.opened()
        self.connections += 1
        d = defer.Deferred.fromCoroutine(self._run(proto))
        d.addErrback(self._failed, proto)

    def handshake_failed(self, proto, reason: str) -> None:
        self.retries.handshake_failed(reason)

    def disconnected(self, proto, code=None, reason=None) -> None:
        if proto is not self.protocol:
            return
        was = self.logged_in and self.chain_ok  # usable until this close
        self.protocol = None
        self.retries.closed(code, reason)  # one line; a planned stop named as such
        self._set_down(was)
        self._alarm.ring()

    def notice(self, proto, callback_id, payload) -> None:
        handler = self._handlers.get(callback_id) if proto is self.protocol else None
        if handler is not None:
            handler(payload)

    def message_too_large(self, proto, limit: int) -> None:
        self.bad_replies += 1
        self.trip(proto, f"a message over {limit} bytes (max-message-size)")

    def bad_reply(self, proto, reason: str) -> None:
        """``proto`` received a message that does not pass
        (:mod:`nodeapi.gateway.replies`, or a reply to an id not asked)."""
        self.bad_replies += 1
        self.trip(proto, reason)

    def check_soon(self) -> None:
        """Check the upstream now rather than at the end of the interval
        (a call waits for its head to move)."""
        self._alarm.ring()

    def call_timed_out(self, proto, method: str) -> None:
        """A call on ``proto`` was not answered in time: out of rotation
        until a check answers (one is made now)."""
        if proto is not self.protocol or not self.logged_in or self.suspect:
            return
        self.suspect = True
        self.log.warn("Upstream {upstream} did not answer {method} within {timeout:g} s; "
                      "out of rotation until it answers a check", upstream=self.name,
                      method=method, timeout=self.timeout)
        self.pool.rotation_changed(self)
        self._alarm.ring()

    def trip(self, proto, reason: str) -> None:
        """Open the circuit breaker (module docstring): drop ``proto``'s
        connection (when it is still the current one)."""
        if proto is not self.protocol and self.protocol is not None:
            return
        self.trips += 1
        self._trips_in_row += 1
        self._last_trip = self.clock.seconds()
        self.fault = reason
        self.log.error("Upstream {upstream} out of rotation (breaker open): {reason}",
                       upstream=self.name, reason=reason)
        proto.dropConnection(abort=True)

    def _failed(self, failure, proto) -> None:
        if failure.check(UpstreamTimeout, BadReply):
            self.trip(proto, failure.getErrorMessage())
            return
        if failure.check(PeerDisconnected):
            return
        if failure.check(LoginRefused, WrongChain):
            self._refusals += 1  # the next attempts wait longer
        if failure.check(PeerRpcError, LoginRefused, WrongChain):
            self.log.error("Upstream {upstream}: {error}", upstream=self.name,
                           error=failure.getErrorMessage())
        else:
            self.log.failure("Upstream {upstream} failed", failure, upstream=self.name)
        if proto is self.protocol:
            proto.dropConnection(abort=True)

    # -- the loop ----------------------------------------------------------------------

    async def _run(self, proto) -> None:
        if self.address.credentials:
            if not await proto.call(1, "login", list(self.address.credentials)):
                raise LoginRefused(f"login as {self.address.credentials[0]} refused")
        chain_id = await proto.call("database", "get_chain_id", [])
        if proto is not self.protocol:
            return
        self.chain_id = chain_id
        if not self.pool.claim_chain(self, chain_id):
            raise WrongChain(f"it serves chain {chain_id}, not {self.pool.chain_id}: not "
                             f"used (reconnecting with a growing delay)")
        await self._check(proto)
        if proto is not self.protocol:
            return
        self.logged_in = True  # usable from now on: checked once
        self._refusals = 0
        self.log.info("Upstream {upstream} connected (chain {chain}, head {head})",
                      upstream=self.name, chain=chain_id, head=self.head_block_num)
        self.pool.changed(self)
        while proto is self.protocol and self.running:
            if not self.suspect:  # a suspect one is checked at once
                await self._alarm.sleep(self.interval)
            if proto is not self.protocol:
                return
            was = self.healthy
            await self._check(proto)
            if proto is not self.protocol:
                return
            if self.suspect:
                self.suspect = False
                self.log.info("Upstream {upstream} answered its check: back in rotation",
                              upstream=self.name)
            if self.healthy != was:
                self.pool.changed(self)
            self.pool.rotation_changed(self)

    async def _check(self, proto) -> None:
        dgp = await self._counted(proto, False, "database", "get_dynamic_global_properties",
                                  [])
        try:
            head_time = parse_time(dgp["time"])
            head = dgp["head_block_number"]
            lib = dgp["last_irreversible_block_num"]
        except (TypeError, KeyError, InvalidTime) as exc:
            raise BadReply(f"dynamic global properties without head time and blocks "
                           f"({exc!r})") from None
        if not (type(head) is int and type(lib) is int and 0 <= lib <= head <= MAX_BLOCK_NUM):
            raise BadReply(f"dynamic global properties with head block {str(head)[:24]} and "
                           f"last irreversible block {str(lib)[:24]}")
        self.head_time, self.head_block_num, self.lib = head_time, head, lib
        self.checked = True
        if self._last_trip is not None \
                and self.clock.seconds() - self._last_trip > BREAKER_MEMORY:
            self._trips_in_row = 0


class _Attempts:
    """The upstream's client endpoint: tells ``upstream`` that a
    connection attempt starts (its reconnection delay is over) before
    ``endpoint`` connects."""

    def __init__(self, endpoint, upstream) -> None:
        self.endpoint, self.upstream = endpoint, upstream

    def connect(self, factory) -> defer.Deferred:
        self.upstream._waiting = False
        self.upstream.attempts += 1
        return self.endpoint.connect(factory)
