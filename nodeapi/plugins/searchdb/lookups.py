"""Lookups of the ``searchdb`` history beyond an account's own list:
operations by block and by time, and the history objects ``1.11.M`` /
``2.9.N`` that ``get_objects`` returns, read from the search database.

Graphene reference: libraries/app/api.cpp
``history_api::get_block_operation_history`` /
``get_block_operations_by_time`` / ``get_account_history_by_time`` (the
semantics of :mod:`nodeapi.plugins.account_history.lookups`, the in-memory plugin).  One
document is stored per (operation, impacted account) pair, so operation
lists are read by ``operation_id_num`` and each operation is kept once.
"""

import time
from typing import Optional

from twisted.internet.defer import Deferred

from nodeapi.protocol.ids import instance_number
from nodeapi.errors import HistoryError
from nodeapi.plugins.searchdb.reader import MAX_OP, HistoryReader

#: The most documents of one block read for a block's operations.
MAX_BLOCK_DOCUMENTS = 1_000_000


def _iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


def _unique_ops(docs: list) -> list:
    """``docs`` with one document per ``operation_id_num`` (the first)."""
    seen, out = set(), []
    for d in docs:
        m = d.get("operation_id_num")
        if m not in seen:
            seen.add(m)
            out.append(d)
    return out


class SearchDBLookups:
    """The lookups of a :class:`~nodeapi.plugins.searchdb.query.SearchDBHistory`,
    owned by it; every method returns a Deferred, failing with
    :class:`~nodeapi.errors.HistoryError` when the database cannot answer.

    :param reader: the :class:`~nodeapi.plugins.searchdb.reader.HistoryReader`
        the documents are read with (its chain bounds them by the head block).
    """

    def __init__(self, reader: HistoryReader) -> None:
        self.reader = reader

    def get_block_operation_history(self, block_num: int, trx_in_block=None) -> Deferred:
        """The operations of block ``block_num`` by (trx_in_block,
        op_in_trx, virtual_op)."""
        return Deferred.fromCoroutine(self._block_ops(block_num, trx_in_block))

    async def _block_ops(self, block_num: int, trx_in_block) -> list:
        filters = self.reader.head_filters() + [{"term": {"block_data.block_num": block_num}}]
        if trx_in_block is not None:
            filters.append({"term": {"operation_history.trx_in_block": trx_in_block}})
        docs = _unique_ops(await self.reader.collect(filters, [], "operation_id_num", 0, MAX_OP,
                                               MAX_BLOCK_DOCUMENTS))
        entries = self.reader.entries(docs)
        entries.sort(key=lambda e: (e["trx_in_block"], e["op_in_trx"], e["virtual_op"]))
        return entries

    def get_block_operations_by_time(self, start=None) -> Deferred:
        """The operations of the newest block with operations at or before
        ``start`` (seconds, None = the newest), newest first."""
        return Deferred.fromCoroutine(self._block_ops_by_time(start))

    async def _newest_at_or_before(self, start) -> Optional[dict]:
        filters = self.reader.head_filters()
        if start is not None:
            filters.append({"range": {"block_data.block_time": {"lte": _iso(start)}}})
        hits = await self.reader.collect(filters, [], "operation_id_num", 0, MAX_OP, 1)
        return hits[0] if hits else None

    async def _block_ops_by_time(self, start) -> list:
        newest = await self._newest_at_or_before(start)
        if newest is None:
            return []
        try:
            block_num = int(newest["block_data"]["block_num"])
        except (KeyError, TypeError, ValueError):
            raise HistoryError("malformed history document in the search database:"
                               " no block_data.block_num") from None
        entries = await self._block_ops(block_num, None)
        entries.reverse()
        return entries

    def get_account_history_by_time(self, account_id: str, limit: int, start=None) -> Deferred:
        """The account's operations at or before ``start`` (seconds; None =
        no bound), newest first, at most ``limit``."""
        return Deferred.fromCoroutine(self._account_by_time(account_id, limit, start))

    async def _account_by_time(self, account_id: str, limit: int, start) -> list:
        if limit <= 0:
            return []
        filters = self.reader.account_filters(account_id)
        if start is not None:
            filters.append({"range": {"block_data.block_time": {"lte": _iso(start)}}})
        docs = await self.reader.collect(filters, [], "operation_id_num", 0, MAX_OP, limit)
        return self.reader.entries(docs)

    def get_history_objects(self, ids: list) -> Deferred:
        """``{id: object}`` for the ``1.11.M`` and ``2.9.N`` ids the
        database holds."""
        return Deferred.fromCoroutine(self._history_objects(ids))

    async def _history_objects(self, ids: list) -> dict:
        found: dict = {}
        ath = [i for i in ids if i.startswith("2.9.")]
        ops = {instance_number(i) for i in ids if i.startswith("1.11.")}
        if ath:
            hits = await self.reader.search({"query": {"bool": {"filter": self.reader.head_filters() + [
                {"ids": {"values": ath}}]}}, "size": len(ath), "_source": ["account_history"]})
            for h in hits:
                a = h.get("account_history") or {}
                if a.get("id") in ath:
                    found[a["id"]] = {"id": a["id"], "account": a.get("account"),
                                      "operation_id": a.get("operation_id"),
                                      "sequence": a.get("sequence"), "next": a.get("next")}
        for m in sorted(ops):
            docs = await self.reader.collect(self.reader.head_filters(), [], "operation_id_num", m, m, 1)
            if docs:
                found[f"1.11.{m}"] = self.reader.entries(docs)[0]
        return found
