"""Indexer mode (nodeapi.peers.upstream): a searchdb plugin without a chain
of its own, fed by an UpstreamService following a nodeapi producer over
real loopback WebSocket, stores exactly the documents (same ``_id``s, same
bodies) the producer's own searchdb plugin stores, through an upstream that
goes away and comes back and a search database outage, the visitor's asset
names included; its figures (lag, reconnects); ``twistd nodeapi --upstream``
serving the history API by account id and name."""

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
    # with the visitor: the indexer names the assets of fees, transfers and
    # fills from its upstream (it has no chain state)
    own = make_service(url, producer, str(tmp_path / "producer"), index_prefix="prod-",
                       visitor=True)
    producer.add_consumer(own)
    yield own.prepare()
    server = RunningSite(make_node(producer), ApiAccess.from_json(VECTORS))
    build_history_chain(producer, rounds=2, per_trx=4)
    own.startService()
    # the indexer reaches the producer through a proxy that can go away
    proxy = Proxy(f"http://127.0.0.1:{server.port}")
    proxy.up()
    db_proxy = Proxy(url)  # the indexer's database can go away too
    db_proxy.up()
    indexer_db = make_service(db_proxy.url, None, str(tmp_path / "indexer"),
                              index_prefix="idx-", clock=reactor, visitor=True,
                              asset_lookup=lambda asset_id: upstream.asset(asset_id))
    state = str(tmp_path / "indexer-state.json")
    upstream = UpstreamService(parse_node_address(f"ws://127.0.0.1:{proxy.port}"),
                               [indexer_db], reactor, pending=lambda: indexer_db.documents_pending,
                               irreversible=False, batch=3, poll=0.05, state_path=state,
                               confirmed_block=lambda: indexer_db.confirmed_block_num,
                               save_every=2)
    yield indexer_db.prepare()
    indexer_db.startService()
    upstream.startService()
    try:
        half = producer.head_block_num // 2
        yield wait_for(lambda: upstream.next_block > half, timeout=30)
        yield proxy.down()  # the upstream goes away, and comes back
        yield wait_for(lambda: upstream.protocol is None, timeout=10)
        proxy.up()
        yield wait_for(lambda: upstream.reconnects >= 1, timeout=30)
        yield db_proxy.down()  # then the search database
        yield wait_for(lambda: upstream.next_block > producer.head_block_num, timeout=60)
        db_proxy.up()
        yield wait_for(lambda: indexer_db.documents_pending == 0, timeout=60)
        assert upstream.reconnects >= 1
        assert upstream.lag_blocks == 0
    finally:
        yield upstream.stopService()
        yield indexer_db.stopService()
        yield own.stopService()
        yield proxy.down()
        yield db_proxy.down()
        yield server.stop()
    # the numbering was saved at a confirmed block: a new indexer goes on
    # after it (not from block 1)
    again = UpstreamService(parse_node_address("ws://127.0.0.1:1"), [], reactor,
                            state_path=state)
    assert 1 < again.next_block <= producer.head_block_num + 1
    assert again.next_ath <= upstream.next_ath
    ours = yield stored_docs(url, "idx-")
    theirs = yield stored_docs(url, "prod-")
    assert len(theirs) > 20
    fills = [h["_source"]["additional_data"]["fill_data"] for h in theirs.values()
             if h["_source"]["operation_type"] == 4]
    assert fills and {f["pays_asset_name"] for f in fills} == {"TEST", "GOLD"}
    assert sorted(ours) == sorted(theirs)
    for n, hit in theirs.items():
        assert ours[n]["_id"] == hit["_id"]
        assert ours[n]["_source"] == hit["_source"], n
    # the saved numbering is the producer's at that block
    import orjson

    with open(state, "rb") as f:
        saved = orjson.loads(f.read())
    upto = [h["_source"] for n, h in theirs.items()
            if h["_source"]["block_data"]["block_num"] <= saved["block"]]
    assert saved["next_ath"] == len(upto)
    for account, stats in saved["stats"].items():
        mine = [d for d in upto if d["account_history"]["account"] == account]
        assert stats["total_ops"] == len(mine)
        assert stats["most_recent_op"] == max((d["account_history"]["id"] for d in mine),
                                              key=lambda i: int(i.rsplit(".", 1)[1]))


