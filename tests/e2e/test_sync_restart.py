"""The daemon stopped (SIGTERM) and started again over the same data dir and
search database, after the other e2e modules (this file sorts last): the
replay rebuilds the ath numbering, nothing is stored twice
(docs/searchdb-plugin.rst "Duplicate rule"), and a new transfer gets the
next ids ``1.11.8`` / ``2.9.14`` / ``2.9.15`` with the accounts' sequence and
``next`` links continued."""

import signal
import time

import pytest

from e2e.flows import ALICE, BOB, client, keys
from kit.dbclient import DB, PREFIX, same_wire


pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def wait_count(db, n, timeout=30):
    deadline = time.time() + timeout
    while True:
        got = db.count()["count"]
        if got >= n or time.time() > deadline:
            return got
        time.sleep(0.3)


def test_restart_resumes_without_duplicates(scenario, node, osmem, plugins):
    if "searchdb" not in plugins.split():
        pytest.skip(f"the daemon runs {plugins!r}: no search database")
    db = DB(osmem.url)
    assert wait_count(db, 14) == 14
    assert node.stop() == -signal.SIGTERM
    head = int(node.log().rsplit("Node stopped at head block", 1)[1].split()[0])
    node.start()
    assert f"Replayed {head} blocks" in node.log()
    node.wait_head(head + 1)
    assert db.count()["count"] == 14

    bts = client(node.port, "ws", [keys(BOB)["active"][0], keys(BOB)["memo"][0]])
    r = bts.transfer(ALICE, 7, "TEST", memo="after restart", account=BOB)
    assert r["operation_results"] == [[0, {}]]
    assert wait_count(db, 16) == 16
    hits = {h["_id"]: h for h in db.search([{"match_all": {}}])}
    assert set(hits) == {f"2.9.{n}" for n in range(16)}
    links = {h["_source"]["account_history"]["account"]: h["_source"]["account_history"]
             for i, h in hits.items() if i in ("2.9.14", "2.9.15")}
    assert links == {
        "1.2.18": {"id": "2.9.14", "account": "1.2.18", "operation_id": "1.11.8",
                   "sequence": 5, "next": "2.9.13"},
        "1.2.19": {"id": "2.9.15", "account": "1.2.19", "operation_id": "1.11.8",
                   "sequence": 4, "next": "2.9.10"}}
    for i in ("2.9.14", "2.9.15"):
        src = hits[i]["_source"]
        assert hits[i]["_index"] == PREFIX + src["block_data"]["block_time"][:7]
        assert src["block_data"]["trx_id"] == r["id"]
        assert src["block_data"]["block_num"] == r["block_num"]
        assert same_wire(src["operation_history"]["op"], r["operations"][0])
    entries = node.call("get_account_history", "1.2.19", "1.11.0", 100, "1.11.0",
                        api="history")
    assert [e["id"] for e in entries] == ["1.11.8", "1.11.5", "1.11.4", "1.11.2"]
    assert entries[0]["op"] == r["operations"][0]
