"""Prometheus metrics: scraped over a real loopback port after real calls."""

import pytest
import pytest_twisted
import treq
from twisted.internet import reactor

from nodeapi.metrics import Metrics
from nodeapi.rpc.access import ApiAccess

from kit.chain import produce
from kit.rpc import ws_connect
from kit.history import Recorder
from kit.searchdb import (Proxy, expected_of, make_service, refuse_january_transfers,
                          transfers)
from kit.chain import open_chain
from kit.site import RunningSite, make_node
from kit.wait import wait_for


@pytest_twisted.inlineCallbacks
def test_metrics_count_blocks_calls_and_connections(chain):
    metrics = Metrics(chain)
    chain.add_consumer(metrics)
    produce(chain, 3)
    from kit.daemon import ACCESS

    server = RunningSite(make_node(chain), ApiAccess.load(ACCESS), metrics=metrics)
    port = reactor.listenTCP(0, metrics.site(), interface="127.0.0.1")
    try:
        ws = yield ws_connect(server.port)
        anonymous = yield ws_connect(server.port)
        assert (yield ws.call(1, "login", "bytemaster", "supersecret")) is True
        yield ws.call(0, "get_chain_id")
        yield ws.call(0, "get_chain_id")
        yield ws.request(0, "no_such_function")
        resp = yield treq.get(f"http://127.0.0.1:{port.getHost().port}/metrics")
        text = (yield resp.text())
        ws.dropConnection()
        anonymous.dropConnection()
    finally:
        yield server.stop()
        yield port.stopListening()
    lines = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
             for line in text.splitlines() if line and not line.startswith("#")}
    assert lines["nodeapi_head_block_number"] == 3
    assert lines["nodeapi_blocks_applied_total"] == 3
    assert lines['nodeapi_rpc_calls_total{api="database",function="get_chain_id",outcome="ok"}'] == 2
    assert lines['nodeapi_rpc_calls_total{api="unresolved",function="unresolved",'
                 'outcome="error"}'] == 1
    assert lines["nodeapi_websocket_connections"] == 2
    assert lines["nodeapi_websocket_logged_in_sessions"] == 1  # bytemaster
    assert lines["nodeapi_rpc_connections"] == 2  # the WebSockets' TCP connections
    assert lines["nodeapi_block_subscribers"] == 0
    # without the witness plugin there is nothing produced to count
    assert not any(name.startswith("nodeapi_blocks_produced") for name in lines)
    # every answered call is timed; the error is counted by its JSON-RPC code
    assert lines['nodeapi_rpc_call_duration_seconds_count{api="database",'
                 'function="get_chain_id"}'] == 2
    assert lines['nodeapi_rpc_call_duration_seconds_bucket{api="database",'
                 'function="get_chain_id",le="+Inf"}'] == 2
    errors = {k: v for k, v in lines.items() if k.startswith("nodeapi_rpc_errors_total")}
    assert list(errors.values()) == [1]
    [series] = errors
    assert 'api="unresolved"' in series and 'code="' in series and 'code=""' not in series
    # process metrics (prometheus_client's process collector, /proc)
    assert lines["process_resident_memory_bytes"] > 10 * 1024 * 1024
    assert lines["process_open_fds"] >= 3 and lines["process_cpu_seconds_total"] > 0
    assert lines["nodeapi_head_block_age_seconds"] >= 0
    assert lines["nodeapi_last_irreversible_block_number"] <= 3
    assert 0 < lines["nodeapi_witness_participation_ratio"] <= 1
    assert lines["nodeapi_recently_missed_blocks"] >= 0
    # no "_created" twin of any counter or histogram
    assert not [name for name in lines if "_created" in name]


