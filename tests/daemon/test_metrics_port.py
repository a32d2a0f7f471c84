"""The metrics port under a flood of unfinished connections: it holds at
most its cap of connections (the rest are closed as soon as accepted and
counted), cuts a request head that is not complete in time, and the node's
RPC port keeps serving - with the node's file descriptors limited to 1024,
as a default Linux login gives."""

import os
import resource
import socket
import time

import pytest

from nodeapi.metrics_guard import METRICS_HEAD_TIMEOUT, METRICS_MAX_CONNECTIONS

from kit.daemon import Daemon, free_port
from kit.metrics import samples, scrape_text
from kit.wait import wait_until

#: unfinished connections opened: more than the node's 1024 descriptors
FLOOD = 1200


def _open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.slow
def test_unfinished_connections_do_not_starve_rpc(tmp_path):
    metrics_port = free_port()
    node = Daemon(tmp_path / "data", "--metrics-endpoint",
                  f"tcp:{metrics_port}:interface=127.0.0.1")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))  # the node inherits it
    try:
        node.start(wait=False)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, FLOOD + 200), hard))
    held = []
    try:
        node.wait_rpc()
        node.wait_head(2)
        baseline = _open_fds(node.proc.pid)
        started = time.monotonic()
        peak = 0
        for i in range(FLOOD):
            s = socket.socket()
            s.settimeout(5)
            try:
                s.connect(("127.0.0.1", metrics_port))
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no blank line
            except OSError:
                pass  # closed at once by the node: over its cap
            held.append(s)
            if i % 100 == 99:  # RPC serves during the flood; the node holds at most its cap
                assert node.call("get_chain_id")
                peak = max(peak, _open_fds(node.proc.pid))
        flood_seconds = time.monotonic() - started
        # the cap's connections, plus those being refused or closed at that
        # moment and the RPC call's (without a cap: 960 here, then EMFILE)
        assert peak <= baseline + METRICS_MAX_CONNECTIONS + 48, (baseline, peak)
        assert METRICS_MAX_CONNECTIONS <= 128
        for _ in range(20):
            assert node.call("get_chain_id")
        head = node.head()[0]
        node.wait_head(head + 1)
        # once the head deadline passed, the held connections are closed
        # and the metrics port answers again
        remaining = METRICS_HEAD_TIMEOUT - (time.monotonic() - started)
        text = wait_until(lambda: _try_scrape(metrics_port),
                          timeout=remaining + 20, what="metrics port serving again")
        assert time.monotonic() - started >= METRICS_HEAD_TIMEOUT - 1
        values = samples(text)
        refused = values["nodeapi_metrics_connections_refused_total"]
        # each head deadline that passed during the flood made room for a cap more
        rounds = 1 + int(flood_seconds // METRICS_HEAD_TIMEOUT)
        assert FLOOD - METRICS_MAX_CONNECTIONS * rounds <= refused <= FLOOD, flood_seconds
        closed = 0
        for s in held:
            s.settimeout(0.5)
            try:
                if s.recv(1) == b"":
                    closed += 1
            except OSError:
                closed += 1  # reset
        assert closed == FLOOD
    finally:
        for s in held:
            s.close()
        node.stop()
    assert "Metrics connection from 127.0.0.1 refused: 64 connections open" in node.log()
    assert "Metrics connection from 127.0.0.1 aborted: request head not complete" in node.log()


def _try_scrape(port: int):
    try:
        return scrape_text(port, timeout=2)
    except OSError:
        return None
