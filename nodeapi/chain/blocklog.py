"""The append-only block log in ``--data-dir``: one framed record per block,
fsync'ed per block, an in-memory offset index, torn-tail recovery.

Role: graphene's ``block_log`` (libraries/chain/block_database.cpp), the
durable source from which :meth:`nodeapi.chain.chain.Chain.replay` rebuilds
the state at startup ("Block log").  The contract the Chain uses is
``append(block)``, ``read(num)``, ``blocks(start)``, ``head_num``, ``close()``
(docs/DESIGN.rst).

The file's layout, the record frame and the payload codecs are in
:mod:`nodeapi.chain.blockrecord` (``MAGIC`` then one ``length num crc
payload`` record per block, block k in record k).

Each :meth:`BlockLog.append` is a single ``write(2)`` of the whole record
followed by ``fdatasync(2)`` (``fsync`` where unavailable) on the file: the
block is on disk when ``append`` returns - except inside
:meth:`BlockLog.batched`, where one ``fdatasync`` at its end covers every
block appended in it (a follower applying a slice of blocks it can fetch
again: a power cut loses at most that slice - or, catching up, the
slices of the last second, whose ``batched(sync=False)`` leaves the sync
to a later one - which the torn-tail recovery cuts and the peer serves
again; a checkpoint naming a block the log lost is
not used, :mod:`nodeapi.checkpoints`).  bitshares-core does not sync its
block file per block at all (block_database.cpp ``store`` flushes the
stream).

Recovery on :meth:`BlockLog.open` (the file is checked once through mmap;
crc32 runs at memory speed; with a valid offset index file,
:mod:`nodeapi.chain.blockindex`, only the records after the indexed ones
are walked):

- a damaged record (fewer than 12 header bytes left, an impossible length, a
  payload reaching past the end of the file, a bad checksum) after which no
  intact record follows is the torn last record that ``kill -9`` or a power
  cut mid-write leaves (with trailing zeros or garbage, if any): it is
  truncated away with a warning;
- a damaged record followed by an intact record, a record holding the wrong
  block number, or a bad magic raises :class:`BlockLogCorrupt`, a
  :class:`~nodeapi.errors.StorageError` naming the file and the byte offset,
  so the node stops before the reactor runs instead of silently dropping
  blocks.
"""

import contextlib
import fcntl
import mmap
import os
import struct
import zlib
from array import array
from typing import Iterator, Optional

from twisted.logger import Logger

from nodeapi.chain.blockindex import index_path, load_index, write_index
from nodeapi.chain.blockrecord import (
    HEADER, MAGIC, MAX_RECORD, decode_block, encode_block, frame, valid_record_after)
from nodeapi.errors import StorageError

_sync = getattr(os, "fdatasync", os.fsync)


class BlockLogError(StorageError):
    """The block log cannot be opened or written (permissions, lock, I/O,
    disk full)."""

    name = "block_log_error"


class BlockLogCorrupt(BlockLogError):
    """The block log is damaged before its last record; the message names
    the file and the byte offset of the first bad record."""

    name = "block_log_corrupt"


