"""Asset operations.

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/asset_ops.hpp``
(``FC_REFLECT`` order): asset_create (10) with ``bitasset_opts``,
asset_update (11) with ``new_precision`` / ``skip_core_exchange_rate``,
asset_update_bitasset (12), asset_update_feed_producers (13), asset_issue
(14), asset_reserve (15), asset_fund_fee_pool (16), asset_settle (17),
asset_global_settle (18), asset_publish_feed (19) with
``initial_collateral_ratio``, asset_settle_cancel (42, virtual),
asset_claim_fees (43) with ``claim_from_asset_id``, asset_claim_pool (47)
and asset_update_issuer (48).  The asset/bitasset options structs are in
:mod:`nodeapi.protocol.types`.
"""

from nodeapi.protocol.composite import Extension, FlatSet, Optional
from nodeapi.protocol.operations.common import EXT, FEE, Impacted, body_priced_fee, data_fee, op, zero_fee
from nodeapi.protocol.serialize import BOOL, STRING, UINT8, UINT16
from nodeapi.protocol.types import (
    ACCOUNT_ID, ASSET, ASSET_ID, ASSET_OPTIONS, BITASSET_OPTIONS, FORCE_SETTLEMENT_ID, MEMO,
    PRICE, PRICE_FEED, SHARE)
from nodeapi.protocol import validation_checks as c
from nodeapi.protocol.config import BLOCKCHAIN_PRECISION as P
from nodeapi.protocol.asset import is_null
from nodeapi.protocol.config import CORE_ASSET, MAX_SHARE_SUPPLY
from nodeapi.protocol.flags import COMMITTEE_FED_ASSET, DISABLE_BSRM_UPDATE, GLOBAL_SETTLE, NON_UIA_ONLY_ISSUER_PERMISSION_MASK, WITNESS_FED_ASSET
from nodeapi.protocol.serialize import UINT32, UINT64
from nodeapi.protocol.validation_checks import amount, check, checked_fee, extensions_of, fee_non_negative, num

OPERATIONS = {
    10: ("asset_create", op("asset_create", [
        FEE, ("issuer", ACCOUNT_ID), ("symbol", STRING), ("precision", UINT8),
        ("common_options", ASSET_OPTIONS), ("bitasset_opts", Optional(BITASSET_OPTIONS)),
        ("is_prediction_market", BOOL), EXT])),
    11: ("asset_update", op("asset_update", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_to_update", ASSET_ID),
        ("new_issuer", Optional(ACCOUNT_ID)), ("new_options", ASSET_OPTIONS),
        ("extensions", Extension("asset_update_operation::ext", [
            ("new_precision", UINT8),
            ("skip_core_exchange_rate", BOOL),
        ]))])),
    12: ("asset_update_bitasset", op("asset_update_bitasset", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_to_update", ASSET_ID),
        ("new_options", BITASSET_OPTIONS), EXT])),
    13: ("asset_update_feed_producers", op("asset_update_feed_producers", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_to_update", ASSET_ID),
        ("new_feed_producers", FlatSet(ACCOUNT_ID)), EXT])),
    14: ("asset_issue", op("asset_issue", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_to_issue", ASSET),
        ("issue_to_account", ACCOUNT_ID), ("memo", Optional(MEMO)), EXT])),
    15: ("asset_reserve", op("asset_reserve", [
        FEE, ("payer", ACCOUNT_ID), ("amount_to_reserve", ASSET), EXT])),
    16: ("asset_fund_fee_pool", op("asset_fund_fee_pool", [
        FEE, ("from_account", ACCOUNT_ID), ("asset_id", ASSET_ID), ("amount", SHARE), EXT])),
    17: ("asset_settle", op("asset_settle", [
        FEE, ("account", ACCOUNT_ID), ("amount", ASSET), EXT])),
    18: ("asset_global_settle", op("asset_global_settle", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_to_settle", ASSET_ID), ("settle_price", PRICE),
        EXT])),
    19: ("asset_publish_feed", op("asset_publish_feed", [
        FEE, ("publisher", ACCOUNT_ID), ("asset_id", ASSET_ID), ("feed", PRICE_FEED),
        ("extensions", Extension("asset_publish_feed_operation::ext", [
            ("initial_collateral_ratio", UINT16),
        ]))])),
    42: ("asset_settle_cancel", op("asset_settle_cancel", [  # virtual
        FEE, ("settlement", FORCE_SETTLEMENT_ID), ("account", ACCOUNT_ID), ("amount", ASSET)])),
    43: ("asset_claim_fees", op("asset_claim_fees", [
        FEE, ("issuer", ACCOUNT_ID), ("amount_to_claim", ASSET),
        ("extensions", Extension("asset_claim_fees_operation::additional_options_type", [
            ("claim_from_asset_id", ASSET_ID),
        ]))])),
    47: ("asset_claim_pool", op("asset_claim_pool", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_id", ASSET_ID), ("amount_to_claim", ASSET), EXT])),
    48: ("asset_update_issuer", op("asset_update_issuer", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_to_update", ASSET_ID),
        ("new_issuer", ACCOUNT_ID), EXT])),
}


