"""Black swan response methods no settlement (1) and individual
settlement to order (3) of BSIP 2467.

Every amount is computed by hand in the comments from bitshares-core's
rules: db_market.cpp (``check_for_blackswan``, ``individually_settle``,
``apply_order``, ``match_limit_settled_debt``, ``match_settled_debt_limit``,
``check_settled_debt_order``, ``globally_settle_asset``), db_update.cpp
(``get_derived_current_feed_price``, ``update_settled_debt_order``),
market_evaluator.cpp (``call_order_update_evaluator`` under no
settlement), asset_evaluator.cpp (``asset_update_bitasset_evaluator``).
USD has precision 4, TEST (core) 5; prices are DEBT / COLLATERAL in
satoshis."""

import pytest

from nodeapi.chain.errors import InvalidOperation

from kit.chain import CORE, amt, jump, produce
from kit.chain import push_wire as push
from kit.smartcoin import (
    INIT0, INIT1, bitasset, borrow, create_usd, dyn, fee_of, price, publish, update_bsrm)


@pytest.fixture
def chain(funded_pair):
    return funded_pair


@pytest.fixture
def usd1(chain):
    """USD with MCFR 5 %, no settlement; init1 borrows at 500 TEST per USD,
    init0 at 200."""
    usd = create_usd(chain, margin_call_fee_ratio=50, black_swan_response_method=1)
    borrow(chain, INIT1, 500000, 1000, usd)
    borrow(chain, INIT0, 200000, 1000, usd)
    return usd


def test_no_settlement_caps_the_feed(chain, usd1):
    usd, state = usd1, chain.state
    [call0] = [c for c in state.calls_by_asset[usd] if state.objects[c]["borrower"] == INIT0]
    # -- the feed rises to 250 TEST per USD.  Under global settlement init0
    # (1000/200000 = 1/200 USD per TEST, above MSSP 1/275) would swan; under
    # no settlement the current feed is capped
    # (get_derived_current_feed_price): at least ~CR * MSSR =
    # 1000/200000 * 1100/1000 = 11/2000, above the median's 1/250.  The
    # current MSSP is then 11/2000 * 1000/1100 = 1/200, which init0's 1/200
    # is not above: no black swan, no settlement at all.
    publish(chain, usd, 1, 250)
    b = bitasset(chain, usd)
    assert b["median_feed"]["settlement_price"] == price(1, 250, usd)
    assert b["current_feed"]["settlement_price"] == price(11, 2000, usd)
    assert b["settlement_price"]["base"]["amount"] == 0 and b["individual_settlement_debt"] == 0
    assert state.objects[call0]["debt"] == 1000

    # -- init1 sells 500 USD for 90,000 TEST.  MCOP = 11/2000 * 1000/1050 =
    # 11/2100: the order (180 TEST per USD) is below 2100/11, so it takes
    # init0 (margin-called: 200 < 250 * 1.75) at 2100/11 TEST per USD
    # (apply_order, match(limit, call)): the order receives
    # floor(500 * 2100/11) = 95,454 TEST, the call receives
    # ceil(95454 * 11/2100) = 500 USD and pays at MSSP (200 TEST per USD)
    # 100,000 TEST; the margin call fee is 4,546 TEST.  init0 keeps 200 TEST
    # per USD, so the cap does not move.
    core1 = state.balance(INIT1, CORE)
    push(chain, [1, {"seller": INIT1, "amount_to_sell": amt(500, usd),
                     "min_to_receive": amt(90000), "fill_or_kill": False,
                     "expiration": "2030-01-01T00:00:00", "extensions": {}}])
    call = state.objects[call0]
    assert (call["debt"], call["collateral"]) == (500, 100000)
    assert state.balance(INIT1, CORE) - core1 == 95454 - fee_of(chain, 1)
    assert dyn(chain, usd)["accumulated_collateral_fees"] == 4546
    assert bitasset(chain, usd)["current_feed"]["settlement_price"] == price(11, 2000, usd)

    # -- init0 closes its position: the least collateralized is now init1
    # (500 TEST per USD), whose 1000/500000 * 1100/1000 = 11/5000 is below
    # the median: the current feed is the median again
    # (call_order_update_evaluator, closing)
    push(chain, [3, {"funding_account": INIT0, "delta_collateral": amt(-100000),
                     "delta_debt": amt(-500, usd), "extensions": {}}])
    assert call0 not in state.objects
    assert bitasset(chain, usd)["current_feed"]["settlement_price"] == price(1, 250, usd)


