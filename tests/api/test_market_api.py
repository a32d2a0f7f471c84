"""Market data over a real chain: orders placed and filled on the node, the
market_history plugin fed by its blocks, the database and history API
functions called directly and over RPC with python-bitshares.  Every
expected price and amount is computed by hand in the comments."""

import time

import pytest
import pytest_twisted
from twisted.internet import threads
from twisted.internet.task import deferLater

from nodeapi.api.database import DatabaseApi
from nodeapi.api.database.amounts import price_diff_percent_string
from nodeapi.api.history import HistoryApi
from nodeapi.errors import ApiError
from nodeapi.plugins.market_history.history import MarketHistory, MarketHistoryOptions
from nodeapi.node import ApiLimits, Node
from nodeapi.protocol.times import format_time

from kit.api import RecordingSession
from kit.chain import push_wire
from kit.keys import DEV_PUB, DEV_WIF

INIT0, INIT1 = "1.2.6", "1.2.7"
CORE, GOLD = "1.3.0", "1.3.1"
FAR = "2100-01-01T00:00:00"
DAY = 86400


# -- driving the chain ------------------------------------------------------------


def push(chain, *ops):
    """:func:`kit.chain.push_wire` with the results' values (tags dropped)."""
    return [r[1] for r in push_wire(chain, *ops)]


def produce_at(chain, when):
    """Produce the block of the first slot at or after ``when``; returns its time."""
    slot = max(chain.get_slot_at_time(when), 1)
    t = chain.get_slot_time(slot)
    if t < when:
        slot += 1
        t = chain.get_slot_time(slot)
    chain.generate_block(t, chain.get_scheduled_witness(slot), DEV_WIF)
    return t


def produce(chain):
    return produce_at(chain, chain.get_slot_time(1))


def order(chain, seller, sell, sell_asset, receive, receive_asset):
    return push(chain, [1, {"seller": seller,
                            "amount_to_sell": {"amount": sell, "asset_id": sell_asset},
                            "min_to_receive": {"amount": receive, "asset_id": receive_asset},
                            "expiration": FAR, "fill_or_kill": False, "extensions": []}])[0]


def setup_gold(chain):
    """init0 claims the genesis balance and creates GOLD (1.3.1, precision
    3); init1 gets 1000 GOLD and 1000 TEST (precision 5)."""
    push(chain, [37, {"deposit_to_account": INIT0, "balance_to_claim": "1.15.0",
                      "balance_owner_key": DEV_PUB,
                      "total_claimed": {"amount": 10 ** 15, "asset_id": CORE}}])
    produce(chain)
    push(chain, [10, {"issuer": INIT0, "symbol": "GOLD", "precision": 3, "common_options": {
        "max_supply": 10 ** 12, "market_fee_percent": 0, "max_market_fee": 0,
        "issuer_permissions": 0, "flags": 0,
        "core_exchange_rate": {"base": {"amount": 1, "asset_id": CORE},
                               "quote": {"amount": 1, "asset_id": GOLD}},
        "whitelist_authorities": [], "blacklist_authorities": [], "whitelist_markets": [],
        "blacklist_markets": [], "description": "", "extensions": []},
        "is_prediction_market": False, "extensions": []}])
    produce(chain)
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": {"amount": 10 ** 6, "asset_id": GOLD},
                      "issue_to_account": INIT1, "extensions": []}],
         [0, {"from": INIT0, "to": INIT1, "amount": {"amount": 10 ** 8, "asset_id": CORE},
              "extensions": []}])
    produce(chain)


def first_match(chain):
    """init1 (maker) sells 10 GOLD for 20 TEST (2 TEST/GOLD); init0 (taker)
    sells 10 TEST for 5 GOLD: the taker is the smaller side, it gets
    floor(1000000 * 10000 / 2000000) = 5000 (5 GOLD) and pays
    ceil(5000 * 2000000 / 10000) = 1000000 (10 TEST).  5 GOLD stay for sale."""
    maker = order(chain, INIT1, 10000, GOLD, 2000000, CORE)
    produce(chain)
    order(chain, INIT0, 1000000, CORE, 5000, GOLD)
    return maker, produce(chain)


