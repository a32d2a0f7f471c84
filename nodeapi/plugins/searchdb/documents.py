"""Search-database documents of the searchdb plugin (docs/wire-contract.rst
section 8; layout of bitshares-core 7.x's ``bulk_struct``,
libraries/plugins/elasticsearch/elasticsearch_plugin.hpp; real documents in
tests/fixtures/es).

One document per (operation, impacted account) pair, ``_id`` = its ath id
``2.9.N``, in index ``<prefix>YYYY-MM`` of the block time::

    {"account_history": {id, account, operation_id, sequence, next},
     "operation_history": {trx_in_block, op_in_trx, virtual_op, is_virtual,
                           fee_payer, op: "<JSON>" | "",
                           operation_result: "<JSON>",
                           op_object: {...} | null,
                           operation_result_object: {which, data_*} | null},
     "operation_type": T, "operation_id_num": M,
     "block_data": {block_num, block_time, trx_id},
     "additional_data": {fee_data, transfer_data, fill_data}}  # visitor only

``op`` is the operation's JSON with ``operation_string`` on, else ``""``;
``op_object`` and ``operation_result_object`` are the
:mod:`~nodeapi.plugins.searchdb.adaptor` forms (``max_mapping_depth - 2``
levels) with ``operation_object`` on, else null (the reference's
``elasticsearch-operation-string`` / ``-operation-object``).  JSON strings
are of the wire JSON (docs/wire-contract.rst section 3: integers outside
the signed 32-bit range as strings, as the reference node's documents write
amounts and nonces).  ``block_data.trx_id`` is ``""`` for block-level
virtual operations, as the reference's ``doBlock`` writes it.

The visitor's ``additional_data`` (reference ``doVisitor``) always holds
all three parts: ``fee_data {asset, asset_name, amount, amount_units}``,
``transfer_data`` (plus ``from``, ``to``) and ``fill_data {order_id,
account_id, pays_asset_id, pays_asset_name, pays_amount, pays_amount_units,
receives_asset_id, receives_asset_name, receives_amount,
receives_amount_units, fill_price, fill_price_units, is_maker}``; an
operation that is not a transfer (fill_order) has the reference's empty
values there (asset ``1.3.0``, account ``1.2.0``, order ``0.0.0``,
amounts 0).  ``fill_price`` is the operation's price as a real number
(base amount / quote amount, ``price::to_real``), ``fill_price_units`` the
received units per paid unit.  Every ``*_units`` value is a finite float;
NaN is never written (the reference writes 0/0 for non-fills: 0.0 here).

The operation-level part of the documents of one operation is serialized
once with orjson and shared by all its impacted accounts.
"""

import time
from typing import Callable, Optional

import orjson

from nodeapi.plugins.searchdb.adaptor import (
    MAX_DEPTH, adapt_object, adapt_static_variant, to_json as _json)
from nodeapi.protocol.config import CORE_ASSET

