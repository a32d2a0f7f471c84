"""Take-profit orders (bitshares-core 7.0, hardfork core-2535): a limit
order whose ``on_fill`` holds a ``create_take_profit_order_action`` sends,
each time it is filled, part of what it received back to the market at a
spread from its own price.

Reference: bitshares-core libraries/chain/db_market.cpp
(``process_limit_order_on_fill``, ``fill_limit_order``,
``cleanup_and_remove_limit_order``), db_block.cpp
(``try_push_virtual_operation``, ``undo_session_nesting_guard``) and
market_evaluator.cpp (the ``on_fill`` checks of both evaluators'
``do_evaluate``, ``limit_order_update_evaluator::is_linked_tp_order_compatible``).

When an order with an action receives ``R`` (after the market fee) from a
fill, before the fill's bookkeeping of the order ends:

- size = ``ceil(R * size_percent / 10000)`` of the received asset;
- expiration = head block time + ``expiration_seconds``, or the maximum
  time (2106-02-07T06:28:15) when that would pass it;
- the fee is the fee schedule's fee of the operation in core, or through
  ``fee_asset_id``'s core exchange rate rounded up; the seller pays it like
  any fee (the new order keeps it as its deferred fee);
- without a linked order (``take_profit_order_id``) a limit_order_create
  is applied for the seller: it sells the size for
  ``ceil(size * ~sell_price * 10000 / (10000 + spread_percent))`` (the
  price of ``price * ratio_type``), carries the action on when ``repeat``
  is set, matches the book like any new order, and its id becomes the link
  of both orders (when the filled order remains);
- with a linked order a limit_order_update adds the size to it and sets
  the expiration; when the linked order is newer than the filled one (it
  was made by it) its price becomes ``total / ceil(total * spread price)``
  for its new total for sale; the update does not unlink the orders for
  its price change.

Each is applied as a virtual operation in a nested undo session, recorded
before the operations it causes (fills of the new order) with its result.
When it fails (fee, balance, authorization, an amount beyond
GRAPHENE_MAX_SHARE_SUPPLY, nesting deeper than twice the active witnesses)
nothing of it stays, no object id is used, and the fill goes on without it.
Removing an order unlinks the order linked to it.
"""

from twisted.logger import Logger

from nodeapi.chain.errors import ChainError, InvalidOperation
from nodeapi.protocol.fee_schedule import operation_fee
from nodeapi.errors import ProtocolError
from nodeapi.protocol.asset import (
    asset, core, invert, less, make_price, mul_up, multiply_and_round_up, times_ratio)
from nodeapi.protocol.composite import Vector
from nodeapi.protocol.config import CORE_ASSET, GRAPHENE_100_PERCENT, MAX_SHARE_SUPPLY, MAX_TIME
from nodeapi.protocol.ids import instance_number
from nodeapi.protocol.operations.market import LIMIT_ORDER_AUTO_ACTION
from nodeapi.protocol.serialize import pack, unpack
from nodeapi.protocol.times import format_time
from nodeapi.protocol.validation import validate_operation

log = Logger()

_ACTIONS = Vector(LIMIT_ORDER_AUTO_ACTION)


def canonical_actions(actions) -> list:
    """An ``on_fill`` list (wire JSON as a client sent it) in the chain's
    form: ``[[0, {"fee_asset_id", "spread_percent", "size_percent",
    "expiration_seconds", "repeat", "extensions"}]]`` with integers and
    booleans (read back from its serialization)."""
    return unpack(_ACTIONS, pack(_ACTIONS, actions))


def _check_fee_asset(state, actions: list) -> None:
    if state.find(actions[0][1]["fee_asset_id"]) is None:
        raise InvalidOperation("Fee asset does not exist")


def check_create_actions(state, actions) -> None:
    """limit_order_create's ``on_fill`` (None when absent): exactly one
    action whose fee asset exists.

    :raises InvalidOperation: with the reference's texts."""
    if actions is None:
        return
    if len(actions) != 1:
        raise InvalidOperation("The on_fill action list must contain only one action until "
                               "expanded in a future hardfork")
    _check_fee_asset(state, actions)


def check_update_actions(state, actions) -> None:
    """limit_order_update's ``on_fill`` (None when absent): zero or one
    action, whose fee asset exists.

    :raises InvalidOperation: with the reference's texts."""
    if actions is None:
        return
    if len(actions) > 1:
        raise InvalidOperation("The on_fill action list must contain zero or one action until "
                               "expanded in a future hardfork")
    if actions:
        _check_fee_asset(state, actions)


def linked_compatible(order: dict, actions) -> bool:
    """``is_linked_tp_order_compatible``: may ``order`` keep its link when
    an update sets its ``on_fill`` to ``actions`` (None: unchanged)?  Not
    when an action is removed or added, nor when ``spread_percent`` or
    ``repeat`` change."""
    if actions is None:
        return True
    old = order.get("on_fill") or []
    if not actions or not old:
        return not actions and not old
    new_action, old_action = actions[0][1], old[0][1]
    return (int(new_action["spread_percent"]) == int(old_action["spread_percent"])
            and bool(new_action["repeat"]) == bool(old_action["repeat"]))


def unlink(state, order: dict) -> None:
    """``cleanup_and_remove_limit_order``'s first part: the order linked to
    ``order`` (about to be removed) forgets the link."""
    linked = order.get("take_profit_order_id")
    if linked is not None and linked in state.objects:
        state.modify(linked).pop("take_profit_order_id", None)


def _expiration(now: int, seconds: int) -> str:
    return format_time(now + seconds if MAX_TIME - seconds > now else MAX_TIME)


