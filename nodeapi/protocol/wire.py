"""The wire form of values: which integers travel as JSON strings.

fc writes a signed integer (``int64_t``, ``share_type``) as a JSON string
when it does not fit in 32 signed bits, and an unsigned one (``uint32_t``:
``ref_block_prefix``, block numbers; ``uint64_t``: votes, fee parameters)
when it does not fit in 32 unsigned bits; numbers otherwise (bitshares-fc
json.cpp ``to_stream`` with ``stringify_large_ints_and_doubles``, what its
websocket and HTTP servers write; docs/wire-contract.rst section 3).  The node keeps every integer as ``int`` in memory
(docs/DESIGN.rst).

One module holds the rule for both directions:

* :func:`to_wire` (memory -> wire) for RPC replies and for the JSON strings
  inside search documents;
* the times of chain objects: the chain keeps them as integer seconds, the
  wire as ``"YYYY-MM-DDTHH:MM:SS"`` (docs/wire-contract.rst section 7);
  :func:`to_wire` writes the :data:`TIME_FIELDS` that hold an ``int`` in
  that form (:func:`wire_time`);
* :func:`from_wire` (wire -> memory) for blocks and transactions received
  from peers and wallets, and :func:`wire_int` for one value (the search
  documents keep these fields numeric in ``op_object``).

:data:`INT64_FIELDS` lists the 64-bit integer fields of the supported
operations, fee parameters and objects that a wire form may carry as
strings; :data:`UINT32_FIELDS` the 32-bit unsigned ones and
:data:`UINT64_FIELDS` the 64-bit unsigned ones of objects and fee
parameters (numbers up to 2^32-1 on the wire, as the 32-bit ones).
"""

from typing import Any, Callable, Optional

from nodeapi.protocol.times import format_time, parse_time

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
UINT32_MAX = (1 << 32) - 1
INT64_MIN, UINT64_MAX = -(1 << 63), (1 << 64) - 1

#: graphene ``uint32_t`` fields: numbers up to 2^32-1 on the wire.
UINT32_FIELDS = frozenset({"ref_block_prefix", "block_num", "head_block_number",
                           "last_irreversible_block_num", "last_confirmed_block_num"})

#: ``uint64_t`` fields of chain objects and fee parameters: fc writes an
#: unsigned 64-bit value as a number up to 2^32-1 and a string beyond
#: (bitshares-fc json.cpp ``to_stream``, ``uint64_type``), where a signed one
#: (``share_type``, ``int64_t``) is a string beyond the 32-bit signed range.
UINT64_FIELDS = frozenset((
    "current_aslot", "last_aslot",  # dynamic global properties 2.1, witnesses 1.6
    "total_votes", "total_votes_for", "total_votes_against",  # 1.6, 1.5, workers 1.14
    "total_ops", "removed_ops", "vp_all", "vp_active", "vp_committee", "vp_witness",
    "vp_worker",  # account statistics
    "sequence",  # account history 2.9
    "time_since_last_budget",  # budget records 2.13
    "fee", "basic_fee", "premium_fee", "membership_annual_fee", "membership_lifetime_fee",
    "symbol3", "symbol4", "long_symbol", "price_per_output", "price_per_kbyte",  # fees
))
#: the fields :func:`to_wire` keeps numbers up to 2^32-1
UNSIGNED_FIELDS = UINT32_FIELDS | UINT64_FIELDS

#: 64-bit integer fields (``share_type``, ``int64_t``, ``uint64_t``) that
#: the wire carries as strings beyond 32 bits: asset amounts, asset
#: options, fee parameters, balances of orders and positions.
INT64_FIELDS = frozenset((
    "amount", "max_supply", "max_market_fee", "daily_pay", "basic_fee", "premium_fee",
    "price_per_kbyte", "price_per_output", "long_symbol", "symbol3", "symbol4",
    "membership_annual_fee", "membership_lifetime_fee", "fee", "settlement_fund",
    "collateral", "debt", "for_sale",
))

#: Time fields (``fc::time_point_sec``) of chain objects that the chain
#: keeps as integer seconds; the wire form is made from them here and
#: nowhere else (transactions and blocks keep their wire strings).
TIME_FIELDS = frozenset((
    "time", "next_maintenance_time", "last_budget_time", "last_vote_tally_time",
    "vote_tally_time", "last_vote_time",
    "expiration",  # limit orders 1.7, a proposal's proposed_transaction, HTLCs 1.16
    "expiration_time", "review_period_time",  # proposals 1.10
    "period_start_time",  # withdraw permissions 1.12 (and their "expiration")
    "begin_timestamp", "start_claim", "coin_seconds_earned_last_update",  # vesting 1.13
    "work_begin_date", "work_end_date",  # workers 1.14
    "next_auto_update_time", "next_type_downgrade_time",  # tickets 1.18
    "auto_disable_time", "latest_repay_time",  # credit offers 1.21, deals 1.22
    "valid_from", "valid_to",  # custom authorities 1.17
    "settlement_date",  # force settlements 1.4
    "current_feed_publication_time",  # bitasset data 2.4 (its feeds keep wire times)
    "membership_expiration_date", "creation_time",  # accounts 1.2, assets 1.3
    "last_claim_date",  # genesis balances 1.15
))

