"""Withdraw permissions: withdraw_permission_create (25), _update (26),
_claim (27), _delete (28), objects 1.12.N, and their removal at expiry.

Graphene reference: libraries/chain/withdraw_permission_evaluator.cpp,
withdraw_permission_object.hpp (``available_this_period``),
db_update.cpp (``update_withdraw_permissions``).

Object (wire, FC_REFLECT order): ``{id, withdraw_from_account,
authorized_account, withdrawal_limit: {amount, asset_id},
withdrawal_period_sec, period_start_time, expiration,
claimed_this_period}``; ``expiration = period_start_time +
periods_until_expiration * withdrawal_period_sec``.

Period logic: at head time ``t`` the amount still available is the whole
``withdrawal_limit`` once ``t >= period_start_time +
withdrawal_period_sec`` (a later period), else ``withdrawal_limit -
claimed_this_period`` (at least 0).  A claim first moves
``period_start_time`` forward by the whole periods elapsed; within the same
period it adds to ``claimed_this_period``, in a new one it starts it over.
Permissions with ``expiration <= head block time`` are removed after each
block (:func:`update_withdraw_permissions`).  Failures raise
:class:`~nodeapi.chain.errors.InvalidOperation` with graphene's
``FC_ASSERT`` texts.
"""

from nodeapi.protocol.ids import instance_number
from nodeapi.chain.errors import fc_assert
from nodeapi.chain.evaluators.context import VOID, ApplyContext
from nodeapi.chain.balances import adjust_balance
from nodeapi.chain.whitelist import is_authorized_asset
from nodeapi.protocol.times import parse_time
from nodeapi.protocol.flags import TRANSFER_RESTRICTED
from nodeapi.protocol.asset import amount_of



def available_this_period(permit: dict, now: int) -> int:
    """graphene ``withdraw_permission_object::available_this_period``: the
    satoshis of ``withdrawal_limit`` that may still be claimed at ``now``."""
    limit = amount_of(permit["withdrawal_limit"])
    if now >= permit["period_start_time"] + int(permit["withdrawal_period_sec"]):
        return limit
    return max(limit - int(permit["claimed_this_period"]), 0)


def _check_terms(ctx: ApplyContext, data: dict, start_cmp: str) -> tuple:
    """The checks create and update share; returns ``(start, expiration)``."""
    state = ctx.state
    start = parse_time(data["period_start_time"])
    period = int(data["withdrawal_period_sec"])
    fc_assert(data["withdrawal_limit"]["asset_id"] in state.objects,
              "d.find(op.withdrawal_limit.asset_id)")
    if start_cmp == ">":
        fc_assert(start > ctx.now, "op.period_start_time > d.head_block_time()")
    else:
        fc_assert(start >= ctx.now, "op.period_start_time >= d.head_block_time()")
    expiration = start + int(data["periods_until_expiration"]) * period
    fc_assert(expiration > ctx.now, "op.period_start_time + op.periods_until_expiration * "
              "op.withdrawal_period_sec > d.head_block_time()")
    fc_assert(period >= int(ctx.parameters["block_interval"]),
              "op.withdrawal_period_sec >= d.get_global_properties().parameters.block_interval")
    return start, expiration


def withdraw_permission_create(ctx: ApplyContext, data: dict) -> list:
    """withdraw_permission_create (25): result ``[1, "1.12.N"]``."""
    state = ctx.state
    fc_assert(data["withdraw_from_account"] in state.objects,
              "d.find(op.withdraw_from_account)")
    fc_assert(data["authorized_account"] in state.objects, "d.find(op.authorized_account)")
    start, expiration = _check_terms(ctx, data, ">")
    permit = state.create("1.12", {
        "withdraw_from_account": data["withdraw_from_account"],
        "authorized_account": data["authorized_account"],
        "withdrawal_limit": {"amount": amount_of(data["withdrawal_limit"]),
                             "asset_id": data["withdrawal_limit"]["asset_id"]},
        "withdrawal_period_sec": int(data["withdrawal_period_sec"]),
        "period_start_time": start,
        "expiration": expiration,
        "claimed_this_period": 0,
    })
    return [1, permit["id"]]


def _permit(ctx: ApplyContext, oid: str, data: dict) -> dict:
    """The permission ``oid``, checked to join the operation's two accounts."""
    permit = ctx.state.require(oid)
    fc_assert(permit["authorized_account"] == data["authorized_account"],
              "permit.authorized_account == op.authorized_account")
    fc_assert(permit["withdraw_from_account"] == data["withdraw_from_account"],
              "permit.withdraw_from_account == op.withdraw_from_account")
    return permit


