"""Black swans and what follows them: the global settlement of a
market-issued asset, collateral bids and the revival of the asset.

After a global settlement every debt position is closed into the
settlement fund (``settlement_fund`` at ``settlement_price``); holders may
then settle instantly against the fund (asset_settle), and bidders offer
collateral (bid_collateral, 2.17.N ``{"bidder", "inv_swan_price"}``,
COLLATERAL per DEBT) to take over the debt.  At maintenance the bids that
cover the whole supply at a healthy ratio revive the asset (``process_bids``);
a feed under which the fund alone is healthy revives it at once.

Reference: bitshares-core libraries/chain/db_market.cpp
(``check_for_blackswan``, ``globally_settle_asset_impl``,
``revive_bitasset``, ``_cancel_bids_and_revive_mpa``, ``cancel_bid``,
``execute_bid``), db_maint.cpp (``process_bids``), protocol/asset.cpp
(``price::call_price``), with core-2481 (margin calls pay their fee on a
global settlement), core-2290 (revival at the ICR) and core-2467 (the
response method is reset to global settlement).
"""

from fractions import Fraction

from nodeapi.chain.errors import InvalidOperation
from nodeapi.chain.evaluators.context import VOID, ApplyContext
from nodeapi.chain.balances import adjust_balance
from nodeapi.chain.market.bitasset_data import (
    INDIVIDUAL_SETTLEMENT_TO_FUND, INDIVIDUAL_SETTLEMENT_TO_ORDER, backing_asset, bitasset_of,
    bsrm, extensions, find_settled_debt_order, has_feed, is_globally_settled, mcpr, mssp)
from nodeapi.chain.market.individual import individually_settle
from nodeapi.chain.market.limits import core_in_orders
from nodeapi.chain.market.positions import (
    calls_of, collateralization, fill_call_order, least_collateralized)
from nodeapi.protocol.asset import (
    amount_of, asset, core, invert, make_price, MAX_SHARE_SUPPLY, max_short_squeeze_price,
    mul_down, mul_up, null_price, RATIO_DENOM, times_ratio, value)
from nodeapi.protocol.ids import instance_number

COLLATERAL_BID = "2.17"


def check_for_blackswan(ctx: ApplyContext, mia_id: str, enable_black_swan: bool) -> bool:
    """graphene ``check_for_blackswan`` (core-2481, core-2467): True when
    the asset is (now) globally settled, or when positions were settled
    individually.  The least collateralized position is undercollateralized
    when its debt per collateral is above the highest of the black swan
    price and the best bid (at the margin call pays price); nothing is
    checked while force settlements of the asset wait.

    The black swan price is the current feed's MSSP, the median feed's
    under individual settlement to fund (2), where a bid counts only when
    it is at or above the current feed's MSSP.  Under the methods 2 and 3
    every undercollateralized position is settled individually
    (:func:`~nodeapi.chain.market.individual.individually_settle`); under
    the others the asset is settled globally.

    :raises InvalidOperation: a black swan where ``enable_black_swan`` is
        false (a debt position update may not cause one)."""
    state = ctx.state
    b = bitasset_of(state, mia_id)
    if b is None:
        return False
    if is_globally_settled(b):
        return True
    if not has_feed(b) or state.settles_by_asset.get(mia_id):
        return False
    call = least_collateralized(state, mia_id)
    if call is None:
        return False
    method = bsrm(b)
    book = state.book(mia_id, backing_asset(b))
    best_bid = book[0]["sell_price"] if book else None
    settled_some = False
    while True:
        b = bitasset_of(state, mia_id)
        if method == INDIVIDUAL_SETTLEMENT_TO_FUND:
            highest = max_short_squeeze_price(b["median_feed"])
        else:
            highest = mssp(b)
        if best_bid is not None:
            call_pays_price = times_ratio(best_bid, *mcpr(b))
            if method != INDIVIDUAL_SETTLEMENT_TO_FUND:
                if value(call_pays_price) > value(highest):
                    highest = call_pays_price
            elif value(call_pays_price) >= value(mssp(b)):
                highest = call_pays_price
        least = collateralization(call)
        if not value(invert(least)) > value(highest):
            return settled_some
        if not enable_black_swan:
            raise InvalidOperation("Black swan was detected during a margin update which is not "
                                   "allowed to trigger a blackswan")
        if method in (INDIVIDUAL_SETTLEMENT_TO_FUND, INDIVIDUAL_SETTLEMENT_TO_ORDER):
            individually_settle(ctx, mia_id, call)
            call = least_collateralized(state, mia_id)
            if call is None:
                return True
            settled_some = True
            continue
        globally_settle_asset(ctx, mia_id, invert(least), check_margin_calls=True)
        return True


