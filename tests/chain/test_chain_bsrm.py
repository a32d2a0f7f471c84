"""Black swan response methods (BSIP 2467, ``black_swan_response_method``
of a bitasset's options): no settlement (1), individual settlement to
fund (2) and individual settlement to order (3).

Every amount is computed by hand in the comments from bitshares-core's
rules: db_market.cpp (``check_for_blackswan``, ``individually_settle``,
``check_call_orders``, ``match_limit_settled_debt``,
``match_settled_debt_limit``, ``check_settled_debt_order``,
``globally_settle_asset``), db_update.cpp (``get_derived_current_feed_price``,
``update_bitasset_current_feed``), asset_evaluator.cpp
(``pay_settle_from_individual_pool``, ``asset_settle_evaluator``,
``asset_update_bitasset_evaluator`` for a changed method), market_evaluator.cpp
(``call_order_update_evaluator`` under no settlement).  USD has
precision 4, TEST (core) 5; prices are DEBT / COLLATERAL in satoshis."""

import pytest

from nodeapi.chain.errors import InvalidOperation

from kit.chain import CORE, amt, asset_options, produce
from kit.chain import push_wire as push

INIT0, INIT1 = "1.2.6", "1.2.7"
GLOBAL_SETTLE, DISABLE_BSRM_UPDATE = 0x20, 0x4000


def price(usd, core, usd_id):
    return {"base": amt(usd, usd_id), "quote": amt(core, CORE)}


def feed(usd_id, usd, core, mcr=1750, mssr=1100):
    return {"settlement_price": price(usd, core, usd_id), "maintenance_collateral_ratio": mcr,
            "maximum_short_squeeze_ratio": mssr,
            "core_exchange_rate": price(usd, core, usd_id)}


def bitasset_opts(**ext):
    return {"feed_lifetime_sec": 864000, "minimum_feeds": 1,
            "force_settlement_delay_sec": 3600, "force_settlement_offset_percent": 100,
            "maximum_force_settlement_volume": 2000, "short_backing_asset": CORE,
            "extensions": ext}


def create_usd(chain, symbol="USD", perms=GLOBAL_SETTLE, **ext):
    [[_t, usd]] = push(chain, [10, {
        "issuer": INIT0, "symbol": symbol, "precision": 4,
        "common_options": asset_options(perms=perms),
        "bitasset_opts": bitasset_opts(**ext), "is_prediction_market": False,
        "extensions": {}}])
    push(chain, [13, {"issuer": INIT0, "asset_to_update": usd, "new_feed_producers": [INIT0],
                      "extensions": {}}])
    publish(chain, usd, 1, 100)  # 1 USD sat = 100 TEST sat
    return usd


def update_bsrm(chain, usd, method):
    ext = {"margin_call_fee_ratio": 50}
    if method is not None:
        ext["black_swan_response_method"] = method
    push(chain, [12, {"issuer": INIT0, "asset_to_update": usd,
                      "new_options": bitasset_opts(**ext), "extensions": {}}])


def publish(chain, usd, usd_amount, core_amount, **kw):
    push(chain, [19, {"publisher": INIT0, "asset_id": usd,
                      "feed": feed(usd, usd_amount, core_amount, **kw), "extensions": {}}])


def borrow(chain, account, collateral, debt, usd):
    return push(chain, [3, {"funding_account": account, "delta_collateral": amt(collateral),
                            "delta_debt": amt(debt, usd), "extensions": {}}])[0][1]


def settle(chain, account, amount, usd):
    [[tag, result]] = push(chain, [17, {"account": account, "amount": amt(amount, usd),
                                        "extensions": []}])
    assert tag == 5
    return result


def fee_of(chain, op_type):
    """The flat fee of an operation type (its ``fee`` parameter)."""
    for t, params in chain.state.objects["2.0.0"]["parameters"]["current_fees"]["parameters"]:
        if t == op_type:
            return params["fee"]
    raise KeyError(op_type)


def bitasset(chain, usd):
    return chain.state.objects[chain.state.objects[usd]["bitasset_data_id"]]


def dyn(chain, usd):
    return chain.state.objects[chain.state.objects[usd]["dynamic_asset_data_id"]]


@pytest.fixture
def chain(funded_pair):
    return funded_pair


@pytest.fixture
def usd2(chain):
    """USD with MCFR 5 %, individual settlement to fund; init1 borrows at
    500 TEST per USD, init0 at 200."""
    usd = create_usd(chain, margin_call_fee_ratio=50, black_swan_response_method=2)
    borrow(chain, INIT1, 500000, 1000, usd)
    borrow(chain, INIT0, 200000, 1000, usd)
    return usd


