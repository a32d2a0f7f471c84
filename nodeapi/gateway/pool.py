"""The upstream nodes of the gateway, and how a call finds one.

:class:`UpstreamPool` (a ``MultiService``) holds one
:class:`~nodeapi.gateway.upstream.Upstream` per ``--upstream`` URL.  Each
is health-checked (its head block age, its chain id equal to the pool's,
its last irreversible block: :mod:`nodeapi.gateway.upstream`).

Interface (for the forwarded API sets and the merged subscriptions):

* ``pool.pick(exclude=())`` -> a usable :class:`Upstream` (healthy ones
  first, then the fewest calls in flight, ties in turn), or raises
  :class:`~nodeapi.peers.errors.NoUpstream`; ``await pool.live(exclude)``
  waits up to ``patience`` seconds for one;
* ``upstream.call(api, method, args)`` / ``upstream.call_raw(...)``: a
  Deferred of the decoded result / of its JSON bytes, failing with
  ``PeerRpcError`` (the upstream's error) or ``PeerDisconnected``;
* notices of one upstream connection: ``cb = upstream.new_callback_id()``
  (never reused by that upstream), ``upstream.listen(cb, handler)``
  (``handler(payload_list)`` for each ``[cb, payload_list]`` notice;
  ``listen(cb, None)`` stops); a connection's handlers are dropped when it
  closes (register again on the new connection, after the subscribing
  call);
* ``pool.watch(fn)`` / ``pool.unwatch(fn)``: ``fn(upstream)`` whenever an
  upstream becomes usable (connected, logged in, on the pool's chain,
  checked once) or stops being usable (its connection lost: its
  reconnection is a new usable transition, without the old handlers; the
  upstream object stays the same), or its health changes; read
  ``upstream.usable`` / ``upstream.healthy`` in ``fn``;
* the example of a callback routed to one client:
  :class:`~nodeapi.gateway.apis.NetworkBroadcastForward` with
  :class:`~nodeapi.gateway.confirmations.Confirmations` (which survives
  the upstream's loss);
* :meth:`UpstreamPool.call`: a read call that goes to :meth:`pick`'s
  upstream and, when that connection is lost before the answer, to another
  (each upstream tried once, then once more when they were all lost: a
  lone upstream that restarted); the upstream's error becomes
  :class:`~nodeapi.peers.errors.UpstreamError` (code, message and data as
  they came);
* :meth:`UpstreamPool.broadcast`: a transaction broadcast, never repeated
  blindly: when its connection is lost before the answer, another upstream
  is asked ``database.get_recent_transaction_by_id`` (bitshares-core
  libraries/app/include/graphene/app/database_api.hpp: the transaction if
  a block of the recent, unexpired ones holds it), and the recent blocks
  are searched for its signatures to learn its block and position; only a
  transaction found nowhere is sent again, once, to the other upstream.
"""

from typing import Any, Callable, Iterable, Optional

from twisted.application import service
from twisted.internet import defer
from twisted.logger import Logger

from nodeapi.errors import ApiError
from nodeapi.gateway.upstream import Upstream
from nodeapi.peers.errors import NoUpstream, PeerDisconnected, PeerRpcError, UpstreamError
from nodeapi.protocol.transaction import transaction_id

#: blocks below the head searched for a broadcast whose answer was lost
SEARCH_BLOCKS = 20


class BroadcastLost(ApiError):
    """The connection a broadcast went on was lost before its answer, and
    what became of the transaction could not be learned: it is in no
    recent block and was not sent again (no other upstream, or the
    transaction has no valid id)."""

    name = "broadcast_lost"


