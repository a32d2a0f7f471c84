"""Liquidity pools: liquidity_pool_create (59), _delete (60), _deposit (61),
_withdraw (62), _exchange (63) and _update (75); objects 1.19.N.

Graphene reference: libraries/chain/liquidity_pool_evaluator.cpp,
liquidity_pool_object.hpp (``virtual_value`` = balance_a * balance_b, a
128-bit value written as a decimal string), with every hardfork passed (the
2350 market white/black lists apply to exchanges, 2604's pool update).

Object (wire): ``{id, asset_a, asset_b, balance_a, balance_b, share_asset,
taker_fee_percent, withdrawal_fee_percent, virtual_value}``; the share
asset carries ``for_liquidity_pool`` while bound.  Percentages are in
1/10000 (GRAPHENE_100_PERCENT).

Arithmetic (integers, as the reference):

- first deposit: the owner only; shares = max(amount_a, amount_b), the pool
  takes both amounts;
- later deposits: shares = min(supply * a / balance_a, supply * b /
  balance_b, max_supply - supply), the pool takes ceil(shares * balance /
  supply) of each asset;
- withdraw: the whole supply takes the whole pool without fee; otherwise
  each asset ``share * balance // supply`` minus the withdrawal fee
  ``that * withdrawal_fee_percent // 10000`` (which stays in the pool);
- exchange of ``x`` of asset A (B alike): the selling asset's maker market
  fee comes off ``x``; the pool keeps ``x'``, pays ``balance_b -
  ceil(virtual_value / (balance_a + x'))`` minus the pool's taker fee
  (``delta * taker_fee_percent // 10000``, kept in the pool), then the
  receiving asset's taker market fee comes off; the result is
  ``generic_exchange_operation_result {paid, received, fees: [maker market
  fee, taker market fee, pool taker fee]}``.
"""

from nodeapi.chain.errors import InvalidOperation, OperationRefused, fc_assert
from nodeapi.chain.evaluators.context import VOID, ApplyContext, set_asset_member
from nodeapi.chain.balances import adjust_balance, adjust_supply
from nodeapi.chain.market.limits import calculate_market_fee, pay_market_fees
from nodeapi.chain.whitelist import is_authorized_asset
from nodeapi.protocol.flags import DISABLE_NEW_SUPPLY
from nodeapi.protocol.asset import amount_of, asset, percent_of

KIND = "1.19"


def _asset(amount: int, asset_id: str) -> dict:
    return asset(amount, asset_id)


def _dyn(state, asset: dict) -> dict:
    return state.objects[asset["dynamic_asset_data_id"]]


def _supply(state, asset: dict) -> int:
    return int(_dyn(state, asset)["current_supply"])


def _set_balances(state, pool_id: str, balance_a: int, balance_b: int) -> None:
    pool = state.modify(pool_id)
    pool["balance_a"], pool["balance_b"] = balance_a, balance_b
    pool["virtual_value"] = str(balance_a * balance_b)


def _owner_check(state, pool: dict, account: str) -> dict:
    share = state.objects[pool["share_asset"]]
    fc_assert(share["issuer"] == account, "_share_asset->issuer == op.account",
              "The account is not the owner of the liquidity pool")
    return share


def _authorized(state, account: str, pool: dict, share: bool = True) -> None:
    """The account's white/black list standing for the pool's assets
    (``is_authorized_asset``), with the reference's texts."""
    checks = ([("share_asset", "the share asset")] if share else []) + [
        ("asset_a", "asset A"), ("asset_b", "asset B")]
    for field, name in checks:
        if not is_authorized_asset(state, account, state.objects[pool[field]]):
            raise InvalidOperation(f"The account is unauthorized by {name}")


