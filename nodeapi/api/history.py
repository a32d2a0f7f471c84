"""The history API set (``history`` / ``history_api``).

Argument checks and account resolution follow graphene's ``history_api``
(libraries/app/api.cpp) and wire-contract section 6: the limit is checked
first (``limit can not be greater than <api-limit-...>``), operation ids are
``"1.11.N"`` strings, an account is a name or a ``1.2.N`` id and an unknown
account answers ``[]``.  The answer comes from ``node.history`` (an
:class:`nodeapi.applied.IAccountHistory`: the in-memory ``account_history``
plugin or ``searchdb``), which may return a Deferred; with no history
plugin every function answers ``[]``.

Market data (graphene ``history_api`` ``get_fill_order_history``,
``get_market_history``, ``get_market_history_buckets``) comes from the
``market_history`` plugin (``node.market_history``); without it these fail
with ``Market history plugin is not enabled``.  Their asset arguments are
symbols or ``1.3.N`` ids (``no such asset`` otherwise), in either order.
"""

from typing import Any

from nodeapi.api.arguments import api_limit, parse_time_point
from nodeapi.api.base import ApiSet, api_function
from nodeapi.api.history_blocks import BlockHistoryMixin
from nodeapi.api.lookup import get_asset
from nodeapi.errors import ApiError, ApiLimitExceeded
from nodeapi.protocol.validation_checks import is_valid_name

_OHI = "1.11."
_U32 = (1 << 32) - 1
_U64 = (1 << 64) - 1


def parse_operation_history_id(value: Any, name: str) -> int:
    """``"1.11.N"`` -> N.  An integer is taken as the instance.

    ``"1.11.-N"`` is read as fc reads it (``fc::to_uint64`` is boost's
    ``lexical_cast<uint64_t>``, which wraps a negative number modulo 2^64;
    bitshares-core libraries/protocol/include/graphene/protocol/object_id.hpp
    ``from_variant``): ``2^64 - N``, an instance beyond every operation, so
    the history functions start from the newest.  python-bitshares' asyncio
    ``Account.history()`` sends ``"1.11.-1"``.

    :raises ApiError: anything else (bad type, other space/type, bad digits).
    """
    if isinstance(value, bool):
        raise ApiError(f"{name}: expected an operation history id 1.11.N, got {value!r}")
    if isinstance(value, int):
        if 0 <= value <= _U64:
            return value
    elif isinstance(value, str) and value.startswith(_OHI):
        digits = value[len(_OHI):]
        negative = digits.startswith("-")
        if negative:
            digits = digits[1:]
        if digits.isdigit() and digits.isascii() and len(digits) <= 20:
            n = int(digits)
            if n <= _U64:
                return (-n) % (_U64 + 1) if negative else n
    raise ApiError(f"{name}: expected an operation history id 1.11.N, got {value!r}")


def _unsigned(value: int, name: str, bound: int = _U64) -> int:
    if value < 0 or value > bound:
        raise ApiError(f"{name}: {value} is out of range 0..{bound}")
    return value


