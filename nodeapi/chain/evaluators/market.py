"""Market evaluators: limit_order_create (1), limit_order_cancel (2), and
the per-block sweep of expired orders (virtual limit_order_cancel, 2).

The matching itself (fills, market fees, culling, margin calls of debt
positions a new order reaches) is :mod:`nodeapi.chain.market`.

Graphene reference: libraries/chain/market_evaluator.cpp
(``limit_order_create_evaluator``, ``limit_order_cancel_evaluator``),
db_update.cpp (``clear_expired_orders``).

- Creation: ``expiration >= head block time``; the fee is not booked, the
  order carries it as ``deferred_fee`` (core value) and, when paid in
  another asset, ``deferred_paid_fee``.
- Cancellation refunds the remainder and the deferred fee (in the paid
  asset, its core value back to that asset's pool); an automatic one
  (expiry, culling) first takes the limit_order_cancel fee, capped at the
  deferred fee.

Fills share market fees and give makers their creation fee discount as
:mod:`nodeapi.chain.market.limits` says; an order's ``on_fill`` take-profit
action runs at each fill as :mod:`nodeapi.chain.market.take_profit` says.
"""

from nodeapi.protocol.ids import instance_number
from nodeapi.chain.errors import InvalidOperation, OperationRefused, fc_assert
from nodeapi.chain.evaluators.context import ApplyContext
from nodeapi.chain.balances import adjust_balance
from nodeapi.protocol.times import parse_time
from nodeapi.chain.market.limits import cancel_limit_order, core_in_orders
from nodeapi.chain.market.margin import apply_order
from nodeapi.chain.market.take_profit import canonical_actions, check_create_actions
from nodeapi.chain.whitelist import is_authorized_asset
from nodeapi.protocol.asset import amount_of, asset
from nodeapi.protocol.config import CORE_ASSET


def check_market(state, seller: str, sell_asset: dict, recv_asset: dict,
                 named: bool = True) -> None:
    """The selling asset's market white/black lists and both assets' account
    lists, in graphene's order.  ``named`` (limit_order_create:
    ``limit_order_create_evaluator::do_evaluate``'s ``GRAPHENE_ASSERT``):
    :class:`~nodeapi.chain.errors.OperationRefused` with graphene's
    exception of each; else (limit_order_update:
    ``limit_order_update_evaluator::do_evaluate``'s plain ``FC_ASSERT``)
    an ``assert_exception`` with the same messages."""
    opts = sell_asset["options"]
    refusal = None
    if opts.get("whitelist_markets") and recv_asset["id"] not in opts["whitelist_markets"]:
        refusal = ("market_not_whitelisted",
                   "sell_asset.options.whitelist_markets.find( receive_asset_id ) != "
                   "sell_asset.options.whitelist_markets.end()",
                   "This market has not been whitelisted by the selling asset")
    elif recv_asset["id"] in (opts.get("blacklist_markets") or ()):
        refusal = ("market_blacklisted",
                   "sell_asset.options.blacklist_markets.find( receive_asset_id ) == "
                   "sell_asset.options.blacklist_markets.end()",
                   "This market has been blacklisted by the selling asset")
    elif not is_authorized_asset(state, seller, sell_asset):
        refusal = ("selling_asset_unauthorized", "is_authorized_asset( d, seller, sell_asset )",
                   "The account is not allowed to transact the selling asset")
    elif not is_authorized_asset(state, seller, recv_asset):
        refusal = ("receiving_asset_unauthorized",
                   "is_authorized_asset( d, seller, receive_asset )",
                   "The account is not allowed to transact the receiving asset")
    if refusal is None:
        return
    exception, expression, message = refusal
    if named:
        raise OperationRefused("limit_order_create", exception, message)
    fc_assert(False, expression, message)


def create_actions(data: dict):
    """limit_order_create's ``on_fill`` extension, None when absent."""
    ext = data.get("extensions")
    return ext.get("on_fill") if isinstance(ext, dict) else None


