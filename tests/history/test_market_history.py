"""The market_history plugin on a clock: fills fed as applied blocks at
chosen times, every figure computed by hand (bitshares-core
market_history_plugin.cpp semantics)."""

import pytest

from nodeapi.applied import AppliedBlock, AppliedOperation
from nodeapi.plugins.market_history.history import MarketHistory, MarketHistoryOptions
from nodeapi.protocol.times import format_time

CORE, GOLD = "1.3.0", "1.3.1"
ALICE, BOB = "1.2.17", "1.2.18"


def _asset(amount, asset_id):
    return {"amount": amount, "asset_id": asset_id}


def match(core, gold, price_core, price_gold, maker_sells=GOLD):
    """Both fills of one match in the order the chain emits them (taker,
    then maker): the taker (ALICE) pays ``core`` TEST for ``gold`` GOLD when
    the maker (BOB) sells GOLD; the other way round with ``maker_sells`` =
    CORE.  The fill price is the maker's sell price."""
    if maker_sells == GOLD:
        price = {"base": _asset(price_gold, GOLD), "quote": _asset(price_core, CORE)}
        taker = (_asset(core, CORE), _asset(gold, GOLD))
    else:
        price = {"base": _asset(price_core, CORE), "quote": _asset(price_gold, GOLD)}
        taker = (_asset(gold, GOLD), _asset(core, CORE))
    maker = (taker[1], taker[0])
    return [
        {"fee": _asset(0, taker[1]["asset_id"]), "order_id": "1.7.2", "account_id": ALICE,
         "pays": taker[0], "receives": taker[1], "fill_price": price, "is_maker": False},
        {"fee": _asset(0, maker[1]["asset_id"]), "order_id": "1.7.1", "account_id": BOB,
         "pays": maker[0], "receives": maker[1], "fill_price": price, "is_maker": True},
    ]


class Feeder:
    """Applies blocks of fills to a plugin at given times."""

    def __init__(self, plugin):
        self.plugin = plugin
        self.num = 0
        self.op_num = 0

    def block(self, when, *fills):
        self.num += 1
        ops = []
        for fill in fills:
            ops.append(AppliedOperation(self.op_num, [4, fill], [0, {}], self.num, 0, 0,
                                        len(ops) + 1, True, "0" * 40, fill["account_id"],
                                        (fill["account_id"],)))
            self.op_num += 1
        self.plugin.block_applied(AppliedBlock(self.num, "%040x" % self.num, {}, when,
                                               tuple(ops), False))


def plugin_with(**options):
    plugin = MarketHistory(MarketHistoryOptions(**options))
    return plugin, Feeder(plugin)


def test_default_options_are_bitshares_core_7():
    opts = MarketHistoryOptions()
    assert opts.bucket_sizes == (60, 300, 900, 3600, 14400, 86400, 604800)
    assert opts.history_per_size == 1500
    assert opts.max_order_his_records_per_market == 1000
    assert opts.max_order_his_seconds_per_market == 259200
    assert MarketHistoryOptions(bucket_sizes=(300, 0, 60, 60)).bucket_sizes == (60, 300)


