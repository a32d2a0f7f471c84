"""The gateway as operators run it: three ``twistd -n nodeapi`` daemons,
a producer and a follower (two upstreams of one chain) and a gateway
(``--upstream`` twice, its own api-access file: the vectors of
kit.access, bytemaster / user2 restricted to database and history / ``*``
anonymous with database, network_broadcast and history).  The everyday
flows of python-bitshares, uptick, bitsharesjs and btsdex run through the
gateway; an upstream is killed and restarted in the middle of a flow."""

import json
import signal
import subprocess
import threading
import urllib.request

import pytest
import pytest_twisted
from twisted.internet import threads

from kit.access import VECTORS
from kit.clients import bitshares_client, forget_cached_objects, run_uptick
from kit.daemon import ACCESS, Daemon, free_port
from kit.js import JS_DIR
from kit.keys import CHAIN_ID
from kit.wait import wait_until

pytestmark = pytest.mark.slow

FOLLOWER_PLUGINS = "account_history market_history grouped_orders custom_operations"


class Nodes:
    def __init__(self, producer, follower, gateway, metrics_port):
        self.producer, self.follower, self.gateway = producer, follower, gateway
        self.metrics_port = metrics_port
        self.ws_url = f"ws://127.0.0.1:{gateway.port}"

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics",
                                    timeout=10) as reply:
            return reply.read().decode()

    def usable(self) -> int:
        return sum(int(float(line.rsplit(" ", 1)[1])) for line in self.metrics().splitlines()
                   if line.startswith("nodeapi_gateway_upstream_usable{"))


@pytest.fixture(scope="module")
def nodes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gateway")
    access = tmp / "gateway-access.json"
    access.write_text(json.dumps(VECTORS))
    producer = Daemon(tmp / "producer", "--api-access", ACCESS).start()
    seed = f"ws://bytemaster:supersecret@127.0.0.1:{producer.port}"
    follower = Daemon(tmp / "follower", "--api-access", ACCESS, "--plugins",
                      FOLLOWER_PLUGINS, "--seed-node", seed).start()
    metrics_port = free_port()
    gateway = None
    try:
        producer.wait_head(2)
        wait_until(lambda: follower.head()[0] >= 2, what="follower sync")
        gateway = Daemon(tmp / "gateway", "--api-access", str(access),
                         "--upstream", seed,
                         "--upstream", f"ws://bytemaster:supersecret@127.0.0.1:{follower.port}",
                         "--metrics-endpoint", f"tcp:{metrics_port}:interface=127.0.0.1").start()
        found = Nodes(producer, follower, gateway, metrics_port)
        wait_until(lambda: found.usable() == 2, what="both upstreams usable")
        bts = bitshares_client(found.ws_url)
        _claim(bts)
        yield found
    finally:
        for node in (gateway, follower, producer):
            if node is not None:
                node.stop()


def _claim(bts):
    """init0 claims the genesis balance (python-bitshares, through the gateway)."""
    from kit.chain import claim_op

    claim = claim_op()  # the genesis balance 1.15.0 into init0
    bts.finalizeOp(claim, "init0", "active")


def _balance(node, account):
    return int(node.call("get_account_balances", account, ["1.3.0"])[0]["amount"])


def test_python_bitshares_anonymous_and_restricted(nodes):
    from bitshares.account import Account

    forget_cached_objects()
    bts = bitshares_client(nodes.ws_url)
    assert bts.rpc.get_chain_id() == CHAIN_ID
    wait_until(lambda: _balance(nodes.producer, "init0") > 0, what="claim in a block")
    assert Account("init0", blockchain_instance=bts)["id"] == "1.2.6"
    before = _balance(nodes.producer, "init1")
    bts.transfer("init1", 12.5, "TEST", account="init0")  # anonymous may broadcast
    wait_until(lambda: _balance(nodes.producer, "init1") == before + 1250000,
               what="transfer in a block")
    # the producer's refusal reaches the client through the gateway
    with pytest.raises(Exception, match="insufficient|Insufficient"):
        bts.transfer("init1", 10 ** 12, "TEST", account="init0")
    # user2 reads, but may not broadcast: the gateway's own refusal
    forget_cached_objects()
    restricted = bitshares_client(nodes.ws_url, rpcuser="user2",
                                  rpcpassword="superpassword2")
    assert Account("init1", blockchain_instance=restricted)["id"] == "1.2.7"
    with pytest.raises(Exception, match="Access denied"):
        restricted.transfer("init1", 1, "TEST", account="init0")
    # either upstream answers: the follower may be a block behind
    history = wait_until(lambda: restricted.rpc.get_account_history(
        "1.2.7", "1.11.0", 10, "1.11.0", api="history"), what="history on both upstreams")
    assert history[0]["op"][1]["amount"] == {"amount": 1250000, "asset_id": "1.3.0"}


