"""Rebuilding the documents a search database lost while the node runs.

The database may lose documents the plugin had shipped and forgotten: it
was restarted empty, an index was deleted.  The plugin finds out when it
checks the database (:func:`~nodeapi.plugins.searchdb.resume.find_resume`,
on every reconnection) and must write again from the first missing
document (docs/searchdb-plugin.rst "Duplicate rule").  Those documents are
rebuilt from the block log, the source of truth: a :class:`Backfill` replays
the block log into a private chain (a replica: its own state, no other
consumer, nothing written to the log), numbers the operations like the
plugin does, and builds the documents below ``upto_ath`` that the database
lacks into its own queue, which the shipper drains before the plugin's
queue (:meth:`~nodeapi.plugins.searchdb.shipper.BulkShipper.add_source`).
The plugin owns a :class:`BackfillControl`, which starts a backfill after a
check that calls for one and ends it.

Costs: the replica holds a second chain state while the backfill runs (as
much memory as the node's own replay at start), and replays the log from
block 1 up to the first block past ``upto_ath``, documents being built only
from the first missing one on.  The replay pauses while the backfill queue
holds more than ``max_bulks`` bulks (back-pressure: the database, not the
replay, sets the pace) and yields to the reactor between steps.
"""

import os
from typing import Any, Callable, Optional

from twisted.internet import defer, task
from twisted.logger import Logger

from nodeapi.chain.chain import Chain
from nodeapi.plugins.searchdb.bulk import BulkBuilder
from nodeapi.plugins.searchdb.documents import DocumentBuilder
from nodeapi.plugins.searchdb.resume import Resume
from nodeapi.plugins.searchdb.spool import BulkQueue

#: The backfill's spool file in the data directory.
BACKFILL_FILE = "searchdb-backfill.bin"


class _GatedCooperator:
    """An ``ITaskCooperator`` for ``Chain.replay``: runs the steps on a
    ``Cooperator`` of the injected reactor and, before each step, waits
    for ``gate()`` when it returns a Deferred."""

    def __init__(self, reactor: Any, gate: Callable[[], Optional[defer.Deferred]]) -> None:
        self._coop = task.Cooperator(scheduler=lambda x: reactor.callLater(0.0, x))
        self._gate = gate

    def cooperate(self, iterator):
        def steps():
            for step in iterator:
                wait = self._gate()
                if wait is not None:
                    yield wait
                yield step
        return self._coop.cooperate(steps())


