"""A frozen upstream as operators meet it: three ``twistd -n nodeapi``
daemons, a producer and a follower (two upstreams of one chain) and a
gateway with ``--upstream-timeout 1``; the follower is stopped with
SIGSTOP (its TCP port still accepts, nothing answers) and continued with
SIGCONT."""

import json
import os
import signal
import time
import urllib.error
import urllib.request

import pytest

from kit.daemon import ACCESS, Daemon, free_port
from kit.wait import wait_until

pytestmark = pytest.mark.slow


def _get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _states(port):
    return [s["state"] for s in json.loads(_get(port, "/healthz")[1])["upstream"]["upstreams"]]


def test_a_frozen_upstream_costs_reads_one_timeout_at_most(tmp_path):
    producer = Daemon(tmp_path / "producer", "--api-access", ACCESS).start()
    seed = f"ws://bytemaster:supersecret@127.0.0.1:{producer.port}"
    follower = Daemon(tmp_path / "follower", "--api-access", ACCESS, "--plugins",
                      "account_history", "--seed-node", seed).start()
    metrics = free_port()
    gateway = None
    frozen = False
    try:
        producer.wait_head(2)
        wait_until(lambda: follower.head()[0] >= 2, what="follower sync")
        gateway = Daemon(tmp_path / "gateway", "--api-access", ACCESS, "--upstream", seed,
                         "--upstream", f"ws://bytemaster:supersecret@127.0.0.1:{follower.port}",
                         "--upstream-timeout", "1",
                         "--metrics-endpoint", f"tcp:{metrics}:interface=127.0.0.1").start()
        wait_until(lambda: _states(metrics) == ["serving", "serving"], what="both serving")
        os.kill(follower.proc.pid, signal.SIGSTOP)
        frozen = True
        latencies = []
        for _ in range(30):
            started = time.monotonic()
            assert gateway.call("get_dynamic_global_properties")["head_block_number"] >= 2
            latencies.append(time.monotonic() - started)
            time.sleep(0.05)
        # only reads in flight on the frozen one wait, 1 s (the timeout) at most
        assert max(latencies) < 1.8, latencies
        assert sum(latency > 0.5 for latency in latencies) <= 2, latencies
        states = _states(metrics)
        assert states[0] == "serving" and states[1] in ("suspect", "down"), states
        code, body = _get(metrics, "/healthz")
        assert code == 200, body
        os.kill(follower.proc.pid, signal.SIGCONT)
        frozen = False
        wait_until(lambda: _states(metrics) == ["serving", "serving"], timeout=20,
                   what="the follower back in rotation")
    finally:
        if frozen:
            os.kill(follower.proc.pid, signal.SIGCONT)
        for node in (gateway, follower, producer):
            if node is not None:
                node.stop()
