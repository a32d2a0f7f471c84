"""Debt position evaluators: call_order_update (3) and bid_collateral (45).

call_order_update borrows a market-issued asset against its backing asset
(a new 1.8.N), adjusts a position, or closes it (debt and collateral both
back to 0).  A new or changed position must not be instantly black-swanned
(its collateral ratio above MSSR at the median feed, core-2481) and must
end above the initial collateralization (ICR, BSIP 77) unless it only adds
collateral without adding debt.  The optional ``target_collateral_ratio``
extension limits how much a margin call sells.  Under the black swan
response method no settlement (1) the current feed is re-capped after the
update (and after closing, checking margin calls when it moved).

bid_collateral offers collateral for a share of a globally settled asset's
debt (2.17.N); a bid with ``debt_covered`` 0 cancels the bidder's bid.

Reference: bitshares-core libraries/chain/market_evaluator.cpp
(``call_order_update_evaluator``, ``bid_collateral_evaluator``).
"""

from nodeapi.chain.errors import InsufficientFeeds, fc_assert
from nodeapi.chain.evaluators.context import VOID, ApplyContext
from nodeapi.chain.balances import adjust_balance, adjust_supply
from nodeapi.chain.market.bitasset_data import (
    NO_SETTLEMENT, backing_asset, bitasset_of, bsrm, has_feed, is_globally_settled,
    update_bitasset_current_feed)
from nodeapi.chain.market.limits import core_in_orders
from nodeapi.chain.market.margin import check_call_orders
from nodeapi.chain.market.positions import call_of, collateralization
from nodeapi.protocol.asset import (
    amount_of, equal, invert, make_price, max_short_squeeze_price, value)
from nodeapi.chain.market.swan import cancel_bid
from nodeapi.chain.whitelist import is_authorized_asset
from nodeapi.protocol.flags import DISABLE_COLLATERAL_BIDDING, DISABLE_NEW_SUPPLY



def _authorized(state, account: str, asset: dict, b: dict) -> None:
    fc_assert(is_authorized_asset(state, account, asset),
              "is_authorized_asset( d, *fee_paying_account, *_debt_asset )",
              "The account is not allowed to transact the debt asset")
    fc_assert(is_authorized_asset(state, account, state.objects[backing_asset(b)]),
              "is_authorized_asset( d, *fee_paying_account, "
              "_bitasset_data->options.short_backing_asset(d) )",
              "The account is not allowed to transact the collateral asset")


