"""Transfers, withdraw permissions, vesting balances and balance claims.

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/``
(``FC_REFLECT`` order): ``transfer.hpp`` (transfer 0, override_transfer
38), ``withdraw_permission.hpp`` (25-28), ``vesting.hpp``
(vesting_balance_create 32 with its ``vesting_policy_initializer``,
vesting_balance_withdraw 33) and ``balance.hpp`` (balance_claim 37).
"""

from nodeapi.protocol.composite import Optional, StaticVariant, Struct
from nodeapi.protocol.operations.common import EXT, FEE, op
from nodeapi.protocol.serialize import PUBLIC_KEY, TIME, UINT32, VOID
from nodeapi.protocol.types import (
    ACCOUNT_ID, ASSET, BALANCE_ID, MEMO, VESTING_BALANCE_ID, WITHDRAW_PERMISSION_ID)

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
