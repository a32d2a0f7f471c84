"""Prometheus metrics: scraped over a real loopback port after real calls."""

import pytest_twisted
import treq
from twisted.internet import reactor

from nodeapi.metrics import Metrics
from nodeapi.rpc.access import ApiAccess

from rpcserver import RunningSite, make_node
from test_chain_core import produce
from wsclient import ws_connect


@pytest_twisted.inlineCallbacks
def test_metrics_count_blocks_calls_and_connections(chain):
    metrics = Metrics(chain)
    chain.add_consumer(metrics)
    produce(chain, 3)
    server = RunningSite(make_node(chain), ApiAccess.default(), metrics=metrics)
    port = reactor.listenTCP(0, metrics.site(), interface="127.0.0.1")
    try:
        ws = yield ws_connect(server.port)
        yield ws.call(0, "get_chain_id")
        yield ws.call(0, "get_chain_id")
        yield ws.request(0, "no_such_function")
        resp = yield treq.get(f"http://127.0.0.1:{port.getHost().port}/metrics")
        text = (yield resp.text())
        ws.dropConnection()
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
    assert lines["nodeapi_websocket_connections"] == 1
    assert lines["nodeapi_blocks_produced_total"] == 0