class Backfill:
    """Rebuilds the documents ``2.9.N`` with ``N < upto_ath`` that
    ``resume`` says the database lacks.

    :param replica: ``fn() -> Chain``: a fresh chain over the node's block
        log (genesis state), replayed by :meth:`start`.
    :param documents: the plugin's
        :class:`~nodeapi.plugins.searchdb.documents.DocumentBuilder`.
    :param resume: what the database holds (the check just made).
    :param upto_ath: the first ``2.9.N`` the plugin's own queue takes care
        of; nothing from there on is rebuilt but the documents ``earlier``
        claimed.
    :param earlier: the resume point the plugin built by until now: of the
        operations up to ``1.11.last_op`` it skipped the documents this one
        said the database held; the lacking ones among them are rebuilt too.
    :param last_op: the last operation whose documents ``earlier`` may have
        made the plugin skip (-1: none).
    :param queue: the :class:`~nodeapi.plugins.searchdb.spool.BulkQueue`
        the bulks go to (the shipper's first source).
    :param items_per_bulk: documents per bulk.
    :param max_body: bulk body byte limit.
    :param reactor: ``IReactorTime`` for the replay's steps.
    :param max_bulks: the replay pauses while the queue holds more bulks.
    :ivar built: documents built so far.
    :ivar first: N of the first document built (-1 before any).
    :ivar done: a Deferred firing with :attr:`built` once every document
        is built and sealed (the queue may still hold them), failing with
        the replay's error, or ``CancelledError`` after :meth:`cancel`.
    """

    log = Logger()

    def __init__(self, replica: Callable[[], Any], documents: DocumentBuilder, resume: Resume,
                 upto_ath: int, earlier: Resume, last_op: int, queue: BulkQueue,
                 items_per_bulk: int, max_body: int, reactor: Any, max_bulks: int = 4) -> None:
        self._replica = replica
        self.documents = documents
        self.resume = resume
        self.upto_ath = upto_ath
        self.earlier = earlier
        self.last_op = last_op
        self.queue = queue
        self.builder = BulkBuilder(queue, items_per_bulk, max_body)
        self.reactor = reactor
        self.max_bulks = max_bulks
        self._next_ath = 0  # N after the last 2.9.N the chain handed over
        self.built = 0
        self.first = -1
        self.failed = 0
        self.done: defer.Deferred = defer.Deferred(lambda _d: self.cancel())
        self._replay: Optional[defer.Deferred] = None
        self._waiting: Optional[defer.Deferred] = None
        self._finished = False

    # -- driving -----------------------------------------------------------------

    def start(self) -> defer.Deferred:
        """Replay the block log into the replica; returns :attr:`done`."""
        chain = self._replica()
        chain.add_consumer(self)
        self._replay = chain.replay(cooperator=_GatedCooperator(self.reactor, self._gate),
                                    chunk=50, progress_every=60.0)
        self._replay.addCallbacks(self._replayed, self._stopped)
        return self.done

    def _gate(self) -> Optional[defer.Deferred]:
        if len(self.queue) <= self.max_bulks:
            return None
        self._waiting = defer.Deferred()
        return self._waiting

    def bulk_done(self, _bulk) -> None:
        """The shipper finished a bulk of :attr:`queue`: let the replay go
        on once the queue is short again."""
        if self._waiting is not None and len(self.queue) <= self.max_bulks:
            waiting, self._waiting = self._waiting, None
            waiting.callback(None)

    def cancel(self) -> None:
        """Stop the replay; :attr:`done` fails with ``CancelledError``."""
        if self._replay is not None and not self._replay.called:
            self._replay.cancel()
        elif not self.done.called:
            self.done.errback(defer.CancelledError())

    def _finish(self) -> None:
        if self._finished:
            return
        self._finished = True
        self.builder.seal(0)
        if self._replay is not None and not self._replay.called:
            self._replay.cancel()  # from inside the replay: stops after this block
        if not self.done.called:
            self.done.callback(self.built)

    def _replayed(self, _count) -> None:
        self._finish()  # the log ended below upto_ath (nothing more to build)

    def _stopped(self, failure) -> None:
        if self._finished:
            return None
        self._finished = True
        if not self.done.called:
            self.done.errback(failure)
        return None

    # -- IBlockConsumer (of the replica) -----------------------------------------------

    def block_applied(self, applied) -> None:
        """Number the block's operations and build the missing documents."""
        if self._finished:
            return
        block_time = applied.time_iso
        index = self.documents.index_for(applied.timestamp)
        resume, upto, earlier, last_op = self.resume, self.upto_ath, self.earlier, self.last_op
        for op in applied.operations:
            entries = op.account_history  # numbered by the chain
            if not entries:
                continue
            self._next_ath = entries[-1].n + 1
            m = op.id_num
            if m < resume.lo_op:
                continue  # held
            wanted = [e for e in entries if (e[0] < upto or (m <= last_op
                                                             and earlier.holds(m, e[0])))
                      and not resume.holds(m, e[0])]
            if wanted:
                try:
                    items = self.documents.items(wanted, op, applied.block_num, block_time, index)
                except Exception:
                    self.failed += len(wanted)
                    self.log.failure("searchdb: documents of 1.11.{m} not rebuilt", m=m)
                else:
                    if self.first < 0:
                        self.first = wanted[0][0]
                    self.built += len(wanted)
                    self.builder.add(items, m, applied.block_num)
            if self._next_ath >= upto and m >= last_op:
                self._finish()
                return


def chain_replica(chain: Chain, clock: Any) -> Callable[[], Chain]:
    """The default replica of a :class:`BackfillControl`: ``fn() ->
    Chain``, a fresh chain over ``chain``'s genesis and block log (its
    statistics type; ``clock`` an ``IReactorTime``)."""
    return lambda: Chain(chain.genesis, chain.block_log, clock=clock,
                         statistics_type=chain.statistics_type)


