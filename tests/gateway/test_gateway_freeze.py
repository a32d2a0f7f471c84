"""A frozen upstream under the gateway's merged subscriptions: two
``twistd -n nodeapi`` daemons (a producer and its follower) are the
upstreams of an in-process gateway (kit.gateway); the follower carries a
wallet's subscription and is stopped with SIGSTOP (connected, answering
nothing) before a block pays the wallet's account.  The subscription link
shows a head behind the producer's (nodeapi.gateway.shards
``Shard.check_lag``), moves to the producer, reads the account's state
and notices the payment."""

import signal

import pytest
import pytest_twisted
from twisted.internet import threads

from nodeapi.rpc.access import ApiAccess

from kit.access import VECTORS
from kit.chain import claim_op, transfer_op
from kit.daemon import ACCESS, Daemon
from kit.gateway import GatewaySite
from kit.rpc import ws_connect
from kit.signing import signed_over_head
from kit.wait import wait_for, wait_until
from kit.wallets import paid

pytestmark = pytest.mark.slow

FOLLOWER_PLUGINS = "account_history market_history grouped_orders custom_operations"


@pytest.fixture
def upstreams(tmp_path):
    producer = Daemon(tmp_path / "producer", "--api-access", ACCESS).start()
    seed = f"ws://bytemaster:supersecret@127.0.0.1:{producer.port}"
    follower = Daemon(tmp_path / "follower", "--api-access", ACCESS, "--plugins",
                      FOLLOWER_PLUGINS, "--seed-node", seed).start()
    try:
        producer.wait_head(1)
        producer.call("broadcast_transaction", signed_over_head(producer, [claim_op()]),
                      api="network_broadcast")
        wait_until(lambda: int(producer.call("get_account_balances", "init0", ["1.3.0"])[0][
            "amount"]) > 0, what="claim in a block")
        wait_until(lambda: follower.head()[0] >= producer.head()[0], what="follower sync")
        yield producer, follower
    finally:
        for node in (follower, producer):
            if node.proc is not None and node.proc.poll() is None:
                node.proc.send_signal(signal.SIGCONT)
            node.stop()


@pytest_twisted.inlineCallbacks
def test_a_frozen_upstream_loses_its_subscriptions_and_no_payment(upstreams):
    producer, follower = upstreams
    gw = GatewaySite([f"ws://bytemaster:supersecret@127.0.0.1:{node.port}"
                      for node in (producer, follower)], ApiAccess.from_json(VECTORS),
                     timeout=30.0)  # the lag check, not a check's timeout, moves the link
    yield gw.start()
    try:
        wallet = yield ws_connect(gw.port)
        yield wallet.call("database", "set_subscribe_callback", 1, False)
        found = yield wallet.call("database", "get_full_accounts", ["init1"], True)
        before = next(int(b["balance"]) for b in found[0][1]["balances"]
                      if b["asset_type"] == "1.3.0") if found[0][1]["balances"] else 0
        shard = gw.hub.shards[0]
        by_port = {u.address.port: u for u in gw.pool.upstreams}
        if shard.upstream is by_port[producer.port]:  # the follower carries it
            shard.avoid = shard.upstream
            shard.detach(shard.link)
            shard.pick()
        yield wait_for(lambda: shard.link is by_port[follower.port]
                       and shard.noticed_head is not None, timeout=20.0)
        follower.proc.send_signal(signal.SIGSTOP)
        trx = yield threads.deferToThread(
            signed_over_head, producer, [transfer_op(31415, to="1.2.7")])
        yield threads.deferToThread(producer.call, "broadcast_transaction", trx,
                                    api="network_broadcast")
        yield wait_for(lambda: paid(wallet.notices, "1.2.7", before + 31415), timeout=40.0)
        assert shard.upstream is by_port[producer.port]
        assert gw.hub.moved_stale == 1
    finally:
        yield gw.stop()
