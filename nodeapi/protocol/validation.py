"""Each operation type's own ``validate()`` rules (0-77), on the wire (JSON)
form of the operation.

Reference: bitshares-core libraries/protocol/*.cpp and the inline
``validate()`` of the operation structs (``*.hpp``), called through
``operation_validate`` by ``transaction::validate`` before any evaluation.
Shared checks (names, symbols, authorities, prices, options) are in
:mod:`nodeapi.protocol.validation_checks`; the rules of types 43-77 in
:mod:`nodeapi.protocol.validation_late`.  A failed rule raises
:class:`~nodeapi.protocol.errors.OperationInvalid` (``Assert Exception:
<condition>: <graphene's message>``); a missing or malformed field
:class:`~nodeapi.protocol.errors.InvalidField`.

Not checked (no Python implementation of the cryptography or predicate
compiler): the blind transfers' (39-41) Pedersen commitment sums and range
proofs, and custom_authority's (54/55) restriction predicates beyond their
operation type; the chain does not evaluate these types.
"""

from nodeapi.errors import NodeAPIError
from nodeapi.protocol import validation_checks as c
from nodeapi.protocol.authorities import VIRTUAL_OPERATIONS, kind_of
from nodeapi.protocol.config import COMMITTEE_ACCOUNT, TEMP_ACCOUNT
from nodeapi.protocol.errors import InvalidField
from nodeapi.protocol.config import GRAPHENE_100_PERCENT, MAX_SHARE_SUPPLY
from nodeapi.protocol.flags import COMMITTEE_FED_ASSET, DISABLE_BSRM_UPDATE, GLOBAL_SETTLE, NON_UIA_ONLY_ISSUER_PERMISSION_MASK, WITNESS_FED_ASSET
from nodeapi.protocol.keys import public_key_bytes
from nodeapi.protocol.validation_checks import amount, check, fee_non_negative, num
from nodeapi.protocol.validation_late import LATE_RULES

_fee = fee_non_negative


def _ext(data: dict) -> dict:
    ext = data.get("extensions")
    return ext if isinstance(ext, dict) else {}


def _transfer(d):
    _fee(d)
    check(d["from"] != d["to"], "from != to")
    check(amount(d["amount"]) > 0, "amount.amount > 0")


def _limit_order_create(d):
    check(d["amount_to_sell"]["asset_id"] != d["min_to_receive"]["asset_id"],
          "amount_to_sell.asset_id != min_to_receive.asset_id")
    _fee(d)
    check(amount(d["amount_to_sell"]) > 0, "amount_to_sell.amount > 0")
    check(amount(d["min_to_receive"]) > 0, "min_to_receive.amount > 0")
    c.take_profit_actions(_ext(d).get("on_fill"))


def _call_order_update(d):
    _fee(d)
    check(d["delta_collateral"]["asset_id"] != d["delta_debt"]["asset_id"],
          "delta_collateral.asset_id != delta_debt.asset_id")
    check(amount(d["delta_collateral"]) != 0 or amount(d["delta_debt"]) != 0,
          "delta_collateral.amount != 0 || delta_debt.amount != 0")


def _account_create(d):
    _fee(d)
    check(c.is_valid_name(d["name"]), "is_valid_name( name )")
    check(num(d.get("referrer_percent", 0)) <= GRAPHENE_100_PERCENT,
          "referrer_percent <= GRAPHENE_100_PERCENT")
    c.account_authority(d["owner"], "owner", "create")
    c.account_authority(d["active"], "active", "create")
    c.account_options(d["options"])
    ext = _ext(d)
    c.special_authority(ext.get("owner_special_authority"))
    c.special_authority(ext.get("active_special_authority"))
    buyback = ext.get("buyback_options")
    if buyback is not None:
        check(ext.get("owner_special_authority") is None,
              "!(extensions.value.owner_special_authority.valid())")
        check(ext.get("active_special_authority") is None,
              "!(extensions.value.active_special_authority.valid())")
        check(c.is_null_authority(d["owner"]), "owner == authority::null_authority()")
        check(c.is_null_authority(d["active"]), "active == authority::null_authority()")
        markets = buyback.get("markets") or ()
        check(len(markets) > 0, "n_markets > 0")
        check(buyback["asset_to_buy"] not in markets,
              "m != extensions.value.buyback_options->asset_to_buy")


