"""The searchdb plugin service against a real osmem-server (an
OpenSearch-compatible server, started once per session by its pytest
plugin; each test uses its own clone): documents, ids, fields, index names,
the template, resume after restarts during replay and during sync, a
database outage (a loopback TCP proxy that stops listening), rejected
items, the memory bound (spool) and credentials kept out of the logs.

Volumes are small: osmem stores about 800 documents/s."""

import os

import orjson
import pytest
import pytest_twisted
from twisted.internet import defer, reactor
from twisted.logger import formatEvent, globalLogPublisher

from nodeapi.plugins.searchdb.bulk import BulkBuilder
from nodeapi.plugins.searchdb.client import SearchDBClient
from nodeapi.plugins.searchdb.resume import CURSOR_FILE
from nodeapi.plugins.searchdb.spool import BulkQueue
from nodeapi.rpc.jsonrpc import to_wire

from kit.chain import INIT, open_chain
from kit.history import Recorder
from kit.searchdb import (FarClock, Proxy, check_all_once, expected_of, make_service,
                          refuse_january_transfers, replay_through, stored_docs,
                          transfers)
from kit.wait import wait_for
from kit.paths import FIXTURES


pytestmark = pytest.mark.slow

PASSWORD = "s3cret-Pw9"


class Tap:
    """An IBlockConsumer forwarding to ``target`` while set."""

    def __init__(self, target=None):
        self.target = target

    def block_applied(self, applied):
        if self.target is not None:
            self.target.block_applied(applied)


@pytest.fixture
def logs():
    events = []
    globalLogPublisher.addObserver(events.append)
    yield events
    globalLogPublisher.removeObserver(events.append)


def text_of(events):
    return "\n".join(formatEvent(e) or "" for e in events)


@pytest_twisted.inlineCallbacks
def test_documents_replay_then_sync(genesis, history_log, osmem_url, tmp_path):
    path, expected = history_log
    chain = open_chain(genesis, path)
    svc = make_service(osmem_url, chain, str(tmp_path), bulk_replay=10000)
    rec = Recorder()
    chain.add_consumer(svc)
    chain.add_consumer(rec)
    yield svc.prepare()
    assert svc.client.info.distribution == "opensearch" and svc.client.info.doc_type is None
    yield chain.replay()
    # replay bulks of 10000 lines: nothing sealed yet, nothing shipped
    assert svc.documents_shipped == 0 and len(svc.builder) == len(expected)
    svc.startService()  # seals the replay's open bulk
    yield svc.shipper.when_idle()
    assert svc.documents_shipped == len(expected)
    assert svc.confirmed_block_num == chain.head_block_num
    # live and synchronized: every block is flushed at its end (bulk-sync 6
    # lines = 3 documents; a block of 4 transfers gives 8 documents)
    transfers(chain, 4)
    assert svc.pace.synchronized and svc.builder.items_per_bulk == 3 and len(svc.builder) == 0
    yield svc.shipper.when_idle()
    before = len(expected)
    expected = expected_of(rec.blocks)
    assert svc.documents_shipped == len(expected) == before + 8
    assert svc.confirmed_block_num == chain.head_block_num
    yield svc.stopService()
    docs = yield stored_docs(osmem_url)
    assert sorted(docs) == sorted(expected) == list(range(len(expected)))
    for n, (account, m, block_num) in expected.items():
        src = docs[n]["_source"]
        assert src["account_history"]["account"] == account
        assert src["account_history"]["id"] == f"2.9.{n}"
        assert src["operation_id_num"] == m
        assert src["block_data"]["block_num"] == block_num
    # a transfer document: fields per wire-contract section 8
    n = max(expected)
    src = docs[n]["_source"]
    assert src["operation_type"] == 0
    assert src["operation_history"]["op_object"]["amount_"]["asset_id"] == "1.3.0"
    assert src["operation_history"]["op"].startswith("[0,{")
    assert src["block_data"]["trx_id"] and len(src["block_data"]["trx_id"]) == 40
    # index per calendar month of the block time (the chain jumps 40 days)
    indexes = {h["_index"] for h in docs.values()}
    assert indexes == {"chain-2016-01", "chain-2016-02"}
    # the template exists: a new service does not install it again
    again = make_service(osmem_url, chain, str(tmp_path / "x"))
    os.makedirs(again.data_dir, exist_ok=True)
    yield again.client.detect()
    installed = yield again.client.ensure_template("chain-template", {})
    assert installed is False
    yield again.client.close()