def make_apis(chain, plugin, websocket=True, **limits):
    session = RecordingSession(websocket)
    node = Node(chain=chain, plugins={"market_history": plugin}, limits=ApiLimits(**limits))
    return DatabaseApi(node, session), HistoryApi(node, session), session


@pytest.fixture
def market(chain):
    plugin = MarketHistory(MarketHistoryOptions(bucket_sizes=(60, 3600)))
    chain.add_consumer(plugin)
    setup_gold(chain)
    return chain, plugin


# -- database API ----------------------------------------------------------------------


def test_ticker_volume_trades_after_one_match(market):
    chain, plugin = market
    db, history, _session = make_apis(chain, plugin)
    maker, when = first_match(chain)
    assert db.get_ticker("TEST", "GOLD") == {
        "time": format_time(chain.head_block_time), "base": "TEST", "quote": "GOLD",
        # 2000000 sat TEST / 10000 sat GOLD * 10^(3-5) = 2 TEST per GOLD
        "latest": "2",
        # the maker's rest, 5000 GOLD sat for sale: an ask of 5 GOLD for
        # 5000 * 2000000 / 10000 = 1000000 TEST sat (10 TEST)
        "lowest_ask": "2", "lowest_ask_base_size": "10", "lowest_ask_quote_size": "5",
        "highest_bid": "0", "highest_bid_base_size": "0", "highest_bid_quote_size": "0",
        "percent_change": "0", "base_volume": "10", "quote_volume": "5", "mto_id": "5.2.0"}
    # the other way round: 1/2 = 0.5 GOLD per TEST; volumes swap
    ticker = db.get_ticker(GOLD, CORE)
    assert (ticker["base"], ticker["quote"], ticker["latest"]) == ("GOLD", "TEST", "0.5")
    assert (ticker["base_volume"], ticker["quote_volume"]) == ("5", "10")
    # the ask (selling GOLD) is a bid when GOLD is the base
    assert (ticker["highest_bid"], ticker["highest_bid_base_size"],
            ticker["highest_bid_quote_size"]) == ("0.5", "5", "10")
    assert db.get_24_volume("TEST", "GOLD") == {
        "time": format_time(chain.head_block_time), "base": "TEST", "quote": "GOLD",
        "base_volume": "10", "quote_volume": "5"}
    # one trade made of the maker's and the taker's fills
    # fills: the taker's has sequence 0, the maker's -1; the trade is numbered
    # by the maker's: 1.  The maker received the base (TEST): "sell".
    [trade] = db.get_trade_history("TEST", "GOLD", format_time(when), format_time(when), 10)
    assert trade == {"sequence": 1, "date": format_time(when), "price": "2", "amount": "5",
                     "value": "10", "type": "sell", "side1_account_id": INIT1,
                     "side2_account_id": INIT0}
    [other] = db.get_trade_history("GOLD", "TEST", format_time(when + 10), "1970-01-01T00:00:00",
                                   1)
    assert (other["price"], other["amount"], other["value"], other["type"]) == (
        "0.5", "10", "5", "buy")
    assert db.get_trade_history("TEST", "GOLD", format_time(when - 1), "1970-01-01T00:00:00",
                                10) == []
    # by sequence: the trade numbered start is left out, older ones follow
    assert db.get_trade_history_by_sequence("TEST", "GOLD", 1, "1970-01-01T00:00:00", 10) == []
    assert db.get_trade_history_by_sequence("TEST", "GOLD", 2, "1970-01-01T00:00:00",
                                            10) == [trade]
    assert db.get_trade_history_by_sequence("TEST", "GOLD", 2, format_time(when + 1),
                                            10) == []
    # an empty market: everything "0", no mto_id
    push(chain, [10, {"issuer": INIT0, "symbol": "SILVER", "precision": 2, "common_options": {
        "max_supply": 10 ** 12, "market_fee_percent": 0, "max_market_fee": 0,
        "issuer_permissions": 0, "flags": 0,
        "core_exchange_rate": {"base": {"amount": 1, "asset_id": CORE},
                               "quote": {"amount": 1, "asset_id": "1.3.1"}},
        "whitelist_authorities": [], "blacklist_authorities": [], "whitelist_markets": [],
        "blacklist_markets": [], "description": "", "extensions": []},
        "is_prediction_market": False, "extensions": []}])
    produce(chain)
    empty = db.get_ticker("SILVER", "TEST")
    assert "mto_id" not in empty
    assert {k: v for k, v in empty.items() if k not in ("time", "base", "quote")} == dict.fromkeys(
        ["latest", "lowest_ask", "lowest_ask_base_size", "lowest_ask_quote_size",
         "highest_bid", "highest_bid_base_size", "highest_bid_quote_size", "percent_change",
         "base_volume", "quote_volume"], "0")


