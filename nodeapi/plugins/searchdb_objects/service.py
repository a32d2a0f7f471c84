"""The ``searchdb-objects`` plugin's service (:class:`ObjectsService`):
current chain objects in ``objects-*`` indexes of the search database, as
bitshares-core's ``es_objects`` plugin writes them
(libraries/plugins/es_objects/es_objects.cpp: ``index_database`` for a
block's created, changed and removed objects, ``sync_db``'s load), shipped
through the searchdb plugin's durable path (a
:class:`~nodeapi.plugins.searchdb.spool.BulkQueue` and a
:class:`~nodeapi.plugins.searchdb.shipper.BulkShipper`).

The kinds are :data:`~nodeapi.plugins.searchdb_objects.settings.KINDS`.
What a document holds, its ``_id`` (``store-updates``: ``<object id>-<block
number>``, where the reference lets the server choose, so a bulk sent again
never doubles a version), when a start loads every object again (in
slices of :data:`SYNC_SLICE` per reactor turn) and the options:
docs/searchdb-plugin.rst "Objects".
"""

import os
from typing import Any, Optional

import orjson
from twisted.application import service
from twisted.internet import defer, task
from twisted.logger import Logger
from zope.interface import implementer

from nodeapi.applied import IBlockConsumer, ICheckpointed
from nodeapi.plugins.searchdb.adaptor import adapt_object
from nodeapi.plugins.searchdb_objects.settings import ObjectKind, ObjectsOptions
from nodeapi.plugins.searchdb.client import SearchDBClient, SearchDBError
from nodeapi.plugins.searchdb.shipper import BulkShipper, IBulkSource
from nodeapi.plugins.searchdb.spool import Bulk, BulkQueue
from nodeapi.protocol.ids import instance_number
from nodeapi.protocol.times import format_time

#: Objects written per reactor turn while synchronizing.
SYNC_SLICE = 500
CURSOR_FILE = "searchdb-objects-cursor.json"
SPOOL_FILE = "searchdb-objects-spool.bin"


def _space_type(oid: str) -> str:
    return oid[:oid.rindex(".")]


