"""The ``searchdb`` history plugin: operation and account history written to
a search database (docs/searchdb-plugin.rst; docs/wire-contract.rst section 8).

Data flow: block -> chain -> :meth:`SearchDBService.block_applied` (ohi/ath
numbering shared with ``account_history``, documents, bulk items) ->
:class:`~nodeapi.history.searchdb.bulk.BulkBuilder` (sealed bulks) ->
:class:`~nodeapi.history.searchdb.spool.BulkQueue` (memory bounded, spills to a file)
-> :class:`~nodeapi.history.searchdb.shipper.BulkShipper` (one ``POST /_bulk``
in flight, retries with backoff) -> the database.

* Start (:meth:`SearchDBService.prepare`, before the chain replays):
  detect the server flavour (``GET /``), install the index template for
  ``<prefix>*`` unless one of that name exists, and ask the database what it
  holds (:func:`~nodeapi.history.searchdb.shipper.find_resume`, helped by the
  cursor file): documents it holds are neither built nor sent again.  If the
  database does not answer, the node starts anyway, documents are queued
  from the cursor on and the shipper does all this once the database
  answers (then dropping queued documents it turns out to hold).
* Bulk size in lines: ``bulk_replay`` while not synchronized,
  ``bulk_sync`` once synchronized.  Synchronized means: a live block
  (not replay) whose time is within :data:`SYNC_WINDOW` seconds of the
  injected clock's ``seconds()``.  When synchronized the open bulk is
  sealed at the end of every block; it is always sealed before its body
  would pass 4 MiB.
* The chain is never blocked nor raised into: building is quick, shipping
  is asynchronous, a failure while building is logged and counted.
* Stop: the open bulk is sealed and the queue flushed, waiting at most
  ``stop_timeout`` seconds; what is left is rebuilt by the next start's
  replay from the database's resume point.
"""

import os
from typing import Any, Optional

from twisted.application import service
from twisted.internet import defer
from twisted.logger import Logger
from zope.interface import implementer

from nodeapi.applied import IBlockConsumer
from nodeapi.history.ids import HistoryNumbering
from nodeapi.history.searchdb.bulk import MAX_BODY, BulkBuilder
from nodeapi.history.searchdb.client import SearchDBClient
from nodeapi.history.searchdb.documents import DocumentBuilder
from nodeapi.history.searchdb.flavors import index_template
from nodeapi.history.searchdb.resume import Cursor, Resume, find_resume
from nodeapi.history.searchdb.shipper import BulkShipper
from nodeapi.history.searchdb.spool import BulkQueue

#: Seconds between a live block's time and the clock within which the node
#: counts as synchronized.
SYNC_WINDOW = 30.0
SPOOL_FILE = "searchdb-spool.bin"