def test_leaving_no_settlement_settles_globally(chain, usd1):
    """asset_update_bitasset_evaluator: leaving no settlement recomputes the
    current feed (update_feeds_due_to_bsrm_change); uncapped, the feed
    swans init0 and the asset is settled globally."""
    usd = usd1
    publish(chain, usd, 1, 250)
    assert bitasset(chain, usd)["current_feed"]["settlement_price"] == price(11, 2000, usd)
    update_bsrm(chain, usd, 0)
    # globally_settle_asset at init0's 1000/200000 with margin calls: init0
    # (CR 200 <= 437.5) pays 200,000 TEST, the fund receives at
    # 1/200 * 1100/1000 = 11/2000: ceil(1000 * 2000/11) = 181,819 (fee
    # 18,181); init1 (500 > 437.5) pays at the fund's price, 181,819.
    b = bitasset(chain, usd)
    assert b["current_feed"]["settlement_price"] == price(1, 250, usd)
    assert b["settlement_fund"] == 363638
    assert b["settlement_price"] == {"base": amt(2000, usd), "quote": amt(363638)}
    assert dyn(chain, usd)["accumulated_collateral_fees"] == 18181


def test_individual_settlement_to_order(chain):
    state = chain.state
    usd = create_usd(chain, margin_call_fee_ratio=50, black_swan_response_method=3)
    borrow(chain, INIT1, 500000, 1000, usd)
    borrow(chain, INIT0, 200000, 1000, usd)
    # -- the feed rises to 250 TEST per USD: init0 (1/200 above MSSP 1/275)
    # is settled individually as under method 2: the pool takes 190,910 TEST
    # for its 1,000 USD (fee 9,090), and a settled-debt order of the null
    # account sells those 190,910 TEST for 1,000 USD (individually_settle)
    publish(chain, usd, 1, 250)
    b = bitasset(chain, usd)
    assert (b["individual_settlement_debt"], b["individual_settlement_fund"]) == (1000, 190910)
    [order] = [o for o in state.book(CORE, usd)]
    assert order["is_settled_debt"] is True and order["seller"] == "1.2.3"
    assert order["expiration"] == 0xFFFFFFFF  # fc time_point_sec::maximum()
    assert (order["for_sale"], order["sell_price"]) == (
        190910, {"base": amt(190910), "quote": amt(1000, usd)})
    # method 3 does not cap the feed
    assert b["current_feed"]["settlement_price"] == price(1, 250, usd)
    with pytest.raises(InvalidOperation, match="there exists an individual settlement order"):
        update_bsrm(chain, usd, 2)

    # -- a feed of 150 TEST per USD re-prices the order at MCOP
    # (update_settled_debt_order): ~MCOP = 150 * 1050/1000 = 315/2 TEST per
    # USD; the pool's debt at it is ceil(1000 * 315/2) = 157,500 TEST, within
    # the fund: the order sells 157,500 TEST at 315/2
    publish(chain, usd, 1, 150)
    order = state.objects[order["id"]]
    assert (order["for_sale"], order["sell_price"]) == (
        157500, {"base": amt(315), "quote": amt(2, usd)})

    # -- init1 sells 400 USD for at least 60,000 TEST: it takes the order at
    # 315/2 (match_limit_settled_debt): it receives 400 * 315/2 = 63,000 TEST
    # for ceil(63000 * 2/315) = 400 USD; the order does not sell the whole
    # fund, so the pool pays at its own price floor(400 * 190910/1000) =
    # 76,364 TEST, the 13,364 over 63,000 being a collateral fee; the 400 USD
    # leave the supply; the order now sells ceil(600 * 315/2) = 94,500
    core1 = state.balance(INIT1, CORE)
    applied = []
    chain.add_consumer(type("C", (), {"block_applied": lambda self, b: applied.append(b)})())
    push(chain, [1, {"seller": INIT1, "amount_to_sell": amt(400, usd),
                     "min_to_receive": amt(60000), "fill_or_kill": True,
                     "expiration": "2030-01-01T00:00:00", "extensions": {}}])
    assert state.balance(INIT1, CORE) - core1 == 63000 - fee_of(chain, 1)
    b = bitasset(chain, usd)
    assert (b["individual_settlement_debt"], b["individual_settlement_fund"]) == (600, 114546)
    assert dyn(chain, usd)["current_supply"] == 1600
    assert dyn(chain, usd)["accumulated_collateral_fees"] == 9090 + 13364
    assert state.objects[order["id"]]["for_sale"] == 94500
    produce(chain)
    fills = [o.op[1] for o in applied[-1].operations if o.is_virtual and o.op[0] == 4]
    assert [(f["order_id"], f["account_id"], f["pays"], f["receives"], f["fee"], f["is_maker"])
            for f in fills if f["order_id"] == order["id"]] == [
        (order["id"], "1.2.3", amt(76364), amt(400, usd), amt(13364), True)]

    # -- init0 offers 100 USD at 160 TEST per USD: above the order's 157.5,
    # it rests.  A feed of 160 TEST per USD moves the order to 168 TEST per
    # USD (ceil(600 * 168) = 100,800 TEST, within the fund) and margin
    # calls are checked: the order takes init0's (check_settled_debt_order,
    # match_settled_debt_limit at init0's price): init0 receives 16,000 TEST
    # for 100 USD; the pool pays floor(100 * 114546/600) = 19,091 (fee 3,091)
    [[_t, offer]] = push(chain, [1, {"seller": INIT0, "amount_to_sell": amt(100, usd),
                                     "min_to_receive": amt(16000), "fill_or_kill": False,
                                     "expiration": "2030-01-01T00:00:00", "extensions": {}}])
    assert offer in state.objects
    publish(chain, usd, 1, 160)
    assert offer not in state.objects
    b = bitasset(chain, usd)
    assert (b["individual_settlement_debt"], b["individual_settlement_fund"]) == (500, 95455)
    assert dyn(chain, usd)["current_supply"] == 1500
    assert dyn(chain, usd)["accumulated_collateral_fees"] == 9090 + 13364 + 3091
    order = state.objects[order["id"]]
    assert (order["for_sale"], order["sell_price"]) == (
        84000, {"base": amt(168), "quote": amt(1, usd)})

    # -- the issuer settles globally at 200 TEST per USD: init1 pays
    # 1000 * 200 = 200,000 TEST; the pool's 95,455 join the fund, the order
    # is removed and the method is reset (globally_settle_asset)
    push(chain, [18, {"issuer": INIT0, "asset_to_settle": usd,
                      "settle_price": price(1, 200, usd), "extensions": []}])
    b = bitasset(chain, usd)
    assert order["id"] not in state.objects
    assert b["settlement_fund"] == 295455
    assert b["settlement_price"] == {"base": amt(1500, usd), "quote": amt(295455)}
    assert (b["individual_settlement_debt"], b["individual_settlement_fund"]) == (0, 0)
    assert "black_swan_response_method" not in b["options"]["extensions"]