class UpstreamPool(service.MultiService):
    """The upstreams of the gateway (module docstring).

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
    :ivar chain_id: the pool's chain id (None until an upstream answered).
    :ivar retried: read calls sent again after a lost connection.
    """

    log = Logger()

    def __init__(self, addresses: Iterable, reactor: Any, clock: Optional[Any] = None,
                 interval: float = 3.0, max_head_age: float = 60.0, patience: float = 10.0,
                 max_message_size: int = 4194304, chain_id: Optional[str] = None) -> None:
        super().__init__()
        self.reactor = reactor
        self.clock = clock if clock is not None else reactor
        self.patience = patience
        self.chain_id = chain_id
        self.retried = 0
        self._turn = 0
        self._follow_turn = -1
        self._watchers: list = []
        self._waiting: list = []
        self.upstreams = []
        for address in addresses:
            upstream = Upstream(address, self, reactor, clock=self.clock, interval=interval,
                                max_head_age=max_head_age, max_message_size=max_message_size)
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

    def changed(self, upstream: Upstream) -> None:
        """An upstream's usability or health changed: wake waiting calls,
        tell the watchers."""
        if upstream.usable:
            waiting, self._waiting = self._waiting, []
            for d in waiting:
                if not d.called:
                    d.callback(None)
        for fn in list(self._watchers):
            fn(upstream)

    def watch(self, fn: Callable[[Upstream], None]) -> None:
        """Call ``fn(upstream)`` at each change (module docstring)."""
        self._watchers.append(fn)

    def unwatch(self, fn: Callable[[Upstream], None]) -> None:
        if fn in self._watchers:
            self._watchers.remove(fn)

    # -- choosing --------------------------------------------------------------------

    def pick(self, exclude=()) -> Upstream:
        """The upstream for the next call (module docstring).

        :raises NoUpstream: no usable upstream outside ``exclude``."""
        usable = [u for u in self.upstreams if u.usable and u not in exclude]
        if not usable:
            raise NoUpstream("No upstream node is connected now; try again shortly")
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

    async def live(self, exclude=()) -> Upstream:
        """:meth:`pick`, waiting up to ``patience`` seconds for an upstream
        to become usable when none is.

        :raises NoUpstream: none became usable in time."""
        try:
            return self.pick(exclude)
        except NoUpstream:
            if not any(u not in exclude for u in self.upstreams) or not self.patience:
                raise
        wake = defer.Deferred()
        self._waiting.append(wake)
        timer = self.clock.callLater(self.patience, lambda: wake.called or wake.callback(None))
        await wake
        if timer.active():
            timer.cancel()
        return self.pick(exclude)

    # -- calls -----------------------------------------------------------------------

    def lost_read(self, upstream: Upstream, api: str, method: str) -> None:
        """A read call on ``upstream`` was lost with its connection: counted
        and logged (it is sent to another)."""
        self.retried += 1
        self.log.info("Upstream {upstream} lost during {api}.{method}; asking another",
                      upstream=upstream.name, api=api, method=method)

    async def call(self, api: str, method: str, args: list, raw: bool = True,
                   tried: Optional[list] = None):
        """A read call (module docstring): ``(upstream, result)``, the
        result as JSON bytes (``raw``) or decoded; ``tried``: upstreams
        already lost during this call (not asked again).

        :raises UpstreamError: the upstream answered with an error.
        :raises NoUpstream: no upstream could answer."""
        tried = list(tried or ())
        again = True  # when every upstream was lost once: one more round
        while True:
            try:
                upstream = await self.live(tried)
            except NoUpstream:
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
            except PeerDisconnected:
                tried.append(upstream)
                self.lost_read(upstream, api, method)

    async def broadcast(self, send: Callable, trx: Any):
        """Broadcast ``trx`` with ``send(upstream) -> Deferred`` (the raw
        call, its callback registered), never twice blindly (module
        docstring).  Returns ``(upstream, result bytes)`` as sent, or
        ``(upstream, None, confirmation)`` when the connection was lost
        after the transaction reached a block (``confirmation``:
        ``{"id", "block_num", "trx_num", "trx"}``, bitshares-core
        network_broadcast_api ``transaction_confirmation``).

        :raises UpstreamError: the upstream refused the transaction.
        :raises BroadcastLost: the outcome could not be learned."""
        upstream = await self.live()
        try:
            return upstream, await send(upstream)
        except PeerRpcError as exc:
            raise UpstreamError(exc) from None
        except PeerDisconnected:
            lost = upstream
        try:
            txid = transaction_id(trx)
        except Exception:
            raise BroadcastLost("The upstream was lost before it answered the broadcast, and "
                                "the transaction has no id to look for") from None
        try:
            try:
                other = await self.live([lost])
            except NoUpstream:  # a lone upstream may come back
                other = await self.live()
        except NoUpstream:
            raise BroadcastLost(f"The upstream was lost before it answered the broadcast of "
                                f"transaction {txid}, and no other upstream is connected to "
                                f"learn whether it reached a block") from None
        try:
            found = await other.call("database", "get_recent_transaction_by_id", [txid])
            if found is None:
                self.log.info("Broadcast of {txid} lost with {upstream}; sending it to "
                              "{other}", txid=txid, upstream=lost.name, other=other.name)
                return other, await send(other)
            confirmation = await self.confirmation(other, txid, found)
        except PeerRpcError as exc:
            raise UpstreamError(exc) from None
        except PeerDisconnected:
            raise BroadcastLost(f"Two upstreams were lost while transaction {txid} was "
                                f"broadcast; its outcome is unknown") from None
        if confirmation is None:
            raise BroadcastLost(f"Transaction {txid} reached the chain, but its block was "
                                f"not found among the last {SEARCH_BLOCKS}")
        return other, None, confirmation

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
