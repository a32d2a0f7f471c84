"""Devnet state snapshots: the whole node state (chain, block consumers,
block log) captured in memory and put back, or written to a file and
loaded at start.

The records are the checkpoints' (:mod:`nodeapi.chain.checkpoint` for the
chain, each block consumer's :class:`~nodeapi.applied.ICheckpointed`
records), so nothing of the state has a second serializer:

- :func:`capture` materializes those records at the head block (the
  pending transactions are not part of it, as in a checkpoint) with the
  block log's head; cost: a shallow copy of the object store and copies of
  the plugins' arrays;
- :func:`restore` drops the pending transactions, cuts the block log back
  to the snapshot's head (:meth:`~nodeapi.chain.blocklog.BlockLog.truncate`)
  and restores the chain and every consumer from the records, as a start
  from a checkpoint does;
- :func:`dump` writes the records in the checkpoint file format plus a
  ``blocks`` section holding every block of the log (a devnet's chain is
  short), :func:`load` reads such a file into a fresh node (checked as a
  checkpoint is: format, chain id, SHA-256 digest).

Reference: anvil's ``evm_snapshot``/``evm_revert`` and ``anvil_dumpState``/
``--load-state`` (foundry's anvil), applied to a graphene chain.
"""

import hashlib
import os

import attr

from nodeapi.applied import ICheckpointed
from nodeapi.chain.checkpoint import (
    CheckpointError, chain_records, encode, read_checkpoint, restore_chain)


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
    """The node state at the head block (module text)."""
    meta, records = chain_records(chain)
    chain_section = [(key, value) for _section, key, value in records][1:]  # after meta
    plugins = {c.checkpoint_key: list(c.checkpoint_records()) for c in consumers(chain)}
    meta["plugins"] = sorted(plugins)
    return Snapshot(meta, chain_section, plugins, dict(extra or {}))


def restore(chain, snapshot: Snapshot) -> None:
    """Put the node back to ``snapshot``: pending transactions dropped,
    block log cut to its head, chain and consumers restored.

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


def dump(chain, path: str, extra: dict | None = None) -> int:
    """Write the node state and its block log to ``path`` (the checkpoint
    format, a ``blocks`` section of ``[num, block]`` and a ``devnet``
    section of ``extra``), through a ``.tmp`` file renamed over it.
    Returns the head block number written.  Raises ``OSError``."""
    snap = capture(chain, extra)
    digest = hashlib.sha256()
    count = 0
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        def put(section, key, value):
            nonlocal count
            line = encode(section, key, value)
            digest.update(line)
            f.write(line)
            count += 1

        put("meta", "nodeapi-checkpoint", snap.meta)
        for key, value in snap.chain:
            put("chain", key, value)
        for section, records in snap.plugins.items():
            for key, value in records:
                put(section, key, value)
        for num, block in chain.block_log.blocks(1):
            if num > snap.meta["block_num"]:
                break
            put("blocks", num, block)
        for key, value in snap.extra.items():
            put("devnet", key, value)
        f.write(encode("end", digest.hexdigest(), count))
    os.replace(tmp, path)
    return snap.meta["block_num"]


def load(chain, path: str) -> dict:
    """Load a :func:`dump` file into a node still at its genesis (empty
    block log): the blocks are appended to the log, then the state is
    restored.  Returns the ``devnet`` section as a dict.

    :raises SnapshotError: unreadable, damaged, of another chain or
        format, or the node already has blocks."""
    if chain.head_block_num != 0 or chain.block_log.head_num != 0:
        raise SnapshotError(f"--load-state {path}: the node already has blocks")
    try:
        meta, sections = read_checkpoint(path, chain.chain_id)
    except CheckpointError as exc:
        raise SnapshotError(f"--load-state {exc}") from None
    for _num, block in sections.get("blocks", []):
        chain.block_log.append(block)
    plugins = {c.checkpoint_key: sections.get(c.checkpoint_key, []) for c in consumers(chain)}
    restore(chain, Snapshot(meta, sections["chain"], plugins, {}))
    return dict(sections.get("devnet", []))
