"""Shipping sealed bulks to the search database.

One bulk in flight at a time (txacme-style service loop over an injected
reactor), taken from the first of its sources that holds one: a backfill's
queue (documents the database lost, rebuilt from the block log) before the
plugin's own queue, each oldest first.  Outcomes (docs/wire-contract.rst section 8; the failures of
the reference node to avoid):

* per item ``201``/``200``: stored; ``409`` (version conflict, document
  already exists): stored already, success; ``429`` and ``5xx``: the items
  are retried; any other status: the item is rejected, logged with its
  ``2.9.N`` and the server's reason, and counted in ``documents_failed``.
* whole request: no answer, ``5xx``, ``401``/``403``/``408``/``429`` and
  other unexpected statuses are retried with exponential backoff, each retry
  logged with the reason (never credentials: the client's messages carry
  only :attr:`SearchDBClient.safe_url`); ``400``/``413``/``422`` split the
  bulk in halves down to the offending item, which is then rejected.

A source removed while its bulk is in flight (a backfill ended, e.g. by the
plugin's stop) no longer owns that bulk: its answer is counted (documents
stored, rejected) but leaves the removed queue alone (it may be discarded
already), calls no ``on_done``, retries nothing and splits nothing; the
loop goes on at once with the remaining sources, so a stop's
:meth:`BulkShipper.drain` still flushes the plugin's queue.

Any other exception in the loop (an ``OSError`` reading a corrupt spool
record, a bug) stops the shipping for good: it is logged once, the
:meth:`BulkShipper.when_idle` waiters are woken (a stop's drain returns at
once with the documents left) and :meth:`BulkShipper.kick` starts nothing
more (the plugin's next start writes the unshipped documents again).
"""

from typing import Callable, Optional

from twisted.application.internet import backoffPolicy
from twisted.internet import defer
from twisted.internet.task import deferLater
from twisted.logger import Logger
from zope.interface import Interface

from nodeapi.plugins.searchdb.client import SearchDBClient, SearchDBError
from nodeapi.plugins.searchdb.spool import BulkQueue

#: Bulk statuses that split the bulk instead of retrying it as a whole.
SPLIT_STATUSES = (400, 413, 422)


class IBulkSource(Interface):
    """What a :class:`BulkShipper` asks of the plugin whose queue it ships
    (the history plugin :class:`~nodeapi.plugins.searchdb.service.SearchDBService`,
    the objects plugin :class:`~nodeapi.plugins.searchdb_objects.service.SearchDBObjects`)."""

    def connect():
        """Ready the database (server version, template, what it holds):
        run before the first bulk and after every "no answer".  Returns a
        Deferred firing with True when the bulks already queued must be
        filtered again through :meth:`holds` (a resume point learnt after
        they were built), false otherwise; failing with
        :class:`~nodeapi.plugins.searchdb.client.SearchDBError` to be
        retried after a backoff."""

    def bulk_done(bulk):
        """A bulk of the source's queue is completely done (stored, already
        there, or rejected), in order."""

    def holds(m, n):
        """True when the database holds document ``2.9.n`` of operation
        ``1.11.m`` (queued bulks drop such documents while a refilter is
        due)."""

    def document_rejected(m, n):
        """The database rejected document ``2.9.n`` of operation ``1.11.m``
        for good."""


class _Retry(Exception):
    """Internal: the head bulk must be retried after a backoff."""


