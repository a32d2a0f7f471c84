"""Sealed bulks waiting to be shipped: a FIFO with a memory bound that spills
to a spool file in the data directory.

The searchdb plugin never stalls the chain while the search database is
slow or down (docs/wire-contract.rst section 8, "failures to avoid"): sealed bulks
are queued here.  Up to ``max_memory`` bytes stay in memory; beyond that
every new bulk is appended to the spool (and keeps going there until the
spool has been read back completely, so order is kept).  The spool is a
chain of segment files: a segment is deleted once read back, so during a
long outage followed by a slow catch-up the disk holds what still waits
plus at most one segment, not everything spooled since the outage began.
A bulk is at most a few MiB (the plugin seals bulks before 4 MiB), and each
call writes or reads one record, so every synchronous file operation in the
reactor thread is small and bounded.

The spool is a buffer, not a record: it is discarded on start, because the
chain replays its block log and the plugin rebuilds every document the
database lacks (the block log is the source of truth).

Spool record: ``<magic u32, items u32, body bytes u32, block u64>`` then
``items`` ath numbers (i64), ``items`` operation numbers (i64), ``items``
body offsets (u32) and the body.
"""

import glob
import os
import struct
from array import array
from collections import deque
from typing import Callable, Iterable, Optional

_HEAD = struct.Struct("<IIIQ")
_MAGIC = 0x4B4C5542  # "BULK"


class Bulk:
    """A sealed bulk: ``body`` holds ``len(ids)`` items, each an action line
    and a document line; item ``i`` starts at byte ``offsets[i]``.

    :ivar ids: the ath instance N (``2.9.N``) of each item, ascending.
    :ivar ops: the operation instance M (``1.11.M``) of each item.
    :ivar block: the highest block whose documents are all in this bulk or
        in bulks before it (what the database has confirmed once this bulk
        is done; feeds ``confirmed_block_num``).
    """

    __slots__ = ("ids", "ops", "offsets", "body", "block")

    def __init__(self, ids: array, ops: array, offsets: array, body: bytes,
                 block: int) -> None:
        self.ids = ids
        self.ops = ops
        self.offsets = offsets
        self.body = body
        self.block = block

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def size(self) -> int:
        """Bytes this bulk takes in memory (body plus index arrays)."""
        return len(self.body) + 20 * len(self.ids) + 96

    @property
    def last_id(self) -> int:
        """N of the last item (-1 when empty)."""
        return self.ids[-1] if self.ids else -1

    @property
    def last_op(self) -> int:
        """M of the last item (-1 when empty)."""
        return self.ops[-1] if self.ops else -1

    def item(self, i: int) -> bytes:
        """Action line plus document line of item ``i``."""
        end = self.offsets[i + 1] if i + 1 < len(self.offsets) else len(self.body)
        return self.body[self.offsets[i]:end]

    def subset(self, indexes: Iterable[int], block: Optional[int] = None) -> "Bulk":
        """A bulk of the items at ``indexes`` (ascending), with ``block``
        (default: this bulk's)."""
        ids, ops, offsets, parts, pos = array("q"), array("q"), array("I"), [], 0
        for i in indexes:
            data = self.item(i)
            ids.append(self.ids[i])
            ops.append(self.ops[i])
            offsets.append(pos)
            parts.append(data)
            pos += len(data)
        return Bulk(ids, ops, offsets, b"".join(parts),
                    self.block if block is None else block)

    def without(self, skip: Callable[[int, int], bool]) -> "Bulk":
        """This bulk minus the items for which ``skip(m, n)`` is true
        (documents the database is known to hold)."""
        keep = [i for i in range(len(self.ids)) if not skip(self.ops[i], self.ids[i])]
        return self if len(keep) == len(self.ids) else self.subset(keep)

    def split(self) -> list:
        """Two halves (for a server that refuses the body as a whole); the
        first half gets ``block`` -1 (alone it completes no block), the
        second keeps ``block``."""
        half = len(self.ids) // 2
        # the first half alone does not complete any block
        return [self.subset(range(half), block=-1), self.subset(range(half, len(self.ids)))]

    @classmethod
    def empty(cls, block: int) -> "Bulk":
        """A bulk of no item that completes ``block`` (a marker: shipping
        it confirms ``block`` once every bulk before it is done)."""
        return cls(array("q"), array("q"), array("I"), b"", block)

    def typed(self, doc_type: str) -> bytes:
        """The body with ``"_type": doc_type`` added to every action line
        (Elasticsearch 6); action lines start with ``{"<action>":{``
        (create, index or delete)."""
        parts = []
        for i in range(len(self.ids)):
            data = self.item(i)
            at = data.find(b":{") + 2
            if data.startswith(b'{"') and at > 2:
                data = data[:at] + b'"_type":"' + doc_type.encode() + b'",' + data[at:]
            parts.append(data)
        return b"".join(parts)

    def pack(self) -> bytes:
        """The spool record of this bulk."""
        return b"".join((_HEAD.pack(_MAGIC, len(self.ids), len(self.body), self.block + 1),
                         self.ids.tobytes(), self.ops.tobytes(), self.offsets.tobytes(),
                         self.body))


