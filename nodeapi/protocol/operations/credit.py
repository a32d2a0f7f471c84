"""SameT funds (64-68) and credit offers/deals (69-74, 76).

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/``
``samet_fund.hpp`` and ``credit_offer.hpp`` (``FC_REFLECT`` order);
credit_deal_expired (74) is virtual; credit_offer_accept's ``auto_repay``
extension and credit_deal_update (76) came with core 7.0.
"""

from nodeapi.protocol.composite import Extension, FlatMap, Optional
from nodeapi.protocol.operations.common import EXT, FEE, Impacted, body_priced_fee, op, zero_fee
from nodeapi.protocol.serialize import BOOL, TIME, UINT8, UINT32
from nodeapi.protocol.types import (
    ACCOUNT_ID, ASSET, ASSET_ID, CREDIT_DEAL_ID, CREDIT_OFFER_ID, PRICE, SAMET_FUND_ID, SHARE)
from nodeapi.protocol import validation_checks as c
from nodeapi.protocol.config import BLOCKCHAIN_PRECISION as P
from nodeapi.protocol.config import MAX_SHARE_SUPPLY
from nodeapi.protocol.serialize import UINT64
from nodeapi.protocol.validation_checks import amount, check, checked_fee, num, positive_field

ACCEPTABLE_COLLATERAL = FlatMap(ASSET_ID, PRICE)
ACCEPTABLE_BORROWERS = FlatMap(ACCOUNT_ID, SHARE)

OPERATIONS = {
    64: ("samet_fund_create", op("samet_fund_create", [
        FEE, ("owner_account", ACCOUNT_ID), ("asset_type", ASSET_ID), ("balance", SHARE),
        ("fee_rate", UINT32), EXT])),
    65: ("samet_fund_delete", op("samet_fund_delete", [
        FEE, ("owner_account", ACCOUNT_ID), ("fund_id", SAMET_FUND_ID), EXT])),
    66: ("samet_fund_update", op("samet_fund_update", [
        FEE, ("owner_account", ACCOUNT_ID), ("fund_id", SAMET_FUND_ID),
        ("delta_amount", Optional(ASSET)), ("new_fee_rate", Optional(UINT32)), EXT])),
    67: ("samet_fund_borrow", op("samet_fund_borrow", [
        FEE, ("borrower", ACCOUNT_ID), ("fund_id", SAMET_FUND_ID), ("borrow_amount", ASSET),
        EXT])),
    68: ("samet_fund_repay", op("samet_fund_repay", [
        FEE, ("account", ACCOUNT_ID), ("fund_id", SAMET_FUND_ID), ("repay_amount", ASSET),
        ("fund_fee", ASSET), EXT])),
    69: ("credit_offer_create", op("credit_offer_create", [
        FEE, ("owner_account", ACCOUNT_ID), ("asset_type", ASSET_ID), ("balance", SHARE),
        ("fee_rate", UINT32), ("max_duration_seconds", UINT32), ("min_deal_amount", SHARE),
        ("enabled", BOOL), ("auto_disable_time", TIME),
        ("acceptable_collateral", ACCEPTABLE_COLLATERAL),
        ("acceptable_borrowers", ACCEPTABLE_BORROWERS), EXT])),
    70: ("credit_offer_delete", op("credit_offer_delete", [
        FEE, ("owner_account", ACCOUNT_ID), ("offer_id", CREDIT_OFFER_ID), EXT])),
    71: ("credit_offer_update", op("credit_offer_update", [
        FEE, ("owner_account", ACCOUNT_ID), ("offer_id", CREDIT_OFFER_ID),
        ("delta_amount", Optional(ASSET)), ("fee_rate", Optional(UINT32)),
        ("max_duration_seconds", Optional(UINT32)), ("min_deal_amount", Optional(SHARE)),
        ("enabled", Optional(BOOL)), ("auto_disable_time", Optional(TIME)),
        ("acceptable_collateral", Optional(ACCEPTABLE_COLLATERAL)),
        ("acceptable_borrowers", Optional(ACCEPTABLE_BORROWERS)), EXT])),
    72: ("credit_offer_accept", op("credit_offer_accept", [
        FEE, ("borrower", ACCOUNT_ID), ("offer_id", CREDIT_OFFER_ID),
        ("borrow_amount", ASSET), ("collateral", ASSET), ("max_fee_rate", UINT32),
        ("min_duration_seconds", UINT32),
        ("extensions", Extension("credit_offer_accept_operation::ext", [
            ("auto_repay", UINT8),
        ]))])),
    73: ("credit_deal_repay", op("credit_deal_repay", [
        FEE, ("account", ACCOUNT_ID), ("deal_id", CREDIT_DEAL_ID), ("repay_amount", ASSET),
        ("credit_fee", ASSET), EXT])),
    74: ("credit_deal_expired", op("credit_deal_expired", [  # virtual
        FEE, ("deal_id", CREDIT_DEAL_ID), ("offer_id", CREDIT_OFFER_ID),
        ("offer_owner", ACCOUNT_ID), ("borrower", ACCOUNT_ID), ("unpaid_amount", ASSET),
        ("collateral", ASSET), ("fee_rate", UINT32)])),
    76: ("credit_deal_update", op("credit_deal_update", [
        FEE, ("account", ACCOUNT_ID), ("deal_id", CREDIT_DEAL_ID), ("auto_repay", UINT8),
        EXT])),
}


