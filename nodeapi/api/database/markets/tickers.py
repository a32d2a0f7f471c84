"""database API, graphene section "Markets / feeds": tickers, volumes and
trade history, the market data the ``market_history`` plugin serves (a
section of :class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp
(``get_ticker``, ``get_24_volume``, ``get_top_markets``,
``get_trade_history``, ``get_trade_history_by_sequence``),
libraries/app/api_objects.cpp (``market_ticker``) and libraries/app/util.cpp
(``price_to_string``, ``price_diff_percent_string``).  Shapes:

- ``market_ticker``: ``{time, base, quote, latest, lowest_ask,
  lowest_ask_base_size, lowest_ask_quote_size, highest_bid,
  highest_bid_base_size, highest_bid_quote_size, percent_change,
  base_volume, quote_volume[, mto_id]}``, prices and amounts as decimal
  strings in whole units of ``base`` per ``quote``, ``time`` the head block
  time; ``mto_id`` (the 5.2.N ticker object) only when the market had a fill.
- ``market_volume``: ``{time, base, quote, base_volume, quote_volume}``.
- ``market_trade``: ``{sequence, date, price, amount, value, type,
  side1_account_id, side2_account_id}``: one match, amount in ``quote``,
  value in ``base``; side 1 is the maker (``type`` "buy"/"sell" is the
  maker's side in the ``base`` asset), side 2 the taker (``1.2.3``, the null
  account, when a side is missing).

Every function needs the plugin (``node.plugins["market_history"]``): without it they
fail with ``Market history plugin is not enabled.``.  Asset arguments are
symbols or ``1.3.N`` ids; an unknown one fails with ``Invalid base asset
symbol: X`` / ``Invalid quote asset symbol: X``.
"""

from nodeapi.api.arguments import check_limit, parse_time_point
from nodeapi.api.base import Section, api_function
from nodeapi.api.database.amounts import (
    price_diff_percent_string, price_to_string, uint_amount_to_string)
from nodeapi.protocol.asset import amount_of, amount_to_string
from nodeapi.api.database.markets.orders import order_book
from nodeapi.api.lookup import find_asset
from nodeapi.errors import ApiError
from nodeapi.protocol.times import format_time
from nodeapi.protocol.config import NULL_ACCOUNT


def fill_price_string(fill: dict, base: dict, quote: dict) -> str:
    """graphene ``price_to_string(fill_price, base, quote)``: the fill
    price in ``base`` per ``quote`` whichever way it is stated."""
    fp = fill["fill_price"]
    b, q = amount_of(fp["base"]), amount_of(fp["quote"])
    if fp["base"]["asset_id"] != base["id"]:
        b, q = q, b
    return price_to_string(b, q, int(base["precision"]), int(quote["precision"]))


def build_trades(records: list, base: dict, quote: dict, stop: int, limit: int,
                 skip_sequence=None) -> list:
    """graphene's ``market_trade`` list from order history records newest
    first (a maker fill and its taker fill of the same block make one
    trade), while ``time >= stop``, at most ``limit`` trades.  With
    ``skip_sequence`` the record with that sequence (and its other side) is
    left out (``get_trade_history_by_sequence``)."""
    out = []
    i, n = 0, len(records)
    while i < n and len(out) < limit and records[i].time >= stop:
        record = records[i]
        paired = (i + 1 < n and records[i + 1].time == record.time
                  and bool(records[i + 1].op.get("is_maker")) != bool(record.op.get("is_maker")))
        if skip_sequence is not None and record.sequence == skip_sequence:
            i += 2 if paired else 1
            continue
        fill = record.op
        trade = {"sequence": 0, "date": format_time(record.time),
                 "price": fill_price_string(fill, base, quote), "amount": "", "value": "",
                 "type": "", "side1_account_id": NULL_ACCOUNT,
                 "side2_account_id": NULL_ACCOUNT}
        if fill["receives"]["asset_id"] == base["id"]:
            trade["amount"] = amount_to_string(amount_of(fill["pays"]), quote["precision"])
            trade["value"] = amount_to_string(amount_of(fill["receives"]),
                                              base["precision"])
        else:
            trade["amount"] = amount_to_string(amount_of(fill["receives"]),
                                               quote["precision"])
            trade["value"] = amount_to_string(amount_of(fill["pays"]), base["precision"])
        _side(trade, record, base)
        if paired:
            _side(trade, records[i + 1], base)
            i += 1
        out.append(trade)
        i += 1
    return out


def _side(trade: dict, record, base: dict) -> None:
    fill = record.op
    if fill.get("is_maker"):
        trade["sequence"] = -record.sequence
        trade["side1_account_id"] = fill["account_id"]
        trade["type"] = "sell" if fill["receives"]["asset_id"] == base["id"] else "buy"
    else:
        trade["side2_account_id"] = fill["account_id"]


