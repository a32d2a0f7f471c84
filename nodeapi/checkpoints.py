"""The checkpoint service (:class:`CheckpointService`): the part
bitshares-core's object database on disk plays.  It writes the chain's and
the plugins' state every ``checkpoint-interval`` blocks while the node is
in sync, every :data:`CATCH_UP_SECONDS` of work while it catches up
(blocks older than :data:`CATCH_UP_AGE`) and at a clean stop, without
holding the reactor (captured at once, encoded by a cooperator, fsynced and
renamed in a thread), then saves the block log's offset index when it lags
(:mod:`nodeapi.chain.blockindex`).  Before the replay it puts back the
newest usable checkpoint: its block in the block log with the same id, its
digest right, and every block consumer able to start from it
(:class:`nodeapi.applied.ICheckpointed`); else a full replay, said in one
line.  ``--replay-blockchain`` ignores the checkpoints.

File format and the chain's part: :mod:`nodeapi.chain.checkpoint`; what a
checkpoint holds and why this format: DESIGN.rst "Checkpoints".
"""

import hashlib
import os

from twisted.application import service
from twisted.internet import defer, task, threads
from twisted.logger import Logger

from nodeapi.applied import ICheckpointed
from nodeapi.chain.checkpoint import (
    SUFFIX, CheckpointError, chain_records, checkpoint_files, encode, file_name,
    read_checkpoint, restore_chain)
from nodeapi.protocol.block import block_id

#: records encoded per cooperator step
STEP = 200
#: seconds of catch-up work between two checkpoints
CATCH_UP_SECONDS = 60.0
#: seconds behind the clock from which a live block counts as catch-up
CATCH_UP_AGE = 60.0


