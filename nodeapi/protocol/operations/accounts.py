"""Account operations.

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/account.hpp``
(``FC_REFLECT`` order): account_create (5) and account_update (6) with
their ``ext`` extensions (null_ext, owner/active special authorities,
buyback options), account_whitelist (7), account_upgrade (8) and
account_transfer (9).
"""

from nodeapi.protocol.composite import Extension, Optional
from nodeapi.protocol.operations.common import EXT, FEE, op
from nodeapi.protocol.serialize import BOOL, STRING, UINT8, UINT16, VOID
from nodeapi.protocol.types import (
    ACCOUNT_ID, ACCOUNT_OPTIONS, AUTHORITY, BUYBACK_OPTIONS, SPECIAL_AUTHORITY)

OPERATIONS = {
    5: ("account_create", op("account_create", [
        FEE, ("registrar", ACCOUNT_ID), ("referrer", ACCOUNT_ID), ("referrer_percent", UINT16),
        ("name", STRING), ("owner", AUTHORITY), ("active", AUTHORITY),
        ("options", ACCOUNT_OPTIONS),
        ("extensions", Extension("account_create_operation::ext", [
            ("null_ext", VOID),
            ("owner_special_authority", SPECIAL_AUTHORITY),
            ("active_special_authority", SPECIAL_AUTHORITY),
            ("buyback_options", BUYBACK_OPTIONS),
        ]))])),
    6: ("account_update", op("account_update", [
        FEE, ("account", ACCOUNT_ID), ("owner", Optional(AUTHORITY)),
        ("active", Optional(AUTHORITY)), ("new_options", Optional(ACCOUNT_OPTIONS)),
        ("extensions", Extension("account_update_operation::ext", [
            ("null_ext", VOID),
            ("owner_special_authority", SPECIAL_AUTHORITY),
            ("active_special_authority", SPECIAL_AUTHORITY),
        ]))])),
    7: ("account_whitelist", op("account_whitelist", [
        FEE, ("authorizing_account", ACCOUNT_ID), ("account_to_list", ACCOUNT_ID),
        ("new_listing", UINT8), EXT])),
    8: ("account_upgrade", op("account_upgrade", [
        FEE, ("account_to_upgrade", ACCOUNT_ID), ("upgrade_to_lifetime_member", BOOL), EXT])),
    9: ("account_transfer", op("account_transfer", [
        FEE, ("account_id", ACCOUNT_ID), ("new_owner", ACCOUNT_ID), EXT])),
}