def test_no_settlement_force_settlement_takes_the_margin_call(chain, usd1):
    """apply_force_settlement under a capped feed: the new force
    settlement takes init0 (margin-called) at the capped MCOP, the
    position paying at the capped MSSP (match_impl of a settle and a
    call order); the feed is re-capped after the match."""
    usd, state = usd1, chain.state
    [call0] = [c for c in state.calls_by_asset[usd] if state.objects[c]["borrower"] == INIT0]
    publish(chain, usd, 1, 250)  # current feed capped at 11/2000, as above
    # 100 USD: the settlement receives floor(100 * 2100/11) = 19,090 TEST
    # (at MCOP 11/2100) for ceil(19090 * 11/2100) = 100 USD; init0 pays at
    # MSSP 1/200: 20,000 TEST, the 910 over being the margin call fee; no
    # force settlement fee on a margin call.  init0 keeps 180,000 / 900 =
    # 200 TEST per USD, so the cap stays.
    core1 = state.balance(INIT1, CORE)
    [[_t, result]] = push(chain, [17, {"account": INIT1, "amount": amt(100, usd),
                                        "extensions": []}])
    [settle_id] = result["new_objects"]
    assert settle_id not in state.objects
    assert state.balance(INIT1, CORE) - core1 == 19090 - fee_of(chain, 17)
    call = state.objects[call0]
    assert (call["debt"], call["collateral"]) == (900, 180000)
    assert dyn(chain, usd)["accumulated_collateral_fees"] == 910
    assert dyn(chain, usd)["current_supply"] == 1900
    assert bitasset(chain, usd)["current_feed"]["settlement_price"] == price(11, 2000, usd)


