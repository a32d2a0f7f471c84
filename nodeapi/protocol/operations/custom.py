"""custom (35), assert (36) and fba_distribute (44, virtual).

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/``
``custom.hpp``, ``assert.hpp`` (the ``predicate`` static_variant) and
``fba.hpp`` (``FC_REFLECT`` order).
"""

from nodeapi.protocol.composite import FlatSet, StaticVariant, Struct, Vector
from nodeapi.protocol.operations.common import EXT, FEE, body_priced_fee, op, zero_fee
from nodeapi.protocol.serialize import BYTES, RIPEMD160, STRING, UINT16
from nodeapi.protocol.graphene_types import OBJECT_ID
from nodeapi.protocol.types import ACCOUNT_ID, ASSET_ID, SHARE
from nodeapi.protocol.config import BLOCKCHAIN_PRECISION as P
from nodeapi.protocol.serialize import UINT32, UINT64
from nodeapi.protocol.validation_checks import amount, check, fee_non_negative

#: ``predicate`` (assert.hpp); block_id_type is a ripemd160
PREDICATE = StaticVariant("predicate", [
    Struct("account_name_eq_lit_predicate", [("account_id", ACCOUNT_ID), ("name", STRING)]),
    Struct("asset_symbol_eq_lit_predicate", [("asset_id", ASSET_ID), ("symbol", STRING)]),
    Struct("block_id_predicate", [("id", RIPEMD160)]),
], ["account_name_eq_lit_predicate", "asset_symbol_eq_lit_predicate", "block_id_predicate"])

OPERATIONS = {
    35: ("custom", op("custom", [
        FEE, ("payer", ACCOUNT_ID), ("required_auths", FlatSet(ACCOUNT_ID)), ("id", UINT16),
        ("data", BYTES)])),
    36: ("assert", op("assert", [
        FEE, ("fee_paying_account", ACCOUNT_ID), ("predicates", Vector(PREDICATE)),
        ("required_auths", FlatSet(ACCOUNT_ID)), EXT])),
    44: ("fba_distribute", op("fba_distribute", [  # virtual
        FEE, ("account_id", ACCOUNT_ID), ("fba_id", OBJECT_ID), ("amount", SHARE)])),
}


# -- validate(): each type's own rules (bitshares-core libraries/protocol/*.cpp) --


#: type -> ``rule(data)``: the operation's ``validate()`` (virtual operations have none)
VALIDATE = {
    35: lambda d: check(amount(d["fee"]) > 0, "fee.amount > 0"),
    36: fee_non_negative,
}

#: type -> its ``fee_params_t``: ``(field, wire type, default)`` in reflection order
#: (bitshares-core protocol/*.hpp; defaults in core satoshis, ``P`` = GRAPHENE_BLOCKCHAIN_PRECISION)
FEE_PARAMETERS = {
    35: [("fee", UINT64, P), ("price_per_kbyte", UINT32, 10)],
    36: [("fee", UINT64, P)],
    44: [],
}


#: type -> the field naming the fee payer, or ``"="`` + a fixed account id
#: (each operation's ``fee_payer()``, bitshares-core
#: libraries/protocol/include/graphene/protocol/: custom.hpp, assert.hpp, fba.hpp)
FEE_PAYER = {
    35: "payer", 36: "fee_paying_account", 44: "account_id",
}

#: type -> :class:`~nodeapi.protocol.operations.common.Impacted` (bitshares-core
#: libraries/chain/db_notify.cpp ``get_impacted_account_visitor``); types not
#: listed impact their fee payer and required authorities only
IMPACTED: dict = {}


def _assert_fee(d, p, context):
    """``fee`` per predicate (assert.cpp)."""
    return p["fee"] * len(d.get("predicates") or ())


#: type -> ``fee(data, params, context)``: the operation's ``calculate_fee``
#: (bitshares-core libraries/protocol/custom.cpp, assert.cpp, fba.hpp);
#: types not listed pay their flat ``fee``
#: (:mod:`~nodeapi.protocol.operations.common`)
CALCULATE_FEE = {35: body_priced_fee, 36: _assert_fee, 44: zero_fee}

#: type -> ``rule(data, active, owner)``: the account ids whose active /
#: owner authority the operation needs besides its fee payer's active
#: (``get_required_active_authorities`` /
#: ``get_required_owner_authorities``, custom.hpp: ``required_auths``,
#: ignored before HARDFORK_CORE_210 (2020; nodeapi's chains run after it))
REQUIRED_AUTHORITIES = {
    35: lambda d, active, owner: active.update(d.get("required_auths") or ()),
}

#: type -> ``rule(data) -> [authority]``: the authorities it needs besides
#: accounts' (``get_required_authorities``)
OTHER_AUTHORITIES: dict = {}
