"""Limit orders in the matching engine: market fees, filling, culling and
cancelling 1.7.N orders, and the match of two limit orders.

Reference: bitshares-core libraries/chain/db_market.cpp
(``calculate_market_fee``, ``pay_market_fees``, ``fill_limit_order``,
``maybe_cull_small_order``, ``cancel_limit_order``,
``match_limit_normal_limit``, ``pay_order``), with the hardforks of the
current chain (342 rounding, 555 taker culling, 604 fee refunds in the paid
asset).  The whole market fee goes to the asset's ``accumulated_fees`` (no
BSIP 86 network share, no referral rewards: README).
"""

from nodeapi.chain.evaluators.context import VOID, ApplyContext, adjust_balance
from nodeapi.chain.fees import charge_statistics, core_fee
from nodeapi.chain.market.prices import mul_down, mul_up

_CHARGE_MARKET_FEE = 0x01


def core_in_orders(state, seller: str, asset_id: str, delta: int) -> None:
    if asset_id == "1.3.0" and delta:
        stats = state.modify(state.objects[seller]["statistics"])
        stats["total_core_in_orders"] += delta


def calculate_market_fee(state, asset_id: str, amount: int, is_maker: bool) -> int:
    """graphene ``calculate_market_fee``: the issuer's cut of ``amount``."""
    asset = state.objects[asset_id]
    opts = asset["options"]
    if not int(opts.get("flags", 0)) & _CHARGE_MARKET_FEE:
        return 0
    percent = int(opts.get("market_fee_percent", 0))
    ext = opts.get("extensions") or {}
    if not is_maker and isinstance(ext, dict) and ext.get("taker_fee_percent") is not None:
        percent = int(ext["taker_fee_percent"])
    fee = amount * percent // 10000
    return min(fee, int(opts.get("max_market_fee", 0)))


def record_fill(ctx: ApplyContext, order_id: str, account: str, pays: tuple, receives: tuple,
                fee: int, fill_price: dict, is_maker: bool, fee_asset: str | None = None) -> None:
    """The virtual fill_order (4) of an order (limit 1.7, call 1.8 or
    settle 1.4): ``pays``/``receives`` are ``(amount, asset id)``; the fee
    is in the received asset unless ``fee_asset`` says otherwise (a margin
    call's fee is collateral, graphene ``fill_order_operation``)."""
    ctx.virtual_ops.append(([4, {
        "fee": {"amount": fee, "asset_id": fee_asset or receives[1]},
        "order_id": order_id,
        "account_id": account,
        "pays": {"amount": pays[0], "asset_id": pays[1]},
        "receives": {"amount": receives[0], "asset_id": receives[1]},
        "fill_price": fill_price,
        "is_maker": is_maker,
    }], VOID))


def accumulate_fee(state, asset_id: str, fee_asset: str, amount: int) -> None:
    """graphene ``asset_object::accumulate_fee``: ``amount`` of
    ``fee_asset`` joins ``asset_id``'s ``accumulated_fees`` (its own asset)
    or ``accumulated_collateral_fees`` (its backing asset)."""
    if amount <= 0:
        return
    dyn = state.modify(state.objects[asset_id]["dynamic_asset_data_id"])
    field = "accumulated_fees" if fee_asset == asset_id else "accumulated_collateral_fees"
    dyn[field] = int(dyn.get(field, 0)) + amount


def pay_market_fees(state, recv_asset: str, receives: int, is_maker: bool) -> int:
    """graphene ``pay_market_fees`` (without the BSIP 86 shares): the
    market fee of ``receives`` of ``recv_asset`` joins its
    ``accumulated_fees``; returns it."""
    fee = calculate_market_fee(state, recv_asset, receives, is_maker)
    accumulate_fee(state, recv_asset, recv_asset, fee)
    return fee