@implementer(IBlockConsumer, ICheckpointed, IBulkSource)
class ObjectsService(service.Service):
    """The plugin: a Twisted service and an ``IBlockConsumer`` (register
    with ``chain.add_consumer``; start it after the replay, as
    :func:`nodeapi.modes.node.make_node` attaches it).

    :param client: a :class:`SearchDBClient` of the objects' database.
    :param chain: the :class:`~nodeapi.chain.chain.Chain` (objects, head).
    :param data_dir: cursor and spool files.
    :param reactor: timers, cooperative synchronization, backoff.
    :param options: :class:`ObjectsOptions`.
    :param stop_timeout: seconds a stop waits for the queue to drain.
    :ivar documents_queued: documents (index or delete lines) queued so far.
    :ivar syncs: synchronizations started.
    """

    log = Logger()

    def __init__(self, client: SearchDBClient, chain: Any, data_dir: str, reactor: Any,
                 options: ObjectsOptions, stop_timeout: float = 10.0) -> None:
        self.client = client
        self.chain = chain
        self.data_dir = data_dir
        self.reactor = reactor
        self.options = options
        self.stop_timeout = stop_timeout
        self._enabled = {st: k for st, k in options.kinds.items() if k.enabled}
        self.queue = BulkQueue(os.path.join(data_dir, SPOOL_FILE))
        self.shipper = BulkShipper(client, self.queue, self, reactor)
        self.cursor = self._load_cursor()
        self.documents_queued = 0
        self.syncs = 0
        self._item = 0
        self._confirmed_any = False
        self._sync_task: Optional[task.CooperativeTask] = None
        self._syncing = False
        self._loading = False  # a load is queued and not yet confirmed
        self._sync_last = -1
        # while synchronizing: id -> (block number, time) of the last live
        # block that wrote the object
        self._live_written: dict = {}
        self._live = False

    # -- cursor ------------------------------------------------------------------

    def _load_cursor(self) -> int:
        try:
            with open(os.path.join(self.data_dir, CURSOR_FILE), "rb") as f:
                data = orjson.loads(f.read())
            if data.get("index_prefix") == self.options.index_prefix:
                return int(data["block"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass
        return -1

    def _save_cursor(self, block: int) -> None:
        path = os.path.join(self.data_dir, CURSOR_FILE)
        try:
            with open(path + ".tmp", "wb") as f:
                f.write(orjson.dumps({"block": block, "index_prefix": self.options.index_prefix}))
            os.replace(path + ".tmp", path)
        except OSError as exc:
            self.log.warn("searchdb-objects: cannot write {path}: {error}", path=path,
                          error=str(exc))

    # -- IBulkSource -----------------------------------------------------------------

    def bulk_done(self, bulk: Bulk) -> None:
        """A bulk is done (stored, already there or rejected): advance the
        cursor to its block and save it."""
        self._confirmed_any = True
        if self._loading and not self._syncing and not len(self.queue):
            self._loading = False
        if bulk.block > self.cursor:
            self.cursor = bulk.block
            self._save_cursor(bulk.block)

    # -- documents ---------------------------------------------------------------

    def _index(self, kind: ObjectKind) -> str:
        return self.options.index_prefix + kind.index

    def _lines(self, oid: str, obj: Optional[dict], kind: ObjectKind, block_num: int,
               block_time: str) -> Optional[bytes]:
        """The bulk lines of one object (None: nothing to write)."""
        if obj is None:
            if kind.no_delete:
                return None
            return orjson.dumps({"delete": {"_index": self._index(kind), "_id": oid}}) + b"\n"
        doc = adapt_object(obj, self.options.max_mapping_depth)
        doc["object_id"] = oid
        doc["block_time"] = block_time
        doc["block_number"] = block_num
        doc_id = f"{oid}-{block_num}" if kind.store_updates else oid
        return (orjson.dumps({"index": {"_index": self._index(kind), "_id": doc_id}}) + b"\n"
                + orjson.dumps(doc, option=orjson.OPT_NON_STR_KEYS) + b"\n")

    def _push(self, parts: list, block: int) -> None:
        """Seal ``parts`` (bulk lines of one document each) as one bulk
        completing ``block`` and start shipping."""
        from array import array

        ids, ops, offsets, pos = array("q"), array("q"), array("I"), 0
        for data in parts:
            ids.append(self._item)
            ops.append(block)
            offsets.append(pos)
            pos += len(data)
            self._item += 1
        self.queue.push(Bulk(ids, ops, offsets, b"".join(parts), block))
        self.documents_queued += len(parts)
        self.shipper.kick()

    # -- ICheckpointed: the database is the state ----------------------------------

    checkpoint_key = "searchdb-objects"

    def checkpoint_records(self):
        """No records: the cursor file and the database are the state."""
        return []

    def checkpoint_usable(self, meta: dict) -> bool:
        """Always: the blocks of a start's replay are skipped anyway, and a
        cursor behind the head synchronizes every object after it."""
        return True

    def restore_checkpoint(self, meta: dict, records: list) -> None:
        """Nothing to restore."""

    def block_applied(self, applied) -> None:
        """Queue the enabled kinds' objects the block created, changed or
        removed (module text); never raises into the chain."""
        if applied.replay or not self._live or applied.block_num <= self.options.start_after_block:
            return
        try:
            objects = self.chain.state.objects
            when = applied.time_iso
            parts = []
            for oid in sorted(self.chain.changed_objects_of_last_block(), key=instance_key):
                kind = self._enabled.get(_space_type(oid))
                if kind is not None:
                    if self._syncing:
                        self._live_written[oid] = (applied.block_num, when)
                    data = self._lines(oid, objects.get(oid), kind, applied.block_num, when)
                    if data is not None:
                        parts.append(data)
            # while a synchronization is under way its final marker confirms
            # the blocks applied meanwhile (their bulks are queued before it)
            done = -1 if self._syncing else applied.block_num
            self._sync_last = applied.block_num
            for start in range(0, len(parts), self.options.bulk_sync):
                last = start + self.options.bulk_sync >= len(parts)
                self._push(parts[start:start + self.options.bulk_sync], done if last else -1)
            if not parts and done >= 0:
                if len(self.queue) == 0 and not self.shipper.busy:
                    self.bulk_done(Bulk.empty(done))
                else:
                    self.queue.push(Bulk.empty(done))
                    self.shipper.kick()
        except Exception:
            self.log.failure("searchdb-objects: block {num} not indexed",
                             num=applied.block_num)

    # -- synchronization ---------------------------------------------------------

    def synchronize(self, delete_first: bool) -> defer.Deferred:
        """Write every object of the enabled kinds as of the head (the
        reference's ``sync_db``), emptying first the indexes of kinds that
        delete (all of them with ``delete_first``).  Returns a Deferred
        firing once everything is queued."""
        self.syncs += 1
        self._loading = True  # until the queue drained: no check for lost objects
        head = self.chain.head_block_num
        when = format_time(self.chain.head_block_time)
        self.log.info("searchdb-objects: loading the objects of block {num} into "
                      "{prefix}*", num=head, prefix=self.options.index_prefix)
        return defer.ensureDeferred(self._synchronize(delete_first, head, when))

    async def _synchronize(self, delete_first: bool, head: int, when: str) -> None:
        self._syncing = True
        self._sync_last = head
        self._live_written = {}
        try:
            for kind in self._enabled.values():
                if delete_first or not kind.no_delete:
                    await self._delete_all(kind)
            cooperator = task.Cooperator(scheduler=lambda f: self.reactor.callLater(0, f),
                                         started=True)
            self._sync_task = cooperator.cooperate(self._sync_slices(head, when))
            await self._sync_task.whenDone()
            # every object as of the head is queued, and the blocks applied
            # since are queued before this marker: it completes them all
            self.queue.push(Bulk.empty(max(head, self._sync_last)))
            self.shipper.kick()
        finally:
            self._sync_task = None
            self._syncing = False
            self._live_written = {}

    def _sync_slices(self, head: int, when: str):
        state = self.chain.state
        ids = [oid for st in self._enabled for oid in state.ids_of_type(st + ".")]
        size = self.options.bulk_replay
        for start in range(0, len(ids), SYNC_SLICE):
            parts = []
            for oid in ids[start:start + SYNC_SLICE]:
                obj = state.objects.get(oid)
                if obj is not None:
                    # an object a live block wrote since the synchronization
                    # began is labelled with that block, not the older head
                    num, at = self._live_written.get(oid, (head, when))
                    parts.append(self._lines(oid, obj, self._enabled[_space_type(oid)],
                                             num, at))
            for at in range(0, len(parts), size):
                self._push(parts[at:at + size], -1)
            yield None

    async def _delete_all(self, kind: ObjectKind) -> None:
        """Empty ``kind``'s index; a database that is down is retried with
        the shipper's backoff (0.5 s doubling to 60 s), one line each."""
        path = f"/{self._index(kind)}/_delete_by_query?conflicts=proceed&refresh=true"
        attempt = 0
        while True:
            try:
                await self.client.request_json("POST", path, {"query": {"match_all": {}}},
                                               ok=(200, 404))
                return
            except SearchDBError as exc:
                attempt += 1
                delay = self.shipper.retry_delay(attempt)
                self.log.warn("searchdb-objects: emptying {index}: {reason}; retrying in "
                              "{delay:.1f} s", index=self._index(kind), reason=exc.reason,
                              delay=delay)
                await task.deferLater(self.reactor, delay, lambda: None)

    async def _lost_documents(self) -> bool:
        """True when an enabled kind's index holds no document although
        objects of it were confirmed (the database lost them)."""
        state = self.chain.state
        for kind in self._enabled.values():
            if not state.ids_of_type(kind.space_type + "."):
                continue
            status, content = await self.client.request(
                "GET", f"/{self._index(kind)}/_count", ok=(200, 404))
            if status == 404 or int(orjson.loads(content).get("count", 0)) == 0:
                return True
        return False

    def holds(self, m: int, n: int) -> bool:
        """Never: object documents are not filtered against a resume point."""
        return False

    def document_rejected(self, m: int, n: int) -> None:
        """Nothing to record: the shipper logs and counts the rejection."""

    def connect(self) -> defer.Deferred:
        """Detect the server; when the database lost objects it held,
        synchronize every object again, unless the plugin stops (a
        reconnection during the stop's flush: the next start loads them).
        Fires with None (no refilter)."""
        async def connect():
            await self.client.detect()
            confirmed = self._confirmed_any or self.cursor >= 0  # now or by an earlier run
            if confirmed and not self._loading and await self._lost_documents() and self._live:
                self.log.warn("searchdb-objects: the database lost objects; loading them again")
                self.reactor.callLater(0, self._reload)
        return defer.ensureDeferred(connect())

    def _reload(self) -> None:
        if self._live:  # not once the plugin stops: nothing would ship the objects
            self.synchronize(True)

    # -- service -----------------------------------------------------------------

    def startService(self) -> None:
        """Once the chain is replayed: synchronize if the cursor is behind
        the head, at head 0 (emptying every index, as the reference), or
        with ``sync-db-on-startup``; else check that the database still
        holds the objects it confirmed (a wiped database is loaded again,
        as the operation indexes are backfilled); then follow live blocks."""
        super().startService()
        self.queue.discard()
        self._live = True
        head = self.chain.head_block_num
        if head <= self.options.start_after_block and head != 0:
            return
        if head == 0 or self.cursor < head or self.options.sync_db_on_startup:
            d = self.synchronize(head == 0)
            d.addErrback(lambda f: self.log.failure("searchdb-objects: loading stopped", f))
        elif self.cursor >= 0:
            # the database confirmed the head before: check it still holds the
            # objects (wiped, restarted empty while the node was down)
            self.connect().addErrback(lambda f: self.log.warn(
                "searchdb-objects: database not checked at start ({reason}); checked at "
                "the next connection", reason=f.getErrorMessage()))

    @defer.inlineCallbacks
    def stopService(self):
        """Stop a synchronization, wait up to ``stop_timeout`` seconds for the
        queue to drain, then close; what is left is sent again by the next
        start's synchronization (the cursor stayed behind)."""
        yield defer.maybeDeferred(super().stopService)
        self._live = False
        if self._sync_task is not None:
            self._sync_task.stop()
        left = yield self.shipper.drain(self.stop_timeout)
        if left:
            self.log.warn("searchdb-objects: stopped with {count} documents not shipped "
                          "({reason}); the next start loads the objects again", count=left,
                          reason=self.shipper.why_left())
        self.queue.discard()
        yield self.client.close()


def instance_key(oid: str) -> tuple:
    """Sort key of an object id: space.type, then the instance as a number."""
    return (_space_type(oid), instance_number(oid))
