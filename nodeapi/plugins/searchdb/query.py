"""The history API answered from the search database (``searchdb`` plugin).

While ``searchdb`` is active, ``node.plugins["searchdb"].history`` is a :class:`SearchDBHistory`:
the three history functions read the documents of docs/wire-contract.rst section 8
(one per (operation, impacted account) pair, ``_id`` ``2.9.N``) from the
indexes ``<prefix>*`` and give the same answers as the in-memory
``account_history`` plugin (:mod:`nodeapi.plugins.account_history.history`,
graphene ``history_api`` in libraries/app/api.cpp, docs/wire-contract.rst
section 6).

How each function maps to one query (all filters on exact fields, sorted by
a number, newest first, ``size`` = what is still wanted; more than
``page_size`` results are read page by page by lowering
the upper bound below the last value seen, so ``index.max_result_window``
never matters):

- ``get_account_history``: ``account_history.account.keyword`` = account,
  ``operation_id_num`` in ``(stop, start]`` (``[0, start]`` when stop is 0:
  graphene then also includes 1.11.0), sorted by ``operation_id_num``.
- ``get_relative_account_history``: ``account_history.sequence`` in
  ``[max(stop, 1), start]`` (start 0 = no bound), sorted by sequence: the
  sequences of an account are 1..total without gaps, so this is graphene's
  ``[max(stop, 1, min(start, total) - limit + 1), min(start, total)]``
  without asking for the total first.
- ``get_account_history_operations``: as ``get_account_history`` plus
  ``operation_type`` = type; graphene walks the ``next`` links, which never
  visit the entry ``2.9.0`` from the loop: that entry is excluded from the
  query and appended when stop is 0, and an account whose only entry is
  ``2.9.0`` gets ``[]`` (the quirk the in-memory plugin keeps too).

With a ``chain``, documents of blocks above the chain's head are ignored
(``block_data.block_num <= head``), so that a database holding more than the
block log (a truncated log, a replay in progress) answers what the node has
applied; the block log is the source of truth.

The plugin answers from what the database holds and can search: a document
just shipped becomes searchable only after the database's next refresh
(about 1 s by default, ``index.refresh_interval``), and documents not yet
shipped (the database down, a bulk still queued) are missing from the
answers until they arrive.  A database that does not answer fails the call
with :class:`nodeapi.errors.HistoryError` (the reason is logged, never sent
to the client).
"""

from typing import Any, Optional

from twisted.internet.defer import Deferred
from zope.interface import implementer

from nodeapi.applied import IAccountHistory
from nodeapi.plugins.searchdb.lookups import SearchDBLookups
from nodeapi.plugins.searchdb.reader import (
    MAX_OP, SOURCE_FIELDS, HistoryReader, entry_from_document, term)

__all__ = ["SearchDBHistory", "entry_from_document"]

MAX_OP_TYPE = (1 << 31) - 1
ATH0 = "2.9.0"