def cancel_limit_order(state, order_id: str, virtual_ops, prefix: str = "TEST") -> dict:
    """graphene ``database::cancel_limit_order``: refund the remainder and
    the deferred fee of 1.7.N and remove it; returns the refunded
    ``{"amount", "asset_id"}``.  When ``virtual_ops`` is a list (automatic
    cancellation) the limit_order_cancel fee is first taken from the
    deferred fee (booked on the seller's statistics; in the paid asset, the
    proportional part rounded up goes to its ``accumulated_fees``) and the
    virtual operation ``(op, result)`` is appended."""
    order = state.objects[order_id]
    seller = order["seller"]
    deferred = int(order.get("deferred_fee", 0))
    paid = dict(order.get("deferred_paid_fee") or {"amount": 0, "asset_id": "1.3.0"})
    paid["amount"] = int(paid["amount"])
    vop = None
    if virtual_ops is not None:
        vop = [2, {"fee": {"amount": 0, "asset_id": "1.3.0"}, "fee_paying_account": seller,
                   "order": order_id, "extensions": []}]
        if deferred > 0:
            cancel_fee = min(core_fee(vop, state.objects["2.0.0"]["parameters"]["current_fees"],
                                      prefix), deferred)
            if cancel_fee > 0:
                charge_statistics(state, seller, cancel_fee)
                if paid["amount"] == 0:
                    vop[1]["fee"] = {"amount": cancel_fee, "asset_id": "1.3.0"}
                else:
                    in_paid = -(-paid["amount"] * cancel_fee // deferred)
                    dyn = state.objects[paid["asset_id"]]["dynamic_asset_data_id"]
                    state.modify(dyn)["accumulated_fees"] += in_paid
                    paid["amount"] -= in_paid
                    vop[1]["fee"] = {"amount": in_paid, "asset_id": paid["asset_id"]}
                deferred -= cancel_fee
    asset = order["sell_price"]["base"]["asset_id"]
    refunded = int(order["for_sale"])
    core_in_orders(state, seller, asset, -refunded)
    adjust_balance(state, seller, asset, refunded)
    if int((order.get("deferred_paid_fee") or {}).get("amount", 0)) == 0:
        adjust_balance(state, seller, "1.3.0", deferred)
    else:
        adjust_balance(state, seller, paid["asset_id"], paid["amount"])
        dyn = state.objects[paid["asset_id"]]["dynamic_asset_data_id"]
        state.modify(dyn)["fee_pool"] += deferred
    if vop is not None:
        virtual_ops.append((vop, VOID))
    state.remove(order_id)
    return {"amount": refunded, "asset_id": asset}


def maybe_cull(ctx: ApplyContext, order_id: str) -> bool:
    """graphene ``maybe_cull_small_order``: cancel an order that would
    receive nothing for its remainder; True when it did."""
    order = ctx.state.objects[order_id]
    if mul_down(int(order["for_sale"]), order["sell_price"]["base"]["asset_id"],
                order["sell_price"]) == 0:
        cancel_limit_order(ctx.state, order_id, ctx.virtual_ops, ctx.prefix)
        return True
    return False


def fill_limit_order(ctx: ApplyContext, order_id: str, pays: int, receives: int, price: dict,
                     cull_if_small: bool, is_maker: bool) -> bool:
    """graphene ``fill_limit_order``: pay the seller, record the fill, book
    the deferred fee; True when the order is gone."""
    state = ctx.state
    order = state.objects[order_id]
    seller = order["seller"]
    sell_asset = order["sell_price"]["base"]["asset_id"]
    recv_asset = order["sell_price"]["quote"]["asset_id"]
    fee = pay_market_fees(state, recv_asset, receives, is_maker)
    core_in_orders(state, seller, sell_asset, -pays)
    adjust_balance(state, seller, recv_asset, receives - fee)
    record_fill(ctx, order_id, seller, (pays, sell_asset), (receives, recv_asset), fee, price,
                is_maker)
    paid = order.get("deferred_paid_fee") or {}
    if int(paid.get("amount", 0)) > 0:
        dyn = state.objects[paid["asset_id"]]["dynamic_asset_data_id"]
        state.modify(dyn)["accumulated_fees"] += int(paid["amount"])
    charge_statistics(state, seller, int(order.get("deferred_fee", 0)))
    if pays == int(order["for_sale"]):
        state.remove(order_id)
        return True
    order = state.modify(order_id)
    order["for_sale"] = int(order["for_sale"]) - pays
    order["deferred_fee"] = 0
    order["deferred_paid_fee"] = dict(order["deferred_paid_fee"], amount=0)
    return maybe_cull(ctx, order_id) if cull_if_small else False


def match_limit_limit(ctx: ApplyContext, taker_id: str, maker_id: str) -> tuple:
    """graphene ``match_limit_normal_limit`` at the maker's price; returns
    ``(taker gone, maker gone)``."""
    state = ctx.state
    taker, maker = state.objects[taker_id], state.objects[maker_id]
    price = maker["sell_price"]
    x_asset, y_asset = price["quote"]["asset_id"], price["base"]["asset_id"]
    t_for_sale, m_for_sale = int(taker["for_sale"]), int(maker["for_sale"])
    cull_taker = False
    if t_for_sale <= mul_down(m_for_sale, y_asset, price):
        taker_receives = mul_down(t_for_sale, x_asset, price)
        if taker_receives == 0:
            return True, False  # paying something for nothing: culled by the caller
        maker_receives = mul_up(taker_receives, y_asset, price)
        cull_taker = True
    else:
        maker_receives = mul_down(m_for_sale, y_asset, price)
        taker_receives = mul_up(maker_receives, x_asset, price)
    taker_gone = fill_limit_order(ctx, taker_id, maker_receives, taker_receives, price, cull_taker, False)
    maker_gone = fill_limit_order(ctx, maker_id, taker_receives, maker_receives, price, True, True)
    return taker_gone, maker_gone
