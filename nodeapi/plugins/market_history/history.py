"""The ``market_history`` plugin: fills, tickers and OHLC buckets per market.

A block consumer (:class:`~nodeapi.applied.IBlockConsumer`) fed with every
applied block, live and during replay (it keeps nothing on disk: the replay
rebuilds it, like the other plugins).  It reads the virtual fill_order
operations (type 4) the limit order matching emits and keeps, with graphene
semantics (libraries/plugins/market_history/market_history_plugin.cpp,
``operation_process_fill_order`` and ``update_market_histories``):

- order history (5.0.N): every fill, per market newest first by
  ``sequence`` (0, -1, -2 ...).  After each fill of a market, its fills
  that are both beyond the newest ``max-order-his-records-per-market`` and
  at least ``max-order-his-seconds-per-market`` old are removed.
- tickers (5.2.N), from maker fills only: latest price and volumes; at the
  end of each block the fills older than 24 hours are rolled out (volumes
  subtracted, ``last_day`` price set), walking the order history by id
  from the meta object (5.3.0).  As in graphene, a fill removed from the
  order history before it was rolled out stays in the volumes.
- buckets (5.1.N), from maker fills only: for each tracked size, the
  bucket ``open = time // size * size`` gets volumes, open/close and
  high/low; the market's buckets of that size opening before
  ``(time // size - history-per-size) * size`` are removed.

Options (graphene's names and 7.x defaults, declared in
:mod:`nodeapi.plugins.market_history.plugin`): ``bucket-size`` (JSON array of
seconds, 0 ignored), ``history-per-size``,
``max-order-his-records-per-market``, ``max-order-his-seconds-per-market``.
The API sets read it through the methods under "reading".
"""

from bisect import bisect_left, bisect_right
from collections import deque
from typing import Optional

import attr
from twisted.logger import Logger
from zope.interface import implementer

from nodeapi.applied import IBlockConsumer, ICheckpointed
from nodeapi.history.snapshot import chunked, joined
from nodeapi.plugins.market_history.objects import (
    BUCKET, ORDER_HISTORY, TICKER, TICKER_META, UINT128, Bucket, OrderHistory, Ticker,
    TickerMeta, fill_amounts, market_of, object_kind)

FILL_ORDER = 4
DAY = 86400


def _volumes_as_text(fields: tuple) -> list:
    """A ticker's or bucket's fields with its two volumes (the last two,
    up to 2^128) as strings."""
    return [*fields[:-2], str(fields[-2]), str(fields[-1])]


def _volumes_as_int(fields: list) -> list:
    return [*fields[:-2], int(fields[-2]), int(fields[-1])]


@attr.s(frozen=True, slots=True, auto_attribs=True)
class MarketHistoryOptions:
    """The plugin's options (bitshares-core 7.x defaults).

    :ivar bucket_sizes: tracked bucket sizes in seconds, ascending, no 0.
    :ivar history_per_size: buckets kept per market and size (0: no buckets).
    :ivar max_order_his_records_per_market: fills always kept per market.
    :ivar max_order_his_seconds_per_market: fills younger than this are
        kept too (seconds).
    """

    bucket_sizes: tuple = (60, 300, 900, 3600, 14400, 86400, 604800)
    history_per_size: int = 1500
    max_order_his_records_per_market: int = 1000
    max_order_his_seconds_per_market: int = 259200

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "bucket_sizes",
                           tuple(sorted({int(s) for s in self.bucket_sizes} - {0})))


