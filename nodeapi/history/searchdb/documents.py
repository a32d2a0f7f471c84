"""Search-database documents of the searchdb plugin (docs/wire-contract.rst
section 8; layout of the real documents in tests/fixtures/es).

One document per (operation, impacted account) pair, ``_id`` = its ath id
``2.9.N``, in index ``<prefix>YYYY-MM`` of the block time::

    {"account_history": {id, account, operation_id, sequence, next},
     "operation_history": {trx_in_block, op_in_trx, virtual_op, is_virtual,
                           fee_payer, op: "<JSON>", operation_result: "<JSON>",
                           op_object: {...}},
     "operation_type": T, "operation_id_num": M,
     "block_data": {block_num, block_time, trx_id},
     "additional_data": {fee_data: {asset, asset_name, amount, amount_units},
                         transfer_data: {..., from, to}}}   # visitor only

``op`` and ``operation_result`` are JSON strings of the wire JSON
(docs/wire-contract.rst section 3: integers outside the signed 32-bit range as
strings, as the reference node's documents write amounts and nonces).  ``op_object`` is the operation's data adapted like
bitshares-core's ``es_data_adaptor`` (libraries/utilities/elasticsearch.cpp)
so that every field keeps one type across all documents: an object field
that holds a key of its own name is renamed ``<name>_`` (transfer
``amount`` -> ``amount_``), ``nonce`` becomes a string, a string ``owner``
becomes ``owner_``, scalars inside arrays become strings, the map-like
authority arrays get an extra ``<name>_object`` list of ``{key_*, data_*}``
and the static-variant fields listed in :data:`TO_STRING_FIELDS` become JSON
strings plus a typed ``<name>_object``.  ``amount_units`` is always a finite
float (amount / 10^precision); NaN is never written.

The operation-level part of the documents of one operation is serialized
once with orjson and shared by all its impacted accounts.
"""

import time
from typing import Callable, Optional

import orjson

from nodeapi.protocol.wire import INT64_FIELDS, to_wire, wire_int

TRANSFER = 0

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

MAX_DEPTH = 20

def _json(value) -> str:
    return orjson.dumps(to_wire(value), option=orjson.OPT_NON_STR_KEYS).decode()


