"""The database API over a chain with a smartcoin: debt positions
(``get_call_orders``, ``get_call_orders_by_account``,
``get_margin_positions``), force settlements (``get_settle_orders``,
``get_settle_orders_by_account``), collateral bids
(``get_collateral_bids``), the bitasset data object, and a new limit
order that takes a margin call (graphene ``apply_order``), whose fill
reaches the market history (``get_trade_history``).  Amounts by hand."""

import pytest

from nodeapi.api.database import DatabaseApi
from nodeapi.plugins.market_history.history import MarketHistory, MarketHistoryOptions
from nodeapi.node import Node

from kit.api import RecordingSession
from kit.chain import CORE, amt, asset_options, produce
from kit.chain import push_wire as push

INIT0, INIT1 = "1.2.6", "1.2.7"


def feed(usd, core_per_usd):
    p = {"base": amt(1, usd), "quote": amt(core_per_usd)}
    return {"settlement_price": p, "maintenance_collateral_ratio": 1750,
            "maximum_short_squeeze_ratio": 1100, "core_exchange_rate": p}


@pytest.fixture
def smartcoin(funded_pair):
    chain = funded_pair
    plugin = MarketHistory(MarketHistoryOptions(bucket_sizes=(60,)))
    chain.add_consumer(plugin)
    [[_t, usd]] = push(chain, [10, {
        "issuer": INIT0, "symbol": "USD", "precision": 4,
        "common_options": asset_options(perms=0x20),
        "bitasset_opts": {"feed_lifetime_sec": 864000, "minimum_feeds": 1,
                          "force_settlement_delay_sec": 3600,
                          "force_settlement_offset_percent": 0,
                          "maximum_force_settlement_volume": 10000,
                          "short_backing_asset": CORE,
                          "extensions": {"margin_call_fee_ratio": 50}},
        "is_prediction_market": False, "extensions": []}])
    push(chain, [13, {"issuer": INIT0, "asset_to_update": usd, "new_feed_producers": [INIT0],
                      "extensions": []}])
    push(chain, [19, {"publisher": INIT0, "asset_id": usd, "feed": feed(usd, 100),
                      "extensions": {}}])
    for account, collateral in ((INIT0, 200000), (INIT1, 400000)):
        push(chain, [3, {"funding_account": account, "delta_collateral": amt(collateral),
                         "delta_debt": amt(1000, usd), "extensions": {}}])
    produce(chain)
    api = DatabaseApi(Node(chain=chain, plugins={"market_history": plugin}), RecordingSession())
    return chain, api, usd


def test_positions_and_the_bitasset_object(smartcoin):
    chain, api, usd = smartcoin
    calls = api.get_call_orders("USD", 10)
    # least collateralized first: init0 (200 TEST per USD), then init1 (400)
    assert [(c["borrower"], c["collateral"], c["debt"]) for c in calls] == [
        (INIT0, 200000, 1000), (INIT1, 400000, 1000)]
    assert api.get_call_orders_by_account(INIT1, usd, 10) == [calls[1]]
    assert api.get_margin_positions("init1") == [calls[1]]
    [asset] = api.get_assets(["USD"])
    [b] = api.get_objects([asset["bitasset_data_id"]])
    assert list(b) == ["id", "asset_id", "feeds", "median_feed", "current_feed",
                       "current_feed_publication_time", "current_maintenance_collateralization",
                       "current_initial_collateralization", "options", "force_settled_volume",
                       "is_prediction_market", "settlement_price", "settlement_fund",
                       "individual_settlement_debt", "individual_settlement_fund",
                       "asset_cer_updated", "feed_cer_updated"]
    assert b["feeds"][0][0] == INIT0 and b["feeds"][0][1][1]["initial_collateral_ratio"] == 1750


def test_asset_answers_total_the_collateral(smartcoin):
    """graphene ``extended_asset_object`` (database_api.cpp ``extend_asset``,
    api_helper_indexes.cpp ``amount_in_collateral_index``): TEST backs both
    positions, 200,000 + 400,000 = 600,000 satoshis in collateral; USD's
    backing collateral is the same 600,000 and none is held in USD; the
    object itself (get_objects) has neither field."""
    chain, api, usd = smartcoin
    usd_asset, core = api.get_assets(["USD", "TEST"])
    assert (usd_asset["total_in_collateral"], usd_asset["total_backing_collateral"]) == (
        0, 600000)
    assert core["total_in_collateral"] == 600000 and "total_backing_collateral" not in core
    assert api.lookup_asset_symbols([usd, "1.3.0"]) == [usd_asset, core]
    assert api.list_assets("", 10) == [core, usd_asset]
    assert api.get_assets_by_issuer("init0", "1.3.0", 10) == [usd_asset]
    [raw] = api.get_objects([usd])
    assert "total_in_collateral" not in raw and "total_backing_collateral" not in raw
    # a position closed: its collateral leaves both totals
    push(chain, [3, {"funding_account": INIT1, "delta_collateral": amt(-400000),
                     "delta_debt": amt(-1000, usd), "extensions": {}}])
    assert api.get_assets(["USD"])[0]["total_backing_collateral"] == 200000
    assert api.get_assets(["TEST"])[0]["total_in_collateral"] == 200000


