"""The ``searchdb`` history plugin: operation and account history written to
a search database (docs/searchdb-plugin.rst; docs/wire-contract.rst section 8).

Graphene reference: bitshares-core libraries/plugins/elasticsearch/
elasticsearch_plugin.cpp.  The way of a block from the chain to the
database (documents, bulks, the spool, the shipper) is DESIGN.rst's "A
block applied by the chain, on its way to the search database".

* Start (:meth:`SearchDBService.prepare`, before the chain replays) and
  every reconnection after an outage: detect the server flavour
  (``GET /``), install the index template for ``<prefix>*`` unless one of
  that name exists, and check what the database holds
  (:func:`~nodeapi.plugins.searchdb.resume.find_resume`; the cursor file
  only narrows the search): documents it holds are neither built nor sent
  again, queued ones it holds are dropped; nothing is shipped until its
  newest documents are found numbered as the chain numbers
  (:mod:`~nodeapi.plugins.searchdb.numbering`).  If the database does not
  answer at start, the node starts anyway, documents are queued from the
  cursor on and the check runs once the database answers.
* Documents the database lost after the plugin had shipped them (restarted
  empty, an index deleted), and documents skipped because an earlier check
  said it held them, are rebuilt from the block log by a
  :class:`~nodeapi.plugins.searchdb.backfill.Backfill` and shipped before
  the queue.
* Bulk size in lines: by the pace, synchronized or catching up
  (:mod:`~nodeapi.plugins.searchdb.pace`).  When synchronized the open
  bulk is sealed at the end of every block; it is always sealed before its
  body would pass 4 MiB.
* The chain is never blocked nor raised into: building is quick, shipping
  is asynchronous, a failure while building is logged and counted.
* Modes (``searchdb-mode``, :mod:`~nodeapi.plugins.searchdb.plugin`):
  ``writes`` False in ``only_query``, ``queries`` False in ``only_save``.
* Stop: a running backfill is ended and none is started after (a bulk of
  it in flight does not hold up the flush,
  :mod:`~nodeapi.plugins.searchdb.shipper`), the open bulk
  is sealed and the queue flushed, waiting at most ``stop_timeout``
  seconds; what is left is rebuilt by the next start's replay from the
  database's resume point.
"""

import os
from typing import Any, Callable, Optional

from twisted.application import service
from twisted.internet import defer
from twisted.logger import Logger
from zope.interface import implementer

from nodeapi.applied import IBlockConsumer, ICheckpointed
from nodeapi.plugins.searchdb.backfill import BackfillControl, chain_replica
from nodeapi.plugins.searchdb.bulk import MAX_BODY, BulkBuilder
from nodeapi.plugins.searchdb.client import SearchDBClient
from nodeapi.plugins.searchdb.documents import DocumentBuilder
from nodeapi.plugins.searchdb.flavors import index_template
from nodeapi.plugins.searchdb.numbering import NumberingGuard, NumberingMismatch
from nodeapi.plugins.searchdb.pace import Pace
from nodeapi.plugins.searchdb.query import SearchDBHistory
from nodeapi.plugins.searchdb.resume import Cursor, Resume, find_resume
from nodeapi.plugins.searchdb.shipper import BulkShipper, IBulkSource
from nodeapi.plugins.searchdb.spool import BulkQueue

SPOOL_FILE = "searchdb-spool.bin"