def test_bucket_boundaries_ohlc_and_volumes():
    plugin, feed = plugin_with(bucket_sizes=(60, 300))
    # 1000 TEST for 10 GOLD at 100 TEST/GOLD (price base GOLD 1 / quote TEST 100)
    feed.block(59, *match(1000, 10, 100, 1))
    feed.block(60, *match(2000, 10, 200, 1))        # 200 TEST/GOLD: a high
    feed.block(119, *match(500, 10, 50, 1))         # 50 TEST/GOLD: a low
    feed.block(120, *match(300, 3, 100, 1))
    one_minute = plugin.buckets(CORE, GOLD, 60, 0, 10 ** 6, 100)
    assert [b.open for b in one_minute] == [0, 60, 120]
    first, second, third = (b.to_object() for b in one_minute)
    # market base is 1.3.0 (lower id): prices are TEST/GOLD amounts
    assert first["key"] == {"base": CORE, "quote": GOLD, "seconds": 60,
                            "open": "1970-01-01T00:00:00"}
    assert (first["base_volume"], first["quote_volume"]) == (1000, 10)
    assert (first["open_base"], first["open_quote"]) == (100, 1)
    # bucket 60: 2000 TEST @200 then 500 TEST @50
    assert (second["base_volume"], second["quote_volume"]) == (2500, 20)
    assert (second["open_base"], second["open_quote"]) == (200, 1)
    assert (second["close_base"], second["close_quote"]) == (50, 1)
    assert (second["high_base"], second["high_quote"]) == (200, 1)
    assert (second["low_base"], second["low_quote"]) == (50, 1)
    assert second["key"]["open"] == "1970-01-01T00:01:00"
    assert (third["base_volume"], third["open_base"]) == (300, 100)
    # the 5-minute bucket holds all four maker fills (takers are not counted)
    [five] = plugin.buckets(GOLD, CORE, 300, 0, 10 ** 6, 100)
    assert (five.base_volume, five.quote_volume) == (3800, 33)
    assert (five.high_base, five.low_base, five.close_base) == (200, 50, 100)
    # ids: per fill, one bucket per size in ascending size order
    assert [b.id for b in one_minute] == ["5.1.0", "5.1.2", "5.1.3"]
    assert five.id == "5.1.1"
    assert plugin.tracked_buckets == [60, 300]
    # range and limit of get_market_history: start <= open <= end
    assert [b.open for b in plugin.buckets(CORE, GOLD, 60, 1, 120, 100)] == [60, 120]
    assert [b.open for b in plugin.buckets(CORE, GOLD, 60, 0, 119, 1)] == [0]
    assert plugin.buckets(CORE, GOLD, 900, 0, 10 ** 6, 100) == []


def test_high_low_compare_by_cross_multiplication():
    plugin, feed = plugin_with(bucket_sizes=(60,))
    feed.block(0, *match(300, 3, 100, 1))
    feed.block(1, *match(299, 3, 299, 3))       # 99.67 < 100: new low, not high
    feed.block(2, *match(301, 3, 301, 3))       # 100.33: new high
    [b] = plugin.buckets(CORE, GOLD, 60, 0, 60, 10)
    assert (b.low_base, b.low_quote) == (299, 3)
    assert (b.high_base, b.high_quote) == (301, 3)
    assert (b.open_base, b.close_base) == (100, 301)


def test_history_per_size_keeps_that_many_older_buckets():
    plugin, feed = plugin_with(bucket_sizes=(60,), history_per_size=2)
    for minute in (10, 11, 12):
        feed.block(minute * 60, *match(100, 1, 100, 1))
    assert [b.open for b in plugin.buckets(CORE, GOLD, 60, 0, 10 ** 6, 10)] == [600, 660, 720]
    feed.block(13 * 60 + 59, *match(100, 1, 100, 1))
    # cutoff = 60 * (13 - 2) = 660: the bucket opening at 600 goes
    assert [b.open for b in plugin.buckets(CORE, GOLD, 60, 0, 10 ** 6, 10)] == [660, 720, 780]
    assert plugin.get_object("5.1.0") is None
    assert plugin.get_object("5.1.1")["key"]["open"] == format_time(660)
    # a fill in another market does not trim this one
    other = [dict(f, pays=dict(f["pays"], asset_id="1.3.2") if f["pays"]["asset_id"] == GOLD
                  else f["pays"],
                  receives=dict(f["receives"], asset_id="1.3.2")
                  if f["receives"]["asset_id"] == GOLD else f["receives"],
                  fill_price={"base": _asset(1, "1.3.2"), "quote": _asset(100, CORE)})
             for f in match(100, 1, 100, 1)]
    feed.block(20 * 60, *other)
    assert len(plugin.buckets(CORE, GOLD, 60, 0, 10 ** 6, 10)) == 3
    assert len(plugin.buckets(CORE, "1.3.2", 60, 0, 10 ** 6, 10)) == 1


