"""Devnet state snapshots: the whole node state (chain, block consumers,
block log) captured in memory and put back (:func:`capture`,
:func:`restore`), or written to a file and loaded at start (:func:`dump`,
:func:`load`).

The records are the checkpoints' (:mod:`nodeapi.chain.checkpoint` for the
chain, each block consumer's :class:`~nodeapi.applied.ICheckpointed`
records; docs/DESIGN.rst, "Checkpoints"), so nothing of the state has a
second serializer.  Reference: anvil's ``evm_snapshot``/``evm_revert`` and
``anvil_dumpState``/``--load-state`` (foundry's anvil), applied to a
graphene chain.
"""

import hashlib
import os
import stat
import tempfile

import attr

from nodeapi.applied import ICheckpointed
from nodeapi.chain.blocklog import BlockLogError
from nodeapi.chain.checkpoint import (
    CheckpointError, chain_records, encode, read_checkpoint, restore_chain)
from nodeapi.chain.validation import check_merkle_root
from nodeapi.errors import NodeAPIError
from nodeapi.protocol.block import block_id


class SnapshotError(CheckpointError):
    """A snapshot cannot be taken or put back (a plugin without checkpoint
    records, a state file of another chain or damaged)."""


@attr.s(slots=True, frozen=True, auto_attribs=True)
class Snapshot:
    """A captured node state.

    :ivar meta: the checkpoint meta record (chain id, block number and id).
    :ivar chain: the chain section's ``(key, value)`` records.
    :ivar plugins: ``{checkpoint_key: [(key, value)]}`` of every consumer.
    :ivar extra: what the caller keeps with it (the devnet's time offset).
    """

    meta: dict
    chain: list
    plugins: dict
    extra: dict


def consumers(chain) -> list:
    """The chain's block consumers that take part in a snapshot: every one
    but the checkpoint service (which keeps files, not state).

    :raises SnapshotError: a consumer keeps no checkpoint records (the
        searchdb plugin): its state could not be put back."""
    found = []
    for consumer in chain._consumers:
        if ICheckpointed.providedBy(consumer):
            found.append(consumer)
        elif type(consumer).__name__ != "CheckpointService":
            raise SnapshotError(f"{type(consumer).__name__} keeps no snapshot of its state; "
                                "a devnet runs without it")
    return found


def capture(chain, extra: dict | None = None) -> Snapshot:
    """The node state at the head block: the checkpoint records (the
    pending transactions are not part of it, as in a checkpoint) with the
    block log's head; cost: a shallow copy of the object store and copies
    of the plugins' arrays."""
    meta, records = chain_records(chain)
    chain_section = [(key, value) for _section, key, value in records][1:]  # after meta
    plugins = {c.checkpoint_key: list(c.checkpoint_records()) for c in consumers(chain)}
    meta["plugins"] = sorted(plugins)
    return Snapshot(meta, chain_section, plugins, dict(extra or {}))


def restore(chain, snapshot: Snapshot) -> None:
    """Put the node back to ``snapshot``: pending transactions dropped,
    block log cut to its head (:meth:`~nodeapi.chain.blocklog.BlockLog.truncate`),
    chain and consumers restored from the records, as a start from a
    checkpoint does.

    :raises SnapshotError: the block log no longer holds the snapshot's
        head block (a snapshot of another chain)."""
    num = snapshot.meta["block_num"]
    log = chain.block_log
    if num > log.head_num:
        raise SnapshotError(f"The snapshot's block {num} is past the block log's head "
                            f"{log.head_num}")
    chain.clear_pending()
    log.truncate(num)
    restore_chain(chain, snapshot.meta, snapshot.chain)
    for consumer in consumers(chain):
        consumer.restore_checkpoint(snapshot.meta, snapshot.plugins.get(consumer.checkpoint_key,
                                                                        []))


def dump_lines(chain, extra: dict | None = None):
    """The lines (bytes) of a state file of the node state and its block
    log: the checkpoint format, a ``blocks`` section of ``[num, block]``
    and a ``devnet`` section of ``extra``; the first item is the head
    block number written, the lines follow."""
    snap = capture(chain, extra)
    yield snap.meta["block_num"]
    digest = hashlib.sha256()
    count = 0

    def put(section, key, value):
        nonlocal count
        line = encode(section, key, value)
        digest.update(line)
        count += 1
        return line

    yield put("meta", "nodeapi-checkpoint", snap.meta)
    for key, value in snap.chain:
        yield put("chain", key, value)
    for section, records in snap.plugins.items():
        for key, value in records:
            yield put(section, key, value)
    for num, block in chain.block_log.blocks(1):
        if num > snap.meta["block_num"]:
            break
        yield put("blocks", num, block)
    for key, value in snap.extra.items():
        yield put("devnet", key, value)
    yield encode("end", digest.hexdigest(), count)


