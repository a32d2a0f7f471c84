"""Reading history documents from the search database: the requests
:class:`~nodeapi.plugins.searchdb.query.SearchDBHistory` and its
:class:`~nodeapi.plugins.searchdb.lookups.SearchDBLookups` share.

Documents are those of docs/wire-contract.rst section 8 (one per
(operation, impacted account) pair, ``_id`` ``2.9.N``) in the indexes
``<prefix>*``.  A list longer than ``page_size`` is read page by page by
lowering the upper bound below the last value seen, so
``index.max_result_window`` never matters.  With a ``chain``, documents of
blocks above its head are ignored (the block log is the source of truth).
"""

from typing import Any, Optional

import orjson
from twisted.logger import Logger

from nodeapi.errors import HistoryError

MAX_OP = (1 << 63) - 1

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
    history object, as :func:`nodeapi.plugins.account_history.history.history_entry`
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


def term(field: str, value: Any) -> dict:
    """The filter ``field == value``."""
    return {"term": {field: value}}


def value_range(field: str, low: int, high: int) -> dict:
    """The filter ``low <= field <= high``."""
    return {"range": {field: {"gte": low, "lte": high}}}


class HistoryReader:
    """Searches over the history documents of one index prefix.

    :param client: a :class:`nodeapi.plugins.searchdb.client.SearchDBClient`
        (``info``, ``detect()``, ``search(prefix, body)``); its server
        flavour is detected on first use if not yet known.
    :param index_prefix: searches go to ``<prefix>*``.
    :param chain: the :class:`nodeapi.chain.chain.Chain` or None; with a
        chain, documents above its head block are ignored.
    :param page_size: the most hits asked for in one search request.
    """

    log = Logger()

    def __init__(self, client: Any, index_prefix: str, chain: Any = None,
                 page_size: int = 1000) -> None:
        self.client = client
        self.index_prefix = index_prefix
        self.chain = chain
        self.page_size = max(1, int(page_size))

    @staticmethod
    def entries(docs: list) -> list:
        """:func:`entry_from_document` of each of ``docs``."""
        return [entry_from_document(d) for d in docs]

    def head_filters(self) -> list:
        """``[]``, or with a chain the filter ``block_num <= head``."""
        if self.chain is None:
            return []
        return [{"range": {"block_data.block_num": {"lte": self.chain.head_block_num}}}]

    def account_filters(self, account: str) -> list:
        """The documents of ``account`` (``1.2.N``) up to the head."""
        return [term("account_history.account.keyword", account)] + self.head_filters()

    async def search(self, body: dict) -> list:
        """One search; returns the hits' ``_source`` dicts.

        :raises HistoryError: the database does not answer or refuses (the
            reason is logged, never sent to the client)."""
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

    async def collect(self, filters: list, must_not: list, field: str, low: int,
                      high: int, limit: int) -> list:
        """Documents with ``low <= field <= high`` matching ``filters`` and
        none of ``must_not``, by ``field`` descending, at most ``limit``.

        :raises HistoryError: as :meth:`search`, or a document lacks ``field``."""
        out: list = []
        high = min(high, MAX_OP)
        while len(out) < limit and low <= high:
            size = min(limit - len(out), self.page_size)
            query: dict = {"filter": filters + [value_range(field, low, high)]}
            if must_not:
                query["must_not"] = must_not
            body = {"query": {"bool": query}, "size": size, "_source": SOURCE_FIELDS,
                    "sort": [{field: {"order": "desc", "unmapped_type": "long"}}]}
            page = await self.search(body)
            out.extend(page)
            if len(page) < size:
                break
            last = _field(page[-1], field)
            if last is None:
                raise HistoryError(f"malformed history document in the search database:"
                                   f" no {field}")
            high = last - 1
        return out


def _field(source: dict, dotted: str) -> Optional[int]:
    value: Any = source
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
