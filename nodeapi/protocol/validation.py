"""Operations' ``validate()``: the check every operation passes before any
evaluation, on the wire (JSON) form.

Reference: bitshares-core libraries/protocol/*.cpp and the inline
``validate()`` of the operation structs (``*.hpp``), called through
``operation_validate`` by ``transaction::validate``.  Each type's rule is in
its family module (:mod:`nodeapi.protocol.operations`, ``VALIDATE``), the
checks they share in :mod:`nodeapi.protocol.validation_checks`.  A failed
rule raises :class:`~nodeapi.protocol.errors.InvalidOperation` (``Assert
Exception: <condition>: <graphene's message>``); a missing or malformed
field :class:`~nodeapi.protocol.errors.InvalidField`.

Not checked (no Python implementation of the cryptography or predicate
compiler): the blind transfers' (39-41) Pedersen commitment sums and range
proofs, and custom_authority's (54/55) restriction predicates beyond their
operation type; the chain does not evaluate these types.
"""

from nodeapi.errors import NodeAPIError
from nodeapi.protocol.authorities import VIRTUAL_OPERATIONS, kind_of
from nodeapi.protocol.errors import InvalidField
from nodeapi.protocol.operations.table import VALIDATE
from nodeapi.protocol.validation_checks import check

PROPOSAL_CREATE = 22

#: the expression of a virtual operation's ``validate()`` where it is not
#: ``FC_ASSERT( !"virtual operation" )`` (market.hpp, htlc.hpp,
#: credit_offer.hpp): asset_settle_cancel's (asset_ops.hpp) and
#: fba_distribute's (fba.hpp)
VIRTUAL_REFUSALS = {42: '!"Virtual operation"', 44: "false"}


def validate_operation(op: list) -> None:
    """Apply the ``validate()`` of ``op``'s type to ``[type, {...}]`` (wire
    JSON); proposal_create validates its proposed operations too.  A
    virtual operation fails (``!"virtual operation"``).

    :raises UnknownOperation: not an operation type 0-77.
    :raises InvalidOperation: a rule fails (module docstring).
    :raises InvalidField: a field a rule reads is missing or malformed.
    """
    kind = kind_of(op)
    if kind in VIRTUAL_OPERATIONS:
        check(False, VIRTUAL_REFUSALS.get(kind, '!"virtual operation"'))
    rule = VALIDATE[kind]
    try:
        rule(op[1])
        if kind == PROPOSAL_CREATE:
            # proposal_create's validate() visits every proposed operation's
            # (protocol/proposal.cpp); the recursion is here, where the rules
            # of every family are at hand
            for wrapper in op[1]["proposed_ops"]:
                validate_operation(wrapper["op"])
    except NodeAPIError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise InvalidField(f"operation {kind}: missing or malformed field: "
                           f"{type(exc).__name__}: {exc}") from None
