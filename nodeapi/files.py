"""Reading a whole operator-given file (the INI file, genesis, api-access)
with a bound: a FIFO, a device (``/dev/zero``), a directory or a file over
the size cap is one clear error, never a hang or a ``MemoryError``
(:func:`read_bounded`); a state file read as a stream (``--load-state``, a
checkpoint) is opened only when it is a regular file (:func:`open_regular`).
"""

import os
import stat

#: bytes: the caps of the files read whole
CONFIG_LIMIT = 1 << 20
ACCESS_LIMIT = 16 << 20
GENESIS_LIMIT = 256 << 20

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"),
          (stat.S_ISSOCK, "a socket"))


class FileRefused(ValueError):
    """A file that is not read: not a regular file, or over its cap.  The
    message says which, without the path (the caller names it)."""


def _open_checked(path: str) -> int:
    """A descriptor of the regular file ``path`` (module doc); FileRefused
    naming the kind of anything else."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = next((name for test, name in _KINDS if test(mode)), "a special file")
        raise FileRefused(f"{kind}, not a regular file")
    return fd


def open_regular(path: str):
    """``path`` opened for binary reading when it is a regular file (a
    FIFO with no writer would block ``open``, ``/dev/zero`` would never end
    a line).  FileRefused for anything else, OSError as ``open`` gives it."""
    return os.fdopen(_open_checked(path), "rb")


def read_bounded(path: str, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Opened without blocking (a FIFO with no writer would block ``open``)
    and checked with ``fstat`` before anything is read.

    :raises FileRefused: not a regular file (``"a FIFO, not a regular
        file"``), or larger than ``limit`` (also when it grows past it
        while read).
    :raises OSError: as ``open`` gives it (missing, permission denied).
    """
    fd = _open_checked(path)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise FileRefused(f"{size:,} bytes, over the limit of {limit:,}")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise FileRefused(f"over the limit of {limit:,} bytes (it grew while read)")
        return b"".join(chunks)
    finally:
        os.close(fd)