# -- validate(): each type's own rules (bitshares-core libraries/protocol/*.cpp) --


def _cer_converts(price: dict, asset_id: str, to: str) -> bool:
    """``asset(1, asset_id) * price`` lands in asset ``to``."""
    if price["base"]["asset_id"] == asset_id:
        return price["quote"]["asset_id"] == to
    if price["quote"]["asset_id"] == asset_id:
        return price["base"]["asset_id"] == to
    return False


def _asset_create(d):
    fee_non_negative(d)
    check(c.is_valid_symbol(d["symbol"]), "is_valid_symbol(symbol)")
    options = d["common_options"]
    c.asset_options(options)
    perms = num(options["issuer_permissions"])
    bitasset = d.get("bitasset_opts")
    if perms & NON_UIA_ONLY_ISSUER_PERMISSION_MASK & ~(WITNESS_FED_ASSET | COMMITTEE_FED_ASSET):
        check(bitasset is not None, "bitasset_opts.valid()")
    if d.get("is_prediction_market"):
        check(bitasset is not None, "bitasset_opts.valid()",
              "Cannot have a User-Issued Asset implement a prediction market.")
        check(perms & GLOBAL_SETTLE, "0 != (common_options.issuer_permissions & global_settle)")
        check(not perms & DISABLE_BSRM_UPDATE,
              "0 == (common_options.issuer_permissions & disable_bsrm_update)")
        check(extensions_of(bitasset).get("black_swan_response_method") is None,
              "!bitasset_opts->extensions.value.black_swan_response_method.valid()",
              "Can not set black_swan_response_method for Prediction Markets")
    if bitasset is not None:
        c.bitasset_options(bitasset)
    check(_cer_converts(options["core_exchange_rate"], CORE_ASSET, "1.3.1"),
          "dummy.asset_id == asset_id_type(1)")
    check(num(d.get("precision", 0)) <= 12, "precision <= 12")


def _asset_update(d):
    fee_non_negative(d)
    if d.get("new_issuer") is not None:
        check(d["issuer"] != d["new_issuer"], "issuer != *new_issuer")
    c.asset_options(d["new_options"])
    check(_cer_converts(d["new_options"]["core_exchange_rate"], d["asset_to_update"], CORE_ASSET),
          "dummy.asset_id == asset_id_type()")
    ext = extensions_of(d)
    if ext.get("new_precision") is not None:
        check(num(ext["new_precision"]) <= 12, "*extensions.value.new_precision <= 12")
    if ext.get("skip_core_exchange_rate") is not None:
        check(ext["skip_core_exchange_rate"] is True,
              "*extensions.value.skip_core_exchange_rate == true",
              "If skip_core_exchange_rate is specified, it can only be true")


