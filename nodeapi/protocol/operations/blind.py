"""Blind (confidential) transfers: transfer_to_blind (39), blind_transfer
(40), transfer_from_blind (41).

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/confidential.hpp``
(``FC_REFLECT`` order).  Structure only: Pedersen commitments
(``commitment_type``, 33 bytes), blinding factors (sha256) and range proofs
(``vector<char>``) are carried as hex, never checked here.
"""

from nodeapi.protocol.composite import Optional, Struct, Vector
from nodeapi.protocol.serialize import BYTES, COMMITMENT, PUBLIC_KEY, SHA256
from nodeapi.protocol.operations.common import FEE, op
from nodeapi.protocol.types import ACCOUNT_ID, ASSET, AUTHORITY

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
