"""Balances and supply: the one place an account's balance of an asset
(2.5.N) and an asset's ``current_supply`` (2.3.N) change, and where an
account's statistics ``core_in_balance`` follows its core balance (at
each maintenance, as the reference keeps it).

Reference: bitshares-core libraries/chain/db_balance.cpp
(``database::adjust_balance``) and the evaluators that modify
``asset_dynamic_data_object::current_supply`` (asset_evaluator.cpp issue
and reserve, market_evaluator.cpp borrow, db_market.cpp settlement and
fills, liquidity_pool_evaluator.cpp, db_maint.cpp budget).
"""

from nodeapi.chain.errors import InsufficientBalance
from nodeapi.chain.state import ObjectStore
from nodeapi.protocol.asset import amount_to_string
from nodeapi.protocol.config import CORE_ASSET


def to_pretty_string(state: ObjectStore, amount: int, asset_id: str) -> str:
    """graphene ``database::to_pretty_string(asset)``: ``amount`` satoshis
    of ``asset_id`` in whole units with its symbol (``2000000, "1.3.0"`` ->
    ``"20 TEST"``; asset_object.cpp ``amount_to_pretty_string``), as the
    reference's error texts write amounts."""
    asset = state.objects[asset_id]
    return f"{amount_to_string(amount, int(asset['precision']))} {asset['symbol']}"


def overdraft_details(state: ObjectStore, account_id: str, asset_id: str, have: int,
                      required: int) -> dict:
    """The data of an "Insufficient Balance" error (its ``details``, sent
    as ``error.data.stack[0].data``): the account and asset ids beside the
    name and symbol, and both amounts in the asset's units - the text
    stays the reference's, which clients match."""
    return {"account": account_id, "account_name": state.objects[account_id]["name"],
            "asset": asset_id, "symbol": state.objects[asset_id]["symbol"],
            "balance": to_pretty_string(state, have, asset_id),
            "required": to_pretty_string(state, required, asset_id)}


def adjust_balance(state: ObjectStore, account_id: str, asset_id: str, delta: int) -> None:
    """Add ``delta`` satoshis of ``asset_id`` to the account's 2.5.N balance
    (created on first credit); a core balance that changes is flagged
    ``maintenance_flag`` (its owner's statistics ``core_in_balance`` follows
    it at the next maintenance: :func:`update_core_in_balances`; graphene
    ``account_balance_object::adjust_balance``).  Raises
    :class:`InsufficientBalance` with db_balance.cpp ``adjust_balance``'s
    assertion text, e.g. ``"Assert Exception: abo->get_balance() >= -delta:
    Insufficient Balance: init2's balance of 10 TEST is less than required
    20 TEST"`` (``delta.amount > 0`` when the account never held the
    asset); its ``details`` (the error's data) give the account and asset
    ids beside the name, symbol and both amounts."""
    if delta == 0:
        return
    bid = state.balance_by_owner.get(account_id, {}).get(asset_id)
    have = 0 if bid is None else state.objects[bid]["balance"]
    if have + delta < 0:
        expression = "delta.amount > 0" if bid is None else "abo->get_balance() >= -delta"
        name = state.objects[account_id]["name"]
        balance = to_pretty_string(state, have, asset_id)
        required = to_pretty_string(state, -delta, asset_id)
        error = InsufficientBalance(
            f"Assert Exception: {expression}: Insufficient Balance: "
            f"{name}'s balance of {balance} is less than required {required}")
        # the reference's format and its values (db_balance.cpp), beside ours
        error.fc_format = (f"{expression}: Insufficient Balance: ${{a}}'s balance of ${{b}} "
                           f"is less than required ${{r}}")
        error.details = dict(overdraft_details(state, account_id, asset_id, have, -delta),
                             a=name, b=balance, r=required)
        raise error
    if bid is None:
        state.create("2.5", {"owner": account_id, "asset_type": asset_id, "balance": delta,
                             "maintenance_flag": asset_id == CORE_ASSET})
        return
    balance = state.modify(bid)
    balance["balance"] = have + delta
    if asset_id == CORE_ASSET:
        balance["maintenance_flag"] = True


def update_core_in_balances(state: ObjectStore) -> None:
    """The start of a maintenance's account pass (graphene db_maint.cpp
    ``perform_account_maintenance``): each core balance flagged
    ``maintenance_flag`` since the last maintenance sets its owner's
    statistics ``core_in_balance`` and loses the flag.  The vote tally
    reads ``core_in_balance`` afterwards."""
    for bid in state.ids_of_type("2.5."):
        if state.objects[bid]["maintenance_flag"]:
            balance = state.modify(bid)
            balance["maintenance_flag"] = False
            owner = state.objects[balance["owner"]]
            state.modify(owner["statistics"])["core_in_balance"] = balance["balance"]


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
