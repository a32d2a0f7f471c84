"""The shipper's retry, backoff and splitting on an injected ``Clock`` and
treq's ``StubTreq`` (no sockets, no sleeping): a database answering 503,
refusing connections, 429 per item, 409, 400/413 for the whole bulk; a
source removed while its bulk is in flight; why a stop leaves documents;
a loop stopped by a corrupt spool file."""

import orjson
import pytest
from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.logger import globalLogPublisher
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET
from treq.testing import StubTreq
from zope.interface.verify import verifyClass

from nodeapi.plugins.searchdb.bulk import BulkBuilder
from nodeapi.plugins.searchdb.client import SearchDBClient
from nodeapi.plugins.searchdb_objects.service import ObjectsService
from nodeapi.plugins.searchdb.service import SearchDBService
from nodeapi.plugins.searchdb.shipper import BulkShipper, IBulkSource
from nodeapi.plugins.searchdb.spool import BulkQueue


class Stand(Resource):
    """OpenSearch 2 stand-in: ``script`` holds what the next ``POST
    /_bulk`` answers: ``("status", code)`` for the whole request, or
    ``("items", {id: status})`` (201 for ids not named); once the script
    is used up every item is 201, or 409 when seen before."""

    isLeaf = True

    def __init__(self, script=()):
        super().__init__()
        self.script = list(script)
        self.bulks = []
        self.stored = set()

    def render_GET(self, request):
        return orjson.dumps({"version": {"number": "2.11.0", "distribution": "opensearch"}})

    def render_POST(self, request):
        body = request.content.read()
        ids = [orjson.loads(line)["create"]["_id"] for line in body.splitlines()[::2]]
        self.bulks.append(ids)
        kind, arg = self.script.pop(0) if self.script else ("items", {})
        if kind == "status":
            request.setResponseCode(arg)
            return orjson.dumps({"error": {"type": "status", "reason": f"HTTP {arg}"}})
        items = []
        for i in ids:
            status = arg.get(i) or (409 if i in self.stored else 201)
            if status in (200, 201):
                self.stored.add(i)
            items.append({"create": {"_id": i, "status": status, "error": {
                "type": "t", "reason": f"status {status}"} if status >= 400 else None}})
        return orjson.dumps({"errors": False, "items": items})


class SlowStand(Stand):
    """A :class:`Stand` that keeps the answer to the bulk starting with
    document ``first`` until :meth:`release` (a bulk in flight)."""

    def __init__(self, first, script=()):
        super().__init__(script)
        self.first = first
        self.held = []

    def render_POST(self, request):
        head = orjson.loads(request.content.read().split(b"\n", 1)[0])["create"]["_id"]
        request.content.seek(0)
        if head == self.first and not self.held:
            self.held.append(request)
            return NOT_DONE_YET
        return super().render_POST(request)

    def release(self):
        """Answer the held bulk (by the script, as any other)."""
        request = self.held.pop()
        request.write(super().render_POST(request))
        request.finish()


def add_bulk(queue, ids):
    """Seal one bulk of documents ``2.9.N`` (N in ``ids``, operation N) into ``queue``."""
    builder = BulkBuilder(queue, len(ids))
    for n in ids:
        builder.add([(n, b'{"create":{"_index":"chain-2016-01","_id":"2.9.%d"}}\n'
                      b'{"x":%d}\n' % (n, n))], n, n + 1)
    builder.seal(ids[-1] + 1)


class Flaky:
    """A treq client whose first ``fail`` requests find no server."""

    def __init__(self, inner, fail):
        self.inner, self.fail = inner, fail

    def request(self, *args, **kw):
        if self.fail:
            self.fail -= 1
            return defer.fail(ConnectionRefusedError("connection refused"))
        return self.inner.request(*args, **kw)


class Rig:
    """A shipper over ``Stand`` with ``count`` single-item bulks queued."""

    def __init__(self, tmp_path, stand, count=4, per_bulk=1, fail=0, max_memory=64 << 20):
        self.clock = Clock()
        self.stand = stand
        self.stub = StubTreq(stand)
        http = Flaky(self.stub, fail)
        self.client = SearchDBClient("http://db.invalid:9200/", "", self.clock, http_client=http)
        self.queue = BulkQueue(str(tmp_path / "spool"), max_memory)
        for first in range(0, count, per_bulk):
            add_bulk(self.queue, list(range(first, min(first + per_bulk, count))))
        self.done, self.rejected, self.connects = [], [], 0
        self.shipper = BulkShipper(self.client, self.queue, self, self.clock,
                                   initial_backoff=1.0, max_backoff=4.0)

    # the shipper's IBulkSource

    def connect(self):
        self.connects += 1
        return self.client.detect().addCallback(lambda _info: False)

    def bulk_done(self, bulk):
        self.done.append(bulk)

    def holds(self, m, n):
        return False

    def document_rejected(self, m, n):
        self.rejected.append(n)