def _account_update(d):
    check(d["account"] != TEMP_ACCOUNT, "account != GRAPHENE_TEMP_ACCOUNT")
    _fee(d)
    check(d["account"] != COMMITTEE_ACCOUNT, "account != account_id_type()")
    ext = _ext(d)
    check(any(d.get(k) is not None for k in ("owner", "active", "new_options"))
          or ext.get("owner_special_authority") is not None
          or ext.get("active_special_authority") is not None, "has_action")
    for what in ("owner", "active"):
        if d.get(what) is not None:
            c.account_authority(d[what], what, "update")
    if d.get("new_options") is not None:
        c.account_options(d["new_options"])
    c.special_authority(ext.get("owner_special_authority"))
    c.special_authority(ext.get("active_special_authority"))


def _whitelist(d):
    _fee(d)
    check(num(d["new_listing"]) < 0x4, "new_listing < 0x4")


def _cer_converts(price: dict, asset_id: str, to: str) -> bool:
    """``asset(1, asset_id) * price`` lands in asset ``to``."""
    if price["base"]["asset_id"] == asset_id:
        return price["quote"]["asset_id"] == to
    if price["quote"]["asset_id"] == asset_id:
        return price["base"]["asset_id"] == to
    return False


def _asset_create(d):
    _fee(d)
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
        check(_ext(bitasset).get("black_swan_response_method") is None,
              "!bitasset_opts->extensions.value.black_swan_response_method.valid()",
              "Can not set black_swan_response_method for Prediction Markets")
    if bitasset is not None:
        c.bitasset_options(bitasset)
    check(_cer_converts(options["core_exchange_rate"], "1.3.0", "1.3.1"),
          "dummy.asset_id == asset_id_type(1)")
    check(num(d.get("precision", 0)) <= 12, "precision <= 12")


def _asset_update(d):
    _fee(d)
    if d.get("new_issuer") is not None:
        check(d["issuer"] != d["new_issuer"], "issuer != *new_issuer")
    c.asset_options(d["new_options"])
    check(_cer_converts(d["new_options"]["core_exchange_rate"], d["asset_to_update"], "1.3.0"),
          "dummy.asset_id == asset_id_type()")
    ext = _ext(d)
    if ext.get("new_precision") is not None:
        check(num(ext["new_precision"]) <= 12, "*extensions.value.new_precision <= 12")
    if ext.get("skip_core_exchange_rate") is not None:
        check(ext["skip_core_exchange_rate"] is True,
              "*extensions.value.skip_core_exchange_rate == true",
              "If skip_core_exchange_rate is specified, it can only be true")


def _issue(d):
    _fee(d)
    value = amount(d["asset_to_issue"])
    check(value <= MAX_SHARE_SUPPLY, "asset_to_issue.amount.value <= GRAPHENE_MAX_SHARE_SUPPLY")
    check(value > 0, "asset_to_issue.amount.value > 0")
    check(d["asset_to_issue"]["asset_id"] != "1.3.0", "asset_to_issue.asset_id != asset_id_type(0)")


def _reserve(d):
    _fee(d)
    value = amount(d["amount_to_reserve"])
    check(value <= MAX_SHARE_SUPPLY,
          "amount_to_reserve.amount.value <= GRAPHENE_MAX_SHARE_SUPPLY")
    check(value > 0, "amount_to_reserve.amount.value > 0")


def _fund_fee_pool(d):
    _fee(d)
    check(d["fee"]["asset_id"] == "1.3.0", "fee.asset_id == asset_id_type()")
    check(num(d["amount"]) > 0, "amount > 0")


