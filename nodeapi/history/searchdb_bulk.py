"""Building bulks, the resume point and the cursor file of the searchdb
plugin (history-searchdb-plugin.md "Bulk requests", "Duplicate rule";
wire-contract.md section 8).

* :class:`BulkBuilder` collects bulk items (``create`` action line plus
  document line, :class:`nodeapi.history.documents.DocumentBuilder`) into an
  open bulk and seals it into a :class:`~nodeapi.history.spool.Bulk` when it
  holds the configured number of lines, before its body would pass
  :data:`MAX_BODY` bytes, and on request (end of a block when synchronized).
* :class:`Resume` says which documents the database holds already: every
  document of an operation before ``lo_op``, every ``2.9.N`` up to
  ``upto_ath``, and the ``2.9.N`` in ``stored`` (the database's documents of
  the operations from ``lo_op`` on, at most a window of them).  Documents it
  holds are never built nor sent again (begin at the first record the
  database lacks, never before it).
* :class:`Cursor` is what the database confirmed, kept in
  ``<data dir>/searchdb-cursor.json`` as ``{"ath": N, "op": M, "block": B,
  "index_prefix": P}``: every document up to ``2.9.N`` (operation ``1.11.M``,
  block B) is stored.  It is a hint for the resume query; the block log is
  the source of truth.
"""

import os
from array import array
from typing import Optional

import attr
import orjson

from nodeapi.history.spool import Bulk, BulkQueue

#: A sealed bulk body never passes this many bytes (unless one item is
#: larger, which then goes alone); the reference node's failure was bodies
#: beyond the server's 100 MB limit (wire-contract.md section 8).
MAX_BODY = 4 << 20

CURSOR_FILE = "searchdb-cursor.json"


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


class BulkBuilder:
    """The open bulk: items are added per operation and sealed into the
    queue.  A bulk the queue cannot take (``OSError`` from the spool file)
    is counted in :attr:`dropped` and described (ids, error) in
    :attr:`errors`, which the service logs and counts as failed documents.

    :param queue: the :class:`~nodeapi.history.spool.BulkQueue` to seal into.
    :param items_per_bulk: operations' documents per bulk (lines / 2).
    :param max_body: body byte limit (:data:`MAX_BODY`).
    """

    def __init__(self, queue: BulkQueue, items_per_bulk: int, max_body: int = MAX_BODY) -> None:
        self.queue = queue
        self.items_per_bulk = max(1, items_per_bulk)
        self.max_body = max_body
        self._ids = array("q")
        self._ops = array("q")
        self._offsets = array("I")
        self._parts: list = []
        self._size = 0
        self.sealed_block = -1  # last block whose documents are all sealed
        self.dropped = 0  # documents lost because the spool file failed
        self.errors: list = []  # their messages, taken by the service to log

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, items: list, m: int, block_num: int) -> None:
        """Add ``[(n, bytes)]`` of operation ``m`` in block ``block_num``;
        seals first when an item would push the body past ``max_body`` and
        after reaching ``items_per_bulk``."""
        for n, data in items:
            if self._ids and self._size + len(data) > self.max_body:
                self.seal(block_num - 1)
            self._ids.append(n)
            self._ops.append(m)
            self._offsets.append(self._size)
            self._parts.append(data)
            self._size += len(data)
            if len(self._ids) >= self.items_per_bulk:
                self.seal(block_num - 1)

    def seal(self, block_done: int) -> Optional[Bulk]:
        """Seal the open items (if any) into the queue; ``block_done`` is
        the highest block whose documents are all added.  Returns the bulk
        or None when nothing was open."""
        self.sealed_block = max(self.sealed_block, block_done)
        if not self._ids:
            return None
        bulk = Bulk(self._ids, self._ops, self._offsets, b"".join(self._parts), block_done)
        self._ids, self._ops, self._offsets = array("q"), array("q"), array("I")
        self._parts = []
        self._size = 0
        try:
            self.queue.push(bulk)
        except OSError as exc:  # spool file not writable (disk full): counted
            self.dropped += len(bulk)
            self.errors.append(f"2.9.{bulk.ids[0]}..2.9.{bulk.last_id} not queued: {exc}")
            return None
        return bulk
