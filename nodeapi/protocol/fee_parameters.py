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

from nodeapi.protocol.config import BLOCKCHAIN_PRECISION as _P
from nodeapi.protocol.errors import InvalidField

#: type -> default ``fee_params_t`` (bitshares-core 7.x)
DEFAULT_FEE_PARAMETERS = {
    0: {"fee": 20 * _P, "price_per_kbyte": 10 * _P},
    1: {"fee": 5 * _P},
    2: {"fee": 0},
    3: {"fee": 20 * _P},
    4: {},
    5: {"basic_fee": 5 * _P, "premium_fee": 2000 * _P, "price_per_kbyte": _P},
    6: {"fee": 20 * _P, "price_per_kbyte": _P},
    7: {"fee": 300000},
    8: {"membership_annual_fee": 2000 * _P, "membership_lifetime_fee": 10000 * _P},
    9: {"fee": 500 * _P},
    10: {"symbol3": 500000 * _P, "symbol4": 300000 * _P, "long_symbol": 5000 * _P,
         "price_per_kbyte": 10},
    11: {"fee": 500 * _P, "price_per_kbyte": 10},
    12: {"fee": 500 * _P},
    13: {"fee": 500 * _P},
    14: {"fee": 20 * _P, "price_per_kbyte": _P},
    15: {"fee": 20 * _P},
    16: {"fee": _P},
    17: {"fee": 100 * _P},
    18: {"fee": 500 * _P},
    19: {"fee": _P},
    20: {"fee": 5000 * _P},
    21: {"fee": 20 * _P},
    22: {"fee": 20 * _P, "price_per_kbyte": 10},
    23: {"fee": 20 * _P, "price_per_kbyte": 10},
    24: {"fee": _P},
    25: {"fee": _P},
    26: {"fee": _P},
    27: {"fee": 20 * _P, "price_per_kbyte": 10},
    28: {"fee": 0},
    29: {"fee": 5000 * _P},
    30: {"fee": 20 * _P},
    31: {"fee": _P},
    32: {"fee": _P},
    33: {"fee": 20 * _P},
    34: {"fee": 5000 * _P},
    35: {"fee": _P, "price_per_kbyte": 10},
    36: {"fee": _P},
    37: {},
    38: {"fee": 20 * _P, "price_per_kbyte": 10},
    39: {"fee": 5 * _P, "price_per_output": 5 * _P},
    40: {"fee": 5 * _P, "price_per_output": 5 * _P},
    41: {"fee": 5 * _P},
    42: {},
    43: {"fee": 20 * _P},
    44: {},
    45: {"fee": 20 * _P},
    46: {},
    47: {"fee": 20 * _P},
    48: {"fee": 20 * _P},
    49: {"fee": _P, "fee_per_day": _P},
    50: {"fee": _P, "fee_per_kb": _P},
    51: {},
    52: {"fee": _P, "fee_per_day": _P},
    53: {},
    54: {"basic_fee": _P, "price_per_byte": _P // 10},
    55: {"basic_fee": _P, "price_per_byte": _P // 10},
    56: {"fee": _P},
    57: {"fee": 50 * _P},
    58: {"fee": 50 * _P},
    59: {"fee": 50 * _P},
    60: {"fee": 0},
    61: {"fee": _P // 10},
    62: {"fee": 5 * _P},
    63: {"fee": _P},
    64: {"fee": _P},
    65: {"fee": 0},
    66: {"fee": _P},
    67: {"fee": _P},
    68: {"fee": _P},
    69: {"fee": _P, "price_per_kbyte": _P},
    70: {"fee": 0},
    71: {"fee": _P, "price_per_kbyte": _P},
    72: {"fee": _P},
    73: {"fee": _P},
    74: {},
    75: {"fee": _P},
    76: {"fee": _P},
    77: {"fee": (_P * 3) // 8},
}

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
    return _as_int(schedule.get("scale", 10000), "scale")
