"""Checkpoints of the chain state: the file format, and what of the chain
goes into one.

A checkpoint holds the state at a block ``N`` (the object store and the
chain's bookkeeping, plus what each checkpointed plugin adds), so a start
loads it and replays only the blocks after ``N`` from the block log
(docs/DESIGN.rst, "Checkpoints").

File ``checkpoint-<N, 10 digits>.ckpt``: JSON lines, each one record
``[section, key, value]`` encoded with orjson::

    ["meta", "nodeapi-checkpoint", {"format": FORMAT, "chain_id", "block_num",
                                    "block_id", "statistics_space", "next_op",
                                    "next_ath", "plugins": [plugin keys]}]
    ["chain", "<object id>", {...}]          one per object
    ["chain", "$next_instance", {...}] ...   the chain's bookkeeping
    ["<plugin key>", <key>, <value>] ...     a plugin's records
    ["end", "<sha256 of every byte before this line>", <record count>]

A file without its ``end`` line, or whose digest does not match, is damaged
(a crash during the write leaves only the ``.tmp`` file anyway: the file is
written, fsynced and renamed).  Records are small and encoded one by one,
so the writer can spread the work over many reactor turns.

Why JSON lines with orjson (not pickle, not SQLite/LMDB): nothing in the
file is executed when read; orjson encodes and decodes a record in
microseconds; the format is line-oriented, so writing and reading proceed
in small steps between other work; and the state is a map of wire-JSON
objects already, so no second schema is needed.
"""

import hashlib
import os
import re

import orjson

from nodeapi.chain.state import ObjectStore
from nodeapi.errors import NodeAPIError
from nodeapi.files import open_regular

#: The checkpoint format, raised whenever a part's records change (2: the
#: account_history operation records are deflated, nodeapi.history.oprecord;
#: 3: they carry their entries, the lookups are rows of kept operations;
#: 4: virtual operations are numbered after the operation that raised them,
#: nodeapi.chain.numbering, so the 1.11 and 2.9 ids of a replay differ;
#: 5: chain objects keep their times as integer seconds,
#: nodeapi.protocol.wire ``TIME_FIELDS``; 6: the genesis and block 1 make
#: bitshares-core's objects (the committee account's balance 2.5.0, the
#: first maintenance at block 1, maintenance_flag, asset options as
#: integers), so a replay's ids and fields differ);
#: a checkpoint of another format is skipped (a full replay).
FORMAT = 6
MAGIC = "nodeapi-checkpoint"
SUFFIX = ".ckpt"
_NAME = re.compile(r"^checkpoint-(\d{10})\.ckpt$")

__all__ = ["CheckpointError", "chain_records", "restore_chain", "encode", "file_name",
           "checkpoint_files", "read_checkpoint", "FORMAT"]


class CheckpointError(NodeAPIError):
    """A checkpoint file cannot be used (damaged, another chain, another
    format, a block the block log does not hold)."""


def encode(section: str, key, value) -> bytes:
    """One record line."""
    return orjson.dumps([section, key, value]) + b"\n"


def file_name(block_num: int) -> str:
    """The name of the checkpoint file of block ``block_num``:
    ``checkpoint-<block_num, 10 digits>.ckpt``, zero-padded so that the names
    sort by block (:func:`checkpoint_files` reads them back)."""
    return f"checkpoint-{block_num:010d}{SUFFIX}"


def checkpoint_files(directory: str) -> list:
    """``[(block_num, path)]`` of the checkpoint files in ``directory``,
    newest first (temporary files left by a crash are not listed)."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    found = [(int(m.group(1)), os.path.join(directory, n))
             for n in names for m in [_NAME.match(n)] if m]
    return sorted(found, reverse=True)


def chain_records(chain):
    """The records of ``chain`` at its head block (without pending
    transactions).  The state is captured when this is called (a shallow
    copy of the store's never-changed objects); the records are produced
    lazily from that capture, so the chain may go on meanwhile."""
    objects, next_instance = chain.state.committed()
    meta = {"format": FORMAT, "chain_id": chain.chain_id, "block_num": chain.head_block_num,
            "block_id": chain.head_block_id, "statistics_space": chain.state.statistics_space,
            "next_op": chain._numbering.next_op, "next_ath": chain._numbering.next_ath}
    summary = {str(k): v for k, v in chain._summary.items()}
    recent = dict(chain._recent)
    counters = [chain._numbering.next_op, chain._numbering.next_ath]

    def records():
        yield "meta", MAGIC, meta
        yield "chain", "$next_instance", next_instance
        yield "chain", "$summary", summary
        yield "chain", "$recent", recent
        yield "chain", "$numbering", counters
        for oid, obj in objects.items():
            yield "chain", oid, obj

    return meta, records()


def restore_chain(chain, meta: dict, records: list) -> None:
    """Put the chain's state back to the checkpoint (``records``: the
    ``[key, value]`` pairs of its ``chain`` section).  The chain must be
    fresh (at its genesis, no block applied)."""
    objects, extra = {}, {}
    for key, value in records:
        if key.startswith("$"):
            extra[key] = value
        else:
            objects[key] = value
    state = ObjectStore.restored(meta["statistics_space"], objects, extra["$next_instance"])
    next_op, next_ath = extra["$numbering"]
    chain.restore(state, {int(k): v for k, v in extra["$summary"].items()},
                  dict(extra["$recent"]), next_op, next_ath)


def read_checkpoint(path: str, chain_id: str) -> tuple:
    """``(meta, sections)`` of a checkpoint file: ``sections`` maps each
    section name to its ``[key, value]`` pairs in file order.

    :raises CheckpointError: unreadable, damaged (digest, missing end),
        another format or another chain."""
    digest = hashlib.sha256()
    sections: dict = {}
    meta = None
    count = 0
    try:
        with open_regular(path) as f:
            for line in f:
                record = orjson.loads(line)
                section, key, value = record
                if section == "end":
                    if key != digest.hexdigest() or value != count:
                        raise CheckpointError(f"{path}: digest mismatch")
                    if meta is None:
                        raise CheckpointError(f"{path}: no meta record")
                    return meta, sections
                digest.update(line)
                count += 1
                if section == "meta":
                    if key != MAGIC or not isinstance(value, dict) \
                            or value.get("format") != FORMAT:
                        raise CheckpointError(f"{path}: not a format {FORMAT} checkpoint")
                    if value.get("chain_id") != chain_id:
                        raise CheckpointError(f"{path}: checkpoint of chain "
                                              f"{value.get('chain_id')}, not {chain_id}")
                    meta = value
                else:
                    sections.setdefault(section, []).append((key, value))
    except (OSError, ValueError, TypeError) as exc:
        raise CheckpointError(f"{path}: {exc}") from exc
    raise CheckpointError(f"{path}: incomplete (no end record)")