def test_no_settlement_prices_due_settlements_once_per_block(chain):
    """db_update.cpp clear_expired_force_settlements: settlement_price and
    settlement_fill_price are computed once per asset ("only calculate once
    per asset"), so two settlements due in one block fill at the same price
    though the first one's match re-caps the current feed under no
    settlement (match_impl -> update_bitasset_current_feed)."""
    usd, state = create_usd(chain, "NSUSD", black_swan_response_method=1), chain.state
    # MCR 1.05 below MSSR 1.5: a capped position is not margin called
    publish(chain, usd, 1, 100, mcr=1050, mssr=1500)
    call = borrow(chain, INIT1, 200000, 1000, usd)
    push(chain, [0, {"from": INIT1, "to": INIT0, "amount": amt(100, usd), "extensions": []}])
    settles = []
    for who in (INIT0, INIT1):
        [[_t, result]] = push(chain, [17, {"account": who, "amount": amt(100, usd),
                                           "extensions": []}])
        settles.append(result["new_objects"][0])
    # -- the feed falls to 180 TEST per USD.  The position (200 TEST per USD)
    # is below MSSR there, so the current feed is capped at ~CR * MSSR =
    # 1000/200000 * 1500/1000 = 3/400 (133.3 TEST per USD): the position is
    # at MSSR, above MCR, not margin called
    publish(chain, usd, 1, 180, mcr=1050, mssr=1500)
    assert bitasset(chain, usd)["current_feed"]["settlement_price"] == price(3, 400, usd)
    produce(chain)
    core0, core1 = state.balance(INIT0, CORE), state.balance(INIT1, CORE)
    jump(chain, 3601)
    # -- both are due in one block; the price is 3/400 less the 1 % offset:
    # 3/400 * 10000/9900 = 1/132.  The first (init0's 100 USD) is paid
    # 100 * 132 = 13,200 TEST; the position is left 900 / 186,800 and the
    # current feed re-capped at 900/186800 * 1.5 = 27/3736.  The second is
    # paid at the same 1/132: 13,200 TEST (re-priced from the re-capped feed
    # it would have been floor(100 * 3736/27 * 0.99) = 13,698)
    assert all(s not in state.objects for s in settles)
    assert state.balance(INIT0, CORE) - core0 == 13200
    assert state.balance(INIT1, CORE) - core1 == 13200
    c = state.objects[call]
    assert (c["debt"], c["collateral"]) == (800, 200000 - 2 * 13200)
    b = bitasset(chain, usd)
    assert b["force_settled_volume"] == 200
    # the feed re-capped after the second: 800/173600 * 1.5 = 3/434
    assert b["current_feed"]["settlement_price"] == price(3, 434, usd)
