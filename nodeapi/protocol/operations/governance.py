"""Governance operations: witnesses, committee members, workers and proposals.

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/``
(``FC_REFLECT`` order): ``witness.hpp`` (witness_create 20,
witness_update 21), ``proposal.hpp`` (proposal_create 22 carrying
operations in ``op_wrapper``, proposal_update 23, proposal_delete 24),
``committee_member.hpp`` (29, 30, and 31 whose ``new_parameters`` is a
``chain_parameters``, see :mod:`nodeapi.protocol.operations.chain_parameters`)
and ``worker.hpp`` (worker_create 34 with its ``worker_initializer``).
"""

from nodeapi.protocol.composite import FlatSet, Optional, StaticVariant, Struct, Vector
from nodeapi.protocol.operations.chain_parameters import CHAIN_PARAMETERS
from nodeapi.protocol.operations.common import EXT, FEE, Impacted, body_priced_fee, key_authority, op
from nodeapi.protocol.operations.variant import OPERATION
from nodeapi.protocol.serialize import BOOL, STRING, TIME, UINT16, UINT32, VOID
from nodeapi.protocol.graphene_types import PUBLIC_KEY
from nodeapi.protocol.types import (
    ACCOUNT_ID, COMMITTEE_MEMBER_ID, PROPOSAL_ID, SHARE, WITNESS_ID)
from nodeapi.protocol import validation_checks as c
from nodeapi.protocol.config import BLOCKCHAIN_PRECISION as P
from nodeapi.protocol.config import (
    COMMITTEE_ACCOUNT, MAX_SHARE_SUPPLY, MAX_URL_LENGTH, MAX_WORKER_NAME_LENGTH)
from nodeapi.protocol.serialize import UINT64
from nodeapi.protocol.validation_checks import check, fee_non_negative, num

#: ``op_wrapper`` (proposal.hpp): ``{"op": [type, {...}]}``
OP_WRAPPER = Struct("op_wrapper", [("op", OPERATION)])

#: ``worker_initializer`` (worker.hpp)
WORKER_INITIALIZER = StaticVariant("worker_initializer", [
    VOID,  # refund_worker_initializer
    Struct("vesting_balance_worker_initializer", [("pay_vesting_period_days", UINT16)]),
    VOID,  # burn_worker_initializer
], ["refund_worker_initializer", "vesting_balance_worker_initializer",
    "burn_worker_initializer"])

OPERATIONS = {
    20: ("witness_create", op("witness_create", [
        FEE, ("witness_account", ACCOUNT_ID), ("url", STRING),
        ("block_signing_key", PUBLIC_KEY)])),
    21: ("witness_update", op("witness_update", [
        FEE, ("witness", WITNESS_ID), ("witness_account", ACCOUNT_ID),
        ("new_url", Optional(STRING)), ("new_signing_key", Optional(PUBLIC_KEY))])),
    22: ("proposal_create", op("proposal_create", [
        FEE, ("fee_paying_account", ACCOUNT_ID), ("expiration_time", TIME),
        ("proposed_ops", Vector(OP_WRAPPER)), ("review_period_seconds", Optional(UINT32)),
        EXT])),
    23: ("proposal_update", op("proposal_update", [
        FEE, ("fee_paying_account", ACCOUNT_ID), ("proposal", PROPOSAL_ID),
        ("active_approvals_to_add", FlatSet(ACCOUNT_ID)),
        ("active_approvals_to_remove", FlatSet(ACCOUNT_ID)),
        ("owner_approvals_to_add", FlatSet(ACCOUNT_ID)),
        ("owner_approvals_to_remove", FlatSet(ACCOUNT_ID)),
        ("key_approvals_to_add", FlatSet(PUBLIC_KEY)),
        ("key_approvals_to_remove", FlatSet(PUBLIC_KEY)), EXT])),
    24: ("proposal_delete", op("proposal_delete", [
        FEE, ("fee_paying_account", ACCOUNT_ID), ("using_owner_authority", BOOL),
        ("proposal", PROPOSAL_ID), EXT])),
    29: ("committee_member_create", op("committee_member_create", [
        FEE, ("committee_member_account", ACCOUNT_ID), ("url", STRING)])),
    30: ("committee_member_update", op("committee_member_update", [
        FEE, ("committee_member", COMMITTEE_MEMBER_ID),
        ("committee_member_account", ACCOUNT_ID), ("new_url", Optional(STRING))])),
    31: ("committee_member_update_global_parameters",
         op("committee_member_update_global_parameters", [
             FEE, ("new_parameters", CHAIN_PARAMETERS)])),
    34: ("worker_create", op("worker_create", [
        FEE, ("owner", ACCOUNT_ID), ("work_begin_date", TIME), ("work_end_date", TIME),
        ("daily_pay", SHARE), ("name", STRING), ("url", STRING),
        ("initializer", WORKER_INITIALIZER)])),
}


# -- validate(): each type's own rules (bitshares-core libraries/protocol/*.cpp) --


def _url(value, expression: str) -> None:
    if value is not None:
        check(len(value.encode()) < MAX_URL_LENGTH,
              f"{expression}.size() < GRAPHENE_MAX_URL_LENGTH")


