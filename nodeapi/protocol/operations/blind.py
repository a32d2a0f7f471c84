"""Blind (confidential) transfers: transfer_to_blind (39), blind_transfer
(40), transfer_from_blind (41).

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/confidential.hpp``
(``FC_REFLECT`` order).  Structure only: Pedersen commitments
(``commitment_type``, 33 bytes), blinding factors (sha256) and range proofs
(``vector<char>``) are carried as hex, never checked here.
"""

from nodeapi.protocol.composite import Optional, Struct, Vector
from nodeapi.protocol.serialize import BYTES, COMMITMENT, SHA256
from nodeapi.protocol.graphene_types import PUBLIC_KEY
from nodeapi.protocol.operations.common import FEE, Impacted, op
from nodeapi.protocol.types import ACCOUNT_ID, ASSET, AUTHORITY
from nodeapi.protocol import validation_checks as c
from nodeapi.protocol.config import BLOCKCHAIN_PRECISION as P
from nodeapi.protocol.config import TEMP_ACCOUNT
from nodeapi.protocol.serialize import UINT32, UINT64
from nodeapi.protocol.validation_checks import amount, check, fee_non_negative

STEALTH_CONFIRMATION = Struct("stealth_confirmation", [
    ("one_time_key", PUBLIC_KEY),
    ("to", Optional(PUBLIC_KEY)),
    ("encrypted_memo", BYTES),
])

BLIND_INPUT = Struct("blind_input", [("commitment", COMMITMENT), ("owner", AUTHORITY)])

BLIND_OUTPUT = Struct("blind_output", [
    ("commitment", COMMITMENT),
    ("range_proof", BYTES),
    ("owner", AUTHORITY),
    ("stealth_memo", Optional(STEALTH_CONFIRMATION)),
])

OPERATIONS = {
    39: ("transfer_to_blind", op("transfer_to_blind", [
        FEE, ("amount", ASSET), ("from", ACCOUNT_ID), ("blinding_factor", SHA256),
        ("outputs", Vector(BLIND_OUTPUT))])),
    40: ("blind_transfer", op("blind_transfer", [
        FEE, ("inputs", Vector(BLIND_INPUT)), ("outputs", Vector(BLIND_OUTPUT))])),
    41: ("transfer_from_blind", op("transfer_from_blind", [
        FEE, ("amount", ASSET), ("to", ACCOUNT_ID), ("blinding_factor", SHA256),
        ("inputs", Vector(BLIND_INPUT))])),
}


# -- validate(): each type's own rules (bitshares-core libraries/protocol/*.cpp) --


def _sorted_commitments(items, what: str, message: str = "") -> None:
    commitments = [i["commitment"] for i in items]
    for a, b in zip(commitments, commitments[1:]):
        check(a < b, f"{what}[i-1] < {what}[i]", message)


def _possible_owners(outputs) -> None:
    for out in outputs:
        check(not c.is_impossible(out["owner"]), "!outputs[i].owner.is_impossible()")


def _to_blind(d):
    fee_non_negative(d)
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
    fee_non_negative(d)
    inputs = d.get("inputs") or ()
    check(len(inputs) > 0, "inputs.size() > 0")
    check(d["amount"]["asset_id"] == d["fee"]["asset_id"], "amount.asset_id == fee.asset_id")
    _sorted_commitments(inputs, "in", "all inputs must be sorted by commitment id")


#: type -> ``rule(data)``: the operation's ``validate()`` (virtual operations have none)
VALIDATE = {
    39: _to_blind,
    40: _blind_transfer,
    41: _from_blind,
}

#: type -> its ``fee_params_t``: ``(field, wire type, default)`` in reflection order
#: (bitshares-core protocol/*.hpp; defaults in core satoshis, ``P`` = GRAPHENE_BLOCKCHAIN_PRECISION)
FEE_PARAMETERS = {
    39: [("fee", UINT64, 5 * P), ("price_per_output", UINT32, 5 * P)],
    40: [("fee", UINT64, 5 * P), ("price_per_output", UINT32, 5 * P)],
    41: [("fee", UINT64, 5 * P)],
}


#: type -> the field naming the fee payer, or ``"="`` + a fixed account id
#: (each operation's ``fee_payer()``, bitshares-core
#: libraries/protocol/include/graphene/protocol/confidential.hpp)
FEE_PAYER = {
    39: "from", 40: "=" + TEMP_ACCOUNT, 41: "=" + TEMP_ACCOUNT,
}

#: type -> :class:`~nodeapi.protocol.operations.common.Impacted` (bitshares-core
#: libraries/chain/db_notify.cpp ``get_impacted_account_visitor``); types not
#: listed impact their fee payer and required authorities only
IMPACTED = {
    39: Impacted(blind=("outputs",)),
    40: Impacted(blind=("inputs", "outputs")),
    41: Impacted(named=("to",), blind=("inputs",)),
}


def _per_output_fee(d, p, context):
    """``fee`` plus ``price_per_output`` for each output."""
    return p["fee"] + len(d.get("outputs") or ()) * p["price_per_output"]


def _input_owners(d) -> list:
    return [i["owner"] for i in d.get("inputs") or ()]


#: type -> ``fee(data, params, context)``: the operation's ``calculate_fee``
#: (bitshares-core libraries/protocol/confidential.cpp); types not listed
#: pay their flat ``fee`` (:mod:`~nodeapi.protocol.operations.common`)
CALCULATE_FEE = {39: _per_output_fee, 40: _per_output_fee}

#: type -> ``rule(data, active, owner)``: the account ids whose active /
#: owner authority the operation needs besides its fee payer's active
#: (``get_required_active_authorities`` /
#: ``get_required_owner_authorities``)
REQUIRED_AUTHORITIES: dict = {}

#: type -> ``rule(data) -> [authority]``: the authorities it needs besides
#: accounts' (``get_required_authorities``, confidential.hpp: each input's
#: owner)
OTHER_AUTHORITIES = {40: _input_owners, 41: _input_owners}
