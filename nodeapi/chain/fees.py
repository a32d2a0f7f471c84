"""The fee schedule: required fee of an operation, in core satoshis.

Graphene reference: ``fee_schedule::calculate_fee`` and each operation's
``calculate_fee`` (libraries/protocol/*.cpp), computed for every operation
type by :mod:`nodeapi.protocol.fee_schedule` from the parameters of
:mod:`nodeapi.protocol.fee_parameters`.  Fees paid in another asset are
converted through the asset's ``core_exchange_rate``.

Where fees go (graphene ``account_statistics_object::pay_fee`` /
``process_fees``, ``database::deposit_cashback``):

- :func:`charge_statistics`: a core fee is added to the payer's statistics
  ``pending_fees`` when it exceeds ``cashback_vesting_threshold`` of the
  global parameters, else to ``pending_vested_fees``.
- :func:`process_fees` (at maintenance): for each account with pending fees,
  ``lifetime_fees_paid`` grows by both pending amounts, which are reset to 0;
  each amount is split: ``network_fee_percentage`` to the core asset's
  ``accumulated_fees`` (2.3.0), ``lifetime_referrer_fee_percentage`` to the
  lifetime referrer, the rest between referrer (``referrer_rewards_percentage``)
  and registrar.  A referrer that is no longer a member is first replaced by
  the lifetime referrer.
- :func:`deposit_cashback`: the blockchain accounts 1.2.0-1.2.4 get no
  cashback, it returns to the reserve (2.3.0 ``current_supply`` decreases);
  other accounts get a cashback vesting balance 1.13.N (``balance_type``
  ``cashback``, coin-days-destroyed policy over
  ``cashback_vesting_period_seconds``), referenced by the account's
  ``cashback_vb`` and flagged by statistics ``has_cashback_vb``; the
  ``pending_fees`` share is deposited vesting, the ``pending_vested_fees``
  share already vested (``coin_seconds_earned`` credited in full).

The account registration fee scales with the registrations of a
maintenance interval (graphene ``account_create_evaluator::do_apply`` and
``perform_chain_maintenance``): :func:`scale_account_fee` after each
account_create, :func:`unscale_account_fee` at maintenance.

The maintenance budget (2.3.0 ``accumulated_fees`` back to the reserve,
witness pay) is :mod:`nodeapi.chain.maintenance`'s.
"""

from nodeapi.chain.balances import adjust_supply
from nodeapi.protocol.asset import percent_of
from nodeapi.protocol.config import BLOCKCHAIN_ACCOUNTS, CORE_ASSET
from nodeapi.chain.vesting import deposit_lazy_vesting
from nodeapi.chain.errors import InvalidOperation
from nodeapi.protocol.fee_parameters import DEFAULT_FEE_PARAMETERS, schedule_entry

ACCOUNT_CREATE = 5
_UINT64 = (1 << 64) - 1


def charge_statistics(state, account_id: str, core_fee: int) -> None:
    """Book ``core_fee`` (core satoshis) on the account's statistics object:
    ``pending_fees`` above ``cashback_vesting_threshold``, else
    ``pending_vested_fees`` (graphene ``account_statistics_object::pay_fee``)."""
    if core_fee == 0:
        return
    threshold = int(state.objects["2.0.0"]["parameters"].get("cashback_vesting_threshold", 0))
    stats = state.modify(state.objects[account_id]["statistics"])
    key = "pending_fees" if core_fee > threshold else "pending_vested_fees"
    stats[key] = int(stats[key]) + core_fee


def deposit_cashback(state, account_id: str, amount: int, require_vesting: bool,
                     now: int) -> None:
    """graphene ``database::deposit_cashback`` (module docstring): ``amount``
    core satoshis to the account's cashback vesting balance 1.13.N
    (:func:`nodeapi.chain.vesting.deposit_lazy_vesting` over
    ``cashback_vesting_period_seconds``), or back to the reserve for the
    blockchain accounts."""
    if amount == 0:
        return
    if account_id in BLOCKCHAIN_ACCOUNTS:
        adjust_supply(state, CORE_ASSET, -amount)
        return
    seconds = int(state.objects["2.0.0"]["parameters"].get(
        "cashback_vesting_period_seconds", 0))
    new_vb = deposit_lazy_vesting(state, state.objects[account_id].get("cashback_vb"), amount,
                                  seconds, "cashback", account_id, require_vesting, now)
    if new_vb is not None:
        state.modify(account_id)["cashback_vb"] = new_vb
        state.modify(state.objects[account_id]["statistics"])["has_cashback_vb"] = True


