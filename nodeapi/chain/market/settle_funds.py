"""Instant settlement (asset_settle) against a fund: the global settlement
fund of a globally settled asset, or the individual settlement pool of an
asset whose black swan response method is individual settlement to fund
(2).

Both pay the settler collateral at the fund's price (rounded down in
favour of the fund; what the settler pays is then rounded up from it);
the collateral beyond the margin call order price is a collateral fee
(core-2591) and the collateral asset's market fee applies (core-1780).
Each returns the extendable operation result's fields ``{"paid":
[DEBT], "received": [COLLATERAL], "fees": [collateral fee?, market
fee]}``.

Reference: bitshares-core libraries/chain/asset_evaluator.cpp
(``pay_collateral_fees``, ``pay_settle_from_gs_fund``,
``pay_settle_from_individual_pool``).
"""

from nodeapi.chain.balances import adjust_balance, adjust_supply
from nodeapi.chain.errors import InvalidOperation, fc_assert
from nodeapi.chain.evaluators.context import ApplyContext
from nodeapi.chain.market.bitasset_data import (
    backing_asset, bitasset_of, has_feed, individual_settlement_price, mcop,
    update_bitasset_current_feed)
from nodeapi.chain.market.limits import accumulate_fee, pay_market_fees
from nodeapi.chain.market.margin import check_call_orders
from nodeapi.protocol.asset import asset, equal, mul_down, mul_up


def _collateral_fees(state, b: dict, pays: int, settled: int) -> int | None:
    """graphene ``pay_collateral_fees``: the part of ``settled``
    collateral above ``pays`` debt at the margin call order price, kept by
    the asset (None without a feed or for a prediction market)."""
    if b["is_prediction_market"] or not has_feed(b):
        return None
    by_mcop = mul_up(pays, b["asset_id"], mcop(b))
    if by_mcop >= settled:
        return None
    accumulate_fee(state, b["asset_id"], backing_asset(b), settled - by_mcop)
    return settled - by_mcop


def _pay_settler(ctx: ApplyContext, account: str, b: dict, pays: int, settled: int) -> dict:
    """Collateral fees, the market fee, the settler's collateral; the
    result's fields."""
    state, backing = ctx.state, backing_asset(b)
    collateral_fees = _collateral_fees(state, b, pays, settled)
    if collateral_fees is not None:
        settled -= collateral_fees
    issuer_fees = pay_market_fees(state, backing, settled, False, account)
    settled -= issuer_fees
    if settled > 0:
        adjust_balance(state, account, backing, settled)
    fees = [asset(issuer_fees, backing)]
    if collateral_fees is not None:
        fees.insert(0, asset(collateral_fees, backing))
    return {"paid": [asset(pays, b["asset_id"])],
            "received": [asset(settled, backing)], "fees": fees}


def settle_from_gs_fund(ctx: ApplyContext, account: str, amount: int, mia_id: str) -> dict:
    """graphene ``pay_settle_from_gs_fund``: ``amount`` of the globally
    settled ``mia_id`` at ``settlement_price``; the whole supply takes the
    whole fund.

    :raises InvalidOperation: the amount receives nothing."""
    state = ctx.state
    mia, b = state.objects[mia_id], bitasset_of(state, mia_id)
    backing = backing_asset(b)
    supply = int(state.objects[mia["dynamic_asset_data_id"]]["current_supply"])
    fund = int(b["settlement_fund"])
    if amount == supply:
        settled = fund
    else:
        settled = mul_down(amount, mia_id, b["settlement_price"])
        fc_assert(settled <= fund, "settled_amount.amount <= bitasset.settlement_fund",
                  "Internal error: amount in the global settlement fund is not sufficient to "
                  "pay the settlement")
    if settled == 0 and not b["is_prediction_market"]:
        raise InvalidOperation("Settle amount is too small to receive anything due to rounding")
    pays = amount
    if amount != supply and settled != 0:
        pays = mul_up(settled, backing, b["settlement_price"])
    adjust_balance(state, account, mia_id, -pays)
    result = {"paid": [asset(pays, mia_id)], "received": [asset(settled, backing)],
              "fees": [asset(0, backing)]}
    if settled > 0:
        state.modify(b["id"])["settlement_fund"] = fund - settled
        result = _pay_settler(ctx, account, bitasset_of(state, mia_id), pays, settled)
    adjust_supply(state, mia_id, -pays)
    return result


def settle_from_individual_pool(ctx: ApplyContext, account: str, amount: int,
                                mia_id: str) -> dict:
    """graphene ``pay_settle_from_individual_pool``: ``amount`` of
    ``mia_id`` against its individual settlement pool.  At least the
    pool's debt takes the whole pool; less receives
    ``floor(amount * fund / debt)`` and pays that back at the pool's price
    rounded up.  The current feed is re-capped by the pool's new price; an
    emptied pool whose cap moved the feed checks margin calls.

    :raises InvalidOperation: the amount receives nothing."""
    state = ctx.state
    b = bitasset_of(state, mia_id)
    pays, settled = int(b["individual_settlement_debt"]), int(b["individual_settlement_fund"])
    if amount < pays:
        price = individual_settlement_price(b)
        settled = mul_down(amount, mia_id, price)
        fc_assert(settled > 0, "settled_amount.amount > 0",
                  "Settle amount is too small to receive anything due to rounding")
        pays = mul_up(settled, backing_asset(b), price)
    adjust_balance(state, account, mia_id, -pays)
    nb = state.modify(b["id"])
    nb["individual_settlement_debt"] = int(nb["individual_settlement_debt"]) - pays
    nb["individual_settlement_fund"] = int(nb["individual_settlement_fund"]) - settled
    adjust_supply(state, mia_id, -pays)
    result = _pay_settler(ctx, account, bitasset_of(state, mia_id), pays, settled)
    old_price = b["current_feed"]["settlement_price"]
    update_bitasset_current_feed(state, b["id"], ctx.now, skip_median_update=True)
    b = bitasset_of(state, mia_id)
    if int(b["individual_settlement_debt"]) == 0 \
            and not equal(old_price, b["current_feed"]["settlement_price"]):
        check_call_orders(ctx, mia_id, True)
    return result
