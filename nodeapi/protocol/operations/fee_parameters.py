"""Fee parameter structs (``<operation>::fee_params_t``) by operation type.

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/*.hpp``
(each operation's ``fee_params_t`` and its ``FC_REFLECT``) and
``fee_schedule.hpp``: ``fee_parameters`` is the static_variant of the 78
``fee_params_t`` in operation order, so its tag is the operation type, and
``fee_schedule`` is ``{parameters: flat_set<fee_parameters>, scale:
uint32}`` (the flat_set ordered by tag).  Virtual operations and
balance_claim have empty parameters (``{}``).

Each family module declares its types' fields with their defaults
(``FEE_PARAMETERS``); the wire shapes are made here from them.  A member
left out of the JSON keeps its ``fee_params_t`` initializer (fc's reflected
``from_variant`` sets only the members present), and a schedule without
``scale`` has ``GRAPHENE_100_PERCENT``.  The lookup and the fee calculation
belong to the fee rules.
"""

from nodeapi.protocol.composite import DeclaredStaticVariant, FlatSet, Initialized, Struct
from nodeapi.protocol.config import GRAPHENE_100_PERCENT
from nodeapi.protocol.serialize import UINT32


def fee_params_struct(operation_name: str, fields: list) -> Struct:
    """The ``<operation_name>_operation::fee_params_t`` struct of a
    family's ``FEE_PARAMETERS`` entry ``[(name, wire type, default)]``
    (a member left out of the JSON keeps its default)."""
    return Struct(f"{operation_name}_operation::fee_params_t",
                  [(name, Initialized(wire, default)) for name, wire, default in fields])


#: the ``fee_parameters`` static_variant (tag = operation type); its
#: alternatives are :data:`nodeapi.protocol.operations.table.FEE_PARAMETERS`,
#: defined by the table once it has joined the families
FEE_PARAMETERS_VARIANT = DeclaredStaticVariant("fee_parameters")

#: ``fee_schedule`` (fee_schedule.hpp)
FEE_SCHEDULE = Struct("fee_schedule", [
    ("parameters", FlatSet(FEE_PARAMETERS_VARIANT)),
    ("scale", Initialized(UINT32, GRAPHENE_100_PERCENT)),
])