def globally_settle_asset(ctx: ApplyContext, mia_id: str, settlement_price: dict,
                          check_margin_calls: bool = False) -> None:
    """graphene ``globally_settle_asset``: close every position at
    ``settlement_price`` (DEBT per COLLATERAL, each pays its debt's worth
    rounded up, at most its collateral) into the settlement fund.  With
    ``check_margin_calls`` (a black swan) positions in margin call
    territory pay at that price but the fund receives only at
    ``settlement_price * MSSR``, the difference being margin call fees;
    healthier ones pay at the fund's price.  The individual settlement
    pool joins the fund (its settled-debt order is removed) and the
    response method is reset to global settlement."""
    state = ctx.state
    b = bitasset_of(state, mia_id)
    backing = backing_asset(b)
    supply = int(state.objects[state.objects[mia_id]["dynamic_asset_data_id"]]["current_supply"])
    call_pays_price = fund_receives_price = settlement_price
    calls = calls_of(state, mia_id)
    margin_end = 0
    if check_margin_calls:
        limit = value(b["current_maintenance_collateralization"])
        margin_end = sum(1 for c in calls if value(collateralization(c)) <= limit)
        fund_receives_price = times_ratio(
            settlement_price, int(b["current_feed"]["maximum_short_squeeze_ratio"]), RATIO_DENOM)
    gathered = 0
    for index, call in enumerate(calls):
        margin_call = index < margin_end
        price = call_pays_price if margin_call else fund_receives_price
        debt = int(call["debt"])
        pays = min(mul_up(debt, mia_id, price), int(call["collateral"]))
        fee = 0
        if margin_call:
            fund_receives = min(mul_up(debt, mia_id, fund_receives_price), pays)
            fee = pays - fund_receives
        gathered += pays - fee
        fill_call_order(ctx, call["id"], pays, debt, fund_receives_price, True, fee,
                        reduce_current_supply=False)
    settled_debt_order = find_settled_debt_order(state, mia_id)
    if settled_debt_order is not None:
        state.remove(settled_debt_order["id"])
    gathered += int(b["individual_settlement_fund"])
    b = state.modify(b["id"])
    options = dict(b["options"])
    ext = dict(extensions(options))
    if ext.pop("black_swan_response_method", None) is not None:
        options["extensions"] = ext
        b["options"] = options
    b["current_feed"] = dict(b["median_feed"])
    b["individual_settlement_debt"] = b["individual_settlement_fund"] = 0
    b["settlement_price"] = make_price(supply, mia_id, gathered, backing)
    b["settlement_fund"] = gathered


def _bids(state, mia_id: str) -> list:
    """Collateral bids on ``mia_id``, most collateral per debt first, then
    by id (graphene ``collateral_bid_index`` by_price)."""
    bids = [state.objects[i] for i in state.bids_by_asset.get(mia_id, ())]
    bids.sort(key=lambda x: (-value(x["inv_swan_price"]), instance_number(x["id"])))
    return bids


def cancel_bid(ctx: ApplyContext, bid_id: str, create_virtual_op: bool = True) -> None:
    """graphene ``cancel_bid``: return the bid's collateral; the virtual
    bid_collateral (45) with ``debt_covered`` 0 records it."""
    state = ctx.state
    bid = state.objects[bid_id]
    collateral = bid["inv_swan_price"]["base"]
    adjust_balance(state, bid["bidder"], collateral["asset_id"], amount_of(collateral))
    if create_virtual_op:
        ctx.virtual_ops.append(([45, {
            "fee": core(0), "bidder": bid["bidder"],
            "additional_collateral": dict(collateral),
            "debt_covered": asset(0, bid["inv_swan_price"]["quote"]["asset_id"]),
            "extensions": []}], VOID))
    state.remove(bid_id)


def execute_bid(ctx: ApplyContext, bid_id: str, debt_covered: int,
                collateral_from_fund: int) -> None:
    """graphene ``execute_bid``: the bidder takes ``debt_covered`` in a new
    position holding the bid's collateral plus ``collateral_from_fund``;
    virtual execute_bid (46)."""
    state = ctx.state
    bid = state.objects[bid_id]
    coll_id = bid["inv_swan_price"]["base"]["asset_id"]
    mia_id = bid["inv_swan_price"]["quote"]["asset_id"]
    collateral = amount_of(bid["inv_swan_price"]["base"]) + collateral_from_fund
    state.create("1.8", {"borrower": bid["bidder"], "collateral": collateral,
                         "debt": debt_covered, "call_price": make_price(1, coll_id, 1, mia_id)})
    core_in_orders(state, bid["bidder"], coll_id, collateral)
    ctx.virtual_ops.append(([46, {
        "fee": core(0), "bidder": bid["bidder"],
        "debt": asset(debt_covered, mia_id),
        "collateral": asset(collateral, coll_id)}], VOID))
    state.remove(bid_id)