class PartialCooperator:
    """Runs only the first ``steps`` steps of a replay (a node stopped in
    the middle of its replay)."""

    def __init__(self, steps):
        self.steps = steps

    def cooperate(self, iterator):
        for _ in range(self.steps):
            next(iterator, None)
        return self

    def whenDone(self):
        return defer.succeed(None)


@pytest.mark.parametrize("cursor", ["kept", "removed"])
@pytest_twisted.inlineCallbacks
def test_restart_during_replay(genesis, history_log, osmem_url, tmp_path, cursor):
    path, expected = history_log
    data = str(tmp_path)
    chain = open_chain(genesis, path)
    first = make_service(osmem_url, chain, data)
    chain.add_consumer(first)
    yield first.prepare()
    yield chain.replay(cooperator=PartialCooperator(6), chunk=1)  # blocks 1..6
    yield wait_for(lambda: first.documents_shipped >= 8)
    first.shipper.close()  # like kill -9: no flush, a bulk may be in flight
    chain.block_log.close()
    shipped_before = first.documents_shipped
    assert 0 < shipped_before < len(expected)
    if cursor == "removed":
        os.remove(os.path.join(data, CURSOR_FILE))
    held = len((yield stored_docs(osmem_url)))
    # restart: a new node over the same data dir replays its block log
    chain = open_chain(genesis, path)
    second = make_service(osmem_url, chain, data)
    yield from replay_through(chain, second)
    # writing began at the first document the database lacked, never before
    assert second.shipper.documents_existing == 0
    assert held + second.documents_shipped == len(expected)
    assert second.confirmed_block_num == chain.head_block_num
    yield check_all_once(osmem_url, expected)


@pytest_twisted.inlineCallbacks
def test_restart_during_sync(genesis, history_log, osmem_url, tmp_path):
    path, _expected = history_log
    data = str(tmp_path)
    chain = open_chain(genesis, path)
    rec = Recorder()
    chain.add_consumer(rec)
    tap = Tap()
    chain.add_consumer(tap)
    first = make_service(osmem_url, chain, data)
    tap.target = first
    yield first.prepare()
    yield chain.replay()
    first.startService()
    transfers(chain, 3)
    transfers(chain, 2)
    yield first.stopService()  # graceful: flushes
    assert first.queue.items == 0
    assert first.confirmed_block_num == chain.head_block_num
    tap.target = None
    # blocks the database has not seen yet (applied while the plugin was off)
    transfers(chain, 2)
    transfers(chain, 3)
    chain.block_log.close()
    expected = expected_of(rec.blocks)
    # restart: replay, then live synchronized blocks
    chain = open_chain(genesis, path)
    rec2 = Recorder()
    chain.add_consumer(rec2)
    second = make_service(osmem_url, chain, data)
    chain.add_consumer(second)
    yield second.prepare()
    assert second.resume.lo_op == first.cursor.op  # the last operation checked by its ids
    yield chain.replay()
    second.startService()
    transfers(chain, 2)
    yield second.stopService()
    chain.block_log.close()
    expected = expected_of(rec2.blocks)
    assert second.shipper.documents_existing == 0
    assert first.documents_shipped + second.documents_shipped == len(expected)
    yield check_all_once(osmem_url, expected)


