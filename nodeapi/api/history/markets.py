"""history API, market data of the ``market_history`` plugin (a section of
:class:`nodeapi.api.history.HistoryApi`): ``get_fill_order_history``,
``get_market_history``, ``get_market_history_buckets``.

Graphene reference: bitshares-core libraries/app/api.cpp (``history_api``;
limit ``api-limit-get-market-history``).  The data comes from
``node.plugins["market_history"]``; without it these fail with ``Market history
plugin is not enabled``.  Asset arguments are symbols or ``1.3.N`` ids
(``no such asset`` otherwise), in either order.
"""

from nodeapi.api.arguments import parse_time_point
from nodeapi.api.base import Section, api_function
from nodeapi.api.history.arguments import U32, market_plugin, unsigned
from nodeapi.api.lookup import get_asset


class MarketHistory(Section):
    """Fills and OHLCV buckets of a market."""

    def _asset_id(self, symbol_or_id) -> str:
        return get_asset(self.chain.state, symbol_or_id)["id"]

    @api_function
    def get_fill_order_history(self, a, b, limit: int) -> list:
        """The latest fills of the market of ``a`` and ``b``, newest first,
        at most ``limit``: order history objects ``{id: "5.0.N", key: {base,
        quote, sequence}, time, op}`` (``op`` the fill_order body)."""
        plugin = market_plugin(self.node)
        unsigned(limit, "limit", U32)
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
        plugin = market_plugin(self.node)
        a_id, b_id = self._asset_id(a), self._asset_id(b)
        unsigned(bucket_seconds, "bucket_seconds", U32)
        start_t = parse_time_point(start, "start")
        end_t = parse_time_point(end, "end")
        limit = self.node.limits.get_market_history
        return [bucket.to_object()
                for bucket in plugin.buckets(a_id, b_id, bucket_seconds, start_t, end_t, limit)]

    @api_function
    def get_market_history_buckets(self) -> list:
        """The tracked bucket sizes in seconds, ascending (the
        ``bucket-size`` option)."""
        return market_plugin(self.node).tracked_buckets
