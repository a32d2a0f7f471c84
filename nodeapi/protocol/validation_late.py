"""``validate()`` rules of operation types 43-77 (the later hardforks:
asset claims, bids, htlc, custom authorities, tickets, liquidity pools,
SameT funds, credit offers, limit_order_update), on wire (JSON) values.

Reference: bitshares-core libraries/protocol/asset_ops.cpp, market.cpp,
htlc.cpp, custom_authority.cpp, ticket.cpp, liquidity_pool.cpp,
samet_fund.cpp, credit_offer.cpp; messages are graphene's.  Used through
:func:`nodeapi.protocol.validation.validate_operation`.
"""

from nodeapi.protocol import validation_checks as c
from nodeapi.protocol.authorities import FEE_PAYER
from nodeapi.protocol.config import (
    COMMITTEE_ACCOUNT, RELAXED_COMMITTEE_ACCOUNT, TEMP_ACCOUNT, WITNESS_ACCOUNT)
from nodeapi.protocol.config import GRAPHENE_100_PERCENT, MAX_SHARE_SUPPLY
from nodeapi.protocol.ids import instance_number as instance
from nodeapi.protocol.validation_checks import amount, check, num

_NOT_NEGATIVE = "Fee should not be negative"
MAX_CREDIT_DEAL_DAYS = 380
CDAR_TYPE_COUNT = 3
TICKET_TYPE_COUNT = 5


def _fee(d, message: str = _NOT_NEGATIVE):
    c.fee_non_negative(d, message)


def _positive(d, field: str, message: str, fee_message: str = _NOT_NEGATIVE):
    _fee(d, fee_message)
    check(amount(d[field]) > 0, f"{field}.amount > 0", message)


def _claim_fees(d):
    _fee(d, "")
    check(amount(d["amount_to_claim"]) > 0, "amount_to_claim.amount > 0")
    ext = d.get("extensions")
    source = ext.get("claim_from_asset_id") if isinstance(ext, dict) else None
    if source is not None:
        check(source != d["amount_to_claim"]["asset_id"],
              "*extensions.value.claim_from_asset_id != amount_to_claim.asset_id")


def _bid_collateral(d):
    _fee(d, "")
    debt, collateral = amount(d["debt_covered"]), amount(d["additional_collateral"])
    check(debt == 0 or (debt > 0 and collateral > 0),
          "debt_covered.amount == 0 || (debt_covered.amount > 0 && "
          "additional_collateral.amount > 0)")


def _claim_pool(d):
    _fee(d, "")
    check(d["fee"]["asset_id"] != d["asset_id"], "fee.asset_id != asset_id")
    check(amount(d["amount_to_claim"]) > 0, "amount_to_claim.amount > 0")
    check(d["amount_to_claim"]["asset_id"] == "1.3.0",
          "amount_to_claim.asset_id == asset_id_type()")


def _special_account(d, verb: str):
    check(d["account"] not in (TEMP_ACCOUNT, COMMITTEE_ACCOUNT, WITNESS_ACCOUNT,
                                 RELAXED_COMMITTEE_ACCOUNT),
          "account != GRAPHENE_TEMP_ACCOUNT && account != GRAPHENE_COMMITTEE_ACCOUNT && "
          "account != GRAPHENE_WITNESS_ACCOUNT && account != GRAPHENE_RELAXED_COMMITTEE_ACCOUNT",
          f"Can not {verb} custom authority for special accounts")


def _custom_authority_create(d):
    _fee(d, "Fee amount can not be negative")
    _special_account(d, "create")
    check(d["valid_from"] < d["valid_to"], "valid_from < valid_to",
          "valid_from must be earlier than valid_to")
    check(not d["auth"].get("address_auths"), "auth.address_auths.size() == 0",
          "Address authorities are not supported")
    check(not c.is_impossible(d["auth"]), "!auth.is_impossible()",
          "Cannot use an imposible authority threshold")
    check(num(d["operation_type"]) in FEE_PAYER, "get_restriction_predicate",
          f"Unknown operation type {d['operation_type']}")
    check(isinstance(d.get("restrictions", []), list), "get_restriction_predicate",
          "restrictions must be a list")


def _custom_authority_update(d):
    _fee(d, "Fee amount can not be negative")
    _special_account(d, "create")
    start, end = d.get("new_valid_from"), d.get("new_valid_to")
    if start is not None and end is not None:
        check(start < end, "*new_valid_from < *new_valid_to",
              "valid_from must be earlier than valid_to")
    auth = d.get("new_auth")
    if auth is not None:
        check(not c.is_impossible(auth), "!new_auth->is_impossible()",
              "Cannot use an impossible authority threshold")
        check(not auth.get("address_auths"), "new_auth->address_auths.size() == 0",
              "Address auth is not supported")
    check(any(d.get(k) is not None for k in ("new_enabled", "new_valid_from", "new_valid_to",
                                             "new_auth"))
          or d.get("restrictions_to_remove") or d.get("restrictions_to_add"),
          "new_enabled.valid() || ...", "Must update something")


def _custom_authority_delete(d):
    _fee(d, "Fee amount can not be negative")
    _special_account(d, "delete")


