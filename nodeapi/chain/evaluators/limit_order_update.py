"""limit_order_update (77): a new price, amount or expiration for an open
limit order, which then matches like a new order.

Graphene reference: libraries/chain/market_evaluator.cpp
(``limit_order_update_evaluator``: ``do_evaluate``, ``process_deferred_fee``,
``pay_fee``, ``do_apply``, ``is_linked_tp_order_compatible``), with every
hardfork passed.  ``on_fill`` sets (or, empty, removes) the order's
take-profit action (:mod:`nodeapi.chain.market.take_profit`).  A linked
take-profit order is unlinked (both ways) when the update changes the
price (unless a take-profit action makes the update) or makes the
``on_fill`` incompatible (an action added or removed, another
``spread_percent`` or ``repeat``).

Fees: like limit_order_create, the update's fee is not booked at once; it
becomes the order's new deferred fee.  The old deferred fee is refunded
minus ``min(cancel fee * update fee / create fee, deferred fee)`` (core),
which is booked on the seller's statistics; an old fee paid in another
asset is refunded in that asset minus the same share rounded up (to the
asset's ``accumulated_fees``), its core value returning to the fee pool.
"""

from nodeapi.chain.errors import InvalidOperation, OperationRefused
from nodeapi.chain.evaluators.context import VOID, ApplyContext
from nodeapi.chain.balances import adjust_balance
from nodeapi.chain.evaluators.market import check_market
from nodeapi.chain.market.limits import core_in_orders
from nodeapi.chain.market.margin import apply_order
from nodeapi.chain.market.take_profit import (
    canonical_actions, check_update_actions, linked_compatible)
from nodeapi.protocol.asset import amount_of, core, equal
from nodeapi.chain.fees import charge_statistics
from nodeapi.protocol.fee_schedule import operation_fee
from nodeapi.protocol.times import parse_time
from nodeapi.protocol.config import CORE_ASSET


def _fail(message: str):
    raise InvalidOperation(message)


def _fee_of(ctx: ApplyContext, op_type: int, body: dict) -> int:
    op = [op_type, dict(body, fee=core(0))]
    return operation_fee(op, ctx.parameters["current_fees"], ctx.prefix)


def _refund_deferred_fee(ctx: ApplyContext, order: dict) -> None:
    """graphene ``process_deferred_fee`` (module docstring)."""
    state = ctx.state
    old_deferred = int(order.get("deferred_fee", 0))
    if old_deferred <= 0:
        return
    deferred = old_deferred
    paid = dict(order.get("deferred_paid_fee") or core(0))
    paid["amount"] = amount_of(paid)
    originally_paid = paid["amount"]
    seller = order["seller"]
    cancel_fee = _fee_of(ctx, 2, {"fee_paying_account": seller, "order": order["id"],
                                  "extensions": []})
    if cancel_fee > 0:
        create_fee = _fee_of(ctx, 1, {"seller": seller,
                                      "amount_to_sell": core(1),
                                      "min_to_receive": core(1),
                                      "expiration": "2030-01-01T00:00:00",
                                      "fill_or_kill": False, "extensions": {}})
        if create_fee > 0:
            update_fee = _fee_of(ctx, 77, {"seller": seller, "order": order["id"],
                                           "extensions": []})
            cancel_fee = cancel_fee * update_fee // create_fee
        cancel_fee = min(cancel_fee, deferred)
    if cancel_fee > 0:
        charge_statistics(state, seller, cancel_fee)
        deferred -= cancel_fee
        if paid["amount"] > 0:
            share = (paid["amount"] * cancel_fee + old_deferred - 1) // old_deferred
            dyn = state.modify(state.objects[paid["asset_id"]]["dynamic_asset_data_id"])
            dyn["accumulated_fees"] = int(dyn["accumulated_fees"]) + share
            paid["amount"] -= share
    if originally_paid == 0:
        adjust_balance(state, seller, CORE_ASSET, deferred)
    else:
        adjust_balance(state, seller, paid["asset_id"], paid["amount"])
        dyn = state.modify(state.objects[paid["asset_id"]]["dynamic_asset_data_id"])
        dyn["fee_pool"] = int(dyn["fee_pool"]) + deferred


def limit_order_update(ctx: ApplyContext, data: dict) -> list:
    """limit_order_update (77): checks and effects of the reference's
    evaluator (module docstring); the updated order then matches the
    book."""
    state = ctx.state
    actions = data.get("on_fill")
    check_update_actions(state, actions)
    order = state.find(data["order"])
    if order is None:
        raise OperationRefused("limit_order_update", "nonexist_order",
                               "Limit order ${oid} does not exist, cannot update",
                               {"oid": data["order"]})
    if data["seller"] != order["seller"]:
        raise OperationRefused("limit_order_update", "owner_mismatch",
                               "Limit order ${oid} is owned by someone else, cannot update",
                               {"oid": data["order"]})
    sell_price = order["sell_price"]
    base_id, quote_id = sell_price["base"]["asset_id"], sell_price["quote"]["asset_id"]
    for_sale = int(order["for_sale"])
    new_price, delta = data.get("new_price"), data.get("delta_amount_to_sell")
    change = amount_of(delta) if delta is not None else 0
    if new_price is not None:
        if (new_price["base"]["asset_id"], new_price["quote"]["asset_id"]) != (base_id, quote_id):
            _fail("Cannot update limit order with incompatible price")
        most = max(for_sale, amount_of(sell_price["base"])) + change
        if amount_of(new_price["base"]) > most:
            _fail("The base amount in the new price cannot be greater than the estimated "
                  "maximum amount for sale")
    if delta is not None:
        if delta["asset_id"] != base_id:
            _fail("Cannot update limit order with incompatible asset")
        if change < 0 and for_sale <= -change:
            _fail("Cannot deduct all or more from order than order contains")
    if new_price is not None or change < 0:
        price = new_price or sell_price
        receives = (for_sale + change) * amount_of(price["quote"]) \
            // amount_of(price["base"])
        if receives <= 0:
            _fail("Cannot update limit order: order becomes too small; cancel order instead")
    if data.get("new_expiration") is not None and parse_time(data["new_expiration"]) < ctx.now:
        _fail("Cannot update limit order to expire in the past")
    check_market(state, data["seller"], state.objects[base_id], state.objects[quote_id],
                 named=False)
    if change:
        adjust_balance(state, data["seller"], base_id, -change)
        core_in_orders(state, data["seller"], base_id, change)
    _refund_deferred_fee(ctx, order)
    if actions is not None:
        actions = canonical_actions(actions)
    linked = order.get("take_profit_order_id")
    unlink = linked is not None and (
        (not ctx.skip_limit_order_price_check and new_price is not None
         and not equal(new_price, sell_price)) or not linked_compatible(order, actions))
    if unlink:
        state.modify(linked).pop("take_profit_order_id", None)
    obj = state.modify(order["id"])
    if new_price is not None:
        obj["sell_price"] = {side: dict(new_price[side], amount=amount_of(new_price[side]))
                             for side in ("base", "quote")}
    obj["for_sale"] = for_sale + change
    if data.get("new_expiration") is not None:
        obj["expiration"] = parse_time(data["new_expiration"])
    obj["deferred_fee"] = ctx.core_fee_paid
    obj["deferred_paid_fee"] = (dict(ctx.fee_paid) if ctx.fee_paid["asset_id"] != CORE_ASSET
                                else core(0))
    if actions is not None:
        obj["on_fill"] = actions
    if unlink:
        obj.pop("take_profit_order_id", None)
    apply_order(ctx, order["id"])
    return VOID
