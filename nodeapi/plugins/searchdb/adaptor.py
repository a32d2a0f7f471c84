"""The typed object form of operations and results in search documents:
bitshares-core's ``es_data_adaptor`` (libraries/utilities/elasticsearch.cpp)
rules, so that every field keeps one type across all documents
(docs/wire-contract.rst section 8, ``op_object`` and
``operation_result_object``).

* :func:`adapt_object` (``es_data_adaptor::adapt`` of an object): an object
  field that holds a key of its own name is renamed ``<name>_`` (transfer
  ``amount`` -> ``amount_``), ``nonce`` becomes a string, a string ``owner``
  becomes ``owner_``, scalars inside arrays become strings, the map-like
  authority arrays (:data:`TO_STRING_ARRAY_FIELDS`) get an extra
  ``<name>_object`` list of ``{key_*, data_*}`` and the fields of
  :data:`TO_STRING_FIELDS` become JSON strings plus a typed
  ``<name>_object``.  At depth 0 an object becomes its JSON string; the
  ``_object`` copies are only made while the depth left is above 1.
* :func:`adapt_static_variant` (``adapt_static_variant``): ``[which, value]``
  -> ``{"which": which, "data_<kind>": value}`` with kind ``object``
  (adapted), ``int``, ``bool`` or ``string`` (other values as JSON text).

Depths count like the reference: the plugin passes
``max-mapping-depth - 2`` for the two levels above ``op_object``
(``operation_history.op_object``).
"""

import orjson

from nodeapi.protocol.wire import INT64_FIELDS, TIME_FIELDS, as_string, to_wire, wire_int, wire_time

#: Array fields stored as JSON strings plus a typed ``<name>_object``
#: (bitshares-core es_data_adaptor ``to_string_fields``): name -> kind.
TO_STRING_FIELDS = {
    "parameters": "array", "op": "static_variant", "proposed_ops": "array",
    "operations": "array", "initializer": "static_variant", "policy": "static_variant",
    "predicates": "array", "active_special_authority": "static_variant",
    "owner_special_authority": "static_variant", "htlc_preimage_hash": "static_variant",
    "argument": "static_variant", "feeds": "map", "acceptable_collateral": "map",
    "acceptable_borrowers": "map", "on_fill": "array",
}
#: Map-like arrays kept as string arrays plus a ``<name>_object`` list.
TO_STRING_ARRAY_FIELDS = frozenset(("account_auths", "address_auths", "key_auths"))

#: The reference's default ``max-mapping-depth`` (Elasticsearch's
#: ``index.mapping.depth.limit`` default).
MAX_DEPTH = 20


def to_json(value) -> str:
    """Compact JSON text of the wire form of ``value``."""
    return orjson.dumps(to_wire(value), option=orjson.OPT_NON_STR_KEYS).decode()


def _scalar_string(value) -> str:
    """fc's ``variant::as_string`` of a scalar (the reference adapts the
    in-memory variant, where a ``uint64_t`` nonce is a number: its decimal
    text, never a quoted JSON string); anything else as JSON text."""
    if isinstance(value, (dict, list, tuple)):
        return to_json(value)
    return as_string(value)


def adapt_object(obj: dict, depth: int = MAX_DEPTH):
    """``es_data_adaptor::adapt`` of an object (module docstring): a new
    dict, or the JSON string of ``obj`` when ``depth`` is 0."""
    if depth <= 0:
        return to_json(obj)
    out = {}
    renames = []
    backups = []
    for name, value in obj.items():
        t = type(value)
        # the common exact types first (the same outcome as the general
        # branches below, which take subclasses and everything else)
        if t is str:
            out[name] = wire_int(value) if name in INT64_FIELDS else value
            continue
        if t is int:
            out[name] = wire_time(value) if name in TIME_FIELDS else value
            continue
        if t is bool or value is None:
            out[name] = value
            continue
        if t is dict and depth > 1 and len(value) == 2 and type(value.get("amount")) is int \
                and type(value.get("asset_id")) is str:
            # an asset amount (fees, transfers, orders): what the general
            # branch below makes of it, a copy, without the call
            if name in value:
                renames.append(name)
            out[name] = dict(value)
            continue
        if isinstance(value, dict):
            if name in value:
                renames.append(name)
            out[name] = adapt_object(value, depth - 1)
        elif isinstance(value, (list, tuple)):
            if name in TO_STRING_FIELDS:
                if depth > 1:
                    backups.append((name, value))
                out[name] = to_json(value)
            else:
                if name in TO_STRING_ARRAY_FIELDS and depth > 1:
                    backups.append((name, value))
                out[name] = _adapt_in_situ(value, depth - 1)
        elif isinstance(value, str) and name in INT64_FIELDS:
            out[name] = wire_int(value)  # op_object keeps them numeric
        elif type(value) is int and name in TIME_FIELDS:
            out[name] = wire_time(value)  # the chain keeps times as seconds
        else:
            out[name] = value
    for name in renames:
        out[name + "_"] = out.pop(name)
    if "nonce" in out and not isinstance(out["nonce"], str):
        out["nonce"] = _scalar_string(out["nonce"])
    if isinstance(out.get("owner"), str):
        out["owner_"] = out.pop("owner")
    for name, value in backups:
        kind = TO_STRING_FIELDS.get(name, "map")
        out[name + "_object"] = _adapt_array(value, kind, depth - 1)
    return out


def _adapt_in_situ(values, depth: int) -> list:
    out = []
    for v in values:
        if isinstance(v, dict):
            out.append(adapt_object(v, depth))
        elif isinstance(v, (list, tuple)):
            out.append(_adapt_in_situ(v, depth))
        else:
            out.append(_scalar_string(v))
    return out


def _typed(value, prefix: str, out: dict, depth: int) -> None:
    """``extract_data_from_variant``: one field per JSON type."""
    if isinstance(value, dict):
        out[prefix + "_object"] = adapt_object(value, depth - 1)
    elif isinstance(value, bool):
        out[prefix + "_bool"] = value
    elif isinstance(value, int):
        out[prefix + "_int"] = value
    elif isinstance(value, str):
        out[prefix + "_string"] = value
    else:
        out[prefix + "_string"] = to_json(value)


def _adapt_array(values, kind: str, depth: int):
    if kind == "static_variant":
        return adapt_static_variant(values, depth)
    out = []
    for item in values:
        if isinstance(item, (list, tuple)) and len(item) == 2:
            if kind == "map":
                if depth <= 0:
                    out.append(to_json(item))
                    continue
                entry: dict = {}
                _typed(item[0], "key", entry, depth)
                _typed(item[1], "data", entry, depth)
                out.append(entry)
            else:
                out.append(adapt_static_variant(item, depth))
        elif isinstance(item, dict):
            out.append(adapt_object(item, depth))
    return out


def adapt_static_variant(value, depth: int = MAX_DEPTH):
    """``es_data_adaptor::adapt_static_variant``: ``[which, value]`` ->
    ``{"which": which, "data_<kind>": ...}`` (module docstring); the JSON
    string of ``value`` when ``depth`` is 0 or it is not a pair."""
    if depth <= 0 or not (isinstance(value, (list, tuple)) and len(value) == 2):
        return to_json(value)
    out = {"which": value[0]}
    _typed(value[1], "data", out, depth)
    return out
