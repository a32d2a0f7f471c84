"""Debt positions (call orders 1.8.N) of market-issued assets: lookup in
collateralization order, how much debt a margin call covers, and filling.

A call order is ``{"borrower", "collateral", "debt", "call_price",
["target_collateral_ratio"]}``; ``call_price`` is 1 collateral / 1 debt
(core-1270: no cached call price), so its assets name the position's
collateral (base) and debt (quote) assets.

Reference: bitshares-core libraries/chain/market_object.cpp
(``call_order_object::get_max_debt_to_cover``), db_getter.cpp
(``find_least_collateralized_short``), db_market.cpp (``fill_call_order``).
"""

from fractions import Fraction

from nodeapi.chain.evaluators.context import ApplyContext

from nodeapi.chain.balances import adjust_balance, adjust_supply
from nodeapi.chain.market.limits import accumulate_fee, core_in_orders, record_fill
from nodeapi.protocol.asset import (
    amount_of, invert, make_price, mul_down, mul_up, RATIO_DENOM, times_ratio, value)
from nodeapi.protocol.ids import instance_number

CALL_ORDER = "1.8"


def debt_asset(call: dict) -> str:
    """The debt asset id of the call order ``call``: its ``call_price``'s quote
    (module docstring)."""
    return call["call_price"]["quote"]["asset_id"]


def collateral_asset(call: dict) -> str:
    """The collateral asset id of the call order ``call``: its ``call_price``'s
    base (module docstring)."""
    return call["call_price"]["base"]["asset_id"]


def collateral_totals(state, asset_id: str) -> tuple[int, int]:
    """``(in collateral, backing collateral)`` of ``asset_id`` in satoshis
    of the collateral: the collateral of every call order whose collateral
    is ``asset_id``, and of every call order whose debt is ``asset_id``
    (bitshares-core api_helper_indexes.cpp ``amount_in_collateral_index``
    ``get_amount_in_collateral`` / ``get_backing_collateral``).  An asset's
    positions share its backing asset, so only the first of each debt
    asset's positions is read to know whether they count."""
    held = backing = 0
    for debt_id, ids in state.calls_by_asset.items():
        if not ids:
            continue
        total = None
        if debt_id == asset_id:
            total = sum(int(state.objects[c]["collateral"]) for c in ids)
            backing = total
        if collateral_asset(state.objects[next(iter(ids))]) == asset_id:
            held += total if total is not None else sum(
                int(state.objects[c]["collateral"]) for c in ids)
    return held, backing


def collateralization(call: dict) -> dict:
    """graphene ``call_order_object::collateralization``: collateral / debt."""
    return make_price(call["collateral"], collateral_asset(call), call["debt"], debt_asset(call))


def _cr(call: dict) -> Fraction:
    return Fraction(int(call["collateral"]), int(call["debt"]))


def calls_of(state, mia_id: str) -> list:
    """The call orders of ``mia_id``, least collateralized first, then by
    id (graphene ``call_order_index`` by_collateral)."""
    calls = [state.objects[c] for c in state.calls_by_asset.get(mia_id, ())]
    calls.sort(key=lambda c: (_cr(c), instance_number(c["id"])))
    return calls


def least_collateralized(state, mia_id: str) -> dict | None:
    """graphene ``find_least_collateralized_short``: the first of
    :func:`calls_of`, or None."""
    ids = state.calls_by_asset.get(mia_id)
    if not ids:
        return None
    return min((state.objects[c] for c in ids), key=lambda c: (_cr(c), instance_number(c["id"])))


def call_of(state, borrower: str, mia_id: str) -> dict | None:
    """The borrower's position in ``mia_id`` (graphene by_account), or None."""
    cid = state.call_by_borrower.get((borrower, mia_id))
    return state.objects[cid] if cid else None


