"""Hashed time-lock contracts: htlc_create (49), htlc_redeem (50),
htlc_redeemed (51, virtual), htlc_extend (52), htlc_refund (53, virtual).

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/htlc.hpp``
(``FC_REFLECT`` order); ``htlc_hash`` is the static_variant of ripemd160,
sha1, sha256 and hash160 (JSON ``[tag, "hex"]``).
"""

from nodeapi.protocol.composite import Extension, StaticVariant
from nodeapi.protocol.operations.common import EXT, FEE, Impacted, data_fee, op, zero_fee
from nodeapi.protocol.serialize import BYTES, HASH160, RIPEMD160, SHA1, SHA256, UINT16, UINT32
from nodeapi.protocol.types import ACCOUNT_ID, ASSET, HTLC_ID, MEMO
from nodeapi.protocol.config import BLOCKCHAIN_PRECISION as P
from nodeapi.protocol.serialize import UINT64, to_int
from nodeapi.protocol.validation_checks import checked_fee, positive_field

HTLC_HASH = StaticVariant("htlc_hash", [RIPEMD160, SHA1, SHA256, HASH160],
                          ["ripemd160", "sha1", "sha256", "hash160"])

OPERATIONS = {
    49: ("htlc_create", op("htlc_create", [
        FEE, ("from", ACCOUNT_ID), ("to", ACCOUNT_ID), ("amount", ASSET),
        ("preimage_hash", HTLC_HASH), ("preimage_size", UINT16),
        ("claim_period_seconds", UINT32),
        ("extensions", Extension("htlc_create_operation::additional_options_type", [
            ("memo", MEMO),
        ]))])),
    50: ("htlc_redeem", op("htlc_redeem", [
        FEE, ("htlc_id", HTLC_ID), ("redeemer", ACCOUNT_ID), ("preimage", BYTES), EXT])),
    51: ("htlc_redeemed", op("htlc_redeemed", [  # virtual
        FEE, ("htlc_id", HTLC_ID), ("from", ACCOUNT_ID), ("to", ACCOUNT_ID),
        ("redeemer", ACCOUNT_ID), ("amount", ASSET), ("htlc_preimage_hash", HTLC_HASH),
        ("htlc_preimage_size", UINT16), ("preimage", BYTES)])),
    52: ("htlc_extend", op("htlc_extend", [
        FEE, ("htlc_id", HTLC_ID), ("update_issuer", ACCOUNT_ID), ("seconds_to_add", UINT32),
        EXT])),
    53: ("htlc_refund", op("htlc_refund", [  # virtual
        FEE, ("htlc_id", HTLC_ID), ("to", ACCOUNT_ID), ("original_htlc_recipient", ACCOUNT_ID),
        ("htlc_amount", ASSET), ("htlc_preimage_hash", HTLC_HASH),
        ("htlc_preimage_size", UINT16)])),
}


# -- validate(): each type's own rules (bitshares-core libraries/protocol/*.cpp) --


#: type -> ``rule(data)``: the operation's ``validate()`` (virtual operations have none)
VALIDATE = {
    49: lambda d: positive_field(d, "amount", "HTLC amount should be greater than zero",
                            "Fee amount should not be negative"),
    50: lambda d: checked_fee(d, "Fee amount should not be negative"),
    52: lambda d: checked_fee(d, "Fee amount should not be negative"),
}

#: type -> its ``fee_params_t``: ``(field, wire type, default)`` in reflection order
#: (bitshares-core protocol/*.hpp; defaults in core satoshis, ``P`` = GRAPHENE_BLOCKCHAIN_PRECISION)
FEE_PARAMETERS = {
    49: [("fee", UINT64, P), ("fee_per_day", UINT64, P)],
    50: [("fee", UINT64, P), ("fee_per_kb", UINT64, P)],
    51: [],
    52: [("fee", UINT64, P), ("fee_per_day", UINT64, P)],
    53: [],
}


#: type -> the field naming the fee payer, or ``"="`` + a fixed account id
#: (each operation's ``fee_payer()``, bitshares-core
#: libraries/protocol/include/graphene/protocol/htlc.hpp)
FEE_PAYER = {
    49: "from", 50: "redeemer", 51: "to", 52: "update_issuer", 53: "to",
}

def _htlc_redeemed(data: dict) -> set:
    """htlc_redeemed: ``from``, and ``to`` unless it is the redeemer
    (db_notify.cpp inserts neither the fee payer nor the redeemer)."""
    out = {data["from"]}
    if data["to"] != data["redeemer"]:
        out.add(data["to"])
    return out


#: type -> :class:`~nodeapi.protocol.operations.common.Impacted` (bitshares-core
#: libraries/chain/db_notify.cpp ``get_impacted_account_visitor``); types not
#: listed impact their fee payer and required authorities only
IMPACTED = {
    49: Impacted(named=("to",)),
    51: Impacted(only=_htlc_redeemed),
}


SECONDS_PER_DAY = 86400


def _days(seconds) -> int:
    """Whole days, rounded up."""
    return (to_int(seconds, "seconds") + SECONDS_PER_DAY - 1) // SECONDS_PER_DAY


def _htlc_create_fee(d, p, context):
    """``fee`` plus ``fee_per_day`` of the claim period, plus the memo
    extension's size at transfer's (0) ``price_per_kbyte``
    (fee_schedule_calc.cpp's htlc_create visitor)."""
    fee = p["fee"] + p["fee_per_day"] * _days(d["claim_period_seconds"])
    ext = d.get("extensions")
    memo = ext.get("memo") if isinstance(ext, dict) else None
    if memo is not None:
        fee += data_fee(context.optional_memo(memo), context.parameters(0)["price_per_kbyte"])
    return fee


def _htlc_redeem_fee(d, p, context):
    """``fee`` plus ``fee_per_kb`` for each started kilobyte of preimage."""
    preimage = d.get("preimage") or ""
    return p["fee"] + (len(preimage) // 2 + 1023) // 1024 * p["fee_per_kb"]


def _htlc_extend_fee(d, p, context):
    return p["fee"] + p["fee_per_day"] * _days(d["seconds_to_add"])


#: type -> ``fee(data, params, context)``: the operation's ``calculate_fee``
#: (bitshares-core libraries/protocol/htlc.cpp, fee_schedule_calc.cpp);
#: types not listed pay their flat ``fee``
#: (:mod:`~nodeapi.protocol.operations.common`)
CALCULATE_FEE = {49: _htlc_create_fee, 50: _htlc_redeem_fee, 51: zero_fee, 52: _htlc_extend_fee, 53: zero_fee}

#: type -> ``rule(data, active, owner)``: the account ids whose active /
#: owner authority the operation needs besides its fee payer's active
#: (``get_required_active_authorities`` /
#: ``get_required_owner_authorities``)
REQUIRED_AUTHORITIES: dict = {}

#: type -> ``rule(data) -> [authority]``: the authorities it needs besides
#: accounts' (``get_required_authorities``)
OTHER_AUTHORITIES: dict = {}
