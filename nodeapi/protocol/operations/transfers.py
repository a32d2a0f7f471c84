"""Transfers, withdraw permissions, vesting balances and balance claims.

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/``
(``FC_REFLECT`` order): ``transfer.hpp`` (transfer 0, override_transfer
38), ``withdraw_permission.hpp`` (25-28), ``vesting.hpp``
(vesting_balance_create 32 with its ``vesting_policy_initializer``,
vesting_balance_withdraw 33) and ``balance.hpp`` (balance_claim 37).
"""

from nodeapi.protocol.composite import Optional, StaticVariant, Struct
from nodeapi.protocol.operations.common import EXT, FEE, Impacted, key_authority, memo_priced_fee, op, zero_fee
from nodeapi.protocol.serialize import TIME, UINT32, VOID
from nodeapi.protocol.graphene_types import PUBLIC_KEY
from nodeapi.protocol.types import (
    ACCOUNT_ID, ASSET, BALANCE_ID, MEMO, VESTING_BALANCE_ID, WITHDRAW_PERMISSION_ID)
from nodeapi.protocol.config import BLOCKCHAIN_PRECISION as P
from nodeapi.protocol.config import CORE_ASSET, TEMP_ACCOUNT
from nodeapi.protocol.keys import public_key_bytes
from nodeapi.protocol.serialize import UINT64
from nodeapi.protocol.validation_checks import amount, check, fee_non_negative, num

#: ``vesting_policy_initializer`` (vesting.hpp)
VESTING_POLICY_INITIALIZER = StaticVariant("vesting_policy_initializer", [
    Struct("linear_vesting_policy_initializer", [
        ("begin_timestamp", TIME),
        ("vesting_cliff_seconds", UINT32),
        ("vesting_duration_seconds", UINT32),
    ]),
    Struct("cdd_vesting_policy_initializer", [
        ("start_claim", TIME),
        ("vesting_seconds", UINT32),
    ]),
    VOID,  # instant_vesting_policy_initializer
], ["linear_vesting_policy_initializer", "cdd_vesting_policy_initializer",
    "instant_vesting_policy_initializer"])

OPERATIONS = {
    0: ("transfer", op("transfer", [
        FEE, ("from", ACCOUNT_ID), ("to", ACCOUNT_ID), ("amount", ASSET),
        ("memo", Optional(MEMO)), EXT])),
    25: ("withdraw_permission_create", op("withdraw_permission_create", [
        FEE, ("withdraw_from_account", ACCOUNT_ID), ("authorized_account", ACCOUNT_ID),
        ("withdrawal_limit", ASSET), ("withdrawal_period_sec", UINT32),
        ("periods_until_expiration", UINT32), ("period_start_time", TIME)])),
    26: ("withdraw_permission_update", op("withdraw_permission_update", [
        FEE, ("withdraw_from_account", ACCOUNT_ID), ("authorized_account", ACCOUNT_ID),
        ("permission_to_update", WITHDRAW_PERMISSION_ID), ("withdrawal_limit", ASSET),
        ("withdrawal_period_sec", UINT32), ("period_start_time", TIME),
        ("periods_until_expiration", UINT32)])),
    27: ("withdraw_permission_claim", op("withdraw_permission_claim", [
        FEE, ("withdraw_permission", WITHDRAW_PERMISSION_ID),
        ("withdraw_from_account", ACCOUNT_ID), ("withdraw_to_account", ACCOUNT_ID),
        ("amount_to_withdraw", ASSET), ("memo", Optional(MEMO))])),
    28: ("withdraw_permission_delete", op("withdraw_permission_delete", [
        FEE, ("withdraw_from_account", ACCOUNT_ID), ("authorized_account", ACCOUNT_ID),
        ("withdrawal_permission", WITHDRAW_PERMISSION_ID)])),
    32: ("vesting_balance_create", op("vesting_balance_create", [
        FEE, ("creator", ACCOUNT_ID), ("owner", ACCOUNT_ID), ("amount", ASSET),
        ("policy", VESTING_POLICY_INITIALIZER)])),
    33: ("vesting_balance_withdraw", op("vesting_balance_withdraw", [
        FEE, ("vesting_balance", VESTING_BALANCE_ID), ("owner", ACCOUNT_ID),
        ("amount", ASSET)])),
    37: ("balance_claim", op("balance_claim", [
        FEE, ("deposit_to_account", ACCOUNT_ID), ("balance_to_claim", BALANCE_ID),
        ("balance_owner_key", PUBLIC_KEY), ("total_claimed", ASSET)])),
    38: ("override_transfer", op("override_transfer", [
        FEE, ("issuer", ACCOUNT_ID), ("from", ACCOUNT_ID), ("to", ACCOUNT_ID),
        ("amount", ASSET), ("memo", Optional(MEMO)), EXT])),
}