class CheckpointService(service.Service):
    """Checkpoints of ``chain`` in ``directory`` (a block consumer of the
    chain, registered last so every plugin has seen a block first).

    :param chain: the :class:`nodeapi.chain.chain.Chain`.
    :param directory: where the files live (created when needed).
    :param interval: blocks between checkpoints while in sync
        (``checkpoint-interval``); 0 writes one only at a clean stop.
    :param catch_up_seconds: while catching up (a block more than
        ``catch_up_age`` seconds older than the reactor's clock), seconds
        between two checkpoints instead (when ``interval`` is not 0).
    :param reactor: the reactor (threads, the cooperator's scheduling).
    :param replay_blockchain: ``--replay-blockchain``: start from genesis.
    :param keep: checkpoint files kept (the newest ones).
    :ivar restored_block: the block the last start restored, or None.
    :ivar written: block numbers of the checkpoints written by this process.
    """
    # graphene has no equivalent: its object database is flushed at stop
    # (libraries/chain/db_management.cpp ``database::close``)

    log = Logger()

    def __init__(self, chain, directory: str, interval: int, reactor,
                 replay_blockchain: bool = False, keep: int = 2,
                 catch_up_seconds: float = CATCH_UP_SECONDS,
                 catch_up_age: float = CATCH_UP_AGE) -> None:
        self.chain = chain
        self.catch_up_seconds, self.catch_up_age = catch_up_seconds, catch_up_age
        self._newest = None  # (block number, reactor seconds) of the newest checkpoint
        self._last_start = reactor.seconds()  # of the last write (or of the start)
        self.directory = directory
        self.interval = interval
        self.reactor = reactor
        self.replay_blockchain = replay_blockchain
        self.keep = keep
        self.restored_block = None
        self.written: list = []
        self._writing = None
        self._cooperator = task.Cooperator(scheduler=lambda step: reactor.callLater(0, step))

    # -- the plugins ----------------------------------------------------------------

    def _consumers(self) -> list:
        return [c for c in self.chain._consumers if c is not self]

    def _unsupported(self) -> list:
        return [type(c).__name__ for c in self._consumers() if not ICheckpointed.providedBy(c)]

    # -- restore ----------------------------------------------------------------------

    async def restore(self) -> None:
        """Before the replay: load the newest usable checkpoint (module
        docstring; a damaged one is skipped for the next older, one log
        line each); leaves the chain at genesis when there is none."""
        self._remove_temporaries()
        if self.replay_blockchain:
            self.log.info("Checkpoints: --replay-blockchain, replaying the whole block log")
            return
        unsupported = self._unsupported()
        if unsupported:
            self.log.info("Checkpoints: not used, {plugins} keep no checkpoint; replaying the "
                          "whole block log", plugins=", ".join(unsupported))
            return
        for num, path in checkpoint_files(self.directory):
            try:
                meta, sections = await threads.deferToThreadPool(
                    self.reactor, self.reactor.getThreadPool(), read_checkpoint, path,
                    self.chain.chain_id)
                self._check_block(meta)
            except CheckpointError as exc:
                self.log.warn("Checkpoint not used: {error}", error=str(exc))
                continue
            kept = meta.get("plugins", ())
            blocked = [c.checkpoint_key for c in self._consumers()
                       if c.checkpoint_key not in kept or not c.checkpoint_usable(meta)]
            if blocked:
                self.log.info("Checkpoint at block {num} not used: {plugins} cannot start "
                              "from it; replaying the whole block log", num=num,
                              plugins=", ".join(blocked))
                return
            restore_chain(self.chain, meta, sections["chain"])
            for consumer in self._consumers():
                consumer.restore_checkpoint(meta, sections.get(consumer.checkpoint_key, []))
            self.restored_block = num
            self.log.info("Checkpoint at block {num} loaded ({path}); replaying the {count} "
                          "blocks after it", num=num, path=path,
                          count=max(int(self.chain.block_log.head_num) - num, 0))
            return
        self.log.info("Checkpoints: none usable, replaying the whole block log")

    def _check_block(self, meta: dict) -> None:
        if meta.get("statistics_space") != self.chain.state.statistics_space:
            raise CheckpointError(
                f"the checkpoint numbers account statistics {meta.get('statistics_space')}.N, "
                f"this node {self.chain.state.statistics_space}.N (account-statistics-type)")
        num = meta["block_num"]
        if num == 0:
            return
        block = self.chain.block_log.read(num) if num <= self.chain.block_log.head_num else None
        if block is None or block_id(block) != meta["block_id"]:
            raise CheckpointError(f"block {num} of the checkpoint is not the block log's")

    def _remove_temporaries(self) -> None:
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return
        for name in names:
            if name.endswith(SUFFIX + ".tmp"):
                os.unlink(os.path.join(self.directory, name))

    # -- writing ----------------------------------------------------------------------

    def newest(self):
        """``(block number, reactor seconds when written)`` of the newest
        checkpoint (one written before this start: its file's time), or
        None when there is none."""
        if self._newest is None:
            files = checkpoint_files(self.directory)
            if files:
                num, path = files[0]
                try:
                    self._newest = (num, os.path.getmtime(path))
                except OSError:
                    return None
        return self._newest

    def block_applied(self, applied) -> None:
        """Start a checkpoint after a live block (one at a time; a block due
        while one is written is skipped): while catching up (the block is
        more than ``catch_up_age`` seconds old) once ``catch_up_seconds``
        have passed since the last one started, else after every
        ``interval``-th block.  Blocks of the start's replay write none:
        :meth:`startService` writes one after it when it was long."""
        if not self.interval or applied.replay or self._writing is not None:
            return
        now = self.reactor.seconds()
        if now - applied.timestamp > self.catch_up_age:
            due = now - self._last_start >= self.catch_up_seconds
        else:
            due = applied.block_num % self.interval == 0
        if due and not self._unsupported():
            self._background_write()

    def block_popped(self, applied) -> None:
        """A fork switch popped ``applied``: the checkpoints of its block
        and later ones describe a branch the chain left, so their files go
        (at start they would be skipped: their block is not the log's)."""
        for num, path in checkpoint_files(self.directory):
            if num >= applied.block_num:
                try:
                    os.unlink(path)
                except OSError:
                    continue
                self.log.info("Checkpoint at block {num} removed: the block was popped",
                              num=num)
                if self._newest is not None and self._newest[0] == num:
                    self._newest = None

    def _background_write(self) -> None:
        self.write().addErrback(lambda f: self.log.failure("Checkpoint failed", f))

    def startService(self) -> None:
        """After the replay: when it applied ``interval`` blocks or more
        past the newest checkpoint, write one of the head in the background."""
        super().startService()
        self._last_start = self.reactor.seconds()
        newest = max([n for n, _p in checkpoint_files(self.directory)], default=0)
        if self.interval and self.chain.head_block_num - newest >= self.interval \
                and not self._unsupported():
            self._background_write()

    def write(self) -> defer.Deferred:
        """Write a checkpoint of the head block now; a Deferred firing with
        its path (or None when one is being written or nothing changed)."""
        if self._writing is not None or self.chain.head_block_num in self.written:
            return defer.succeed(None)
        meta, records = chain_records(self.chain)
        plugins = [(c.checkpoint_key, c.checkpoint_records()) for c in self._consumers()]
        meta["plugins"] = [key for key, _records in plugins]
        log = self.chain.block_log
        ends = log.index_snapshot() if log.index_stale() else None
        self._last_start = self.reactor.seconds()
        self._writing = defer.Deferred.fromCoroutine(self._write(meta, records, plugins, ends))

        def done(result):
            self._writing = None
            return result

        return self._writing.addBoth(done)

    async def _write(self, meta: dict, records, plugins: list, ends):
        os.makedirs(self.directory, exist_ok=True)
        num = meta["block_num"]
        final = os.path.join(self.directory, file_name(num))
        tmp = final + ".tmp"
        digest = hashlib.sha256()
        count = [0]
        f = open(tmp, "wb", buffering=1 << 20)
        try:
            def lines():
                for section, key, value in records:
                    yield encode(section, key, value)
                for section, items in plugins:
                    for key, value in items:
                        yield encode(section, key, value)

            def steps():
                batch = []
                for line in lines():
                    batch.append(line)
                    if len(batch) >= STEP:
                        self._emit(f, digest, batch, count)
                        batch = []
                        yield None
                self._emit(f, digest, batch, count)

            await self._cooperator.cooperate(steps()).whenDone()
            f.write(encode("end", digest.hexdigest(), count[0]))
            f.flush()
            await threads.deferToThreadPool(self.reactor, self.reactor.getThreadPool(),
                                            _durable_rename, f, tmp, final, self.directory)
        except BaseException:
            f.close()
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        self.written.append(num)
        self._newest = (num, self.reactor.seconds())
        self._prune()
        try:  # the block log's offset index as of this block when it lags: a
            # start after a kill -9 walks only the blocks after it
            # (nodeapi.chain.blockindex, BlockLog.index_stale)
            if ends is not None:
                await threads.deferToThreadPool(self.reactor, self.reactor.getThreadPool(),
                                                self.chain.block_log.save_index, ends)
        except OSError as exc:
            self.log.warn("Block log index not written: {error}", error=exc.strerror)
        self.log.info("Checkpoint at block {num} written ({records} records)", num=num,
                      records=count[0])
        return final

    @staticmethod
    def _emit(f, digest, batch: list, count: list) -> None:
        data = b"".join(batch)
        digest.update(data)
        f.write(data)
        count[0] += len(batch)

    def _prune(self) -> None:
        for _num, path in checkpoint_files(self.directory)[self.keep:]:
            try:
                os.unlink(path)
            except OSError:
                pass

    # -- IService ---------------------------------------------------------------------

    def stopService(self) -> defer.Deferred:
        """Wait for a checkpoint being written, then write one of the head
        (a clean stop restarts without replay)."""
        super().stopService()
        return defer.Deferred.fromCoroutine(self._stop())

    async def _stop(self) -> None:
        if self._writing is not None:
            try:
                await self._writing
            except Exception:
                pass  # logged by its errback
        if self._unsupported() or self.chain.head_block_num == 0:
            return
        try:
            await self.write()
        except Exception:
            self.log.failure("Final checkpoint failed")


def _durable_rename(f, tmp: str, final: str, directory: str) -> None:
    """fsync ``f`` (open on ``tmp``), close it, rename it to ``final`` and
    fsync ``directory`` (run in a thread)."""
    os.fsync(f.fileno())
    f.close()
    os.replace(tmp, final)
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