def _scalar_string(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return _json(value)


def adapt_object(obj: dict, depth: int = MAX_DEPTH) -> dict:
    """``es_data_adaptor::adapt`` for an object (see module docstring)."""
    if depth <= 0:
        return _json(obj)
    out = {}
    renames = []
    backups = []
    for name, value in obj.items():
        if isinstance(value, dict):
            if name in value:
                renames.append(name)
            out[name] = adapt_object(value, depth - 1)
        elif isinstance(value, (list, tuple)):
            if name in TO_STRING_FIELDS:
                backups.append((name, value))
                out[name] = _json(value)
            elif name in TO_STRING_ARRAY_FIELDS:
                backups.append((name, value))
                out[name] = _adapt_in_situ(value, depth - 1)
            else:
                out[name] = _adapt_in_situ(value, depth - 1)
        elif isinstance(value, str) and name in INT64_FIELDS:
            out[name] = wire_int(value)  # op_object keeps them numeric
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
        out[prefix + "_string"] = _json(value)


def _adapt_array(values, kind: str, depth: int):
    if depth <= 0:
        return _json(values)
    if kind == "static_variant":
        return _adapt_static_variant(values, depth)
    out = []
    for item in values:
        if isinstance(item, (list, tuple)) and len(item) == 2:
            if kind == "map":
                entry: dict = {}
                _typed(item[0], "key", entry, depth)
                _typed(item[1], "data", entry, depth)
                out.append(entry)
            else:
                out.append(_adapt_static_variant(item, depth))
        elif isinstance(item, dict):
            out.append(adapt_object(item, depth))
    return out


def _adapt_static_variant(value, depth: int):
    if depth <= 0 or not (isinstance(value, (list, tuple)) and len(value) == 2):
        return _json(value)
    out = {"which": value[0]}
    _typed(value[1], "data", out, depth)
    return out


def index_name(prefix: str, timestamp: int) -> str:
    """``<prefix>YYYY-MM`` of a block time in seconds (UTC)."""
    t = time.gmtime(timestamp)
    return f"{prefix}{t.tm_year:04d}-{t.tm_mon:02d}"


AssetLookup = Callable[[str], Optional[tuple]]


class DocumentBuilder:
    """Builds bulk items (action line + document line) for applied
    operations.

    :param index_prefix: the ``searchdb-index-prefix`` option.
    :param visitor: the ``searchdb-visitor`` option (adds
        ``additional_data``).
    :param asset_lookup: ``fn(asset_id) -> (symbol, precision) | None``,
        used by the visitor; results are cached (symbol and precision of an
        asset never change).  Unknown assets get name ``""`` and precision 0.
    :param doc_type: ``"data"`` for ES 6 (adds ``_type`` to action lines),
        None for typeless servers.
    """

    def __init__(self, index_prefix: str = "chain-", visitor: bool = False,
                 asset_lookup: Optional[AssetLookup] = None,
                 doc_type: Optional[str] = None) -> None:
        self.index_prefix = index_prefix
        self.visitor = visitor
        self.doc_type = doc_type
        self._asset_lookup = asset_lookup
        self._assets: dict = {}
        self._month_key = None
        self._month_index = ""

    def index_for(self, timestamp: int) -> str:
        """The index name of a block time (cached per day)."""
        key = timestamp // 86400
        if key != self._month_key:
            self._month_key = key
            self._month_index = index_name(self.index_prefix, timestamp)
        return self._month_index

    def _asset(self, asset_id: str) -> tuple:
        got = self._assets.get(asset_id)
        if got is None:
            found = self._asset_lookup(asset_id) if self._asset_lookup else None
            got = (str(found[0]), 10 ** int(found[1])) if found else ("", 1)
            if found:
                self._assets[asset_id] = got
        return got

    def _amount_data(self, amount: dict) -> dict:
        asset_id = amount.get("asset_id", "1.3.0")
        name, scale = self._asset(asset_id)
        value = int(amount.get("amount", 0))
        return {"asset": asset_id, "asset_name": name, "amount": value,
                "amount_units": value / scale}

    def additional_data(self, op: list) -> dict:
        """The visitor's ``additional_data`` of an operation (fee for every
        operation, transfer data for transfers)."""
        data = op[1]
        out = {"fee_data": self._amount_data(data.get("fee") or {})}
        if op[0] == TRANSFER:
            transfer = self._amount_data(data.get("amount") or {})
            transfer["from"] = data.get("from", "")
            transfer["to"] = data.get("to", "")
            out["transfer_data"] = transfer
        return out

    def operation_part(self, op, block_num: int, block_time: str) -> dict:
        """Everything of a document but ``account_history``, as a dict."""
        part = {
            "operation_history": {
                "trx_in_block": op.trx_in_block,
                "op_in_trx": op.op_in_trx,
                "virtual_op": op.virtual_op,
                "is_virtual": op.is_virtual,
                "fee_payer": op.fee_payer,
                "op": _json(op.op),
                "operation_result": _json(op.result),
                "op_object": adapt_object(op.op[1]),
            },
            "operation_type": op.op[0],
            "operation_id_num": op.id_num,
            "block_data": {"block_num": block_num, "block_time": block_time,
                           "trx_id": op.trx_id},
        }
        if self.visitor:
            part["additional_data"] = self.additional_data(op.op)
        return part

    def document(self, entry: tuple, op, block_num: int, block_time: str) -> dict:
        """One whole document as a dict; ``entry`` is ``(n, account,
        sequence, next_n)`` from :class:`nodeapi.history.ids.HistoryNumbering`."""
        n, account, seq, nxt = entry
        doc = {"account_history": {"id": f"2.9.{n}", "account": account,
                                   "operation_id": f"1.11.{op.id_num}", "sequence": seq,
                                   "next": f"2.9.{nxt}"}}
        doc.update(self.operation_part(op, block_num, block_time))
        return doc

    def items(self, entries: list, op, block_num: int, block_time: str, index: str) -> list:
        """Bulk items of one operation: ``[(n, bytes)]`` where the bytes are
        the ``create`` action line and the document line, each ending in a
        newline.  ``entries`` are the (possibly filtered) numbering entries
        of ``op``."""
        try:
            tail = orjson.dumps(self.operation_part(op, block_num, block_time))
        except TypeError:  # an integer beyond 64 bits: write it as a string
            tail = orjson.dumps(_stringify_big(self.operation_part(op, block_num, block_time)))
        tail = tail[1:] + b"\n"
        m = op.id_num
        if self.doc_type:
            action = f'{{"create":{{"_index":"{index}","_type":"{self.doc_type}","_id":"2.9.'
        else:
            action = f'{{"create":{{"_index":"{index}","_id":"2.9.'
        out = []
        for n, account, seq, nxt in entries:
            head = (f'{action}{n}"}}}}\n{{"account_history":{{"id":"2.9.{n}",'
                    f'"account":"{account}","operation_id":"1.11.{m}","sequence":{seq},'
                    f'"next":"2.9.{nxt}"}},')
            out.append((n, head.encode() + tail))
        return out


def _stringify_big(value):
    if isinstance(value, dict):
        return {k: _stringify_big(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_stringify_big(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and not (
            -(1 << 63) <= value < (1 << 64)):
        return str(value)
    return value