class BlockLog:
    """Append-only block log at ``path`` (a file; its directory is created).

    Use: ``log = BlockLog(path); log.open()`` then ``append``/``read``/
    ``blocks``; ``close()`` when done.  An exclusive ``flock`` guards the file
    against a second node on the same data dir.  Not thread-safe; all calls
    come from the reactor thread.

    :ivar path: the file path.
    :ivar truncated: bytes dropped from a torn tail by the last ``open()``.
    """

    log = Logger()
    #: the chain's number of the block before this log's first one (its
    #: records are numbered from 1 all the same): a devnet forked lazily
    #: from a live chain at block N logs N+1, N+2, ... (``nodeapi.devnet.fork``
    #: reads it through its offset); 0 on any other node
    numbering_offset = 0

    def __init__(self, path: str, sync: bool = True) -> None:
        """``sync=False`` skips the per-block fdatasync (a devnet, whose
        log is in a throw-away directory, benchmarks and tests that build
        throwaway logs; any other node always syncs)."""
        self.path = str(path)
        self.sync = sync
        self.truncated = 0
        self._fd: Optional[int] = None
        # _ends[k] = byte offset where record k ends (k=0: end of MAGIC), so
        # record k spans [_ends[k-1], _ends[k]).
        self._ends = array("Q")
        self._crc = 0  # zlib.crc32 of the file up to _ends[-1] (the index file keeps it)
        self._indexed_count = 0  # entries of _ends the index file on disk holds
        self._batching = False  # inside batched(): appends are synced at its end
        self._unsynced = False  # a batched append not yet synced

    # -- lifecycle -------------------------------------------------------------

    def open(self) -> "BlockLog":
        """Open (creating if missing), lock, verify every record and build the
        offset index; truncates a torn tail with a warning.  Raises
        :class:`BlockLogError` (cannot open/lock) or :class:`BlockLogCorrupt`.
        Returns self."""
        if self._fd is not None:
            return self
        try:
            parent = os.path.dirname(os.path.abspath(self.path))
            os.makedirs(parent, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as exc:
            raise BlockLogError(f"Cannot open block log {self.path}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise BlockLogError(f"Block log {self.path} is in use by another process "
                                "(is another node running on this data dir?)") from None
        try:
            self._scan(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    def close(self) -> None:
        """Save the offset index (:meth:`save_index`; a failure is logged),
        release the lock and close the file, syncing first what a
        ``batched(sync=False)`` left unsynced (a failure is logged);
        idempotent."""
        if self._fd is not None:
            try:
                self.sync_now()
            except BlockLogError as exc:
                self.log.warn("{error}", error=str(exc))
            if self.head_num:
                try:
                    self.save_index()
                except OSError as exc:
                    self.log.warn("Block log index {path} not written: {error}",
                                  path=index_path(self.path), error=exc.strerror)
            fd, self._fd = self._fd, None
            os.close(fd)

    def index_stale(self) -> bool:
        """Whether the index file on disk lags the log by a tenth of its
        blocks or more (at least one): the checkpoints rewrite it only then,
        so the rewrites of a long log cost O(1) per block, and a start after
        a crash walks at most about a tenth of the log."""
        return len(self._ends) - self._indexed_count >= max(1, self._indexed_count // 10)

    def index_snapshot(self) -> tuple:
        """``(copy of the offset index, crc32 of the log up to its end)``,
        for :meth:`save_index` in a thread."""
        return array("Q", self._ends), self._crc

    def save_index(self, snapshot: Optional[tuple] = None) -> None:
        """Write the offset index file (``snapshot``: an
        :meth:`index_snapshot`, default the current state) durably
        (:mod:`nodeapi.chain.blockindex`); raises ``OSError``."""
        ends, crc = snapshot if snapshot is not None else (self._ends, self._crc)
        write_index(index_path(self.path), ends, crc)
        self._indexed_count = len(ends)  # an int store: safe from the writer thread

    def _scan(self, fd: int) -> None:
        size = os.fstat(fd).st_size
        if size < len(MAGIC):
            with open(fd, "rb", closefd=False) as f:
                data = f.read()
            if data != MAGIC[:size]:
                raise BlockLogCorrupt(f"Block log {self.path} is not a nodeapi block log "
                                      "(bad magic at offset 0)")
            if size:
                self.log.warn("Block log {path}: torn file header of {size} bytes rewritten",
                              path=self.path, size=size)
            os.ftruncate(fd, 0)
            os.write(fd, MAGIC)
            if self.sync:
                _sync(fd)
            self._ends = array("Q", [len(MAGIC)])
            self._crc = zlib.crc32(MAGIC)
            return
        mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        view = memoryview(mm)
        try:
            indexed = self._indexed(mm, view, size)
            ends, cut = self._check_records(mm, view, size, indexed and indexed[0])
            start, crc = (indexed[0][-1], indexed[1]) if indexed else (0, 0)
            self._indexed_count = len(indexed[0]) if indexed else 0
            self._crc = zlib.crc32(view[start:ends[-1]], crc)
        finally:
            view.release()
            mm.close()
        if cut is not None:
            os.ftruncate(fd, cut)
            if self.sync:
                _sync(fd)
            self.truncated = size - cut
        self._ends = ends

    def _indexed(self, data, view, size: int) -> Optional[tuple]:
        """``(ends, crc)`` of the saved offset index when it fits this file,
        else None (one line says why when there was one)."""
        saved, reason = load_index(index_path(self.path), data, view, size)
        if reason is not None:
            self.log.info("Block log index {path} not used ({reason}); checking every record",
                          path=index_path(self.path), reason=reason)
        return saved

    def _check_records(self, data, view, size: int, indexed: Optional[array] = None) -> tuple:
        """Walk the records of ``data`` (an mmap; ``view`` its memoryview)
        after those of ``indexed`` (a checked offset index, or None: from
        the first); returns ``(ends, truncate_at or None)`` or raises
        :class:`BlockLogCorrupt`."""
        if data[:len(MAGIC)] != MAGIC:
            raise BlockLogCorrupt(f"Block log {self.path} is not a nodeapi block log "
                                  "(bad magic at offset 0)")
        ends = array("Q", [len(MAGIC)]) if indexed is None else indexed
        off = ends[-1]
        num = len(ends) - 1
        unpack = HEADER.unpack_from
        crc32 = zlib.crc32
        hpack = struct.Struct("<II").pack
        while off < size:
            reason = None
            if size - off < HEADER.size:
                reason = f"{size - off} header bytes"
            else:
                length, rnum, crc = unpack(data, off)
                end = off + HEADER.size + length
                if length == 0 or length > MAX_RECORD:
                    reason = f"impossible record length {length}"
                elif end > size:
                    reason = f"record of {length} bytes cut after {size - off - 12}"
                elif crc32(view[off + 12:end], crc32(hpack(length, rnum))) != crc:
                    reason = "checksum mismatch"
                elif rnum != num + 1:
                    raise BlockLogCorrupt(
                        f"Block log {self.path} is corrupt at byte offset {off}: record "
                        f"holds block {rnum}, expected {num + 1}")
            if reason is not None:
                if valid_record_after(data, view, off, num + 1):
                    raise BlockLogCorrupt(
                        f"Block log {self.path} is corrupt at byte offset {off} "
                        f"(block {num + 1}): {reason}, and intact records follow; "
                        "restore the file from a backup or remove it to resync")
                self.log.warn(
                    "Block log {path}: dropped a torn last record at offset {offset} "
                    "({size} bytes, {reason}); head is block {head}",
                    path=self.path, offset=off, size=size - off, reason=reason, head=num)
                return ends, off
            num += 1
            off = end
            ends.append(off)
        return ends, None

    # -- contract ----------------------------------------------------------------

    @property
    def head_num(self) -> int:
        """Number of the last block in the log (0 when empty)."""
        return len(self._ends) - 1 if self._ends else 0

    def _require_open(self) -> int:
        if self._fd is None:
            raise BlockLogError(f"Block log {self.path} is not open")
        return self._fd

    @contextlib.contextmanager
    def batched(self, sync: bool = True):
        """A context in which :meth:`append` does not sync each block: one
        ``fdatasync`` when it ends (normally or by an exception) covers the
        blocks appended in it (module docstring) and any an earlier
        ``batched(sync=False)`` left unsynced; with ``sync`` false none,
        until the next append outside it, the next ``batched()`` or
        :meth:`sync_now` (a follower syncing once a second).  Not
        re-entrant: a nested use raises :class:`BlockLogError`.  The caller
        must not hand the reactor control inside it (other appends would
        wait for its sync).

        :raises BlockLogError: the final sync failed (the blocks are
            written but may not be on disk)."""
        if self._batching:
            raise BlockLogError(f"Block log {self.path}: batched() is not re-entrant")
        self._batching = True
        try:
            yield self
        finally:
            self._batching = False
            if sync:
                self.sync_now()

    def sync_now(self) -> None:
        """``fdatasync`` the blocks appended without a sync yet (by a
        ``batched(sync=False)``); nothing when there are none.

        :raises BlockLogError: the sync failed."""
        if self._unsynced:
            self._unsynced = False
            fd = self._require_open()
            try:
                _sync(fd)
            except OSError as exc:
                raise BlockLogError(f"Cannot sync {self.path}: {exc.strerror}") from None

    def append(self, block: dict) -> int:
        """Append ``block`` (wire JSON) as block ``head_num + 1`` and fsync;
        returns its number.  Raises ValueError when ``block["previous"]``
        does not name block ``head_num`` (graphene ids start with the block
        number), :class:`BlockLogError` on I/O errors."""
        fd = self._require_open()
        num = self.head_num + 1
        previous = block.get("previous")
        if previous is not None and int(previous[:8], 16) - self.numbering_offset != num - 1:
            raise ValueError(f"Block with previous {previous} cannot be block {num} of "
                             f"{self.path}")
        record = frame(num, encode_block(block))
        start = self._ends[-1]
        try:
            view = memoryview(record)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if self.sync:
                if self._batching:
                    self._unsynced = True
                else:
                    _sync(fd)  # covers what a batched(sync=False) left too
                    self._unsynced = False
        except OSError as exc:
            # Leave no partial record behind: the next append would follow it.
            try:
                os.ftruncate(fd, start)
            except OSError:
                pass
            raise BlockLogError(f"Cannot write block {num} to {self.path}: "
                                f"{exc.strerror}") from None
        self._ends.append(start + len(record))
        self._crc = zlib.crc32(record, self._crc)
        return num

    def truncate(self, num: int) -> None:
        """Drop every block after block ``num`` (0 empties the log): the
        file is cut at the end of record ``num`` and synced.  The devnet's
        revert (:mod:`nodeapi.devnet.snapshots`) puts the log back with the
        state.  Raises ValueError for a ``num`` past the head,
        :class:`BlockLogError` on I/O errors."""
        fd = self._require_open()
        if not 0 <= num <= self.head_num:
            raise ValueError(f"Cannot truncate {self.path} to block {num}: head is "
                             f"{self.head_num}")
        if num == self.head_num:
            return
        end = self._ends[num]
        try:
            os.ftruncate(fd, end)
            if self.sync:
                _sync(fd)
            crc, offset = 0, 0
            while offset < end:
                chunk = os.pread(fd, min(1 << 20, end - offset), offset)
                crc, offset = zlib.crc32(chunk, crc), offset + len(chunk)
            self._crc = crc
        except OSError as exc:
            raise BlockLogError(f"Cannot truncate {self.path}: {exc.strerror}") from None
        del self._ends[num + 1:]
        self._indexed_count = min(self._indexed_count, num)

    def read_raw(self, num: int) -> Optional[bytes]:
        """The payload bytes of block ``num`` (checksum verified), or None
        when ``num`` is not in the log; raises :class:`BlockLogCorrupt` if
        the record changed on disk since ``open()``."""
        fd = self._require_open()
        if not 1 <= num <= self.head_num:
            return None
        start, end = self._ends[num - 1], self._ends[num]
        record = os.pread(fd, end - start, start)
        return self._check(record, num, start)

    def _check(self, record: bytes, num: int, offset: int) -> bytes:
        length, rnum, crc = HEADER.unpack_from(record, 0) if len(record) >= 12 else (0, 0, 0)
        payload = record[12:]
        if (len(payload) != length or rnum != num or zlib.crc32(
                payload, zlib.crc32(struct.pack("<II", length, rnum))) != crc):
            raise BlockLogCorrupt(f"Block log {self.path} is corrupt at byte offset "
                                  f"{offset} (block {num}): record changed on disk")
        return payload

    def _decode(self, payload: bytes, num: int) -> dict:
        """:func:`decode_block`, failing with :class:`BlockLogCorrupt`
        naming the file, the byte offset of the record and block ``num``: a
        record whose checksum holds but whose payload is no block."""
        try:
            return decode_block(payload)
        except ValueError as exc:
            raise self.corrupt(num, str(exc)) from None

    def offset_of(self, num: int) -> int:
        """Byte offset (int) of block ``num``'s record in the file, for
        messages naming where a block is (1 <= ``num`` <= :attr:`head_num`)."""
        return self._ends[num - 1]

    def corrupt(self, num: int, reason: str) -> BlockLogCorrupt:
        """The :class:`BlockLogCorrupt` for block ``num`` (its record in
        this log) with ``reason``: one line naming the file, the byte offset
        and the block, and what the operator can do."""
        return BlockLogCorrupt(f"Block log {self.path} is corrupt at byte offset "
                               f"{self.offset_of(num)} (block {num}): {reason}; restore the "
                               "file from a backup or remove it to resync")

    def read(self, num: int) -> Optional[dict]:
        """Block ``num`` as a fresh wire-JSON dict, or None if absent;
        :class:`BlockLogCorrupt` when the record holds no block."""
        payload = self.read_raw(num)
        return None if payload is None else self._decode(payload, num)

    def blocks(self, start: int = 1) -> Iterator[tuple]:
        """Yield ``(num, block)`` from ``start`` to the head, in order,
        reading ahead in chunks of about 1 MiB; blocks appended while
        iterating are included.  A record that holds no block raises
        :class:`BlockLogCorrupt` (file, offset, block number)."""
        fd = self._require_open()
        num = max(start, 1)
        while num <= self.head_num:
            first = num
            last = num
            base = self._ends[first - 1]
            head = self.head_num
            while last < head and self._ends[last + 1] - base <= 1 << 20:
                last += 1
            chunk = os.pread(fd, self._ends[last] - base, base)
            for n in range(first, last + 1):
                a, b = self._ends[n - 1] - base, self._ends[n] - base
                yield n, self._decode(self._check(chunk[a:b], n, base + a), n)
            num = last + 1

    def __repr__(self) -> str:
        state = "open" if self._fd is not None else "closed"
        return f"<BlockLog {self.path} {state} head={self.head_num}>"
