"""history API, the history of a liquidity pool (a section of
:class:`nodeapi.api.history.HistoryApi`): ``get_liquidity_pool_history``,
``get_liquidity_pool_history_by_sequence``.

Graphene reference: bitshares-core libraries/app/api.cpp (``history_api``;
limit ``api-limit-get-liquidity-pool-history``).  The records come from
``node.plugins["market_history"].pools``
(:class:`nodeapi.plugins.market_history.pools.LiquidityPoolHistory`, kept with the
``market_history`` plugin, as graphene keeps them in it): without the
plugin both functions fail with ``Market history plugin is not enabled``.
Times are fc ``time_point_sec`` strings.
"""

from typing import Any

from nodeapi.api.arguments import typed_id
from nodeapi.api.base import Section, api_function
from nodeapi.api.history.arguments import (
    limit_or_default, market_plugin, optional_int, optional_time, uint)
from nodeapi.protocol.times import format_time


def _iso(seconds):
    return None if seconds is None else format_time(seconds)


class PoolHistory(Section):
    """A liquidity pool's history objects by time and by sequence."""

    def _arguments(self, pool_id, limit, operation_type) -> tuple:
        # graphene: "Market history plugin is not enabled"
        return (market_plugin(self.node).pools, typed_id(pool_id, "1.19", "pool_id"),
                limit_or_default(self.node, limit, "get_liquidity_pool_history"),
                optional_int(operation_type, "operation_type"))

    @api_function
    def get_liquidity_pool_history(self, pool_id, start=None, stop=None, limit=None,
                                   operation_type=None) -> Any:
        """The pool's history objects ``{id, pool, sequence, time,
        op_type, op}`` newest first with ``stop < time <= start`` (each
        optional), of ``operation_type`` when given, at most ``limit``
        (default and maximum ``api-limit-get-liquidity-pool-history``)."""
        pools, pool, limit, op_type = self._arguments(pool_id, limit, operation_type)
        start_s, stop_s = optional_time(start, "start"), optional_time(stop, "stop")
        return pools.by_time(pool, _iso(start_s), _iso(stop_s), limit, op_type)

    @api_function
    def get_liquidity_pool_history_by_sequence(self, pool_id, start=None, stop=None,
                                               limit=None, operation_type=None) -> Any:
        """The pool's history objects newest first from sequence ``start``
        while ``time > stop`` (each optional), as
        :meth:`get_liquidity_pool_history`."""
        pools, pool, limit, op_type = self._arguments(pool_id, limit, operation_type)
        seq = None if start is None else uint(start, "start", (1 << 64) - 1)
        stop_s = optional_time(stop, "stop")
        return pools.by_sequence(pool, seq, _iso(stop_s), limit, op_type)