def test_a_new_sell_order_takes_the_margin_call(smartcoin):
    chain, api, usd = smartcoin
    # the feed rises to 120 TEST per USD: init0 (200 TEST per USD) is below
    # the maintenance collateralization (210) but no order supports a call
    push(chain, [19, {"publisher": INIT0, "asset_id": usd, "feed": feed(usd, 120),
                      "extensions": {}}])
    assert api.get_call_orders("USD", 1)[0]["debt"] == 1000
    # init1 asks 120 TEST per USD for 100 USD; the margin call offers
    # ~MCOP = 120 * 1050/1000 = 126 TEST per USD and pays at ~MSSP = 132:
    # the seller gets 100 * 126 = 12,600 TEST, the position pays 13,200,
    # the margin call fee is 600.
    core1 = chain.state.balance(INIT1, CORE)
    [[_t, order_id]] = push(chain, [1, {"seller": INIT1, "amount_to_sell": amt(100, usd),
                                        "min_to_receive": amt(12000), "fill_or_kill": False,
                                        "expiration": "2030-01-01T00:00:00", "extensions": {}}])
    fee = chain.required_fee([1, {"fee": amt(0), "seller": INIT1,
                                  "amount_to_sell": amt(100, usd),
                                  "min_to_receive": amt(12000), "fill_or_kill": False,
                                  "expiration": "2030-01-01T00:00:00", "extensions": {}}])
    assert order_id not in chain.state.objects
    assert chain.state.balance(INIT1, CORE) - core1 == 12600 - fee["amount"]
    call = api.get_call_orders("USD", 1)[0]
    assert (call["borrower"], call["debt"], call["collateral"]) == (INIT0, 900, 186800)
    [dyn] = api.get_objects([api.get_assets(["USD"])[0]["dynamic_asset_data_id"]])
    assert dyn["accumulated_collateral_fees"] == 600 and dyn["current_supply"] == 1900
    produce(chain)
    # the position was the maker: its fill is the market's trade
    [trade] = api.get_trade_history("USD", "TEST", "1970-01-01T00:00:00",
                                    "2000-01-01T00:00:00", 10)
    assert (trade["amount"], trade["value"]) == ("0.13200", "0.0100")  # TEST, USD
    assert trade["side1_account_id"] == INIT0


def test_settle_orders_and_bids(smartcoin):
    chain, api, usd = smartcoin
    push(chain, [17, {"account": INIT1, "amount": amt(300, usd), "extensions": []}])
    push(chain, [17, {"account": INIT0, "amount": amt(200, usd), "extensions": []}])
    settles = api.get_settle_orders("USD", 10)
    assert [(s["owner"], s["balance"]["amount"]) for s in settles] == [(INIT1, 300), (INIT0, 200)]
    assert api.get_settle_orders_by_account(INIT0, "1.4.0", 10) == [settles[1]]
    # the issuer settles the asset globally at 1 USD = 100 TEST: the
    # waiting force settlements are cancelled at the next block
    push(chain, [18, {"issuer": INIT0, "asset_to_settle": usd,
                      "settle_price": {"base": amt(1, usd), "quote": amt(100)},
                      "extensions": []}])
    produce(chain)
    assert api.get_settle_orders("USD", 10) == []
    assert chain.state.balance(INIT1, usd) == 1000
    push(chain, [45, {"bidder": INIT1, "additional_collateral": amt(50000),
                      "debt_covered": amt(1000, usd), "extensions": []}])
    push(chain, [45, {"bidder": INIT0, "additional_collateral": amt(90000),
                      "debt_covered": amt(1000, usd), "extensions": []}])
    bids = api.get_collateral_bids("USD", 10, 0)
    # the most collateral per debt first
    assert [(b["bidder"], b["inv_swan_price"]["base"]["amount"]) for b in bids] == [
        (INIT0, 90000), (INIT1, 50000)]
    assert api.get_collateral_bids("USD", 10, 1) == bids[1:]