def _pay_out(state, account_id: str, total: int, require_vesting: bool, now: int) -> None:
    """Split one pending amount (graphene ``process_fees`` ``pay_out_fees``)."""
    if total == 0:
        return
    acc = state.objects[account_id]
    referrer = state.objects[acc["referrer"]]
    if now > referrer["membership_expiration_date"]:  # basic account
        acc = state.modify(account_id)
        acc["referrer"] = acc["lifetime_referrer"]
    network = percent_of(total, int(acc["network_fee_percentage"]))
    lifetime = percent_of(total, int(acc["lifetime_referrer_fee_percentage"]))
    referral = total - network - lifetime
    state.modify("2.3.0")["accumulated_fees"] += network
    referrer_cut = percent_of(referral, int(acc["referrer_rewards_percentage"]))
    deposit_cashback(state, acc["lifetime_referrer"], lifetime, require_vesting, now)
    deposit_cashback(state, acc["referrer"], referrer_cut, require_vesting, now)
    deposit_cashback(state, acc["registrar"], referral - referrer_cut, require_vesting, now)


def process_account_fees(state, account_id: str, now: int) -> None:
    """Pay out one account's pending fees (graphene
    ``account_statistics_object::process_fees``): both pending amounts are
    split as the module docstring says, ``lifetime_fees_paid`` grows by
    them and they are reset to 0.  Nothing happens when both are 0.  Used
    at maintenance (:func:`process_fees`) and by account_upgrade before the
    account becomes a lifetime member (account_evaluator.cpp
    ``account_upgrade_evaluator::do_apply``)."""
    sid = state.objects[account_id]["statistics"]
    stats = state.objects[sid]
    pending, vested = int(stats["pending_fees"]), int(stats["pending_vested_fees"])
    if pending <= 0 and vested <= 0:
        return
    _pay_out(state, account_id, pending, True, now)
    _pay_out(state, account_id, vested, False, now)
    stats = state.modify(sid)
    stats["lifetime_fees_paid"] = int(stats["lifetime_fees_paid"]) + pending + vested
    stats["pending_fees"] = 0
    stats["pending_vested_fees"] = 0


def process_fees(state, now: int) -> None:
    """Maintenance-time fee processing of every account's statistics with
    pending fees (:func:`process_account_fees`), in the order of the
    accounts' names: graphene ``perform_account_maintenance`` walks the
    statistics index ``by_maintenance_seq`` (need_maintenance, name), so
    the cashback vesting balances it creates are numbered in that order;
    ``now`` is the block time."""
    for name in sorted(state.account_by_name):
        process_account_fees(state, state.account_by_name[name], now)


# -- account registration fee scaling ----------------------------------------

def _shift_basic_fee(state, shift) -> None:
    """Replace account_create's ``basic_fee`` in the current fee schedule of
    2.0.0 by ``shift(basic_fee)`` (a uint64 in graphene: kept to 64 bits),
    copy-on-write.  The schedule must have an account_create entry (graphene
    ``fee_helper<account_create_operation>::get`` asserts it); raises
    :class:`InvalidOperation` otherwise."""
    gpo = state.modify("2.0.0")
    params = dict(gpo["parameters"])
    fees = dict(params["current_fees"])
    entries = list(fees.get("parameters") or ())
    for i, (kind, data) in enumerate(entries):
        if kind == ACCOUNT_CREATE:
            data = dict(data) if isinstance(data, dict) else {}
            basic = int(data.get("basic_fee",
                                 DEFAULT_FEE_PARAMETERS[ACCOUNT_CREATE]["basic_fee"]))
            data["basic_fee"] = shift(basic) & _UINT64
            entries[i] = [kind, data]
            break
    else:
        raise InvalidOperation("The fee schedule has no account_create_operation parameters "
                               "to scale")
    fees["parameters"] = entries
    params["current_fees"] = fees
    gpo["parameters"] = params


def scale_account_fee(state) -> None:
    """After an account registration (``accounts_registered_this_interval``
    already counts it): every ``accounts_per_fee_scale`` registrations of
    the interval, account_create's ``basic_fee`` is shifted left by
    ``account_fee_scale_bitshifts`` (graphene
    ``account_create_evaluator::do_apply``).  ``accounts_per_fee_scale`` 0
    (a division by zero in graphene) scales nothing."""
    params = state.objects["2.0.0"]["parameters"]
    per_scale = int(params.get("accounts_per_fee_scale", 0))
    bits = int(params.get("account_fee_scale_bitshifts", 0))
    registered = int(state.objects["2.1.0"]["accounts_registered_this_interval"])
    if per_scale == 0 or bits == 0 or registered % per_scale != 0:
        return
    _shift_basic_fee(state, lambda fee: fee << bits)


def unscale_account_fee(state) -> None:
    """At maintenance, before pending parameters apply: ``basic_fee`` is
    shifted right by ``account_fee_scale_bitshifts`` times
    ``accounts_registered_this_interval // accounts_per_fee_scale``
    (graphene ``perform_chain_maintenance``, "Remove scaling of account
    registration fee")."""
    params = state.objects["2.0.0"]["parameters"]
    per_scale = int(params.get("accounts_per_fee_scale", 0))
    bits = int(params.get("account_fee_scale_bitshifts", 0))
    registered = int(state.objects["2.1.0"]["accounts_registered_this_interval"])
    shift = bits * (registered // per_scale) if per_scale else 0
    if shift == 0 or schedule_entry(params["current_fees"], ACCOUNT_CREATE) is None:
        return
    _shift_basic_fee(state, lambda fee: fee >> shift)
