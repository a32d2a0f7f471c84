"""Fee payer and required authorities of every operation type 0-77.

Reference: bitshares-core libraries/protocol/operations.cpp
``operation_get_required_authorities``: the fee payer (each operation's
``fee_payer()``) always needs its active authority; then the operation's
``get_required_active_authorities`` / ``get_required_owner_authorities`` /
``get_required_authorities`` (other authorities) add to that, as declared in
libraries/protocol/include/graphene/protocol/*.hpp and proposal.cpp: each
family module's ``REQUIRED_AUTHORITIES`` and ``OTHER_AUTHORITIES`` entries
(joined in :mod:`nodeapi.protocol.operations.table`).

Operations are in their wire (JSON) form ``[type, {...}]``.
"""

from nodeapi.protocol.errors import UnknownOperation
from nodeapi.protocol.operations import VIRTUAL_OPERATIONS, operation_type  # noqa: F401
from nodeapi.protocol.operations.table import FEE_PAYER, OTHER_AUTHORITIES, REQUIRED_AUTHORITIES


def kind_of(op) -> int:
    """The type number of ``[type, {...}]`` (its tag read by
    :func:`~nodeapi.protocol.operations.operation_type`, like fc's
    ``from_variant``) with a dict body; raises :class:`UnknownOperation`
    otherwise (graphene cannot deserialize such an ``operation``)."""
    if not isinstance(op, (list, tuple)) or len(op) != 2 or not isinstance(op[1], dict):
        raise UnknownOperation(f"Malformed operation {str(op)[:80]}: expected [type, {{...}}]")
    return operation_type(op[0])


#: type -> the fixed fee payer of the types that name one (``"=1.2.0"``)
_FIXED_PAYER = {k: v[1:] for k, v in FEE_PAYER.items() if v.startswith("=")}


def fee_payer(op: list) -> str:
    """The account id paying the fee of ``[type, {...}]`` (graphene
    ``fee_payer()``, each family module's ``FEE_PAYER``); raises
    :class:`UnknownOperation`."""
    kind = kind_of(op)
    return payer_of(kind, op[1])


def payer_of(kind: int, data: dict) -> str:
    """:func:`fee_payer` of an operation whose type ``kind`` (a valid type
    number, :func:`kind_of`) and body ``data`` are known; raises KeyError
    when the body lacks the payer's field."""
    fixed = _FIXED_PAYER.get(kind)
    return data[FEE_PAYER[kind]] if fixed is None else fixed


def required_authorities(op: list) -> tuple[set, set]:
    """``(active account ids, owner account ids)`` whose authority ``op``
    needs (module docstring; graphene ``operation_get_required_authorities``).
    An owner signature also satisfies an active requirement (see
    ``verify_authority``).  Raises :class:`UnknownOperation`."""
    kind = kind_of(op)
    data = op[1]
    return required_of(kind, data, payer_of(kind, data))


def required_of(kind: int, data: dict, payer: str) -> tuple[set, set]:
    """:func:`required_authorities` of an operation whose type ``kind``,
    body ``data`` and fee payer ``payer`` are known."""
    active = {payer}
    owner = set()
    rule = REQUIRED_AUTHORITIES.get(kind)
    if rule is not None:
        rule(data, active, owner)
    return active, owner


def other_authorities(op: list) -> list:
    """Authorities ``op`` needs besides accounts' (graphene
    ``get_required_authorities``, module docstring), as authority dicts;
    empty for most types.  Raises :class:`UnknownOperation`."""
    rule = OTHER_AUTHORITIES.get(kind_of(op))
    return [] if rule is None else rule(op[1])


def authority_accounts(auth, out: set) -> None:
    """Add the ``account_auths`` accounts of an authority dict to ``out``
    (graphene ``add_authority_accounts``)."""
    if auth:
        for pair in auth.get("account_auths") or ():
            out.add(pair[0])