@pytest_twisted.inlineCallbacks
def test_database_outage(genesis, history_log, osmem_url, tmp_path, logs):
    """Down at start, up, down again: the chain keeps producing, retries are
    logged with their reason, memory stays bounded (the spool file takes
    the rest), nothing is lost; credentials never reach the logs."""
    path, _expected = history_log
    proxy = Proxy(osmem_url)
    chain = open_chain(genesis, path)
    rec = Recorder()
    chain.add_consumer(rec)
    url = proxy.url.replace("http://", f"http://bob:{PASSWORD}@")
    svc = make_service(url, chain, str(tmp_path), max_memory=4000, bulk_replay=4,
                       prepare_timeout=2)
    chain.add_consumer(svc)
    yield svc.prepare()  # database unreachable: the node starts anyway
    assert not svc.shipper.connected
    yield chain.replay()
    svc.startService()
    for _ in range(3):
        transfers(chain, 3)
    yield wait_for(lambda: svc.shipper.retries >= 2)
    assert svc.documents_shipped == 0
    assert svc.queue.spooled > 0 and svc.queue.memory_bytes <= 4000 + 4096
    assert spool_files(tmp_path) == ["searchdb-spool.bin.1"]
    proxy.up()
    yield wait_for(lambda: svc.queue.items == 0 and not svc.shipper.busy)
    assert svc.documents_shipped == len(expected_of(rec.blocks))
    assert spool_files(tmp_path) == []
    # down again while synchronized blocks keep coming
    yield proxy.down()
    retries = svc.shipper.retries
    for _ in range(3):
        transfers(chain, 2)
    yield wait_for(lambda: svc.shipper.retries >= retries + 2)
    assert chain.head_block_num == rec.blocks[-1].block_num
    proxy.up()
    yield svc.stopService()
    yield proxy.down()
    chain.block_log.close()
    expected = expected_of(rec.blocks)
    assert svc.documents_shipped == len(expected) and svc.documents_failed == 0
    yield check_all_once(osmem_url, expected)
    text = text_of(logs)
    assert "searchdb: retry 1 in" in text and "refused" in text.lower()
    assert PASSWORD not in text and "bob:" not in text
    import base64
    assert base64.b64encode(f"bob:{PASSWORD}".encode()).decode() not in text


@pytest_twisted.inlineCallbacks
def test_stop_reason_after_a_recovered_outage(genesis, history_log, osmem_url, tmp_path,
                                              captured):
    """The database is down at start, then answers (everything is
    shipped), then takes a bulk and never answers: the stop, after its
    ``stop_timeout``, warns of the document left with the reason
    ``timeout``, not the connection error of the outage it recovered from
    (nodeapi.plugins.searchdb.shipper ``BulkShipper.why_left``)."""
    path, _expected = history_log
    proxy = Proxy(osmem_url)
    chain = open_chain(genesis, path)
    svc = make_service(proxy.url, chain, str(tmp_path), prepare_timeout=1, stop_timeout=1)
    chain.add_consumer(svc)
    yield svc.prepare()
    yield chain.replay()
    svc.startService()
    yield wait_for(lambda: svc.shipper.retries >= 1)
    assert svc.shipper.last_error
    proxy.up()
    yield wait_for(lambda: svc.queue.items == 0 and not svc.shipper.busy)
    proxy.hang()
    transfers(chain, 1)
    yield wait_for(lambda: svc.shipper.busy)
    yield svc.stopService()
    yield proxy.down()
    chain.block_log.close()
    warnings = [text for _level, text, _e in captured if "not shipped" in text]
    assert len(warnings) == 1 and ("stopped with 2 documents not shipped, 0 bulks of them "
                                   "(0 bytes) spooled to disk (timeout)") in warnings[0]