# -- validate(): each type's own rules (bitshares-core libraries/protocol/*.cpp) --
MAX_CREDIT_DEAL_DAYS = 380
CDAR_TYPE_COUNT = 3


def _samet_update(d):
    checked_fee(d)
    delta = d.get("delta_amount")
    check(delta is not None or d.get("new_fee_rate") is not None,
          "delta_amount.valid() || new_fee_rate.valid()", "Should change something")
    if delta is not None:
        check(amount(delta) != 0, "delta_amount->amount != 0", "Delta amount should not be zero")


def _repay(d, fee_field: str, what: str):
    positive_field(d, "repay_amount", "Amount to repay should be positive")
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
    checked_fee(d)
    check(num(d["balance"]) > 0, "balance > 0", "Balance should be positive")
    _duration(d.get("max_duration_seconds", 0))
    _min_deal(d["min_deal_amount"])
    _collateral(d.get("acceptable_collateral") or [], d["asset_type"])
    _borrowers(d.get("acceptable_borrowers") or [])


def _offer_update(d):
    checked_fee(d)
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
    positive_field(d, "borrow_amount", "Amount to borrow should be positive")
    check(amount(d["collateral"]) > 0, "collateral.amount > 0",
          "Collateral amount should be positive")
    ext = d.get("extensions")
    if isinstance(ext, dict) and ext.get("auto_repay") is not None:
        _auto_repay(ext["auto_repay"])


#: type -> ``rule(data)``: the operation's ``validate()`` (virtual operations have none)
VALIDATE = {
    64: lambda d: (checked_fee(d), check(num(d["balance"]) > 0, "balance > 0",
                                  "Balance should be positive")),
    65: checked_fee,
    66: _samet_update,
    67: lambda d: positive_field(d, "borrow_amount", "Amount to borrow should be positive"),
    68: lambda d: _repay(d, "fund_fee", "Fund"),
    69: _offer_create,
    70: checked_fee,
    71: _offer_update,
    72: _offer_accept,
    73: lambda d: _repay(d, "credit_fee", "Credit"),
    76: lambda d: (checked_fee(d), _auto_repay(d["auto_repay"])),
}

#: type -> its ``fee_params_t``: ``(field, wire type, default)`` in reflection order
#: (bitshares-core protocol/*.hpp; defaults in core satoshis, ``P`` = GRAPHENE_BLOCKCHAIN_PRECISION)
FEE_PARAMETERS = {
    64: [("fee", UINT64, P)],
    65: [("fee", UINT64, 0)],
    66: [("fee", UINT64, P)],
    67: [("fee", UINT64, P)],
    68: [("fee", UINT64, P)],
    69: [("fee", UINT64, P), ("price_per_kbyte", UINT32, P)],
    70: [("fee", UINT64, 0)],
    71: [("fee", UINT64, P), ("price_per_kbyte", UINT32, P)],
    72: [("fee", UINT64, P)],
    73: [("fee", UINT64, P)],
    74: [],
    76: [("fee", UINT64, P)],
}


#: type -> the field naming the fee payer, or ``"="`` + a fixed account id
#: (each operation's ``fee_payer()``, bitshares-core
#: libraries/protocol/include/graphene/protocol/: samet_fund.hpp, credit_offer.hpp)
FEE_PAYER = {
    64: "owner_account", 65: "owner_account", 66: "owner_account", 67: "borrower",
    68: "account", 69: "owner_account", 70: "owner_account", 71: "owner_account",
    72: "borrower", 73: "account", 74: "borrower", 76: "account",
}

def _credit_deal_expired(data: dict) -> set:
    """credit_deal_expired: ``offer_owner`` and ``borrower`` (db_notify.cpp)."""
    return {data["offer_owner"], data["borrower"]}


#: type -> :class:`~nodeapi.protocol.operations.common.Impacted` (bitshares-core
#: libraries/chain/db_notify.cpp ``get_impacted_account_visitor``); types not
#: listed impact their fee payer and required authorities only
IMPACTED = {
    74: Impacted(only=_credit_deal_expired),
}


#: type -> ``fee(data, params, context)``: the operation's ``calculate_fee``
#: (bitshares-core libraries/protocol/credit_offer.cpp); types not listed
#: pay their flat ``fee`` (:mod:`~nodeapi.protocol.operations.common`)
CALCULATE_FEE = {69: body_priced_fee, 71: body_priced_fee, 74: zero_fee}

#: type -> ``rule(data, active, owner)``: the account ids whose active /
#: owner authority the operation needs besides its fee payer's active
#: (``get_required_active_authorities`` /
#: ``get_required_owner_authorities``)
REQUIRED_AUTHORITIES: dict = {}

#: type -> ``rule(data) -> [authority]``: the authorities it needs besides
#: accounts' (``get_required_authorities``)
OTHER_AUTHORITIES: dict = {}
