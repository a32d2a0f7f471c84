"""Two ``twistd -n nodeapi`` daemons on loopback ("How we will
know"): the spec's restricted-set flow on the follower over WebSocket
(login, ``network_node`` accessor, ``add_node``), the follower reaching and
tracking the producer's head, a transfer broadcast to the follower landing in
a producer block, identical account history on both, and the follower
reconnecting after the producer is killed and restarted."""

import json
import signal
import time

import pytest
import websocket
from bitsharesbase import operations

from kit.chain import claim_op
from kit.daemon import ACCESS, Daemon
from kit.signing import signed_over_head
from kit.wait import wait_until


pytestmark = pytest.mark.slow

class WsRpc:
    """A blocking WebSocket JSON-RPC client (websocket-client, as
    python-bitshares uses)."""

    def __init__(self, port):
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}/", timeout=10)
        self._id = 0

    def call(self, api, method, *params):
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": "call",
                                 "params": [api, method, list(params)]}))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self._id:
                break
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply["result"]

    def close(self):
        self.ws.close()


def _transfer(amount):
    return operations.Transfer(**{
        "fee": {"amount": 2000000, "asset_id": "1.3.0"}, "from": "1.2.6", "to": "1.2.7",
        "amount": {"amount": amount, "asset_id": "1.3.0"}, "extensions": []})


def _producer_blocks_with(node, trx_ops_type, upto):
    found = []
    for num in range(1, upto + 1):
        for trx in node.call("get_block", num)["transactions"]:
            if trx["operations"][0][0] == trx_ops_type:
                found.append(num)
    return found


def test_follower_by_add_node_syncs_relays_and_reconnects(tmp_path):
    # the two start side by side
    producer = Daemon(tmp_path / "producer", "--api-access", ACCESS).start(wait=False)
    follower = Daemon(tmp_path / "follower", "--api-access", ACCESS,
                      "--plugins", "account_history").start(wait=False)
    try:
        producer.wait_rpc()
        follower.wait_rpc()
        producer.wait_head(3)
        # the follower produces nothing on its own
        assert follower.head()[0] == 0

        # the spec's restricted-set flow over WebSocket on the follower
        ws = WsRpc(follower.port)
        with pytest.raises(RuntimeError):
            ws.call(1, "network_node")  # not allowed before login
        assert ws.call(1, "login", "bytemaster", "supersecret") is True
        node_api = ws.call(1, "network_node")
        assert isinstance(node_api, int) and node_api >= 2
        ws.call(node_api, "add_node", f"bytemaster:supersecret@127.0.0.1:{producer.port}")

        # caught up, then tracking the producer within one block
        wait_until(lambda: follower.head()[0] >= producer.head()[0] - 1, what="follower sync")
        for _ in range(3):
            time.sleep(1.0)
            p_num = producer.head()[0]
            f_num, f_id = follower.head()
            assert p_num - 1 <= f_num <= p_num + 1
            assert producer.call("get_block_header", f_num) == \
                follower.call("get_block_header", f_num)
        peers = ws.call(node_api, "get_connected_peers")
        assert len(peers) == 1 and peers[0]["addr"].endswith(f":{producer.port}")
        assert ws.call(node_api, "get_info")["connection_count"] == 1

        # transactions broadcast to the follower are relayed and produced
        follower.call("broadcast_transaction", signed_over_head(follower, [claim_op()]),
                      api="network_broadcast")
        wait_until(lambda: producer.call("get_account_history", "1.2.6", "1.11.0", 10, "1.11.0",
                                    api="history"), what="claim in a producer block")
        follower.call("broadcast_transaction", signed_over_head(follower, [_transfer(5000000)]),
                      api="network_broadcast")
        wait_until(lambda: len(producer.call("get_account_history", "1.2.7", "1.11.0", 10,
                                        "1.11.0", api="history")) == 1,
              what="transfer in a producer block")
        head = producer.head()[0]
        assert len(_producer_blocks_with(producer, 0, head)) == 1
        wait_until(lambda: follower.head()[0] >= head, what="follower has the transfer block")
        for account in ("1.2.6", "1.2.7", "init0"):
            mine = follower.call("get_account_history", account, "1.11.0", 100, "1.11.0",
                                 api="history")
            theirs = producer.call("get_account_history", account, "1.11.0", 100, "1.11.0",
                                   api="history")
            assert mine == theirs and mine
        assert follower.call("get_account_balances", "init1", []) == \
            [{"amount": 5000000, "asset_id": "1.3.0"}]

        # producer killed and restarted on the same port: the follower reconnects
        producer.stop(signal.SIGKILL)
        stopped_at = follower.head()[0]
        producer = Daemon(tmp_path / "producer", "--api-access", ACCESS,
                          port=producer.port).start()
        wait_until(lambda: follower.head()[0] >= stopped_at + 3, timeout=60,
              what="follower following the restarted producer")
        f_num = follower.head()[0]
        assert producer.call("get_block_header", f_num) == \
            follower.call("get_block_header", f_num)
        ws.close()
    finally:
        follower.stop()
        producer.stop()
