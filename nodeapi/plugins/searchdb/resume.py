"""What the search database holds: the resume point and the cursor file.

* :class:`Resume` says which documents the database holds already: every
  document of an operation before ``lo_op``, every ``2.9.N`` up to
  ``upto_ath``, and the ``2.9.N`` in ``stored`` (the database's documents of
  the operations from ``lo_op`` on, at most a window of them).  Documents it
  holds are never built nor sent again (docs/searchdb-plugin.rst "Duplicate
  rule": begin at the first record the database lacks, never before it).
* :class:`Cursor` is what the database confirmed, kept in
  ``<data dir>/searchdb-cursor.json`` as ``{"ath": N, "op": M, "block": B,
  "index_prefix": P, "rejected": [[N, M], ...], "floor": [S, M0, N0]}``
  (``floor``: with ``searchdb-start-after-block`` S, the first operation
  ``1.11.M0`` and document ``2.9.N0`` written, see :func:`find_resume`).
  It is a hint for the resume query; the block log is the source of truth.
"""

import os
from typing import Optional

import attr
import orjson
from twisted.internet import defer

from nodeapi.plugins.searchdb.client import SearchDBClient

CURSOR_FILE = "searchdb-cursor.json"
#: The resume query looks at most at this many documents (the default
#: ``index.max_result_window``).
RESUME_WINDOW = 10000
#: Refused documents remembered in the cursor file.
MAX_REJECTED = 10000


@attr.s(slots=True, auto_attribs=True)
class Resume:
    """Documents the database holds (see module docstring).

    :ivar lo_op: operations with ``M < lo_op`` are stored completely.
    :ivar upto_ath: documents with ``N <= upto_ath`` are stored.
    :ivar stored: ``N`` of documents of operations ``>= lo_op`` the
        database reported (at most :data:`RESUME_WINDOW`).
    :ivar window_op: the highest operation whose documents ``stored``
        covers (-1: none); documents of later operations are not held.
    :ivar lo_ath: N of the first document of operation ``lo_op`` (the
        documents before it are ``2.9.0`` .. ``2.9.(lo_ath-1)``).
    """

    lo_op: int = 0
    upto_ath: int = -1
    stored: set = attr.ib(factory=set)
    window_op: int = -1
    lo_ath: int = 0

    def lacks_below(self, n_end: int) -> bool:
        """True when a document ``2.9.N`` with ``N < n_end`` is not held
        (ids are consecutive: those from :attr:`lo_ath` on must all be in
        :attr:`stored`)."""
        if n_end <= self.lo_ath:
            return False
        if n_end - self.lo_ath > len(self.stored):
            return True
        return any(n not in self.stored for n in range(self.lo_ath, n_end))

    def holds(self, m: int, n: int) -> bool:
        """True when document ``2.9.n`` of operation ``1.11.m`` is stored."""
        return m < self.lo_op or n <= self.upto_ath or n in self.stored

    def lacking(self, m: int, entries: list) -> list:
        """The entries of operation ``1.11.m`` (``[(N, ...)]``, ascending
        ``N``) whose documents ``2.9.N`` are not stored (:meth:`holds`);
        past :attr:`window_op` and :attr:`upto_ath` none is, and
        ``entries`` is returned as it is."""
        if m < self.lo_op:
            return []
        if m > self.window_op and entries[0][0] > self.upto_ath:
            return entries
        return [e for e in entries if not self.holds(m, e[0])]

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
    #: ``{n: m}`` of documents the database refused for good (the newest
    #: :data:`MAX_REJECTED` are kept), see :func:`find_resume`.
    rejected: dict = attr.ib(factory=dict)
    #: ``(S, M0, N0)``: with start-after-block S, the first operation and
    #: document after block S (the documents before are never written);
    #: None when unknown.
    floor: Optional[tuple] = None

    @classmethod
    def load(cls, data_dir: str, index_prefix: str) -> Optional["Cursor"]:
        """The cursor in ``data_dir`` for ``index_prefix``, or None (absent,
        unreadable or written for another prefix)."""
        try:
            with open(os.path.join(data_dir, CURSOR_FILE), "rb") as f:
                data = orjson.loads(f.read())
            if data.get("index_prefix") != index_prefix:
                return None
            rejected = {int(n): int(m) for n, m in data.get("rejected", [])}
            floor = data.get("floor")
            floor = tuple(int(x) for x in floor) if floor and len(floor) == 3 else None
            return cls(int(data["ath"]), int(data["op"]), int(data["block"]), rejected, floor)
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
                                  "index_prefix": index_prefix,
                                  "rejected": sorted(self.rejected.items())[-MAX_REJECTED:],
                                  "floor": list(self.floor) if self.floor else None}))
        os.replace(tmp, path)


