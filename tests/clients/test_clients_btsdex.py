"""btsdex (npm; a trading-bot library on its own API, ECC and serializer
packages) through its everyday flows against a live node: tests/js/btsdex.js
connects, builds an asset_create with its transaction builder, issues,
transfers with a memo, sells and buys (a match), reads orders, the order
book, limit orders, the ticker and balances, cancels, reads account history
and waits for a 'block' event.  Amounts are checked against graphene's
rules by hand."""

import json
import os

import pytest
import pytest_twisted
from twisted.internet import utils

from nodeapi.plugins.market_history.history import MarketHistory, MarketHistoryOptions

from kit.clients import live_node
from kit.js import JS_DIR
from kit.keys import CHAIN_ID, DEV_WIF

CORE = "1.3.0"


@pytest.fixture
def btsdex_live(funded_pair):
    plugin = MarketHistory(MarketHistoryOptions(bucket_sizes=(60,)))
    funded_pair.add_consumer(plugin)
    node = live_node(funded_pair, market_history=plugin)
    yield node
    pytest_twisted.blockon(node.stop())


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_btsdex_everyday_flows(btsdex_live, js_client):
    chain = btsdex_live.chain
    state = chain.state
    init0, init1 = "1.2.6", "1.2.7"
    core_before = state.balance(init1, CORE)
    out, err, code = yield utils.getProcessOutputAndValue(
        js_client, [os.path.join(JS_DIR, "btsdex.js"), btsdex_live.ws_url, CHAIN_ID, DEV_WIF],
        env=dict(os.environ), path=JS_DIR)
    assert code == 0, err.decode()[-3000:]
    seen = json.loads(out.decode().strip().splitlines()[-1])
    assert seen["chain"]["chainId"] == CHAIN_ID and seen["chain"]["coreAsset"] == "TEST"
    assert (seen["init0"], seen["init1"]) == (init0, init1)
    gold = seen["gold"]["id"]
    assert seen["gold"] == {"id": gold, "symbol": "GOLD", "precision": 3}
    # the transaction builder asked the node for the fee: the schedule's
    # asset_create fee for a 4-letter symbol, in TEST (precision 5)
    create_fee = chain.required_fee([10, {
        "fee": {"amount": 0, "asset_id": CORE}, "issuer": init0, "symbol": "GOLD",
        "precision": 3, "common_options": {
            "max_supply": 10 ** 9, "market_fee_percent": 0, "max_market_fee": 0,
            "issuer_permissions": 79, "flags": 0,
            "core_exchange_rate": {"base": {"amount": 1, "asset_id": CORE},
                                   "quote": {"amount": 1, "asset_id": "1.3.1"}},
            "whitelist_authorities": [], "blacklist_authorities": [],
            "whitelist_markets": [], "blacklist_markets": [], "description": "",
            "extensions": {}},
        "is_prediction_market": False, "extensions": []}])
    assert seen["asset_create_cost"] == {"TEST": create_fee["amount"] / 10 ** 5}
    # the memo transfer: 2.5 TEST = 250000, decrypted by the receiver
    assert seen["transfer"]["amount"] == {"amount": 250000, "asset_id": CORE}
    assert seen["memo"] == "for the bot"
    # init0's ask: 10 GOLD (10000) for 20 TEST (2000000); init1's bid for 4
    # GOLD at 2 is filled at once (btsdex gets no order object back)
    assert seen["ask"]["for_sale"] == 10000 and seen["ask"]["seller"] == init0
    assert seen["ask"]["sell_price"] == {"base": {"amount": 10000, "asset_id": gold},
                                         "quote": {"amount": 2000000, "asset_id": CORE}}
    assert seen["bid"] is None
    [rest] = seen["orders"]
    assert rest["id"] == seen["ask"]["id"] and rest["for_sale"] == 6000
    # btsdex's getOrderBook(quote, base) calls get_order_book(GOLD, TEST):
    # GOLD is the reference's base, so an order selling it is a bid
    # (database_api.cpp get_order_book), priced in base per quote
    # (app/util.cpp price_to_string): 10 GOLD / 20 TEST = 0.5
    [bid] = seen["book"]["bids"]
    assert float(bid["price"]) == 0.5 and float(bid["base"]) == 6 and float(bid["quote"]) == 12
    assert seen["book"]["asks"] == []
    assert [o["for_sale"] for o in seen["limit_orders"]] == [6000]
    assert float(seen["ticker"]["latest"]) == 2
    # 100 GOLD issued, 10 of them in the order
    assert {b["symbol"]: b["amount"] for b in seen["balances_before_cancel"]}["GOLD"] == 90000
    assert seen["orders_after_cancel"] == []
    # init1: +2.5 TEST, -8 TEST for 4 GOLD, - the order's fee
    order_fee = chain.required_fee([1, {
        "fee": {"amount": 0, "asset_id": CORE}, "seller": init1,
        "amount_to_sell": {"amount": 800000, "asset_id": CORE},
        "min_to_receive": {"amount": 4000, "asset_id": gold},
        "expiration": "2030-01-01T00:00:00", "fill_or_kill": False, "extensions": []}])
    # amounts above 2^32 - 1 come as strings (fc's JSON writer)
    assert {b["symbol"]: int(b["amount"]) for b in seen["balances"]} == {
        "TEST": core_before + 250000 - 800000 - order_fee["amount"], "GOLD": 4000}
    assert state.balance(init1, gold) == 4000
    # the cancel gave init0 its 6 GOLD back: 100 issued - 4 sold
    assert state.balance(init0, gold) == 96000
    assert seen["block"]["id"] == "2.1.0" and seen["block"]["head_block_number"] >= 1
