"""Fee of an operation under a fee schedule, in core satoshis or in another
asset, for every operation type 0-77.

Reference: bitshares-core

- each operation's ``calculate_fee`` (libraries/protocol/*.cpp), see
  :data:`_FORMULAS`: a flat ``fee`` for most types; ``price_per_kbyte``
  charges ``bytes * price_per_kbyte / 1024`` (``calculate_data_fee``) over
  ``fc::raw::pack_size`` of the memo - an ``optional``, so one more byte for
  its presence flag - (transfer, override_transfer, withdraw_permission_claim,
  htlc_create; asset_issue charges the flag byte even without a memo) or of
  the whole operation struct (account_create, account_update with
  new_options, asset_create, asset_update, proposal_create/update, custom,
  credit_offer_create/update); account_create's premium fee for names that
  are not ``is_cheap_name``; asset_create's fee by symbol length (3, 4,
  longer; a sub-asset ``A.B`` pays account_transfer's fee once the schedule
  has account_transfer and ticket_create entries); account_upgrade's
  membership fees; assert's fee per predicate; the blind transfers'
  ``price_per_output``; htlc's ``fee_per_day`` and ``fee_per_kb`` of
  preimage (its memo priced at transfer's ``price_per_kbyte``); the custom
  authorities' ``price_per_byte`` over their authority and restrictions;
  0 for balance_claim and the virtual operations;
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

from nodeapi.protocol.asset import percent_of
from nodeapi.protocol.authorities import VIRTUAL_OPERATIONS, kind_of
from nodeapi.protocol.composite import Vector
from nodeapi.protocol.config import GRAPHENE_100_PERCENT
from nodeapi.protocol.errors import InvalidField
from nodeapi.protocol.fee_parameters import fee_parameters, has_entry, schedule_scale
from nodeapi.protocol.operations import serialize_operation_body
from nodeapi.protocol.operations.custom_authorities import RESTRICTION
from nodeapi.protocol.serialize import pack, to_int
from nodeapi.protocol.types import AUTHORITY, MEMO

MAX_FEE_STABILIZATION_ITERATION = 4
GET_REQUIRED_FEES_MAX_RECURSION = 4
SECONDS_PER_DAY = 86400
_RESTRICTIONS = Vector(RESTRICTION)


def data_fee(size: int, price_per_kbyte: int) -> int:
    """graphene ``calculate_data_fee``: ``size * price / 1024`` rounded down."""
    return size * price_per_kbyte // 1024


def is_cheap_name(name: str) -> bool:
    """graphene ``is_cheap_name``: has a digit, '.', '-' or '/', or no vowel
    (a, e, i, o, u, y)."""
    if any(c.isdigit() or c in ".-/" for c in name):
        return True
    return not any(c in "aeiouy" for c in name)


class _Sizes:
    """``fc::raw::pack_size`` of an operation and of its parts."""

    def __init__(self, op: list, prefix: str | None) -> None:
        self.op = op
        self.prefix = prefix

    def body(self) -> int:
        """The operation struct without its type tag."""
        return len(serialize_operation_body(self.op, self.prefix))

    def optional_memo(self, memo) -> int:
        """An ``optional<memo_data>``: flag byte plus the memo."""
        return 1 if memo is None else 1 + len(pack(MEMO, memo, self.prefix))

    def authority(self, auth) -> int:
        return len(pack(AUTHORITY, auth, self.prefix))

    def restrictions(self, restrictions) -> int:
        """A ``vector<restriction>``."""
        return len(pack(_RESTRICTIONS, restrictions or [], self.prefix))


def _flat(d, p, s):
    return p["fee"]


def _memo_priced(d, p, s):
    memo = d.get("memo")
    return p["fee"] + (data_fee(s.optional_memo(memo), p["price_per_kbyte"]) if memo else 0)


def _body_priced(d, p, s):
    return p["fee"] + data_fee(s.body(), p["price_per_kbyte"])


def _account_create(d, p, s):
    base = p["basic_fee"] if is_cheap_name(d["name"]) else p["premium_fee"]
    return base + data_fee(s.body(), p["price_per_kbyte"])


def _account_update(d, p, s):
    return _body_priced(d, p, s) if d.get("new_options") is not None else p["fee"]


def _account_upgrade(d, p, s):
    if d.get("upgrade_to_lifetime_member"):
        return p["membership_lifetime_fee"]
    return p["membership_annual_fee"]


def _asset_issue(d, p, s):
    return p["fee"] + data_fee(s.optional_memo(d.get("memo")), p["price_per_kbyte"])


def _assert(d, p, s):
    return p["fee"] * len(d.get("predicates") or ())


def _per_output(d, p, s):
    return p["fee"] + len(d.get("outputs") or ()) * p["price_per_output"]


def _days(seconds) -> int:
    return (to_int(seconds, "seconds") + SECONDS_PER_DAY - 1) // SECONDS_PER_DAY


def _htlc_redeem(d, p, s):
    preimage = d.get("preimage") or ""
    return p["fee"] + (len(preimage) // 2 + 1023) // 1024 * p["fee_per_kb"]


def _htlc_extend(d, p, s):
    return p["fee"] + p["fee_per_day"] * _days(d["seconds_to_add"])


def _ca_create(d, p, s):
    priced = s.restrictions(d.get("restrictions")) + s.authority(d["auth"])
    return p["basic_fee"] + p["price_per_byte"] * priced


def _ca_update(d, p, s):
    fee = p["basic_fee"] + p["price_per_byte"] * s.restrictions(d.get("restrictions_to_add"))
    if d.get("new_auth") is not None:
        fee += p["price_per_byte"] * s.authority(d["new_auth"])
    return fee


def _zero(d, p, s):
    return 0


#: type -> ``fn(data, parameters, sizes) -> core satoshis`` before scaling;
#: types not listed pay their flat ``fee`` (asset_create and htlc_create are
#: in :func:`_unscaled_fee`: they read other types' parameters too)
_FORMULAS = {
    0: _memo_priced, 5: _account_create, 6: _account_update, 8: _account_upgrade,
    11: _body_priced, 14: _asset_issue, 22: _body_priced, 23: _body_priced,
    27: _memo_priced, 35: _body_priced, 36: _assert, 37: _zero, 38: _memo_priced,
    39: _per_output, 40: _per_output, 50: _htlc_redeem, 52: _htlc_extend,
    54: _ca_create, 55: _ca_update, 69: _body_priced, 71: _body_priced,
}
_FORMULAS.update({k: _zero for k in VIRTUAL_OPERATIONS})


def _unscaled_fee(op: list, schedule: dict, sizes: _Sizes) -> int:
    kind, data = kind_of(op), op[1]
    params = fee_parameters(schedule, kind)
    if kind == 10:  # fee_schedule_calc.cpp: the asset_create visitor
        symbol = data["symbol"]
        if "." in symbol and has_entry(schedule, 9) and has_entry(schedule, 57):
            fee = fee_parameters(schedule, 9)["fee"]
        else:
            fee = {3: params["symbol3"], 4: params["symbol4"]}.get(
                len(symbol), params["long_symbol"])
        return fee + data_fee(sizes.body(), params["price_per_kbyte"])
    if kind == 49:  # the htlc_create visitor: memo at transfer's price_per_kbyte
        fee = params["fee"] + params["fee_per_day"] * _days(data["claim_period_seconds"])
        ext = data.get("extensions")
        memo = ext.get("memo") if isinstance(ext, dict) else None
        if memo is not None:
            fee += data_fee(sizes.optional_memo(memo), fee_parameters(schedule, 0)[
                "price_per_kbyte"])
        return fee
    return _FORMULAS.get(kind, _flat)(data, params, sizes)


def operation_fee(op: list, schedule: dict, prefix: str | None = None) -> int:
    """Required fee of ``op`` (wire JSON) in core satoshis under ``schedule``
    (``current_fees``), scaled (graphene ``fee_schedule::calculate_fee``).
    ``prefix`` is the chain's key prefix for size computations.

    :raises UnknownOperation: not an operation type 0-77.
    :raises ProtocolError: a size-priced operation that does not serialize.
    :raises InvalidField: a malformed field the formula reads.
    """
    try:
        fee = _unscaled_fee(op, schedule, _Sizes(op, prefix))
    except (KeyError, TypeError, AttributeError) as exc:
        raise InvalidField(f"operation {op[0]}: cannot compute its fee: missing or "
                           f"malformed field {exc}") from None
    scale = schedule_scale(schedule)
    if scale != GRAPHENE_100_PERCENT:
        fee = percent_of(fee, scale)
    return fee


def multiply_and_round_up(core_amount: int, price: dict) -> dict:
    """graphene ``asset::multiply_and_round_up``: ``core_amount`` of 1.3.0
    through ``price`` (a core_exchange_rate), rounded up; ``{"amount",
    "asset_id"}``.  Raises :class:`InvalidField` when the price does not
    involve the core asset."""
    base, quote = price["base"], price["quote"]
    if base["asset_id"] == "1.3.0":
        num, den, asset_id = int(quote["amount"]), int(base["amount"]), quote["asset_id"]
    elif quote["asset_id"] == "1.3.0":
        num, den, asset_id = int(base["amount"]), int(quote["amount"]), base["asset_id"]
    else:
        raise InvalidField("invalid asset::multiply_and_round_up(price): the price does "
                           "not involve the core asset")
    if den <= 0:
        raise InvalidField("invalid asset::multiply_and_round_up(price): zero amount")
    return {"amount": (core_amount * num + den - 1) // den, "asset_id": asset_id}


def set_fee(op: list, schedule: dict, core_exchange_rate: dict,
            prefix: str | None = None) -> dict:
    """graphene ``fee_schedule::set_fee``: write the required fee, in the
    asset of ``core_exchange_rate``, into ``op[1]["fee"]`` (``op`` is
    modified) until it is stable, and return it (``{"amount", "asset_id"}``)."""
    fee = multiply_and_round_up(operation_fee(op, schedule, prefix), core_exchange_rate)
    for _ in range(MAX_FEE_STABILIZATION_ITERATION):
        op[1]["fee"] = dict(fee)
        again = multiply_and_round_up(operation_fee(op, schedule, prefix), core_exchange_rate)
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
                  prefix: str | None = None) -> list:
    """graphene ``database_api::get_required_fees`` over ``ops`` (wire JSON,
    not modified): per operation ``{"amount", "asset_id"}`` in the asset of
    ``core_exchange_rate``, or for proposal_create ``[fee, [fees of the
    proposed operations]]``.  Virtual operations get 0, as in the reference
    (their ``calculate_fee`` is 0; only ``validate`` refuses them).
    Raises as :func:`operation_fee`."""
    return [_set_op_fees(copy.deepcopy(op), schedule, core_exchange_rate, prefix, 0)
            for op in ops]
