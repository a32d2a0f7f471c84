"""history API functions over blocks, time and liquidity pools (a mixin of
:class:`nodeapi.api.history.HistoryApi`): ``get_account_history_by_time``,
``get_account_history_by_operations``, ``get_block_operation_history``,
``get_block_operations_by_time``, ``get_liquidity_pool_history``,
``get_liquidity_pool_history_by_sequence``.

Graphene reference: bitshares-core libraries/app/api.cpp (``history_api``;
limits ``api-limit-get-account-history``,
``api-limit-get-account-history-by-operations`` and
``api-limit-get-liquidity-pool-history``).  Times are fc
``time_point_sec`` strings (``YYYY-MM-DDTHH:MM:SS``).  The operation
answers come from ``node.history`` (:class:`nodeapi.applied.IAccountHistory`,
possibly Deferreds), the pool histories from ``node.pool_history``
(:class:`nodeapi.history.pool_history.LiquidityPoolHistory`, kept with the
``market_history`` plugin, as graphene keeps them in it).
"""

from typing import Any

from twisted.internet.defer import maybeDeferred

from nodeapi.api.arguments import parse_time_point, typed_id
from nodeapi.api.base import api_function, fc_int
from nodeapi.errors import ApiError, ApiLimitExceeded
from nodeapi.protocol.times import format_time

_U16 = (1 << 16) - 1
_U32 = (1 << 32) - 1


def optional_time(value, what: str):
    """An optional fc ``time_point_sec`` (null or a string) -> seconds or
    None (:func:`~nodeapi.api.arguments.parse_time_point`)."""
    return None if value is None else parse_time_point(value, what)


def _uint(value, what: str, bound: int) -> int:
    value = fc_int(value, what)
    if not 0 <= value <= bound:
        raise ApiError(f"{what}: expected an integer 0..{bound}, got {value!r}")
    return value


def _optional_int(value, what: str):
    return None if value is None else fc_int(value, what)


class BlockHistoryMixin:
    """History by time, by block, by operation types, of liquidity pools."""

    def _limit_or_default(self, limit, option: str) -> int:
        configured = getattr(self.node.limits, option)
        if limit is None:
            return configured
        limit = _uint(limit, "limit", _U32)
        if limit > configured:
            raise ApiLimitExceeded(configured)
        return limit

    @api_function
    def get_account_history_by_time(self, account_name_or_id, limit=None, start=None) -> Any:
        """The account's operations at or before ``start`` (default: no
        bound), newest first, at most ``limit`` (default and maximum
        ``api-limit-get-account-history``); ``[]`` for an unknown account."""
        limit = self._limit_or_default(limit, "get_account_history")
        start_s = optional_time(start, "start")
        return self._with_account(account_name_or_id, lambda account_id: (
            self.node.history.get_account_history_by_time(account_id, limit, start_s)))

    @api_function
    def get_account_history_by_operations(self, account_name_or_id, operation_types,
                                          start: int, limit: int) -> Any:
        """``{total_count, operation_history_objs}``: the account's entries
        with sequence numbers ``[start, start + limit - 1]`` (graphene calls
        ``get_relative_account_history(account, start, limit, start + limit
        - 1)``, so its limit applies too), ``total_count`` of them, kept when
        their type is in ``operation_types`` (all when empty)."""
        self._check_limit("get_account_history_by_operations", _uint(limit, "limit", _U32))
        if not isinstance(operation_types, list):
            raise ApiError("operation_types must be an array of operation type numbers")
        types = {_uint(t, "operation_types", _U16) for t in operation_types}
        start = _uint(start, "start", _U32)
        top = (limit + start - 1) & _U32  # graphene computes it in uint32_t
        objs = maybeDeferred(self.get_relative_account_history, account_name_or_id, start,
                             limit, top)

        def detail(entries):
            kept = [e for e in entries if not types or e["op"][0] in types]
            return {"total_count": len(entries), "operation_history_objs": kept}

        return objs.addCallback(detail)

    @api_function
    def get_block_operation_history(self, block_num: int, trx_in_block=None) -> Any:
        """The operations of block ``block_num`` by (trx_in_block,
        op_in_trx, virtual_op), only those of transaction ``trx_in_block``
        when given."""
        block_num = _uint(block_num, "block_num", _U32)
        trx = None if trx_in_block is None else _uint(trx_in_block, "trx_in_block", _U16)
        if self.node.history is None:
            return []
        return self.node.history.get_block_operation_history(block_num, trx)

    @api_function
    def get_block_operations_by_time(self, start=None) -> Any:
        """The operations of the newest block holding operations at or
        before ``start`` (default: the newest), newest first."""
        start_s = optional_time(start, "start")
        if self.node.history is None:
            return []
        return self.node.history.get_block_operations_by_time(start_s)

    def _pool_history(self, pool_id, limit, operation_type):
        self._market_plugin()  # graphene: "Market history plugin is not enabled"
        pools = self.node.pool_history
        return (pools, typed_id(pool_id, "1.19", "pool_id"),
                self._limit_or_default(limit, "get_liquidity_pool_history"),
                _optional_int(operation_type, "operation_type"))

    @api_function
    def get_liquidity_pool_history(self, pool_id, start=None, stop=None, limit=None,
                                   operation_type=None) -> Any:
        """The pool's history objects ``{id, pool, sequence, time,
        op_type, op}`` newest first with ``stop < time <= start`` (each
        optional), of ``operation_type`` when given, at most ``limit``
        (default and maximum ``api-limit-get-liquidity-pool-history``)."""
        pools, pool, limit, op_type = self._pool_history(pool_id, limit, operation_type)
        start_s, stop_s = optional_time(start, "start"), optional_time(stop, "stop")
        return pools.by_time(pool, _iso(start_s), _iso(stop_s), limit, op_type)

    @api_function
    def get_liquidity_pool_history_by_sequence(self, pool_id, start=None, stop=None,
                                               limit=None, operation_type=None) -> Any:
        """The pool's history objects newest first from sequence ``start``
        while ``time > stop`` (each optional), as
        :meth:`get_liquidity_pool_history`."""
        pools, pool, limit, op_type = self._pool_history(pool_id, limit, operation_type)
        seq = None if start is None else _uint(start, "start", (1 << 64) - 1)
        stop_s = optional_time(stop, "stop")
        return pools.by_sequence(pool, seq, _iso(stop_s), limit, op_type)


def _iso(seconds):
    return None if seconds is None else format_time(seconds)