def _core_only(value: dict, message: str = "Amount must be in BTS so far"):
    check(value["asset_id"] == "1.3.0", "amount.asset_id == asset_id_type()", message)


def _ticket_create(d):
    _fee(d)
    target = num(d["target_type"])
    check(target != 0, "target_type != liquid", "Target type can not be liquid")
    check(target < TICKET_TYPE_COUNT, "target_type < TICKET_TYPE_COUNT", "Invalid target type")
    check(amount(d["amount"]) > 0, "amount.amount > 0",
          "A positive amount is needed for creating a ticket")
    _core_only(d["amount"])


def _ticket_update(d):
    _fee(d)
    check(num(d["target_type"]) < TICKET_TYPE_COUNT, "target_type < TICKET_TYPE_COUNT",
          "Invalid target type")
    new = d.get("amount_for_new_target")
    if new is not None:
        check(amount(new) > 0, "amount_for_new_target->amount > 0", "A positive amount is needed")
        _core_only(new)


def _percent(value, expression: str, message: str):
    check(num(value) <= GRAPHENE_100_PERCENT, f"{expression} <= GRAPHENE_100_PERCENT", message)


def _pool_create(d):
    _fee(d)
    check(instance(d["asset_a"]) < instance(d["asset_b"]), "asset_a < asset_b",
          "ID of the first asset should be smaller than ID of the second asset")
    check(d["share_asset"] not in (d["asset_a"], d["asset_b"]),
          "asset_a != share_asset && asset_b != share_asset",
          "Share asset can not be the same as one of the assets in the pool")
    _percent(d.get("taker_fee_percent", 0), "taker_fee_percent",
             "Taker fee percent should not exceed 100%")
    _percent(d.get("withdrawal_fee_percent", 0), "withdrawal_fee_percent",
             "Withdrawal fee percent should not exceed 100%")


def _pool_update(d):
    _fee(d)
    taker, withdrawal = d.get("taker_fee_percent"), d.get("withdrawal_fee_percent")
    check(taker is not None or withdrawal is not None,
          "taker_fee_percent.valid() || withdrawal_fee_percent.valid()", "Should update something")
    if taker is not None:
        _percent(taker, "*taker_fee_percent", "Taker fee percent should not exceed 100%")
    if withdrawal is not None:
        check(num(withdrawal) == 0, "0 == *withdrawal_fee_percent",
              "Withdrawal fee percent can only be updated to zero")


def _pool_deposit(d):
    _fee(d)
    check(amount(d["amount_a"]) > 0 and amount(d["amount_b"]) > 0,
          "amount_a.amount > 0 && amount_b.amount > 0",
          "Both amounts of the assets should be positive")
    check(instance(d["amount_a"]["asset_id"]) < instance(d["amount_b"]["asset_id"]),
          "amount_a.asset_id < amount_b.asset_id",
          "ID of the first asset should be smaller than ID of the second asset")


def _exchange(d, sell: str):
    _fee(d)
    check(amount(d[sell]) > 0, f"{sell}.amount > 0", "Amount to sell should be positive")
    check(amount(d["min_to_receive"]) > 0, "min_to_receive.amount > 0",
          "Minimum amount to receive should be positive")
    check(d[sell]["asset_id"] != d["min_to_receive"]["asset_id"],
          f"{sell}.asset_id != min_to_receive.asset_id",
          "ID of the two assets should not be the same")


def _samet_update(d):
    _fee(d)
    delta = d.get("delta_amount")
    check(delta is not None or d.get("new_fee_rate") is not None,
          "delta_amount.valid() || new_fee_rate.valid()", "Should change something")
    if delta is not None:
        check(amount(delta) != 0, "delta_amount->amount != 0", "Delta amount should not be zero")


def _repay(d, fee_field: str, what: str):
    _positive(d, "repay_amount", "Amount to repay should be positive")
    check(amount(d[fee_field]) >= 0, f"{fee_field}.amount >= 0",
          f"{what} fee should not be negative")
    check(d["repay_amount"]["asset_id"] == d[fee_field]["asset_id"],
          f"repay_amount.asset_id == {fee_field}.asset_id",
          f"Asset type of repay amount and {what.lower()} fee should be the same")


def _collateral(pairs, asset_type=None):
    """credit_offer.cpp ``validate_acceptable_collateral``."""
    check(len(pairs) > 0, "!acceptable_collateral.empty()",
          "Acceptable collateral list should not be empty")
    asset_type = asset_type or pairs[0][1]["base"]["asset_id"]
    for collateral_asset, price in pairs:
        check(price["base"]["asset_id"] == asset_type,
              "collateral_price.base.asset_id == asset_type",
              "Base asset ID in price of acceptable collateral should be same as offer asset type")
        check(price["quote"]["asset_id"] == collateral_asset,
              "collateral_price.quote.asset_id == collateral_asset_type",
              "Quote asset ID in price of acceptable collateral should be same as collateral "
              "asset type")
        c.price(price, True)