def liquidity_pool_create(ctx: ApplyContext, data: dict) -> list:
    """liquidity_pool_create (59): bind an unissued user-issued asset of the
    account as the share asset of a new pool; result a
    ``generic_operation_result``."""
    state = ctx.state
    state.require(data["asset_a"])
    state.require(data["asset_b"])
    share = state.require(data["share_asset"])
    fc_assert(share["issuer"] == data["account"], "_share_asset->issuer == op.account",
              "Only the asset owner can set an asset as the share asset of a liquidity pool")
    fc_assert(not share.get("bitasset_data_id"), "!_share_asset->is_market_issued()",
              "Can not specify a market-issued asset as the share asset of a liquidity pool")
    fc_assert(not share.get("for_liquidity_pool"),
              "!_share_asset->is_liquidity_pool_share_asset()",
              "The share asset is already bound to another liquidity pool")
    fc_assert(_supply(state, share) == 0,
              "_share_asset->dynamic_data(d).current_supply == 0",
              "Current supply of the share asset needs to be zero")
    pool = state.create(KIND, {
        "asset_a": data["asset_a"], "asset_b": data["asset_b"], "balance_a": 0,
        "balance_b": 0, "share_asset": share["id"],
        "taker_fee_percent": int(data["taker_fee_percent"]),
        "withdrawal_fee_percent": int(data["withdrawal_fee_percent"]), "virtual_value": "0"})
    set_asset_member(state, share["id"], "for_liquidity_pool", pool["id"])
    return [3, {"new_objects": [pool["id"]], "updated_objects": [share["id"]],
                "removed_objects": []}]


def liquidity_pool_delete(ctx: ApplyContext, data: dict) -> list:
    """liquidity_pool_delete (60): an empty pool, by its owner."""
    state = ctx.state
    pool = state.require(data["pool"])
    fc_assert(int(pool["balance_a"]) == 0 and int(pool["balance_b"]) == 0,
              "_pool->balance_a == 0 && _pool->balance_b == 0", "Can not delete a non-empty pool")
    share = _owner_check(state, pool, data["account"])
    state.modify(share["id"]).pop("for_liquidity_pool", None)
    state.remove(pool["id"])
    return [3, {"new_objects": [], "updated_objects": [share["id"]],
                "removed_objects": [pool["id"]]}]


def liquidity_pool_update(ctx: ApplyContext, data: dict) -> list:
    """liquidity_pool_update (75): new taker / withdrawal fee percentages,
    by the owner; the taker fee only while the withdrawal fee is (or
    becomes) zero."""
    state = ctx.state
    pool = state.require(data["pool"])
    _owner_check(state, pool, data["account"])
    taker, withdrawal = data.get("taker_fee_percent"), data.get("withdrawal_fee_percent")
    if taker is not None:
        fc_assert(int(pool["withdrawal_fee_percent"]) == 0
                  or (withdrawal is not None and int(withdrawal) == 0),
                  "0 == _pool->withdrawal_fee_percent || ( op.withdrawal_fee_percent.valid() "
                  "&& 0 == *op.withdrawal_fee_percent )",
                  "Taker fee percent can only be updated if withdrawal fee percent is zero or "
                  "withdrawal fee percent is to be updated to zero at the same time")
    obj = state.modify(pool["id"])
    if taker is not None:
        obj["taker_fee_percent"] = int(taker)
    if withdrawal is not None:
        obj["withdrawal_fee_percent"] = int(withdrawal)
    return VOID


