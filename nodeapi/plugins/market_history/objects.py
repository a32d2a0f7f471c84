"""The objects of the ``market_history`` plugin (object space 5) and the
price arithmetic they need.

Graphene reference: libraries/plugins/market_history/include/graphene/
market_history/market_history_plugin.hpp (``order_history_object`` 5.0.N,
``bucket_object`` 5.1.N, ``market_ticker_object`` 5.2.N,
``market_ticker_meta_object`` 5.3.N, their FC_REFLECT field order) and
libraries/protocol/asset.cpp (``price`` comparison).

A market is the pair of asset ids ordered by instance (``1.3.0`` before
``1.3.2`` before ``1.3.10``): its lower asset is the ``base`` of every
object of the plugin, like graphene's ``asset_id_type`` ordering.  Amounts
are Python ints; ``to_object()`` gives the wire JSON (ticker volumes,
``fc::uint128_t``, are decimal strings, as fc writes them).
"""

from typing import Optional

import attr

from nodeapi.protocol.asset import amount_of, ratio_less
from nodeapi.protocol.times import format_time

#: ``fc::uint128_t`` wraps modulo this (graphene "ignore overflow").
UINT128 = 1 << 128
#: ``share_type`` saturates here in buckets (graphene catches the overflow).
INT64_MAX = (1 << 63) - 1

ORDER_HISTORY = "5.0."
BUCKET = "5.1."
TICKER = "5.2."
TICKER_META = "5.3."


def asset_instance(asset_id: str) -> int:
    """The instance of ``"1.3.N"`` (int), graphene's ``asset_id_type`` order."""
    return int(asset_id[asset_id.rindex(".") + 1:])


def market_of(a: str, b: str) -> tuple:
    """``(lower, higher)`` of two asset ids by instance (graphene swaps so
    that ``base < quote``)."""
    return (a, b) if asset_instance(a) <= asset_instance(b) else (b, a)


def fill_amounts(fill: dict) -> tuple:
    """For a fill_order body, ``(base, quote, trade_base, trade_quote,
    price_base, price_quote)``: the market, the traded amounts
    (``pays / receives`` turned to base/quote) and the fill price (the
    maker's ``sell_price`` turned to base/quote) - graphene
    ``operation_process_fill_order``."""
    pays, receives = fill["pays"], fill["receives"]
    if asset_instance(pays["asset_id"]) <= asset_instance(receives["asset_id"]):
        base, quote = pays["asset_id"], receives["asset_id"]
        trade_base, trade_quote = amount_of(pays), amount_of(receives)
    else:
        base, quote = receives["asset_id"], pays["asset_id"]
        trade_base, trade_quote = amount_of(receives), amount_of(pays)
    fp = fill["fill_price"]
    if asset_instance(fp["base"]["asset_id"]) <= asset_instance(fp["quote"]["asset_id"]):
        price_base, price_quote = amount_of(fp["base"]), amount_of(fp["quote"])
    else:
        price_base, price_quote = amount_of(fp["quote"]), amount_of(fp["base"])
    return base, quote, trade_base, trade_quote, price_base, price_quote


@attr.s(frozen=True, slots=True, auto_attribs=True)
class OrderHistory:
    """One fill (``order_history_object`` 5.0.N).

    :ivar id_num: N of 5.0.N.
    :ivar base: the market's lower asset id; :ivar quote: the higher one.
    :ivar sequence: 0 for a market's first fill, then one less per fill
        (newest = lowest), graphene ``history_key.sequence``.
    :ivar time: block time, seconds since the epoch.
    :ivar op: the fill_order operation body (wire JSON).
    """

    id_num: int
    base: str
    quote: str
    sequence: int
    time: int
    op: dict

    @property
    def id(self) -> str:
        """The object id, ``5.0.N``."""
        return f"{ORDER_HISTORY}{self.id_num}"

    def to_object(self) -> dict:
        """``{id, key: {base, quote, sequence}, time, op}``."""
        return {"id": self.id,
                "key": {"base": self.base, "quote": self.quote, "sequence": self.sequence},
                "time": format_time(self.time), "op": self.op}