def retries(events):
    return [e["delay"] for e in events if "delay" in e and "retry" in e.get("log_format", "")]


def watch():
    events = []
    globalLogPublisher.addObserver(events.append)
    return events, lambda: globalLogPublisher.removeObserver(events.append)


def test_whole_request_retried_with_backoff(tmp_path):
    events, stop = watch()
    try:
        rig = Rig(tmp_path, Stand([("status", 503), ("status", 503)]), count=2, per_bulk=2)
        rig.shipper.kick()
        assert len(rig.stand.bulks) == 1 and rig.shipper.busy
        first = retries(events)
        assert len(first) == 1 and 1.0 <= first[0] < 2.0  # initial delay plus jitter
        rig.clock.advance(0.99)
        assert len(rig.stand.bulks) == 1  # nothing before the delay
        rig.clock.advance(first[0] - 0.99)
        assert len(rig.stand.bulks) == 2
        second = retries(events)[1]
        assert 2.0 <= second < 3.0  # doubled
        rig.clock.advance(second)
        assert len(rig.stand.bulks) == 3 and not rig.shipper.busy
        assert rig.shipper.documents_shipped == 2 and rig.shipper.retries == 2
        assert rig.shipper.last_error.startswith("status: HTTP 503")
        assert len(rig.done) == 1 and rig.connects == 1
    finally:
        stop()


def test_backoff_is_capped(tmp_path):
    events, stop = watch()
    try:
        rig = Rig(tmp_path, Stand([("status", 500)] * 6), count=1)
        rig.shipper.kick()
        for _ in range(6):
            rig.clock.advance(retries(events)[-1])
        delays = retries(events)
        assert [int(d) for d in delays] == [1, 2, 4, 4, 4, 4]
        assert rig.shipper.documents_shipped == 1 and not rig.shipper.busy
    finally:
        stop()


def test_no_answer_reconnects_first(tmp_path):
    """A connection refused marks the database gone: the next attempt
    runs ``connect`` (version, template and the check) before the bulk."""
    events, stop = watch()
    try:
        rig = Rig(tmp_path, Stand(), count=3, fail=2)
        rig.shipper.kick()  # connect fails (refused)
        assert rig.connects == 1 and not rig.shipper.connected
        rig.clock.advance(retries(events)[-1])  # connect fails again
        assert rig.connects == 2 and rig.stand.bulks == []
        rig.clock.advance(retries(events)[-1])
        assert rig.connects == 3 and rig.shipper.connected
        assert rig.stand.bulks == [["2.9.0"], ["2.9.1"], ["2.9.2"]]
        assert "connection refused" in rig.shipper.last_error
    finally:
        stop()


def test_items_retried_rejected_or_existing(tmp_path):
    """429 items are retried alone after a backoff, 409 counts as stored,
    another 4xx is rejected and reported, the rest is stored once."""
    stand = Stand([("items", {"2.9.1": 429, "2.9.2": 409, "2.9.3": 400})])
    rig = Rig(tmp_path, stand, count=4, per_bulk=4)
    rig.shipper.kick()
    assert rig.stand.bulks == [["2.9.0", "2.9.1", "2.9.2", "2.9.3"]] and rig.shipper.busy
    rig.clock.advance(2.0)
    assert rig.stand.bulks[1] == ["2.9.1"] and not rig.shipper.busy
    assert rig.shipper.documents_shipped == 3 and rig.shipper.documents_existing == 1
    assert rig.shipper.documents_failed == 1 and rig.rejected == [3]


def test_refused_bulk_split_down_to_the_item(tmp_path):
    """413 for the whole bulk: halves are sent at once (no backoff), down
    to one document, which a 400 then rejects."""
    stand = Stand([("status", 413), ("status", 400), ("items", {}), ("status", 400)])
    rig = Rig(tmp_path, stand, count=4, per_bulk=4)
    rig.shipper.kick()
    assert rig.stand.bulks == [["2.9.0", "2.9.1", "2.9.2", "2.9.3"], ["2.9.0", "2.9.1"],
                               ["2.9.0"], ["2.9.1"], ["2.9.2", "2.9.3"]]
    assert rig.shipper.retries == 0 and not rig.shipper.busy
    assert rig.rejected == [1] and rig.shipper.documents_shipped == 3


def test_both_plugins_are_bulk_sources():
    """The history plugin and the objects plugin give their shipper the
    one ``IBulkSource`` it asks (connect, bulk_done, holds,
    document_rejected)."""
    assert verifyClass(IBulkSource, SearchDBService)
    assert verifyClass(IBulkSource, ObjectsService)


