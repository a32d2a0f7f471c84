"""What the search database holds: the resume point and the cursor file.

* :class:`Resume` says which documents the database holds already: every
  document of an operation before ``lo_op``, every ``2.9.N`` up to
  ``upto_ath``, and the ``2.9.N`` in ``stored`` (the database's documents of
  the operations from ``lo_op`` on, at most a window of them).  Documents it
  holds are never built nor sent again (docs/searchdb-plugin.rst "Duplicate
  rule": begin at the first record the database lacks, never before it).
* :class:`Cursor` is what the database confirmed, kept in
  ``<data dir>/searchdb-cursor.json`` as ``{"ath": N, "op": M, "block": B,
  "index_prefix": P}``.  It is a hint for the resume query; the block log is
  the source of truth.
"""

import os
from typing import Optional

import attr
import orjson
from twisted.internet import defer

from nodeapi.history.searchdb.client import SearchDBClient

CURSOR_FILE = "searchdb-cursor.json"
#: The resume query looks at most at this many documents (the default
#: ``index.max_result_window``).
RESUME_WINDOW = 10000


@attr.s(slots=True, auto_attribs=True)
class Resume:
    """Documents the database holds (see module docstring).

    :ivar lo_op: operations with ``M < lo_op`` are stored completely.
    :ivar upto_ath: documents with ``N <= upto_ath`` are stored.
    :ivar stored: ``N`` of documents of operations ``>= lo_op`` the
        database reported; dropped once building passes ``window_op``.
    :ivar window_op: the highest operation the database reported (-1: none).
    """

    lo_op: int = 0
    upto_ath: int = -1
    stored: set = attr.ib(factory=set)
    window_op: int = -1

    def holds(self, m: int, n: int) -> bool:
        """True when document ``2.9.n`` of operation ``1.11.m`` is stored."""
        return m < self.lo_op or n <= self.upto_ath or n in self.stored

    def passed(self, m: int) -> None:
        """Building reached operation ``m``: free ``stored`` once past the
        window."""
        if m > self.window_op and self.stored:
            self.stored = set()

    @property
    def first_doc(self) -> str:
        """Human-readable resume point for logs."""
        return f"1.11.{self.lo_op}" if self.upto_ath < 0 else f"2.9.{self.upto_ath + 1}"


@attr.s(slots=True, auto_attribs=True)
class Cursor:
    """Last confirmed document ``2.9.ath`` of operation ``1.11.op`` and the
    last block whose documents are all confirmed (-1: nothing yet)."""

    ath: int = -1
    op: int = -1
    block: int = -1

    @classmethod
    def load(cls, data_dir: str, index_prefix: str) -> Optional["Cursor"]:
        """The cursor in ``data_dir`` for ``index_prefix``, or None (absent,
        unreadable or written for another prefix)."""
        try:
            with open(os.path.join(data_dir, CURSOR_FILE), "rb") as f:
                data = orjson.loads(f.read())
            if data.get("index_prefix") != index_prefix:
                return None
            return cls(int(data["ath"]), int(data["op"]), int(data["block"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def save(self, data_dir: str, index_prefix: str) -> None:
        """Write atomically (temporary file + rename; a few dozen bytes,
        no fsync: the resume query checks the database anyway).

        :raises OSError: from the file system.
        """
        path = os.path.join(data_dir, CURSOR_FILE)
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(orjson.dumps({"ath": self.ath, "op": self.op, "block": self.block,
                                  "index_prefix": index_prefix}))
        os.replace(tmp, path)


def _hits(answer) -> tuple:
    """(hits, total) of a search answer (``hits.total`` an int on ES 6,
    ``{value, relation}`` from ES 7 and on OpenSearch)."""
    hits = (answer.get("hits") or {}).get("hits") or []
    total = (answer.get("hits") or {}).get("total")
    total = total.get("value", 0) if isinstance(total, dict) else int(total or 0)
    return hits, total


def _ath_ids(hits) -> set:
    stored = set()
    for hit in hits:
        oid = str(hit.get("_id", ""))
        if oid.startswith("2.9.") and oid[4:].isdigit():
            stored.add(int(oid[4:]))
    return stored


@defer.inlineCallbacks
def find_resume(client: SearchDBClient, index_prefix: str, cursor: Optional[Cursor],
                window: int = RESUME_WINDOW):
    """Ask the database what it holds; returns a
    :class:`~nodeapi.history.searchdb.bulk.Resume` that begins writing at
    the first document the database lacks, never before it
    (docs/searchdb-plugin.rst "Duplicate rule").

    Refreshes ``<prefix>*`` and reads the highest ``operation_id_num`` (a
    numeric max aggregation; ``_id`` strings ``2.9.N`` do not sort
    numerically).  Then the ``_id`` of every document of the operations
    from the cursor's operation on, when the cursor is usable (not ahead of
    the database) and they fit in one ``window``; otherwise the ``window``
    documents with the highest ``operation_id_num``.  Operations below the
    looked-at range count as stored completely; inside it each ``2.9.N`` is
    checked, so a document missing below the highest one (a bulk stored in
    part when the node died) is written, and none is written twice.  A
    window holds more than one bulk (bulks are shipped one at a time), so
    the bulk in flight at a crash is always inside it.
    ``client.info`` must be set (:meth:`SearchDBClient.detect`).

    :raises SearchDBError: when the database does not answer as expected.
    """
    yield client.request("POST", f"/{index_prefix}*/_refresh", ok=(200, 404))
    answer = yield client.search(index_prefix, {
        "size": 0, "aggs": {"top": {"max": {"field": "operation_id_num"}}}})
    top = ((answer.get("aggregations") or {}).get("top") or {}).get("value")
    if top is None:
        return Resume(lo_op=0)
    top = int(top)
    if cursor is not None and 0 <= cursor.op <= top:
        answer = yield client.search(index_prefix, {
            "size": window, "_source": False,
            "query": {"range": {"operation_id_num": {"gte": cursor.op}}}})
        hits, total = _hits(answer)
        if len(hits) < window and total <= len(hits):
            return Resume(lo_op=cursor.op, upto_ath=cursor.ath, stored=_ath_ids(hits),
                          window_op=top)
    answer = yield client.search(index_prefix, {
        "size": window, "_source": ["operation_id_num"],
        "sort": [{"operation_id_num": {"order": "desc"}}],
        "query": {"match_all": {}}})
    hits, total = _hits(answer)
    if len(hits) < window and total <= len(hits):
        lo = 0  # every stored document is in hand
    else:
        ops = [int((h.get("_source") or {}).get("operation_id_num", top)) for h in hits]
        low = min(ops, default=top)
        lo = low + 1 if low < top else top  # ``low`` may continue below the window
    return Resume(lo_op=lo, upto_ath=-1, stored=_ath_ids(hits), window_op=top)