def test_individual_settlement_to_fund(chain, usd2):
    usd, state = usd2, chain.state
    [call0] = [c for c in state.calls_by_asset[usd] if state.objects[c]["borrower"] == INIT0]
    # -- the feed rises to 250 TEST per USD: the median's MSSP is
    # 1/250 * 1000/1100 = 1/275 (check_for_blackswan takes the median's
    # under method 2).  init0 owes 1000/200000 = 1/200 > 1/275: it is settled
    # on its own (individually_settle).  MCPR = (1100-50)/1100; the fund
    # receives at ~CR / MCPR = 1000/200000 * 1100/1050 = 11/2100, i.e.
    # ceil(1000 * 2100/11) = 190,910 TEST; the other 9,090 TEST are the
    # margin call fee.  init1 (500 per USD) is above MSSP and above the
    # maintenance collateralization (250 * 1.75 = 437.5): untouched.
    publish(chain, usd, 1, 250)
    b = bitasset(chain, usd)
    assert call0 not in state.objects
    assert (b["individual_settlement_debt"], b["individual_settlement_fund"]) == (1000, 190910)
    assert b["settlement_fund"] == 0 and b["settlement_price"]["base"]["amount"] == 0
    assert dyn(chain, usd)["current_supply"] == 2000  # the settled debt stays in the supply
    assert dyn(chain, usd)["accumulated_collateral_fees"] == 9090
    assert state.balance(INIT0, usd) == 1000
    # the current feed is capped (get_derived_current_feed_price): at least
    # the pool's price times MCOR, 1000/190910 * 1050/1000 = 105/19091, above
    # the median's 1/250
    assert b["median_feed"]["settlement_price"] == price(1, 250, usd)
    assert b["current_feed"]["settlement_price"] == price(105, 19091, usd)
    # -- the method cannot change while the pool holds debt
    with pytest.raises(InvalidOperation, match="individual settlement pool .for force-settlements. "
                                               "is not empty"):
        update_bsrm(chain, usd, 0)

    # -- init0 settles 300 USD against the pool: floor(300 * 190910/1000) =
    # 57,273 TEST, paying ceil(57273 * 1000/190910) = 300 USD.  MCOP of the
    # capped feed, 105/19091 * 1000/1050 = 100/19091, asks
    # ceil(300 * 19091/100) = 57,273: no collateral fee.
    core0 = state.balance(INIT0, CORE)
    result = settle(chain, INIT0, 300, usd)
    assert result == {"paid": [amt(300, usd)], "received": [amt(57273)], "fees": [amt(0)]}
    b = bitasset(chain, usd)
    assert (b["individual_settlement_debt"], b["individual_settlement_fund"]) == (700, 133637)
    assert dyn(chain, usd)["current_supply"] == 1700
    fee17 = fee_of(chain, 17)
    assert state.balance(INIT0, CORE) - core0 == 57273 - fee17
    # the pool's price is unchanged: 700/133637 * 1050/1000 = 105/19091
    assert b["current_feed"]["settlement_price"] == price(105, 19091, usd)

    # -- init1 settles 1,000 USD: at least the pool's 700, so it takes the
    # whole pool (133,637 TEST for 700 USD); the pool is empty and force
    # settlement is enabled, so the other 300 USD wait as a force settlement
    core1 = state.balance(INIT1, CORE)
    result = settle(chain, INIT1, 1000, usd)
    [settle_id] = result.pop("new_objects")
    assert result == {"paid": [amt(700, usd)], "received": [amt(133637)], "fees": [amt(0)]}
    assert state.objects[settle_id]["balance"] == amt(300, usd)
    assert state.balance(INIT1, usd) == 0
    assert state.balance(INIT1, CORE) - core1 == 133637 - fee17
    b = bitasset(chain, usd)
    assert (b["individual_settlement_debt"], b["individual_settlement_fund"]) == (0, 0)
    assert dyn(chain, usd)["current_supply"] == 1000
    # an empty pool caps nothing: the current feed is the median again
    assert b["current_feed"]["settlement_price"] == price(1, 250, usd)
    # -- with the pool empty the method may change
    update_bsrm(chain, usd, 0)
    assert bitasset(chain, usd)["options"]["extensions"]["black_swan_response_method"] == 0


def test_individual_settlement_virtual_fill(chain, usd2):
    """The closed position's virtual fill_order: pays all its collateral,
    receives its debt, the margin call fee in collateral, at the fund
    receives price 11/2100, as maker (individually_settle's
    fill_call_order)."""
    usd, state = usd2, chain.state
    [call0] = [c for c in state.calls_by_asset[usd] if state.objects[c]["borrower"] == INIT0]
    applied = []
    chain.add_consumer(type("C", (), {"block_applied": lambda self, b: applied.append(b)})())
    publish(chain, usd, 1, 250)
    produce(chain)
    fills = [o.op for o in applied[-1].operations if o.is_virtual and o.op[0] == 4]
    assert fills == [[4, {"fee": amt(9090), "order_id": call0, "account_id": INIT0,
                          "pays": amt(200000), "receives": amt(1000, usd),
                          "fill_price": price(11, 2100, usd), "is_maker": True}]]