def test_percent_change_and_24h_roll_out(market):
    chain, plugin = market
    db, _history, _session = make_apis(chain, plugin)
    maker, t1 = first_match(chain)
    # a day later init1 cancels the rest and sells 5 GOLD for 15 TEST (3
    # TEST/GOLD); init0 takes it with 15 TEST
    produce_at(chain, t1 + DAY + 10)
    push(chain, [2, {"fee_paying_account": INIT1, "order": maker, "extensions": []}],
         [1, {"seller": INIT1, "amount_to_sell": {"amount": 5000, "asset_id": GOLD},
              "min_to_receive": {"amount": 1500000, "asset_id": CORE}, "expiration": FAR,
              "fill_or_kill": False, "extensions": []}])
    produce(chain)
    order(chain, INIT0, 1500000, CORE, 5000, GOLD)
    t2 = produce(chain)
    ticker = db.get_ticker("TEST", "GOLD")
    # the first fill rolled out at the block of t1 + DAY + 10: last_day price 2,
    # latest 3: +50 %; volume only the second match: 15 TEST, 5 GOLD
    assert (ticker["latest"], ticker["percent_change"]) == ("3", "50")
    assert (ticker["base_volume"], ticker["quote_volume"]) == ("15", "5")
    # seen from GOLD: 0.5 -> 0.333..., (1e10 - 1.5e10) * 10000 // 1.5e10 = -3333: -33.33 %
    ticker = db.get_ticker("GOLD", "TEST")
    # 5000 * 10^19 // 1500000 = 33333333333333333 with 19 + 3 - 5 = 17 decimals
    assert ticker["latest"] == "0.33333333333333333"
    assert ticker["percent_change"] == "-33.33"
    trades = db.get_trade_history("TEST", "GOLD", format_time(t2), format_time(t1), 10)
    assert [(t["sequence"], t["price"], t["date"]) for t in trades] == [
        (3, "3", format_time(t2)), (1, "2", format_time(t1))]
    # a day after the second match everything rolled out
    produce_at(chain, t2 + DAY + 1)
    produce(chain)
    ticker = db.get_ticker("TEST", "GOLD")
    assert (ticker["base_volume"], ticker["quote_volume"], ticker["percent_change"]) == (
        "0", "0", "0")  # last_day == latest: no change
    assert plugin.get_object("5.3.0")["skip_min_order_his_id"] is True


