"""Replicas behind HAProxy (README, "Replicas behind HAProxy"): Debian's
haproxy with the shipped etc/haproxy.cfg in front of three real
``twistd -n nodeapi`` daemons, a producer and two followers
(``--seed-node``, no witness plugin).  python-bitshares and bitsharesjs
read and broadcast through it; with the producer drained (the runtime API's
``set server ... state drain``) every call reaches a follower, which passes
the broadcasts on and calls back from the producer's block.  A
python-bitshares subscription survives the death of the follower it was
on: the client reconnects through HAProxy to the other one and subscribes
again."""

import json
import signal
import subprocess
import threading

import pytest

from kit.clients import bitshares_client
from kit.daemon import ACCESS, Daemon
from kit.haproxy import HAProxy
from kit.js import JS_DIR
from kit.keys import DEV_WIF
from kit.wait import wait_until

pytestmark = pytest.mark.slow

#: the followers' plugins: every read plugin, no witness
FOLLOWER_PLUGINS = "account_history market_history grouped_orders custom_operations"


@pytest.fixture(scope="module")
def replicas(tmp_path_factory):
    """(HAProxy, producer, follower1, follower2), all running and healthy."""
    tmp = tmp_path_factory.mktemp("replicas")
    producer = Daemon(tmp / "producer", "--api-access", ACCESS).start()
    seed = f"ws://bytemaster:supersecret@127.0.0.1:{producer.port}"
    followers = [Daemon(tmp / f"follower{i}", "--api-access", ACCESS, "--plugins",
                        FOLLOWER_PLUGINS, "--seed-node", seed).start() for i in (1, 2)]
    proxy = None
    try:
        producer.wait_head(2)
        for follower in followers:
            wait_until(lambda: follower.head()[0] >= 2, what="follower sync")
        proxy = HAProxy(tmp, f"127.0.0.1:{producer.port}",
                        *(f"127.0.0.1:{f.port}" for f in followers)).start()
        yield proxy, producer, *followers
    finally:
        if proxy is not None:
            proxy.stop()
        for node in (*followers, producer):
            node.stop()


def _drain(proxy, server, state="drain"):
    """No new connection to ``server`` in either backend (``ready``: again)."""
    for backend in ("nodeapi_http", "nodeapi_ws"):
        answer = proxy.command(f"set server {backend}/{server} state {state}")
        assert answer.strip() == "", answer


def _history_len(node, account):
    return len(node.call("get_account_history", account, "1.11.0", 100, "1.11.0",
                         api="history"))


def test_clients_read_and_broadcast_through_followers(replicas, js_client):
    proxy, producer, follower1, follower2 = replicas
    _drain(proxy, "producer")
    before = {name: int(row["stot"]) for name, row in proxy.servers().items()}
    try:
        # python-bitshares over HTTP: reads round robin, its broadcasts forwarded
        bts = bitshares_client(proxy.http_url)
        assert bts.rpc.get_chain_id() == producer.call("get_chain_id")
        from bitshares.account import Account
        from kit.chain import claim_op

        assert Account("init0", blockchain_instance=bts)["id"] == "1.2.6"
        claim = claim_op()  # the genesis balance 1.15.0 into init0
        bts.finalizeOp(claim, "init0", "active")
        wait_until(lambda: _history_len(producer, "1.2.6"), what="claim in a block")
        bts.transfer("init1", 12.5, "TEST", account="init0")
        wait_until(lambda: _history_len(producer, "1.2.7") == 1, what="transfer in a block")
        head = producer.head()[0]
        for follower in (follower1, follower2):
            wait_until(lambda: follower.head()[0] >= head, what="followers have the block")
            assert follower.call("get_account_balances", "init1", ["1.3.0"]) == \
                [{"amount": 1250000, "asset_id": "1.3.0"}]
        # a refusal made by the producer reaches the client through the follower
        with pytest.raises(Exception, match="Duplicate|duplicate|insufficient|Insufficient"):
            bts.transfer("init1", 10 ** 12, "TEST", account="init0")

        # bitsharesjs over WebSocket: reads, a block-applied subscription, and a
        # transfer broadcast with callback (the follower calls back from the block)
        out = subprocess.run([js_client, "client.js", proxy.ws_url, "init1", "--subscribe"],
                             cwd=JS_DIR, capture_output=True, text=True, timeout=90)
        assert out.returncode == 0, out.stderr
        read = json.loads(out.stdout.splitlines()[-1])
        assert read["account"]["id"] == "1.2.7" and len(read["notice"][0]) == 40
        assert read["balances"][0]["balance"] == 1250000
        out = subprocess.run([js_client, "transfer.js", proxy.ws_url, DEV_WIF, "1.2.6",
                              "1.2.7", "300000"], cwd=JS_DIR, capture_output=True, text=True,
                             timeout=90)
        assert out.returncode == 0, out.stderr
        confirmed = json.loads(out.stdout.splitlines()[-1])["confirmed"][0]
        assert confirmed["trx"]["operations"][0][1]["amount"] == {"amount": 300000,
                                                                  "asset_id": "1.3.0"}
        block = producer.call("get_block", confirmed["block_num"])
        assert [t["signatures"] for t in block["transactions"]] == \
            [confirmed["trx"]["signatures"]]
        # every call went to a follower; both served some
        after = {name: int(row["stot"]) for name, row in proxy.servers().items()}
        assert after["producer"] == before["producer"]
        assert after["follower1"] > before["follower1"]
        assert after["follower2"] > before["follower2"]
    finally:
        _drain(proxy, "producer", "ready")


def test_subscription_survives_its_backends_death(replicas):
    """python-bitshares' BitSharesWebsocket (what Notify runs) subscribed to
    block-applied notices on a follower; that follower is killed; the
    client's loop reconnects through HAProxy, lands on the other follower,
    subscribes again and keeps receiving blocks."""
    from bitsharesapi.websocket import BitSharesWebsocket

    proxy, producer, follower1, follower2 = replicas
    _drain(proxy, "producer")  # a follower must hold the subscription
    blocks = []
    ws = BitSharesWebsocket(urls=proxy.ws_url, on_block=blocks.append, keep_alive=5)
    listener = threading.Thread(target=ws.run_forever, daemon=True)
    listener.start()
    try:
        wait_until(lambda: len(blocks) >= 2, what="block notices")
        sessions = proxy.sessions()
        assert sum(sessions.values()) == 1 and sessions["producer"] == 0
        on, other = ((follower1, follower2) if sessions["follower1"] == 1
                     else (follower2, follower1))
        on.stop(signal.SIGKILL)
        killed_at = producer.head()[0]
        seen = len(blocks)
        wait_until(lambda: any(int(b[:8], 16) > killed_at + 1 for b in blocks[seen:]),
                   timeout=30, what="block notices after the backend died")
        name = "follower1" if other is follower1 else "follower2"
        assert proxy.sessions()[name] == 1
        # the notices are the producer's blocks, in order, none repeated after resubscribing
        nums = [int(b[:8], 16) for b in blocks]
        assert nums[seen:] == sorted(set(nums[seen:]))
        assert producer.call("get_block_header", nums[-1]) is not None
        proxy.wait_status(lambda s: s.startswith("DOWN"), names={
            "follower1" if on is follower1 else "follower2"})
    finally:
        ws.close()
        listener.join(10)
        _drain(proxy, "producer", "ready")
