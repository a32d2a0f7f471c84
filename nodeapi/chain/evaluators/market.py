"""Market evaluators: limit_order_create (1) with matching, limit_order_cancel
(2), and the per-block sweep of expired orders; fills become virtual
fill_order operations (4), automatic cancellations virtual
limit_order_cancel operations (2).

Graphene reference: libraries/chain/market_evaluator.cpp and db_market.cpp
(``apply_order``, ``match_limit_normal_limit``, ``fill_limit_order``,
``maybe_cull_small_order``, ``cancel_limit_order``, ``calculate_market_fee``,
``pay_market_fees``), db_update.cpp (``clear_expired_orders``), with the
hardforks of the current chain (342 rounding, 555 taker culling, 604 fee
refunds in the paid asset).

Prices (graphene ``asset * price``): ``sell_price`` is ``base`` (sold) over
``quote`` (wanted); an amount of one side converts to the other side
rounded down, :func:`_mul_up` rounds up.

Rules modelled:

- Creation: ``expiration >= head block time``; the fee is not booked, the
  order carries it as ``deferred_fee`` (core value) and, when paid in
  another asset, ``deferred_paid_fee``.
- Matching: the taker crosses resting orders of the opposite side best
  price first (then oldest) at the maker's price.  When the taker is the
  smaller side it receives ``floor(for_sale * price)`` and pays
  ``ceil(receives / price)``; the remainder is culled.  Otherwise the maker
  receives ``floor(maker_for_sale / price)`` and pays
  ``ceil(that * price)``.  A partially filled order whose remainder would
  receive nothing is cancelled (virtual limit_order_cancel).
- Fills: the first fill books the deferred fee on the seller's statistics
  (and the paid fee on the fee asset's ``accumulated_fees``) and clears it.
  A received asset with the ``charge_market_fee`` flag keeps
  ``market_fee_percent`` (``taker_fee_percent`` of the options'
  extensions for the taker, when set) of the received amount, capped at
  ``max_market_fee``, in its ``accumulated_fees``; the fill's ``fee`` is
  that amount.
- Cancellation refunds the remainder and the deferred fee (in the paid
  asset, its core value back to that asset's pool); an automatic one
  (expiry, culling) first takes the limit_order_cancel fee, capped at the
  deferred fee.

Not modelled: margin calls and settled debt (no market-issued assets), the
maker fee discount (BSIP 85), the network share and referral rewards of
market fees (BSIP 86 / reward_percent): the whole market fee goes to the
asset's ``accumulated_fees``.
"""

from fractions import Fraction

from nodeapi.protocol.ids import instance_number
from nodeapi.chain.errors import InvalidOperation
from nodeapi.chain.evaluators.context import VOID, ApplyContext, adjust_balance
from nodeapi.chain.fees import charge_statistics, core_fee
from nodeapi.chain.genesis import parse_time
from nodeapi.chain.whitelist import is_authorized_asset

_CHARGE_MARKET_FEE = 0x01


def _mul_down(amount: int, price: dict, asset_id: str) -> int:
    """``amount`` of ``asset_id`` (one side of ``price``) in the other side's
    asset, rounded down (graphene ``asset * price``)."""
    base, quote = price["base"], price["quote"]
    if asset_id == base["asset_id"]:
        return amount * int(quote["amount"]) // int(base["amount"])
    return amount * int(base["amount"]) // int(quote["amount"])


