"""A search database that lost documents is filled again
(docs/searchdb-plugin.rst "Duplicate rule": writing begins at the first
record the database does not have): the database is killed while transfers
flow and started again empty on the same port (a real osmem-server
process), or one monthly index is deleted.  Whether the node keeps running
(it checks the database on reconnecting and rebuilds the lost documents
from its block log) or is restarted (the check at start, the cursor file
only narrowing it), every document ends up stored exactly once."""

import os

import pytest
import pytest_twisted
from osmem_server import OsmemServer
from twisted.internet import reactor

from nodeapi.plugins.searchdb.client import SearchDBClient

from kit.chain import open_chain
from kit.daemon import free_port
from kit.history import Recorder
from kit.searchdb import (Proxy, check_all_once, expected_of, make_service, stored_docs,
                          transfers)
from kit.wait import wait_for


pytestmark = pytest.mark.slow


class Database:
    """A private osmem-server that can be killed and started again, empty,
    on the same port."""

    def __init__(self):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.server = None

    def start(self):
        self.server = OsmemServer.start(addr=f"127.0.0.1:{self.port}", japanese=False)

    def kill(self):
        self.server.process.kill()
        self.server.process.wait()
        self.server = None


@pytest.fixture
def database():
    db = Database()
    db.start()
    yield db
    if db.server is not None:
        db.server.close()


def settled(svc):
    return (svc.backfills.running is None and svc.queue.items == 0 and len(svc.builder) == 0
            and not svc.shipper.busy)


@pytest_twisted.inlineCallbacks
def start_node(genesis, path, url, data, rec=None, **kw):
    chain = open_chain(genesis, path)
    if rec is not None:
        chain.add_consumer(rec)
    svc = make_service(url, chain, data, bulk_replay=20, **kw)
    chain.add_consumer(svc)
    yield svc.prepare()
    yield chain.replay()
    svc.startService()
    return chain, svc


@pytest_twisted.inlineCallbacks
def wipe_while_running(genesis, history_log, database, tmp_path, **kw):  # noqa: F811
    """Ship everything, kill the database while transfers flow, start it
    empty; returns (chain, svc, rec) with the database back up (``kw``:
    service settings, as :func:`start_node`)."""
    path, _expected = history_log
    rec = Recorder()
    chain, svc = yield start_node(genesis, path, database.url, str(tmp_path), rec, **kw)
    yield wait_for(lambda: settled(svc))
    assert svc.documents_shipped > 0
    database.kill()
    for _ in range(3):
        transfers(chain, 3)
    yield wait_for(lambda: svc.shipper.retries >= 1)
    database.start()
    return chain, svc, rec


@pytest_twisted.inlineCallbacks
def test_wipe_node_keeps_running(genesis, history_log, database, tmp_path):  # noqa: F811
    chain, svc, rec = yield wipe_while_running(genesis, history_log, database, tmp_path)
    transfers(chain, 2)
    yield wait_for(lambda: settled(svc) and svc.documents_shipped > 0, timeout=60)
    transfers(chain, 1)  # live blocks keep going after the backfill
    yield svc.stopService()
    chain.block_log.close()
    assert svc.documents_failed == 0
    yield check_all_once(database.url, expected_of(rec.blocks))


@pytest_twisted.inlineCallbacks
def test_wipe_then_node_restarted(genesis, history_log, database, tmp_path,  # noqa: F811
                                  captured):
    """The node ships what it queued during the outage to the empty
    database and is stopped while a bulk of its backfill is in flight,
    with the database up: the stop ends the backfill, flushes the plugin's
    own queue and returns at once, far under its ``stop_timeout``
    (nodeapi.plugins.searchdb.shipper, a source removed with its bulk in
    flight); the restarted node writes everything the database lacks
    despite its cursor file, and nothing it holds."""
    path, _expected = history_log
    chain, svc, rec = yield wipe_while_running(genesis, history_log, database, tmp_path)
    shipped = svc.documents_shipped
    yield wait_for(lambda: svc.documents_shipped > shipped)
    running = svc.backfills.running
    assert running is not None
    # a backfill bulk in flight (its queue is the shipper's first source),
    # documents in the plugin's queue behind it
    yield wait_for(lambda: (running is svc.backfills.running and len(running.queue) > 0
                            and svc.shipper.busy and svc.shipper.connected
                            and svc.queue.items > 0))
    upto = running.upto_ath
    began = reactor.seconds()
    yield svc.stopService()
    assert reactor.seconds() - began < svc.stop_timeout / 5
    assert not [text for _level, text, _e in captured
                if "not shipped" in text or "shipping stopped" in text]
    chain.block_log.close()
    held = yield stored_docs(database.url)
    expected = expected_of(rec.blocks)
    assert {n for n in expected if n >= upto} <= set(held)  # the plugin's queue
    chain, again = yield start_node(genesis, path, database.url, str(tmp_path))
    yield wait_for(lambda: settled(again))
    yield again.stopService()
    chain.block_log.close()
    assert again.shipper.documents_existing == 0
    assert again.documents_shipped == len(expected) - len(held)
    yield check_all_once(database.url, expected)


