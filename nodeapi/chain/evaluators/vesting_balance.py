"""Vesting balance evaluators: vesting_balance_create (32) and
vesting_balance_withdraw (33).

Graphene reference: libraries/chain/vesting_balance_evaluator.cpp; the
policies are :mod:`nodeapi.chain.vesting`'s.  A created balance 1.13.N has
``balance_type`` ``unspecified``; its policy comes from the operation's
initializer: linear (tag 0: ``begin_timestamp``, ``vesting_cliff_seconds``,
``vesting_duration_seconds``; ``begin_balance`` = the amount), cdd (tag 1:
``start_claim``, ``vesting_seconds``; no coin-seconds earned yet) or
instant (tag 2).
"""

from nodeapi.chain.errors import InvalidOperation, fc_assert
from nodeapi.chain.evaluators.context import VOID, ApplyContext
from nodeapi.chain.balances import adjust_balance
from nodeapi.chain.whitelist import is_authorized_asset
from nodeapi.chain.vesting import CDD, LINEAR, allowed_withdraw, withdraw
from nodeapi.protocol.times import format_time, parse_time
from nodeapi.protocol.flags import TRANSFER_RESTRICTED
from nodeapi.protocol.asset import amount_of, asset



def _policy(initializer: list, amount: int, now: int) -> list:
    tag, init = int(initializer[0]), initializer[1]
    if tag == LINEAR:
        return [LINEAR, {"begin_timestamp": parse_time(init["begin_timestamp"]),
                         "vesting_cliff_seconds": int(init["vesting_cliff_seconds"]),
                         "vesting_duration_seconds": int(init["vesting_duration_seconds"]),
                         "begin_balance": amount}]
    if tag == CDD:
        return [CDD, {"vesting_seconds": int(init["vesting_seconds"]),
                      "start_claim": parse_time(init["start_claim"]), "coin_seconds_earned": "0",
                      "coin_seconds_earned_last_update": now}]
    return [tag, {}]


def vesting_balance_create(ctx: ApplyContext, data: dict) -> list:
    """vesting_balance_create (32): move ``amount`` from ``creator`` into a
    new vesting balance of ``owner``; result ``[1, "1.13.N"]``.

    :raises UnknownObject: unknown creator, owner or asset.
    :raises InvalidOperation: amount not positive, a transfer restricted
        asset, or an asset the creator or the owner may not hold
        (:func:`~nodeapi.chain.whitelist.is_authorized_asset`), with the
        texts of graphene ``vesting_balance_create_evaluator::do_evaluate``.
    :raises InsufficientBalance: the creator lacks the amount."""
    state = ctx.state
    state.require(data["creator"])
    state.require(data["owner"])
    amount = amount_of(data["amount"])
    balance_asset = state.require(data["amount"]["asset_id"])
    if amount <= 0:
        raise InvalidOperation(f"Vesting amount must be positive, got {amount}")
    fc_assert(not int(balance_asset["options"]["flags"]) & TRANSFER_RESTRICTED,
              "!asset_obj.is_transfer_restricted()", "Asset has transfer_restricted flag enabled")
    fc_assert(is_authorized_asset(state, data["creator"], balance_asset),
              "is_authorized_asset( d, creator_account, asset_obj )",
              "The creator account is not allowed to transact the asset")
    fc_assert(is_authorized_asset(state, data["owner"], balance_asset),
              "is_authorized_asset( d, owner_account, asset_obj )",
              "The owner account is not allowed to transact the asset")
    adjust_balance(state, data["creator"], balance_asset["id"], -amount)
    vbo = state.create("1.13", {
        "owner": data["owner"], "balance": asset(amount, balance_asset["id"]),
        "policy": _policy(data["policy"], amount, ctx.now), "balance_type": "unspecified"})
    return [1, vbo["id"]]


def vesting_balance_withdraw(ctx: ApplyContext, data: dict) -> list:
    """vesting_balance_withdraw (33): ``owner`` takes ``amount`` (at most
    :func:`~nodeapi.chain.vesting.allowed_withdraw` at the head time) out of
    ``vesting_balance`` into its balance; a balance emptied stays.

    :raises UnknownObject: no such vesting balance.
    :raises InvalidOperation: another owner, another asset, or more than
        vested (graphene ``vesting_balance_withdraw_evaluator::do_evaluate``'s
        assertions, with the amounts)."""
    state = ctx.state
    vbo = state.require(data["vesting_balance"])
    fc_assert(vbo["owner"] == data["owner"], "op.owner == vbo.owner",
              f"Vesting balance {vbo['id']} belongs to {vbo['owner']}, not {data['owner']}")
    amount = amount_of(data["amount"])
    asset_id = vbo["balance"]["asset_id"]
    allowed = allowed_withdraw(vbo, ctx.now)
    # vesting_balance_evaluator.cpp: FC_ASSERT( vbo.is_withdraw_allowed( now,
    # op.amount ), "", ("now", now)("op", op)("vbo", vbo) )
    fc_assert(data["amount"]["asset_id"] == asset_id and amount <= allowed,
              "vbo.is_withdraw_allowed( now, op.amount )", "",
              {"now": format_time(ctx.now), "op": dict(data), "vbo": dict(vbo)})
    withdraw(state, vbo["id"], amount, ctx.now)
    adjust_balance(state, data["owner"], asset_id, amount)
    return VOID