def _mul_up(amount: int, price: dict, asset_id: str) -> int:
    """As :func:`_mul_down`, rounded up (``multiply_and_round_up``)."""
    base, quote = price["base"], price["quote"]
    if asset_id == base["asset_id"]:
        return -(-amount * int(quote["amount"]) // int(base["amount"]))
    return -(-amount * int(base["amount"]) // int(quote["amount"]))


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


def _maybe_cull(ctx: ApplyContext, order_id: str) -> bool:
    """graphene ``maybe_cull_small_order``: cancel an order that would
    receive nothing for its remainder; True when it did."""
    order = ctx.state.objects[order_id]
    if _mul_down(int(order["for_sale"]), order["sell_price"],
                 order["sell_price"]["base"]["asset_id"]) == 0:
        cancel_limit_order(ctx.state, order_id, ctx.virtual_ops, ctx.prefix)
        return True
    return False


def _fill(ctx: ApplyContext, order_id: str, pays: int, receives: int, price: dict,
          cull_if_small: bool, is_maker: bool) -> bool:
    """graphene ``fill_limit_order``: pay the seller, record the fill, book
    the deferred fee; True when the order is gone."""
    state = ctx.state
    order = state.objects[order_id]
    seller = order["seller"]
    sell_asset = order["sell_price"]["base"]["asset_id"]
    recv_asset = order["sell_price"]["quote"]["asset_id"]
    fee = calculate_market_fee(state, recv_asset, receives, is_maker)
    if fee:
        state.modify(state.objects[recv_asset]["dynamic_asset_data_id"])["accumulated_fees"] += fee
    core_in_orders(state, seller, sell_asset, -pays)
    adjust_balance(state, seller, recv_asset, receives - fee)
    ctx.virtual_ops.append(([4, {
        "fee": {"amount": fee, "asset_id": recv_asset},
        "order_id": order_id,
        "account_id": seller,
        "pays": {"amount": pays, "asset_id": sell_asset},
        "receives": {"amount": receives, "asset_id": recv_asset},
        "fill_price": price,
        "is_maker": is_maker,
    }], VOID))
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
    return _maybe_cull(ctx, order_id) if cull_if_small else False


def _match(ctx: ApplyContext, taker_id: str, maker_id: str) -> tuple:
    """graphene ``match_limit_normal_limit`` at the maker's price; returns
    ``(taker gone, maker gone)``."""
    state = ctx.state
    taker, maker = state.objects[taker_id], state.objects[maker_id]
    price = maker["sell_price"]
    x_asset, y_asset = price["quote"]["asset_id"], price["base"]["asset_id"]
    t_for_sale, m_for_sale = int(taker["for_sale"]), int(maker["for_sale"])
    cull_taker = False
    if t_for_sale <= _mul_down(m_for_sale, price, y_asset):
        taker_receives = _mul_down(t_for_sale, price, x_asset)
        if taker_receives == 0:
            return True, False  # paying something for nothing: culled by the caller
        maker_receives = _mul_up(taker_receives, price, y_asset)
        cull_taker = True
    else:
        maker_receives = _mul_down(m_for_sale, price, y_asset)
        taker_receives = _mul_up(maker_receives, price, x_asset)
    taker_gone = _fill(ctx, taker_id, maker_receives, taker_receives, price, cull_taker, False)
    maker_gone = _fill(ctx, maker_id, taker_receives, maker_receives, price, True, True)
    return taker_gone, maker_gone


def apply_order(ctx: ApplyContext, order_id: str) -> bool:
    """graphene ``apply_order``: match the new order against the book;
    True when it is gone (filled or culled)."""
    state = ctx.state
    order = state.objects[order_id]
    x_asset = order["sell_price"]["base"]["asset_id"]
    y_asset = order["sell_price"]["quote"]["asset_id"]
    xs, ym = int(order["sell_price"]["base"]["amount"]), int(order["sell_price"]["quote"]["amount"])
    makers = [state.objects[o] for o in state.orders_by_market.get((y_asset, x_asset), ())]
    makers = [m for m in makers
              if xs * int(m["sell_price"]["base"]["amount"])
              >= int(m["sell_price"]["quote"]["amount"]) * ym]
    makers.sort(key=lambda m: (-Fraction(int(m["sell_price"]["base"]["amount"]),
                                         int(m["sell_price"]["quote"]["amount"])),
                               instance_number(m["id"])))
    for maker in makers:
        taker_gone, maker_gone = _match(ctx, order_id, maker["id"])
        if taker_gone or not maker_gone:
            break
    if order_id not in state.objects:
        return True
    return _maybe_cull(ctx, order_id)


def check_market(state, seller: str, sell_asset: dict, recv_asset: dict) -> None:
    """The selling asset's market white/black lists and both assets' account
    lists (graphene ``limit_order_create_evaluator::do_evaluate``)."""
    opts = sell_asset["options"]
    if opts.get("whitelist_markets") and recv_asset["id"] not in opts["whitelist_markets"]:
        raise InvalidOperation("This market has not been whitelisted by the selling asset")
    if recv_asset["id"] in (opts.get("blacklist_markets") or ()):
        raise InvalidOperation("This market has been blacklisted by the selling asset")
    if not is_authorized_asset(state, seller, sell_asset):
        raise InvalidOperation("The account is not allowed to transact the selling asset")
    if not is_authorized_asset(state, seller, recv_asset):
        raise InvalidOperation("The account is not allowed to transact the receiving asset")


def refuse_take_profit(data: dict) -> None:
    """The ``on_fill`` take-profit actions of limit orders (core-2535,
    ``create_take_profit_order_action``) are not modelled by this chain: an
    order or update carrying one is refused rather than accepted without
    its take-profit order."""
    ext = data.get("extensions")
    on_fill = ext.get("on_fill") if isinstance(ext, dict) else data.get("on_fill")
    if on_fill:
        raise InvalidOperation("Take-profit on_fill actions of limit orders are not supported "
                               "by this node")


def limit_order_create(ctx: ApplyContext, data: dict) -> list:
    """limit_order_create (1): escrow ``amount_to_sell``, match, rest the
    remainder as 1.7.N with the deferred fee; result ``[1, "1.7.N"]``.
    Raises :class:`InvalidOperation` for an expiration before the head
    block time (graphene asserts ``expiration >= head_block_time()``)."""
    state = ctx.state
    refuse_take_profit(data)
    sell, recv = data["amount_to_sell"], data["min_to_receive"]
    if int(sell["amount"]) <= 0 or int(recv["amount"]) <= 0:
        raise InvalidOperation("Order amounts must be positive")
    if sell["asset_id"] == recv["asset_id"]:
        raise InvalidOperation("An order must trade two different assets")
    sell_asset = state.require(sell["asset_id"])
    recv_asset = state.require(recv["asset_id"])
    check_market(state, data["seller"], sell_asset, recv_asset)
    if parse_time(data["expiration"]) < ctx.now:
        raise InvalidOperation(f"Order expiration {data['expiration']} is before the head "
                               f"block time")
    amount = int(sell["amount"])
    adjust_balance(state, data["seller"], sell["asset_id"], -amount)
    core_in_orders(state, data["seller"], sell["asset_id"], amount)
    paid = ctx.fee_paid if ctx.fee_paid["asset_id"] != "1.3.0" else {"amount": 0,
                                                                      "asset_id": "1.3.0"}
    order = state.create("1.7", {
        "expiration": data["expiration"],
        "seller": data["seller"],
        "for_sale": amount,
        "sell_price": {"base": {"amount": amount, "asset_id": sell["asset_id"]},
                       "quote": {"amount": int(recv["amount"]), "asset_id": recv["asset_id"]}},
        "deferred_fee": ctx.core_fee_paid,
        "deferred_paid_fee": dict(paid),
    })
    gone = apply_order(ctx, order["id"])
    if data.get("fill_or_kill") and not gone:
        raise InvalidOperation("fill_or_kill order was not completely filled")
    return [1, order["id"]]


def limit_order_cancel(ctx: ApplyContext, data: dict) -> list:
    """limit_order_cancel (2): refund the remainder and the deferred fee to
    the seller; result ``[2, {"amount", "asset_id"}]`` (the refunded
    remainder)."""
    order = ctx.state.require(data["order"])
    if order["seller"] != data["fee_paying_account"]:
        raise InvalidOperation(f"Order {order['id']} belongs to {order['seller']}")
    return [2, cancel_limit_order(ctx.state, order["id"], None, ctx.prefix)]


def clear_expired_orders(state, now: int, prefix: str = "TEST") -> list:
    """graphene ``clear_expired_orders``: cancel every order with
    ``expiration <= now`` (by expiration, then id), each with a virtual
    limit_order_cancel; returns those ``[(op, result)]``."""
    expired = [o for ids in state.orders_by_seller.values() for o in ids
               if parse_time(state.objects[o]["expiration"]) <= now]
    expired.sort(key=lambda o: (parse_time(state.objects[o]["expiration"]),
                                instance_number(o)))
    vops: list = []
    for oid in expired:
        cancel_limit_order(state, oid, vops, prefix)
    return vops