# -- validate(): each type's own rules (bitshares-core libraries/protocol/*.cpp) --


def _transfer(d):
    fee_non_negative(d)
    check(d["from"] != d["to"], "from != to")
    check(amount(d["amount"]) > 0, "amount.amount > 0")


def _withdraw_permission(d, update: bool):
    """withdraw_permission_create (``update`` False) / _update: the same
    rules, in graphene's two orders."""
    if update:
        check(amount(d["withdrawal_limit"]) > 0, "withdrawal_limit.amount > 0")
    fee_non_negative(d)
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
    fee_non_negative(d)


def _balance_claim(d):
    check(amount(d["fee"]) == 0 and d["fee"]["asset_id"] == CORE_ASSET, "fee == asset()")
    check(any(public_key_bytes(d["balance_owner_key"])),
          "balance_owner_key != public_key_type()")


def _override_transfer(d):
    _transfer(d)
    check(d["issuer"] != d["from"], "issuer != from")


def _positive_amount(field: str):
    def rule(d):
        fee_non_negative(d)
        check(amount(d[field]) > 0, f"{field}.amount > 0")
    return rule


#: type -> ``rule(data)``: the operation's ``validate()`` (virtual operations have none)
VALIDATE = {
    0: _transfer,
    25: lambda d: _withdraw_permission(d, False),
    26: lambda d: _withdraw_permission(d, True),
    27: _withdraw_claim,
    28: lambda d: (fee_non_negative(d), check(d["withdraw_from_account"] != d["authorized_account"],
                                  "withdraw_from_account != authorized_account")),
    32: _positive_amount("amount"),
    33: lambda d: (_positive_amount("amount")(d),
                   check(d["owner"] != TEMP_ACCOUNT, "owner != GRAPHENE_TEMP_ACCOUNT")),
    37: _balance_claim,
    38: _override_transfer,
}

#: type -> its ``fee_params_t``: ``(field, wire type, default)`` in reflection order
#: (bitshares-core protocol/*.hpp; defaults in core satoshis, ``P`` = GRAPHENE_BLOCKCHAIN_PRECISION)
FEE_PARAMETERS = {
    0: [("fee", UINT64, 20 * P), ("price_per_kbyte", UINT32, 10 * P)],
    25: [("fee", UINT64, P)],
    26: [("fee", UINT64, P)],
    27: [("fee", UINT64, 20 * P), ("price_per_kbyte", UINT32, 10)],
    28: [("fee", UINT64, 0)],
    32: [("fee", UINT64, P)],
    33: [("fee", UINT64, 20 * P)],
    37: [],
    38: [("fee", UINT64, 20 * P), ("price_per_kbyte", UINT32, 10)],
}


#: type -> the field naming the fee payer, or ``"="`` + a fixed account id
#: (each operation's ``fee_payer()``, bitshares-core
#: libraries/protocol/include/graphene/protocol/: transfer.hpp,
#: withdraw_permission.hpp, vesting.hpp, balance.hpp)
FEE_PAYER = {
    0: "from", 25: "withdraw_from_account", 26: "withdraw_from_account",
    27: "withdraw_to_account", 28: "withdraw_from_account", 32: "creator", 33: "owner",
    37: "deposit_to_account", 38: "issuer",
}

#: type -> :class:`~nodeapi.protocol.operations.common.Impacted` (bitshares-core
#: libraries/chain/db_notify.cpp ``get_impacted_account_visitor``); types not
#: listed impact their fee payer and required authorities only
IMPACTED = {
    0: Impacted(named=("to",)),
    25: Impacted(named=("authorized_account",)),
    26: Impacted(named=("authorized_account",)),
    27: Impacted(named=("withdraw_from_account",)),
    28: Impacted(named=("authorized_account",)),
    32: Impacted(named=("owner",)),
    38: Impacted(named=("to", "from")),
}


#: type -> ``fee(data, params, context)``: the operation's ``calculate_fee``
#: (bitshares-core libraries/protocol/transfer.cpp, withdraw_permission.cpp,
#: balance.hpp); types not listed pay their flat ``fee``
#: (:mod:`~nodeapi.protocol.operations.common`)
CALCULATE_FEE = {0: memo_priced_fee, 27: memo_priced_fee, 37: zero_fee, 38: memo_priced_fee}

#: type -> ``rule(data, active, owner)``: the account ids whose active /
#: owner authority the operation needs besides its fee payer's active
#: (``get_required_active_authorities`` /
#: ``get_required_owner_authorities``)
REQUIRED_AUTHORITIES: dict = {}

#: type -> ``rule(data) -> [authority]``: the authorities it needs besides
#: accounts' (``get_required_authorities``, balance.hpp: the balance owner
#: key)
OTHER_AUTHORITIES = {37: lambda d: [key_authority([d["balance_owner_key"]])]}
