"""Fee parameters of every operation type 0-77 and how a fee schedule's
entry for a type is found.

Reference: bitshares-core, each operation's ``fee_params_t`` with its default
values (libraries/protocol/include/graphene/protocol/*.hpp), and
fee_schedule.hpp / fee_schedule_calc.cpp for the lookup:

- a schedule (``current_fees``: ``{"parameters": [[type, {...}], ...],
  "scale": N}``) entry gives the type's parameters; fields it leaves out keep
  their default (fc's ``from_variant`` of a reflected struct);
- a type without an entry uses its defaults (``calc_fee_visitor`` catches
  the failed lookup and uses a default ``fee_params_t``), except:
  bid_collateral (45) takes call_order_update's (3) ``fee``,
  asset_claim_pool (47) asset_fund_fee_pool's (16) and asset_update_issuer
  (48) asset_update's (11), when those exist;
- ticket_create / ticket_update (57/58) always use their defaults
  (``fee_helper`` ignores the schedule);
- the virtual operations and balance_claim have no parameters (fee 0).

Amounts are core satoshis (``GRAPHENE_BLOCKCHAIN_PRECISION`` = 100000 per
BTS); ``price_per_kbyte`` is satoshis per 1024 bytes.
"""

from nodeapi.protocol.config import GRAPHENE_100_PERCENT
from nodeapi.protocol.errors import InvalidField
from nodeapi.protocol.operations.table import FEE_PARAMETER_FIELDS

#: type -> default ``fee_params_t`` (bitshares-core 7.x)
DEFAULT_FEE_PARAMETERS = {number: {name: default for name, _wire, default in fields}
                          for number, fields in FEE_PARAMETER_FIELDS.items()}

#: type -> the type whose ``fee`` stands in when the schedule has no entry
_FEE_FALLBACK = {45: 3, 47: 16, 48: 11}

#: types whose parameters are always the defaults
_FIXED = frozenset({57, 58})


def _as_int(value, what: str) -> int:
    if type(value) is int and value >= 0:
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    raise InvalidField(f"fee parameter {what}: expected an unsigned integer, got {value!r}")


def schedule_entry(schedule: dict, kind: int) -> dict | None:
    """The schedule's raw entry for ``kind`` (a dict), or None when absent."""
    for entry in schedule.get("parameters") or ():
        if entry[0] == kind:
            return entry[1] if isinstance(entry[1], dict) else {}
    return None


def has_entry(schedule: dict, kind: int) -> bool:
    """graphene ``fee_schedule::exists<Op>()``."""
    return schedule_entry(schedule, kind) is not None


def fee_parameters(schedule: dict, kind: int) -> dict:
    """The parameters of operation type ``kind`` under ``schedule`` as
    ``{name: int}`` (module docstring for the rules).  Raises
    :class:`InvalidField` for a parameter that is not an unsigned integer."""
    defaults = DEFAULT_FEE_PARAMETERS[kind]
    if kind in _FIXED:
        return dict(defaults)
    entry = schedule_entry(schedule, kind)
    if entry is None:
        base = _FEE_FALLBACK.get(kind)
        if base is not None and has_entry(schedule, base):
            return {"fee": fee_parameters(schedule, base)["fee"]}
        return dict(defaults)
    out = dict(defaults)
    for name in defaults:
        if name in entry:
            out[name] = _as_int(entry[name], f"{kind}.{name}")
    return out


def schedule_scale(schedule: dict) -> int:
    """The schedule's ``scale`` (GRAPHENE_100_PERCENT = 10000 when absent)."""
    return _as_int(schedule.get("scale", GRAPHENE_100_PERCENT), "scale")