@pytest_twisted.inlineCallbacks
def test_stop_says_what_is_queued_and_spooled(genesis, history_log, osmem_url, tmp_path,
                                              captured):
    """A stop says in one line how many documents are left: with the
    database down, the documents queued and the bulks and bytes of them
    spooled to disk; with everything shipped, 0 queued or spooled."""
    path, _expected = history_log
    proxy = Proxy(osmem_url)
    proxy.up()
    chain = open_chain(genesis, path)
    svc = make_service(proxy.url, chain, str(tmp_path), max_memory=4000, bulk_replay=4,
                       stop_timeout=0.5)
    chain.add_consumer(svc)
    yield svc.prepare()
    yield chain.replay()
    svc.startService()
    yield wait_for(lambda: svc.queue.items == 0 and not svc.shipper.busy)
    yield proxy.down()
    for _ in range(4):
        transfers(chain, 3)
    yield wait_for(lambda: svc.shipper.retries >= 1 and svc.queue.spooled > 0)
    items, spooled, size = svc.queue.items, svc.queue.spooled, svc.queue.spooled_bytes
    assert items == 4 * 3 * 2 and size > 0
    yield svc.stopService()
    chain.block_log.close()
    lines = [text for _level, text, _e in captured if text.startswith("searchdb: stopped")]
    assert len(lines) == 1
    assert lines[0].startswith(f"searchdb: stopped with {items} documents not shipped, "
                               f"{spooled} bulks of them ({size} bytes) spooled to disk (")
    # everything shipped: one line saying so
    captured.clear()
    chain = open_chain(genesis, path)
    proxy.up()
    again = make_service(proxy.url, chain, str(tmp_path / "again"))
    chain.add_consumer(again)
    yield again.prepare()
    yield chain.replay()
    again.startService()
    yield wait_for(lambda: again.queue.items == 0 and not again.shipper.busy)
    yield again.stopService()
    yield proxy.down()
    chain.block_log.close()
    lines = [text for _level, text, _e in captured if text.startswith("searchdb: stopped")]
    assert lines == [f"searchdb: stopped with 0 documents queued or spooled (confirmed up to "
                     f"block {chain.head_block_num})"]


@pytest_twisted.inlineCallbacks
def test_rejected_items_counted(genesis, history_log, osmem_url, tmp_path, logs):
    """Items the database refuses (not 409) are logged with id and reason,
    counted, and do not stop the others."""
    path, expected = history_log
    yield refuse_january_transfers(osmem_url)
    chain = open_chain(genesis, path)
    rec = Recorder()
    chain.add_consumer(rec)
    svc = make_service(osmem_url, chain, str(tmp_path), bulk_replay=20)
    yield from replay_through(chain, svc)
    jan = {n for b in rec.blocks if b.time_iso < "2016-02" for op in b.operations
           if op.op[0] == 0 for n in range(len(expected))
           if expected[n][1] == op.id_num}
    assert jan and svc.documents_failed == len(jan)
    assert svc.documents_shipped == len(expected) - len(jan)
    docs = yield stored_docs(osmem_url)
    assert sorted(docs) == sorted(set(expected) - jan)
    text = text_of(logs)
    for n in jan:
        assert f"document 2.9.{n} rejected: HTTP 400" in text
    assert "mapper_parsing_exception" in text


def spool_files(directory) -> list:
    """Names of the spool segment files in ``directory``, sorted."""
    return sorted(n for n in os.listdir(str(directory)) if n.startswith("searchdb-spool")
                  or n.startswith("spool"))


def test_spool_keeps_order_and_bound(tmp_path):
    """Bulks beyond the memory bound go to the spool file and come back in
    order; the file is removed once read back."""
    path = str(tmp_path / "spool")
    queue = BulkQueue(path, max_memory=300)
    builder = BulkBuilder(queue, items_per_bulk=2, max_body=100)
    for n in range(12):
        builder.add([(n, b'{"create":{"_id":"2.9.%d"}}\n{"x":%d}\n' % (n, n))], n, n + 1)
    builder.seal(12)
    assert queue.spooled > 0 and queue.memory_bytes <= 300
    assert queue.segment_paths == [path + ".1"] and os.path.exists(path + ".1")
    seen = []
    while queue.peek() is not None:
        bulk = queue.pop()
        seen.extend(bulk.ids)
        assert bulk.body.count(b"\n") == 2 * len(bulk)
    assert seen == list(range(12)) and queue.items == 0
    assert spool_files(tmp_path) == []


def test_bulk_body_cap(tmp_path):
    """A bulk is sealed before its body would pass max_body, whatever the
    line count; ES 6 action lines get the type."""
    queue = BulkQueue(str(tmp_path / "spool"))
    builder = BulkBuilder(queue, items_per_bulk=1000, max_body=250)
    item = b'{"create":{"_index":"chain-2016-01","_id":"2.9.%d"}}\n{"a":"%s"}\n'
    for n in range(10):
        builder.add([(n, item % (n, b"x" * 40))], n, 1)
    builder.seal(1)
    sizes = []
    while queue.peek() is not None:
        bulk = queue.pop()
        sizes.append(len(bulk.body))
        assert len(bulk.body) <= 250
    assert len(sizes) == 5 and sum(sizes) == sum(len(item % (n, b"x" * 40)) for n in range(10))
    assert bulk.typed("data").startswith(b'{"create":{"_type":"data","_index"')


