"""The gateway's extra connections to its upstreams for merged
subscriptions (:class:`SideLinks`).

bitshares-core subscribes at most ``api_limit_get_full_accounts_subscribe``
(100) accounts per connection (libraries/app/database_api.cpp
``get_full_accounts``: ``_subscribed_accounts`` belongs to one
``database_api_impl``, one per connection), so the gateway spreads its
clients' accounts over several connections
(:mod:`nodeapi.gateway.shards`).  The first subscription connection to an
upstream is the pool's own (:class:`~nodeapi.gateway.upstream.Upstream`,
shared with the forwarded calls); the others are made here, one
:class:`~nodeapi.gateway.upstream.Upstream` each to the same address (its
login, chain check and health checks, its reconnection), children of the
pool service (started and stopped with it) but not among the pool's
upstreams: no forwarded call uses them.
"""

from typing import Any, Callable

from nodeapi.gateway.upstream import Upstream


class _Owner:
    """What a side connection's :class:`Upstream` expects of its pool: the
    pool's chain (never claimed by a side connection) and its changes,
    reported to the :class:`SideLinks`; anything else is the pool's."""

    def __init__(self, pool, changed: Callable) -> None:
        self._pool = pool
        self._changed = changed

    def claim_chain(self, upstream, chain_id: str) -> bool:
        return chain_id == self._pool.chain_id

    def changed(self, upstream) -> None:
        self._changed(upstream)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)


class SideLinks:
    """Connection ``index`` of each pool upstream for the subscriptions.

    :param pool: the :class:`~nodeapi.gateway.pool.UpstreamPool`.
    :param changed: ``changed(connection)`` whenever a side connection
        becomes usable or stops being usable (as ``pool.watch``).
    :param max_message_size: bytes, the largest message a side connection
        accepts (the pool's connections' figure)."""

    def __init__(self, pool, changed: Callable, max_message_size: int = 64 * 1024 * 1024) -> None:
        self.pool = pool
        self.max_message_size = max_message_size
        self._owner = _Owner(pool, changed)
        self._made: dict = {}  # (pool upstream, index) -> side Upstream
        self._of: dict = {}  # side Upstream -> its pool upstream

    def __len__(self) -> int:
        return len(self._made)

    def connection(self, upstream, index: int):
        """The connection ``index`` to ``upstream``'s node: ``upstream``
        itself for 0, else a side connection (made and started on first
        use; usable once it logged in and checked the chain)."""
        if index == 0:
            return upstream
        key = (upstream, index)
        side = self._made.get(key)
        if side is None:
            side = Upstream(upstream.address, self._owner, self.pool.reactor,
                            clock=upstream.clock, interval=upstream.interval,
                            max_head_age=upstream.max_head_age,
                            max_message_size=self.max_message_size,
                            name=f"{upstream.name}#{index}")
            self._made[key] = side
            self._of[side] = upstream
            side.setServiceParent(self.pool)  # started now when the pool runs
        return side

    def upstream_of(self, connection):
        """The pool upstream ``connection`` connects to (itself for one of
        the pool's)."""
        return self._of.get(connection, connection)

    def release(self, connection) -> None:
        """No subscription uses the side ``connection`` any more: closed
        (nothing for a pool upstream)."""
        upstream = self._of.pop(connection, None)
        if upstream is None:
            return
        for key, side in list(self._made.items()):
            if side is connection:
                del self._made[key]
        if connection.parent is not None:
            connection.disownServiceParent()