def liquidity_pool_deposit(ctx: ApplyContext, data: dict) -> list:
    """liquidity_pool_deposit (61): module docstring arithmetic."""
    state = ctx.state
    pool = state.require(data["pool"])
    a, b = data["amount_a"], data["amount_b"]
    fc_assert(a["asset_id"] == pool["asset_a"], "op.amount_a.asset_id == _pool->asset_a",
              "Asset type A mismatch")
    fc_assert(b["asset_id"] == pool["asset_b"], "op.amount_b.asset_id == _pool->asset_b",
              "Asset type B mismatch")
    share = state.objects[pool["share_asset"]]
    fc_assert(not int(share["options"]["flags"]) & DISABLE_NEW_SUPPLY,
              "share_asset_obj.can_create_new_supply()",
              "Can not create new supply for the share asset")
    balance_a, balance_b = int(pool["balance_a"]), int(pool["balance_b"])
    supply, max_supply = _supply(state, share), int(share["options"]["max_supply"])
    if balance_a == 0:
        fc_assert(share["issuer"] == data["account"], "share_asset_obj.issuer == op.account",
                  "The initial deposit can only be done by the pool owner")
    _authorized(state, data["account"], pool)
    fc_assert(supply < max_supply,
              "_share_asset_dyn_data->current_supply < share_asset_obj.options.max_supply",
              "Can not create new supply for the share asset")
    amount_a, amount_b = amount_of(a), amount_of(b)
    if balance_a == 0:
        shares = max(amount_a, amount_b)
        fc_assert(shares <= max_supply, "share_amount <= share_asset_obj.options.max_supply",
                  "For initial deposit, each amount of the two assets in the pool should not "
                  "be greater than the maximum supply of the share asset")
        take_a, take_b = amount_a, amount_b
    else:
        shares = min(supply * amount_a // balance_a, supply * amount_b // balance_b,
                     max_supply - supply)
        fc_assert(shares > 0, "new_supply > 0", "Aborting due to zero outcome")
        take_a = (shares * balance_a + supply - 1) // supply
        take_b = (shares * balance_b + supply - 1) // supply
    adjust_balance(state, data["account"], pool["asset_a"], -take_a)
    adjust_balance(state, data["account"], pool["asset_b"], -take_b)
    adjust_balance(state, data["account"], share["id"], shares)
    _set_balances(state, pool["id"], balance_a + take_a, balance_b + take_b)
    adjust_supply(state, share["id"], shares)
    return [4, {"paid": [_asset(take_a, pool["asset_a"]), _asset(take_b, pool["asset_b"])],
                "received": [_asset(shares, share["id"])], "fees": []}]


def liquidity_pool_withdraw(ctx: ApplyContext, data: dict) -> list:
    """liquidity_pool_withdraw (62): module docstring arithmetic."""
    state = ctx.state
    pool = state.require(data["pool"])
    amount = data["share_amount"]
    fc_assert(amount["asset_id"] == pool["share_asset"],
              "op.share_amount.asset_id == _pool->share_asset", "Share asset type mismatch")
    balance_a, balance_b = int(pool["balance_a"]), int(pool["balance_b"])
    fc_assert(balance_a > 0 and balance_b > 0, "_pool->balance_a > 0 && _pool->balance_b > 0",
              "The pool has not been initialized")
    share = state.objects[pool["share_asset"]]
    _authorized(state, data["account"], pool)
    supply, shares = _supply(state, share), amount_of(amount)
    fc_assert(supply >= shares, "_share_asset_dyn_data->current_supply >= op.share_amount.amount",
              "Can not withdraw an amount that is more than the current supply")
    if shares == supply:
        pays_a, pays_b, fee_a, fee_b = balance_a, balance_b, 0, 0
    else:
        percent = int(pool["withdrawal_fee_percent"])
        gross_a, gross_b = shares * balance_a // supply, shares * balance_b // supply
        fee_a, fee_b = percent_of(gross_a, percent), percent_of(gross_b, percent)
        pays_a, pays_b = gross_a - fee_a, gross_b - fee_b
        fc_assert(pays_a > 0 or pays_b > 0, "a128 > 0 || b128 > 0", "Aborting due to zero outcome")
    adjust_balance(state, data["account"], share["id"], -shares)
    if pays_a:
        adjust_balance(state, data["account"], pool["asset_a"], pays_a)
    if pays_b:
        adjust_balance(state, data["account"], pool["asset_b"], pays_b)
    adjust_supply(state, share["id"], -shares)
    _set_balances(state, pool["id"], balance_a - pays_a, balance_b - pays_b)
    return [4, {"paid": [_asset(shares, share["id"])],
                "received": [_asset(pays_a, pool["asset_a"]), _asset(pays_b, pool["asset_b"])],
                "fees": [_asset(fee_a, pool["asset_a"]), _asset(fee_b, pool["asset_b"])]}]


