"""Building bulks (docs/searchdb-plugin.rst "Bulk requests";
docs/wire-contract.rst section 8): :class:`BulkBuilder` collects bulk items
(``create`` action line plus document line,
:class:`nodeapi.plugins.searchdb.documents.DocumentBuilder`) into an open
bulk and seals it into a :class:`~nodeapi.plugins.searchdb.spool.Bulk` when
it holds the configured number of lines, before its body would pass
:data:`MAX_BODY` bytes, and on request (end of a block when synchronized).
"""

from array import array
from typing import Optional

from nodeapi.plugins.searchdb.spool import Bulk, BulkQueue

#: A sealed bulk body never passes this many bytes (unless one item is
#: larger, which then goes alone); the reference node's failure was bodies
#: beyond the server's 100 MB limit (docs/wire-contract.rst section 8).
MAX_BODY = 4 << 20


class BulkBuilder:
    """The open bulk: items are added per operation and sealed into the
    queue.  A bulk the queue cannot take (``OSError`` from the spool file)
    is counted in :attr:`dropped` and described (ids, error) in
    :attr:`errors`, which the service logs and counts as failed documents.

    :param queue: the :class:`~nodeapi.plugins.searchdb.spool.BulkQueue` to seal into.
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

    @property
    def first(self) -> Optional[tuple]:
        """``(m, n)`` of the first open item, or None."""
        return (self._ops[0], self._ids[0]) if self._ids else None

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
