"""The block log's offset index file: where each record of
:class:`~nodeapi.chain.blocklog.BlockLog` ends, saved so that opening a long
log does not walk every record.

Role: graphene's block index (libraries/chain/block_database.cpp keeps one
file of block positions beside the blocks).  Without it, opening a log
checks every record once: about 2.7 s per million blocks on a 2-core
machine, so a node restarting from a checkpoint would still take time
proportional to the chain's length (the project asks for time proportional to
the state).

File layout (integers little-endian), ``<block log path>.index``::

    file := INDEX_MAGIC (16 bytes) count:u64 end[count]:u64 log_crc:u32 crc:u32

``end[k]`` is the byte offset where record ``k`` ends (``end[0]``: the end
of the log's magic), ``log_crc`` zlib's crc32 of the log's bytes up to the
last end, ``crc`` the crc32 of everything before it.  It is written
(temporary file, fsync, rename) when the log closes and after a
checkpoint once it lags the log by a tenth
(:meth:`~nodeapi.chain.blocklog.BlockLog.index_stale`).  :func:`load_index` uses it only if it is intact and the log
still holds exactly those bytes (one crc32 over them: about 0.8 s per
million blocks instead of 2.7 s for walking the records), so damage
anywhere in the log is still found at start: the log is then walked record
by record, which names the first bad one.
"""

import os
import struct
import sys
import threading
import zlib
from array import array
from typing import Optional

from nodeapi.chain.blockrecord import MAGIC

INDEX_MAGIC = b"NODEAPI INDEX 1\n"
_COUNT = struct.Struct("<Q")
_CRC = struct.Struct("<I")
_CRCS = struct.Struct("<II")


def index_path(log_path: str) -> str:
    """The index file of the block log at ``log_path``."""
    return log_path + ".index"


def write_index(path: str, ends: array, log_crc: int) -> None:
    """Write ``ends`` (an ``array('Q')``) and ``log_crc`` (the crc32 of
    the log up to the last end) to ``path`` durably: a temporary file of its
    own (concurrent writers do not mix), fsync, rename.  Raises
    ``OSError``."""
    body = array("Q", ends)
    if sys.byteorder != "little":
        body.byteswap()
    data = INDEX_MAGIC + _COUNT.pack(len(body)) + body.tobytes() + _CRC.pack(log_crc)
    tmp = f"{path}.{os.getpid()}-{threading.get_ident()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.write(_CRC.pack(zlib.crc32(data)))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def read_index(path: str) -> Optional[tuple]:
    """``(ends, log_crc)`` saved at ``path`` (``ends`` an ``array('Q')``),
    or None when the file is missing, unreadable, short or fails its
    checksum."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    head = len(INDEX_MAGIC) + _COUNT.size
    if len(data) < head + _CRCS.size or not data.startswith(INDEX_MAGIC):
        return None
    log_crc, crc = _CRCS.unpack_from(data, len(data) - _CRCS.size)
    (count,) = _COUNT.unpack_from(data, len(INDEX_MAGIC))
    if zlib.crc32(data[:-_CRC.size]) != crc or len(data) != head + 8 * count + _CRCS.size:
        return None
    ends = array("Q")
    ends.frombytes(data[head:len(data) - _CRCS.size])
    if sys.byteorder != "little":
        ends.byteswap()
    return ends, log_crc


def load_index(path: str, data, view, size: int) -> tuple:
    """``((ends, log_crc), None)`` when the index at ``path`` fits the log
    ``data`` (an mmap of ``size`` bytes; ``view`` its memoryview): the log
    holds the bytes it covers.  Otherwise ``(None, reason)``, ``(None,
    None)`` when there is no index file."""
    saved = read_index(path)
    if saved is None:
        return None, None if not os.path.exists(path) else "damaged"
    ends, log_crc = saved
    n = len(ends) - 1
    if n < 1 or ends[0] != len(MAGIC) or ends[n] > size:
        return None, "it covers more than the log"
    if zlib.crc32(view[:ends[n]]) != log_crc:
        return None, f"the log's bytes up to block {n} changed"
    return saved, None