def test_history_per_size_zero_keeps_no_buckets_but_ticker():
    plugin, feed = plugin_with(history_per_size=0)
    feed.block(100, *match(100, 1, 100, 1))
    assert plugin.buckets(CORE, GOLD, 60, 0, 10 ** 6, 10) == []
    assert plugin.ticker(GOLD, CORE).base_volume == 100


def test_order_history_sequence_and_trimming_by_count_and_age():
    plugin, feed = plugin_with(max_order_his_records_per_market=3,
                               max_order_his_seconds_per_market=100)
    t = 10000
    for dt in (0, 10, 20, 30):
        feed.block(t + dt, match(100, 1, 100, 1)[1])  # maker fills only
    # 4 > 3 records, but none is 100 s old yet: all kept
    assert [r.time - t for r in plugin.fills(CORE, GOLD, 100)] == [30, 20, 10, 0]
    assert [r.sequence for r in plugin.fills(CORE, GOLD, 100)] == [-3, -2, -1, 0]
    feed.block(t + 125, match(100, 1, 100, 1)[1])
    # min time t+25: the two beyond the newest 3 are that old -> removed
    assert [r.time - t for r in plugin.fills(CORE, GOLD, 100)] == [125, 30, 20]
    assert [r.id for r in plugin.fills(CORE, GOLD, 100)] == ["5.0.4", "5.0.3", "5.0.2"]
    feed.block(t + 126, match(100, 1, 100, 1)[1])
    # min time t+26: the one beyond the count (t+20) is old -> removed
    assert [r.time - t for r in plugin.fills(CORE, GOLD, 100)] == [126, 125, 30]
    feed.block(t + 127, match(100, 1, 100, 1)[1])
    # beyond the count is t+30, younger than the min time t+27 -> kept
    assert [r.time - t for r in plugin.fills(CORE, GOLD, 100)] == [127, 126, 125, 30]
    feed.block(t + 131, match(100, 1, 100, 1)[1])
    # min time t+31: of the two beyond the count, t+30 is old, t+125 is not
    assert [r.time - t for r in plugin.fills(CORE, GOLD, 100)] == [131, 127, 126, 125]
    assert [r.sequence for r in plugin.fills(CORE, GOLD, 100)] == [-7, -6, -5, -4]
    assert plugin.get_object("5.0.0") is None
    assert plugin.get_object("5.0.6") == {
        "id": "5.0.6", "key": {"base": CORE, "quote": GOLD, "sequence": -6},
        "time": format_time(t + 127), "op": match(100, 1, 100, 1)[1]}
    assert [r.time - t for r in plugin.fills(GOLD, CORE, 2)] == [131, 127]


def test_order_history_young_fills_stay_beyond_the_count():
    plugin, feed = plugin_with(max_order_his_records_per_market=2,
                               max_order_his_seconds_per_market=1000)
    for dt in range(6):
        feed.block(5000 + dt, *match(100, 1, 100, 1))
    assert len(plugin.fills(CORE, GOLD, 100)) == 12


def test_fills_by_time_and_by_sequence():
    plugin, feed = plugin_with()
    feed.block(1000, *match(100, 1, 100, 1))     # sequences 0 (taker), -1 (maker)
    feed.block(1003, *match(200, 2, 100, 1))     # -2, -3
    feed.block(1006, *match(300, 3, 100, 1))     # -4, -5
    assert [r.sequence for r in plugin.fills_by_time(CORE, GOLD, 1005, 10)] == [-3, -2, -1, 0]
    assert [r.sequence for r in plugin.fills_by_time(CORE, GOLD, 1006, 3)] == [-5, -4, -3]
    assert plugin.fills_by_time(CORE, GOLD, 999, 10) == []
    assert [r.sequence for r in plugin.fills_by_sequence(CORE, GOLD, -3, 10)] == [-3, -2, -1, 0]
    assert [r.sequence for r in plugin.fills_by_sequence(CORE, GOLD, -100, 2)] == [-5, -4]
    assert plugin.fills_by_sequence(CORE, GOLD, 1, 10) == []