def _issue(d):
    fee_non_negative(d)
    value = amount(d["asset_to_issue"])
    check(value <= MAX_SHARE_SUPPLY, "asset_to_issue.amount.value <= GRAPHENE_MAX_SHARE_SUPPLY")
    check(value > 0, "asset_to_issue.amount.value > 0")
    check(d["asset_to_issue"]["asset_id"] != CORE_ASSET, "asset_to_issue.asset_id != asset_id_type(0)")


def _reserve(d):
    fee_non_negative(d)
    value = amount(d["amount_to_reserve"])
    check(value <= MAX_SHARE_SUPPLY,
          "amount_to_reserve.amount.value <= GRAPHENE_MAX_SHARE_SUPPLY")
    check(value > 0, "amount_to_reserve.amount.value > 0")


def _fund_fee_pool(d):
    fee_non_negative(d)
    check(d["fee"]["asset_id"] == CORE_ASSET, "fee.asset_id == asset_id_type()")
    check(num(d["amount"]) > 0, "amount > 0")


def _publish_feed(d):
    fee_non_negative(d)
    feed = d["feed"]
    c.price_feed(feed)
    settlement, cer = feed["settlement_price"], feed["core_exchange_rate"]
    if not is_null(cer):
        c.price(cer)
    if not is_null(settlement) and not is_null(cer):
        check(settlement["base"]["asset_id"] == cer["base"]["asset_id"],
              "feed.settlement_price.base.asset_id == feed.core_exchange_rate.base.asset_id")
    check(not is_null(settlement), "!feed.settlement_price.is_null()")
    check(not is_null(cer), "!feed.core_exchange_rate.is_null()")
    check(settlement["base"]["asset_id"] == d["asset_id"], "feed.is_for( asset_id )")
    icr = extensions_of(d).get("initial_collateral_ratio")
    if icr is not None:
        c.ratio_in_range(icr, "*extensions.value.initial_collateral_ratio")


def _claim_fees(d):
    checked_fee(d, "")
    check(amount(d["amount_to_claim"]) > 0, "amount_to_claim.amount > 0")
    ext = d.get("extensions")
    source = ext.get("claim_from_asset_id") if isinstance(ext, dict) else None
    if source is not None:
        check(source != d["amount_to_claim"]["asset_id"],
              "*extensions.value.claim_from_asset_id != amount_to_claim.asset_id")


def _claim_pool(d):
    checked_fee(d, "")
    check(d["fee"]["asset_id"] != d["asset_id"], "fee.asset_id != asset_id")
    check(amount(d["amount_to_claim"]) > 0, "amount_to_claim.amount > 0")
    check(d["amount_to_claim"]["asset_id"] == CORE_ASSET,
          "amount_to_claim.asset_id == asset_id_type()")


#: type -> ``rule(data)``: the operation's ``validate()`` (virtual operations have none)
VALIDATE = {
    10: _asset_create,
    11: _asset_update,
    12: lambda d: (fee_non_negative(d), c.bitasset_options(d["new_options"])),
    13: fee_non_negative,
    14: _issue,
    15: _reserve,
    16: _fund_fee_pool,
    17: lambda d: (fee_non_negative(d), check(amount(d["amount"]) >= 0, "amount.amount >= 0")),
    18: lambda d: (fee_non_negative(d), check(d["asset_to_settle"] == d["settle_price"]["base"]["asset_id"],
                                  "asset_to_settle == settle_price.base.asset_id")),
    19: _publish_feed,
    43: _claim_fees,
    47: _claim_pool,
    48: lambda d: (checked_fee(d, ""), check(d["issuer"] != d["new_issuer"], "issuer != new_issuer")),
}