def call_order_update(ctx: ApplyContext, data: dict) -> list:
    """call_order_update (3): result ``[1, "1.8.N"]`` (the position, also
    when closed).  Raises :class:`InvalidOperation` (graphene's checks) and
    :class:`InsufficientFeeds` (no feed to borrow against)."""
    state = ctx.state
    account = data["funding_account"]
    delta_debt, delta_coll = data["delta_debt"], data["delta_collateral"]
    debt_change, coll_change = amount_of(delta_debt), amount_of(delta_coll)
    asset = state.require(delta_debt["asset_id"])
    b = bitasset_of(state, asset["id"])
    fc_assert(b is not None, "_debt_asset->is_market_issued()",
              f"Unable to cover {asset['symbol']} as it is not a collateralized asset.")
    fc_assert(debt_change <= 0 or not int(asset["options"]["flags"]) & DISABLE_NEW_SUPPLY,
              "o.delta_debt.amount <= 0 || _debt_asset->can_create_new_supply()",
              "Can not create new supply")
    dyn = state.objects[asset["dynamic_asset_data_id"]]
    supply = int(dyn["current_supply"])
    fc_assert(supply + debt_change <= int(asset["options"]["max_supply"]),
              "_dynamic_data_obj->current_supply + o.delta_debt.amount <= "
              "_debt_asset->options.max_supply", "Borrowing this quantity would exceed MAX_SUPPLY")
    fc_assert(supply + debt_change >= 0, "_dynamic_data_obj->current_supply + "
              "o.delta_debt.amount >= 0", "This transaction would bring current supply below zero.")
    fc_assert(not is_globally_settled(b), "!_bitasset_data->is_globally_settled()",
              "Cannot update debt position when the asset has been globally settled")
    fc_assert(delta_coll["asset_id"] == backing_asset(b),
              "o.delta_collateral.asset_id == _bitasset_data->options.short_backing_asset",
              "Collateral asset type should be same as backing asset of debt asset")
    call = call_of(state, account, asset["id"])
    closing = False
    if call is not None:
        new_collateral = int(call["collateral"]) + coll_change
        new_debt = int(call["debt"]) + debt_change
        if new_debt == 0:
            fc_assert(new_collateral == 0, "new_collateral == 0",
                      "Should claim all collateral when closing debt position")
            closing = True
        else:
            fc_assert(new_collateral > 0 and new_debt > 0, "new_collateral > 0 && new_debt > 0",
                      "Both collateral and debt should be positive after updated a debt "
                      "position if not to close it")
    else:
        fc_assert(coll_change > 0, "o.delta_collateral.amount > 0",
                  "Delta collateral amount of new debt position should be positive")
        fc_assert(debt_change > 0, "o.delta_debt.amount > 0",
                  "Delta debt amount of new debt position should be positive")
        new_collateral, new_debt = coll_change, debt_change
    if b["is_prediction_market"]:
        fc_assert(coll_change == debt_change, "o.delta_collateral.amount == o.delta_debt.amount",
                  "Debt amount and collateral amount should be same when updating debt "
                  "position in a prediction market")
    elif not has_feed(b) and not closing:
        raise InsufficientFeeds("Cannot borrow asset with no price feed.")
    _authorized(state, account, asset, b)

    if debt_change:
        adjust_balance(state, account, asset["id"], debt_change)
        adjust_supply(state, asset["id"], debt_change)
    if coll_change:
        adjust_balance(state, account, delta_coll["asset_id"], -coll_change)
        core_in_orders(state, account, delta_coll["asset_id"], coll_change)
    if closing:
        state.remove(call["id"])
        if bsrm(b) == NO_SETTLEMENT:
            old_price = b["current_feed"]["settlement_price"]
            update_bitasset_current_feed(state, b["id"], ctx.now, skip_median_update=True)
            b = bitasset_of(state, asset["id"])
            if has_feed(b) and not equal(b["current_feed"]["settlement_price"], old_price):
                check_call_orders(ctx, asset["id"], True)
        return [1, call["id"]]
    ext = data.get("extensions") if isinstance(data.get("extensions"), dict) else {}
    tcr = ext.get("target_collateral_ratio")
    old_cr = old_debt = None
    if call is None:
        fields = {"borrower": account, "collateral": new_collateral, "debt": new_debt,
                  "call_price": make_price(1, delta_coll["asset_id"], 1, asset["id"])}
        if tcr is not None:
            fields["target_collateral_ratio"] = int(tcr)
        call = state.create("1.8", fields)
    else:
        old_cr, old_debt = value(collateralization(call)), int(call["debt"])
        updated = state.modify(call["id"])
        updated["collateral"], updated["debt"] = new_collateral, new_debt
        updated.pop("target_collateral_ratio", None)
        if tcr is not None:
            updated["target_collateral_ratio"] = int(tcr)
        call = updated
    call_id = call["id"]
    if b["is_prediction_market"]:
        return [1, call_id]
    cr = value(collateralization(call))
    increasing_cr = old_cr is not None and new_debt <= old_debt and cr > old_cr
    fc_assert(increasing_cr or cr >= value(invert(max_short_squeeze_price(b["median_feed"]))),
              "increasing_cr || call_collateralization >= ~( "
              "_bitasset_data->median_feed.max_short_squeeze_price() )",
              "Could not create a debt position which would trigger a blackswan event "
              "instantly, unless it is to increase collateral ratio of an existing debt "
              "position and is not increasing its debt amount")
    if bsrm(b) == NO_SETTLEMENT:
        update_bitasset_current_feed(state, b["id"], ctx.now, skip_median_update=True)
    called = check_call_orders(ctx, asset["id"], False)
    b = bitasset_of(state, asset["id"])
    call = state.objects.get(call_id)
    if called:
        fc_assert(call is None or increasing_cr
                  or value(collateralization(call)) > value(b["current_initial_collateralization"]),
                  "!call_ptr || increasing_cr || call_ptr->collateralization() > "
                  "_bitasset_data->current_initial_collateralization",
                  "Could not create a debt position which would trigger a margin call instantly, "
                  "unless the debt position is fully filled, or it is to increase collateral "
                  "ratio of an existing debt position and is not increasing its debt amount, "
                  "or the remaining debt position's collateral ratio is above required initial "
                  "collateral ratio (ICR)")
    else:
        fc_assert(call is not None, "call_ptr",
                  "no margin call was executed and yet the call object was deleted")
        fc_assert(increasing_cr or cr > value(b["current_initial_collateralization"]),
                  "ok", "Can only increase collateral ratio without increasing debt when the debt "
                  "position's collateral ratio is lower than or equal to required initial "
                  "collateral ratio (ICR), if not to trigger a margin call immediately")
    return [1, call_id]