def _borrowers(pairs):
    for _account, limit in pairs:
        check(num(limit) >= 0, "max_borrow_amount >= 0",
              "Maximum amount to borrow for acceptable borrowers should not be negative")
        check(num(limit) <= MAX_SHARE_SUPPLY, "max_borrow_amount <= GRAPHENE_MAX_SHARE_SUPPLY",
              "Maximum amount to borrow for acceptable borrowers should not be greater than "
              f"{MAX_SHARE_SUPPLY}")


def _duration(value):
    check(num(value) <= MAX_CREDIT_DEAL_DAYS * 86400,
          "max_duration_seconds <= GRAPHENE_MAX_CREDIT_DEAL_SECS",
          f"Maximum duration should not be greater than {MAX_CREDIT_DEAL_DAYS} days")


def _min_deal(value):
    check(num(value) >= 0, "min_deal_amount >= 0", "Minimum deal amount should not be negative")
    check(num(value) <= MAX_SHARE_SUPPLY, "min_deal_amount <= GRAPHENE_MAX_SHARE_SUPPLY",
          f"Minimum deal amount should not be greater than {MAX_SHARE_SUPPLY}")


def _offer_create(d):
    _fee(d)
    check(num(d["balance"]) > 0, "balance > 0", "Balance should be positive")
    _duration(d.get("max_duration_seconds", 0))
    _min_deal(d["min_deal_amount"])
    _collateral(d.get("acceptable_collateral") or [], d["asset_type"])
    _borrowers(d.get("acceptable_borrowers") or [])


def _offer_update(d):
    _fee(d)
    if d.get("delta_amount") is not None:
        check(amount(d["delta_amount"]) != 0, "delta_amount->amount != 0",
              "Delta amount should not be zero")
    if d.get("max_duration_seconds") is not None:
        _duration(d["max_duration_seconds"])
    if d.get("min_deal_amount") is not None:
        _min_deal(d["min_deal_amount"])
    if d.get("acceptable_collateral") is not None:
        _collateral(d["acceptable_collateral"])
    if d.get("acceptable_borrowers") is not None:
        _borrowers(d["acceptable_borrowers"])
    check(any(d.get(k) is not None for k in (
        "delta_amount", "fee_rate", "max_duration_seconds", "min_deal_amount", "enabled",
        "auto_disable_time", "acceptable_collateral", "acceptable_borrowers")),
        "updating_something",
        "Should change something - at least one of the optional data fields should be present")


def _auto_repay(value):
    check(num(value) < CDAR_TYPE_COUNT, "auto_repay < cdar_count",
          f"auto_repay should be less than {CDAR_TYPE_COUNT}")


def _offer_accept(d):
    _positive(d, "borrow_amount", "Amount to borrow should be positive")
    check(amount(d["collateral"]) > 0, "collateral.amount > 0",
          "Collateral amount should be positive")
    ext = d.get("extensions")
    if isinstance(ext, dict) and ext.get("auto_repay") is not None:
        _auto_repay(ext["auto_repay"])


def _limit_order_update(d):
    _fee(d, "Fee must not be negative")
    check(any(d.get(k) is not None for k in ("new_price", "delta_amount_to_sell",
                                             "new_expiration", "on_fill")),
          "new_price || delta_amount_to_sell || new_expiration || on_fill",
          "Cannot update limit order if nothing is specified to update")
    if d.get("new_price") is not None:
        c.price(d["new_price"])
    if d.get("delta_amount_to_sell") is not None:
        check(amount(d["delta_amount_to_sell"]) != 0, "delta_amount_to_sell->amount != 0",
              "Cannot change limit order amount by zero")
    c.take_profit_actions(d.get("on_fill"))


#: type -> ``rule(data)`` for the non-virtual types 43-77
LATE_RULES = {
    43: _claim_fees, 45: _bid_collateral, 47: _claim_pool,
    48: lambda d: (_fee(d, ""), check(d["issuer"] != d["new_issuer"], "issuer != new_issuer")),
    49: lambda d: _positive(d, "amount", "HTLC amount should be greater than zero",
                            "Fee amount should not be negative"),
    50: lambda d: _fee(d, "Fee amount should not be negative"),
    52: lambda d: _fee(d, "Fee amount should not be negative"),
    54: _custom_authority_create, 55: _custom_authority_update, 56: _custom_authority_delete,
    57: _ticket_create, 58: _ticket_update, 59: _pool_create, 60: _fee, 61: _pool_deposit,
    62: lambda d: _positive(d, "share_amount", "Amount of the share asset should be positive"),
    63: lambda d: _exchange(d, "amount_to_sell"),
    64: lambda d: (_fee(d), check(num(d["balance"]) > 0, "balance > 0",
                                  "Balance should be positive")),
    65: _fee, 66: _samet_update,
    67: lambda d: _positive(d, "borrow_amount", "Amount to borrow should be positive"),
    68: lambda d: _repay(d, "fund_fee", "Fund"),
    69: _offer_create, 70: _fee, 71: _offer_update, 72: _offer_accept,
    73: lambda d: _repay(d, "credit_fee", "Credit"), 75: _pool_update,
    76: lambda d: (_fee(d), _auto_repay(d["auto_repay"])), 77: _limit_order_update,
}