class Tickers(Section):
    """get_ticker, get_24_volume, get_top_markets, get_trade_history,
    get_trade_history_by_sequence."""

    def _market_plugin(self):
        plugin = self.node.plugins.get("market_history")
        if plugin is None:
            raise ApiError("Market history plugin is not enabled.")
        return plugin

    def _market_assets(self, base, quote) -> tuple:
        """graphene ``lookup_asset_symbols({base, quote})`` with its asserts."""
        state = self.chain.state
        base_asset, quote_asset = find_asset(state, base), find_asset(state, quote)
        if base_asset is None:
            raise ApiError(f"Invalid base asset symbol: {base}")
        if quote_asset is None:
            raise ApiError(f"Invalid quote asset symbol: {quote}")
        return base_asset, quote_asset

    def _ticker(self, plugin, base: dict, quote: dict, with_book: bool) -> dict:
        """graphene ``market_ticker`` of ``base``/``quote`` (asset objects)."""
        bp, qp = int(base["precision"]), int(quote["precision"])
        out = {"time": format_time(self.chain.head_block_time), "base": base["symbol"],
               "quote": quote["symbol"], "latest": "0", "lowest_ask": "0",
               "lowest_ask_base_size": "0", "lowest_ask_quote_size": "0", "highest_bid": "0",
               "highest_bid_base_size": "0", "highest_bid_quote_size": "0",
               "percent_change": "0", "base_volume": "0", "quote_volume": "0"}
        mto = plugin.ticker(base["id"], quote["id"])
        if mto is None:
            return out
        straight = mto.base == base["id"]
        latest = (mto.latest_base, mto.latest_quote) if straight else (mto.latest_quote,
                                                                        mto.latest_base)
        out["latest"] = price_to_string(latest[0], latest[1], bp, qp)
        if (mto.last_day_base != 0 and mto.last_day_quote != 0
                and (mto.last_day_base != mto.latest_base
                     or mto.last_day_quote != mto.latest_quote)):
            last_day = ((mto.last_day_base, mto.last_day_quote) if straight
                        else (mto.last_day_quote, mto.last_day_base))
            out["percent_change"] = price_diff_percent_string(*last_day, *latest)
        volumes = ((mto.base_volume, mto.quote_volume) if straight
                   else (mto.quote_volume, mto.base_volume))
        out["base_volume"] = uint_amount_to_string(volumes[0], bp)
        out["quote_volume"] = uint_amount_to_string(volumes[1], qp)
        if with_book:
            book = order_book(self.node, base["symbol"], quote["symbol"], 1)
            if book["asks"]:
                ask = book["asks"][0]
                out.update(lowest_ask=ask["price"], lowest_ask_base_size=ask["base"],
                           lowest_ask_quote_size=ask["quote"])
            if book["bids"]:
                bid = book["bids"][0]
                out.update(highest_bid=bid["price"], highest_bid_base_size=bid["base"],
                           highest_bid_quote_size=bid["quote"])
        out["mto_id"] = mto.id
        return out

    @api_function
    def get_ticker(self, base, quote):
        """The ``market_ticker`` of ``base``/``quote`` over the last 24 hours
        (all "0" when the market never had a fill), with the best ask and
        bid of the order book."""
        plugin = self._market_plugin()
        base_asset, quote_asset = self._market_assets(base, quote)
        return self._ticker(plugin, base_asset, quote_asset, True)

    @api_function
    def get_24_volume(self, base, quote):
        """``{time, base, quote, base_volume, quote_volume}`` of the market
        over the last 24 hours."""
        plugin = self._market_plugin()
        base_asset, quote_asset = self._market_assets(base, quote)
        ticker = self._ticker(plugin, base_asset, quote_asset, False)
        return {key: ticker[key] for key in ("time", "base", "quote", "base_volume",
                                              "quote_volume")}

    @api_function
    def get_top_markets(self, limit: int):
        """Up to ``limit`` (<= ``api-limit-get-top-markets``, 100) tickers by
        descending 24-hour volume of the market's lower-id asset; each
        market is stated with that asset as ``base``."""
        plugin = self._market_plugin()
        check_limit(limit, self.node.limits.get_top_markets)
        objects = self.chain.state.objects
        return [self._ticker(plugin, objects[t.base], objects[t.quote], True)
                for t in plugin.tickers_by_volume(limit)]

    @api_function
    def get_trade_history(self, base, quote, start, stop, limit: int = 100):
        """Trades of the market from ``start`` back to ``stop`` (both UTC
        times, inclusive; ``start`` "1970-01-01T00:00:00" = now), newest
        first, at most ``limit`` (<= ``api-limit-get-trade-history``, 100)."""
        plugin = self._market_plugin()
        check_limit(limit, self.node.limits.get_trade_history)
        base_asset, quote_asset = self._market_assets(base, quote)
        start_t = parse_time_point(start, "start")
        stop_t = parse_time_point(stop, "stop")
        if start_t == 0:
            start_t = int(self.chain.wall_time())
        records = plugin.fills_by_time(base_asset["id"], quote_asset["id"], start_t,
                                       2 * limit + 1)
        return build_trades(records, base_asset, quote_asset, stop_t, limit)

    @api_function
    def get_trade_history_by_sequence(self, base, quote, start: int, stop, limit: int = 100):
        """Trades of the market older than the trade numbered ``start`` (the
        ``sequence`` of a trade; it is left out) back to ``stop`` (UTC time),
        newest first, at most ``limit`` (<=
        ``api-limit-get-trade-history-by-sequence``, 100)."""
        plugin = self._market_plugin()
        check_limit(limit, self.node.limits.get_trade_history_by_sequence)
        if start < 0:
            raise ApiError(f"start must not be negative, got {start}")
        base_asset, quote_asset = self._market_assets(base, quote)
        stop_t = parse_time_point(stop, "stop")
        records = plugin.fills_by_sequence(base_asset["id"], quote_asset["id"], -start,
                                           2 * limit + 3)
        return build_trades(records, base_asset, quote_asset, stop_t, limit,
                            skip_sequence=-start)
