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
* :attr:`lib`: its last irreversible block number (the cache's bound).

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
from nodeapi.peers.alarm import Alarm
from nodeapi.peers.errors import LoginRefused, PeerDisconnected, PeerRpcError, WrongChain
from nodeapi.peers.reconnect import QuietClientService, ReportingEndpoint, RetryReport
from nodeapi.protocol.errors import InvalidTime
from nodeapi.protocol.times import parse_time

#: upper bounds (seconds) of the latency histogram buckets
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                   10.0)


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
    :ivar in_flight: calls sent and not answered.
    :ivar head_block_num, head_time, lib: from the last check (0 before).
    :ivar calls, errors, lost: calls made; answered with an error; lost
        with the connection.
    :ivar latency_buckets: (property) cumulative counts per
        :data:`LATENCY_BUCKETS` bound (and +Inf last); :ivar latency_sum:
        seconds in total.
    """

    log = Logger()

    def __init__(self, address, pool, reactor: Any, clock: Optional[Any] = None,
                 interval: float = 3.0, max_head_age: float = 60.0,
                 max_message_size: int = 4194304) -> None:
        super().__init__()
        self.address, self.pool, self.reactor = address, pool, reactor
        self.clock = clock if clock is not None else reactor
        self.interval, self.max_head_age = interval, max_head_age
        self.name = address.address
        self.protocol = None
        self.logged_in = False
        self.chain_id: Optional[str] = None
        self.checked = False
        self.head_block_num = self.head_time = self.lib = 0
        self.in_flight = 0
        self.calls = self.errors = self.lost = 0
        self._latency_counts = [0] * (len(LATENCY_BUCKETS) + 1)  # per bucket, not cumulative
        self.latency_sum = 0.0
        self.connections = 0
        self._next_callback = 1
        self._handlers: dict = {}
        self._alarm = Alarm(self.clock)  # the poll's sleep, cut short by a close
        self.retries = RetryReport(self.log, f"Upstream {address.url}",
                                   backoffPolicy(0.5, 10.0))
        endpoint = ReportingEndpoint(HostnameEndpoint(reactor, address.host, address.port),
                                     self.retries.connect_failed)
        factory = UpstreamFactory(self, address.url, max_message_size, reactor)
        self._refusals = 0  # connections in a row refused after opening (login, chain)
        self.client = QuietClientService(
            endpoint, factory, retryPolicy=lambda attempt: self.retries.delay(
                attempt + self._refusals), clock=self.clock)
        self.client.setServiceParent(self)

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
        self.logged_in = self.checked = False
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
            if failure.check(PeerDisconnected):
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
        self.log.info("Upstream {upstream} disconnected ({code} {reason})",
                      upstream=self.name, code=code, reason=reason or "")
        self._set_down(was)
        self._alarm.ring()

    def notice(self, proto, callback_id, payload) -> None:
        handler = self._handlers.get(callback_id) if proto is self.protocol else None
        if handler is not None:
            handler(payload)

    def message_too_large(self, proto, limit: int) -> None:
        self.log.warn("Upstream {upstream} sent a message over {limit} bytes "
                      "(max-message-size)", upstream=self.name, limit=limit)

    def bad_message(self, proto, reason: str) -> None:
        self.log.error("Upstream {upstream} sent {reason}", upstream=self.name, reason=reason)
        proto.dropConnection(abort=True)

    def _failed(self, failure, proto) -> None:
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
            await self._alarm.sleep(self.interval)
            if proto is not self.protocol:
                return
            was = self.healthy
            await self._check(proto)
            if self.healthy != was:
                self.pool.changed(self)

    async def _check(self, proto) -> None:
        dgp = await self._counted(proto, False, "database", "get_dynamic_global_properties",
                                  [])
        try:
            self.head_time = parse_time(dgp["time"])
            self.head_block_num = int(dgp["head_block_number"])
            self.lib = int(dgp["last_irreversible_block_num"])
        except (TypeError, KeyError, ValueError, InvalidTime) as exc:
            raise PeerRpcError("get_dynamic_global_properties",
                               f"an answer without head time and blocks ({exc})") from None
        self.checked = True
