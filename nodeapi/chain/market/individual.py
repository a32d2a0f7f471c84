"""Individual settlement (BSIP 2467 ``black_swan_response_method`` 2 and
3): an undercollateralized debt position is closed on its own, its debt
and collateral joining the asset's individual settlement pool
(``individual_settlement_debt``, ``individual_settlement_fund`` of the
2.4.N) instead of settling the whole asset.

The pool receives the position's collateral at its own collateral ratio
divided by the margin call pays ratio; the rest of the collateral is the
margin call fee (``accumulated_collateral_fees``).  The debt stays in the
supply: holders settle it against the pool (method 2, asset_settle) or buy
the pool's collateral through the settled-debt limit order (method 3),
which sells the pool at the margin call order price (core-2591) and takes
limit orders selling the debt asset at or above it.

Reference: bitshares-core libraries/chain/db_market.cpp
(``individually_settle``, ``match_limit_settled_debt``,
``match_settled_debt_limit``, ``check_settled_debt_order``),
asset_object.hpp (``individual_settlement_debt``,
``individual_settlement_fund``, ``get_individual_settlement_price``).
"""

from nodeapi.chain.balances import adjust_supply
from nodeapi.chain.evaluators.context import ApplyContext
from nodeapi.chain.market.bitasset_data import (
    INDIVIDUAL_SETTLEMENT_TO_FUND, INDIVIDUAL_SETTLEMENT_TO_ORDER, backing_asset, bitasset_of,
    bsrm, find_settled_debt_order, individual_settlement_price, mcpr, settled_debt_order_terms,
    update_bitasset_current_feed)
from nodeapi.chain.market.limits import accumulate_fee, fill_limit_order, record_fill
from nodeapi.chain.market.positions import collateralization, fill_call_order
from nodeapi.protocol.asset import core, divide_ratio, invert, make_price, mul_down, mul_up, value
from nodeapi.protocol.config import MAX_TIME, NULL_ACCOUNT


def individually_settle(ctx: ApplyContext, mia_id: str, call: dict) -> None:
    """graphene ``individually_settle``: close ``call`` (a 1.8.N of
    ``mia_id``) into the pool.  The pool receives
    ``ceil(debt * collateral/debt / MCPR)`` (at most the collateral) at the
    fund receives price ``~collateralization / MCPR`` (DEBT per
    COLLATERAL); the position pays all its collateral, the difference being
    the margin call fee; the supply is unchanged.  Under method 2 the
    current feed is re-capped by the pool's price; under method 3 the
    settled-debt order (a 1.7.N of the null account, never expiring, not
    counted in ``total_core_in_orders``) is created selling the received
    collateral for the debt, or re-priced
    (:func:`~nodeapi.chain.market.bitasset_data.settled_debt_order_terms`)."""
    state = ctx.state
    b = bitasset_of(state, mia_id)
    debt, collateral = int(call["debt"]), int(call["collateral"])
    fund_receives_price = divide_ratio(invert(collateralization(call)), *mcpr(b))
    fund_receives = min(mul_up(debt, mia_id, fund_receives_price), collateral)
    nb = state.modify(b["id"])
    nb["individual_settlement_debt"] = int(nb["individual_settlement_debt"]) + debt
    nb["individual_settlement_fund"] = int(nb["individual_settlement_fund"]) + fund_receives
    if bsrm(nb) == INDIVIDUAL_SETTLEMENT_TO_ORDER:
        order = find_settled_debt_order(state, mia_id)
        if order is not None:
            order = state.modify(order["id"])
            order["for_sale"], order["sell_price"] = settled_debt_order_terms(nb)
        else:
            backing = backing_asset(nb)
            state.create("1.7", {
                "expiration": MAX_TIME, "seller": NULL_ACCOUNT,
                "for_sale": fund_receives,
                "sell_price": make_price(fund_receives, backing, debt, mia_id),
                "filled_amount": "0", "deferred_fee": 0,
                "deferred_paid_fee": core(0),
                "is_settled_debt": True, "on_fill": []})
    fill_call_order(ctx, call["id"], collateral, debt, fund_receives_price, True,
                    collateral - fund_receives, reduce_current_supply=False)
    if bsrm(nb) == INDIVIDUAL_SETTLEMENT_TO_FUND:
        update_bitasset_current_feed(state, b["id"], ctx.now, skip_median_update=True)