def max_debt_to_cover(call: dict, match_price: dict, feed_price: dict, mcr: int,
                      maintenance_collateralization: dict) -> int:
    """graphene ``call_order_object::get_max_debt_to_cover`` (after
    core-1270): the debt a margin call at ``match_price`` must buy back so
    that the position's collateral ratio ends above its target collateral
    ratio (``max(TCR, MCR)`` at ``feed_price``); the whole debt without a
    TCR, 0 when the position is not in margin call territory.  Prices may
    come in either orientation."""
    coll_id, debt_id = collateral_asset(call), debt_asset(call)
    if feed_price["base"]["asset_id"] != coll_id:
        feed_price = invert(feed_price)
    if match_price["base"]["asset_id"] != coll_id:
        match_price = invert(match_price)
    debt, collateral = int(call["debt"]), int(call["collateral"])
    if _cr(call) > value(maintenance_collateralization):
        return 0
    if call.get("target_collateral_ratio") is None:
        return debt
    tcr = max(int(call["target_collateral_ratio"]), int(mcr))
    target = value(times_ratio(feed_price, tcr, RATIO_DENOM))
    mp_debt, mp_coll = amount_of(match_price["quote"]), amount_of(match_price["base"])
    fp_debt, fp_coll = amount_of(feed_price["quote"]), amount_of(feed_price["base"])
    numerator = fp_coll * mp_debt * debt * tcr - fp_debt * mp_debt * collateral * RATIO_DENOM
    if numerator < 0:
        return 0
    denominator = fp_coll * mp_debt * tcr - fp_debt * mp_coll * RATIO_DENOM
    if denominator <= 0:
        return debt
    to_cover = numerator // denominator
    if to_cover >= debt:
        return debt

    def pay_for(cover):  # debt -> collateral, rounded up
        return mul_up(cover, debt_id, match_price)

    def cover_for(pay):  # collateral -> debt, rounded down
        return mul_down(pay, coll_id, match_price)

    to_pay = mul_down(to_cover, debt_id, match_price)
    to_cover = cover_for(to_pay)
    to_pay = pay_for(to_cover)
    if to_cover >= debt or to_pay >= collateral:
        return debt

    def good() -> bool:
        return Fraction(collateral - to_pay, debt - to_cover) > target

    if good():
        return to_cover
    numerator += fp_coll * mp_debt * tcr
    cover = min(numerator // denominator + 1, debt)
    max_to_pay = collateral if cover == debt else min(pay_for(cover), collateral)
    max_to_cover = debt if max_to_pay == collateral else cover_for(max_to_pay)
    if max_to_cover >= debt:
        max_to_pay, max_to_cover = collateral, debt
    if max_to_pay <= to_pay or max_to_cover <= to_cover:
        return debt
    min_to_pay, min_to_cover = to_pay, to_cover
    max_is_ok = False
    while True:  # binary search for a good value
        if mp_coll < mp_debt:  # the collateral step is smaller
            to_pay = (min_to_pay + max_to_pay + 1) // 2
            if to_pay == max_to_pay:
                to_cover = max_to_cover
            else:
                to_cover = cover_for(to_pay)
                if to_cover >= max_to_cover:
                    to_pay, to_cover = max_to_pay, max_to_cover
                else:
                    to_pay = pay_for(to_cover)
        else:
            to_cover = (min_to_cover + max_to_cover) // 2
            if to_cover == max_to_cover:
                to_pay = max_to_pay
            else:
                to_pay = pay_for(to_cover)
                if to_pay >= max_to_pay:
                    to_pay, to_cover = max_to_pay, max_to_cover
                else:
                    to_cover = cover_for(to_pay)
                    if to_cover >= max_to_cover:
                        to_pay, to_cover = max_to_pay, max_to_cover
        if (to_pay <= min_to_pay or to_cover <= min_to_cover
                or to_pay > max_to_pay or to_cover > max_to_cover):
            to_pay, to_cover = max_to_pay, max_to_cover
        if to_pay == max_to_pay and (max_is_ok or to_pay == collateral):
            return to_cover
        if good():
            if to_pay == max_to_pay:
                return to_cover
            max_to_pay, max_to_cover, max_is_ok = to_pay, to_cover, True
        else:
            if to_pay == max_to_pay:
                break
            min_to_pay, min_to_cover = to_pay, to_cover
    step, next_step = 1, 1  # max_to_cover is too small due to rounding: search forward
    while True:
        if mp_coll > mp_debt:  # the debt step is smaller
            to_pay += step
            if to_pay >= collateral:
                return debt
            to_cover = cover_for(to_pay)
            if to_cover >= debt:
                return debt
            to_pay = pay_for(to_cover)
            if to_pay >= collateral:
                return debt
        else:
            to_cover += step
            if to_cover >= debt:
                return debt
            to_pay = pay_for(to_cover)
            if to_pay >= collateral:
                return debt
            to_cover = cover_for(to_pay)
            if to_cover >= debt:
                return debt
        if good():
            return to_cover
        step, next_step = next_step, step + next_step


def fill_call_order(ctx: ApplyContext, call_id: str, pays: int, receives: int, fill_price: dict,
                    is_maker: bool, margin_call_fee: int, reduce_current_supply: bool = True) -> bool:
    """graphene ``fill_call_order``: the position gives ``pays`` collateral
    and gets ``receives`` debt back (destroyed from the supply unless
    ``reduce_current_supply`` is false, as in a global settlement); the
    margin call fee (collateral) goes to the debt asset's
    ``accumulated_collateral_fees``; a virtual fill_order (4) is recorded.
    A position whose debt is paid is removed and its remaining collateral
    returned.  True when it was removed."""
    state = ctx.state
    call = state.objects[call_id]
    coll_id, mia_id, borrower = collateral_asset(call), debt_asset(call), call["borrower"]
    if pays > int(call["collateral"]):
        raise AssertionError(f"call order {call_id} cannot pay {pays} of {call['collateral']}")
    new = state.modify(call_id)
    new["debt"] = int(call["debt"]) - receives
    new["collateral"] = int(call["collateral"]) - pays
    freed = None
    if new["debt"] == 0:
        freed, new["collateral"] = new["collateral"], 0
    if reduce_current_supply:
        adjust_supply(state, mia_id, -receives)
    if freed is not None:
        adjust_balance(state, borrower, coll_id, freed)
    core_in_orders(state, borrower, coll_id, -(pays + (freed or 0)))
    accumulate_fee(state, mia_id, coll_id, margin_call_fee)
    record_fill(ctx, call_id, borrower, (pays, coll_id), (receives, mia_id), margin_call_fee,
                fill_price, is_maker, fee_asset=coll_id)
    if freed is not None:
        state.remove(call_id)
        return True
    return False