def _proposal_create(d):
    # each proposed operation's own validate() follows
    # (nodeapi.protocol.validation.validate_operation)
    check(len(d.get("proposed_ops") or ()) > 0, "!proposed_ops.empty()")


def _proposal_update(d):
    fee_non_negative(d)
    pairs = [(set(d.get(f"{k}_approvals_to_add") or ()),
              set(d.get(f"{k}_approvals_to_remove") or ())) for k in ("active", "owner", "key")]
    check(any(a or r for a, r in pairs), "!(active_approvals_to_add.empty() && ...)")
    for add, remove in pairs:
        check(not add & remove, "approvals_to_remove.find(a) == approvals_to_remove.end()",
              "Cannot add and remove approval at the same time.")


def _worker_create(d):
    fee_non_negative(d)
    check(d["work_end_date"] > d["work_begin_date"], "work_end_date > work_begin_date")
    pay = num(d["daily_pay"])
    check(pay > 0, "daily_pay > 0")
    check(pay < MAX_SHARE_SUPPLY, "daily_pay < GRAPHENE_MAX_SHARE_SUPPLY")
    check(len(d["name"].encode()) < MAX_WORKER_NAME_LENGTH,
          "name.size() < GRAPHENE_MAX_WORKER_NAME_LENGTH")
    _url(d["url"], "url")


def _url_rule(field: str):
    def rule(d):
        fee_non_negative(d)
        _url(d.get(field), field)
    return rule


#: type -> ``rule(data)``: the operation's ``validate()`` (virtual operations have none)
VALIDATE = {
    20: _url_rule("url"),
    21: _url_rule("new_url"),
    22: _proposal_create,
    23: _proposal_update,
    24: fee_non_negative,
    29: _url_rule("url"),
    30: _url_rule("new_url"),
    31: lambda d: (fee_non_negative(d), c.chain_parameters(d["new_parameters"])),
    34: _worker_create,
}

#: type -> its ``fee_params_t``: ``(field, wire type, default)`` in reflection order
#: (bitshares-core protocol/*.hpp; defaults in core satoshis, ``P`` = GRAPHENE_BLOCKCHAIN_PRECISION)
FEE_PARAMETERS = {
    20: [("fee", UINT64, 5000 * P)],
    21: [("fee", SHARE, 20 * P)],
    22: [("fee", UINT64, 20 * P), ("price_per_kbyte", UINT32, 10)],
    23: [("fee", UINT64, 20 * P), ("price_per_kbyte", UINT32, 10)],
    24: [("fee", UINT64, P)],
    29: [("fee", UINT64, 5000 * P)],
    30: [("fee", UINT64, 20 * P)],
    31: [("fee", UINT64, P)],
    34: [("fee", UINT64, 5000 * P)],
}


#: type -> the field naming the fee payer, or ``"="`` + a fixed account id
#: (each operation's ``fee_payer()``, bitshares-core
#: libraries/protocol/include/graphene/protocol/: witness.hpp,
#: committee_member.hpp, worker.hpp, proposal.hpp)
FEE_PAYER = {
    20: "witness_account", 21: "witness_account", 22: "fee_paying_account",
    23: "fee_paying_account", 24: "fee_paying_account", 29: "committee_member_account",
    30: "committee_member_account", 31: "=" + COMMITTEE_ACCOUNT, 34: "owner",
}

#: type -> :class:`~nodeapi.protocol.operations.common.Impacted` (bitshares-core
#: libraries/chain/db_notify.cpp ``get_impacted_account_visitor``); types not
#: listed impact their fee payer and required authorities only
IMPACTED = {
    22: Impacted(proposed=True),
}


def _proposal_approvals(d, active, owner):
    """proposal_update: the active / owner approvals added or removed."""
    active.update(d.get("active_approvals_to_add") or ())
    active.update(d.get("active_approvals_to_remove") or ())
    owner.update(d.get("owner_approvals_to_add") or ())
    owner.update(d.get("owner_approvals_to_remove") or ())


def _proposal_keys(d) -> list:
    """proposal_update: one authority over the key approvals added or
    removed (threshold = number of keys, each key weight 1)."""
    keys = set(d.get("key_approvals_to_add") or ())
    keys.update(d.get("key_approvals_to_remove") or ())
    return [key_authority(keys, len(keys))] if keys else []


#: type -> ``fee(data, params, context)``: the operation's ``calculate_fee``
#: (bitshares-core libraries/protocol/proposal.cpp); types not listed pay
#: their flat ``fee`` (:mod:`~nodeapi.protocol.operations.common`)
CALCULATE_FEE = {22: body_priced_fee, 23: body_priced_fee}

#: type -> ``rule(data, active, owner)``: the account ids whose active /
#: owner authority the operation needs besides its fee payer's active
#: (``get_required_active_authorities`` /
#: ``get_required_owner_authorities``, proposal.cpp)
REQUIRED_AUTHORITIES = {23: _proposal_approvals}

#: type -> ``rule(data) -> [authority]``: the authorities it needs besides
#: accounts' (``get_required_authorities``, proposal.cpp: the key approvals)
OTHER_AUTHORITIES = {23: _proposal_keys}