def _hits(answer) -> tuple:
    """(hits, total) of a search answer (``hits.total`` an int on ES 6,
    ``{value, relation}`` from ES 7 and on OpenSearch)."""
    hits = (answer.get("hits") or {}).get("hits") or []
    total = (answer.get("hits") or {}).get("total")
    total = total.get("value", 0) if isinstance(total, dict) else int(total or 0)
    return hits, total


def _ath_num(hit) -> int:
    """N of a hit whose ``_id`` is ``2.9.N``; -1 for any other id."""
    oid = str(hit.get("_id", ""))
    return int(oid[4:]) if oid.startswith("2.9.") and oid[4:].isdigit() else -1


def _op_num(hit, default: int = -1) -> int:
    return int((hit.get("_source") or {}).get("operation_id_num", default))


class _Probe:
    """The questions :func:`find_resume` asks the database, over
    ``<prefix>*`` (``client.info`` set)."""

    def __init__(self, client: SearchDBClient, prefix: str, window: int,
                 rejected: dict, floor: tuple = (0, 0)) -> None:
        self.client, self.prefix, self.window = client, prefix, window
        self.rejected = rejected
        self.requests = 0
        self.floor = floor  # (M0, N0): nothing is written below them
        self.first_ath = {floor[0]: floor[1]}  # x -> N of its first document, where complete

    def search(self, body: dict):
        self.requests += 1
        return self.client.search(self.prefix, body)

    @defer.inlineCallbacks
    def top_op(self):
        """The highest ``operation_id_num`` stored (a numeric max
        aggregation; ``_id`` strings do not sort numerically), or None."""
        answer = yield self.search({"size": 0, "aggs": {"top": {"max": {
            "field": "operation_id_num"}}}})
        top = ((answer.get("aggregations") or {}).get("top") or {}).get("value")
        return None if top is None else int(top)

    @defer.inlineCallbacks
    def complete_below(self, x: int, top: int):
        """True when the documents of the operations before ``1.11.x`` are
        exactly ``2.9.0`` .. ``2.9.(k-1)``, k their count, and (``x <=
        top``) the lowest document from ``1.11.x`` on is ``2.9.k``: ids are
        unique and numbered from 0 in operation order, so the count equals
        the highest N plus one only without a gap (every operation has at
        least one document: its fee payer's), and the next document tells
        whether the last operation below ``x`` lost its last documents."""
        m0, n0 = self.floor
        if x <= m0:
            return True
        below = {"range": {"operation_id_num": {"gte": m0, "lt": x}}}
        self.requests += 1
        count = yield self.client.count(self.prefix, below)
        gone = [n for n, m in self.rejected.items() if m0 <= m < x]
        if count == 0 and not gone:
            return False
        highest = (yield self._edge_ath(below, "desc")) if count else -1
        if n0 + count + len(gone) != max([highest] + gone) + 1:
            return False
        if x <= top:
            lowest = yield self._edge_ath({"range": {"operation_id_num": {"gte": x}}}, "asc")
            later = [n for n, m in self.rejected.items() if m >= x]
            if min([lowest] + later) != n0 + count + len(gone):
                return False
        self.first_ath[x] = n0 + count + len(gone)
        return True

    @defer.inlineCallbacks
    def _edge_ath(self, query: dict, order: str):
        """The highest (``order`` "desc") or lowest ("asc") N among the
        documents matching ``query``: one of those of its highest (lowest)
        operation (a few, one per impacted account)."""
        answer = yield self.search({"size": 64, "_source": ["operation_id_num"], "query": query,
                                    "sort": [{"operation_id_num": {"order": order}}]})
        hits, _total = _hits(answer)
        edge = _op_num(hits[0])
        same = [h for h in hits if _op_num(h) == edge]
        if len(same) == len(hits) == 64:  # an operation with many accounts
            answer = yield self.search({"size": self.window, "_source": False, "query": {
                "term": {"operation_id_num": edge}}})
            same = _hits(answer)[0]
        pick = max if order == "desc" else min
        return pick(_ath_num(h) for h in same)

    @defer.inlineCallbacks
    def from_op(self, x: int):
        """``(N set, last op fully seen)`` of the documents of operations
        ``>= x``, at most one window of them, lowest operations first; the
        last op is -1 when none, the highest stored when all fit."""
        answer = yield self.search({
            "size": self.window, "_source": ["operation_id_num"],
            "sort": [{"operation_id_num": {"order": "asc"}}],
            "query": {"range": {"operation_id_num": {"gte": x}}}})
        hits, total = _hits(answer)
        if not hits:
            return set(), -1
        if len(hits) < self.window and total <= len(hits):
            last = _op_num(hits[-1])
        else:
            last = _op_num(hits[-1]) - 1  # its documents may go on past the window
        stored = {_ath_num(h) for h in hits if _op_num(h) <= last}
        return stored | {n for n, m in self.rejected.items() if x <= m <= last}, last