class BulkQueue:
    """FIFO of :class:`Bulk` with at most ``max_memory`` bytes in memory;
    the rest goes to spool segment files ``<spool_path>.<k>`` (k = 1, 2, ...),
    created on demand.

    Disk use is bounded by what is still waiting, not by what was ever
    spooled: a segment takes records until it holds ``segment_bytes`` or
    more, then the next record opens a new segment, and a segment is
    deleted as soon as its last record has been read back.  So at any time
    ``disk_bytes < spooled_bytes + segment_bytes + R``, where ``R`` is the
    largest spool record (only the head segment holds records already read,
    fewer than ``segment_bytes + R`` bytes of them).

    Work per call in the reactor thread is bounded: :meth:`push` writes one
    record (the bulk's body plus 20 bytes per item and a 20-byte header,
    a few MiB at most since the plugin seals bulks before 4 MiB) and at
    most opens one file and closes another; :meth:`peek` reads one record
    and at most deletes one file.  Nothing is ever copied or compacted.

    :param spool_path: path prefix of the segment files (the data
        directory's ``searchdb-spool.bin``); stale files of an earlier run
        (``spool_path`` itself and ``spool_path.*``) are removed here.
    :param max_memory: bytes (:attr:`Bulk.size`) kept in memory before
        spilling.
    :param segment_bytes: segment size in bytes at which a new segment is
        started (default 8 MiB).
    :ivar items: documents queued (memory and file).
    :ivar spooled: bulks in segment files not yet read back.
    :ivar spooled_bytes: bytes of those records.
    :raises OSError: from the file system (the caller logs it); a failed
        write leaves the queue as it was (the bulk is not queued, the
        segment is closed and records after it go to a new segment).
    """

    def __init__(self, spool_path: str, max_memory: int = 64 << 20,
                 segment_bytes: int = 8 << 20) -> None:
        self.spool_path = spool_path
        self.max_memory = max_memory
        self.segment_bytes = max(1, segment_bytes)
        self._mem: deque = deque()
        self.memory_bytes = 0
        # live segments, oldest first: [path, bytes of whole records]
        self._segments: deque = deque()
        self._next_segment = 1
        self._wfile = None  # write handle of the last segment (None: start a new one)
        self._rfile = None  # read handle of the first segment
        self._read_pos = 0  # offset of the next record in the first segment
        self.spooled = 0
        self.spooled_bytes = 0
        self.items = 0
        self._remove_stale()

    def __len__(self) -> int:
        return len(self._mem) + self.spooled

    @property
    def disk_bytes(self) -> int:
        """Bytes of records in the live segment files (read and unread)."""
        return sum(size for _, size in self._segments)

    @property
    def segment_paths(self) -> list:
        """Paths of the live segment files, oldest first."""
        return [path for path, _ in self._segments]

    def push(self, bulk: Bulk) -> None:
        """Append ``bulk``: to memory while nothing is spooled and it fits
        (or memory is empty), else as one record to the last segment.

        :raises OSError: the record could not be written (not queued)."""
        if self.spooled == 0 and (not self._mem or
                                  self.memory_bytes + bulk.size <= self.max_memory):
            self._mem.append(bulk)
            self.memory_bytes += bulk.size
            self.items += len(bulk)
            return
        data = bulk.pack()
        if self._wfile is None or self._segments[-1][1] >= self.segment_bytes:
            self._start_segment()
        try:
            self._wfile.write(data)
            self._wfile.flush()
        except OSError:
            # a partial record may be on disk past the recorded size: never
            # write after it (the reader stops at the recorded size)
            self._close_writer()
            raise
        self._segments[-1][1] += len(data)
        self.spooled += 1
        self.spooled_bytes += len(data)
        self.items += len(bulk)

    def _start_segment(self) -> None:
        self._close_writer()
        path = f"{self.spool_path}.{self._next_segment}"
        self._wfile = open(path, "wb")
        self._next_segment += 1
        self._segments.append([path, 0])

    def _close_writer(self) -> None:
        if self._wfile is not None:
            wfile, self._wfile = self._wfile, None
            wfile.close()

    def peek(self) -> Optional[Bulk]:
        """The oldest bulk, or None; a spooled bulk is read back into
        memory first (one record read).

        :raises OSError: the segment could not be read or is corrupt."""
        if not self._mem and self.spooled:
            bulk = self._read_one()
            self._mem.append(bulk)
            self.memory_bytes += bulk.size
        return self._mem[0] if self._mem else None

    def pop(self) -> Bulk:
        """Remove and return the oldest bulk (after it was shipped); call
        :meth:`peek` first.

        :raises IndexError: nothing in memory."""
        bulk = self._mem.popleft()
        self.memory_bytes -= bulk.size
        self.items -= len(bulk)
        return bulk

    def replace_head(self, bulks: list) -> None:
        """Put ``bulks`` (in order) in place of the oldest bulk (items left
        to retry, or the halves of a split); they stay in memory.

        :raises IndexError: nothing in memory."""
        old = self._mem.popleft()
        self.memory_bytes -= old.size
        self.items -= len(old)
        for b in reversed(bulks):
            self._mem.appendleft(b)
            self.memory_bytes += b.size
            self.items += len(b)

    def _read_one(self) -> Bulk:
        # segments left empty by a failed write hold no record: drop them
        while self._segments[0][1] == 0:
            self._drop_head()
        path, size = self._segments[0]
        if self._rfile is None:
            self._rfile = open(path, "rb")
            self._read_pos = 0
        f = self._rfile
        f.seek(self._read_pos)
        head = f.read(_HEAD.size)
        if len(head) < _HEAD.size:
            raise OSError(f"spool file {path} is truncated at {self._read_pos}")
        magic, count, body_len, block = _HEAD.unpack(head)
        rec = _HEAD.size + 20 * count + body_len
        if magic != _MAGIC or self._read_pos + rec > size:
            raise OSError(f"spool file {path} is corrupt at {self._read_pos}")
        ids, ops, offsets = array("q"), array("q"), array("I")
        ids.frombytes(f.read(8 * count))
        ops.frombytes(f.read(8 * count))
        offsets.frombytes(f.read(4 * count))
        body = f.read(body_len)
        self._read_pos += rec
        self.spooled -= 1
        self.spooled_bytes -= rec
        if self.spooled == 0:
            self._close_files()
        elif self._read_pos >= size and len(self._segments) > 1:
            self._drop_head()  # fully read and no longer written to
        return Bulk(ids, ops, offsets, body, block - 1)

    def _drop_head(self) -> None:
        path, _ = self._segments.popleft()
        if self._rfile is not None:
            rfile, self._rfile = self._rfile, None
            rfile.close()
        if not self._segments:
            self._close_writer()
        self._read_pos = 0
        os.remove(path)

    def _close_files(self) -> None:
        self._close_writer()
        if self._rfile is not None:
            rfile, self._rfile = self._rfile, None
            rfile.close()
        while self._segments:
            path, _ = self._segments.popleft()
            if os.path.exists(path):
                os.remove(path)
        self._read_pos = 0

    def _remove_stale(self) -> None:
        stale = glob.glob(glob.escape(self.spool_path) + ".*")
        if os.path.exists(self.spool_path):
            stale.append(self.spool_path)
        for path in stale:
            os.remove(path)

    def discard(self) -> None:
        """Drop everything, including the segment files."""
        self._mem.clear()
        self.memory_bytes = 0
        self.spooled = 0
        self.spooled_bytes = 0
        self.items = 0
        self._close_files()