def cancel_bids(ctx: ApplyContext, mia_id: str) -> None:
    """Cancel every collateral bid on ``mia_id`` in the by_price order, each
    with graphene ``cancel_bid`` (collateral back to the bidder, a virtual
    bid_collateral of ``debt_covered`` 0): on a revival
    (``_cancel_bids_and_revive_mpa``) and when asset_update sets
    ``disable_collateral_bidding`` (``asset_update_evaluator::do_apply``)."""
    for bid in _bids(ctx.state, mia_id):
        cancel_bid(ctx, bid["id"])


def _cancel_bids_and_revive(ctx: ApplyContext, mia_id: str) -> None:
    cancel_bids(ctx, mia_id)
    b = ctx.state.modify(bitasset_of(ctx.state, mia_id)["id"])
    b["settlement_price"] = null_price()
    b["settlement_fund"] = 0


def revive_bitasset(ctx: ApplyContext, mia_id: str) -> None:
    """graphene ``revive_bitasset``: the issuer takes the whole supply and
    the fund in one position (a pseudo bid of 0 collateral), the other bids
    are cancelled and the asset trades again."""
    state = ctx.state
    b = bitasset_of(state, mia_id)
    supply = int(state.objects[state.objects[mia_id]["dynamic_asset_data_id"]]["current_supply"])
    if supply > 0:
        pseudo = state.create(COLLATERAL_BID, {
            "bidder": state.objects[mia_id]["issuer"],
            "inv_swan_price": make_price(0, backing_asset(b), supply, mia_id)})
        execute_bid(ctx, pseudo["id"], supply, int(b["settlement_fund"]))
    _cancel_bids_and_revive(ctx, mia_id)


def call_price(debt: int, debt_id: str, collateral: int, collateral_id: str, ratio: int) -> dict:
    """graphene ``price::call_price`` (COLLATERAL per DEBT at
    ``ratio`` per mille), halving both terms until they fit."""
    cp = Fraction(debt, collateral) * Fraction(ratio, RATIO_DENOM)
    n, d = cp.numerator, cp.denominator
    while n > MAX_SHARE_SUPPLY or d > MAX_SHARE_SUPPLY:
        reduced = Fraction((n >> 1) + 1, (d >> 1) + 1)
        n, d = reduced.numerator, reduced.denominator
    return make_price(d, collateral_id, n, debt_id)


def process_bids(ctx: ApplyContext, mia_id: str) -> None:
    """graphene ``process_bids`` (maintenance, core-2290): when the best
    bids together cover the supply and each is healthy at the ICR against
    the current feed, they take the debt and the fund and the asset
    revives; with no supply it revives at once."""
    state = ctx.state
    b = bitasset_of(state, mia_id)
    if b["is_prediction_market"] or not has_feed(b):
        return
    supply = int(state.objects[state.objects[mia_id]["dynamic_asset_data_id"]]["current_supply"])
    if supply == 0:
        _cancel_bids_and_revive(ctx, mia_id)
        return
    backing, feed = backing_asset(b), b["current_feed"]
    ratio = int(feed["initial_collateral_ratio"])
    taken, covered = [], 0
    for bid in _bids(state, mia_id):
        if covered >= supply:
            break
        debt = min(amount_of(bid["inv_swan_price"]["quote"]), supply)
        total = mul_down(debt, mia_id, b["settlement_price"]) \
            + amount_of(bid["inv_swan_price"]["base"])
        if total == 0:
            break  # no collateral at all: never healthy (graphene would throw here)
        cp = call_price(debt, mia_id, total, backing, ratio)
        if value(invert(cp)) >= value(feed["settlement_price"]):
            break
        covered += debt
        taken.append(bid)
    if covered < supply:
        return
    to_cover, remaining = supply, int(b["settlement_fund"])
    for bid in taken:
        debt = min(amount_of(bid["inv_swan_price"]["quote"]), supply)
        collateral = mul_down(debt, mia_id, b["settlement_price"])
        if debt >= to_cover:
            debt, collateral = to_cover, remaining
        to_cover -= debt
        remaining -= collateral
        execute_bid(ctx, bid["id"], debt, collateral)
    _cancel_bids_and_revive(ctx, mia_id)