def limit_order_create(ctx: ApplyContext, data: dict) -> list:
    """limit_order_create (1): escrow ``amount_to_sell``, match, rest the
    remainder as 1.7.N with the deferred fee; result ``[1, "1.7.N"]``.
    The order has the fields of bitshares-core 7.x's ``limit_order_object``
    (market_object.hpp): ``filled_amount`` (what it sold so far, a
    decimal string), ``is_settled_debt`` (false: only the
    null account's settled-debt order of black swan response method 3 has
    it), ``on_fill`` (the operation's take-profit
    action, or empty) and, once a take-profit order is linked to it,
    ``take_profit_order_id``.
    Checks in graphene's order (``limit_order_create_evaluator::do_evaluate``,
    its texts): the expiration not before the head block time, an ``on_fill``
    that is one action naming an existing fee asset, the market lists and
    the account lists (:func:`check_market`), then the seller's balance of
    the sold asset (the fee is not taken yet:
    :func:`~nodeapi.chain.evaluators.registry.apply_operation`;
    ``limit_order_create_insufficient_balance`` "Insufficient balance:
    insufficient balance"; ``details``: ``balance``, ``amount_to_sell``);
    each refusal an :class:`OperationRefused` with the reference's name,
    code and text."""
    state = ctx.state
    actions = create_actions(data)
    check_create_actions(state, actions)
    sell, recv = data["amount_to_sell"], data["min_to_receive"]
    if amount_of(sell) <= 0 or amount_of(recv) <= 0:
        raise InvalidOperation("Order amounts must be positive")
    if sell["asset_id"] == recv["asset_id"]:
        raise InvalidOperation("An order must trade two different assets")
    expiration = parse_time(data["expiration"])
    fc_assert(expiration >= ctx.now,
              "op.expiration >= d.head_block_time()",
              f"Order expiration {data['expiration']} is before the head block time")
    sell_asset = state.require(sell["asset_id"])
    recv_asset = state.require(recv["asset_id"])
    check_market(state, data["seller"], sell_asset, recv_asset)
    amount = amount_of(sell)
    balance = state.balance(data["seller"], sell["asset_id"])
    if balance < amount:
        raise OperationRefused(
            "limit_order_create", "insufficient_balance", "insufficient balance",
            {"balance": asset(balance, sell["asset_id"]),
             "amount_to_sell": asset(amount, sell["asset_id"])})
    adjust_balance(state, data["seller"], sell["asset_id"], -amount)
    core_in_orders(state, data["seller"], sell["asset_id"], amount)
    paid = ctx.fee_paid if ctx.fee_paid["asset_id"] != CORE_ASSET else {"amount": 0,
                                                                      "asset_id": CORE_ASSET}
    order = state.create("1.7", {
        "expiration": expiration,
        "seller": data["seller"],
        "for_sale": amount,
        "sell_price": {"base": asset(amount, sell["asset_id"]),
                       "quote": asset(amount_of(recv), recv["asset_id"])},
        "filled_amount": "0",  # fc::uint128_t: a decimal string
        "deferred_fee": ctx.core_fee_paid,
        "deferred_paid_fee": dict(paid),
        "is_settled_debt": False,
        "on_fill": canonical_actions(actions) if actions else [],
    })
    gone = apply_order(ctx, order["id"])
    if data.get("fill_or_kill") and not gone:
        raise OperationRefused("limit_order_create", "kill_unfilled",
                               "Killing limit order ${op} due to unable to fill",
                               {"op": data})
    return [1, order["id"]]


def limit_order_cancel(ctx: ApplyContext, data: dict) -> list:
    """limit_order_cancel (2): refund the remainder and the deferred fee to
    the seller; result ``[2, {"amount", "asset_id"}]`` (the refunded
    remainder).  :class:`OperationRefused` with graphene
    ``limit_order_cancel_evaluator::do_evaluate``'s names and texts for an
    order that does not exist or is someone else's."""
    order = ctx.state.objects.get(data["order"])
    if order is None:
        raise OperationRefused("limit_order_cancel", "nonexist_order",
                               "Limit order ${oid} does not exist", {"oid": data["order"]})
    if order["seller"] != data["fee_paying_account"]:
        raise OperationRefused("limit_order_cancel", "owner_mismatch",
                               "Limit order ${oid} is owned by someone else",
                               {"oid": data["order"]})
    return [2, cancel_limit_order(ctx.state, order["id"], None, ctx.prefix)]


#: the earliest expiration of no order at all
_NEVER = float("inf")


def clear_expired_orders(state, now: int, prefix: str) -> list:
    """graphene ``clear_expired_orders``: cancel every order with
    ``expiration <= now`` (by expiration, then id), each with a virtual
    limit_order_cancel; returns those ``[(op, result)]``.  ``prefix`` is
    the chain's key prefix.  The store's ``order_expiry`` (the earliest
    expiration of an open order) spares the scan of every order in a block
    where none expires."""
    if not state.orders_by_seller:  # no orders: the usual block
        return []
    objects = state.objects
    if state.remote is None:  # a lazy fork's orders may load later: no cache
        soonest = state.order_expiry  # dropped by every change of an order
        if soonest is None:
            soonest = state.order_expiry = min(
                (objects[o]["expiration"] for ids in state.orders_by_seller.values()
                 for o in ids), default=_NEVER)
        if soonest > now:  # no order expires in this block
            return []
    expired = [o for ids in state.orders_by_seller.values() for o in ids
               if objects[o]["expiration"] <= now]
    expired.sort(key=lambda o: (state.objects[o]["expiration"], instance_number(o)))
    vops: list = []
    for oid in expired:
        cancel_limit_order(state, oid, vops, prefix)
    return vops
