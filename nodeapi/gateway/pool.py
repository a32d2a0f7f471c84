"""The upstream nodes of the gateway, and how a call finds one.

:class:`UpstreamPool` (a ``MultiService``) holds one
:class:`~nodeapi.gateway.upstream.Upstream` per ``--upstream`` URL, each
health-checked there; the pool picks the upstream of a read, retries a
read whose connection was lost or timed out, and learns what became of a
broadcast before sending it again (bitshares-core
libraries/app/include/graphene/app/database_api.hpp
``get_recent_transaction_by_id``).  The read's way through the gateway:
docs/DESIGN.rst, "A read forwarded by a gateway"; an upstream's calls and
notices (``call``, ``call_raw``, ``new_callback_id``, ``listen``):
:mod:`nodeapi.gateway.upstream`; a callback routed to one client:
:class:`~nodeapi.gateway.apis.NetworkBroadcastForward` with
:class:`~nodeapi.gateway.confirmations.Confirmations`.
"""

from typing import Any, Callable, Iterable, Optional

import attr
from twisted.application import service
from twisted.internet import defer
from twisted.logger import Logger

from nodeapi.errors import ApiError
from nodeapi.gateway.upstream import Upstream
from nodeapi.peers.errors import (
    NoUpstream, PeerDisconnected, PeerRpcError, UpstreamError, UpstreamTimeout)
from nodeapi.protocol.transaction import transaction_id

#: blocks below the head searched for a broadcast whose answer was lost
SEARCH_BLOCKS = 20


class BroadcastLost(ApiError):
    """The connection a broadcast went on was lost before its answer, and
    what became of the transaction could not be learned: it is in no
    recent block and was not sent again (no other upstream, or the
    transaction has no valid id)."""

    name = "broadcast_lost"


@attr.s(frozen=True, slots=True)
class BroadcastOutcome:
    """What became of a broadcast (:meth:`UpstreamPool.broadcast`).

    :ivar upstream: the :class:`Upstream` that answered it, or that found
        it in a block.
    :ivar answer: the upstream's answer as it came (JSON bytes), or None
        when the connection was lost and the transaction was found in a
        block.
    :ivar confirmation: then its ``transaction_confirmation`` (``{"id",
        "block_num", "trx_num", "trx"}``, bitshares-core
        network_broadcast_api), else None.
    """

    upstream = attr.ib()
    answer = attr.ib(default=None)
    confirmation = attr.ib(default=None)