@defer.inlineCallbacks
def find_resume(client: SearchDBClient, index_prefix: str, hint_op: Optional[int] = None,
                window: int = RESUME_WINDOW, rejected: Optional[dict] = None,
                floor: tuple = (0, 0)):
    """Ask the database what it holds; returns a :class:`Resume` that
    begins writing at the first document the database lacks, never before
    it (docs/searchdb-plugin.rst "Duplicate rule").  Run at start and on
    every reconnection: the database may have lost documents meanwhile
    (restarted empty, an index deleted), so nothing the node remembers
    replaces this check.

    1. Refresh ``<prefix>*``; the highest stored operation ``top``
       (nothing stored: write everything).
    2. The first gap: the largest ``x <= top`` such that the documents of
       the operations before ``1.11.x`` are complete and continue without
       a hole (:meth:`_Probe.complete_below`: two searches and a count).
       No gap (the usual case: ``x = top``) is known after one such check;
       otherwise a binary search over operations, started at ``hint_op``
       (the cursor file or the last confirmed operation: it only narrows
       the search).
    3. The ``2.9.N`` of the documents from ``1.11.x`` on, at most a
       ``window`` of them: documents missing among them (a last operation
       stored in part included) are written, the others not; operations
       beyond the window are written again (the database answers 409 for
       what it has).

    ``rejected`` (``{n: m}``) are documents the database refused for good
    (an operator's mapping, a document that could not be built): they count
    as held, so that they do not look like a gap at every check.
    ``floor`` ``(M0, N0)`` (``searchdb-start-after-block``: the first
    operation and document after its block, from the cursor file): the
    operations before ``1.11.M0`` count as held and the documents from it
    on are numbered from ``2.9.N0``.
    ``client.info`` must be set (:meth:`SearchDBClient.detect`).

    :raises SearchDBError: when the database does not answer as expected.
    """
    yield client.request("POST", f"/{index_prefix}*/_refresh", ok=(200, 404))
    probe = _Probe(client, index_prefix, window, rejected or {}, floor)
    top = yield probe.top_op()
    m0, n0 = floor
    if top is None or top < m0:
        return Resume(lo_op=m0, lo_ath=n0)
    lo, hi = top, top + 1  # complete below lo, not known below hi
    if not (yield probe.complete_below(top, top)):
        lo, hi = m0, top
        if hint_op is not None and lo < hint_op < hi:
            if (yield probe.complete_below(hint_op, top)):
                lo = hint_op
            else:
                hi = hint_op
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if (yield probe.complete_below(mid, top)):
                lo = mid
            else:
                hi = mid
    stored, last = yield probe.from_op(lo)
    return Resume(lo_op=lo, stored=stored, window_op=max(last, top if lo == top else -1),
                  lo_ath=probe.first_ath[lo])