def scrape(port):
    """``GET /metrics`` on ``port`` -> {series: value}."""
    d = treq.get(f"http://127.0.0.1:{port}/metrics")
    d.addCallback(lambda resp: resp.text())
    return d.addCallback(lambda text: {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines() if line and not line.startswith("#")})


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_searchdb_metrics_shipping_outage_and_rejects(
        genesis, history_log, osmem_url, tmp_path):  # noqa: F811
    """searchdb series against osmem: documents shipped/failed and lag in
    blocks after the replay, during a database outage (lag grows by the
    blocks produced meanwhile, nothing more shipped) and after it."""
    path, expected = history_log
    # the operator's mapping refuses January's transfer documents (HTTP 400 items)
    yield refuse_january_transfers(osmem_url)
    proxy = Proxy(osmem_url)
    proxy.up()
    chain = open_chain(genesis, path)
    rec = Recorder()
    chain.add_consumer(rec)
    svc = make_service(proxy.url, chain, str(tmp_path), bulk_replay=20)
    chain.add_consumer(svc)
    metrics = Metrics(chain, {"searchdb": svc})
    listening = reactor.listenTCP(0, metrics.site(), interface="127.0.0.1")
    port = listening.getHost().port
    try:
        before = yield scrape(port)
        assert before["nodeapi_searchdb_documents_shipped_total"] == 0
        assert before["nodeapi_searchdb_documents_failed_total"] == 0
        assert before["nodeapi_searchdb_lag_blocks"] == chain.head_block_num == 0
        yield svc.prepare()
        yield chain.replay()
        svc.startService()
        yield svc.shipper.when_idle()
        jan = {n for b in rec.blocks if b.time_iso < "2016-02" for op in b.operations
               if op.op[0] == 0 for n, (_a, m, _b) in expected.items() if m == op.id_num}
        assert jan
        got = yield scrape(port)
        assert got["nodeapi_searchdb_documents_shipped_total"] == len(expected) - len(jan)
        assert got["nodeapi_searchdb_documents_failed_total"] == len(jan)
        assert got["nodeapi_searchdb_lag_blocks"] == 0
        assert got["nodeapi_head_block_number"] == chain.head_block_num > 0
        # outage: three synchronized blocks (2 transfers each) wait in the queue
        yield proxy.down()
        head = chain.head_block_num
        for _ in range(3):
            transfers(chain, 2)
        yield wait_for(lambda: svc.shipper.retries >= 1)
        during = yield scrape(port)
        assert during["nodeapi_searchdb_documents_shipped_total"] == len(expected) - len(jan)
        assert during["nodeapi_searchdb_documents_failed_total"] == len(jan)
        assert during["nodeapi_searchdb_lag_blocks"] == chain.head_block_num - head == 3
        assert svc.documents_pending == 3 * 2 * 2
        # back: the queue drains, lag returns to 0
        proxy.up()
        yield wait_for(lambda: svc.queue.items == 0 and not svc.shipper.busy)
        after = yield scrape(port)
        total = len(expected_of(rec.blocks))
        assert after["nodeapi_searchdb_documents_shipped_total"] == total - len(jan)
        assert after["nodeapi_searchdb_documents_failed_total"] == len(jan)
        assert after["nodeapi_searchdb_lag_blocks"] == 0
        assert after["nodeapi_head_block_number"] == head + 3
    finally:
        yield svc.stopService()
        yield proxy.down()
        yield listening.stopListening()
        chain.block_log.close()


def test_error_codes_are_bounded_label_values(chain):
    """A gateway passes on whatever codes its upstreams send: past
    MAX_ERROR_CODES distinct ones (and for a code that is no integer) the
    label is ``other``, so the series stay bounded."""
    from nodeapi.metrics import MAX_ERROR_CODES
    from nodeapi.rpc.jsonrpc import Request

    metrics = Metrics(chain)
    request = Request.__new__(Request)
    request.api_name, request.function = "database", "get_objects"
    for code in range(MAX_ERROR_CODES + 10):
        metrics.rpc_call(request, "error", metrics.call_started(), code)
    metrics.rpc_call(request, "error", None, "13")
    labels = {s.labels["code"] for s in metrics.rpc_errors.collect()[0].samples
              if s.name.endswith("_total")}
    assert len(labels) == MAX_ERROR_CODES + 1 and "other" in labels and "0" in labels
    other = metrics.registry.get_sample_value(
        "nodeapi_rpc_errors_total", {"api": "database", "function": "get_objects",
                                     "code": "other"})
    assert other == 11