def _market_lists(state, asset_a: dict, asset_b: dict) -> None:
    """The assets' market white/black lists (core-2350)."""
    for mine, other in ((asset_a, asset_b), (asset_b, asset_a)):
        opts = mine["options"]
        pair = f"The {asset_a['symbol']}:{asset_b['symbol']} market"
        if opts.get("whitelist_markets") and other["id"] not in opts["whitelist_markets"]:
            raise InvalidOperation(f"{pair} has not been whitelisted by asset {mine['symbol']}")
        if other["id"] in (opts.get("blacklist_markets") or ()):
            raise InvalidOperation(f"{pair} has been blacklisted by asset {mine['symbol']}")


def liquidity_pool_exchange(ctx: ApplyContext, data: dict) -> list:
    """liquidity_pool_exchange (63): module docstring arithmetic; raises
    "Unable to exchange at expected price" below ``min_to_receive``."""
    state = ctx.state
    pool = state.require(data["pool"])
    balance_a, balance_b = int(pool["balance_a"]), int(pool["balance_b"])
    fc_assert(balance_a > 0 and balance_b > 0, "_pool->balance_a > 0 && _pool->balance_b > 0",
              "The pool has not been initialized")
    sell, want = data["amount_to_sell"], data["min_to_receive"]
    selling_a = sell["asset_id"] == pool["asset_a"] and want["asset_id"] == pool["asset_b"]
    selling_b = sell["asset_id"] == pool["asset_b"] and want["asset_id"] == pool["asset_a"]
    fc_assert(selling_a or selling_b, "( op.amount_to_sell.asset_id == _pool->asset_a && ... )",
              "Asset type mismatch")
    asset_a, asset_b = state.objects[pool["asset_a"]], state.objects[pool["asset_b"]]
    _authorized(state, data["account"], pool, share=False)
    _market_lists(state, asset_a, asset_b)
    amount = amount_of(sell)
    maker_fee = calculate_market_fee(state, sell["asset_id"], amount, True)
    fc_assert(maker_fee < amount, "_maker_market_fee < op.amount_to_sell",
              "Aborting since the maker market fee of the selling asset is too high")
    pool_receives = amount - maker_fee
    virtual = balance_a * balance_b
    if selling_a:
        new_a = balance_a + pool_receives
        delta = balance_b - (virtual + new_a - 1) // new_a
    else:
        new_b = balance_b + pool_receives
        delta = balance_a - (virtual + new_b - 1) // new_b
    pool_fee = percent_of(delta, int(pool["taker_fee_percent"]))
    pool_pays = delta - pool_fee
    taker_fee = calculate_market_fee(state, want["asset_id"], pool_pays, False)
    receives = pool_pays - taker_fee
    if receives < amount_of(want):
        raise OperationRefused("liquidity_pool_exchange", "unfillable_price",
                               "Unable to exchange at expected price")
    account = data["account"]
    adjust_balance(state, account, sell["asset_id"], -amount)
    adjust_balance(state, account, want["asset_id"], receives)
    # the pool's side is the share asset's issuer (graphene passes it as
    # the seller for the fee sharing), the taker's the account
    share_issuer = state.objects[pool["share_asset"]]["issuer"]
    pay_market_fees(state, sell["asset_id"], amount, True, share_issuer, maker_fee)
    pay_market_fees(state, want["asset_id"], pool_pays, False, account, taker_fee)
    if selling_a:
        _set_balances(state, pool["id"], balance_a + pool_receives, balance_b - pool_pays)
    else:
        _set_balances(state, pool["id"], balance_a - pool_pays, balance_b + pool_receives)
    return [4, {"paid": [_asset(amount, sell["asset_id"])],
                "received": [_asset(receives, want["asset_id"])],
                "fees": [_asset(maker_fee, sell["asset_id"]),
                         _asset(taker_fee, want["asset_id"]),
                         _asset(pool_fee, want["asset_id"])]}]
