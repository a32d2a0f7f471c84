"""The notices of ``broadcast_transaction_with_callback`` across the loss
of the upstream that took the transaction.

bitshares-core calls a broadcast's callback once, from the upstream
connection it was registered on, when a block includes the transaction
(libraries/app/api.cpp ``network_broadcast_api::on_applied_block``).  When
that connection is lost first, the registration is gone with it, but the
transaction most likely reached the network (the upstream relays it to
its peers at once, ``broadcast_transaction_with_callback``).  So
:class:`Confirmations` keeps every registration until its notice came;
when its upstream stops being usable, another upstream is asked every
``interval`` seconds for the transaction (``get_recent_transaction_by_id``,
database_api.hpp), and once a block holds it the confirmation is built
from that block (:meth:`~nodeapi.gateway.pool.UpstreamPool.confirmation`)
and delivered as the notice would have been.  The search ends once a
usable upstream's head block is past the transaction's expiration (no
later block can include it, and a bitshares-core node never calls back
either), or when the client leaves.
"""

from typing import Any, Callable, Optional

from twisted.internet import defer, task
from twisted.logger import Logger

from nodeapi.peers.errors import NoUpstream, PeerDisconnected, PeerRpcError
from nodeapi.protocol.times import parse_time


class _Pending:
    __slots__ = ("upstream", "callback_id", "txid", "expiration", "deliver", "ended", "done")

    def __init__(self, upstream, callback_id, txid, expiration, deliver, ended) -> None:
        self.upstream, self.callback_id, self.txid = upstream, callback_id, txid
        self.expiration, self.deliver, self.ended, self.done = expiration, deliver, ended, False

    def end(self) -> None:
        """No notice for it any more: done, and ``ended()`` told (once)."""
        if not self.done:
            self.done = True
            if self.ended is not None:
                self.ended()


class Confirmations:
    """Registrations of broadcast callbacks (module docstring).

    :param pool: the :class:`~nodeapi.gateway.pool.UpstreamPool` (watched).
    :param interval: seconds between two searches of a lost one.
    :ivar recovered: confirmations delivered after their upstream was lost.
    """

    log = Logger()

    def __init__(self, pool, interval: float = 3.0) -> None:
        self.pool = pool
        self.interval = interval
        self.recovered = 0
        self._pending: dict = {}  # upstream -> [_Pending]
        pool.watch(self._changed)

    def register(self, upstream, trx: Any, txid: str, deliver: Callable[[Any], None],
                 ended: Optional[Callable[[], None]] = None) -> tuple:
        """A callback id on ``upstream`` whose notice goes to
        ``deliver(confirmation)`` (once); returns ``(callback id, key)``,
        the key for :meth:`cancel`.  ``ended()`` is called once when the
        registration stops waiting for whatever reason (its notice came,
        :meth:`cancel`, its transaction expired)."""
        callback_id = upstream.new_callback_id()
        try:
            expiration = parse_time(trx.get("expiration")) if isinstance(trx, dict) else None
        except ValueError:
            expiration = None
        entry = _Pending(upstream, callback_id, txid, expiration, deliver, ended)
        self._sweep(upstream)
        self._pending.setdefault(upstream, []).append(entry)

        def notice(payload: list) -> None:
            self._settle(entry, payload[0] if payload else None)

        upstream.listen(callback_id, notice)
        return callback_id, entry

    def cancel(self, entry: _Pending) -> None:
        """No notice for ``entry`` any more (the client left, the upstream
        refused the transaction)."""
        if entry.done:
            return
        entry.end()
        entry.upstream.listen(entry.callback_id, None)
        waiting = self._pending.get(entry.upstream)
        if waiting is not None and entry in waiting:
            waiting.remove(entry)

    def _sweep(self, upstream) -> None:
        """Forget ``upstream``'s registrations whose transaction expired by
        its head block time: no block can include it any more, so no notice
        will come (bitshares-core keeps its ``_callbacks`` entries; this
        node bounds what it keeps per connection instead)."""
        chain_time = upstream.head_time
        for entry in list(self._pending.get(upstream, ())):
            if entry.expiration is not None and entry.expiration < chain_time:
                self.cancel(entry)

    def _settle(self, entry: _Pending, confirmation: Any) -> None:
        if entry.done:
            return
        self.cancel(entry)
        entry.deliver(confirmation)

    def _changed(self, upstream) -> None:
        if upstream.usable:
            return
        lost = self._pending.pop(upstream, [])
        for entry in lost:
            if not entry.done:
                d = defer.Deferred.fromCoroutine(self._search(entry))
                d.addErrback(lambda f: self.log.failure("Confirmation search failed", f))

    async def _search(self, entry: _Pending) -> None:
        """Ask the other upstreams until a block holds the transaction or it
        expired (module docstring)."""
        clock = self.pool.clock
        while not entry.done:
            chain_time = max((u.head_time for u in self.pool.upstreams if u.usable), default=0)
            if entry.expiration is not None and chain_time > entry.expiration:
                self.log.info("Transaction {txid} expired unconfirmed after its upstream "
                              "was lost", txid=entry.txid)
                entry.end()
                return
            await task.deferLater(clock, self.interval, lambda: None)
            confirmation = await self._look(entry)
            if confirmation is not None and not entry.done:
                entry.end()
                self.recovered += 1
                entry.deliver(confirmation)

    async def _look(self, entry: _Pending) -> Optional[dict]:
        try:
            try:
                other = self.pool.pick([entry.upstream])
            except NoUpstream:  # the only one: back again, or not yet
                other = self.pool.pick()
            found = await other.call("database", "get_recent_transaction_by_id", [entry.txid])
            if found is None:
                return None
            return await self.pool.confirmation(other, entry.txid, found)
        except (NoUpstream, PeerDisconnected, PeerRpcError):
            return None
