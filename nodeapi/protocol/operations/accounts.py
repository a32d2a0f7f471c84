"""Account operations.

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/account.hpp``
(``FC_REFLECT`` order): account_create (5) and account_update (6) with
their ``ext`` extensions (null_ext, owner/active special authorities,
buyback options), account_whitelist (7), account_upgrade (8) and
account_transfer (9).
"""

from nodeapi.protocol.composite import Extension, Optional
from nodeapi.protocol.operations.common import EXT, FEE, Impacted, body_priced_fee, data_fee, op
from nodeapi.protocol.serialize import BOOL, STRING, UINT8, UINT16, VOID
from nodeapi.protocol.types import (
    ACCOUNT_ID, ACCOUNT_OPTIONS, AUTHORITY, BUYBACK_OPTIONS, SPECIAL_AUTHORITY)
from nodeapi.protocol import validation_checks as c
from nodeapi.protocol.config import BLOCKCHAIN_PRECISION as P
from nodeapi.protocol.config import COMMITTEE_ACCOUNT, GRAPHENE_100_PERCENT, TEMP_ACCOUNT
from nodeapi.protocol.serialize import UINT32, UINT64
from nodeapi.protocol.types import SHARE
from nodeapi.protocol.validation_checks import check, extensions_of, fee_non_negative, num

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


# -- validate(): each type's own rules (bitshares-core libraries/protocol/*.cpp) --


def _account_create(d):
    fee_non_negative(d)
    check(c.is_valid_name(d["name"]), "is_valid_name( name )")
    check(num(d.get("referrer_percent", 0)) <= GRAPHENE_100_PERCENT,
          "referrer_percent <= GRAPHENE_100_PERCENT")
    c.account_authority(d["owner"], "owner", "create")
    c.account_authority(d["active"], "active", "create")
    c.account_options(d["options"])
    ext = extensions_of(d)
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
    fee_non_negative(d)
    check(d["account"] != COMMITTEE_ACCOUNT, "account != account_id_type()")
    ext = extensions_of(d)
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
    fee_non_negative(d)
    check(num(d["new_listing"]) < 0x4, "new_listing < 0x4")


#: type -> ``rule(data)``: the operation's ``validate()`` (virtual operations have none)
VALIDATE = {
    5: _account_create,
    6: _account_update,
    7: _whitelist,
    8: fee_non_negative,
    9: fee_non_negative,
}

#: type -> its ``fee_params_t``: ``(field, wire type, default)`` in reflection order
#: (bitshares-core protocol/*.hpp; defaults in core satoshis, ``P`` = GRAPHENE_BLOCKCHAIN_PRECISION)
FEE_PARAMETERS = {
    5: [("basic_fee", UINT64, 5 * P), ("premium_fee", UINT64, 2000 * P), ("price_per_kbyte", UINT32, P)],
    6: [("fee", SHARE, 20 * P), ("price_per_kbyte", UINT32, P)],
    7: [("fee", SHARE, 300000)],
    8: [("membership_annual_fee", UINT64, 2000 * P), ("membership_lifetime_fee", UINT64, 10000 * P)],
    9: [("fee", UINT64, 500 * P)],
}


#: type -> the field naming the fee payer, or ``"="`` + a fixed account id
#: (each operation's ``fee_payer()``, bitshares-core
#: libraries/protocol/include/graphene/protocol/account.hpp)
FEE_PAYER = {
    5: "registrar", 6: "account", 7: "authorizing_account", 8: "account_to_upgrade",
    9: "account_id",
}

#: type -> :class:`~nodeapi.protocol.operations.common.Impacted` (bitshares-core
#: libraries/chain/db_notify.cpp ``get_impacted_account_visitor``); types not
#: listed impact their fee payer and required authorities only
IMPACTED = {
    5: Impacted(named=("referrer",), authorities=("owner", "active"), result=True),
    6: Impacted(authorities=("owner", "active")),
    7: Impacted(named=("account_to_list",)),
}


def is_cheap_name(name: str) -> bool:
    """graphene ``is_cheap_name`` (account.cpp): has a digit, '.', '-' or
    '/', or no vowel (a, e, i, o, u, y)."""
    if any(c.isdigit() or c in ".-/" for c in name):
        return True
    return not any(c in "aeiouy" for c in name)


def is_owner_update(data: dict) -> bool:
    """account_update's ``is_owner_update()``: sets ``owner`` or the owner
    special authority."""
    return data.get("owner") is not None or \
        extensions_of(data).get("owner_special_authority") is not None


def _account_create_fee(d, p, context):
    """The basic fee for a cheap name, else the premium one, plus the
    struct's size at ``price_per_kbyte``."""
    base = p["basic_fee"] if is_cheap_name(d["name"]) else p["premium_fee"]
    return base + data_fee(context.body(), p["price_per_kbyte"])


def _account_update_fee(d, p, context):
    """Priced by size only when it sets ``new_options``."""
    return body_priced_fee(d, p, context) if d.get("new_options") is not None else p["fee"]


def _account_upgrade_fee(d, p, context):
    if d.get("upgrade_to_lifetime_member"):
        return p["membership_lifetime_fee"]
    return p["membership_annual_fee"]


def _buyback_issuer(d, active, owner):
    """account_create with ``buyback_options``: the asset's issuer."""
    buyback = extensions_of(d).get("buyback_options")
    if buyback:
        active.add(buyback["asset_to_buy_issuer"])


def _owner_update(d, active, owner):
    """account_update changing the owner authority: the account's owner."""
    if is_owner_update(d):
        owner.add(d["account"])


#: type -> ``fee(data, params, context)``: the operation's ``calculate_fee``
#: (bitshares-core libraries/protocol/account.cpp); types not listed pay
#: their flat ``fee`` (:mod:`~nodeapi.protocol.operations.common`)
CALCULATE_FEE = {5: _account_create_fee, 6: _account_update_fee, 8: _account_upgrade_fee}

#: type -> ``rule(data, active, owner)``: the account ids whose active /
#: owner authority the operation needs besides its fee payer's active
#: (``get_required_active_authorities`` /
#: ``get_required_owner_authorities``, account.hpp)
REQUIRED_AUTHORITIES = {5: _buyback_issuer, 6: _owner_update}

#: type -> ``rule(data) -> [authority]``: the authorities it needs besides
#: accounts' (``get_required_authorities``)
OTHER_AUTHORITIES: dict = {}