@pytest.mark.parametrize("restart", [True, False])
@pytest_twisted.inlineCallbacks
def test_monthly_index_deleted(genesis, history_log, osmem_url, tmp_path,  # noqa: F811
                               restart):
    """One monthly index is deleted (the first of two): a restarted node,
    or a running one after an outage, writes its documents again and
    nothing else."""
    path, expected = history_log
    proxy = Proxy(osmem_url)
    proxy.up()
    data = str(tmp_path)
    rec = Recorder()
    chain, svc = yield start_node(genesis, path, proxy.url, data, rec)
    yield wait_for(lambda: settled(svc))
    docs = yield stored_docs(osmem_url)
    january = {n for n, hit in docs.items() if hit["_index"] == "chain-2016-01"}
    assert january and len(january) < len(docs)
    client = SearchDBClient(osmem_url, "", reactor)
    yield client.request("DELETE", "/chain-2016-01")
    yield client.close()
    shipped = svc.documents_shipped
    if restart:
        yield svc.stopService()
        chain.block_log.close()
        rec = Recorder()
        chain, svc = yield start_node(genesis, path, proxy.url, data, rec)
        shipped = 0
    else:  # an outage: the node checks the database when it answers again
        yield proxy.down()
        transfers(chain, 2)
        yield wait_for(lambda: svc.shipper.retries >= 1)
        proxy.up()
        yield wait_for(lambda: settled(svc) and svc.documents_shipped > shipped)
    yield wait_for(lambda: settled(svc))
    yield svc.stopService()
    yield proxy.down()
    chain.block_log.close()
    expected = expected_of(rec.blocks)
    new = len(expected) - len(docs)
    assert svc.documents_shipped - shipped == len(january) + new
    assert svc.shipper.documents_existing == 0
    yield check_all_once(osmem_url, expected)


@pytest_twisted.inlineCallbacks
def test_stop_starts_no_backfill(genesis, history_log, osmem_url, tmp_path,  # noqa: F811
                                 captured):
    """The database lost an index and is unreachable when the node stops:
    the stop's flush reconnects, and that check, though it finds documents
    lacking, starts no backfill (the stop ended the backfills; nothing
    would end one started now): the plugin's queue is flushed and the lost
    documents are left to the next start."""
    path, _expected = history_log
    proxy = Proxy(osmem_url)
    proxy.up()
    rec = Recorder()
    chain, svc = yield start_node(genesis, path, proxy.url, str(tmp_path), rec)
    yield wait_for(lambda: settled(svc))
    docs = yield stored_docs(osmem_url)
    january = {n for n, hit in docs.items() if hit["_index"] == "chain-2016-01"}
    client = SearchDBClient(osmem_url, "", reactor)
    yield client.request("DELETE", "/chain-2016-01")
    yield client.close()
    yield proxy.down()
    transfers(chain, 2)
    yield wait_for(lambda: svc.shipper.retries >= 1 and not svc.shipper.connected)
    stopping = svc.stopService()
    proxy.up()
    yield stopping
    yield proxy.down()
    chain.block_log.close()
    assert svc.backfills.running is None and svc.queue.items == 0
    assert not [name for name in os.listdir(tmp_path) if "backfill" in name]
    assert not [text for _level, text, _e in captured if "rebuilding those below" in text]
    held = yield stored_docs(osmem_url)
    assert january and set(held) == set(expected_of(rec.blocks)) - january
