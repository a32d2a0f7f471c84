"""Force settlements (1.4.N ``{"owner", "balance", "settlement_date"}``):
matching them against debt positions, when they are created (against
positions in margin call territory, core-2481: ``apply_force_settlement``
in :mod:`~nodeapi.chain.market.margin`) and when they come due
(against the least collateralized position at the feed price less the
offset, within the maintenance interval's volume).

Reference: bitshares-core libraries/chain/db_market.cpp
(``match_impl`` of a settle and a call order, which re-caps the
current feed under no settlement (1),
``fill_settle_order``, ``pay_force_settle_fees``, ``cancel_settle_order``,
``match_force_settlements``) and db_update.cpp
(``clear_expired_force_settlements``), with core-184 (no something for
nothing), core-342 (rounding), core-1780 (market fees on settlements),
core-2481 and core-2582 (margin calls use the median feed for the TCR).
"""

from fractions import Fraction

from nodeapi.chain.evaluators.context import VOID, ApplyContext

from nodeapi.chain.balances import adjust_balance
from nodeapi.chain.market.bitasset_data import (
    NO_SETTLEMENT, backing_asset, bitasset_of, bsrm, extensions, has_feed, is_globally_settled,
    max_force_settlement_volume, mcop, mcpr, mssp, update_bitasset_current_feed)
from nodeapi.chain.market.limits import accumulate_fee, pay_market_fees, record_fill
from nodeapi.chain.market.positions import (
    collateralization, fill_call_order, least_collateralized, max_debt_to_cover)
from nodeapi.protocol.asset import (
    amount_of, asset, core, divide_ratio, GRAPHENE_100_PERCENT, make_price, mul_down, mul_up,
    percent_of, value)
from nodeapi.protocol.ids import instance_number

FORCE_SETTLEMENT = "1.4"


def settle_orders_of(state, mia_id: str) -> list:
    """Force settlements of ``mia_id`` by settlement date, then id."""
    orders = [state.objects[i] for i in state.settles_by_asset.get(mia_id, ())]
    orders.sort(key=lambda s: (s["settlement_date"], instance_number(s["id"])))
    return orders


def cancel_settle_order(ctx: ApplyContext, settle_id: str) -> None:
    """graphene ``cancel_settle_order``: the balance goes back to its owner,
    with a virtual asset_settle_cancel (42)."""
    state = ctx.state
    settle = state.objects[settle_id]
    balance = settle["balance"]
    adjust_balance(state, settle["owner"], balance["asset_id"], amount_of(balance))
    ctx.virtual_ops.append(([42, {
        "fee": core(0), "settlement": settle_id,
        "account": settle["owner"], "amount": dict(balance)}], VOID))
    state.remove(settle_id)


def _pay_force_settle_fees(state, mia_id: str, coll_id: str, amount: int) -> int:
    """graphene ``pay_force_settle_fees`` (BSIP 87): the issuer's
    ``force_settle_fee_percent`` of the collateral received."""
    percent = extensions(bitasset_of(state, mia_id)["options"]).get("force_settle_fee_percent")
    if not percent:
        return 0
    fee = percent_of(amount, int(percent))
    accumulate_fee(state, mia_id, coll_id, fee)
    return fee


def fill_settle_order(ctx: ApplyContext, settle_id: str, pays: int, receives: int,
                      fill_price: dict, is_maker: bool, pay_force_settle_fee: bool) -> bool:
    """graphene ``fill_settle_order``: the owner gives ``pays`` of the
    settled asset and gets ``receives`` collateral less the collateral's
    market fee and the force settlement fee; virtual fill_order (4).  True
    when the order is used up."""
    state = ctx.state
    settle = state.objects[settle_id]
    mia_id = settle["balance"]["asset_id"]
    coll_id = backing_asset(bitasset_of(state, mia_id))
    fees = pay_market_fees(state, coll_id, receives, is_maker, settle["owner"])
    if pay_force_settle_fee:
        fees += _pay_force_settle_fees(state, mia_id, coll_id, receives - fees)
    filled = pays >= amount_of(settle["balance"])
    if not filled:
        new = state.modify(settle_id)
        new["balance"] = asset(amount_of(settle["balance"]) - pays, mia_id)
    adjust_balance(state, settle["owner"], coll_id, receives - fees)
    record_fill(ctx, settle_id, settle["owner"], (pays, mia_id), (receives, coll_id), fees,
                fill_price, is_maker)
    if filled:
        state.remove(settle_id)
    return filled