def _fee(ctx, op: list, fee_asset_id: str) -> dict:
    """``calculate_fee(op)``, through the fee asset's core exchange rate
    rounded up when it is not the core asset."""
    core_amount = operation_fee(op, ctx.parameters["current_fees"], ctx.prefix)
    if fee_asset_id == CORE_ASSET:
        return core(core_amount)
    fee = multiply_and_round_up(core(core_amount), ctx.state.objects[fee_asset_id]["options"]
                                ["core_exchange_rate"])
    _bounded(fee["amount"])
    return fee


def _bounded(amount: int) -> int:
    if amount > MAX_SHARE_SUPPLY:
        raise InvalidOperation(f"result <= GRAPHENE_MAX_SHARE_SUPPLY: {amount} is beyond the "
                               f"maximum share supply")
    return amount


def _spread_price(order: dict, action: dict) -> dict:
    """``(~sell_price) * ratio_type(10000, 10000 + spread_percent)``."""
    return times_ratio(invert(order["sell_price"]), GRAPHENE_100_PERCENT,
                       GRAPHENE_100_PERCENT + int(action["spread_percent"]))


def _not_matching(order: dict, back: dict) -> None:
    """The reference's defensive check that the take-profit price ``back``
    (sell asset of ``order`` per its received asset, inverted) stays above
    ``order``'s own price."""
    if not less(order["sell_price"], back):
        raise InvalidOperation("Internal error: the take profit order should not match the "
                               "current order")


def push_nested(ctx, op: list, skip_price_check: bool = False) -> list:
    """``try_push_virtual_operation``: validate ``op``, pay its fee and
    apply it in a nested undo session of ``ctx``'s state, as a fresh
    evaluation (not proposed; ``skip_price_check`` is the reference's
    ``skip_limit_order_price_check``); it is recorded among the virtual
    operations before those it caused; applied by ``ctx.apply_operation``
    (the registry's, handed over by the chain).  Returns its result.

    :raises ChainError: or a ProtocolError; then nothing of it stays."""
    validate_operation(op)
    state = ctx.state
    ctx.open_nested_session()
    saved = (ctx.core_fee_paid, ctx.fee_paid, ctx.fee_payer, ctx.proposed,
             ctx.skip_limit_order_price_check)
    at = len(ctx.virtual_ops)
    state.begin()
    try:
        ctx.proposed, ctx.skip_limit_order_price_check = False, skip_price_check
        result = ctx.apply_operation(ctx, op)
    except BaseException:
        state.rollback()
        del ctx.virtual_ops[at:]
        raise
    finally:
        (ctx.core_fee_paid, ctx.fee_paid, ctx.fee_payer, ctx.proposed,
         ctx.skip_limit_order_price_check) = saved
        ctx.nested_sessions -= 1
    state.commit()
    ctx.virtual_ops.insert(at, (op, result))
    return result


def _update_linked(ctx, order: dict, action: dict, size: int, expiration: str) -> None:
    recv = order["sell_price"]["quote"]["asset_id"]
    linked = order["take_profit_order_id"]
    body = {"fee": core(0), "seller": order["seller"],
            "order": linked, "delta_amount_to_sell": asset(size, recv),
            "new_expiration": expiration, "extensions": []}
    body["fee"] = _fee(ctx, [77, body], action["fee_asset_id"])
    if instance_number(linked) > instance_number(order["id"]):
        total = size + int(ctx.state.objects[linked]["for_sale"])
        receive = _bounded(mul_up(total, recv, _spread_price(order, action)))
        new_price = make_price(total, recv, receive, order["sell_price"]["base"]["asset_id"])
        _not_matching(order, invert(new_price))
        body = {"fee": body["fee"], "seller": body["seller"], "order": linked,
                "new_price": new_price, "delta_amount_to_sell": body["delta_amount_to_sell"],
                "new_expiration": expiration, "extensions": []}
    push_nested(ctx, [77, body], skip_price_check=True)


def _create(ctx, order: dict, action: dict, size: int, expiration: str) -> str:
    recv = order["sell_price"]["quote"]["asset_id"]
    sell = order["sell_price"]["base"]["asset_id"]
    body = {"fee": core(0), "seller": order["seller"],
            "amount_to_sell": asset(size, recv),
            "min_to_receive": asset(1, sell),
            "expiration": expiration, "fill_or_kill": False,
            "extensions": {"on_fill": order["on_fill"]} if action["repeat"] else {}}
    body["fee"] = _fee(ctx, [1, body], action["fee_asset_id"])
    receive = _bounded(mul_up(size, recv, _spread_price(order, action)))
    body["min_to_receive"] = asset(receive, sell)
    _not_matching(order, make_price(receive, sell, size, recv))
    return push_nested(ctx, [1, body])[1]


def process_on_fill(ctx, order_id: str, received: int) -> str | None:
    """``process_limit_order_on_fill``: the take-profit action of order
    ``order_id`` (still in the book) after it received ``received`` of its
    receiving asset, net of the market fee (module docstring).  Returns the
    id of a take-profit order it created, else None (no action, an update,
    or a failure, which is logged and leaves nothing)."""
    order = ctx.state.objects[order_id]
    if not order.get("on_fill"):
        return None
    action = order["on_fill"][0][1]
    size = -(-received * int(action["size_percent"]) // GRAPHENE_100_PERCENT)
    if size <= 0:
        return None
    expiration = _expiration(ctx.now, int(action["expiration_seconds"]))
    try:
        if order.get("take_profit_order_id") is not None:
            _update_linked(ctx, order, action, size, expiration)
            return None
        return _create(ctx, order, action, size, expiration)
    except (ChainError, ProtocolError) as exc:
        log.warn("Block {block_num}: on_fill of limit order {order_id} not processed: {error}",
                 block_num=ctx.block_num, order_id=order_id, error=str(exc))
        return None
