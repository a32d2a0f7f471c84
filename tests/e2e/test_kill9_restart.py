"""A ``twistd -n nodeapi --plugins "witness searchdb"`` daemon killed with
SIGKILL while it is synchronized, producing blocks and receiving transfers,
then started again over the same data dir and search database: every
(operation, impacted account) document is stored exactly once
(docs/searchdb-plugin.rst "Duplicate rule"; docs/wire-contract.rst section 8),
ids ``2.9.0`` .. ``2.9.<N-1>`` contiguous, N the chain's own count (the sum
of the accounts' ``statistics.total_ops``), each account's ``sequence`` and
``next`` links continuous across the kill.

Independent of the other e2e modules: its own osmem-server, its own daemon
and index prefix (the shared daemon of ``conftest.node`` is not used, so
``test_sync_restart`` still runs last against untouched data)."""

import signal
import threading
import time

import pytest
import requests
from bitsharesbase import operations
from osmem_server import OsmemServer

from kit.chain import claim_op
from kit.daemon import ACCESS, Daemon
from kit.signing import signed_over_head
from kit.wait import wait_until


pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PREFIX = "kill9-"


def transfer(amount, to):
    return operations.Transfer(**{
        "fee": {"amount": 2000000, "asset_id": "1.3.0"}, "from": "1.2.6", "to": to,
        "amount": {"amount": amount, "asset_id": "1.3.0"}, "extensions": []})


def broadcast(node, ops):
    node.call("broadcast_transaction", signed_over_head(node, ops), api="network_broadcast")


class Sender(threading.Thread):
    """Broadcasts transfers (1 or 2 operations, to 1.2.7..1.2.9) every
    ``pause`` seconds until stopped or the node no longer answers."""

    def __init__(self, node, start_amount, pause=0.15):
        super().__init__(daemon=True)
        self.node, self.amount, self.pause = node, start_amount, pause
        self.sent, self.halt = 0, threading.Event()

    def run(self):
        while not self.halt.is_set():
            self.amount += 1
            ops = [transfer(self.amount, f"1.2.{7 + self.amount % 3}")]
            if self.amount % 2:
                ops.append(transfer(self.amount + 100000, "1.2.8"))
            try:
                broadcast(self.node, ops)
                self.sent += 1
            except (OSError, RuntimeError):
                if self.node.proc.poll() is not None:
                    return  # killed
            time.sleep(self.pause)


def refresh(url):
    requests.post(f"{url}/{PREFIX}*/_refresh", timeout=10)


def count(url):
    refresh(url)
    return requests.get(f"{url}/{PREFIX}*/_count", json={"query": {"match_all": {}}},
                        timeout=10).json()["count"]


def all_hits(url):
    refresh(url)
    answer = requests.get(f"{url}/{PREFIX}*/_search", timeout=30, json={
        "size": 10000, "query": {"match_all": {}},
        "_source": ["account_history", "operation_id_num"]}).json()
    return answer["hits"]["hits"]


def chain_ath_count(node):
    """N of 2.9.0..2.9.<N-1>: the accounts' total_ops summed (chain state)."""
    stats = node.call("get_objects", [f"2.7.{i}" for i in range(20)])
    return sum(s["total_ops"] for s in stats if s), {
        s["owner"]: s["total_ops"] for s in stats if s and s["total_ops"]}


@pytest.fixture
def own_osmem():
    server = OsmemServer.start(addr="127.0.0.1:0", japanese=False)
    yield server
    server.close()


def test_kill9_during_sync_then_restart(tmp_path, own_osmem):
    url = own_osmem.url.rstrip("/")
    node = Daemon(tmp_path / "data", "--plugins", "witness searchdb", "--api-access", ACCESS,
                  "--searchdb-node-url", own_osmem.url, "--searchdb-index-prefix", PREFIX,
                  "--searchdb-bulk-sync", "4")
    node.start()
    try:
        node.wait_head(1)
        broadcast(node, [claim_op()])
        wait_until(lambda: chain_ath_count(node)[0] >= 1, timeout=40, what="claim in a block")
        sender = Sender(node, 1000)
        sender.start()
        wait_until(lambda: count(url) >= 20, timeout=40, what="20 documents shipped")
        assert node.stop(signal.SIGKILL) == -signal.SIGKILL  # transfers still flowing
        sender.halt.set()
        sender.join(10)
        killed_at = count(url)
        assert killed_at >= 20 and sender.sent >= 8

        before = len(node.log())
        node.start()
        assert "Replayed" in node.log()[before:]
        head = node.head()[0]
        node.wait_head(head + 1)
        sender = Sender(node, 50000)
        sender.start()
        wait_until(lambda: sender.sent >= 6, timeout=40, what="6 transfers after the restart")
        sender.halt.set()
        sender.join(10)
        node.wait_head(node.head()[0] + 2)  # the last transfers are in blocks
        expected, per_account = chain_ath_count(node)
        assert expected > killed_at
        wait_until(lambda: count(url) >= expected, timeout=40, what=f"{expected} documents")
        time.sleep(1.5)  # nothing more arrives
        hits = all_hits(url)
        assert count(url) == expected == len(hits)
        ids = [h["_id"] for h in hits]
        assert len(set(ids)) == len(ids)  # no duplicate _id
        assert sorted(int(i[4:]) for i in ids) == list(range(expected))
        by_account = {}
        for h in sorted(hits, key=lambda h: int(h["_id"][4:])):
            ah = h["_source"]["account_history"]
            assert ah["id"] == h["_id"]
            by_account.setdefault(ah["account"], []).append(ah)
        assert {a: len(v) for a, v in by_account.items()} == per_account
        for entries in by_account.values():
            assert [e["sequence"] for e in entries] == list(range(1, len(entries) + 1))
            assert [e["next"] for e in entries] == ["2.9.0"] + [e["id"] for e in entries[:-1]]
        ops = sorted({h["_source"]["operation_id_num"] for h in hits})
        assert ops == list(range(len(ops)))  # every operation 1.11.0.. has its documents
    finally:
        node.stop()
    log = node.log()
    assert "Traceback" not in log, log