def match_settle_call(ctx: ApplyContext, settle_id: str, call_id: str, match_price: dict,
                      max_settlement: int, fill_price: dict, is_margin_call: bool,
                      settle_is_taker: bool) -> int:
    """graphene ``match_impl`` of a force settlement and a position:
    ``match_price`` (DEBT per COLLATERAL) is what the position pays at,
    ``fill_price`` what the settlement receives at (they differ by the
    margin call fee when ``is_margin_call``); at most ``max_settlement``
    debt.  Returns the debt the position received (0 when nothing
    happened or the settlement was cancelled as too small)."""
    state = ctx.state
    settle, call = state.objects[settle_id], state.objects[call_id]
    mia_id = settle["balance"]["asset_id"]
    b = bitasset_of(state, mia_id)
    coll_id = backing_asset(b)
    balance = amount_of(settle["balance"])
    call_debt, call_collateral = int(call["debt"]), int(call["collateral"])
    call_receives = min(balance, max_settlement, call_debt)
    call_pays = mul_down(call_receives, mia_id, match_price)
    settle_receives, settle_pays = call_pays, call_receives
    cull = False
    if call_pays == 0:
        if call_receives == call_debt or is_margin_call and call_receives != balance:
            call_pays = settle_receives = 1
        elif call_receives == balance:
            cancel_settle_order(ctx, settle_id)
            return 0
        else:
            return 0
    else:
        ratio = mcpr(b)
        capped = make_price(call_debt, mia_id, call_collateral, coll_id)
        if call_receives == call_debt:
            call_pays = mul_up(call_receives, mia_id, match_price)
            if is_margin_call:
                if call_pays > call_collateral:
                    call_pays, match_price = call_collateral, capped
                    fill_price = divide_ratio(match_price, *ratio)
                settle_receives = mul_up(call_receives, mia_id, fill_price)
            else:
                settle_receives = call_pays
        else:
            if not is_margin_call:
                call_receives = mul_up(call_pays, coll_id, match_price)
            elif settle_pays == max_settlement:
                call_pays = mul_up(call_receives, mia_id, match_price)
                settle_receives = mul_up(call_receives, mia_id, fill_price)
            else:
                def calculate(match, fill):
                    receives = mul_down(settle_pays, mia_id, fill)
                    if receives == 0:
                        return 0, call_receives, call_pays
                    debt_in = mul_up(receives, coll_id, fill)
                    return receives, debt_in, mul_down(debt_in, mia_id, match)

                settle_receives, call_receives, call_pays = calculate(match_price, fill_price)
                if settle_receives == 0:
                    cancel_settle_order(ctx, settle_id)
                    return 0
                if call_pays >= call_collateral or Fraction(
                        call_collateral - call_pays, call_debt - call_receives) \
                        < Fraction(call_collateral, call_debt):
                    match_price = capped
                    fill_price = divide_ratio(match_price, *ratio)
                    settle_receives, call_receives, call_pays = calculate(match_price, fill_price)
                    if settle_receives == 0:
                        cancel_settle_order(ctx, settle_id)
                        return 0
            if settle_pays == balance and call_receives != balance:
                cull = True
            settle_pays = call_receives
    fee = call_pays - settle_receives
    fill_call_order(ctx, call_id, call_pays, call_receives, fill_price, settle_is_taker, fee)
    fill_settle_order(ctx, settle_id, settle_pays, settle_receives, fill_price,
                      not settle_is_taker, not is_margin_call)
    b = bitasset_of(state, mia_id)
    if bsrm(b) == NO_SETTLEMENT:
        update_bitasset_current_feed(state, b["id"], ctx.now, skip_median_update=True)
    if cull and settle_id in state.objects:
        cancel_settle_order(ctx, settle_id)
    return call_receives