def _publish_feed(d):
    _fee(d)
    feed = d["feed"]
    c.price_feed(feed)
    settlement, cer = feed["settlement_price"], feed["core_exchange_rate"]
    if not c.is_null_price(cer):
        c.price(cer)
    if not c.is_null_price(settlement) and not c.is_null_price(cer):
        check(settlement["base"]["asset_id"] == cer["base"]["asset_id"],
              "feed.settlement_price.base.asset_id == feed.core_exchange_rate.base.asset_id")
    check(not c.is_null_price(settlement), "!feed.settlement_price.is_null()")
    check(not c.is_null_price(cer), "!feed.core_exchange_rate.is_null()")
    check(settlement["base"]["asset_id"] == d["asset_id"], "feed.is_for( asset_id )")
    icr = _ext(d).get("initial_collateral_ratio")
    if icr is not None:
        c.ratio_in_range(icr, "*extensions.value.initial_collateral_ratio")


def _url(value, expression: str) -> None:
    if value is not None:
        check(len(value.encode()) < c.MAX_URL_LENGTH,
              f"{expression}.size() < GRAPHENE_MAX_URL_LENGTH")


def _proposal_create(d):
    ops = d.get("proposed_ops") or ()
    check(len(ops) > 0, "!proposed_ops.empty()")
    for wrapper in ops:
        validate_operation(wrapper["op"])


def _proposal_update(d):
    _fee(d)
    pairs = [(set(d.get(f"{k}_approvals_to_add") or ()),
              set(d.get(f"{k}_approvals_to_remove") or ())) for k in ("active", "owner", "key")]
    check(any(a or r for a, r in pairs), "!(active_approvals_to_add.empty() && ...)")
    for add, remove in pairs:
        check(not add & remove, "approvals_to_remove.find(a) == approvals_to_remove.end()",
              "Cannot add and remove approval at the same time.")


def _withdraw_permission(d, update: bool):
    """withdraw_permission_create (``update`` False) / _update: the same
    rules, in graphene's two orders."""
    if update:
        check(amount(d["withdrawal_limit"]) > 0, "withdrawal_limit.amount > 0")
    _fee(d)
    if update:
        check(num(d["withdrawal_period_sec"]) > 0, "withdrawal_period_sec > 0")
    check(d["withdraw_from_account"] != d["authorized_account"],
          "withdraw_from_account != authorized_account")
    check(amount(d["withdrawal_limit"]) > 0, "withdrawal_limit.amount > 0")
    check(num(d["withdrawal_period_sec"]) > 0, "withdrawal_period_sec > 0")
    check(num(d["periods_until_expiration"]) > 0, "periods_until_expiration > 0")


def _withdraw_claim(d):
    check(d["withdraw_to_account"] != d["withdraw_from_account"],
          "withdraw_to_account != withdraw_from_account")
    check(amount(d["amount_to_withdraw"]) > 0, "amount_to_withdraw.amount > 0")
    _fee(d)


def _worker_create(d):
    _fee(d)
    check(d["work_end_date"] > d["work_begin_date"], "work_end_date > work_begin_date")
    pay = num(d["daily_pay"])
    check(pay > 0, "daily_pay > 0")
    check(pay < MAX_SHARE_SUPPLY, "daily_pay < GRAPHENE_MAX_SHARE_SUPPLY")
    check(len(d["name"].encode()) < c.MAX_WORKER_NAME_LENGTH,
          "name.size() < GRAPHENE_MAX_WORKER_NAME_LENGTH")
    _url(d["url"], "url")


def _balance_claim(d):
    check(amount(d["fee"]) == 0 and d["fee"]["asset_id"] == "1.3.0", "fee == asset()")
    check(any(public_key_bytes(d["balance_owner_key"])),
          "balance_owner_key != public_key_type()")


def _override_transfer(d):
    _transfer(d)
    check(d["issuer"] != d["from"], "issuer != from")


def _sorted_commitments(items, what: str, message: str = "") -> None:
    commitments = [i["commitment"] for i in items]
    for a, b in zip(commitments, commitments[1:]):
        check(a < b, f"{what}[i-1] < {what}[i]", message)


def _possible_owners(outputs) -> None:
    for out in outputs:
        check(not c.is_impossible(out["owner"]), "!outputs[i].owner.is_impossible()")