@pytest_twisted.inlineCallbacks
def test_uptick_through_the_gateway(nodes, tmp_path):
    yield threads.deferToThread(wait_until, lambda: _balance(nodes.producer, "init0") > 0)
    out, err, code = yield run_uptick(tmp_path, nodes.ws_url, "balance", "init0")
    assert code == 0 and "TEST" in out, out + err
    before = yield threads.deferToThread(_balance, nodes.producer, "init1")
    out, err, code = yield run_uptick(tmp_path, nodes.ws_url, "--blocking", "transfer",
                                      "init1", "2.5", "TEST", "--account", "init0")
    assert code == 0, out + err
    after = yield threads.deferToThread(_balance, nodes.producer, "init1")
    assert after - before == 250000  # 2.5 TEST, precision 5: in a block once answered


def test_bitsharesjs_reads_through_the_gateway(nodes, js_client):
    """bitsharesjs-ws' connect sequence (login, the accessors, the chain
    id), get_full_accounts and the history set."""
    wait_until(lambda: _balance(nodes.producer, "init0") > 0, what="claim in a block")
    out = subprocess.run([js_client, "client.js", nodes.ws_url, "init0"], cwd=JS_DIR,
                         capture_output=True, text=True, timeout=90)
    assert out.returncode == 0, out.stderr
    read = json.loads(out.stdout.splitlines()[-1])
    assert read["chain_id"] == CHAIN_ID and read["account"]["id"] == "1.2.6"
    assert int(read["balances"][0]["balance"]) == _balance(nodes.producer, "init0")
    assert read["history"] == nodes.producer.call("get_account_history", "1.2.6", "1.11.0", 10,
                                                  "1.11.0", api="history")


def test_the_health_check_follows_the_freshest_upstream(nodes):
    """Without the searchdb plugin, ``/healthz`` and ``/status`` of the
    gateway give the freshest usable upstream's head block."""
    with urllib.request.urlopen(f"http://127.0.0.1:{nodes.metrics_port}/healthz",
                                timeout=10) as reply:
        assert reply.status == 200
        status = json.loads(reply.read())
    assert status["ok"] and status["head_block_age"] < 30
    # the pool reads each upstream's head every 3 s (gateway.upstream
    # interval): with 1 s blocks, up to 3 blocks old, and a loaded machine's delay
    assert status["head_block_num"] >= nodes.producer.head()[0] - 6


def test_an_upstream_killed_and_restarted_in_the_middle_of_a_flow(nodes):
    """python-bitshares reads in a loop while the follower is killed
    (SIGKILL) and started again on its port: no call fails, the pool
    serves from the producer meanwhile and takes the follower back."""
    from bitshares.account import Account

    forget_cached_objects()
    bts = bitshares_client(nodes.ws_url)
    failures, done, reads = [], threading.Event(), [0]

    def loop():
        while not done.is_set():
            try:
                assert bts.rpc.get_objects(["2.1.0"])[0]["id"] == "2.1.0"
                assert bts.rpc.get_accounts(["1.2.6"])[0]["name"] == "init0"
                reads[0] += 1
            except Exception as exc:  # noqa: BLE001 -- every failure is the finding
                failures.append(repr(exc))

    reader = threading.Thread(target=loop, daemon=True)
    reader.start()
    try:
        wait_until(lambda: reads[0] > 20, what="reads")
        nodes.follower.stop(signal.SIGKILL)
        wait_until(lambda: nodes.usable() == 1, what="the follower seen gone")
        seen = reads[0]
        wait_until(lambda: reads[0] > seen + 20, what="reads without the follower")
        nodes.follower.start()
        wait_until(lambda: nodes.usable() == 2, timeout=60, what="the follower back")
        seen = reads[0]
        wait_until(lambda: reads[0] > seen + 20, what="reads with both")
    finally:
        done.set()
        reader.join(10)
    assert failures == []
    assert Account("init1", blockchain_instance=bts)["id"] == "1.2.7"
    lost = [line for line in nodes.metrics().splitlines()
            if line.startswith("nodeapi_gateway_upstream_errors_total{")]
    assert lost, nodes.metrics()