def _settle_pool_fill(ctx: ApplyContext, b: dict, order_id: str, call_receives: int,
                      order_receives: int, filled: bool, match_price: dict,
                      is_maker: bool) -> None:
    """The settled-debt order's side of a fill: it pays the whole fund when
    it is filled, else ``call_receives`` at the pool's price (rounded down)
    when it does not hold the whole fund, else what the other order
    receives; the excess over that is a collateral fee.  The debt bought
    leaves the supply and the pool; a virtual fill_order (4) records it;
    the order is removed or re-sized at its price."""
    state = ctx.state
    mia_id, backing = b["asset_id"], backing_asset(b)
    order = state.objects[order_id]
    fund = int(b["individual_settlement_fund"])
    call_pays = order_receives
    if filled:
        call_pays = fund
    elif int(order["for_sale"]) != fund:
        call_pays = mul_down(call_receives, mia_id, individual_settlement_price(b))
    call_pays = max(call_pays, order_receives)
    fee = call_pays - order_receives
    adjust_supply(state, mia_id, -call_receives)
    accumulate_fee(state, mia_id, backing, fee)
    record_fill(ctx, order_id, order["seller"], (call_pays, backing), (call_receives, mia_id),
                fee, match_price, is_maker, fee_asset=backing)
    nb = state.modify(b["id"])
    nb["individual_settlement_debt"] = int(nb["individual_settlement_debt"]) - call_receives
    nb["individual_settlement_fund"] = fund - call_pays
    if filled:
        state.remove(order_id)
        return
    order = state.modify(order_id)
    order["for_sale"] = mul_up(int(nb["individual_settlement_debt"]), mia_id, order["sell_price"])
    if order["for_sale"] > int(nb["individual_settlement_fund"]):
        order["for_sale"] = int(nb["individual_settlement_fund"])
        order["sell_price"] = invert(individual_settlement_price(nb))


def match_limit_settled_debt(ctx: ApplyContext, taker_id: str, maker_id: str) -> tuple:
    """graphene ``match_limit_settled_debt``: a limit order selling the
    debt asset takes the resting settled-debt order at its price; returns
    ``(taker gone, maker gone)``.  The taker buys the pool's whole debt
    when it sells at least that much, else sells what it has (rounded
    down, then culled when small)."""
    state = ctx.state
    taker, maker = state.objects[taker_id], state.objects[maker_id]
    mia_id = maker["sell_price"]["quote"]["asset_id"]
    b = bitasset_of(state, mia_id)
    match_price = maker["sell_price"]
    usd_for_sale, usd_to_buy = int(taker["for_sale"]), int(b["individual_settlement_debt"])
    if usd_to_buy > usd_for_sale:
        order_receives = mul_down(usd_for_sale, mia_id, match_price)
        if order_receives == 0:
            return True, False
        call_receives = mul_up(order_receives, backing_asset(b), match_price)
        cull_taker, maker_filled = True, False
    else:
        call_receives, order_receives = usd_to_buy, int(maker["for_sale"])
        cull_taker, maker_filled = False, True
    taker_gone = fill_limit_order(ctx, taker_id, call_receives, order_receives, match_price,
                                  cull_taker, False)
    _settle_pool_fill(ctx, bitasset_of(state, mia_id), maker_id, call_receives, order_receives,
                      maker_filled, match_price, True)
    return taker_gone, maker_filled


def match_settled_debt_limit(ctx: ApplyContext, settled_id: str, maker_id: str) -> tuple:
    """graphene ``match_settled_debt_limit``: the settled-debt order, as a
    taker, buys debt from a resting limit order at that order's price
    (the limit order receives rounded up when the pool's debt is all
    bought); returns ``(taker gone, maker gone)``."""
    state = ctx.state
    maker = state.objects[maker_id]
    mia_id = maker["sell_price"]["base"]["asset_id"]
    b = bitasset_of(state, mia_id)
    match_price = maker["sell_price"]
    usd_for_sale, usd_to_buy = int(maker["for_sale"]), int(b["individual_settlement_debt"])
    if usd_to_buy > usd_for_sale:
        order_receives = mul_down(usd_for_sale, mia_id, match_price)
        call_receives = mul_up(order_receives, backing_asset(b), match_price)
        taker_filled = False
    else:
        call_receives = usd_to_buy
        order_receives = mul_up(call_receives, mia_id, match_price)
        taker_filled = True
    _settle_pool_fill(ctx, b, settled_id, call_receives, order_receives, taker_filled,
                      match_price, False)
    maker_gone = fill_limit_order(ctx, maker_id, call_receives, order_receives, match_price,
                                  True, True)
    return taker_filled, maker_gone


def check_settled_debt_order(ctx: ApplyContext, mia_id: str) -> None:
    """graphene ``check_settled_debt_order`` (core-2591): under method 3
    the settled-debt order takes the limit orders selling the debt asset at
    or above its price, best first, until it is gone or one of them is
    only partly taken."""
    state = ctx.state
    b = bitasset_of(state, mia_id)
    if bsrm(b) != INDIVIDUAL_SETTLEMENT_TO_ORDER:
        return
    order = find_settled_debt_order(state, mia_id)
    while order is not None:
        book = state.book(mia_id, backing_asset(b))
        if not book or value(book[0]["sell_price"]) < value(invert(order["sell_price"])):
            return
        taker_gone, maker_gone = match_settled_debt_limit(ctx, order["id"], book[0]["id"])
        if taker_gone or not maker_gone:
            return
        order = state.objects[order["id"]]