class Sink:
    """A loopback Elasticsearch 6.2.0 stand-in for the error paths: refuses
    bodies over ``limit`` bytes (413), a whole bulk holding ``bad`` (400),
    answers ``busy`` with 429 once, 409 for ids seen before."""

    def __init__(self, limit, bad, busy):
        from twisted.web import resource, server

        self.limit, self.bad, self.busy = limit, bad, set(busy)
        self.stored, self.bodies = [], []
        sink = self

        class Root(resource.Resource):
            isLeaf = True

            def render(self, request):
                return sink.answer(request.method.decode(), request.path.decode(),
                                   request.content.read(), request)
        self.port = reactor.listenTCP(0, server.Site(Root()), interface="127.0.0.1")
        self.url = f"http://127.0.0.1:{self.port.getHost().port}/"

    def answer(self, method, path, body, request):
        import json

        def reply(code, data):
            request.setResponseCode(code)
            return json.dumps(data).encode()
        if path == "/":
            return reply(200, {"version": {"number": "6.2.0"}})
        if path.startswith("/_template/"):
            return reply(404 if method == "GET" else 200, {})
        if path.endswith("/_search"):
            assert "/data/_search" in path
            return reply(200, {"hits": {"total": 0, "hits": []},
                               "aggregations": {"top": {"value": None}}})
        if path != "/_bulk":
            return reply(200, {})
        self.bodies.append(body)
        if len(body) > self.limit:
            return reply(413, {"error": {"type": "too_long", "reason": "body too large"}})
        lines = body.splitlines()
        actions = [json.loads(line)["create"] for line in lines[::2]]
        assert all(a["_type"] == "data" for a in actions)
        ids = [a["_id"] for a in actions]
        if self.bad in ids:
            return reply(400, {"error": {"type": "parse_exception", "reason": "bad"}})
        items = []
        for i in ids:
            if i in self.busy:
                self.busy.discard(i)
                items.append({"create": {"_id": i, "status": 429, "error": {
                    "type": "es_rejected_execution_exception", "reason": "queue full"}}})
            elif i in self.stored:
                items.append({"create": {"_id": i, "status": 409}})
            else:
                self.stored.append(i)
                items.append({"create": {"_id": i, "status": 201}})
        return reply(200, {"errors": False, "items": items})


@pytest_twisted.inlineCallbacks
def test_split_retry_and_typed_paths(genesis, history_log, tmp_path, logs):
    """ES 6: typed action lines and search paths; 413 and 400 split the
    bulk down to the offending document, which alone is rejected; 429
    items are retried alone."""
    path, expected = history_log
    sink = Sink(limit=3000, bad="2.9.7", busy=["2.9.3", "2.9.20"])
    chain = open_chain(genesis, path)
    svc = make_service(sink.url, chain, str(tmp_path), bulk_replay=24, clock=FarClock())
    chain.add_consumer(svc)
    yield svc.prepare()
    yield chain.replay()
    svc.startService()
    yield svc.stopService()
    yield sink.port.stopListening()
    chain.block_log.close()
    assert sorted(sink.stored, key=lambda i: int(i[4:])) == [
        f"2.9.{n}" for n in sorted(expected) if n != 7]
    assert svc.documents_failed == 1 and svc.documents_shipped == len(expected) - 1
    assert svc.shipper.documents_existing == 0
    assert any(len(b) > 3000 for b in sink.bodies)
    text = text_of(logs)
    assert "document 2.9.7 rejected: HTTP 400 parse_exception: bad" in text
    assert "1 of" in text and "es_rejected_execution_exception" in text