class BackfillControl:
    """The backfills of a :class:`~nodeapi.plugins.searchdb.service.SearchDBService`,
    owned by it: when a check of the database (on every connection) finds
    documents lacking that the plugin's own pipeline will not ship,
    :meth:`check` starts a :class:`Backfill` (one at a time; a new check
    restarts it), gives its queue to the shipper as the first source and
    ends it when its queue is drained, it failed or :meth:`end` is called
    (the plugin stops).

    :param replica: ``fn() -> Chain`` for :class:`Backfill`, or None: no
        backfill is ever started.
    :param documents: the plugin's
        :class:`~nodeapi.plugins.searchdb.documents.DocumentBuilder`.
    :param shipper: the plugin's
        :class:`~nodeapi.plugins.searchdb.shipper.BulkShipper`.
    :param queue: the plugin's
        :class:`~nodeapi.plugins.searchdb.spool.BulkQueue` (read: where its
        own pipeline stands).
    :param builder: the plugin's
        :class:`~nodeapi.plugins.searchdb.bulk.BulkBuilder` (read: where its
        own pipeline stands; a backfill's bulks take its current size
        limits).
    :param data_dir: the data directory (:data:`BACKFILL_FILE`).
    :param max_memory: the plugin's queue memory in bytes; a backfill's
        queue keeps a quarter of it (at least 1 MiB) in memory.
    :param reactor: ``IReactorTime`` for the replay's steps.
    :ivar running: the running :class:`Backfill`, or None.
    :ivar failed: documents the ended backfills could not build or bulk.
    :ivar closed: True after :meth:`close`: :meth:`check` starts nothing.
    """

    log = Logger()

    def __init__(self, replica: Optional[Callable[[], Any]], documents: DocumentBuilder,
                 shipper: Any, queue: BulkQueue, builder: BulkBuilder, data_dir: str,
                 max_memory: int, reactor: Any) -> None:
        self._replica = replica
        self.documents = documents
        self.shipper = shipper
        self.queue = queue
        self.builder = builder
        self.data_dir = data_dir
        self.max_memory = max_memory
        self.reactor = reactor
        self.running: Optional[Backfill] = None
        self.failed = 0
        self.closed = False

    @property
    def pending(self) -> int:
        """Documents the running backfill built that are not confirmed yet."""
        backfill = self.running
        return 0 if backfill is None else backfill.queue.items + len(backfill.builder)

    def _frontier(self, live_op: int, next_ath: int) -> tuple:
        """``(m, n)`` of the first document the plugin's own pipeline still
        ships (queued, open, or the next to be numbered)."""
        head = self.queue.peek()
        if head is not None:
            return head.ops[0], head.ids[0]
        first = self.builder.first
        if first is not None:
            return first
        return live_op + 1, next_ath

    def check(self, earlier: Resume, resume: Resume, live_op: int, next_ath: int) -> None:
        """Start a backfill when the database (``resume``) lacks documents
        the plugin will not ship by itself: below the first one its own
        pipeline still ships (shipped, then lost), or skipped because
        ``earlier`` said the database held them.  ``live_op``: the last
        ``1.11.M`` the plugin numbered; ``next_ath``: the next ``2.9.N``.
        Does nothing once :attr:`closed`."""
        if self.closed:
            return
        if self.running is not None:
            self.end("restarted after a new check")
        m_f, n_f = self._frontier(live_op, next_ath)
        skipped_last = min(live_op, max(earlier.lo_op - 1, earlier.window_op))
        lost = resume.lacks_below(n_f)
        skipped = max(resume.lo_op, m_f) <= skipped_last
        if not (lost or skipped) or self._replica is None:
            return
        queue = BulkQueue(os.path.join(self.data_dir, BACKFILL_FILE),
                          max(self.max_memory // 4, 1 << 20))
        backfill = Backfill(self._replica, self.documents, resume, n_f, earlier, skipped_last,
                            queue, self.builder.items_per_bulk, self.builder.max_body,
                            self.reactor)
        self.running = backfill
        self.log.warn("searchdb: the database lacks documents from 1.11.{op} on that were "
                      "shipped or skipped before; rebuilding those below 2.9.{upto} from "
                      "the block log", op=resume.lo_op, upto=n_f)
        self.shipper.add_source(queue, lambda bulk: self._bulk_done(backfill, bulk))
        backfill.start().addCallbacks(lambda built: self._built(backfill, built),
                                      lambda failure: self._failed(backfill, failure))
        self.shipper.kick()

    def _bulk_done(self, backfill: Backfill, bulk) -> None:
        backfill.bulk_done(bulk)
        if backfill is self.running and backfill.done.called and not len(backfill.queue):
            self.end("done")

    def _built(self, backfill: Backfill, built: int) -> None:
        if backfill is self.running:
            self.log.info("searchdb: backfill built {count} documents from {first}", count=built,
                          first=f"2.9.{backfill.first}" if backfill.first >= 0 else "-")
            if not len(backfill.queue):
                self.end("done")
            else:
                self.shipper.kick()

    def _failed(self, backfill: Backfill, failure) -> None:
        if backfill is self.running and not failure.check(defer.CancelledError):
            self.log.failure("searchdb: backfill stopped", failure)
            self.end("failed")

    def end(self, why: str) -> None:
        """End the running backfill (if any) for reason ``why`` (logged):
        its queue leaves the shipper and is discarded, its failures are
        added to :attr:`failed`."""
        backfill, self.running = self.running, None
        if backfill is None:
            return
        self.failed += backfill.failed + backfill.builder.dropped
        self.shipper.remove_source(backfill.queue)
        backfill.cancel()
        backfill.queue.discard()
        self.log.info("searchdb: backfill {why} ({count} documents rebuilt)", why=why,
                      count=backfill.built)

    def close(self, why: str) -> None:
        """The plugin stops: :meth:`end` the running backfill for reason
        ``why`` and start none after (a reconnection during the stop's
        flush runs :meth:`check`, and nothing would end what it started)."""
        self.closed = True
        self.end(why)
