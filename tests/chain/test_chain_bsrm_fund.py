"""Black swan response method individual settlement to fund (2) of BSIP
2467 (``black_swan_response_method`` of a bitasset's options), the rules
for changing the method and the ``disable_bsrm_update`` permission.

Every amount is computed by hand in the comments from bitshares-core's
rules: db_market.cpp (``check_for_blackswan``, ``individually_settle``,
``check_call_orders``), db_update.cpp (``get_derived_current_feed_price``,
``update_bitasset_current_feed``), asset_evaluator.cpp
(``pay_settle_from_individual_pool``, ``asset_settle_evaluator``,
``asset_update_bitasset_evaluator``, ``asset_update_evaluator``).  USD has
precision 4, TEST (core) 5; prices are DEBT / COLLATERAL in satoshis."""

import pytest

from nodeapi.chain.errors import InvalidOperation

from nodeapi.protocol.flags import DISABLE_BSRM_UPDATE, GLOBAL_SETTLE

from kit.chain import CORE, amt, asset_options, produce
from kit.chain import push_wire as push
from kit.smartcoin import (
    INIT0, INIT1, bitasset, bitasset_opts, borrow, create_usd, dyn, fee_of, price, publish,
    settle, update_bsrm)


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
        "is_prediction_market": False, "extensions": []}])
    push(chain, [13, {"issuer": INIT0, "asset_to_update": usd, "new_feed_producers": [INIT0],
                      "extensions": []}])
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
        "common_options": asset_options(), "is_prediction_market": False, "extensions": []}])
    with pytest.raises(InvalidOperation, match="Unable to set non-UIA issuer permission bits "
                                               "on UIA"):
        _update_perms(chain, uia, DISABLE_BSRM_UPDATE)
    [[_t, pred]] = push(chain, [10, {
        "issuer": INIT0, "symbol": "PREDX", "precision": 5,
        "common_options": asset_options(perms=GLOBAL_SETTLE),
        "bitasset_opts": bitasset_opts(), "is_prediction_market": True, "extensions": []}])
    with pytest.raises(InvalidOperation, match="Unable to set disable_bsrm_update issuer "
                                               "permission bit on PM"):
        _update_perms(chain, pred, GLOBAL_SETTLE | DISABLE_BSRM_UPDATE)
    with pytest.raises(InvalidOperation, match="global_settle permission should be enabled"):
        _update_perms(chain, pred, 0)


def test_settle_too_small_for_the_pool_loses_nothing(chain):
    """pay_settle_from_individual_pool: an amount whose share of the fund
    rounds down to 0 is refused, and nothing changes."""
    state = chain.state
    usd = create_usd(chain, "USDS", black_swan_response_method=2)
    publish(chain, usd, 4, 1)  # 0.25 TEST sat per USD sat
    borrow(chain, INIT1, 2000, 1000, usd)
    borrow(chain, INIT0, 500, 1000, usd)
    # a feed of 0.5 TEST per USD: MSSP asks 0.55, init0 holds 0.5: settled
    # individually; without MCFR the pool takes all 500 TEST for 1,000 USD
    publish(chain, usd, 2, 1)
    b = bitasset(chain, usd)
    assert (b["individual_settlement_debt"], b["individual_settlement_fund"]) == (1000, 500)
    # 1 USD: floor(1 * 500/1000) = 0 TEST
    before = (state.balance(INIT0, usd), state.balance(INIT0, CORE),
              dyn(chain, usd)["current_supply"])
    with pytest.raises(InvalidOperation, match="Settle amount is too small to receive anything"):
        settle(chain, INIT0, 1, usd)
    assert (state.balance(INIT0, usd), state.balance(INIT0, CORE),
            dyn(chain, usd)["current_supply"]) == before
    b = bitasset(chain, usd)
    assert (b["individual_settlement_debt"], b["individual_settlement_fund"]) == (1000, 500)
    # 3 USD: floor(3 * 500/1000) = 1 TEST, paying ceil(1 * 1000/500) = 2 USD
    assert settle(chain, INIT0, 3, usd) == {"paid": [amt(2, usd)], "received": [amt(1)],
                                            "fees": [amt(0)]}