@pytest_twisted.inlineCallbacks
def test_searchdb_service_from_options(genesis, history_log, osmem_url, tmp_path, logs):
    """searchdb_service (the plugin's build): options -> service with the
    visitor, the prefix and credentials; ``history`` answers from the
    database like the in-memory account_history plugin."""
    from nodeapi.applied import IAccountHistory
    from nodeapi.config import Options
    from nodeapi.plugins.account_history.history import AccountHistory
    from nodeapi.plugins.searchdb.plugin import searchdb_service

    path, expected = history_log
    options = Options()
    options.parseOptions(["--plugins", "searchdb", "--searchdb-node-url", osmem_url,
                          "--searchdb-visitor", "true", "--searchdb-index-prefix", "hist-",
                          "--searchdb-basic-auth", f"carol:{PASSWORD}",
                          "--searchdb-bulk-replay", "30", "--data-dir", str(tmp_path)])
    chain = open_chain(genesis, path)
    svc = searchdb_service(options, chain, str(tmp_path), reactor)
    assert IAccountHistory.providedBy(svc.history)
    assert svc.client.has_auth and PASSWORD not in svc.client.safe_url
    assert svc.builder.items_per_bulk == 15 and svc.template_name == "hist-template"
    memory = AccountHistory()
    chain.add_consumer(memory)
    chain.add_consumer(svc)
    yield svc.prepare()
    yield chain.replay()
    svc.startService()
    yield svc.stopService()
    chain.block_log.close()
    docs = yield stored_docs(osmem_url, "hist-")
    assert sorted(docs) == sorted(expected)
    transfer = next(d["_source"] for d in docs.values() if d["_source"]["operation_type"] == 0)
    extra = transfer["additional_data"]
    assert extra["fee_data"]["asset_name"] == "TEST"
    assert extra["transfer_data"]["to"] == transfer["operation_history"]["op_object"]["to"]
    for account in ["1.2.6", INIT[1]]:
        got = yield defer.maybeDeferred(svc.history.get_account_history, account, 0, 100, 0)
        assert to_wire(got) == to_wire(memory.get_account_history(account, 0, 100, 0))
    assert PASSWORD not in text_of(logs)


def test_spool_failure_counted(tmp_path):
    """A bulk the spool file cannot take is counted and described, never
    raised into the chain."""
    queue = BulkQueue(str(tmp_path / "missing" / "spool"), max_memory=150)
    builder = BulkBuilder(queue, items_per_bulk=1)
    for n in range(3):
        builder.add([(n, b'{"create":{"_id":"2.9.%d"}}\n{"x":%d,"pad":"%s"}\n'
                      % (n, n, b"p" * 60))], n, 1)
    assert len(queue) == 1 and builder.dropped == 2
    assert builder.errors[0].startswith("2.9.1..2.9.1 not queued:")


def _fixture_doc(name):
    path = os.path.join(FIXTURES, "es", f"fixture_data__{name}.json")
    with open(path) as f:
        data = orjson.loads(f.read())
    return data[0] if isinstance(data, list) else data


def _kinds(doc, path=""):
    """{path: JSON kind} of every leaf (lists whole, nulls as None)."""
    if isinstance(doc, dict) and doc:
        out = {}
        for k, v in doc.items():
            out.update(_kinds(v, f"{path}.{k}"))
        return out
    kind = ("bool" if isinstance(doc, bool) else "number" if isinstance(doc, (int, float))
            else None if doc is None else type(doc).__name__)
    return {path: kind}


@pytest_twisted.inlineCallbacks
def test_reference_documents_through_osmem(genesis, history_log, osmem_url, tmp_path):
    """Documents stored by the real server (visitor on): transfers and fills
    have every field of the real mainnet documents with the same JSON
    kinds, plus bitshares-core 7.x's operation_result_object and the
    visitor's fee/transfer/fill data, and the template maps fill_data."""
    path, expected = history_log
    chain = open_chain(genesis, path)
    yield from replay_through(chain, make_service(osmem_url, chain, str(tmp_path),
                                                  visitor=True, bulk_replay=400))
    docs = yield stored_docs(osmem_url)
    assert sorted(docs) == sorted(expected)
    sources = [d["_source"] for d in docs.values()]
    for op_type, name in ((0, "transfer"), (4, "trade")):
        ours = next(s for s in sources if s["operation_type"] == op_type)
        real, mine = _kinds(_fixture_doc(name)), _kinds(ours)
        for field, kind in real.items():
            if field != ".operation_history.op":  # "" in the real ones (operation-string off)
                assert mine[field] == kind, field
        assert mine[".operation_history.operation_result_object.which"] == "number"
        assert set(ours["additional_data"]) == {"fee_data", "transfer_data", "fill_data"}
    fill = next(s for s in sources if s["operation_type"] == 4)["additional_data"]["fill_data"]
    assert fill["pays_amount"] > 0 and fill["fill_price_units"] > 0
    assert isinstance(fill["is_maker"], bool)
    client = SearchDBClient(osmem_url, "", reactor)
    info = yield client.detect()
    template = yield client.request_json("GET", info.template_path + "chain-template")
    yield client.close()
    assert "fill_data" in orjson.dumps(template).decode()