TRANSFER = 0
FILL_ORDER = 4
#: The id a block-level virtual operation carries in the chain; the
#: reference writes ``""`` as its ``block_data.trx_id``.
NO_TRX_ID = "0" * 40
#: ``void_result``, the result of most operations, and its JSON text
#: (:func:`~nodeapi.plugins.searchdb.adaptor.to_json` of it)
_VOID = [0, {}]
_VOID_JSON = "[0,{}]"

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
    :param max_mapping_depth: ``searchdb-max-mapping-depth`` (>= 2): the
        adaptor forms get ``max_mapping_depth - 2`` levels.
    :param operation_object: ``searchdb-operation-object``.
    :param operation_string: ``searchdb-operation-string``.
    :param start_after_block: ``searchdb-start-after-block``: operations of
        blocks up to this number get no documents (:meth:`items` answers
        ``[]``); they are still numbered.
    """

    def __init__(self, index_prefix: str = "chain-", visitor: bool = False,
                 asset_lookup: Optional[AssetLookup] = None,
                 doc_type: Optional[str] = None, *, max_mapping_depth: int = MAX_DEPTH,
                 operation_object: bool = True, operation_string: bool = True,
                 start_after_block: int = 0) -> None:
        self.index_prefix = index_prefix
        self.visitor = visitor
        self.doc_type = doc_type
        self.object_depth = max_mapping_depth - 2
        self.operation_object = operation_object
        self.operation_string = operation_string
        self.start_after_block = start_after_block
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

    def _amount_data(self, amount: dict, prefix: str = "", asset_key: str = "asset") -> dict:
        asset_id = amount.get("asset_id", CORE_ASSET)
        name, scale = self._asset(asset_id)
        value = int(amount.get("amount", 0))
        return {prefix + asset_key: asset_id, prefix + "asset_name": name,
                prefix + "amount": value, prefix + "amount_units": value / scale}

    def additional_data(self, op: list) -> dict:
        """The visitor's ``additional_data`` of an operation: fee, transfer
        and fill data (module docstring; reference ``doVisitor``)."""
        data = op[1]
        transfer = data if op[0] == TRANSFER else {}
        fill = data if op[0] == FILL_ORDER else {}
        transfer_data = self._amount_data(transfer.get("amount") or {})
        transfer_data["from"] = transfer.get("from", "1.2.0")
        transfer_data["to"] = transfer.get("to", "1.2.0")
        pays = self._amount_data(fill.get("pays") or {}, "pays_", "asset_id")
        receives = self._amount_data(fill.get("receives") or {}, "receives_", "asset_id")
        fill_data = {"order_id": fill.get("order_id", "0.0.0"),
                     "account_id": fill.get("account_id", "1.2.0")}
        fill_data.update(pays)
        fill_data.update(receives)
        price = fill.get("fill_price") or {}
        base = int((price.get("base") or {}).get("amount", 0))
        quote = int((price.get("quote") or {}).get("amount", 0))
        fill_data["fill_price"] = base / quote if quote else 0.0
        paid = pays["pays_amount_units"]
        fill_data["fill_price_units"] = receives["receives_amount_units"] / paid if paid else 0.0
        fill_data["is_maker"] = bool(fill.get("is_maker", False))
        return {"fee_data": self._amount_data(data.get("fee") or {}),
                "transfer_data": transfer_data, "fill_data": fill_data}

    def operation_part(self, op, block_num: int, block_time: str) -> dict:
        """Everything of a document but ``account_history``, as a dict."""
        with_object = self.operation_object
        result = op.result
        if result == _VOID and self.object_depth > 1:  # most operations: the forms known
            result_json = _VOID_JSON
            result_object = {"which": 0, "data_object": {}} if with_object else None
        else:
            result_json = _json(result)
            result_object = (adapt_static_variant(result, self.object_depth) if with_object
                             else None)
        part = {
            "operation_history": {
                "trx_in_block": op.trx_in_block,
                "op_in_trx": op.op_in_trx,
                "virtual_op": op.virtual_op,
                "is_virtual": op.is_virtual,
                "fee_payer": op.fee_payer,
                "op": _json(op.op) if self.operation_string else "",
                "operation_result": result_json,
                "op_object": adapt_object(op.op[1], self.object_depth) if with_object else None,
                "operation_result_object": result_object,
            },
            "operation_type": op.op[0],
            "operation_id_num": op.id_num,
            "block_data": {"block_num": block_num, "block_time": block_time,
                           "trx_id": "" if op.trx_id == NO_TRX_ID else op.trx_id},
        }
        if self.visitor:
            part["additional_data"] = self.additional_data(op.op)
        return part

    def document(self, entry: tuple, op, block_num: int, block_time: str) -> dict:
        """One whole document as a dict; ``entry`` is ``(n, account,
        sequence, next_n)``, an :class:`nodeapi.applied.AccountHistoryEntry`."""
        n, account, seq, nxt = entry
        doc = {"account_history": {"id": f"2.9.{n}", "account": account,
                                   "operation_id": f"1.11.{op.id_num}", "sequence": seq,
                                   "next": f"2.9.{nxt}"}}
        doc.update(self.operation_part(op, block_num, block_time))
        return doc

    def items(self, entries: list, op, block_num: int, block_time: str, index: str,
              action_name: str = "create") -> list:
        """Bulk items of one operation: ``[(n, bytes)]`` where the bytes are
        the ``create`` action line (``action_name`` ``"index"``: replace a
        document of that id, the id of a popped block's document) and the
        document line, each ending in a newline.  ``entries`` are the
        (possibly filtered) numbering entries of ``op``; ``[]`` for no
        entries or a block up to ``start_after_block``."""
        if not entries or block_num <= self.start_after_block:
            return []  # no document: the operation's part is not built either
        try:
            tail = orjson.dumps(self.operation_part(op, block_num, block_time))
        except TypeError:  # an integer beyond 64 bits: write it as a string
            tail = orjson.dumps(_stringify_big(self.operation_part(op, block_num, block_time)))
        tail = tail[1:] + b"\n"
        m = op.id_num
        action = self._action(action_name, index)
        out = []
        for n, account, seq, nxt in entries:
            head = (f'{action}{n}"}}}}\n{{"account_history":{{"id":"2.9.{n}",'
                    f'"account":"{account}","operation_id":"1.11.{m}","sequence":{seq},'
                    f'"next":"2.9.{nxt}"}},')
            out.append((n, head.encode() + tail))
        return out

    def _action(self, name: str, index: str) -> str:
        """The start of an action line, up to the number of its ``2.9.N``."""
        if self.doc_type:
            return f'{{"{name}":{{"_index":"{index}","_type":"{self.doc_type}","_id":"2.9.'
        return f'{{"{name}":{{"_index":"{index}","_id":"2.9.'

    def delete_items(self, ns, block_num: int, index: str) -> list:
        """Bulk items deleting documents ``2.9.N`` (``ns``) of a popped
        block in ``index``: ``[(n, action line)]``; ``[]`` for a block up
        to ``start_after_block`` (nothing was written)."""
        if block_num <= self.start_after_block:
            return []
        action = self._action("delete", index)
        return [(n, f'{action}{n}"}}}}\n'.encode()) for n in ns]


def _stringify_big(value):
    if isinstance(value, dict):
        return {k: _stringify_big(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_stringify_big(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and not (
            -(1 << 63) <= value < (1 << 64)):
        return str(value)
    return value
