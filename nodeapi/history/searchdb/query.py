"""The history API answered from the search database (``searchdb`` plugin).

While ``searchdb`` is active, ``node.history`` is a :class:`SearchDBHistory`:
the three history functions read the documents of docs/wire-contract.rst section 8
(one per (operation, impacted account) pair, ``_id`` ``2.9.N``) from the
indexes ``<prefix>*`` and give the same answers as the in-memory
``account_history`` plugin (:mod:`nodeapi.history.account_history`,
graphene ``history_api`` in libraries/app/api.cpp, docs/wire-contract.rst
section 6).

How each function maps to one query (all filters on exact fields, sorted by
a number, newest first, ``size`` = what is still wanted; more than
:attr:`SearchDBHistory.page_size` results are read page by page by lowering
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

import orjson
from twisted.internet.defer import Deferred
from twisted.logger import Logger
from zope.interface import implementer

from nodeapi.applied import IAccountHistory
from nodeapi.errors import HistoryError
from nodeapi.history.searchdb.lookups import SearchDBLookups

MAX_OP = (1 << 63) - 1
MAX_OP_TYPE = (1 << 31) - 1
ATH0 = "2.9.0"

#: The document fields an API entry is built from (``op_object`` and the
#: visitor's ``additional_data`` are never fetched).
SOURCE_FIELDS = [
    "account_history.account", "account_history.sequence", "operation_id_num",
    "operation_type", "operation_history.trx_in_block", "operation_history.op_in_trx",
    "operation_history.virtual_op", "operation_history.is_virtual",
    "operation_history.op", "operation_history.operation_result", "block_data",
]


def entry_from_document(source: dict) -> dict:
    """A stored document's ``_source`` -> the API form of its operation
    history object, as :func:`nodeapi.history.account_history.history_entry`
    gives it: ``{id, op, result, block_num, trx_in_block, op_in_trx,
    virtual_op, is_virtual, block_time}`` (``op`` and ``result`` decoded
    from their JSON strings, ``block_time`` cut to ``YYYY-MM-DDTHH:MM:SS``).

    :raises HistoryError: the document lacks a field or holds bad JSON.
    """
    try:
        oh = source["operation_history"]
        bd = source["block_data"]
        return {
            "id": f"1.11.{int(source['operation_id_num'])}",
            "op": orjson.loads(oh["op"]),
            "result": orjson.loads(oh["operation_result"]),
            "block_num": int(bd["block_num"]),
            "trx_in_block": int(oh["trx_in_block"]),
            "op_in_trx": int(oh["op_in_trx"]),
            "virtual_op": int(oh["virtual_op"]),
            "is_virtual": bool(oh["is_virtual"]),
            "block_time": str(bd["block_time"])[:19],
        }
    except (KeyError, TypeError, ValueError, orjson.JSONDecodeError) as exc:
        raise HistoryError(f"malformed history document in the search database: {exc}") from None


def _term(field: str, value: Any) -> dict:
    return {"term": {field: value}}


def _range(field: str, low: int, high: int) -> dict:
    return {"range": {field: {"gte": low, "lte": high}}}


@implementer(IAccountHistory)
class SearchDBHistory(SearchDBLookups):
    """``IAccountHistory`` over the search database (see the module text).

    :param client: a :class:`nodeapi.history.searchdb.client.SearchDBClient`; its
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

    Each method takes the arguments of the in-memory plugin (account as a
    ``1.2.N`` id, 1.11 instance numbers / sequence numbers, limit) and returns
    a Deferred firing with a list of entries newest first, or failing with
    :class:`~nodeapi.errors.HistoryError` when the database cannot answer.
    """

    log = Logger()

    def __init__(self, client: Any, index_prefix: str = "chain-", chain: Any = None,
                 page_size: int = 1000) -> None:
        self.client = client
        self.index_prefix = index_prefix
        self.chain = chain
        self.page_size = max(1, int(page_size))
        self._ath0: Optional[dict] = None  # _source of 2.9.0 once seen

    @staticmethod
    def _entries_of(docs: list) -> list:
        return [entry_from_document(d) for d in docs]

    # -- requests --------------------------------------------------------------

    async def _search(self, body: dict) -> list:
        """One search; returns the hits' ``_source`` dicts."""
        try:
            if self.client.info is None:
                await self.client.detect()
            answer = await self.client.search(self.index_prefix, body)
        except HistoryError as exc:  # shipper.SearchDBError: no answer or an error status
            self.log.warn("searchdb history query failed: {reason}",
                          reason=getattr(exc, "reason", str(exc)),
                          status=getattr(exc, "status", None))
            raise HistoryError("the search database cannot answer the history query"
                               " now") from None
        hits = answer.get("hits", {}).get("hits", []) if isinstance(answer, dict) else []
        return [h.get("_source") or {} for h in hits]

    def _base_filters(self, account: str) -> list:
        filters = [_term("account_history.account.keyword", account)]
        if self.chain is not None:
            filters.append({"range": {"block_data.block_num": {"lte": self.chain.head_block_num}}})
        return filters

    async def _collect(self, filters: list, must_not: list, field: str, low: int,
                       high: int, limit: int) -> list:
        """Documents with ``low <= field <= high`` matching ``filters`` and
        none of ``must_not``, by ``field`` descending, at most ``limit``."""
        out: list = []
        high = min(high, MAX_OP)
        while len(out) < limit and low <= high:
            size = min(limit - len(out), self.page_size)
            query: dict = {"filter": filters + [_range(field, low, high)]}
            if must_not:
                query["must_not"] = must_not
            body = {"query": {"bool": query}, "size": size, "_source": SOURCE_FIELDS,
                    "sort": [{field: {"order": "desc", "unmapped_type": "long"}}]}
            page = await self._search(body)
            out.extend(page)
            if len(page) < size:
                break
            last = _field(page[-1], field)
            if last is None:
                raise HistoryError(f"malformed history document in the search database:"
                                   f" no {field}")
            high = last - 1
        return out

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
        hits = await self._search({"query": {"bool": {"filter": filters}}, "size": 1,
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
        docs = await self._collect(self._base_filters(account_id), [], "operation_id_num",
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
        docs = await self._collect(self._base_filters(account_id), [],
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
        filters = self._base_filters(account_id) + [_term("operation_type", operation_type)]
        must_not = [{"ids": {"values": [ATH0]}}] if owns_head else []
        high = MAX_OP if start == 0 else start
        docs = await self._collect(filters, must_not, "operation_id_num", stop + 1, high, limit)
        if owns_head:
            if not docs and not await self._has_entries(account_id, must_not):
                return []  # graphene: most_recent_op == 2.9.0 reads as "no history"
            if stop == 0 and len(docs) < limit and head.get("operation_type") == operation_type:
                docs.append(head)
        return [entry_from_document(d) for d in docs]

    async def _has_entries(self, account_id: str, must_not: list) -> bool:
        hits = await self._search({"query": {"bool": {"filter": self._base_filters(account_id),
                                                      "must_not": must_not}},
                                   "size": 1, "_source": False})
        return bool(hits)


def _field(source: dict, dotted: str) -> Optional[int]:
    value: Any = source
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
