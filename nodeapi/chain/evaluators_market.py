"""Market evaluators: limit_order_create (1) with matching, limit_order_cancel
(2); fills become virtual fill_order operations (4).

Matching (graphene db_market.cpp ``apply_order`` / ``match``, simplified to
user assets without market fees): a new order (taker) selling ``Xs`` of X for
at least ``Ym`` of Y crosses a resting order (maker) selling ``Ys`` of Y for at
least ``Xm`` of X when ``Xs * Ys >= Xm * Ym``.  Makers are taken best price
first (most Y per X), then oldest; each match fills at the maker's price,
the taker's fill first.  An order whose remainder would receive nothing is
cancelled and refunded.  Order expiration is checked when the order is
created; expired resting orders stay until cancelled.
"""

from fractions import Fraction

from nodeapi.chain.errors import InvalidOperation
from nodeapi.chain.evaluators import EVALUATORS, ApplyContext, adjust_balance
from nodeapi.chain.genesis import parse_time


def _core_in_orders(ctx: ApplyContext, seller: str, asset_id: str, delta: int) -> None:
    if asset_id == "1.3.0" and delta:
        stats = ctx.state.modify(ctx.state.objects[seller]["statistics"])
        stats["total_core_in_orders"] += delta


def _fill(ctx: ApplyContext, order: dict, pays: int, receives: int, price: dict,
          is_maker: bool) -> None:
    """Record a fill of ``order`` and credit the seller; removes a filled order."""
    state = ctx.state
    sell_asset = order["sell_price"]["base"]["asset_id"]
    recv_asset = order["sell_price"]["quote"]["asset_id"]
    adjust_balance(state, order["seller"], recv_asset, receives)
    _core_in_orders(ctx, order["seller"], sell_asset, -pays)
    op = [4, {
        "fee": {"amount": 0, "asset_id": recv_asset},
        "order_id": order["id"],
        "account_id": order["seller"],
        "pays": {"amount": pays, "asset_id": sell_asset},
        "receives": {"amount": receives, "asset_id": recv_asset},
        "fill_price": price,
        "is_maker": is_maker,
    }]
    ctx.virtual_ops.append((op, [0, {}]))
    left = int(order["for_sale"]) - pays
    base, quote = order["sell_price"]["base"], order["sell_price"]["quote"]
    if left == 0:
        state.remove(order["id"])
    elif left * int(quote["amount"]) // int(base["amount"]) == 0:
        state.remove(order["id"])  # dust: refund the remainder
        adjust_balance(state, order["seller"], sell_asset, left)
        _core_in_orders(ctx, order["seller"], sell_asset, -left)
    else:
        state.modify(order["id"])["for_sale"] = left


def _match(ctx: ApplyContext, taker_id: str) -> None:
    state = ctx.state
    taker = state.objects[taker_id]
    x_asset = taker["sell_price"]["base"]["asset_id"]
    y_asset = taker["sell_price"]["quote"]["asset_id"]
    xs, ym = int(taker["sell_price"]["base"]["amount"]), int(taker["sell_price"]["quote"]["amount"])
    makers = [state.objects[o] for o in state.orders_by_market.get((y_asset, x_asset), ())]
    makers = [m for m in makers
              if xs * int(m["sell_price"]["base"]["amount"])
              >= int(m["sell_price"]["quote"]["amount"]) * ym]
    makers.sort(key=lambda m: (-Fraction(int(m["sell_price"]["base"]["amount"]),
                                         int(m["sell_price"]["quote"]["amount"])),
                               int(m["id"].rsplit(".", 1)[1])))
    for maker in makers:
        taker = state.objects.get(taker_id)
        if taker is None:
            return
        ys, xm = int(maker["sell_price"]["base"]["amount"]), int(maker["sell_price"]["quote"]["amount"])
        t_for_sale, m_for_sale = int(taker["for_sale"]), int(maker["for_sale"])
        y_for_x = t_for_sale * ys // xm
        if y_for_x <= m_for_sale:
            taker_pays, taker_gets = t_for_sale, y_for_x
        else:
            taker_gets = m_for_sale
            taker_pays = -(-m_for_sale * xm // ys)
        if taker_gets == 0:
            break
        price = maker["sell_price"]
        _fill(ctx, taker, taker_pays, taker_gets, price, False)
        _fill(ctx, state.objects[maker["id"]], taker_gets, taker_pays, price, True)


def limit_order_create(ctx: ApplyContext, data: dict) -> list:
    """limit_order_create (1): escrow ``amount_to_sell``, match, rest the
    remainder as 1.7.N; result ``[1, "1.7.N"]``."""
    state = ctx.state
    sell, recv = data["amount_to_sell"], data["min_to_receive"]
    if int(sell["amount"]) <= 0 or int(recv["amount"]) <= 0:
        raise InvalidOperation("Order amounts must be positive")
    if sell["asset_id"] == recv["asset_id"]:
        raise InvalidOperation("An order must trade two different assets")
    state.require(sell["asset_id"])
    state.require(recv["asset_id"])
    if parse_time(data["expiration"]) <= ctx.now:
        raise InvalidOperation(f"Order expiration {data['expiration']} is in the past")
    amount = int(sell["amount"])
    adjust_balance(state, data["seller"], sell["asset_id"], -amount)
    _core_in_orders(ctx, data["seller"], sell["asset_id"], amount)
    order = state.create("1.7", {
        "expiration": data["expiration"],
        "seller": data["seller"],
        "for_sale": amount,
        "sell_price": {"base": {"amount": amount, "asset_id": sell["asset_id"]},
                       "quote": {"amount": int(recv["amount"]), "asset_id": recv["asset_id"]}},
        "deferred_fee": ctx.core_fee_paid,
        "deferred_paid_fee": {"amount": 0, "asset_id": "1.3.0"},
    })
    _match(ctx, order["id"])
    if data.get("fill_or_kill") and order["id"] in state.objects:
        raise InvalidOperation("fill_or_kill order was not completely filled")
    return [1, order["id"]]


def limit_order_cancel(ctx: ApplyContext, data: dict) -> list:
    """limit_order_cancel (2): refund the remainder to the seller; result
    ``[2, {"amount", "asset_id"}]`` (the refund)."""
    state = ctx.state
    order = state.require(data["order"])
    if order["seller"] != data["fee_paying_account"]:
        raise InvalidOperation(f"Order {order['id']} belongs to {order['seller']}")
    asset = order["sell_price"]["base"]["asset_id"]
    amount = int(order["for_sale"])
    state.remove(order["id"])
    adjust_balance(state, order["seller"], asset, amount)
    _core_in_orders(ctx, order["seller"], asset, -amount)
    return [2, {"amount": amount, "asset_id": asset}]


EVALUATORS.update({1: limit_order_create, 2: limit_order_cancel})