def bid_collateral(ctx: ApplyContext, data: dict) -> list:
    """bid_collateral (45): replace the bidder's bid on a globally settled
    asset with ``additional_collateral`` for ``debt_covered`` (2.17.N; the
    collateral leaves the balance), or cancel it when ``debt_covered`` is
    0."""
    state = ctx.state
    bidder = data["bidder"]
    debt, extra = data["debt_covered"], data["additional_collateral"]
    asset = state.require(debt["asset_id"])
    b = bitasset_of(state, asset["id"])
    fc_assert(b is not None, "_debt_asset->is_market_issued()",
              f"Unable to cover {asset['symbol']} as it is not a collateralized asset.")
    fc_assert(not int(asset["options"]["flags"]) & DISABLE_COLLATERAL_BIDDING,
              "_debt_asset->can_bid_collateral()", "Collateral bidding is disabled for this asset")
    fc_assert(is_globally_settled(b), "_bitasset_data->is_globally_settled()",
              "Cannot bid since the asset is not globally settled")
    fc_assert(extra["asset_id"] == backing_asset(b),
              "o.additional_collateral.asset_id == _bitasset_data->options.short_backing_asset")
    fc_assert(not b["is_prediction_market"], "!_bitasset_data->is_prediction_market",
              "Cannot bid on a prediction market!")
    existing = next((state.objects[i] for i in state.bids_by_asset.get(asset["id"], ())
                     if state.objects[i]["bidder"] == bidder), None)
    if existing is None:
        fc_assert(amount_of(debt) > 0, "o.debt_covered.amount > 0",
                  "Can't find bid to cancel?!")
    if amount_of(extra) > 0:
        have = state.balance(bidder, extra["asset_id"])
        if existing is not None:
            old = amount_of(existing["inv_swan_price"]["base"])
            fc_assert(have >= amount_of(extra) - old, "collateral_balance >= delta",
                      f"Cannot increase bid from {old} to {extra['amount']} collateral when "
                      f"payer only has {have}")
        else:
            fc_assert(have >= amount_of(extra), "collateral_balance >= o.additional_collateral",
                      f"Cannot bid {extra['amount']} collateral when payer only has {have}")
    _authorized(state, bidder, asset, b)
    if existing is not None:
        cancel_bid(ctx, existing["id"], create_virtual_op=False)
    if amount_of(debt) == 0:
        return VOID
    adjust_balance(state, bidder, extra["asset_id"], -amount_of(extra))
    state.create("2.17", {"bidder": bidder, "inv_swan_price": make_price(
        extra["amount"], extra["asset_id"], debt["amount"], debt["asset_id"])})
    return VOID
