"""Sealed bulks waiting to be shipped: a FIFO with a memory bound that spills
to a spool file in the data directory.

The searchdb plugin never stalls the chain while the search database is
slow or down (wire-contract.md section 8, "failures to avoid"): sealed bulks
are queued here.  Up to ``max_memory`` bytes stay in memory; beyond that
every new bulk is appended to the spool file (and keeps going there until
the file has been read back completely, so order is kept).  A bulk is at
most a few MiB (the plugin seals bulks before 4 MiB), so each synchronous
file write or read in the reactor thread is small and bounded.

The spool is a buffer, not a record: it is discarded on start, because the
chain replays its block log and the plugin rebuilds every document the
database lacks (the block log is the source of truth).

Spool record: ``<magic u32, items u32, body bytes u32, block u64>`` then
``items`` ath numbers (i64), ``items`` operation numbers (i64), ``items``
body offsets (u32) and the body.
"""

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

    def subset(self, indexes: Iterable[int]) -> "Bulk":
        """A bulk of the items at ``indexes`` (ascending), same ``block``."""
        ids, ops, offsets, parts, pos = array("q"), array("q"), array("I"), [], 0
        for i in indexes:
            data = self.item(i)
            ids.append(self.ids[i])
            ops.append(self.ops[i])
            offsets.append(pos)
            parts.append(data)
            pos += len(data)
        return Bulk(ids, ops, offsets, b"".join(parts), self.block)

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
        first = self.subset(range(half))
        first.block = -1  # the first half alone does not complete any block
        return [first, self.subset(range(half, len(self.ids)))]

    def typed(self, doc_type: str) -> bytes:
        """The body with ``"_type": doc_type`` added to every action line
        (Elasticsearch 6); action lines start with ``{"create":{``."""
        start = b'{"create":{'
        add = start + b'"_type":"' + doc_type.encode() + b'",'
        parts = []
        for i in range(len(self.ids)):
            data = self.item(i)
            parts.append(add + data[len(start):] if data.startswith(start) else data)
        return b"".join(parts)

    def pack(self) -> bytes:
        """The spool record of this bulk."""
        return b"".join((_HEAD.pack(_MAGIC, len(self.ids), len(self.body), self.block + 1),
                         self.ids.tobytes(), self.ops.tobytes(), self.offsets.tobytes(),
                         self.body))


class BulkQueue:
    """FIFO of :class:`Bulk` with at most ``max_memory`` bytes in memory;
    the rest goes to ``spool_path`` (created on demand, removed when read
    back completely and by :meth:`discard`).

    :ivar items: documents queued (memory and file).
    :raises OSError: from the file system (the caller logs it).
    """

    def __init__(self, spool_path: str, max_memory: int = 64 << 20) -> None:
        self.spool_path = spool_path
        self.max_memory = max_memory
        self._mem: deque = deque()
        self.memory_bytes = 0
        self._file = None
        self._read_pos = 0
        self._write_pos = 0
        self.spooled = 0  # bulks in the file not yet read back
        self.spooled_bytes = 0
        self.items = 0
        if os.path.exists(spool_path):  # a stale spool of an earlier run
            os.remove(spool_path)

    def __len__(self) -> int:
        return len(self._mem) + self.spooled

    def push(self, bulk: Bulk) -> None:
        """Append ``bulk`` (to memory while it fits, else to the file)."""
        self.items += len(bulk)
        if self.spooled == 0 and (not self._mem or
                                  self.memory_bytes + bulk.size <= self.max_memory):
            self._mem.append(bulk)
            self.memory_bytes += bulk.size
            return
        if self._file is None:
            self._file = open(self.spool_path, "w+b")
            self._read_pos = self._write_pos = 0
        data = bulk.pack()
        self._file.seek(self._write_pos)
        self._file.write(data)
        self._write_pos += len(data)
        self.spooled += 1
        self.spooled_bytes += len(data)

    def peek(self) -> Optional[Bulk]:
        """The oldest bulk, or None."""
        if not self._mem and self.spooled:
            bulk = self._read_one()
            self._mem.append(bulk)
            self.memory_bytes += bulk.size
        return self._mem[0] if self._mem else None

    def pop(self) -> Bulk:
        """Remove and return the oldest bulk (after it was shipped)."""
        bulk = self._mem.popleft()
        self.memory_bytes -= bulk.size
        self.items -= len(bulk)
        return bulk

    def replace_head(self, bulks: list) -> None:
        """Put ``bulks`` (in order) in place of the oldest bulk (items left
        to retry, or the halves of a split)."""
        old = self._mem.popleft()
        self.memory_bytes -= old.size
        self.items -= len(old)
        for b in reversed(bulks):
            self._mem.appendleft(b)
            self.memory_bytes += b.size
            self.items += len(b)

    def _read_one(self) -> Bulk:
        f = self._file
        f.seek(self._read_pos)
        magic, count, body_len, block = _HEAD.unpack(f.read(_HEAD.size))
        if magic != _MAGIC:
            raise OSError(f"spool file {self.spool_path} is corrupt at {self._read_pos}")
        ids, ops, offsets = array("q"), array("q"), array("I")
        ids.frombytes(f.read(8 * count))
        ops.frombytes(f.read(8 * count))
        offsets.frombytes(f.read(4 * count))
        body = f.read(body_len)
        size = _HEAD.size + 20 * count + body_len
        self._read_pos += size
        self.spooled -= 1
        self.spooled_bytes -= size
        if self.spooled == 0:
            self._close_file()
        return Bulk(ids, ops, offsets, body, block - 1)

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if os.path.exists(self.spool_path):
            os.remove(self.spool_path)
        self._read_pos = self._write_pos = 0

    def discard(self) -> None:
        """Drop everything, including the spool file."""
        self._mem.clear()
        self.memory_bytes = 0
        self.spooled = 0
        self.spooled_bytes = 0
        self.items = 0
        self._close_file()