#: Fields :func:`from_wire` turns back into ints.
FROM_WIRE_FIELDS = INT64_FIELDS | UINT32_FIELDS


def to_wire(value: Any, frozen: Optional[Callable[[dict], dict]] = None) -> Any:
    """``value`` with integers outside int32 and floats turned into strings
    (fc's rule, module docstring), recursively through dicts, lists and
    tuples; :data:`UNSIGNED_FIELDS` stay numbers up to 2^32-1; NaN becomes
    ``"nan"``.  Other values are returned unchanged.  The result may share
    parts with ``value``: callers serialize it and never change it.

    :param frozen: when given, ``frozen(d)`` makes the wire form of a dict
        of a subclass of ``dict`` (the chain's stored objects, never changed
        once stored, so a caller may keep their wire forms by identity:
        :class:`nodeapi.api.answers.EncodedObjects`); it must give what
        :func:`wire_dict` gives.

    On the path of every RPC reply: strings, booleans, None and small
    integers are handled inline."""
    t = type(value)
    if t is dict:
        return wire_dict(value, frozen)
    if t is list or t is tuple:
        out = []
        append = out.append
        for v in value:
            tv = type(v)
            if tv is str or tv is bool or v is None:
                append(v)
            elif tv is int:
                append(v if INT32_MIN <= v <= INT32_MAX else str(v))
            else:
                append(to_wire(v, frozen))
        return out
    if t is int:
        return value if INT32_MIN <= value <= INT32_MAX else str(value)
    if t is float:
        return repr(value) if value == value else "nan"
    if t is str or value is None or t is bool:
        return value
    if isinstance(value, dict):
        return wire_dict(value, frozen) if frozen is None else frozen(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return to_wire(int(value))
    return value


def wire_time(seconds: int) -> str:
    """The wire form of a time the chain keeps as seconds
    (``fc::time_point_sec``: ``"YYYY-MM-DDTHH:MM:SS"``, UTC)."""
    return format_time(seconds)


def with_wire_times(value: Any) -> Any:
    """``value`` with only its :data:`TIME_FIELDS` ints in their wire form
    (other integers stay numbers), recursively through dicts and lists:
    for writers that keep the in-memory numbers but must not show the
    chain's seconds (the debug object stream)."""
    t = type(value)
    if t is list or t is tuple:
        return [with_wire_times(v) for v in value]
    if isinstance(value, dict):
        return {k: format_time(v) if type(v) is int and k in TIME_FIELDS
                else with_wire_times(v) for k, v in value.items()}
    return value


def wire_dict(value: dict, frozen: Optional[Callable[[dict], dict]] = None) -> dict:
    """:func:`to_wire` of a dict (a fresh dict; keys unchanged; an ``int``
    under a :data:`TIME_FIELDS` key becomes its wire time; ``frozen`` as
    for :func:`to_wire`)."""
    out = {}
    for k, v in value.items():
        tv = type(v)
        if tv is str or tv is bool or v is None:
            out[k] = v
        elif tv is int:
            if k in TIME_FIELDS:
                out[k] = format_time(v)
            else:
                out[k] = (v if INT32_MIN <= v <= INT32_MAX
                          or (k in UNSIGNED_FIELDS and 0 <= v <= UINT32_MAX) else str(v))
        else:
            out[k] = to_wire(v, frozen)
    return out


def json_default(value: Any) -> Any:
    """The ``default`` of ``orjson.dumps`` for wire forms: a set as its
    sorted list, an object with ``to_json()`` as what that returns, any
    other value as its ``str``."""
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if hasattr(value, "to_json"):
        return value.to_json()
    return str(value)


def as_string(value: Any) -> str:
    """A scalar as bitshares-fc's ``variant::as_string`` writes it
    (fc/src/variant.cpp, fc/src/string.cpp ``to_string``): a string as is,
    an integer in plain decimal (never quoted, whatever its size), a
    boolean as ``"true"``/``"false"``, null as ``""``, a double in fixed
    notation with 17 decimals.

    :raises TypeError: an object or array (fc: "Invalid cast")."""
    t = type(value)
    if t is str:
        return value
    if t is bool:
        return "true" if value else "false"
    if t is int:
        return str(value)
    if value is None:
        return ""
    if t is float:
        return f"{value:.17f}"
    if isinstance(value, int):
        return str(int(value))
    raise TypeError(f"Invalid cast from {t.__name__} to string")


def wire_int(value: str):
    """A decimal integer string within the 64-bit range -> int; any other
    string is returned unchanged."""
    body = value[1:] if value[:1] == "-" else value
    if body.isdigit() and body.isascii() and len(body) <= 20:
        n = int(value)
        if INT64_MIN <= n <= UINT64_MAX:
            return n
    return value


def from_wire(value: Any, key: Any = None) -> Any:
    """``value`` with the numeric strings of :data:`FROM_WIRE_FIELDS` made
    ints again (recursively), so a block or transaction received over the
    wire equals the sender's in-memory form.  Other strings (memos, ids)
    are untouched; so are strings directly in a list (only a member of an
    object is named).  Returns new dicts and lists, plain ones for
    subclasses.

    On the path of every block a follower fetches: JSON's own types are
    handled inline (:func:`_from_wire_dict`, :func:`_from_wire_list`)."""
    t = type(value)
    if t is dict or (t is not list and isinstance(value, dict)):
        return _from_wire_dict(value)
    if t is list or isinstance(value, list):
        return _from_wire_list(value)
    if key in FROM_WIRE_FIELDS and isinstance(value, str):
        return wire_int(value)
    return value


def _from_wire_dict(d: dict) -> dict:
    fields = FROM_WIRE_FIELDS
    out = {}
    for k, v in d.items():
        t = type(v)
        if t is str:
            out[k] = wire_int(v) if k in fields else v
        elif t is dict:
            out[k] = _from_wire_dict(v)
        elif t is list:
            out[k] = _from_wire_list(v)
        elif t is int or t is bool or v is None or t is float:
            out[k] = v
        else:
            out[k] = from_wire(v, k)
    return out


def _from_wire_list(items: list) -> list:
    out = []
    append = out.append
    for v in items:
        t = type(v)
        if t is dict:
            append(_from_wire_dict(v))
        elif t is list:
            append(_from_wire_list(v))
        elif t is str or t is int or t is bool or v is None or t is float:
            append(v)
        else:
            append(from_wire(v))
    return out


# Fields graphene's database get_block adds to a signed block
# (signed_block_with_info, bitshares-core libraries/app/database_api.cpp).
_INFO_FIELDS = ("block_id", "signing_key", "transaction_ids")


def strip_block_info(block: dict) -> dict:
    """A signed block (dict) without the ``block_id``/``signing_key``/
    ``transaction_ids`` fields that ``get_block`` adds, with wire integers
    converted back (:func:`from_wire`).  Raises ``AttributeError`` when
    ``block`` is not a dict."""
    return from_wire({k: v for k, v in block.items() if k not in _INFO_FIELDS})


#: fields of chain objects whose value may be all digits and must stay a
#: string (:func:`object_from_wire`): text, and the ``fc::uint128_t``
#: figures the chain keeps as decimal strings, as the wire has them
_TEXT_FIELDS = frozenset(("name", "symbol", "description", "url", "message", "memo",
                          "head_block_id", "block_id", "id", "key", "value", "catalog",
                          "data", "recent_slots_filled", "filled_amount",
                          "coin_seconds_earned", "virtual_value"))


def object_from_wire(value: Any, key: Any = None) -> Any:
    """A chain object as another node's ``get_objects`` writes it, in the
    form this node keeps in memory (the inverse of :func:`to_wire` for
    objects): the :data:`TIME_FIELDS` as integer seconds, the integers fc
    wrote as decimal strings as ints again (any field but the text ones,
    whose digits stay a string), recursively; a proposal's
    ``proposed_transaction`` is read as a received transaction is
    (:func:`from_wire`), its expiration in seconds.  Used by a devnet's
    lazy fork (``nodeapi.devnet.fork``)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k == "proposed_transaction" and isinstance(v, dict):
                trx = from_wire(v)
                if isinstance(trx.get("expiration"), str):
                    trx["expiration"] = parse_time(trx["expiration"])
                out[k] = trx
            elif k in TIME_FIELDS and isinstance(v, str):
                out[k] = parse_time(v)
            else:
                out[k] = object_from_wire(v, k)
        return out
    if isinstance(value, list):
        return [object_from_wire(v) for v in value]
    if isinstance(value, str) and key not in _TEXT_FIELDS:
        return wire_int(value)
    return value