def margin_call_terms(state, b: dict, call: dict) -> int:
    """The debt a margin call of ``call`` may cover at MSSP (TCR at the
    median feed, core-2582)."""
    return max_debt_to_cover(call, mssp(b), b["median_feed"]["settlement_price"],
                             int(b["current_feed"]["maintenance_collateral_ratio"]),
                             b["current_maintenance_collateralization"])


def margin_called(b: dict, call: dict | None) -> bool:
    """``call`` exists and is in margin call territory (its
    collateralization at most the maintenance collateralization)."""
    return call is not None and value(collateralization(call)) \
        <= value(b["current_maintenance_collateralization"])


def match_force_settlements(ctx: ApplyContext, mia_id: str) -> bool:
    """graphene ``match_force_settlements``: margin calls taking waiting
    force settlements (the position is the taker); True when a position
    changed."""
    state = ctx.state
    while True:
        b = bitasset_of(state, mia_id)
        settles = settle_orders_of(state, mia_id)
        call = least_collateralized(state, mia_id)
        if not settles or call is None:
            return False
        if not margin_called(b, call):
            return False
        received = match_settle_call(ctx, settles[0]["id"], call["id"], mssp(b),
                                     margin_call_terms(state, b, call), mcop(b), True, False)
        if received > 0:
            return True


def _settle_asset(ctx: ApplyContext, mia_id: str) -> None:
    """The due force settlements of one asset (``clear_expired_force_settlements``):
    the volume cap from the supply and the price (the current feed less the
    offset) are taken once, at the first due settlement, and every due
    settlement of the block fills at that price, though a match under no
    settlement (1) re-caps the current feed."""
    state = ctx.state
    asset = state.objects[mia_id]
    supply = int(state.objects[asset["dynamic_asset_data_id"]]["current_supply"])
    max_volume = price = None
    while True:
        settles = settle_orders_of(state, mia_id)
        if not settles:
            return
        settle = settles[0]
        b = bitasset_of(state, mia_id)
        if is_globally_settled(b):
            cancel_settle_order(ctx, settle["id"])
            continue
        if settle["settlement_date"] > ctx.now:
            return
        if not has_feed(b) \
                or int(b["options"]["force_settlement_offset_percent"]) == GRAPHENE_100_PERCENT:
            cancel_settle_order(ctx, settle["id"])
            continue
        if max_volume is None:
            max_volume = max_force_settlement_volume(b, supply)
        settled = int(b["force_settled_volume"])
        if settled >= max_volume:
            return
        if price is None:  # once per asset and block: no settlement (1) re-caps the feed
            price = divide_ratio(b["current_feed"]["settlement_price"],
                                 GRAPHENE_100_PERCENT
                                 - int(b["options"]["force_settlement_offset_percent"]),
                                 GRAPHENE_100_PERCENT)
        finished = False
        while settled < max_volume and settle["id"] in state.objects:
            if amount_of(state.objects[settle["id"]]["balance"]) == 0:
                cancel_settle_order(ctx, settle["id"])
                break
            call = least_collateralized(state, mia_id)
            if call is None:
                cancel_settle_order(ctx, settle["id"])
                break
            new = match_settle_call(ctx, settle["id"], call["id"], price, max_volume - settled,
                                    price, False, True)
            if new == 0:
                finished = settle["id"] in state.objects
                break
            settled += new
        if settled != int(bitasset_of(state, mia_id)["force_settled_volume"]):
            state.modify(b["id"])["force_settled_volume"] = settled
        if finished:
            return


def clear_expired_force_settlements(ctx: ApplyContext) -> None:
    """graphene ``clear_expired_force_settlements``: each asset's due force
    settlements, in asset id order; virtual fills and cancels go to
    ``ctx.virtual_ops``."""
    if not ctx.state.settles_by_asset:  # no force settlements: the usual block
        return
    for mia_id in sorted((a for a, ids in ctx.state.settles_by_asset.items() if ids),
                         key=instance_number):
        _settle_asset(ctx, mia_id)
