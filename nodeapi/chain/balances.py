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


def adjust_balance(state: ObjectStore, account_id: str, asset_id: str, delta: int) -> None:
    """Add ``delta`` satoshis of ``asset_id`` to the account's 2.5.N balance
    (created on first credit); raises :class:`InsufficientBalance`."""
    if delta == 0:
        return
    bid = state.balance_by_owner.get(account_id, {}).get(asset_id)
    if bid is None:
        if delta < 0:
            raise _insufficient(state, account_id, asset_id, 0, -delta)
        state.create("2.5", {"owner": account_id, "asset_type": asset_id, "balance": delta,
                             "maintenance_flag": False})
        _core_in_balance(state, account_id, asset_id, delta)
        return
    have = state.objects[bid]["balance"]
    if have + delta < 0:
        raise _insufficient(state, account_id, asset_id, have, -delta)
    state.modify(bid)["balance"] = have + delta
    _core_in_balance(state, account_id, asset_id, have + delta)


def pretty_amount(state: ObjectStore, amount: int, asset_id: str) -> str:
    """``amount`` satoshis of ``asset_id`` in the asset's units with its
    symbol (``"12.5 TEST"``; graphene ``asset_object::amount_to_pretty_string``);
    the id when the asset is unknown."""
    asset = state.objects.get(asset_id)
    if asset is None:
        return f"{amount} {asset_id}"
    precision = int(asset["precision"])
    whole, frac = divmod(abs(amount), 10 ** precision)
    text = f"{whole}.{frac:0{precision}d}".rstrip("0").rstrip(".") if precision else str(whole)
    return f"{'-' if amount < 0 else ''}{text} {asset['symbol']}"


def _insufficient(state: ObjectStore, account_id: str, asset_id: str, have: int,
                  required: int) -> InsufficientBalance:
    """The overdraft error: nodeapi's text (ids and satoshis) first, as
    clients match it; its data (``details``) names the account and asset
    and gives both amounts in the asset's units, as bitshares-core's
    db_balance.cpp message does (account name, pretty amounts)."""
    error = InsufficientBalance(
        f"Insufficient Balance: {account_id}'s balance of {have} {asset_id} is less than "
        f"required {required} {asset_id}")
    account = state.objects.get(account_id)
    error.details = {"account": account_id, "account_name": account["name"] if account else None,
                     "asset": asset_id,
                     "symbol": (state.objects.get(asset_id) or {}).get("symbol"),
                     "balance": pretty_amount(state, have, asset_id),
                     "required": pretty_amount(state, required, asset_id)}
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


def _core_in_balance(state: ObjectStore, account_id: str, asset_id: str, value: int) -> None:
    """Mirror the core balance in statistics ``core_in_balance`` (graphene)."""
    if asset_id == "1.3.0":
        state.modify(state.objects[account_id]["statistics"])["core_in_balance"] = value