@implementer(IBlockConsumer, ICheckpointed)
class MarketHistory:
    """Market history in memory (module docstring).  Register with
    ``chain.add_consumer``; ``MarketHistory(MarketHistoryOptions())``.

    :param options: the plugin's options (:class:`MarketHistoryOptions`).
    :param pools: the liquidity pool history kept with it, as graphene
        keeps it in this plugin
        (:class:`~nodeapi.plugins.market_history.pools.LiquidityPoolHistory`,
        a block consumer of its own), or None.
    :ivar pools: ``pools``.
    """

    log = Logger()
    checkpoint_key = "market_history"

    def __init__(self, options: MarketHistoryOptions = MarketHistoryOptions(),
                 pools=None) -> None:
        self.options = options
        self.pools = pools
        self._next = {ORDER_HISTORY: 0, BUCKET: 0, TICKER: 0}
        self._history: dict = {}  # id_num -> OrderHistory (live ones)
        self._fills: dict = {}  # market -> [OrderHistory], oldest first
        self._rolling: deque = deque()  # order history ids from the meta's rolling_min on
        self._meta: Optional[TickerMeta] = None
        self._tickers: dict = {}  # market -> Ticker
        self._tickers_by_id: dict = {}  # id_num -> Ticker
        self._buckets: dict = {}  # (market, seconds) -> [Bucket], ascending open
        self._buckets_by_id: dict = {}  # id_num -> Bucket

    def _new_id(self, prefix: str) -> int:
        n = self._next[prefix]
        self._next[prefix] = n + 1
        return n

    # -- IBlockConsumer ------------------------------------------------------------

    def block_applied(self, applied) -> None:
        """Process the block's fill_order operations, then roll the
        tickers' 24 hours forward to the block time."""
        now = applied.timestamp
        for op in applied.operations:
            if op.op[0] == FILL_ORDER:
                try:
                    self._fill(op.op[1], now)
                except (KeyError, TypeError, ValueError):
                    # graphene FC_CAPTURE_AND_LOG: a malformed fill is skipped
                    self.log.failure("Block {num}: fill {op} not recorded",
                                     num=applied.block_num, op=op.id)
        if self._meta is not None:
            self._roll(now)

    def _fill(self, fill: dict, now: int) -> None:
        base, quote, trade_base, trade_quote, price_base, price_quote = fill_amounts(fill)
        market = (base, quote)
        fills = self._fills.setdefault(market, [])
        sequence = fills[-1].sequence - 1 if fills else 0
        record = OrderHistory(self._new_id(ORDER_HISTORY), base, quote, sequence, now, fill)
        fills.append(record)
        self._history[record.id_num] = record
        self._rolling.append(record.id_num)
        if self._meta is None:
            self._meta = TickerMeta(record.id_num, False)
        self._trim_fills(fills, now)
        if not fill.get("is_maker"):
            return
        ticker = self._tickers.get(market)
        if ticker is None:
            ticker = Ticker(self._new_id(TICKER), base, quote)
            self._tickers[market] = ticker
            self._tickers_by_id[ticker.id_num] = ticker
        ticker.latest_base, ticker.latest_quote = price_base, price_quote
        ticker.base_volume = (ticker.base_volume + trade_base) % UINT128
        ticker.quote_volume = (ticker.quote_volume + trade_quote) % UINT128
        if self.options.history_per_size:
            for seconds in self.options.bucket_sizes:
                self._bucket(market, seconds, now, trade_base, trade_quote, price_base,
                             price_quote)

    def _trim_fills(self, fills: list, now: int) -> None:
        """Remove the market's fills beyond the newest N that are also older
        than the seconds limit (graphene removes the smaller of the two sets,
        which is their intersection since time grows with each fill)."""
        excess = len(fills) - self.options.max_order_his_records_per_market
        if excess <= 0:
            return
        max_seconds = self.options.max_order_his_seconds_per_market
        min_time = now - max_seconds if max_seconds < now else 0
        n = 0
        while n < excess and fills[n].time <= min_time:
            del self._history[fills[n].id_num]
            n += 1
        if n:
            del fills[:n]

    def _bucket(self, market: tuple, seconds: int, now: int, trade_base: int,
                trade_quote: int, price_base: int, price_quote: int) -> None:
        bucket_num = now // seconds
        max_history = self.options.history_per_size
        cutoff = seconds * (bucket_num - max_history) if bucket_num > max_history else 0
        opened = bucket_num * seconds
        buckets = self._buckets.setdefault((market, seconds), [])
        i = bisect_left(buckets, opened, key=lambda b: b.open)
        if i < len(buckets) and buckets[i].open == opened:
            buckets[i].add(trade_base, trade_quote, price_base, price_quote)
        else:
            bucket = Bucket(self._new_id(BUCKET), market[0], market[1], seconds, opened,
                            price_base, price_quote, price_base, price_quote,
                            price_base, price_quote, price_base, price_quote,
                            trade_base, trade_quote)
            buckets.insert(i, bucket)
            self._buckets_by_id[bucket.id_num] = bucket
        old = bisect_left(buckets, cutoff, key=lambda b: b.open)
        for bucket in buckets[:old]:
            del self._buckets_by_id[bucket.id_num]
        del buckets[:old]

    def _roll(self, now: int) -> None:
        """graphene's end-of-block ticker roll-out: walk the order history
        by id from the meta object while fills are older than 24 hours."""
        meta = self._meta
        last_day = now - DAY
        last_min, skip = meta.rolling_min, meta.skip
        rolling, history = self._rolling, self._history
        remaining = None
        while rolling:
            record = history.get(rolling[0])
            if record is None:  # removed from the order history: not rolled out
                rolling.popleft()
                continue
            if record.time >= last_day:
                remaining = record
                break
            if skip and record.id_num == meta.rolling_min:
                skip = False
            elif record.op.get("is_maker"):
                self._roll_out(record)
            last_min = record.id_num
            rolling.popleft()
        if remaining is not None:
            if remaining.id_num != meta.rolling_min:
                self._meta = TickerMeta(remaining.id_num, False)
        else:
            if not meta.skip or last_min != meta.rolling_min:
                self._meta = TickerMeta(last_min, True)
            if last_min in history:  # found again (and skipped) by the next walk
                rolling.appendleft(last_min)

    def _roll_out(self, record: OrderHistory) -> None:
        _b, _q, trade_base, trade_quote, price_base, price_quote = fill_amounts(record.op)
        ticker = self._tickers.get((record.base, record.quote))
        if ticker is None:
            return
        ticker.last_day_base, ticker.last_day_quote = price_base, price_quote
        ticker.base_volume = (ticker.base_volume - trade_base) % UINT128
        ticker.quote_volume = (ticker.quote_volume - trade_quote) % UINT128

    # -- ICheckpointed -------------------------------------------------------------

    def checkpoint_records(self):
        """Records (``ICheckpointed``): id counters, the rolling window,
        every market's fills, tickers and buckets (volumes, which may pass
        2^64, as decimal strings)."""
        head = {"next": dict(self._next), "rolling": list(self._rolling),
                "meta": None if self._meta is None else [self._meta.rolling_min,
                                                          self._meta.skip]}
        fills = [(market, list(records)) for market, records in self._fills.items()]
        tickers = [_volumes_as_text(attr.astuple(t)) for t in self._tickers.values()]
        buckets = [_volumes_as_text(attr.astuple(b))
                   for bs in self._buckets.values() for b in bs]

        def produce():
            yield "head", head
            for market, records in fills:
                yield "fills", [list(market), [[r.id_num, r.sequence, r.time, r.op]
                                               for r in records]]
            yield from chunked("tickers", tickers)
            yield from chunked("buckets", buckets)

        return produce()

    def checkpoint_usable(self, meta: dict) -> bool:
        """Always: the plugin holds all it needs."""
        return True

    def restore_checkpoint(self, meta: dict, records: list) -> None:
        """Rebuild from :meth:`checkpoint_records`' records."""
        head = next(v for k, v in records if k == "head")
        self._next = dict(head["next"])
        self._rolling = deque(head["rolling"])
        self._meta = None if head["meta"] is None else TickerMeta(*head["meta"])
        self._history, self._fills = {}, {}
        for key, value in records:
            if key != "fills":
                continue
            market, items = tuple(value[0]), value[1]
            records_of = self._fills[market] = [
                OrderHistory(n, market[0], market[1], seq, t, op) for n, seq, t, op in items]
            for record in records_of:
                self._history[record.id_num] = record
        self._tickers, self._tickers_by_id = {}, {}
        for fields in joined(records, "tickers"):
            ticker = Ticker(*_volumes_as_int(fields))
            self._tickers[(ticker.base, ticker.quote)] = ticker
            self._tickers_by_id[ticker.id_num] = ticker
        self._buckets, self._buckets_by_id = {}, {}
        for fields in joined(records, "buckets"):
            bucket = Bucket(*_volumes_as_int(fields))
            self._buckets.setdefault(((bucket.base, bucket.quote), bucket.seconds),
                                     []).append(bucket)
            self._buckets_by_id[bucket.id_num] = bucket

    # -- reading -------------------------------------------------------------------

    @property
    def tracked_buckets(self) -> list:
        """The tracked bucket sizes in seconds, ascending (graphene
        ``tracked_buckets``)."""
        return list(self.options.bucket_sizes)

    def ticker(self, a: str, b: str) -> Optional[Ticker]:
        """The :class:`Ticker` of the market of asset ids ``a`` and ``b``
        (either order), or None when it never had a maker fill."""
        return self._tickers.get(market_of(a, b))

    def tickers_by_volume(self, limit: int) -> list:
        """Up to ``limit`` tickers, highest base volume first (graphene's
        ``by_volume`` index read backwards; ties: newer ticker first)."""
        ranked = sorted(self._tickers.values(), key=lambda t: (t.base_volume, t.id_num),
                        reverse=True)
        return ranked[:limit]

    def fills(self, a: str, b: str, limit: int) -> list:
        """The market's fills (:class:`OrderHistory`), newest first, at most
        ``limit`` (graphene ``history_api::get_fill_order_history``)."""
        fills = self._fills.get(market_of(a, b), ())
        return [fills[i] for i in range(len(fills) - 1, max(len(fills) - limit, 0) - 1, -1)]

    def fills_by_time(self, a: str, b: str, start: int, count: int) -> list:
        """Up to ``count`` fills of the market with ``time <= start``, newest
        first (graphene's ``by_market_time`` index from ``start``)."""
        fills = self._fills.get(market_of(a, b), ())
        top = bisect_right(fills, start, key=lambda r: r.time)
        return [fills[i] for i in range(top - 1, max(top - count, 0) - 1, -1)]

    def fills_by_sequence(self, a: str, b: str, sequence: int, count: int) -> list:
        """Up to ``count`` fills of the market with ``key.sequence >=
        sequence``, newest first (graphene's ``by_key`` index)."""
        fills = self._fills.get(market_of(a, b), ())
        top = bisect_right(fills, -sequence, key=lambda r: -r.sequence)
        return [fills[i] for i in range(top - 1, max(top - count, 0) - 1, -1)]

    def buckets(self, a: str, b: str, seconds: int, start: int, end: int,
                limit: int) -> list:
        """Up to ``limit`` buckets of the market and size with ``start <=
        open <= end``, oldest first (graphene
        ``history_api::get_market_history``)."""
        buckets = self._buckets.get((market_of(a, b), seconds), ())
        i = bisect_left(buckets, start, key=lambda x: x.open)
        out = []
        while i < len(buckets) and buckets[i].open <= end and len(out) < limit:
            out.append(buckets[i])
            i += 1
        return out

    def get_object(self, oid: str) -> Optional[dict]:
        """The wire form of a plugin object ``5.T.N``, or None."""
        kind = object_kind(oid)
        if kind is None:
            return None
        try:
            n = int(oid[len(kind):])
        except ValueError:
            return None
        if kind == TICKER_META:
            return self._meta.to_object() if n == 0 and self._meta is not None else None
        table = {ORDER_HISTORY: self._history, BUCKET: self._buckets_by_id,
                 TICKER: self._tickers_by_id}[kind]
        obj = table.get(n)
        return None if obj is None else obj.to_object()

    @property
    def meta(self) -> Optional[TickerMeta]:
        """The :class:`TickerMeta` (None before the first fill)."""
        return self._meta