@implementer(IAccountHistory)
class SearchDBHistory:
    """``IAccountHistory`` over the search database (see the module text).

    :param client: a :class:`nodeapi.plugins.searchdb.client.SearchDBClient`; its
        ``info`` (server flavour: ES 6 paths carry the type ``data``, other
        servers are typeless) is detected on first use if not yet known.
        Used: ``info``, ``detect()`` and ``search(prefix, body)`` (POST
        ``/<prefix>*/[data/]_search``); its errors (``SearchDBError``, a
        ``HistoryError``) become a generic ``HistoryError``.
    :param index_prefix: the ``searchdb-index-prefix`` option; queries go to
        ``<prefix>*``.
    :param chain: the :class:`nodeapi.chain.chain.Chain` or None; with a
        chain, documents above its head block are ignored.
    :param page_size: the most hits asked for in one search request.
    :ivar reader: its :class:`~nodeapi.plugins.searchdb.reader.HistoryReader`.
    :ivar lookups: its :class:`~nodeapi.plugins.searchdb.lookups.SearchDBLookups`
        (operations by block and time, history objects) over the same reader.

    Each method takes the arguments of the in-memory plugin (account as a
    ``1.2.N`` id, 1.11 instance numbers / sequence numbers, limit) and returns
    a Deferred firing with a list of entries newest first, or failing with
    :class:`~nodeapi.errors.HistoryError` when the database cannot answer.
    """

    def __init__(self, client: Any, index_prefix: str = "chain-", chain: Any = None,
                 page_size: int = 1000) -> None:
        self.client = client
        self.index_prefix = index_prefix
        self.chain = chain
        self.reader = HistoryReader(client, index_prefix, chain, page_size)
        self.lookups = SearchDBLookups(self.reader)
        self._ath0: Optional[dict] = None  # _source of 2.9.0 once seen

    async def _head_entry(self) -> Optional[dict]:
        """``_source`` of the document ``2.9.0`` (cached once found), or
        None while the database does not hold it (or it is above the head)."""
        if self._ath0 is not None:
            if self.chain is None or self._ath0["block_data"]["block_num"] <= \
                    self.chain.head_block_num:
                return self._ath0
            return None
        filters: list = [{"ids": {"values": [ATH0]}}]
        if self.chain is not None:
            filters.append({"range": {"block_data.block_num": {"lte": self.chain.head_block_num}}})
        hits = await self.reader.search({"query": {"bool": {"filter": filters}}, "size": 1,
                                   "_source": SOURCE_FIELDS})
        if hits and isinstance(hits[0].get("block_data"), dict):
            self._ath0 = hits[0]
            return hits[0]
        return None

    # -- IAccountHistory -------------------------------------------------------

    def get_account_history(self, account_id: str, stop: int, limit: int, start: int) -> Deferred:
        """Operations of the account with ``stop < M <= start`` newest first
        (``start`` 0 = newest; ``stop`` 0 also includes 1.11.0), at most
        ``limit``; ``[]`` when ``start < stop``."""
        return Deferred.fromCoroutine(self._account_history(account_id, stop, limit, start))

    async def _account_history(self, account_id, stop, limit, start) -> list:
        high = MAX_OP if start == 0 else start
        low = 0 if stop == 0 else stop + 1
        if limit <= 0 or high < stop:
            return []
        docs = await self.reader.collect(self.reader.account_filters(account_id), [], "operation_id_num",
                                   low, high, limit)
        return [entry_from_document(d) for d in docs]

    def get_relative_account_history(self, account_id: str, stop: int, limit: int,
                                     start: int) -> Deferred:
        """By the account's 1-based sequence numbers ``[stop, start]``
        inclusive, newest first, at most ``limit``; ``start`` 0 = latest."""
        return Deferred.fromCoroutine(self._relative(account_id, stop, limit, start))

    async def _relative(self, account_id, stop, limit, start) -> list:
        if limit <= 0:
            return []
        high = MAX_OP if start == 0 else start
        docs = await self.reader.collect(self.reader.account_filters(account_id), [],
                                   "account_history.sequence", max(stop, 1), high, limit)
        return [entry_from_document(d) for d in docs]

    def get_account_history_operations(self, account_id: str, operation_type: int,
                                       start: int, stop: int, limit: int) -> Deferred:
        """Operations of type ``operation_type`` with ``stop < M <= start``
        newest first (``start`` 0 = the account's newest; ``stop`` 0 also
        includes 1.11.0), at most ``limit``; graphene's ``2.9.0`` quirks
        kept (module text)."""
        return Deferred.fromCoroutine(
            self._operations(account_id, operation_type, start, stop, limit))

    async def _operations(self, account_id, operation_type, start, stop, limit) -> list:
        if limit <= 0 or not 0 <= operation_type <= MAX_OP_TYPE:
            return []  # no operation has such a type (the field is an integer)
        head = await self._head_entry()
        owns_head = head is not None and head["account_history"]["account"] == account_id
        filters = self.reader.account_filters(account_id) + [term("operation_type", operation_type)]
        must_not = [{"ids": {"values": [ATH0]}}] if owns_head else []
        high = MAX_OP if start == 0 else start
        docs = await self.reader.collect(filters, must_not, "operation_id_num", stop + 1, high, limit)
        if owns_head:
            if not docs and not await self._has_entries(account_id, must_not):
                return []  # graphene: most_recent_op == 2.9.0 reads as "no history"
            if stop == 0 and len(docs) < limit and head.get("operation_type") == operation_type:
                docs.append(head)
        return [entry_from_document(d) for d in docs]

    async def _has_entries(self, account_id: str, must_not: list) -> bool:
        hits = await self.reader.search({"query": {"bool": {"filter": self.reader.account_filters(account_id),
                                                      "must_not": must_not}},
                                   "size": 1, "_source": False})
        return bool(hits)

    # -- lookups (IAccountHistory) ------------------------------------------------

    def get_block_operation_history(self, block_num: int, trx_in_block=None) -> Deferred:
        """:meth:`SearchDBLookups.get_block_operation_history
        <nodeapi.plugins.searchdb.lookups.SearchDBLookups.get_block_operation_history>`."""
        return self.lookups.get_block_operation_history(block_num, trx_in_block)

    def get_block_operations_by_time(self, start=None) -> Deferred:
        """:meth:`SearchDBLookups.get_block_operations_by_time
        <nodeapi.plugins.searchdb.lookups.SearchDBLookups.get_block_operations_by_time>`."""
        return self.lookups.get_block_operations_by_time(start)

    def get_account_history_by_time(self, account_id: str, limit: int, start=None) -> Deferred:
        """:meth:`SearchDBLookups.get_account_history_by_time
        <nodeapi.plugins.searchdb.lookups.SearchDBLookups.get_account_history_by_time>`."""
        return self.lookups.get_account_history_by_time(account_id, limit, start)

    def get_history_objects(self, ids: list) -> Deferred:
        """:meth:`SearchDBLookups.get_history_objects
        <nodeapi.plugins.searchdb.lookups.SearchDBLookups.get_history_objects>`."""
        return self.lookups.get_history_objects(ids)