@implementer(IBlockConsumer, ICheckpointed, IBulkSource)
class SearchDBService(service.Service):
    """The searchdb plugin: a Twisted service, an ``IBlockConsumer``
    (register with ``chain.add_consumer`` before the replay) and the
    ``IBulkSource`` of its shipper.

    :param client: a :class:`~nodeapi.plugins.searchdb.client.SearchDBClient`.
    :param chain: the :class:`~nodeapi.chain.chain.Chain` (asset symbol and
        precision for the visitor), or None (indexer mode).
    :param asset_lookup: ``fn(asset_id) -> (symbol, precision) | None`` for
        the visitor without a chain (the indexer's upstream).
    :param data_dir: the node's data directory (cursor and spool files).
    :param index_prefix: ``searchdb-index-prefix``.
    :param visitor: ``searchdb-visitor``.
    :param bulk_replay, bulk_sync, clock: the :attr:`pace`'s
        (:class:`~nodeapi.plugins.searchdb.pace.Pace`; clock default reactor).
    :param reactor: timers (``IReactorTime``); the client brings its own.
    :param max_memory: bytes of sealed bulks kept in memory before the spool
        file is used.
    :param stop_timeout: seconds :meth:`stopService` waits for the flush.
    :param prepare_timeout: seconds :meth:`prepare` waits for the database.
    :param writes: False in ``only_query`` mode: :meth:`prepare` does not
        touch the database and blocks are ignored.
    :param document_options: ``max_mapping_depth``, ``operation_object``,
        ``operation_string``, ``start_after_block`` of
        :class:`~nodeapi.plugins.searchdb.documents.DocumentBuilder`.
    :param replica: ``fn() -> Chain``, a fresh chain over the node's block
        log for a :class:`~nodeapi.plugins.searchdb.backfill.Backfill`
        (default: :func:`~nodeapi.plugins.searchdb.backfill.chain_replica`).
    :param queries: False in ``only_save`` mode: no :attr:`history`.
    :ivar history: the ``IAccountHistory`` answered from the database, a
        :class:`~nodeapi.plugins.searchdb.query.SearchDBHistory` over the
        same client, or None (``queries`` False).
    :ivar confirmed_block_num: the last block whose documents the database
        confirmed (0 before any).
    :ivar pace: synchronized or catching up, the bulk size.
    :ivar backfills: its :class:`~nodeapi.plugins.searchdb.backfill.BackfillControl`
        (``backfills.running``: the running backfill, or None).
    """

    log = Logger()

    def __init__(self, client: SearchDBClient, chain: Any, data_dir: str, reactor: Any, *,
                 index_prefix: str = "chain-", visitor: bool = False,
                 bulk_replay: int = 10000, bulk_sync: int = 100, clock: Any = None,
                 max_memory: int = 64 << 20, max_body: int = MAX_BODY,
                 stop_timeout: float = 30.0, prepare_timeout: float = 15.0,
                 initial_backoff: float = 0.5, max_backoff: float = 60.0,
                 replica: Optional[Callable[[], Any]] = None, writes: bool = True,
                 queries: bool = False, document_options: Optional[dict] = None,
                 asset_lookup: Optional[Callable[[str], Optional[tuple]]] = None) -> None:
        self.client = client
        self.chain = chain
        self.data_dir = data_dir
        self.index_prefix = index_prefix
        self.writes = writes
        self.reactor = reactor
        self.pace = Pace(clock if clock is not None else reactor, bulk_replay, bulk_sync)
        self.stop_timeout = stop_timeout
        self.prepare_timeout = prepare_timeout
        self.history = SearchDBHistory(client, index_prefix, chain) if queries else None
        self.template_name = (index_prefix.rstrip("-_.") or "searchdb") + "-template"
        self._next_ath = 0  # N after the last 2.9.N the chain handed over
        self.documents = DocumentBuilder(index_prefix, visitor,
                                         asset_lookup if asset_lookup is not None else self._asset,
                                         **(document_options or {}))
        self.queue = BulkQueue(os.path.join(data_dir, SPOOL_FILE), max_memory)
        self.builder = BulkBuilder(self.queue, bulk_replay // 2, max_body)
        self.cursor = Cursor.load(data_dir, index_prefix)
        c = self.cursor
        # until the database answers: the cursor's word (checked then)
        self.resume = (Resume(lo_op=c.op, upto_ath=c.ath, window_op=c.op) if c
                       else Resume(lo_op=0))
        if replica is None and chain is not None:
            replica = chain_replica(chain, reactor)
        self.rejected: dict = dict(c.rejected) if c else {}  # {n: m} refused for good
        start = self.documents.start_after_block
        # (S, M0, N0): the first operation and document written after block S
        self.floor = c.floor if c and c.floor and start and c.floor[0] == start else None
        self._live_op = -1  # the last operation numbered
        self.confirmed_block_num = max(c.block, 0) if c else 0
        self.last_block = 0
        self._build_failed = 0
        self.shipper = BulkShipper(client, self.queue, self, reactor, initial_backoff, max_backoff)
        self.backfills = BackfillControl(replica, self.documents, self.shipper, self.queue,
                                         self.builder, data_dir, max_memory, reactor)
        self.numbering = NumberingGuard(client, index_prefix, self.shipper, self.queue,
                                        self.backfills, lambda: self._live_op)

    # -- figures (read by nodeapi.metrics) ---------------------------------------

    @property
    def documents_shipped(self) -> int:
        """Documents the database confirmed (created, or already there)."""
        return self.shipper.documents_shipped

    @property
    def documents_failed(self) -> int:
        """Documents rejected by the database (not 409) or not buildable."""
        return (self.shipper.documents_failed + self._build_failed + self.builder.dropped
                + self.backfills.failed)

    @property
    def documents_pending(self) -> int:
        """Documents built but not yet confirmed."""
        return self.queue.items + len(self.builder) + self.backfills.pending

    # -- start -------------------------------------------------------------------

    def prepare(self) -> defer.Deferred:
        """Before the replay: server flavour, template, resume point.  Never
        fails: when the database does not answer within
        ``prepare_timeout`` the node starts anyway (see module text).  Does
        nothing in ``only_query`` mode."""
        if not self.writes:
            return defer.succeed(None)
        d = self.shipper.connect()
        d.addTimeout(self.prepare_timeout, self.reactor)

        def unreachable(failure):
            self.log.warn("searchdb: database at {url} not ready ({reason}); starting "
                          "anyway, documents are queued from {first} and shipped once "
                          "it answers", url=self.client.safe_url,
                          reason=getattr(failure.value, "reason", None) or str(failure.value),
                          first=self.resume.first_doc)
        return d.addErrback(unreachable)

    # -- IBulkSource ------------------------------------------------------------------

    @defer.inlineCallbacks
    def connect(self):
        """Detect the server, install the template, check what the database
        holds (at start and on every reconnection) and start a backfill of
        what it lacks.  Fires with True when documents were queued before
        the check (the shipper filters them again); raises SearchDBError
        (the shipper retries)."""
        info = yield self.client.detect()
        template = index_template(self.index_prefix, info.template_flavor,
                                  self.documents.object_depth + 2)
        installed = yield self.client.ensure_template(self.template_name, template)
        self.log.info("searchdb: {dist} {number} at {url}; index template {name} {state}",
                      dist=info.distribution, number=info.number, url=self.client.safe_url,
                      name=self.template_name, state="installed" if installed else "exists")
        hint = self.cursor.op + 1 if self.cursor is not None else None
        resume = yield find_resume(self.client, self.index_prefix, hint,
                                   rejected=self.rejected,
                                   floor=self.floor[1:] if self.floor else (0, 0))
        earlier, self.resume = self.resume, resume
        # drop what was queued but is stored
        refilter = bool(self._next_ath or len(self.queue) or len(self.builder))
        self.log.info("searchdb: database holds operations before 1.11.{op} and {count} "
                      "documents from it on; writing from the first it lacks",
                      op=resume.lo_op, count=len(resume.stored))
        self.backfills.check(earlier, resume, self._live_op, self._next_ath)
        yield self.numbering.learn()
        return refilter

    def caught_up(self) -> None:
        """The source of blocks has none more for now (indexer mode,
        nodeapi.peers.upstream): seal the open bulk so it ships now, not
        when full, whatever the blocks' times."""
        if self.running:
            self.builder.seal(self.last_block)
            self.shipper.kick()
            self._idle_check()

    def startService(self) -> None:
        """Twisted calls this after the chain's replay: seal the replay's
        last open bulk (up to :attr:`last_block`) and wake the shipper;
        with nothing pending, ``confirmed_block_num`` becomes
        :attr:`last_block` at once.  Returns at once; shipping continues in the
        background (docs/searchdb-plugin.rst).

        :raises NumberingMismatch: the replay found the database filled
            with another numbering (nodeapi.plugins.searchdb.numbering);
            the node's start fails with its one line."""
        if self.numbering.error is not None:
            raise NumberingMismatch(self.numbering.error)
        super().startService()
        self.builder.seal(self.last_block)
        self.shipper.kick()
        self._idle_check()

    # -- ICheckpointed -------------------------------------------------------------

    checkpoint_key = "searchdb"

    def checkpoint_records(self):
        """No records: the database and the cursor file are the state."""
        return []

    def checkpoint_usable(self, meta: dict) -> bool:
        """Whether the database holds every document of the operations up
        to the checkpoint (its resume point, :meth:`prepare`, is past
        them); otherwise the start replays the whole block log so those
        documents are built."""
        return not self.writes or self.resume.lo_op >= meta["next_op"]

    def restore_checkpoint(self, meta: dict, records: list) -> None:
        """Continue the numbering where the checkpoint's chain stands."""
        self._live_op = meta["next_op"] - 1
        self._next_ath = meta["next_ath"]
        self.numbering.forget_through(self._live_op)

    # -- IBlockConsumer ------------------------------------------------------------

    def block_applied(self, applied) -> None:
        """Number the block's operations, build the documents the database
        lacks and queue them; never raises (failures are logged).  Ignored
        in ``only_query`` mode and after a numbering mismatch."""
        if not self.writes or self.numbering.error is not None:
            return
        try:
            self._block(applied)
        except Exception:
            self.log.failure("searchdb: block {num} not indexed", num=applied.block_num)
        self._log_builder_errors()

    def _log_builder_errors(self) -> None:
        while self.builder.errors:
            self.log.error("searchdb: {error}", error=self.builder.errors.pop(0))

    def _block(self, applied) -> None:
        num = applied.block_num
        pace = self.pace
        if pace.observe(applied):
            self.builder.items_per_bulk = max(1, pace.lines // 2)
            self.builder.seal(num - 1)
            self.log.info("searchdb: {state} at block {num}, bulks of {lines} lines",
                          state="synchronized" if pace.synchronized else "catching up",
                          num=num, lines=pace.lines)
        synced = pace.synchronized
        block_time = applied.time_iso
        index = self.documents.index_for(applied.timestamp)
        resume, builder = self.resume, self.builder
        skip = num <= self.documents.start_after_block  # numbered, not written
        self.numbering.before(num)
        for op in applied.operations:
            if self.numbering.pending and not self.numbering.agrees(op):
                return  # another numbering: nothing more is written
            entries = op.account_history  # numbered by the chain
            if not entries:
                continue
            self._next_ath = entries[-1].n + 1
            m = op.id_num
            self._live_op = m
            if skip:
                continue
            if self.floor is None and self.documents.start_after_block:
                self.floor = (self.documents.start_after_block, m, entries[0][0])
            entries = resume.lacking(m, entries)
            if not entries:
                continue  # stored already
            try:
                items = self.documents.items(entries, op, num, block_time, index)
            except Exception:
                self._build_failed += len(entries)
                for e in entries:
                    self.rejected[e[0]] = m
                self.log.failure("searchdb: documents of 1.11.{m} not built", m=m)
                continue
            builder.add(items, m, num)
        if self.numbering.pending and not self.numbering.after(num):
            return
        self.last_block = num
        if synced:
            builder.seal(num)
        self.shipper.kick()
        self._idle_check()

    def _asset(self, asset_id: str):
        """The visitor's asset lookup on a node: the chain's asset (an
        indexer gives its follower's ``asset_lookup`` instead)."""
        asset = self.chain.state.get(asset_id)
        return (asset["symbol"], asset["precision"]) if asset else None

    def holds(self, m: int, n: int) -> bool:
        """Whether the database holds ``2.9.n`` of ``1.11.m`` (the last check)."""
        return self.resume.holds(m, n)

    def document_rejected(self, m: int, n: int) -> None:
        """Remember ``2.9.n`` (of ``1.11.m``) as refused for good (cursor)."""
        self.rejected[n] = m

    # -- confirmation ----------------------------------------------------------------

    def _idle_check(self) -> None:
        if not len(self.builder) and not len(self.queue) and not self.shipper.busy:
            self.confirmed_block_num = max(self.confirmed_block_num, self.last_block)

    def bulk_done(self, bulk) -> None:
        """A bulk is done (in order): advance the cursor and save it."""
        if bulk.block > self.confirmed_block_num:
            self.confirmed_block_num = bulk.block
        if not len(self.builder) and not len(self.queue):
            self.confirmed_block_num = max(self.confirmed_block_num, self.last_block)
        if not len(bulk):
            return
        self.cursor = Cursor(bulk.last_id, bulk.last_op, self.confirmed_block_num, self.rejected,
                             self.floor)
        try:
            self.cursor.save(self.data_dir, self.index_prefix)
        except OSError as exc:
            self.log.warn("searchdb: cannot write the cursor in {dir}: {error}",
                          dir=self.data_dir, error=exc)

    # -- stop --------------------------------------------------------------------------

    @defer.inlineCallbacks
    def stopService(self):
        """End a running backfill (and start none after, even if the flush
        reconnects), seal the open bulk and flush the queue, waiting at
        most ``stop_timeout`` seconds (with the database up the flush takes
        the bulks' round trips, not the timeout); then close the
        connections.  One line says what is left: 0 documents queued or
        spooled (and the block confirmed), or the documents not shipped,
        the bulks and bytes of them spooled to disk and the reason
        (:meth:`~nodeapi.plugins.searchdb.shipper.BulkShipper.why_left`)."""
        super().stopService()
        if self.numbering.error is not None:
            yield self.client.close()
            return
        # closed: a reconnection during the flush starts no backfill
        self.backfills.close("stopped (the next start rebuilds what is missing)")
        self.builder.seal(self.last_block)
        self._log_builder_errors()
        self.shipper.kick()
        pending = self.queue.items
        if pending:
            self.log.info("searchdb: flushing {count} documents (at most {timeout} s)",
                          count=pending, timeout=self.stop_timeout)
        left = yield self.shipper.drain(self.stop_timeout)
        queue = self.queue
        if left:
            self.log.warn("searchdb: stopped with {count} documents not shipped, {spooled} "
                          "bulks of them ({bytes} bytes) spooled to disk ({reason}); the next "
                          "start rebuilds them from the block log", count=left,
                          spooled=queue.spooled, bytes=queue.spooled_bytes,
                          reason=self.shipper.why_left())
        else:
            self.log.info("searchdb: stopped with 0 documents queued or spooled "
                          "(confirmed up to block {block})", block=self.confirmed_block_num)
        queue.discard()
        yield self.client.close()