def test_settle_without_force_settle_only_from_the_pool(chain):
    """asset_settle_evaluator: with force settlement disabled a holder may
    settle only while the pool holds debt, and gets no force settlement
    for the rest."""
    DISABLE_FORCE_SETTLE = 0x10
    [[_t, usd]] = push(chain, [10, {
        "issuer": INIT0, "symbol": "USDX", "precision": 4,
        "common_options": asset_options(perms=GLOBAL_SETTLE | DISABLE_FORCE_SETTLE,
                                        flags=DISABLE_FORCE_SETTLE),
        "bitasset_opts": bitasset_opts(black_swan_response_method=2),
        "is_prediction_market": False, "extensions": {}}])
    push(chain, [13, {"issuer": INIT0, "asset_to_update": usd, "new_feed_producers": [INIT0],
                      "extensions": {}}])
    publish(chain, usd, 1, 100)
    borrow(chain, INIT1, 500000, 1000, usd)
    borrow(chain, INIT0, 160000, 800, usd)
    with pytest.raises(InvalidOperation, match="force_settle flag enabled"):
        settle(chain, INIT0, 100, usd)
    # without MCFR, MCPR is 1: the pool receives all of init0's collateral,
    # 160,000 TEST for 800 USD; the feed is capped at
    # 800/160000 * 1100/1000 = 11/2000
    publish(chain, usd, 1, 250)
    b = bitasset(chain, usd)
    assert (b["individual_settlement_debt"], b["individual_settlement_fund"]) == (800, 160000)
    assert b["current_feed"]["settlement_price"] == price(11, 2000, usd)
    # init1 settles 1,000 USD: the pool's 800 USD take its 160,000 TEST
    # (MCOP 11/2000 * 1000/1100 = 1/200 asks ceil(800 * 200) = 160,000: no
    # collateral fee); the other 200 USD stay with init1, no force settlement
    result = settle(chain, INIT1, 1000, usd)
    assert result == {"paid": [amt(800, usd)], "received": [amt(160000)], "fees": [amt(0)]}
    assert chain.state.balance(INIT1, usd) == 200
    assert not chain.state.settles_by_asset.get(usd)
    with pytest.raises(InvalidOperation, match="force_settle flag enabled"):
        settle(chain, INIT0, 100, usd)


def test_bsrm_update_needs_the_permission(chain):
    usd = create_usd(chain, "USDP", perms=GLOBAL_SETTLE | DISABLE_BSRM_UPDATE,
                     margin_call_fee_ratio=50)
    with pytest.raises(InvalidOperation, match="No permission to update BSRM"):
        update_bsrm(chain, usd, 2)
    update_bsrm(chain, usd, 0)  # the default, unchanged: allowed


def test_bsrm_must_be_below_4(chain):
    with pytest.raises(Exception, match="black_swan_response_method should be less than 4"):
        create_usd(chain, "BSRM", black_swan_response_method=4)


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
    assert order["expiration"] == "2106-02-07T06:28:15"
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
    assert (order["for_sale"], order["sell_price"]) == (84000, {"base": amt(168), "quote": amt(1, usd)})

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


def _update_perms(chain, asset_id, perms):
    push(chain, [11, {"issuer": INIT0, "asset_to_update": asset_id,
                      "new_options": asset_options(cer_quote=asset_id, perms=perms),
                      "extensions": {}}])


def test_disable_bsrm_update_permission(chain, usd2):
    """asset_update_evaluator (core-2467, get_enabled_issuer_permissions_mask):
    with supply, setting ``disable_bsrm_update`` gives the right up and is
    allowed; clearing it again reinstates it and is refused.  The bit is
    refused on a user-issued asset and on a prediction market."""
    usd = usd2
    _update_perms(chain, usd, GLOBAL_SETTLE | DISABLE_BSRM_UPDATE)
    with pytest.raises(InvalidOperation, match="No permission to update BSRM"):
        update_bsrm(chain, usd, 0)
    with pytest.raises(InvalidOperation, match="Cannot reinstate previously revoked issuer "
                                               "permissions on an asset if current supply"):
        _update_perms(chain, usd, GLOBAL_SETTLE)
    [[_t, uia]] = push(chain, [10, {
        "issuer": INIT0, "symbol": "UIAX", "precision": 4,
        "common_options": asset_options(), "is_prediction_market": False, "extensions": {}}])
    with pytest.raises(InvalidOperation, match="Unable to set non-UIA issuer permission bits "
                                               "on UIA"):
        _update_perms(chain, uia, DISABLE_BSRM_UPDATE)
    [[_t, pred]] = push(chain, [10, {
        "issuer": INIT0, "symbol": "PREDX", "precision": 5,
        "common_options": asset_options(perms=GLOBAL_SETTLE),
        "bitasset_opts": bitasset_opts(), "is_prediction_market": True, "extensions": {}}])
    with pytest.raises(InvalidOperation, match="Unable to set disable_bsrm_update issuer "
                                               "permission bit on PM"):
        _update_perms(chain, pred, GLOBAL_SETTLE | DISABLE_BSRM_UPDATE)
    with pytest.raises(InvalidOperation, match="global_settle permission should be enabled"):
        _update_perms(chain, pred, 0)
