"""Helpers of the history plugins' checkpoint records
(:class:`nodeapi.applied.ICheckpointed`): long sequences go into the file as
several records of bounded size, so a checkpoint is written in small steps
(nodeapi.chain.checkpoint)."""

from array import array

#: items per record of a chunked sequence
CHUNK = 4096


def chunked(key: str, items) -> list:
    """``[(key, part), ...]``: ``items`` (a sequence, already a copy) cut
    into lists of at most :data:`CHUNK` items; at least one record."""
    items = list(items)
    if not items:
        return [(key, [])]
    return [(key, items[i:i + CHUNK]) for i in range(0, len(items), CHUNK)]


def joined(records: list, key: str) -> list:
    """The items of every ``key`` record of ``records``, in order."""
    out: list = []
    for k, part in records:
        if k == key:
            out.extend(part)
    return out


def int_array(values) -> array:
    """An ``array('q')`` of ``values``."""
    return array("q", values)