@implementer(IBlockConsumer)
class SearchDBService(service.Service):
    """The searchdb plugin: a Twisted service and an ``IBlockConsumer``
    (register with ``chain.add_consumer`` before the replay).

    :param client: a :class:`~nodeapi.history.searchdb.client.SearchDBClient`.
    :param chain: the :class:`~nodeapi.chain.chain.Chain` (asset symbol and
        precision for the visitor).
    :param data_dir: the node's data directory (cursor and spool files).
    :param index_prefix: ``searchdb-index-prefix``.
    :param visitor: ``searchdb-visitor``.
    :param bulk_replay: ``searchdb-bulk-replay``, lines (2 per document).
    :param bulk_sync: ``searchdb-bulk-sync``, lines.
    :param reactor: timers (``IReactorTime``); the client brings its own.
    :param clock: ``seconds()`` for the synchronized test (default reactor).
    :param max_memory: bytes of sealed bulks kept in memory before the spool
        file is used.
    :param stop_timeout: seconds :meth:`stopService` waits for the flush.
    :param prepare_timeout: seconds :meth:`prepare` waits for the database.
    :ivar history: the ``IAccountHistory`` answered from the database (set
        by :func:`make_searchdb`).
    :ivar confirmed_block_num: the last block whose documents the database
        confirmed (0 before any).
    """

    log = Logger()

    def __init__(self, client: SearchDBClient, chain: Any, data_dir: str, reactor: Any, *,
                 index_prefix: str = "chain-", visitor: bool = False,
                 bulk_replay: int = 10000, bulk_sync: int = 100, clock: Any = None, max_memory: int = 64 << 20, max_body: int = MAX_BODY,
                 stop_timeout: float = 30.0, prepare_timeout: float = 15.0,
                 initial_backoff: float = 0.5, max_backoff: float = 60.0) -> None:
        self.client = client
        self.chain = chain
        self.data_dir = data_dir
        self.index_prefix = index_prefix
        self.bulk_replay, self.bulk_sync = bulk_replay, bulk_sync
        self.reactor = reactor
        self.clock = clock if clock is not None else reactor
        self.stop_timeout = stop_timeout
        self.prepare_timeout = prepare_timeout
        self.history: Optional[Any] = None
        self.template_name = (index_prefix.rstrip("-_.") or "searchdb") + "-template"
        self.numbering = HistoryNumbering()
        self.documents = DocumentBuilder(index_prefix, visitor, self._asset)
        self.queue = BulkQueue(os.path.join(data_dir, SPOOL_FILE), max_memory)
        self.builder = BulkBuilder(self.queue, bulk_replay // 2, max_body)
        self.cursor = Cursor.load(data_dir, index_prefix)
        c = self.cursor
        self.resume = Resume(lo_op=c.op, upto_ath=c.ath) if c else Resume(lo_op=0)
        self._resume_known = False
        self.confirmed_block_num = max(c.block, 0) if c else 0
        self.synchronized = False
        self.last_block = 0
        self._build_failed = 0
        self.shipper = BulkShipper(client, self.queue, self._connect, self._bulk_done,
                                   self._holds, reactor, initial_backoff, max_backoff)

    # -- figures (read by nodeapi.metrics) ---------------------------------------

    @property
    def documents_shipped(self) -> int:
        """Documents the database confirmed (created, or already there)."""
        return self.shipper.documents_shipped

    @property
    def documents_failed(self) -> int:
        """Documents rejected by the database (not 409) or not buildable."""
        return self.shipper.documents_failed + self._build_failed + self.builder.dropped

    @property
    def documents_pending(self) -> int:
        """Documents built but not yet confirmed."""
        return self.queue.items + len(self.builder)

    # -- start -------------------------------------------------------------------

    def prepare(self) -> defer.Deferred:
        """Before the replay: server flavour, template, resume point.  Never
        fails: when the database does not answer within
        ``prepare_timeout`` the node starts anyway (see module text)."""
        d = self._connect()
        d.addTimeout(self.prepare_timeout, self.reactor)

        def ready(_):
            self.shipper.connected = True

        def unreachable(failure):
            self.log.warn("searchdb: database at {url} not ready ({reason}); starting "
                          "anyway, documents are queued from {first} and shipped once "
                          "it answers", url=self.client.safe_url,
                          reason=getattr(failure.value, "reason", None) or str(failure.value),
                          first=self.resume.first_doc)
        return d.addCallbacks(ready, unreachable)

    @defer.inlineCallbacks
    def _connect(self):
        """Detect the server, install the template, learn the resume point
        (once).  Raises SearchDBError (the shipper retries)."""
        info = yield self.client.detect()
        installed = yield self.client.ensure_template(
            self.template_name, index_template(self.index_prefix, info.template_flavor))
        self.log.info("searchdb: {dist} {number} at {url}; index template {name} {state}",
                      dist=info.distribution, number=info.number, url=self.client.safe_url,
                      name=self.template_name, state="installed" if installed else "exists")
        if not self._resume_known:
            resume = yield find_resume(self.client, self.index_prefix, self.cursor)
            self._resume_known = True
            self.resume = resume
            if self.numbering.next_ath or len(self.queue):
                self.shipper.refilter = True  # drop what was queued but is stored
            self.log.info("searchdb: database holds operations before 1.11.{op} and {count} "
                          "documents from it on; writing from the first it lacks",
                          op=resume.lo_op, count=len(resume.stored))

    def startService(self) -> None:
        """Twisted calls this after the chain's replay: seal the replay's
        last open bulk (up to :attr:`last_block`) and wake the shipper;
        with nothing pending, ``confirmed_block_num`` becomes
        :attr:`last_block` at once.  Returns at once; shipping continues in the
        background (docs/searchdb-plugin.rst)."""
        super().startService()
        self.builder.seal(self.last_block)
        self.shipper.kick()
        self._idle_check()

    # -- IBlockConsumer ------------------------------------------------------------

    def block_applied(self, applied) -> None:
        """Number the block's operations, build the documents the database
        lacks and queue them; never raises (failures are logged)."""
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
        synced = (not applied.replay
                  and abs(self.clock.seconds() - applied.timestamp) <= SYNC_WINDOW)
        if synced != self.synchronized:
            self.synchronized = synced
            self.builder.items_per_bulk = max(1, (self.bulk_sync if synced
                                                  else self.bulk_replay) // 2)
            self.builder.seal(num - 1)
            self.log.info("searchdb: {state} at block {num}, bulks of {lines} lines",
                          state="synchronized" if synced else "catching up", num=num,
                          lines=self.bulk_sync if synced else self.bulk_replay)
        block_time = applied.time_iso
        index = self.documents.index_for(applied.timestamp)
        assign, resume, builder = self.numbering.assign, self.resume, self.builder
        for op in applied.operations:
            entries = assign(op)
            if not entries:
                continue
            m = op.id_num
            if m < resume.lo_op:
                continue  # stored already
            resume.passed(m)
            if m <= resume.window_op or entries[0][0] <= resume.upto_ath:
                entries = [e for e in entries if not resume.holds(m, e[0])]
                if not entries:
                    continue
            try:
                items = self.documents.items(entries, op, num, block_time, index)
            except Exception:
                self._build_failed += len(entries)
                self.log.failure("searchdb: documents of 1.11.{m} not built", m=m)
                continue
            builder.add(items, m, num)
        self.last_block = num
        if synced:
            builder.seal(num)
        self.shipper.kick()
        self._idle_check()

    def _asset(self, asset_id: str):
        asset = self.chain.state.get(asset_id) if self.chain is not None else None
        return (asset["symbol"], asset["precision"]) if asset else None

    def _holds(self, m: int, n: int) -> bool:
        return self.resume.holds(m, n)

    # -- confirmation ----------------------------------------------------------------

    def _idle_check(self) -> None:
        if not len(self.builder) and not len(self.queue) and not self.shipper.busy:
            self.confirmed_block_num = max(self.confirmed_block_num, self.last_block)

    def _bulk_done(self, bulk) -> None:
        """A bulk is done (in order): advance the cursor and save it."""
        if bulk.block > self.confirmed_block_num:
            self.confirmed_block_num = bulk.block
        if not len(self.builder) and not len(self.queue):
            self.confirmed_block_num = max(self.confirmed_block_num, self.last_block)
        if not len(bulk):
            return
        self.cursor = Cursor(bulk.last_id, bulk.last_op, self.confirmed_block_num)
        try:
            self.cursor.save(self.data_dir, self.index_prefix)
        except OSError as exc:
            self.log.warn("searchdb: cannot write the cursor in {dir}: {error}",
                          dir=self.data_dir, error=exc)

    # -- stop --------------------------------------------------------------------------

    @defer.inlineCallbacks
    def stopService(self):
        """Seal the open bulk and flush the queue, waiting at most
        ``stop_timeout`` seconds; then close the connections."""
        super().stopService()
        self.builder.seal(self.last_block)
        self._log_builder_errors()
        self.shipper.kick()
        pending = self.queue.items
        if pending:
            self.log.info("searchdb: flushing {count} documents (at most {timeout} s)",
                          count=pending, timeout=self.stop_timeout)
            idle = self.shipper.when_idle()
            idle.addTimeout(self.stop_timeout, self.reactor)
            try:
                yield idle
            except defer.TimeoutError:
                pass
        left = self.queue.items
        self.shipper.close()
        if left:
            self.log.warn("searchdb: stopped with {count} documents not shipped ({reason}); "
                          "the next start rebuilds them from the block log",
                          count=left, reason=self.shipper.last_error or "timeout")
        self.queue.discard()
        yield self.client.close()


def make_searchdb(options, chain, data_dir: str, reactor) -> SearchDBService:
    """The searchdb plugin for parsed ``options`` (``options.searchdb()``:
    node_url, bulk_replay, bulk_sync, visitor, basic_auth, index_prefix):
    a :class:`SearchDBService` whose ``history`` is a
    :class:`nodeapi.history.searchdb.query.SearchDBHistory` over the same
    client.  The caller registers it with ``chain.add_consumer`` and passes
    it to :class:`~nodeapi.service.NodeService` as a plugin."""
    from nodeapi.history.searchdb.query import SearchDBHistory

    opts = options.searchdb()
    client = SearchDBClient(opts["node_url"], opts["basic_auth"], reactor)
    svc = SearchDBService(client, chain, data_dir, reactor, index_prefix=opts["index_prefix"],
                          visitor=opts["visitor"], bulk_replay=opts["bulk_replay"],
                          bulk_sync=opts["bulk_sync"])
    svc.history = SearchDBHistory(client, opts["index_prefix"], chain)
    return svc
