"""custom (35), assert (36) and fba_distribute (44, virtual).

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/``
``custom.hpp``, ``assert.hpp`` (the ``predicate`` static_variant) and
``fba.hpp`` (``FC_REFLECT`` order).
"""

from nodeapi.protocol.composite import FlatSet, StaticVariant, Struct, Vector
from nodeapi.protocol.operations.common import EXT, FEE, op
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
