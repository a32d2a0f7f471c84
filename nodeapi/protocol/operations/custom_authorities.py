"""Custom active authorities (BSIP 40): custom_authority_create (54),
custom_authority_update (55), custom_authority_delete (56).

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/``
``custom_authority.hpp`` and ``restriction.hpp``: a ``restriction`` is
``{member_index, restriction_type, argument, extensions}`` whose
``argument`` is a 42-way static_variant (void, scalars, typed ids, flat
sets of them, nested ``vector<restriction>``, ``vector<vector<restriction>>``
for logical or, and ``pair<int64, vector<restriction>>`` for variant
assertions), so the type is recursive.  Restrictions are serialized here;
whether they make sense for the operation type is the validation rules' job.
"""

from nodeapi.protocol.composite import FlatSet, Optional, Pair, StaticVariant, Struct, Vector
from nodeapi.protocol.errors import UnknownOperation
from nodeapi.protocol.operations.variant import operation_name
from nodeapi.protocol.operations.common import EXT, FEE, Impacted, op
from nodeapi.protocol.serialize import BOOL, INT64, SHA256, STRING, TIME, UINT16, VARINT, VOID
from nodeapi.protocol.graphene_types import PUBLIC_KEY
from nodeapi.protocol.types import (
    ACCOUNT_ID, ASSET_ID, AUTHORITY, BALANCE_ID, CALL_ORDER_ID, COMMITTEE_MEMBER_ID,
    CUSTOM_AUTHORITY_ID, CUSTOM_ID, FORCE_SETTLEMENT_ID, LIMIT_ORDER_ID, PROPOSAL_ID,
    VESTING_BALANCE_ID, WITHDRAW_PERMISSION_ID, WITNESS_ID, WORKER_ID)
from nodeapi.protocol import validation_checks as c
from nodeapi.protocol.config import BLOCKCHAIN_PRECISION as P
from nodeapi.protocol.config import COMMITTEE_ACCOUNT, RELAXED_COMMITTEE_ACCOUNT, TEMP_ACCOUNT, WITNESS_ACCOUNT
from nodeapi.protocol.serialize import UINT32, UINT64
from nodeapi.protocol.validation_checks import check, checked_fee, num

_SCALARS = [
    ("bool", BOOL), ("int64_t", INT64), ("string", STRING), ("time_point_sec", TIME),
    ("public_key_type", PUBLIC_KEY), ("sha256", SHA256), ("account_id_type", ACCOUNT_ID),
    ("asset_id_type", ASSET_ID), ("force_settlement_id_type", FORCE_SETTLEMENT_ID),
    ("committee_member_id_type", COMMITTEE_MEMBER_ID), ("witness_id_type", WITNESS_ID),
    ("limit_order_id_type", LIMIT_ORDER_ID), ("call_order_id_type", CALL_ORDER_ID),
    ("custom_id_type", CUSTOM_ID), ("proposal_id_type", PROPOSAL_ID),
    ("withdraw_permission_id_type", WITHDRAW_PERMISSION_ID),
    ("vesting_balance_id_type", VESTING_BALANCE_ID), ("worker_id_type", WORKER_ID),
    ("balance_id_type", BALANCE_ID),
]

#: ``restriction`` (restriction.hpp); its argument refers back to it
RESTRICTION = Struct("restriction", [])
_RESTRICTIONS = Vector(RESTRICTION)

#: ``restriction::argument_type`` (tags 0..41, restriction.hpp)
RESTRICTION_ARGUMENT = StaticVariant(
    "restriction argument",
    [VOID] + [t for _n, t in _SCALARS] + [FlatSet(t) for _n, t in _SCALARS]
    + [_RESTRICTIONS, Vector(_RESTRICTIONS), Pair(INT64, _RESTRICTIONS)],
    ["void_t"] + [n for n, _t in _SCALARS] + [f"flat_set<{n}>" for n, _t in _SCALARS]
    + ["vector<restriction>", "vector<vector<restriction>>", "variant_assert_argument_type"])

RESTRICTION.fields = (
    ("member_index", VARINT),
    ("restriction_type", VARINT),
    ("argument", RESTRICTION_ARGUMENT),
    EXT,
)

OPERATIONS = {
    54: ("custom_authority_create", op("custom_authority_create", [
        FEE, ("account", ACCOUNT_ID), ("enabled", BOOL), ("valid_from", TIME),
        ("valid_to", TIME), ("operation_type", VARINT), ("auth", AUTHORITY),
        ("restrictions", _RESTRICTIONS), EXT])),
    55: ("custom_authority_update", op("custom_authority_update", [
        FEE, ("account", ACCOUNT_ID), ("authority_to_update", CUSTOM_AUTHORITY_ID),
        ("new_enabled", Optional(BOOL)), ("new_valid_from", Optional(TIME)),
        ("new_valid_to", Optional(TIME)), ("new_auth", Optional(AUTHORITY)),
        ("restrictions_to_remove", FlatSet(UINT16)), ("restrictions_to_add", _RESTRICTIONS),
        EXT])),
    56: ("custom_authority_delete", op("custom_authority_delete", [
        FEE, ("account", ACCOUNT_ID), ("authority_to_delete", CUSTOM_AUTHORITY_ID), EXT])),
}