@pytest.mark.parametrize("answer, stored", [
    (("items", {}), 2),
    (("items", {"2.9.101": 429}), 1),
    (("status", 503), 0),
])
def test_source_removed_with_its_bulk_in_flight(tmp_path, answer, stored):
    """A backfill's queue removed and discarded while its bulk is in
    flight (nodeapi.plugins.searchdb.backfill ``BackfillControl.end``, as
    the plugin's stop does): whatever that bulk's answer, the loop lives
    on, ships the plugin's queue at once (no backoff, nothing retried of
    the removed bulk, no ``on_done`` for it) and a stop's ``drain``
    returns with nothing left before any time passes on the clock."""
    events, stop = watch()
    try:
        stand = SlowStand("2.9.100", [answer])
        rig = Rig(tmp_path, stand, count=2)
        backfill, backfill_done = BulkQueue(str(tmp_path / "backfill")), []
        add_bulk(backfill, [100, 101])
        rig.shipper.add_source(backfill, backfill_done.append)
        rig.shipper.kick()
        assert stand.held and rig.shipper.busy  # the backfill's bulk, first source
        rig.shipper.remove_source(backfill)
        backfill.discard()
        left = []
        rig.shipper.drain(30.0).addCallback(left.append)
        stand.release()
        rig.stub.flush()
        assert left == [0] and rig.clock.seconds() == 0
        assert stand.bulks == [["2.9.100", "2.9.101"], ["2.9.0"], ["2.9.1"]]
        assert rig.shipper.documents_shipped == stored + 2 and rig.shipper.retries == 0
        assert len(rig.done) == 2 and backfill_done == []
        assert not [e for e in events if "log_failure" in e]
    finally:
        stop()


def test_stop_reason_is_the_current_one(tmp_path):
    """A stop's drain timing out gives why documents are left
    (``why_left``, the plugin's "not shipped" warning): ``timeout`` when
    the database answers, too slowly, even after an earlier outage it
    recovered from (the outage's error stays in ``last_error`` only); the
    error retried when the queue is stuck on it."""
    stand = SlowStand("2.9.2")
    rig = Rig(tmp_path, stand, count=3, fail=1)
    rig.shipper.kick()  # connection refused, retried after 1 to 2 s
    assert "connection refused" in rig.shipper.why_left()
    rig.clock.advance(2.0)
    assert rig.shipper.documents_shipped == 2 and stand.held  # 2.9.2 in flight
    left = []
    rig.shipper.drain(5.0).addCallback(left.append)
    rig.clock.advance(4.9)
    assert left == []
    rig.clock.advance(0.1)
    assert left == [1] and rig.shipper.why_left() == "timeout"
    assert "connection refused" in rig.shipper.last_error

    stuck = Rig(tmp_path / "stuck", Stand([("status", 503)] * 10), count=1)
    stuck.shipper.kick()
    stuck.shipper.drain(5.0).addCallback(left.append)
    stuck.clock.advance(5.0)
    assert left == [1, 1] and stuck.shipper.why_left() == "status: HTTP 503"


def test_loop_stopped_by_a_corrupt_spool(tmp_path):
    """The next bulk cannot be read back (a corrupt spool record,
    ``BulkQueue.peek`` raises ``OSError``): the loop stops, logged once,
    wakes its ``when_idle`` waiters, is not started again by ``kick``,
    and a stop's ``drain`` returns at once with the documents left and
    the error as the reason."""
    events, stop = watch()
    try:
        (tmp_path / "stuck").mkdir()
        stand = SlowStand("2.9.0")
        rig = Rig(tmp_path / "stuck", stand, count=3, max_memory=1)  # 2.9.1, 2.9.2 spooled
        [segment] = rig.queue.segment_paths
        with open(segment, "r+b") as f:
            f.write(b"garbage")
        rig.shipper.kick()
        assert stand.held and rig.shipper.busy
        idle = rig.shipper.when_idle()
        stand.release()
        rig.stub.flush()
        assert idle.called and not rig.shipper.busy
        rig.shipper.kick()
        assert not rig.shipper.busy and stand.bulks == [["2.9.0"]]
        left = []
        rig.shipper.drain(30.0).addCallback(left.append)
        assert left == [2] and rig.clock.seconds() == 0
        assert rig.shipper.why_left().startswith("shipping stopped: spool file")
        assert "is corrupt at 0" in rig.shipper.why_left()
        failures = [e for e in events if "log_failure" in e]
        assert len(failures) == 1 and failures[0]["count"] == 2
    finally:
        stop()