class BulkShipper:
    """Drains a :class:`~nodeapi.plugins.searchdb.spool.BulkQueue` into the database.

    :param client: the :class:`SearchDBClient`.
    :param queue: sealed bulks, oldest first.
    :param source: the :class:`IBulkSource` ``queue`` belongs to.
    :param reactor: timers (backoff).
    :param initial_backoff: first retry delay in seconds; doubles up to
        ``max_backoff``.
    :ivar connected: True once :meth:`connect` succeeded, until a request
        gets no answer.
    :ivar refilter: True while the queued bulks are to be filtered through
        ``source.holds`` (set by a connect, cleared once the queues are empty).
    :ivar documents_shipped: documents the database confirmed (201 or 409).
    :ivar documents_existing: the part of those that were there already (409).
    :ivar documents_failed: documents rejected for another reason.
    :ivar retries: retries done (whole or partial bulks).
    :ivar last_error: the reason of the latest retry, kept after a recovery.
    :ivar error: the reason of the retry the queue is stuck on: set by
        every failed attempt, cleared once a bulk gets an answer that is
        not retried ("" while the shipping goes well).
    :ivar broken: what stopped the loop for good (module text), "" while
        it works.
    """

    log = Logger()

    def __init__(self, client: SearchDBClient, queue: BulkQueue, source: IBulkSource, reactor,
                 initial_backoff: float = 0.5, max_backoff: float = 60.0) -> None:
        self.client = client
        self.queue = queue
        self.source = source
        self._sources = [(queue, source.bulk_done)]
        self.reactor = reactor
        self._policy = backoffPolicy(initial_backoff, max_backoff, 2.0)
        self.connected = False
        self.refilter = False
        #: while True nothing is shipped (the plugin's numbering check,
        #: nodeapi.plugins.searchdb.numbering, is not done yet)
        self.held = False
        self.documents_shipped = 0
        self.documents_existing = 0
        self.documents_failed = 0
        self.retries = 0
        self.last_error = ""
        self.error = ""
        self.broken = ""
        self._loop_d: Optional[defer.Deferred] = None
        self._sleep: Optional[defer.Deferred] = None
        self._closed = False
        self._idle: list = []

    def hold(self, held: bool) -> None:
        """Hold the shipping (True) or let it go on (False, and kick): the
        history plugin holds it while its operation numbering is checked
        (:class:`~nodeapi.plugins.searchdb.numbering.NumberingGuard`)."""
        self.held = held
        if not held:
            self.kick()

    def retry_delay(self, attempt: int) -> float:
        """Seconds to wait after ``attempt`` failures in a row (from 1): the
        shipper's backoff, for other waits on the same database."""
        return self._policy(attempt)

    def connect(self) -> defer.Deferred:
        """Run ``source.connect()`` (module text): on success the shipper
        is :attr:`connected` and, when the source says so, filters the
        queued bulks again (:attr:`refilter`).  The Deferred fires with
        None or fails as ``source.connect()`` does; cancelling it cancels
        that."""
        def connected(refilter):
            self.connected = True
            if refilter:
                self.refilter = True
        return defer.maybeDeferred(self.source.connect).addCallback(connected)

    @property
    def busy(self) -> bool:
        """True while the loop runs (a bulk in flight or a backoff)."""
        return self._loop_d is not None

    def add_source(self, queue: BulkQueue, on_done: Callable) -> None:
        """Ship the bulks of ``queue`` before those of the sources added
        earlier (``on_done(bulk)`` after each); see :meth:`remove_source`."""
        self._sources.insert(0, (queue, on_done))

    def remove_source(self, queue: BulkQueue) -> None:
        """Stop shipping from ``queue``; the caller may discard it at once.
        A bulk of it in flight still completes (its documents are counted)
        but touches ``queue`` no more, its ``on_done`` is not called and
        what it leaves to retry is dropped (module text)."""
        self._sources = [s for s in self._sources if s[0] is not queue]

    def _removed(self, queue: Optional[BulkQueue]) -> bool:
        """True when ``queue`` (the source of the bulk just shipped) was
        removed while that bulk was in flight."""
        return queue is not None and all(q is not queue for q, _done in self._sources)

    def _pending(self) -> int:
        return sum(len(q) for q, _done in self._sources)

    def _head(self) -> tuple:
        """``(queue, on_done, bulk)`` of the first source holding a bulk, or
        ``(None, None, None)``."""
        for queue, on_done in self._sources:
            bulk = queue.peek()
            if bulk is not None:
                return queue, on_done, bulk
        return None, None, None

    def kick(self) -> None:
        """Start the loop unless it runs, is closed, :attr:`broken` or
        :attr:`held`, or nothing is queued."""
        if (self._loop_d is None and not self._closed and not self.broken and not self.held
                and self._pending()):
            d = self._loop()  # never fails: the loop logs what stops it
            if not d.called:  # else it finished synchronously (all filtered)
                self._loop_d = d

    def when_idle(self) -> defer.Deferred:
        """A Deferred firing (with None) once the queue is empty and nothing
        is in flight, or once the loop is :attr:`broken` (the queue may
        then hold bulks)."""
        if self._loop_d is None and (self.broken or not self._pending()):
            return defer.succeed(None)
        d = defer.Deferred()
        self._idle.append(d)
        return d

    @defer.inlineCallbacks
    def drain(self, timeout: float):
        """Wait at most ``timeout`` seconds for the queue to empty (a stop's
        flush), then :meth:`close`; does not wait while :attr:`held`.  The
        Deferred fires with the number of documents left unsent."""
        if self.queue.items and not self.held:
            idle = self.when_idle()
            idle.addTimeout(timeout, self.reactor)
            try:
                yield idle
            except defer.TimeoutError:
                pass
        left = self.queue.items
        self.close()
        return left

    def why_left(self) -> str:
        """Why documents are left after a :meth:`drain` (a stop's warning):
        what stopped the loop (:attr:`broken`), else the error of the retry
        the queue is stuck on (:attr:`error`), else ``"held"`` (the
        numbering check was not done) or ``"timeout"`` (the database
        answered, too slowly)."""
        return self.broken or self.error or ("held" if self.held else "timeout")

    def close(self) -> None:
        """Stop the loop now (cancel a backoff wait and the bulk in flight)."""
        self._closed = True
        if self._sleep is not None:
            self._sleep.cancel()
        if self._loop_d is not None:
            self._loop_d.cancel()

    @defer.inlineCallbacks
    def _loop(self):
        attempt = 0
        try:
            while not self._closed and not self.held:
                queue = None  # the source of the bulk shipped in this turn
                if self.connected:
                    queue, on_done, bulk = self._head()
                    if bulk is None:
                        break
                try:
                    if not self.connected:
                        yield self.connect()
                        continue  # the check may have added or filtered bulks
                    yield self._ship(queue, on_done, bulk)
                    attempt = 0
                    self.error = ""
                    continue
                except SearchDBError as exc:
                    if exc.status is None:
                        self.connected = False
                    if self._removed(queue):
                        continue  # nothing to retry nor split (module text)
                    if self.connected and exc.status in SPLIT_STATUSES:
                        self.error = ""  # answered: the bulk is split, not retried
                        self._refused(queue, on_done, bulk, exc)
                        continue
                    reason = exc.reason
                except _Retry as exc:
                    if self._removed(queue):
                        continue
                    reason = str(exc)
                if self._closed:
                    break
                delay = self._policy(attempt)
                attempt += 1
                self.retries += 1
                self.last_error = self.error = reason
                self.log.warn("searchdb: retry {attempt} in {delay:.1f} s ({count} documents "
                              "queued, {url}): {reason}", attempt=attempt, delay=delay,
                              count=sum(q.items for q, _done in self._sources), url=self.client.safe_url, reason=reason)
                self._sleep = deferLater(self.reactor, delay, lambda: None)
                try:
                    yield self._sleep
                finally:
                    self._sleep = None
        except defer.CancelledError:
            pass
        except Exception as exc:
            self.broken = f"shipping stopped: {exc}"
            self.log.failure("searchdb: shipping stopped ({count} documents queued, {url})",
                             count=sum(q.items for q, _done in self._sources),
                             url=self.client.safe_url)
        finally:
            self._loop_d = None
            pending = self._pending()
            if not pending:
                self.refilter = False
            if self.broken or not pending:
                idle, self._idle = self._idle, []
                for d in idle:
                    d.callback(None)

    def _refused(self, queue: BulkQueue, on_done: Callable, bulk, exc: SearchDBError) -> None:
        """The server refused the request as a whole (400/413/422)."""
        if len(bulk) > 1:
            self.log.warn("searchdb: bulk of {count} documents refused ({reason}); "
                          "splitting it", count=len(bulk), reason=exc.reason)
            queue.replace_head(bulk.split())
            return
        self.documents_failed += 1
        self.log.error("searchdb: document 2.9.{n} rejected: HTTP {status} {reason}",
                       n=bulk.ids[0], status=exc.status, reason=exc.reason)
        self.source.document_rejected(bulk.ops[0], bulk.ids[0])
        on_done(queue.pop())

    @defer.inlineCallbacks
    def _ship(self, queue: BulkQueue, on_done: Callable, bulk):
        if self.refilter:
            kept = bulk.without(self.source.holds)
            if kept is not bulk:
                queue.replace_head([kept])
                bulk = kept
        if not len(bulk):
            on_done(queue.pop())
            return
        doc_type = self.client.info.doc_type if self.client.info else None
        answer = yield self.client.bulk(bulk.typed(doc_type) if doc_type else bulk.body)
        items = answer["items"]
        removed = self._removed(queue)  # while in flight: the queue is not ours (module text)
        if len(items) != len(bulk) and not removed:
            raise _Retry(f"bulk answer has {len(items)} items for {len(bulk)} sent")
        retry, retry_reason = [], ""
        for i, item in enumerate(items):
            result = next(iter(item.values())) if isinstance(item, dict) and item else {}
            status = result.get("status", 0) if isinstance(result, dict) else 0
            if status in (200, 201) or (status == 404 and "delete" in item):
                # a delete of a document the index does not hold is done too
                self.documents_shipped += 1
            elif status == 409:
                self.documents_shipped += 1
                self.documents_existing += 1
            elif status == 429 or status >= 500:
                retry.append(i)
                retry_reason = f"item 2.9.{bulk.ids[i]}: HTTP {status} {_item_reason(result)}"
            else:
                self.documents_failed += 1
                self.log.error("searchdb: document 2.9.{n} rejected: HTTP {status} {reason}",
                               n=bulk.ids[i], status=status, reason=_item_reason(result))
                self.source.document_rejected(bulk.ops[i], bulk.ids[i])
        if removed:
            return
        if retry:
            queue.replace_head([bulk.subset(retry)])
            raise _Retry(f"{len(retry)} of {len(bulk)} documents to retry ({retry_reason})")
        on_done(queue.pop())


def _item_reason(result) -> str:
    err = result.get("error") if isinstance(result, dict) else None
    if isinstance(err, dict):
        return f"{err.get('type', 'error')}: {err.get('reason', '')}"[:300]
    return str(err or "")[:300]
