"""Balances and supply: the one place an account's balance of an asset
(2.5.N) and an asset's ``current_supply`` (2.3.N) change.

Reference: bitshares-core libraries/chain/db_balance.cpp
(``database::adjust_balance``) and the evaluators that modify
``asset_dynamic_data_object::current_supply`` (asset_evaluator.cpp issue
and reserve, market_evaluator.cpp borrow, db_market.cpp settlement and
fills, liquidity_pool_evaluator.cpp, db_maint.cpp budget).
"""

from nodeapi.chain.errors import InsufficientBalance
from nodeapi.chain.state import ObjectStore
from nodeapi.protocol.config import CORE_ASSET


def adjust_balance(state: ObjectStore, account_id: str, asset_id: str, delta: int) -> None:
    """Add ``delta`` satoshis of ``asset_id`` to the account's 2.5.N balance
    (created on first credit); a core balance's ``maintenance_flag`` is set
    (graphene ``account_balance_object::adjust_balance``) for
    :func:`refresh_core_in_balance`; raises :class:`InsufficientBalance`
    with graphene's text ("Assert Exception: abo->get_balance() >= -delta:
    Insufficient Balance: init0's balance of 1 TEST is less than required 2
    TEST")."""
    if delta == 0:
        return
    bid = state.balance_by_owner.get(account_id, {}).get(asset_id)
    if bid is None:
        if delta < 0:
            raise _insufficient(state, "delta.amount > 0", account_id, 0, asset_id, -delta)
        state.create("2.5", {"owner": account_id, "asset_type": asset_id, "balance": delta,
                             "maintenance_flag": asset_id == CORE_ASSET})
        return
    have = state.objects[bid]["balance"]
    if have + delta < 0:
        raise _insufficient(state, "abo->get_balance() >= -delta", account_id, have, asset_id,
                            -delta)
    balance = state.modify(bid)
    balance["balance"] = have + delta
    if asset_id == CORE_ASSET:
        balance["maintenance_flag"] = True


def _insufficient(state: ObjectStore, expression: str, account_id: str, have: int,
                  asset_id: str, required: int) -> InsufficientBalance:
    """graphene ``database::adjust_balance``'s refusal, ``FC_ASSERT(
    <expression>, "Insufficient Balance: ${a}'s balance of ${b} is less than
    required ${r}" )`` with the account's name and pretty amounts."""
    values = {"a": state.objects[account_id]["name"],
              "b": to_pretty_string(state, have, asset_id),
              "r": to_pretty_string(state, required, asset_id)}
    error = InsufficientBalance(
        f"Assert Exception: {expression}: Insufficient Balance: {values['a']}'s balance of "
        f"{values['b']} is less than required {values['r']}")
    error.details = values
    return error


def adjust_supply(state: ObjectStore, asset_id: str, delta: int) -> dict:
    """Add ``delta`` satoshis to the asset's ``current_supply`` (its dynamic
    data 2.3.N; negative to burn), the one place supply changes (graphene
    modifies ``asset_dynamic_data_object::current_supply`` in the issue,
    reserve, borrow, settle, pool and budget paths); returns the modified
    dynamic data object.  Bounds (max_supply, non-negative) are the
    caller's checks, as in the reference's evaluators."""
    dyn = state.modify(state.objects[asset_id]["dynamic_asset_data_id"])
    dyn["current_supply"] = int(dyn["current_supply"]) + delta
    return dyn


def refresh_core_in_balance(state: ObjectStore) -> None:
    """At maintenance, before the vote tally (graphene
    ``perform_account_maintenance``, db_maint.cpp): every core balance whose
    ``maintenance_flag`` is set (it changed since the last maintenance)
    is copied to its owner's statistics ``core_in_balance`` and the flag
    cleared.  Between maintenances ``core_in_balance`` is the core balance
    as of the last one ("Only updates on maintenance", account_object.hpp)."""
    objects = state.objects
    for assets in state.balance_by_owner.values():
        bid = assets.get(CORE_ASSET)
        if bid is None or not objects[bid]["maintenance_flag"]:
            continue
        balance = state.modify(bid)
        balance["maintenance_flag"] = False
        stats = objects[objects[balance["owner"]]["statistics"]]
        if stats["core_in_balance"] != balance["balance"]:
            state.modify(stats["id"])["core_in_balance"] = balance["balance"]


def to_pretty_string(state: ObjectStore, amount: int, asset_id: str) -> str:
    """graphene ``database::to_pretty_string`` (db_balance.cpp) with
    ``asset_object::amount_to_string``: ``amount`` satoshis of ``asset_id``
    in whole units, the decimals written only when not all zero and then
    all of them, and the symbol: ``2000000`` of TEST (precision 5) is
    ``"20 TEST"``, ``1234500`` is ``"12.34500 TEST"``, ``-5`` is
    ``"-0.00005 TEST"``.  The texts of the reference's refusals use it."""
    asset = state.objects[asset_id]
    scale = 10 ** int(asset["precision"])
    amount = int(amount)
    whole = abs(amount) // scale * (-1 if amount < 0 else 1)
    text = str(whole)
    decimals = abs(amount) % scale
    if decimals:
        if amount < 0 and whole == 0:
            text = "-0"
        text += "." + str(scale + decimals)[1:]
    return f"{text} {asset['symbol']}"
