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

from nodeapi.protocol.composite import FlatSet, Initialized, StaticVariant, Struct
from nodeapi.protocol.config import GRAPHENE_100_PERCENT
from nodeapi.protocol.serialize import UINT32

#: operation type -> wire struct of its ``fee_params_t`` (installed by
#: :func:`register`)
FEE_PARAMETERS: dict = {}

#: the ``fee_parameters`` static_variant (tag = operation type); its
#: alternatives are installed by :func:`register`
FEE_PARAMETERS_VARIANT = StaticVariant("fee_parameters", [])

#: ``fee_schedule`` (fee_schedule.hpp)
FEE_SCHEDULE = Struct("fee_schedule", [
    ("parameters", FlatSet(FEE_PARAMETERS_VARIANT)),
    ("scale", Initialized(UINT32, GRAPHENE_100_PERCENT)),
])


def register(operations: dict, fields: dict) -> None:
    """Install the ``fee_params_t`` structs of ``fields`` (``{type: [(name,
    wire type, default)]}``, the families' ``FEE_PARAMETERS`` joined) as the
    variant's alternatives in type order (done once by table.py, which
    joins the families; the chain parameters, an operation's field, hold a
    fee schedule, so the schedule's type exists before the table does)."""
    for number, params in fields.items():
        FEE_PARAMETERS[number] = Struct(f"{operations[number][0]}_operation::fee_params_t",
                                        [(name, Initialized(wire, default))
                                         for name, wire, default in params])
    FEE_PARAMETERS_VARIANT.types = tuple(FEE_PARAMETERS[n] for n in range(len(fields)))
    FEE_PARAMETERS_VARIANT.names = tuple(
        f"{operations[n][0]}_operation::fee_params_t" for n in range(len(fields)))