def test_top_markets_and_history_api(market):
    chain, plugin = market
    db, history, _session = make_apis(chain, plugin)
    maker, when = first_match(chain)
    [top] = db.get_top_markets(5)
    assert top == db.get_ticker("TEST", "GOLD")  # stated with the lower-id asset as base
    assert db.get_top_markets(0) == []
    # the two fills, newest (the maker's) first
    fills = history.get_fill_order_history("GOLD", "TEST", 10)
    assert [(f["id"], f["key"], f["time"], f["op"]["order_id"], f["op"]["is_maker"])
            for f in fills] == [
        ("5.0.1", {"base": CORE, "quote": GOLD, "sequence": -1}, format_time(when), maker, True),
        ("5.0.0", {"base": CORE, "quote": GOLD, "sequence": 0}, format_time(when), "1.7.1",
         False)]
    assert fills[0]["op"]["pays"] == {"amount": 5000, "asset_id": GOLD}
    assert fills[0]["op"]["receives"] == {"amount": 1000000, "asset_id": CORE}
    assert history.get_fill_order_history(CORE, GOLD, 1) == fills[:1]
    assert history.get_market_history_buckets() == [60, 3600]
    minute = when // 60 * 60
    [bucket] = history.get_market_history("GOLD", "TEST", 60, format_time(minute),
                                          format_time(minute))
    assert bucket == {
        "id": "5.1.0", "key": {"base": CORE, "quote": GOLD, "seconds": 60,
                               "open": format_time(minute)},
        "high_base": 2000000, "high_quote": 10000, "low_base": 2000000, "low_quote": 10000,
        "open_base": 2000000, "open_quote": 10000, "close_base": 2000000, "close_quote": 10000,
        "base_volume": 1000000, "quote_volume": 5000}
    [hour] = history.get_market_history(CORE, GOLD, 3600, "1970-01-01T00:00:00", FAR)
    assert hour["key"]["open"] == format_time(when // 3600 * 3600)
    assert history.get_market_history(CORE, GOLD, 60, format_time(minute + 1), FAR) == []
    assert history.get_market_history(CORE, GOLD, 300, "1970-01-01T00:00:00", FAR) == []
    assert plugin.get_object("5.2.0")["base_volume"] == "1000000"
    # get_objects reaches the plugin's objects
    assert db.get_objects(["5.0.1", "5.1.0", "5.2.0", "5.3.0", "5.0.9", "1.3.1"]) == [
        fills[0], bucket, plugin.get_object("5.2.0"),
        {"id": "5.3.0", "rolling_min_order_his_id": "5.0.0", "skip_min_order_his_id": False},
        None, chain.state.objects[GOLD]]


def test_limits_and_argument_errors(market):
    chain, plugin = market
    db, history, _session = make_apis(chain, plugin, get_trade_history=2, get_top_markets=3,
                                      get_trade_history_by_sequence=4, get_market_history=1)
    first_match(chain)
    t0 = "1970-01-01T00:00:00"
    for call, message in [
        (lambda: db.get_trade_history("TEST", "GOLD", t0, t0, 3),
         "limit can not be greater than 2"),
        (lambda: db.get_trade_history_by_sequence("TEST", "GOLD", 0, t0, 5),
         "limit can not be greater than 4"),
        (lambda: db.get_trade_history_by_sequence("TEST", "GOLD", -1, t0, 4),
         "start must not be negative"),
        (lambda: db.get_top_markets(4), "limit can not be greater than 3"),
        (lambda: db.get_ticker("NOPE", "GOLD"), "Invalid base asset symbol: NOPE"),
        (lambda: db.get_24_volume("TEST", "1.3.99"), "Invalid quote asset symbol: 1.3.99"),
        (lambda: db.get_trade_history("TEST", "GOLD", "yesterday", t0, 1),
         "start: expected a UTC time"),
        (lambda: history.get_fill_order_history("NOPE", "GOLD", 1), "no such asset"),
        (lambda: history.get_market_history("TEST", "GOLD", 60, t0, "soon"),
         "end: expected a UTC time"),
        (lambda: db.subscribe_to_market(1, "GOLD", "1.3.1"),
         "The two assets of a market must differ"),
    ]:
        with pytest.raises(ApiError, match=message):
            call()
    # get_market_history returns at most api-limit-get-market-history buckets
    assert len(history.get_market_history("TEST", "GOLD", 3600, t0, FAR)) == 1
    # without the plugin
    db, history, _session = make_apis(chain, None)
    for call in (lambda: db.get_ticker("TEST", "GOLD"), lambda: db.get_24_volume("TEST", "GOLD"),
                 lambda: db.get_top_markets(1),
                 lambda: db.get_trade_history("TEST", "GOLD", t0, t0, 1),
                 lambda: db.get_trade_history_by_sequence("TEST", "GOLD", 0, t0, 1)):
        with pytest.raises(ApiError, match=r"^Market history plugin is not enabled\.$"):
            call()
    for call in (lambda: history.get_fill_order_history("TEST", "GOLD", 1),
                 lambda: history.get_market_history("TEST", "GOLD", 60, t0, t0),
                 history.get_market_history_buckets):
        with pytest.raises(ApiError, match=r"^Market history plugin is not enabled$"):
            call()


def test_subscribe_to_market_notices(market):
    chain, plugin = market
    db, _history, session = make_apis(chain, plugin)
    maker = order(chain, INIT1, 10000, GOLD, 2000000, CORE)
    produce(chain)
    db.subscribe_to_market(7, "TEST", "GOLD")
    # subscriptions are per connection: another one that unsubscribed gets nothing
    other, _h, other_session = make_apis(chain, plugin)
    other.subscribe_to_market(8, GOLD, CORE)
    other.unsubscribe_from_market(CORE, "GOLD")
    order(chain, INIT0, 1000000, CORE, 5000, GOLD)   # filled at once, rest of maker stays
    order(chain, INIT0, 100000, CORE, 1000, GOLD)    # 1 TEST for 1 GOLD: rests as a bid
    produce(chain)
    fills = [n for n in session.notices if isinstance(n[1][0], list)]
    [(cb, payload)] = fills
    assert cb == 7
    assert [(op[0], op[1]["order_id"], op[1]["is_maker"], result) for op, result in payload] == [
        (4, "1.7.1", False, [0, {}]), (4, maker, True, [0, {}])]
    objects = [n for n in session.notices if not isinstance(n[1][0], list)]
    # created: the resting bid 1.7.2; changed: the maker's rest.  The
    # filled taker 1.7.1 was created and removed by the block: not notified.
    assert [(cb, [o["id"] for o in objs]) for cb, objs in objects] == [
        (7, ["1.7.2"]), (7, [maker])]
    assert objects[1][1][0]["for_sale"] == 5000
    assert session.notices[0] == fills[0]  # fills come first
    # cancel: removed ids
    session.notices.clear()
    push(chain, [2, {"fee_paying_account": INIT0, "order": "1.7.2", "extensions": []}])
    produce(chain)
    assert session.notices == [(7, ["1.7.2"])]
    # unsubscribing (either order of the assets) stops the notices
    session.notices.clear()
    db.unsubscribe_from_market("GOLD", "TEST")
    push(chain, [2, {"fee_paying_account": INIT1, "order": maker, "extensions": []}])
    produce(chain)
    assert session.notices == []
    assert other_session.notices == []


def test_market_subscription_ends(market):
    chain, plugin = market
    db, _history, session = make_apis(chain, plugin)
    db.subscribe_to_market(7, "TEST", "GOLD")
    db.cancel_all_subscriptions()
    order(chain, INIT1, 10000, GOLD, 2000000, CORE)
    produce(chain)
    assert session.notices == []
    db.subscribe_to_market(9, "GOLD", "TEST")
    observers = len(chain._block_observers)
    session.close()
    assert len(chain._block_observers) == observers - 1
    order(chain, INIT1, 10000, GOLD, 2000000, CORE)
    produce(chain)
    assert session.notices == []
    with pytest.raises(ApiError, match="closed"):
        db.subscribe_to_market(9, "GOLD", "TEST")
    http, _history, _s = make_apis(chain, plugin, websocket=False)
    with pytest.raises(ApiError, match="WebSocket"):
        http.subscribe_to_market(1, "GOLD", "TEST")


@pytest_twisted.inlineCallbacks
def test_rebuilt_by_replay(market, genesis):
    from nodeapi.chain.chain import Chain

    chain, plugin = market
    maker, t1 = first_match(chain)
    produce_at(chain, t1 + DAY + 10)
    push(chain, [2, {"fee_paying_account": INIT1, "order": maker, "extensions": []}])
    produce(chain)
    replayed = Chain(genesis, chain.block_log)
    again = MarketHistory(plugin.options)
    replayed.add_consumer(again)
    count = yield replayed.replay()
    assert count == chain.head_block_num
    ids = [f"5.{t}.{n}" for t in range(4) for n in range(4)]
    assert [again.get_object(i) for i in ids] == [plugin.get_object(i) for i in ids]
    assert again.get_object("5.3.0")["skip_min_order_his_id"] is True  # rolled out


@pytest.mark.parametrize("old,new,percent", [
    ((2, 1), (3, 1), "50"),
    ((3, 1), (2, 1), "-33.33"),
    ((100000, 1), (99999, 1), "0"),          # -0.001 %: "0", never "-0"
    ((10000, 1), (9999, 1), "-0.01"),
    ((1, 3), (1, 3), "0"),
    # a zero base stands for 1 / int64 max: (int64 max - 1) * 100 %
    ((0, 1), (1, 1), "922337203685477580600"),
])
def test_price_diff_percent_string(old, new, percent):
    assert price_diff_percent_string(*old, *new) == percent


# -- over RPC with python-bitshares --------------------------------------------------


@pytest.fixture
def served(market):
    """The market chain behind the real RPC site, its matches at wall-clock
    times (python-bitshares asks for the last 24 hours of trades)."""
    from twisted.internet import reactor

    from nodeapi.rpc.access import ApiAccess
    from kit.site import RunningSite, make_node

    chain, plugin = market
    server = RunningSite(make_node(chain, market_history=plugin), ApiAccess.default())
    yield chain, plugin, server, reactor
    server.stop_blocking()


def _python_bitshares_market(url):
    from bitshares import BitShares
    from bitshares.instance import BlockchainInstance, set_shared_blockchain_instance
    from bitshares.market import Market

    bts = BitShares(node=url, num_retries=0)
    set_shared_blockchain_instance(bts)  # Market.trades builds FilledOrder without it
    try:
        market = Market("GOLD:TEST", blockchain_instance=bts)
        return market.ticker(), market.volume24h(), list(market.trades(limit=10))
    finally:
        BlockchainInstance.set_shared_blockchain_instance(None)


@pytest_twisted.inlineCallbacks
@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_python_bitshares_ticker_volume_trades(served, scheme):
    chain, _plugin, server, _reactor = served
    now = int(time.time())
    produce_at(chain, now - 60)
    maker, when = first_match(chain)
    assert when <= now
    ticker, volume, trades = yield threads.deferToThread(
        _python_bitshares_market, f"{scheme}://127.0.0.1:{server.port}")
    # Market("GOLD:TEST"): quote GOLD, base TEST; 2 TEST per GOLD
    assert float(ticker["latest"]) == 2.0
    assert ticker["baseVolume"]["symbol"] == "TEST" and float(ticker["baseVolume"]) == 10.0
    assert ticker["quoteVolume"]["symbol"] == "GOLD" and float(ticker["quoteVolume"]) == 5.0
    assert float(ticker["lowestAsk"]) == 2.0 and float(ticker["highestBid"]) == 0.0
    assert ticker["percentChange"] == 0.0
    assert {k: float(v) for k, v in volume.items()} == {"TEST": 10.0, "GOLD": 5.0}
    [trade] = trades
    assert float(trade) == 2.0
    assert (float(trade["quote"]), trade["quote"]["symbol"]) == (5.0, "GOLD")
    assert (float(trade["base"]), trade["base"]["symbol"]) == (10.0, "TEST")
    assert trade["sequence"] == 1 and trade["date"] == format_time(when)
    assert (trade["side1_account_id"], trade["side2_account_id"]) == (INIT1, INIT0)


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_python_bitshares_notify_markets(served):
    from bitshares import BitShares
    from bitshares.instance import BlockchainInstance, set_shared_blockchain_instance
    from bitshares.notify import Notify
    from bitshares.price import FilledOrder, Order

    chain, _plugin, server, reactor = served
    produce_at(chain, int(time.time()) - 60)
    seen = []

    def connect():
        bts = BitShares(node=f"ws://127.0.0.1:{server.port}", num_retries=0)
        set_shared_blockchain_instance(bts)  # Price objects of notices are built without it
        return Notify(markets=["GOLD:TEST"], on_market=seen.append, blockchain_instance=bts)

    notify = yield threads.deferToThread(connect)
    listening = threads.deferToThread(notify.listen)

    def wait_for(predicate):
        for _ in range(100):
            found = [x for x in seen if predicate(x)]
            if found:
                return found
            yield deferLater(reactor, 0.1)
        raise AssertionError(f"no such market notice in {seen}")

    try:
        # until the subscription is in place: one block per complete match
        # (init1 sells 10 GOLD for 20 TEST, init0 sells 20 TEST for 10 GOLD)
        fills = []
        for _ in range(100):
            fills = [x for x in seen if isinstance(x, FilledOrder)]
            if fills:
                break
            order(chain, INIT1, 10000, GOLD, 2000000, CORE)
            order(chain, INIT0, 2000000, CORE, 10000, GOLD)
            produce(chain)
            yield deferLater(reactor, 0.1)
        # the block's two fills, the taker's first; both orders were created
        # and removed by the block: no order notices
        assert [(f["pays"]["amount"], f["receives"]["amount"], f["is_maker"])
                for f in fills] == [(2000000, 10000, False), (10000, 2000000, True)]
        assert [float(f) for f in fills] == [0.5, 2.0]
        assert not [x for x in seen if not isinstance(x, FilledOrder)]
        # a resting order: created (the full object), then cancelled (its id)
        rest = order(chain, INIT1, 1000, GOLD, 300000, CORE)
        produce(chain)
        [created] = yield from wait_for(lambda x: not isinstance(x, FilledOrder)
                                        and x.get("id") == rest and not x.get("deleted"))
        assert float(created["for_sale"]) == 1.0 and created["seller"] == INIT1
        push(chain, [2, {"fee_paying_account": INIT1, "order": rest, "extensions": []}])
        produce(chain)
        yield from wait_for(lambda x: not isinstance(x, FilledOrder)
                            and x.get("id") == rest and x.get("deleted"))
    finally:
        notify.close()
        yield listening
        BlockchainInstance.set_shared_blockchain_instance(None)


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_bitsharesjs_market_subscription(served, js_client):
    """bitsharesjs' ChainStore resolves the assets and a subscribe_to_market
    callback (bitshares-ui's MarketsStore flow) receives the fills of a
    complete match made on the node."""
    import json
    import os

    from twisted.internet import utils

    from kit.js import JS_DIR

    chain, _plugin, server, reactor = served
    produce_at(chain, int(time.time()) - 60)
    run = utils.getProcessOutputAndValue(
        js_client, [os.path.join(JS_DIR, "market.js"), f"ws://127.0.0.1:{server.port}",
                    "TEST", "GOLD"], env=dict(os.environ), path=JS_DIR)
    done = []
    run.addBoth(lambda r: done.append(r) or r)
    for _ in range(40):
        if done:
            break
        # init1 sells 10 GOLD for 20 TEST, init0 sells 20 TEST for 10 GOLD:
        # a complete match at 2 TEST per GOLD, one block each
        order(chain, INIT1, 10000, GOLD, 2000000, CORE)
        order(chain, INIT0, 2000000, CORE, 10000, GOLD)
        produce(chain)
        yield deferLater(reactor, 0.2)
    out, err, code = yield run
    assert code == 0, err.decode()
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["base"] == {"id": CORE, "symbol": "TEST", "precision": 5}
    assert result["quote"] == {"id": GOLD, "symbol": "GOLD", "precision": 3}
    # the taker (init0) pays 20 TEST for 10 GOLD, the maker (init1) 10 GOLD
    # for 20 TEST; both at the maker's price 2000000/10000
    assert [(f["account_id"], f["pays"], f["receives"], f["is_maker"])
            for f in result["fills"]] == [
        (INIT0, {"amount": 2000000, "asset_id": CORE}, {"amount": 10000, "asset_id": GOLD},
         False),
        (INIT1, {"amount": 10000, "asset_id": GOLD}, {"amount": 2000000, "asset_id": CORE},
         True)]
    for fill in result["fills"]:
        assert fill["fill_price"] == {"base": {"amount": 10000, "asset_id": GOLD},
                                      "quote": {"amount": 2000000, "asset_id": CORE}}
    # every match was complete: the book is empty
    assert result["limit_orders"] == []
    assert result["order_book"]["bids"] == [] and result["order_book"]["asks"] == []