# -- validate(): each type's own rules (bitshares-core libraries/protocol/*.cpp) --


def _is_operation_type(value) -> bool:
    """Whether ``value`` names an operation type of bitshares-core 7.x."""
    try:
        operation_name(num(value))
    except UnknownOperation:
        return False
    return True


def _special_account(d, verb: str):
    check(d["account"] not in (TEMP_ACCOUNT, COMMITTEE_ACCOUNT, WITNESS_ACCOUNT,
                                 RELAXED_COMMITTEE_ACCOUNT),
          "account != GRAPHENE_TEMP_ACCOUNT && account != GRAPHENE_COMMITTEE_ACCOUNT && "
          "account != GRAPHENE_WITNESS_ACCOUNT && account != GRAPHENE_RELAXED_COMMITTEE_ACCOUNT",
          f"Can not {verb} custom authority for special accounts")


def _custom_authority_create(d):
    checked_fee(d, "Fee amount can not be negative")
    _special_account(d, "create")
    check(d["valid_from"] < d["valid_to"], "valid_from < valid_to",
          "valid_from must be earlier than valid_to")
    check(not d["auth"].get("address_auths"), "auth.address_auths.size() == 0",
          "Address authorities are not supported")
    check(not c.is_impossible(d["auth"]), "!auth.is_impossible()",
          "Cannot use an imposible authority threshold")
    check(_is_operation_type(d["operation_type"]), "get_restriction_predicate",
          f"Unknown operation type {d['operation_type']}")
    check(isinstance(d.get("restrictions", []), list), "get_restriction_predicate",
          "restrictions must be a list")


def _custom_authority_update(d):
    checked_fee(d, "Fee amount can not be negative")
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
    checked_fee(d, "Fee amount can not be negative")
    _special_account(d, "delete")


#: type -> ``rule(data)``: the operation's ``validate()`` (virtual operations have none)
VALIDATE = {
    54: _custom_authority_create,
    55: _custom_authority_update,
    56: _custom_authority_delete,
}

#: type -> its ``fee_params_t``: ``(field, wire type, default)`` in reflection order
#: (bitshares-core protocol/*.hpp; defaults in core satoshis, ``P`` = GRAPHENE_BLOCKCHAIN_PRECISION)
FEE_PARAMETERS = {
    54: [("basic_fee", UINT64, P), ("price_per_byte", UINT32, P // 10)],
    55: [("basic_fee", UINT64, P), ("price_per_byte", UINT32, P // 10)],
    56: [("fee", UINT64, P)],
}


#: type -> the field naming the fee payer, or ``"="`` + a fixed account id
#: (each operation's ``fee_payer()``, bitshares-core
#: libraries/protocol/include/graphene/protocol/custom_authority.hpp)
FEE_PAYER = {
    54: "account", 55: "account", 56: "account",
}

#: type -> :class:`~nodeapi.protocol.operations.common.Impacted` (bitshares-core
#: libraries/chain/db_notify.cpp ``get_impacted_account_visitor``); types not
#: listed impact their fee payer and required authorities only
IMPACTED = {
    54: Impacted(authorities=("auth",)),
    55: Impacted(authorities=("new_auth",)),
}


def _create_fee(d, p, context):
    """``basic_fee`` plus ``price_per_byte`` over the packed restrictions
    and authority."""
    priced = context.restrictions(d.get("restrictions")) + context.authority(d["auth"])
    return p["basic_fee"] + p["price_per_byte"] * priced


def _update_fee(d, p, context):
    """``basic_fee`` plus ``price_per_byte`` over the restrictions added and
    the new authority, if any."""
    fee = p["basic_fee"] + p["price_per_byte"] * context.restrictions(d.get("restrictions_to_add"))
    if d.get("new_auth") is not None:
        fee += p["price_per_byte"] * context.authority(d["new_auth"])
    return fee


#: type -> ``fee(data, params, context)``: the operation's ``calculate_fee``
#: (bitshares-core libraries/protocol/custom_authority.cpp); types not
#: listed pay their flat ``fee``
#: (:mod:`~nodeapi.protocol.operations.common`)
CALCULATE_FEE = {54: _create_fee, 55: _update_fee}

#: type -> ``rule(data, active, owner)``: the account ids whose active /
#: owner authority the operation needs besides its fee payer's active
#: (``get_required_active_authorities`` /
#: ``get_required_owner_authorities``)
REQUIRED_AUTHORITIES: dict = {}

#: type -> ``rule(data) -> [authority]``: the authorities it needs besides
#: accounts' (``get_required_authorities``)
OTHER_AUTHORITIES: dict = {}