class HistoryApi(BlockHistoryMixin, ApiSet):
    """``get_account_history``, ``get_relative_account_history``,
    ``get_account_history_operations`` (wire-contract section 6); by time,
    block, operation types and liquidity pool:
    :class:`~nodeapi.api.history_blocks.BlockHistoryMixin`.

    Each returns a list of ``{id, op, result, block_num, trx_in_block,
    op_in_trx, virtual_op, is_virtual, block_time}`` newest first, or a
    Deferred firing with one.  Raises :class:`ApiError` for a limit above the
    node's ``api-limit-*`` option, a malformed operation id or a negative
    number.
    """

    name = "history"

    def _check_limit(self, function: str, limit: int) -> int:
        _unsigned(limit, "limit", _U32)
        configured = getattr(self.node.limits, function)
        if limit > configured:
            raise ApiLimitExceeded(configured)
        return limit

    def _with_account(self, account: Any, answer) -> Any:
        """``answer(account id)``, or ``[]`` for an unknown account or
        without a history plugin (as the reference).  Without a chain
        (indexer mode) a valid name is resolved by ``node.account_lookup``
        (the upstream's) and the answer is a Deferred."""
        if not isinstance(account, str):
            raise ApiError(f"account: expected an account name or id, got {account!r}")
        if self.node.history is None:
            return []
        if self.node.chain is None:  # indexer mode: no chain state to look names up in
            if account.startswith("1.2."):
                return answer(account)
            if self.node.account_lookup is None:
                raise ApiError("This indexer answers account ids (1.2.N), not names")
            if not is_valid_name(account):  # no account has it: nothing to ask upstream
                return []
            return self.node.account_lookup(account).addCallback(
                lambda account_id: [] if account_id is None else answer(account_id))
        obj = self.node.chain.state.account_by_name_or_id(account)
        return [] if obj is None else answer(obj["id"])

    @api_function
    def get_account_history(self, account, stop, limit: int, start) -> Any:
        """Operations of ``account`` from ``start`` (newest included,
        ``1.11.0`` = the newest) back to ``stop`` (excluded; ``1.11.0``
        includes op 0), newest first, at most ``limit``."""
        self._check_limit("get_account_history", limit)
        stop_n = parse_operation_history_id(stop, "stop")
        start_n = parse_operation_history_id(start, "start")
        if start_n != 0 and start_n < stop_n:
            return []
        return self._with_account(account, lambda account_id: (
            self.node.history.get_account_history(account_id, stop_n, limit, start_n)))

    @api_function
    def get_relative_account_history(self, account, stop: int, limit: int, start: int) -> Any:
        """By the account's 1-based sequence numbers, ``[stop, start]``
        inclusive, newest first; ``start`` 0 = the latest."""
        self._check_limit("get_relative_account_history", limit)
        _unsigned(stop, "stop")
        _unsigned(start, "start")
        return self._with_account(account, lambda account_id: (
            self.node.history.get_relative_account_history(account_id, stop, limit, start)))

    @api_function
    def get_account_history_operations(self, account, operation_type: int, start, stop,
                                       limit: int) -> Any:
        """Operations of type ``operation_type`` from ``start`` (``1.11.0`` =
        the account's newest) back to ``stop`` (excluded; ``1.11.0`` includes
        op 0), newest first, at most ``limit``.  Note the argument order:
        start before stop."""
        self._check_limit("get_account_history_operations", limit)
        start_n = parse_operation_history_id(start, "start")
        stop_n = parse_operation_history_id(stop, "stop")
        return self._with_account(account, lambda account_id: (
            self.node.history.get_account_history_operations(
                account_id, operation_type, start_n, stop_n, limit)))

    # -- market history (the market_history plugin) ------------------------------

    def _market_plugin(self):
        plugin = getattr(self.node, "market_history", None)
        if plugin is None:
            raise ApiError("Market history plugin is not enabled")
        return plugin

    def _asset_id(self, symbol_or_id) -> str:
        return get_asset(self.node.chain.state, symbol_or_id)["id"]

    @api_function
    def get_fill_order_history(self, a, b, limit: int) -> list:
        """The latest fills of the market of ``a`` and ``b``, newest first,
        at most ``limit``: order history objects ``{id: "5.0.N", key: {base,
        quote, sequence}, time, op}`` (``op`` the fill_order body)."""
        plugin = self._market_plugin()
        _unsigned(limit, "limit", _U32)
        a_id, b_id = self._asset_id(a), self._asset_id(b)
        return [record.to_object() for record in plugin.fills(a_id, b_id, limit)]

    @api_function
    def get_market_history(self, a, b, bucket_seconds: int, start, end) -> list:
        """OHLCV buckets ``{id: "5.1.N", key: {base, quote, seconds, open},
        high_base, high_quote, low_base, low_quote, open_base, open_quote,
        close_base, close_quote, base_volume, quote_volume}`` of the market
        of ``a`` and ``b`` and size ``bucket_seconds`` opening from ``start``
        to ``end`` (UTC times, inclusive), oldest first, at most
        ``api-limit-get-market-history`` (200).  Prices are in the market's
        lower-id asset per the other."""
        plugin = self._market_plugin()
        a_id, b_id = self._asset_id(a), self._asset_id(b)
        _unsigned(bucket_seconds, "bucket_seconds", _U32)
        start_t = parse_time_point(start, "start")
        end_t = parse_time_point(end, "end")
        limit = api_limit(self.node, "get_market_history", 200)
        return [bucket.to_object()
                for bucket in plugin.buckets(a_id, b_id, bucket_seconds, start_t, end_t, limit)]

    @api_function
    def get_market_history_buckets(self) -> list:
        """The tracked bucket sizes in seconds, ascending (the
        ``bucket-size`` option)."""
        return self._market_plugin().tracked_buckets