#: type -> its ``fee_params_t``: ``(field, wire type, default)`` in reflection order
#: (bitshares-core protocol/*.hpp; defaults in core satoshis, ``P`` = GRAPHENE_BLOCKCHAIN_PRECISION)
FEE_PARAMETERS = {
    10: [("symbol3", UINT64, 500000 * P), ("symbol4", UINT64, 300000 * P), ("long_symbol", UINT64, 5000 * P), ("price_per_kbyte", UINT32, 10)],
    11: [("fee", UINT64, 500 * P), ("price_per_kbyte", UINT32, 10)],
    12: [("fee", UINT64, 500 * P)],
    13: [("fee", UINT64, 500 * P)],
    14: [("fee", UINT64, 20 * P), ("price_per_kbyte", UINT32, P)],
    15: [("fee", UINT64, 20 * P)],
    16: [("fee", UINT64, P)],
    17: [("fee", UINT64, 100 * P)],
    18: [("fee", UINT64, 500 * P)],
    19: [("fee", UINT64, P)],
    42: [],
    43: [("fee", UINT64, 20 * P)],
    47: [("fee", UINT64, 20 * P)],
    48: [("fee", UINT64, 20 * P)],
}


#: type -> the field naming the fee payer, or ``"="`` + a fixed account id
#: (each operation's ``fee_payer()``, bitshares-core
#: libraries/protocol/include/graphene/protocol/asset_ops.hpp)
FEE_PAYER = {
    10: "issuer", 11: "issuer", 12: "issuer", 13: "issuer", 14: "issuer", 15: "payer",
    16: "from_account", 17: "account", 18: "issuer", 19: "publisher", 42: "account",
    43: "issuer", 47: "issuer", 48: "issuer",
}

#: type -> :class:`~nodeapi.protocol.operations.common.Impacted` (bitshares-core
#: libraries/chain/db_notify.cpp ``get_impacted_account_visitor``); types not
#: listed impact their fee payer and required authorities only
IMPACTED = {
    11: Impacted(named=("new_issuer",)),
    14: Impacted(named=("issue_to_account",)),
    48: Impacted(named=("new_issuer",)),
}


def _asset_create_fee(d, p, context):
    """By symbol length (3, 4, longer) plus the struct's size at
    ``price_per_kbyte``; a sub-asset ``A.B`` pays account_transfer's (9)
    ``fee`` instead once the schedule has account_transfer and
    ticket_create (57) entries (fee_schedule_calc.cpp's asset_create
    visitor)."""
    symbol = d["symbol"]
    if "." in symbol and context.has_entry(9) and context.has_entry(57):
        fee = context.parameters(9)["fee"]
    else:
        fee = {3: p["symbol3"], 4: p["symbol4"]}.get(len(symbol), p["long_symbol"])
    return fee + data_fee(context.body(), p["price_per_kbyte"])


def _asset_issue_fee(d, p, context):
    """``fee`` plus the ``optional`` memo's size (its flag byte even
    without a memo) at ``price_per_kbyte``."""
    return p["fee"] + data_fee(context.optional_memo(d.get("memo")), p["price_per_kbyte"])


#: type -> ``fee(data, params, context)``: the operation's ``calculate_fee``
#: (bitshares-core libraries/protocol/asset_ops.cpp, fee_schedule_calc.cpp);
#: types not listed pay their flat ``fee``
#: (:mod:`~nodeapi.protocol.operations.common`)
CALCULATE_FEE = {10: _asset_create_fee, 11: body_priced_fee, 14: _asset_issue_fee, 42: zero_fee}

#: type -> ``rule(data, active, owner)``: the account ids whose active /
#: owner authority the operation needs besides its fee payer's active
#: (``get_required_active_authorities`` /
#: ``get_required_owner_authorities``, asset_ops.hpp: asset_update_issuer
#: needs the issuer's owner)
REQUIRED_AUTHORITIES = {48: lambda d, active, owner: owner.add(d["issuer"])}

#: type -> ``rule(data) -> [authority]``: the authorities it needs besides
#: accounts' (``get_required_authorities``)
OTHER_AUTHORITIES: dict = {}