@pytest_twisted.inlineCallbacks
def test_twistd_indexer_serves_the_history_api_from_the_database(new_chain, osmem, tmp_path):
    """``twistd nodeapi --upstream ws://... --plugins searchdb``: no chain of
    its own; it follows the producer's irreversible blocks, and its history
    API set answers what the producer's account_history answers (account
    ids, and names it looks up upstream), its metrics show the lag; the
    other API sets are forwarded to the producer (a gateway)."""
    import urllib.request

    from twisted.internet import threads

    from kit.daemon import Daemon, free_port

    producer = new_chain()
    server = RunningSite(make_node(producer), ApiAccess.from_json(VECTORS))
    facts = build_history_chain(producer, rounds=2, per_trx=4)
    from kit.chain import produce

    produce(producer, 12)  # every block with operations becomes irreversible
    assert producer.dgp["last_irreversible_block_num"] > producer.head_block_num - 12
    metrics_port = free_port()
    node = Daemon(tmp_path / "indexer", "--upstream", f"ws://127.0.0.1:{server.port}",
                  "--plugins", "searchdb", "--searchdb-node-url", osmem.url,
                  "--metrics-endpoint", f"tcp:{metrics_port}:interface=127.0.0.1")
    node.start(wait=False)
    accounts = ["1.2.6", "1.2.7", *facts["accounts"], "init1", "alice-1", "Not A Name",
                "no-such-account"]
    try:
        def answers(target):
            return [target.call("get_account_history", a, "1.11.0", 100, "1.11.0",
                                api="history") for a in accounts]

        expected = yield threads.deferToThread(answers, _Local(server))

        def caught_up():
            try:
                return answers(node) == expected
            except (OSError, RuntimeError, ValueError):
                return False

        for _ in range(150):
            done = yield threads.deferToThread(caught_up)
            if done:
                break
            yield deferLater(0.2)
        assert done, node.log()[-3000:]
        assert any(expected) and expected[-2:] == [[], []]
        assert expected[accounts.index("init1")] == expected[accounts.index("1.2.7")]
        # the other sets are the upstream's (a gateway, nodeapi.gateway)
        dgp = yield threads.deferToThread(node.call, "get_objects", ["2.1.0"], api="database")
        assert dgp[0]["id"] == "2.1.0" and dgp[0]["head_block_id"] is not None
        text = yield threads.deferToThread(
            lambda: urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics",
                                           timeout=5).read().decode())
        # it follows the irreversible blocks: the lag is the upstream's
        # head minus its last irreversible block
        lag = producer.head_block_num - producer.dgp["last_irreversible_block_num"]
        assert f"nodeapi_indexer_lag_blocks {lag:.1f}" in text, text
        assert "nodeapi_indexer_upstream_reconnects_total 0.0" in text, text
    finally:
        node.stop()
        yield server.stop()


def deferLater(seconds):
    from twisted.internet import task

    return task.deferLater(reactor, seconds, lambda: None)


class _Local:
    """``Daemon.call`` against an in-process RunningSite."""

    def __init__(self, server):
        from kit.daemon import Daemon

        self._daemon = Daemon("/nonexistent", port=server.port)

    def call(self, *args, **kwargs):
        return self._daemon.call(*args, **kwargs)


def test_names_cannot_be_looked_up_while_the_upstream_is_away():
    """An account name needs the upstream; while it is not connected the
    call fails with a clear error (an id needs nothing: HistoryApi)."""
    from nodeapi.peers.errors import PeerDisconnected

    upstream = UpstreamService(parse_node_address("ws://127.0.0.1:1"), [], reactor)
    failure = []
    upstream.account_id("init1").addErrback(failure.append)
    assert failure and failure[0].check(PeerDisconnected)
    assert "not connected" in failure[0].getErrorMessage()
