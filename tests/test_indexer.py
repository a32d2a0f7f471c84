"""Indexer mode (nodeapi.peers.upstream): a searchdb plugin without a chain
of its own, fed by an UpstreamService following a nodeapi producer over
real loopback WebSocket, stores exactly the documents (same ``_id``s, same
bodies) the producer's own searchdb plugin stores, through an upstream that
goes away and comes back; its figures (lag, reconnects)."""

import pytest
import pytest_twisted
from twisted.internet import reactor

from nodeapi.peers.upstream import UpstreamService
from nodeapi.protocol.node_address import parse_node_address
from nodeapi.rpc.access import ApiAccess

from kit.access import VECTORS
from kit.history import build_history_chain
from kit.searchdb import Proxy, make_service, stored_docs
from kit.site import RunningSite, make_node
from kit.wait import wait_for

pytestmark = pytest.mark.slow


@pytest_twisted.inlineCallbacks
def test_indexer_writes_the_producers_documents(new_chain, osmem, tmp_path):
    url = osmem.url if hasattr(osmem, "url") else osmem
    producer = new_chain()
    own = make_service(url, producer, str(tmp_path / "producer"), index_prefix="prod-")
    producer.add_consumer(own)
    yield own.prepare()
    server = RunningSite(make_node(producer), ApiAccess.from_json(VECTORS))
    build_history_chain(producer, rounds=2, per_trx=4)
    own.startService()
    # the indexer reaches the producer through a proxy that can go away
    proxy = Proxy(f"http://127.0.0.1:{server.port}")
    proxy.up()
    indexer_db = make_service(url, None, str(tmp_path / "indexer"), index_prefix="idx-",
                              clock=reactor)
    upstream = UpstreamService(parse_node_address(f"ws://127.0.0.1:{proxy.port}"),
                               [indexer_db], reactor, pending=lambda: indexer_db.documents_pending,
                               irreversible=False, batch=3, poll=0.05)
    yield indexer_db.prepare()
    indexer_db.startService()
    upstream.startService()
    try:
        half = producer.head_block_num // 2
        yield wait_for(lambda: upstream.next_block > half, timeout=30)
        yield proxy.down()  # the upstream goes away mid-way, and comes back
        proxy.up()
        yield wait_for(lambda: upstream.next_block > producer.head_block_num, timeout=60)
        assert upstream.reconnects >= 1
        assert upstream.lag_blocks == 0
    finally:
        yield upstream.stopService()
        yield indexer_db.stopService()
        yield own.stopService()
        yield proxy.down()
        yield server.stop()
    ours = yield stored_docs(url, "idx-")
    theirs = yield stored_docs(url, "prod-")
    assert len(theirs) > 20
    assert sorted(ours) == sorted(theirs)
    for n, hit in theirs.items():
        assert ours[n]["_id"] == hit["_id"]
        assert ours[n]["_source"] == hit["_source"], n
