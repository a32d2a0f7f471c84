"""Fee of an operation under a fee schedule, in core satoshis or in another
asset, for every operation type 0-77.

Reference: bitshares-core

- each operation's ``calculate_fee`` (libraries/protocol/*.cpp): its family
  module's ``CALCULATE_FEE`` entry (joined in
  :data:`nodeapi.protocol.operations.table.CALCULATE_FEE`), reading the
  sizes and other entries a :class:`FeeContext` gives; the flat ``fee``
  for the types without one;
- fee_schedule_calc.cpp ``fee_schedule::calculate_fee``: the sum times
  ``scale / 10000``; ``multiply_and_round_up`` to another asset through its
  ``core_exchange_rate``;
- fee_schedule_set_fee.cpp ``set_fee``: the fee is written into the
  operation and computed again (its asset id changes the size) until it no
  longer grows, at most ``MAX_FEE_STABILIZATION_ITERATION`` (4) times;
- database_api.cpp ``get_required_fees``: a proposal_create answers
  ``[fee, [fees of the proposed operations]]``, nested at most
  ``GET_REQUIRED_FEES_MAX_RECURSION`` (4) deep.

Parameters come from :mod:`nodeapi.protocol.fee_parameters`; serialized
sizes from :func:`~nodeapi.protocol.operations.serialize_operation_body`.
The formulas read the JSON as graphene holds it
(:func:`~nodeapi.protocol.operations.canonical_operation`), though integers
given as decimal strings are accepted.
"""

import copy

from nodeapi.protocol.asset import core, multiply_and_round_up, percent_of
from nodeapi.protocol.authorities import kind_of
from nodeapi.protocol.composite import Vector
from nodeapi.protocol.config import GRAPHENE_100_PERCENT
from nodeapi.protocol.errors import InvalidField
from nodeapi.protocol.fee_parameters import fee_parameters, has_entry, schedule_scale
from nodeapi.protocol.operations import serialize_operation_body
from nodeapi.protocol.operations.common import flat_fee
from nodeapi.protocol.operations.table import CALCULATE_FEE
from nodeapi.protocol.operations.custom_authorities import RESTRICTION
from nodeapi.protocol.serialize import pack
from nodeapi.protocol.types import AUTHORITY, MEMO

MAX_FEE_STABILIZATION_ITERATION = 4
GET_REQUIRED_FEES_MAX_RECURSION = 4
_RESTRICTIONS = Vector(RESTRICTION)


class FeeContext:
    """What a fee formula (a family's ``CALCULATE_FEE``) reads besides the
    operation's body and own parameters: ``fc::raw::pack_size`` of the
    operation and of its parts, and the schedule's other entries.

    :param op: the operation, ``[type, {...}]``.
    :param schedule: the fee schedule (``current_fees``).
    :param prefix: the chain's key prefix (sizes of keys and addresses),
        or None to take each key's own.
    """

    def __init__(self, op: list, schedule: dict, prefix: str | None) -> None:
        self.op = op
        self.schedule = schedule
        self.prefix = prefix

    def body(self) -> int:
        """The operation struct without its type tag."""
        return len(serialize_operation_body(self.op, self.prefix))

    def optional_memo(self, memo) -> int:
        """An ``optional<memo_data>``: flag byte plus the memo."""
        return 1 if memo is None else 1 + len(pack(MEMO, memo, self.prefix))

    def authority(self, auth) -> int:
        """An ``authority``."""
        return len(pack(AUTHORITY, auth, self.prefix))

    def restrictions(self, restrictions) -> int:
        """A ``vector<restriction>``."""
        return len(pack(_RESTRICTIONS, restrictions or [], self.prefix))

    def parameters(self, kind: int) -> dict:
        """The parameters of another operation type ``kind`` under the
        schedule (:func:`~nodeapi.protocol.fee_parameters.fee_parameters`)."""
        return fee_parameters(self.schedule, kind)

    def has_entry(self, kind: int) -> bool:
        """graphene ``fee_schedule::exists<Op>()`` for type ``kind``."""
        return has_entry(self.schedule, kind)


def operation_fee(op: list, schedule: dict, prefix: str | None) -> int:
    """Required fee of ``op`` (wire JSON) in core satoshis under ``schedule``
    (``current_fees``), scaled (graphene ``fee_schedule::calculate_fee``).
    ``prefix`` is the chain's key prefix, enforced on the keys the sizes
    count (None: each key's own, for keys already checked).

    :raises UnknownOperation: not an operation type 0-77.
    :raises ProtocolError: a size-priced operation that does not serialize.
    :raises InvalidField: a malformed field the formula reads.
    """
    kind = kind_of(op)
    formula = CALCULATE_FEE.get(kind, flat_fee)
    try:
        fee = formula(op[1], fee_parameters(schedule, kind), FeeContext(op, schedule, prefix))
    except (KeyError, TypeError, AttributeError) as exc:
        raise InvalidField(f"operation {op[0]}: cannot compute its fee: missing or "
                           f"malformed field {exc}") from None
    scale = schedule_scale(schedule)
    if scale != GRAPHENE_100_PERCENT:
        fee = percent_of(fee, scale)
    return fee


def set_fee(op: list, schedule: dict, core_exchange_rate: dict,
            prefix: str | None) -> dict:
    """graphene ``fee_schedule::set_fee``: write the required fee, in the
    asset of ``core_exchange_rate``, into ``op[1]["fee"]`` (``op`` is
    modified) until it is stable, and return it (``{"amount", "asset_id"}``)."""
    fee = multiply_and_round_up(core(operation_fee(op, schedule, prefix)), core_exchange_rate)
    for _ in range(MAX_FEE_STABILIZATION_ITERATION):
        op[1]["fee"] = dict(fee)
        again = multiply_and_round_up(core(operation_fee(op, schedule, prefix)),
                                      core_exchange_rate)
        if fee["amount"] >= again["amount"]:
            break
        fee = again
    return fee


def _set_op_fees(op: list, schedule: dict, cer: dict, prefix, depth: int):
    if kind_of(op) != 22:
        return set_fee(op, schedule, cer, prefix)
    nested = []
    for wrapper in op[1].get("proposed_ops") or ():
        if depth >= GET_REQUIRED_FEES_MAX_RECURSION:
            raise InvalidField("Assert Exception: current_recursion < max_recursion: "
                               "proposals nested too deep")
        nested.append(_set_op_fees(wrapper["op"], schedule, cer, prefix, depth + 1))
    return [set_fee(op, schedule, cer, prefix), nested]


def required_fees(ops: list, schedule: dict, core_exchange_rate: dict,
                  prefix: str | None) -> list:
    """graphene ``database_api::get_required_fees`` over ``ops`` (wire JSON,
    not modified): per operation ``{"amount", "asset_id"}`` in the asset of
    ``core_exchange_rate``, or for proposal_create ``[fee, [fees of the
    proposed operations]]``.  Virtual operations get 0, as in the reference
    (their ``calculate_fee`` is 0; only ``validate`` refuses them).
    Raises as :func:`operation_fee`."""
    return [_set_op_fees(copy.deepcopy(op), schedule, core_exchange_rate, prefix, 0)
            for op in ops]