def _to_blind(d):
    _fee(d)
    check(amount(d["amount"]) > 0, "amount.amount > 0")
    outputs = d.get("outputs") or ()
    _sorted_commitments(outputs, "out", "all outputs must be sorted by commitment id")
    _possible_owners(outputs)
    check(len(outputs) > 0, "out.size()", "there must be at least one output")


def _blind_transfer(d):
    inputs, outputs = d.get("inputs") or (), d.get("outputs") or ()
    _sorted_commitments(inputs, "in")
    _sorted_commitments(outputs, "out")
    _possible_owners(outputs)
    check(len(inputs) > 0, "in.size()", "there must be at least one input")


def _from_blind(d):
    check(amount(d["amount"]) > 0, "amount.amount > 0")
    _fee(d)
    inputs = d.get("inputs") or ()
    check(len(inputs) > 0, "inputs.size() > 0")
    check(d["amount"]["asset_id"] == d["fee"]["asset_id"], "amount.asset_id == fee.asset_id")
    _sorted_commitments(inputs, "in", "all inputs must be sorted by commitment id")


def _positive_amount(field: str):
    def rule(d):
        _fee(d)
        check(amount(d[field]) > 0, f"{field}.amount > 0")
    return rule


def _url_rule(field: str):
    def rule(d):
        _fee(d)
        _url(d.get(field), field)
    return rule


#: type -> ``rule(data)`` for types 0-42 (43-77: validation_late)
RULES = {
    0: _transfer, 1: _limit_order_create, 2: _fee, 3: _call_order_update,
    5: _account_create, 6: _account_update, 7: _whitelist, 8: _fee, 9: _fee,
    10: _asset_create, 11: _asset_update,
    12: lambda d: (_fee(d), c.bitasset_options(d["new_options"])), 13: _fee,
    14: _issue, 15: _reserve, 16: _fund_fee_pool,
    17: lambda d: (_fee(d), check(amount(d["amount"]) >= 0, "amount.amount >= 0")),
    18: lambda d: (_fee(d), check(d["asset_to_settle"] == d["settle_price"]["base"]["asset_id"],
                                  "asset_to_settle == settle_price.base.asset_id")),
    19: _publish_feed, 20: _url_rule("url"), 21: _url_rule("new_url"),
    22: _proposal_create, 23: _proposal_update, 24: _fee,
    25: lambda d: _withdraw_permission(d, False), 26: lambda d: _withdraw_permission(d, True),
    27: _withdraw_claim,
    28: lambda d: (_fee(d), check(d["withdraw_from_account"] != d["authorized_account"],
                                  "withdraw_from_account != authorized_account")),
    29: _url_rule("url"), 30: _url_rule("new_url"),
    31: lambda d: (_fee(d), c.chain_parameters(d["new_parameters"])),
    32: _positive_amount("amount"),
    33: lambda d: (_positive_amount("amount")(d),
                   check(d["owner"] != TEMP_ACCOUNT, "owner != GRAPHENE_TEMP_ACCOUNT")),
    34: _worker_create,
    35: lambda d: check(amount(d["fee"]) > 0, "fee.amount > 0"),
    36: _fee, 37: _balance_claim, 38: _override_transfer,
    39: _to_blind, 40: _blind_transfer, 41: _from_blind,
}


def validate_operation(op: list) -> None:
    """Apply the ``validate()`` of ``op``'s type to ``[type, {...}]`` (wire
    JSON); proposal_create validates its proposed operations too.  A
    virtual operation fails (``!"virtual operation"``).

    :raises UnknownOperation: not an operation type 0-77.
    :raises OperationInvalid: a rule fails (module docstring).
    :raises InvalidField: a field a rule reads is missing or malformed.
    """
    kind = kind_of(op)
    if kind in VIRTUAL_OPERATIONS:
        check(False, '!"virtual operation"')
    rule = RULES.get(kind) or LATE_RULES[kind]
    try:
        rule(op[1])
    except NodeAPIError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise InvalidField(f"operation {kind}: missing or malformed field: "
                           f"{type(exc).__name__}: {exc}") from None