def dump_text(chain, extra: dict | None = None) -> tuple:
    """``(head block number, the state file's text)`` (:func:`dump_lines`)."""
    lines = dump_lines(chain, extra)
    head = next(lines)
    return head, b"".join(lines).decode("utf-8")


def dump(chain, path: str, extra: dict | None = None) -> int:
    """Write :func:`dump_lines` to ``path`` through a temporary file of
    its directory renamed over it (a symbolic link at ``path`` is
    replaced, never followed).  Returns the head block number written.
    Raises ``OSError``."""
    lines = dump_lines(chain, extra)
    head = next(lines)
    directory, name = os.path.split(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            for line in lines:
                f.write(line)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return head


#: the largest state file ``--load-state`` reads, in bytes (a devnet of
#: 100,000 small blocks dumps to about 100 MiB)
MAX_STATE_FILE = 512 * 1024 * 1024


def load(chain, path: str, max_size: int = MAX_STATE_FILE) -> dict:
    """Load a :func:`dump` file into a node still at its genesis (empty
    block log): the blocks are checked and appended to the log, then the
    state is restored.  Returns the ``devnet`` section as a dict.

    Checked before anything is changed: a regular file of at most
    ``max_size`` bytes (not ``/dev/zero``, a pipe, a directory), a
    checkpoint of this chain with its digest, and its blocks: numbered 1
    to the meta record's head, each one's ``previous`` the id of the one
    before, its transactions those of its merkle root, the last one's id
    the meta record's ``block_id``.

    :raises SnapshotError: naming ``path`` and the first problem
        (unreadable, too large, damaged, of another chain or format, a
        block that is not one), or the node already has blocks."""
    if chain.head_block_num != 0 or chain.block_log.head_num != 0:
        raise SnapshotError(f"--load-state {path}: the node already has blocks")
    try:
        info = os.stat(path)
    except OSError as exc:
        raise SnapshotError(f"--load-state {path}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise SnapshotError(f"--load-state {path}: not a regular file (a state file of the "
                            f"devnet API's dump_state)")
    if info.st_size > max_size:
        raise SnapshotError(f"--load-state {path}: {info.st_size} bytes, over the "
                            f"{max_size} bytes a state file may have")
    try:
        meta, sections = read_checkpoint(path, chain.chain_id)
    except CheckpointError as exc:
        raise SnapshotError(f"--load-state {exc}") from None
    _check_blocks(chain, path, sections.get("blocks", []), meta)
    blocks = [block for _num, block in sections.get("blocks", [])]
    try:
        for block in blocks:
            chain.block_log.append(block)
    except (ValueError, BlockLogError) as exc:
        chain.block_log.truncate(0)
        raise SnapshotError(f"--load-state {path}: {exc}") from None
    plugins = {c.checkpoint_key: sections.get(c.checkpoint_key, []) for c in consumers(chain)}
    restore(chain, Snapshot(meta, sections["chain"], plugins, {}))
    return dict(sections.get("devnet", []))


def _check_blocks(chain, path: str, blocks: list, meta: dict) -> None:
    """Raise :class:`SnapshotError` unless ``blocks`` (``[num, block]``)
    are the chain of block ids from the genesis to the meta record's head
    (:func:`load`)."""
    previous = chain.head_block_id  # the genesis' (all zeros)
    for expected, record in enumerate(blocks, 1):
        where = f"--load-state {path}: block record {expected}"
        if not (isinstance(record, (list, tuple)) and len(record) == 2
                and record[0] == expected and isinstance(record[1], dict)):
            raise SnapshotError(f"{where} is not block {expected}")
        block = record[1]
        if block.get("previous") != previous:
            raise SnapshotError(f"{where}: previous {block.get('previous')!r} is not the id "
                                f"of block {expected - 1}, {previous}")
        try:
            check_merkle_root(block, chain.address_prefix)
            previous = block_id(block)
        except (NodeAPIError, KeyError, TypeError, ValueError, OverflowError) as exc:
            raise SnapshotError(f"{where} is damaged: {exc}") from None
    if len(blocks) != meta.get("block_num") or previous != meta.get("block_id"):
        raise SnapshotError(f"--load-state {path}: its blocks end at {len(blocks)} ({previous}), "
                            f"its state at {meta.get('block_num')} ({meta.get('block_id')})")