@attr.s(slots=True, auto_attribs=True)
class Bucket:
    """OHLC and volume of one market over ``seconds`` from ``open``
    (``bucket_object`` 5.1.N); prices are base/quote amount pairs."""

    id_num: int
    base: str
    quote: str
    seconds: int
    open: int
    high_base: int
    high_quote: int
    low_base: int
    low_quote: int
    open_base: int
    open_quote: int
    close_base: int
    close_quote: int
    base_volume: int
    quote_volume: int

    @property
    def id(self) -> str:
        """The object id, ``5.1.N``."""
        return f"{BUCKET}{self.id_num}"

    def add(self, trade_base: int, trade_quote: int, price_base: int, price_quote: int) -> None:
        """Book one maker fill (volumes saturate at int64 max; close, and
        high/low when the fill price beats them)."""
        self.base_volume = min(self.base_volume + trade_base, INT64_MAX)
        self.quote_volume = min(self.quote_volume + trade_quote, INT64_MAX)
        self.close_base, self.close_quote = price_base, price_quote
        if ratio_less(self.high_base, self.high_quote, price_base, price_quote):
            self.high_base, self.high_quote = price_base, price_quote
        if ratio_less(price_base, price_quote, self.low_base, self.low_quote):
            self.low_base, self.low_quote = price_base, price_quote

    def to_object(self) -> dict:
        """The wire form, fields in graphene's order."""
        return {"id": self.id,
                "key": {"base": self.base, "quote": self.quote, "seconds": self.seconds,
                        "open": format_time(self.open)},
                "high_base": self.high_base, "high_quote": self.high_quote,
                "low_base": self.low_base, "low_quote": self.low_quote,
                "open_base": self.open_base, "open_quote": self.open_quote,
                "close_base": self.close_base, "close_quote": self.close_quote,
                "base_volume": self.base_volume, "quote_volume": self.quote_volume}


@attr.s(slots=True, auto_attribs=True)
class Ticker:
    """24-hour figures of one market (``market_ticker_object`` 5.2.N):
    the latest fill price, the price of the last fill rolled out of the
    24 hours (``last_day_*``, 0 until one is) and the rolling volumes
    (``fc::uint128_t``, wrapping)."""

    id_num: int
    base: str
    quote: str
    last_day_base: int = 0
    last_day_quote: int = 0
    latest_base: int = 0
    latest_quote: int = 0
    base_volume: int = 0
    quote_volume: int = 0

    @property
    def id(self) -> str:
        """The object id, ``5.2.N``."""
        return f"{TICKER}{self.id_num}"

    def to_object(self) -> dict:
        """The wire form; volumes as decimal strings (fc ``uint128_t``)."""
        return {"id": self.id, "base": self.base, "quote": self.quote,
                "last_day_base": self.last_day_base, "last_day_quote": self.last_day_quote,
                "latest_base": self.latest_base, "latest_quote": self.latest_quote,
                "base_volume": str(self.base_volume), "quote_volume": str(self.quote_volume)}


@attr.s(frozen=True, slots=True, auto_attribs=True)
class TickerMeta:
    """``market_ticker_meta_object`` 5.3.0: where the 24-hour roll-out of
    the tickers resumes (the first order history object not rolled out, or
    the last one rolled out with ``skip`` set)."""

    rolling_min: int
    skip: bool

    def to_object(self) -> dict:
        """The wire form ``{"id": "5.3.0", "rolling_min_order_his_id": "5.0.N",
        "skip_min_order_his_id": bool}`` (graphene market_history_plugin.hpp
        ``market_ticker_meta_object``)."""
        return {"id": f"{TICKER_META}0",
                "rolling_min_order_his_id": f"{ORDER_HISTORY}{self.rolling_min}",
                "skip_min_order_his_id": self.skip}


def object_kind(oid: str) -> Optional[str]:
    """The plugin prefix (``"5.0."`` ...) of an object id, or None."""
    for prefix in (ORDER_HISTORY, BUCKET, TICKER, TICKER_META):
        if oid.startswith(prefix):
            return prefix
    return None