def withdraw_permission_update(ctx: ApplyContext, data: dict) -> list:
    """withdraw_permission_update (26): new limit, period, start and
    expiration (``claimed_this_period`` is kept); result void."""
    permit = _permit(ctx, data["permission_to_update"], data)
    start, expiration = _check_terms(ctx, data, ">=")
    permit = ctx.state.modify(permit["id"])
    permit.update({
        "period_start_time": start, "expiration": expiration,
        "withdrawal_limit": {"amount": amount_of(data["withdrawal_limit"]),
                             "asset_id": data["withdrawal_limit"]["asset_id"]},
        "withdrawal_period_sec": int(data["withdrawal_period_sec"]),
    })
    return VOID


def withdraw_permission_claim(ctx: ApplyContext, data: dict) -> list:
    """withdraw_permission_claim (27): move ``amount_to_withdraw`` from the
    giver to the authorized account within this period's allowance (module
    docstring); both accounts must be authorized to hold the asset
    (:func:`~nodeapi.chain.whitelist.is_authorized_asset`; graphene
    ``withdraw_permission_claim_evaluator::do_evaluate``, its texts);
    result void."""
    state, now = ctx.state, ctx.now
    permit = state.require(data["withdraw_permission"])
    amount = data["amount_to_withdraw"]
    value, asset_id = amount_of(amount), amount["asset_id"]
    fc_assert(permit["expiration"] > now, "permit.expiration > head_block_time")
    fc_assert(permit["authorized_account"] == data["withdraw_to_account"],
              "permit.authorized_account == op.withdraw_to_account")
    fc_assert(permit["withdraw_from_account"] == data["withdraw_from_account"],
              "permit.withdraw_from_account == op.withdraw_from_account")
    start = permit["period_start_time"]
    fc_assert(start <= now, "permit.period_start_time <= head_block_time")
    fc_assert(asset_id == permit["withdrawal_limit"]["asset_id"]
              and value <= available_this_period(permit, now),
              "op.amount_to_withdraw <= permit.available_this_period( head_block_time )")
    fc_assert(state.balance(data["withdraw_from_account"], asset_id) >= value,
              "d.get_balance(op.withdraw_from_account, op.amount_to_withdraw.asset_id) >= "
              "op.amount_to_withdraw")
    asset = state.require(asset_id)
    if int(asset["options"]["flags"]) & TRANSFER_RESTRICTED:
        fc_assert(asset["issuer"] in (permit["authorized_account"],
                                      permit["withdraw_from_account"]),
                  "_asset.issuer == permit.authorized_account || _asset.issuer == "
                  "permit.withdraw_from_account",
                  f"Asset {asset_id} '{asset['symbol']}' has transfer_restricted flag enabled")
    to = state.require(permit["authorized_account"])
    fc_assert(is_authorized_asset(state, to["id"], asset), "is_authorized_asset( d, to, _asset )",
              f"Account {to['id']} '{to['name']}' is unauthorized to transact asset {asset_id} "
              f"'{asset['symbol']}' due to whitelist / blacklist")
    frm = state.require(data["withdraw_from_account"])
    fc_assert(is_authorized_asset(state, frm["id"], asset), "from_is_authorized",
              f"Account {frm['id']} '{frm['name']}' is unauthorized to withdraw asset "
              f"{asset_id} '{asset['symbol']}' due to whitelist / blacklist")
    period = int(permit["withdrawal_period_sec"])
    periods = (now - start) // period
    permit = state.modify(permit["id"])
    permit["period_start_time"] = start + periods * period
    permit["claimed_this_period"] = (int(permit["claimed_this_period"]) + value if periods == 0
                                     else value)
    adjust_balance(state, data["withdraw_from_account"], asset_id, -value)
    adjust_balance(state, data["withdraw_to_account"], asset_id, value)
    return VOID


def withdraw_permission_delete(ctx: ApplyContext, data: dict) -> list:
    """withdraw_permission_delete (28): remove the permission; result void."""
    permit = _permit(ctx, data["withdrawal_permission"], data)
    ctx.state.remove(permit["id"])
    return VOID


def update_withdraw_permissions(state, now: int) -> None:
    """graphene ``database::update_withdraw_permissions``: remove every
    1.12.N with ``expiration <= now`` (the head block time)."""
    if not state.withdraw_permission_ids:  # none: the usual block
        return
    for oid in sorted(state.withdraw_permission_ids,
                      key=lambda o: instance_number(o)):
        if state.objects[oid]["expiration"] <= now:
            state.remove(oid)