@pytest_twisted.inlineCallbacks
def test_start_after_block_and_switches_through_osmem(genesis, history_log, osmem_url,
                                                      tmp_path):
    """searchdb-start-after-block N: only blocks after N are written (ids
    keep their numbers), a restart resumes after the stored ones;
    operation-object / operation-string off: op_object and
    operation_result_object null, op ""."""
    path, expected = history_log
    start = sorted({b for _a, _m, b in expected.values()})[3]
    chain = open_chain(genesis, path)
    switches = {"start_after_block": start, "operation_object": False,
                "operation_string": False}
    yield from replay_through(chain, make_service(osmem_url, chain, str(tmp_path),
                                                  document_options=switches))
    docs = yield stored_docs(osmem_url)
    assert sorted(docs) == sorted(n for n, (_a, _m, b) in expected.items() if b > start)
    assert len(docs) < len(expected)
    for d in docs.values():
        oh = d["_source"]["operation_history"]
        assert oh["op"] == "" and oh["op_object"] is None
        assert oh["operation_result_object"] is None
    # a restart resumes after what is stored (the cursor keeps the first
    # operation and document after block N): no backfill, nothing re-sent
    chain = open_chain(genesis, path)
    again = make_service(osmem_url, chain, str(tmp_path), document_options=switches)
    chain.add_consumer(again)
    yield again.prepare()
    assert again.floor == (start, min(m for _a, m, _b in (expected[n] for n in docs)),
                           min(docs))
    assert again.resume.lo_op == max(m for _a, m, _b in expected.values())
    assert again.backfills.running is None
    yield chain.replay()
    again.startService()
    yield again.stopService()
    chain.block_log.close()
    assert again.documents_shipped == 0
    assert sorted((yield stored_docs(osmem_url))) == sorted(docs)


@pytest_twisted.inlineCallbacks
def test_modes_from_options(genesis, history_log, osmem_url, tmp_path):
    """searchdb-mode: all writes and answers from the database; only_query
    never writes (no template, blocks ignored) and answers from the
    database; only_save writes and leaves the history API to the node."""
    from nodeapi.config import Options
    from nodeapi.plugins.searchdb.plugin import searchdb_service

    path, expected = history_log

    def service(mode, sub):
        options = Options()
        options.parseOptions(["--plugins", "searchdb", "--searchdb-node-url", osmem_url,
                              "--searchdb-mode", mode, "--data-dir", str(tmp_path / sub)])
        chain = open_chain(genesis, path)
        return chain, searchdb_service(options, chain, str(tmp_path / sub), reactor)

    chain, query = service("only_query", "q")
    assert query.writes is False and query.history is not None
    yield from replay_through(chain, query)
    query.block_applied(None)  # ignored, never raises
    client = SearchDBClient(osmem_url, "", reactor)
    info = yield client.detect()
    yield client.request("GET", info.template_path + "chain-template", ok=(404,))
    yield client.close()
    assert (yield stored_docs(osmem_url)) == {}

    chain, save = service("only_save", "s")
    assert save.writes is True and save.history is None
    yield from replay_through(chain, save)
    assert sorted((yield stored_docs(osmem_url))) == sorted(expected)

    chain, again = service("1", "q2")  # the reference's number of only_query
    yield from replay_through(chain, again)
    got = yield defer.maybeDeferred(again.history.get_account_history, INIT[1], 0, 5, 0)
    assert len(got) == 5
    got = yield defer.maybeDeferred(query.history.get_account_history, INIT[1], 0, 5, 0)
    assert len(got) == 5