def test_ticker_latest_volume_and_24h_roll_out():
    plugin, feed = plugin_with()
    t0 = 1_700_000_000
    feed.block(t0, *match(1000, 10, 100, 1))
    ticker = plugin.ticker(GOLD, CORE)
    assert ticker.to_object() == {
        "id": "5.2.0", "base": CORE, "quote": GOLD, "last_day_base": 0, "last_day_quote": 0,
        "latest_base": 100, "latest_quote": 1, "base_volume": "1000", "quote_volume": "10"}
    assert plugin.meta.to_object() == {"id": "5.3.0", "rolling_min_order_his_id": "5.0.0",
                                       "skip_min_order_his_id": False}
    feed.block(t0 + 3600, *match(1500, 10, 150, 1, maker_sells=CORE))
    assert (ticker.latest_base, ticker.latest_quote) == (150, 1)
    assert (ticker.base_volume, ticker.quote_volume) == (2500, 20)
    feed.block(t0 + 86400)            # not older than 24 h yet (time < now - 86400)
    assert ticker.base_volume == 2500
    feed.block(t0 + 86401)            # the first match rolls out
    assert (ticker.base_volume, ticker.quote_volume) == (1500, 10)
    assert (ticker.last_day_base, ticker.last_day_quote) == (100, 1)
    assert plugin.meta.to_object()["rolling_min_order_his_id"] == "5.0.2"
    feed.block(t0 + 3600 + 86401)     # everything rolls out
    assert (ticker.base_volume, ticker.quote_volume) == (0, 0)
    assert (ticker.last_day_base, ticker.last_day_quote) == (150, 1)
    assert plugin.meta.to_object() == {"id": "5.3.0", "rolling_min_order_his_id": "5.0.3",
                                       "skip_min_order_his_id": True}
    feed.block(t0 + 3600 + 86402)     # the skipped one is not rolled out twice
    assert (ticker.base_volume, ticker.quote_volume) == (0, 0)
    feed.block(t0 + 200000, *match(10, 1, 10, 1))
    assert (ticker.base_volume, ticker.latest_base) == (10, 10)
    assert plugin.meta.to_object()["rolling_min_order_his_id"] == "5.0.4"
    assert plugin.get_object("5.2.0")["base_volume"] == "10"
    assert plugin.get_object("5.3.0")["skip_min_order_his_id"] is False


def test_tickers_by_volume():
    plugin, feed = plugin_with()
    silver = "1.3.2"
    big = [dict(f, pays=_swap(f["pays"], GOLD, silver), receives=_swap(f["receives"], GOLD, silver),
                fill_price={"base": _asset(1, silver), "quote": _asset(100, CORE)})
           for f in match(5000, 50, 100, 1)]
    feed.block(100, *match(1000, 10, 100, 1))
    feed.block(101, *big)
    assert [t.quote for t in plugin.tickers_by_volume(10)] == [silver, GOLD]
    assert [t.quote for t in plugin.tickers_by_volume(1)] == [silver]


def _swap(asset, old, new):
    return dict(asset, asset_id=new) if asset["asset_id"] == old else asset


def test_unknown_objects():
    plugin, _feed = plugin_with()
    assert plugin.get_object("5.3.0") is None
    assert plugin.get_object("5.9.0") is None
    assert plugin.get_object("1.3.0") is None


@pytest.mark.parametrize("when", [0, 59])
def test_first_bucket_opens_at_zero(when):
    plugin, feed = plugin_with(bucket_sizes=(60,))
    feed.block(when, *match(100, 1, 100, 1))
    assert [b.open for b in plugin.buckets(CORE, GOLD, 60, 0, 60, 10)] == [0]