class UpstreamPool(service.MultiService):
    """The upstreams of the gateway.

    :param addresses: :class:`~nodeapi.protocol.node_address.NodeAddress`
        list, one or more.
    :param reactor: the reactor (connections, timers).
    :param clock: ``IReactorTime`` of checks and waits (default reactor).
    :param interval: seconds between an upstream's health checks.
    :param max_head_age: seconds; an upstream with an older head is used
        only when no healthy one is left.
    :param patience: seconds a call waits for a usable upstream when none
        is (a restart) before it fails with ``NoUpstream``.
    :param chain_id: the chain every upstream must serve; None: the first
        upstream's.
    :param timeout: seconds an upstream call waits for its answer.
    :param max_lag_blocks: blocks an upstream's head may lag the best
        one's and still serve reads.
    :param outage_retry: seconds between reconnection attempts, at most,
        while no upstream is usable.
    :ivar chain_id: the pool's chain id (None until an upstream answered).
    :ivar retried: read calls sent again after a lost connection or a
        timeout.
    """

    log = Logger()

    def __init__(self, addresses: Iterable, reactor: Any, clock: Optional[Any] = None,
                 interval: float = 3.0, max_head_age: float = 60.0, patience: float = 10.0,
                 max_message_size: int = 4194304, chain_id: Optional[str] = None,
                 timeout: float = 5.0, max_lag_blocks: int = 3,
                 outage_retry: float = 0.5) -> None:
        super().__init__()
        self.reactor = reactor
        self.clock = clock if clock is not None else reactor
        self.patience = patience
        self.max_lag_blocks = max_lag_blocks
        self.chain_id = chain_id
        self.retried = 0
        self._turn = 0
        self._follow_turn = -1
        self._watchers: list = []
        self._waiting: list = []
        self.upstreams = []
        for address in addresses:
            upstream = Upstream(address, self, reactor, clock=self.clock, interval=interval,
                                max_head_age=max_head_age, max_message_size=max_message_size,
                                timeout=timeout, outage_retry=outage_retry)
            upstream.setServiceParent(self)
            self.upstreams.append(upstream)
        if not self.upstreams:
            raise ValueError("an UpstreamPool needs at least one upstream")

    # -- state ---------------------------------------------------------------------

    @property
    def lib(self) -> int:
        """The highest last irreversible block of the usable upstreams (0
        without one): a block at or below it is final on the chain."""
        return max((u.lib for u in self.upstreams if u.usable), default=0)

    def claim_chain(self, upstream: Upstream, chain_id: str) -> bool:
        """``upstream`` serves ``chain_id``: the pool's chain when it had
        none; True when it is the pool's."""
        if self.chain_id is None:
            self.chain_id = chain_id
        return chain_id == self.chain_id

    @property
    def best_head(self) -> int:
        """The highest head of the upstreams in rotation (0 without one)."""
        return max((u.head for u in self.upstreams if u.in_rotation), default=0)

    def serves(self, upstream: Upstream) -> bool:
        """Whether ``upstream`` is given reads: in rotation (usable, no
        call timed out since its last check: :attr:`Upstream.in_rotation`)
        and its head lagging the best such upstream's by at most
        ``max_lag_blocks`` blocks (why not: :meth:`states`)."""
        return upstream.in_rotation \
            and self.best_head - upstream.head <= self.max_lag_blocks

    def states(self) -> list:
        """Each upstream's state for ``/healthz`` and the status page:
        ``{"upstream": host:port, "state", "head_block_num", "lag_blocks",
        "fault"}``, ``state`` one of ``serving``, ``lagging`` (more than
        ``max_lag_blocks`` behind), ``suspect`` (a call timed out, checked
        now), ``down`` (not connected, logged in and checked; ``fault``:
        why its breaker last opened, or None)."""
        best = self.best_head
        out = []
        for u in self.upstreams:
            if not u.usable:
                state = "down"
            elif u.suspect:
                state = "suspect"
            elif best - u.head > self.max_lag_blocks:
                state = "lagging"
            else:
                state = "serving"
            out.append({"upstream": u.name, "state": state,
                        "head_block_num": u.head if u.usable else None,
                        "lag_blocks": max(best - u.head, 0) if u.usable else None,
                        "fault": u.fault})
        return out

    def changed(self, upstream: Upstream) -> None:
        """An upstream's usability or health changed: wake waiting calls,
        tell the watchers; when no upstream is usable any more, every
        reconnection waiting longer tries now (:meth:`Upstream.hurry`)."""
        if upstream.usable:
            self.rotation_changed(upstream)
        elif not any(u.usable for u in self.upstreams):
            for other in self.upstreams:
                other.hurry()
        for fn in list(self._watchers):
            fn(upstream)

    def rotation_changed(self, upstream: Upstream) -> None:
        """``upstream``'s head or rotation changed: calls waiting for an
        upstream look again."""
        waiting, self._waiting = self._waiting, []
        for d in waiting:
            if not d.called:
                d.callback(None)

    def watch(self, fn: Callable[[Upstream], None]) -> None:
        """Call ``fn(upstream)`` whenever an upstream becomes usable
        (connected, logged in, on the pool's chain, checked once) or stops
        being usable (its connection lost: its reconnection is a new usable
        transition, without the old notice handlers; the upstream object
        stays the same), or its health changes; ``fn`` reads
        ``upstream.usable`` / ``upstream.healthy``."""
        self._watchers.append(fn)

    # -- choosing --------------------------------------------------------------------

    def pick(self, exclude=(), floor: int = 0, route=None) -> Upstream:
        """The upstream for the next call: one that :meth:`serves` reads,
        outside ``exclude``, its head at least ``floor``, among those
        ``route`` (a :class:`~nodeapi.gateway.routes.Route`) names; healthy
        ones first, then the fewest calls in flight, ties in turn.

        :raises NoUpstream: none."""
        serving = [u for u in self.upstreams if u not in exclude and self.serves(u)
                   and (route is None or route.serves(u))]
        if not serving:
            raise NoUpstream("No upstream node is connected now; try again shortly"
                             if route is None or route.upstreams is None else
                             "No upstream node this call is routed to (--upstream-routes) "
                             "is connected now; try again shortly")
        usable = [u for u in serving if u.head >= floor]
        if not usable:
            raise NoUpstream(f"No upstream has reached block {floor} yet, the head this "
                             f"connection has been served; try again shortly")
        healthy = [u for u in usable if u.healthy] or usable
        self._turn += 1
        n = len(healthy)
        best = min(range(n), key=lambda i: (healthy[(i + self._turn) % n].in_flight, i))
        return healthy[(best + self._turn) % n]

    def choose_address(self):
        """The address for a follower of one upstream (the searchdb
        plugin's): a usable upstream's (healthy first, the first such in
        the configured order), else the next one in turn."""
        for wanted in (lambda u: u.healthy, lambda u: u.usable):
            for upstream in self.upstreams:
                if wanted(upstream):
                    return upstream.address
        self._follow_turn += 1
        return self.upstreams[self._follow_turn % len(self.upstreams)].address

    async def live(self, exclude=(), floor: int = 0, route=None) -> Upstream:
        """:meth:`pick`, waiting up to ``patience`` seconds for an upstream
        to serve (or to reach ``floor``: those below it are checked at
        once) when none does.

        :raises NoUpstream: none did in time."""
        try:
            return self.pick(exclude, floor, route)
        except NoUpstream:
            if not any(u not in exclude for u in self.upstreams) or not self.patience:
                raise
        for u in self.upstreams:
            if u not in exclude and u.in_rotation and u.head < floor:
                u.check_soon()
        deadline = self.clock.seconds() + self.patience
        while True:
            wake = defer.Deferred()
            self._waiting.append(wake)
            timer = self.clock.callLater(max(deadline - self.clock.seconds(), 0.0),
                                         lambda: wake.called or wake.callback(None))
            await wake
            if timer.active():
                timer.cancel()
            try:
                return self.pick(exclude, floor, route)
            except NoUpstream:
                if self.clock.seconds() >= deadline:
                    raise

    # -- calls -----------------------------------------------------------------------

    def lost_read(self, upstream: Upstream, api: str, method: str,
                  timed_out: bool = False) -> None:
        """A read call on ``upstream`` was lost with its connection (or not
        answered in time): counted and logged (it is sent to another)."""
        self.retried += 1
        self.log.info("Upstream {upstream} {what} {api}.{method}; asking another",
                      upstream=upstream.name, api=api, method=method,
                      what="did not answer in time" if timed_out else "lost during")

    async def call(self, api: str, method: str, args: list, raw: bool = True,
                   tried: Optional[list] = None, floor: int = 0,
                   timed_out: Optional[UpstreamTimeout] = None, route=None):
        """A read call to :meth:`pick`'s upstream: ``(upstream, result)``, the
        result as JSON bytes (``raw``) or decoded; ``tried``: upstreams
        already lost during this call (not asked again); ``floor``: the
        lowest head the answering upstream may have; ``timed_out``: the
        timeout of an upstream already asked (then no waiting); ``route``:
        the :class:`~nodeapi.gateway.routes.Route` naming the upstreams
        that may answer (None: any).  A connection lost before the answer:
        the call goes to another upstream (each tried once, then once more
        when they were all lost: a lone upstream that restarted); an
        upstream that does not answer in time: to another that serves now,
        without waiting.

        :raises UpstreamError: the upstream answered with an error (code,
            message and data as they came).
        :raises UpstreamTimeout: an upstream did not answer in time and no
            other served.
        :raises NoUpstream: no upstream could answer."""
        tried = list(tried or ())
        again = True  # when every upstream was lost once: one more round
        while True:
            try:
                if timed_out is not None:
                    upstream = self.pick(tried, floor, route)  # no waiting after a timeout
                else:
                    upstream = await self.live(tried, floor, route)
            except NoUpstream:
                if timed_out is not None:
                    raise UpstreamTimeout(f"{timed_out}, and no other upstream could answer "
                                          f"it") from None
                if not (tried and again):
                    raise
                tried, again = [], False  # a lone upstream may be back
                continue
            try:
                if raw:
                    return upstream, await upstream.call_raw(api, method, args)
                return upstream, await upstream.call(api, method, args)
            except PeerRpcError as exc:
                raise UpstreamError(exc) from None
            except UpstreamTimeout as exc:
                tried.append(upstream)
                timed_out = exc
                self.lost_read(upstream, api, method, timed_out=True)
            except PeerDisconnected:
                tried.append(upstream)
                self.lost_read(upstream, api, method)

    async def broadcast(self, send: Callable, trx: Any, route=None) -> BroadcastOutcome:
        """Broadcast ``trx`` with ``send(upstream) -> Deferred`` (the raw
        call, its callback registered), never twice blindly: when its
        connection is lost before the answer (or the answer does not come
        in time), another upstream is asked
        ``database.get_recent_transaction_by_id`` (the transaction if a
        block of the recent, unexpired ones holds it) and the last
        :data:`SEARCH_BLOCKS` blocks are searched for its signatures to
        learn its block and position; only a transaction found nowhere is
        sent again, once, to the other upstream.  The
        :class:`BroadcastOutcome`.

        :raises UpstreamError: the upstream refused the transaction.
        :raises BroadcastLost: the outcome could not be learned.

        ``route``: the :class:`~nodeapi.gateway.routes.Route` naming the
        upstreams transactions are sent to (None: any)."""
        upstream = await self.live(route=route)
        try:
            return BroadcastOutcome(upstream, await send(upstream))
        except PeerRpcError as exc:
            raise UpstreamError(exc) from None
        except PeerDisconnected as exc:
            lost = upstream
            what = ("did not answer" if isinstance(exc, UpstreamTimeout)
                    else "was lost before it answered")
        try:
            txid = transaction_id(trx)
        except Exception:
            raise BroadcastLost(f"The upstream {what} the broadcast, and the transaction has "
                                f"no id to look for") from None
        try:
            try:
                other = await self.live([lost], route=route)
            except NoUpstream:  # a lone upstream may come back
                other = await self.live(route=route)
        except NoUpstream:
            raise BroadcastLost(f"The upstream {what} the broadcast of transaction {txid}, and "
                                f"no other upstream is connected to learn whether it reached "
                                f"a block") from None
        try:
            found = await other.call("database", "get_recent_transaction_by_id", [txid])
            if found is None:
                self.log.info("Broadcast of {txid}: {upstream} {what} it; sending it to "
                              "{other}", txid=txid, upstream=lost.name, what=what,
                              other=other.name)
                return BroadcastOutcome(other, await send(other))
            confirmation = await self.confirmation(other, txid, found)
        except PeerRpcError as exc:
            raise UpstreamError(exc) from None
        except PeerDisconnected:
            raise BroadcastLost(f"Two upstreams were lost or did not answer while transaction "
                                f"{txid} was broadcast; its outcome is unknown") from None
        if confirmation is None:
            raise BroadcastLost(f"Transaction {txid} reached the chain, but its block was "
                                f"not found among the last {SEARCH_BLOCKS}")
        return BroadcastOutcome(other, confirmation=confirmation)

    async def confirmation(self, upstream: Upstream, txid: str, trx: dict) -> Optional[dict]:
        """The ``transaction_confirmation`` of transaction ``txid`` (``trx``,
        as ``get_recent_transaction_by_id`` gave it) from the last
        :data:`SEARCH_BLOCKS` blocks of ``upstream``, matched by signatures,
        or None.  Raises what the calls raise."""
        dgp = await upstream.call("database", "get_dynamic_global_properties", [])
        head = int(dgp["head_block_number"])
        signatures = trx.get("signatures") if isinstance(trx, dict) else None
        for num in range(head, max(head - SEARCH_BLOCKS, 0), -1):
            block = await upstream.call("database", "get_block", [num])
            for i, included in enumerate((block or {}).get("transactions", [])):
                if included.get("signatures") == signatures:
                    return {"id": txid, "block_num": num, "trx_num": i, "trx": included}
        return None
