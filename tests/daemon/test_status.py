"""``GET /status`` and ``GET /healthz`` on the metrics port: the health
rules with a controlled clock over a real loopback port, and the page as
headless Chromium (Debian's ``chromium``) renders it from a running
daemon, checked against the node's own API."""

import os
import re
import shutil
import subprocess

import pytest
import pytest_twisted
import treq
from twisted.internet import reactor
from twisted.internet.task import Clock

from nodeapi.metrics import Metrics
from nodeapi.metrics_health import HealthLimits, RateWindow, health, key_figures, participation

from kit.chain import produce
from kit.daemon import ACCESS, Daemon, free_port


def test_participation_counts_the_filled_recent_slots():
    """graphene: 128 recent slots; all filled = 100 %, 96 of 128 = 75 %."""
    assert participation({"recent_slots_filled": str(2 ** 128 - 1)}) == 100.0
    assert participation({"recent_slots_filled": str(2 ** 96 - 1)}) == 75.0
    assert participation({"recent_slots_filled": "0"}) == 0.0


def test_rate_window_averages_over_the_last_minute():
    clock = Clock()
    rate = RateWindow(clock)
    for _ in range(30):
        rate.add()
    clock.advance(10)
    assert rate.rate() == 3.0  # 30 calls over the 10 s since start
    clock.advance(49)
    rate.add(29)
    assert rate.rate() == 1.0  # 59 calls in 59 s
    clock.advance(2)
    assert rate.rate() == 29 / 60  # the first second's 30 calls left the window
    clock.advance(60)
    assert rate.rate() == 0.0


def test_health_rules():
    base = {"head_block_num": 10, "head_block_age": 3.0, "replay": None, "searchdb": None}
    limits = HealthLimits(max_head_age=30, max_searchdb_lag=5)
    assert health(base, limits)["ok"] is True
    old = health(dict(base, head_block_age=31.0), limits)
    assert old["ok"] is False and old["problems"] == ["head block is 31 s old (limit 30 s)"]
    behind = health(dict(base, searchdb={"lag_blocks": 6}), limits)
    assert behind["problems"] == ["search database is 6 blocks behind (limit 5)"]
    assert health(dict(base, searchdb={"lag_blocks": 5}), limits)["ok"] is True
    replaying = health(dict(base, replay={"block": 10, "target": 40, "percent": 25.0}), limits)
    assert replaying["problems"] == ["replaying: block 10 of 40"]
    assert health(dict(base, head_block_age=None), limits)["problems"] == [
        "no head block time yet"]


@pytest_twisted.inlineCallbacks
def test_healthz_200_in_sync_503_behind(chain):
    """The head block's age is measured on the clock Metrics is given: one
    second after the head -> 200; 31 s after (limit 30) -> 503 with the
    reason; both carry the same figures as the status page."""
    produce(chain, 3)
    clock = Clock()
    metrics = Metrics(chain, clock=clock, health_limits=HealthLimits(max_head_age=30))
    port = reactor.listenTCP(0, metrics.site(), interface="127.0.0.1")
    url = f"http://127.0.0.1:{port.getHost().port}"
    try:
        clock.advance(chain.head_block_time + 1)
        resp = yield treq.get(url + "/healthz")
        body = yield resp.json()
        assert resp.code == 200 and body["ok"] is True and body["problems"] == []
        assert body["head_block_num"] == 3 and body["head_block_age"] == 1.0
        assert body["head_block_id"] == chain.head_block_id
        assert body["participation"] == 100.0
        clock.advance(30)
        resp = yield treq.get(url + "/healthz")
        body = yield resp.json()
        assert resp.code == 503 and body["ok"] is False
        assert body["problems"] == ["head block is 31 s old (limit 30 s)"]
        resp = yield treq.get(url + "/status")
        page = yield resp.text()
        assert resp.code == 200 and resp.headers.getRawHeaders("content-type") == [
            "text/html; charset=utf-8"]
        assert 'id="head_block_num">3<' in page and "not in sync" in page
        assert "<script" not in page and "http://" not in page and "https://" not in page
    finally:
        yield port.stopListening()


def test_key_figures_while_replaying(chain):
    """The replay target set by Chain.replay shows as progress."""
    produce(chain, 4)
    chain.replay_target = 8
    figures = key_figures(now=chain.head_block_time, chain=chain)
    assert figures["replay"] == {"block": 4, "target": 8, "percent": 50.0}
    chain.replay_target = None


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("chromium is not installed (Debian: apt-get install -y chromium; "
                    ".ci/run installs it)")
    return path


def _browse(*args, url: str) -> str:
    proc = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                           "--no-first-run", "--user-data-dir=" + args[0], *args[1:], url],
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return proc.stdout.decode()


def _cells(dom: str) -> dict:
    return dict(re.findall(r'<td id="([a-z0-9_]+)">([^<]*)</td>', dom))


@pytest.mark.slow
def test_status_page_in_headless_chromium(tmp_path):
    """A running node's /status, rendered by headless Chromium
    (``--dump-dom``), shows the head block, its id, the irreversible block
    and the witness participation the node's API gives; /healthz is 200;
    a screenshot is saved beside the test's files."""
    metrics_port = free_port()
    node = Daemon(tmp_path / "data", "--metrics-endpoint",
                  f"tcp:{metrics_port}:interface=127.0.0.1", "--checkpoint-interval", "2",
                  "--plugins", "witness account_history", "--api-access", ACCESS).start()
    try:
        node.wait_head(3)
        _fail_a_login(node.port)  # a warning the page lists
        _wait_for_checkpoint(tmp_path / "data")
        url = f"http://127.0.0.1:{metrics_port}/status"
        profile = str(tmp_path / "profile")
        dom = _browse(profile, "--dump-dom", url=url)
        cells = _cells(dom)
        shown = int(cells["head_block_num"])
        block = node.call("get_block", shown)
        node.wait_head(shown + 1)
        assert cells["head_block_id"] == node.call("get_block", shown + 1)["previous"]
        assert cells["head_block_time"] == block["timestamp"]
        props = node.call("get_dynamic_global_properties")
        assert shown <= props["head_block_number"] <= shown + 3
        assert 0 <= int(cells["last_irreversible_block_num"]) <= shown
        assert int(props["last_irreversible_block_num"]) >= int(
            cells["last_irreversible_block_num"])
        # recent_slots_filled: one bit per slot of the last 128; the blocks
        # produced since the page was rendered shift in at most that many bits
        api_participation = 100 * bin(int(props["recent_slots_filled"])).count("1") / 128
        moved = props["head_block_number"] - shown
        assert abs(float(cells["participation"]) - api_participation) <= 100 * moved / 128 + 0.1
        assert float(cells["head_block_age"]) < 5
        assert int(cells["rpc_calls_total"]) >= 2  # this test's get_block and its wait_head
        # identity and resources
        from nodeapi import __version__

        assert cells["node_version"] == __version__
        assert cells["node_chain_id"] == node.call("get_chain_id")
        assert cells["node_mode"] == "node"
        assert cells["node_plugins"] == "witness account_history"
        assert re.fullmatch(r"(\d+m )?\d+s", cells["node_uptime"]), cells["node_uptime"]
        rss = re.fullmatch(r"([\d.]+) MiB", cells["node_rss"])
        with open(f"/proc/{node.proc.pid}/status") as f:
            kib = int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1))
        assert rss and abs(float(rss.group(1)) - kib / 1024) < 0.25 * kib / 1024 + 5
        assert cells["node_data_dir"] == str(tmp_path / "data")
        free = os.statvfs(tmp_path)
        free_shown, unit = cells["node_data_dir_free"].split()
        factor = {"MiB": 2 ** 20, "GiB": 2 ** 30, "TiB": 2 ** 40}[unit]
        assert abs(float(free_shown) * factor - free.f_bavail * free.f_frsize) < 0.1 * factor + 2 ** 30
        errors = {cells[key]: cells[key.replace("_text", "_level")]
                  for key in cells if re.fullmatch(r"error\d+_text", key)}
        assert errors['Failed login from 127.0.0.1 user "bytemaster" via http'] == "warn"
        assert re.fullmatch(r"\d+ / 0", cells["node_error_counts"])
        rows = [key for key in cells if re.fullmatch(r"error\d+_text", key)]
        assert int(cells["node_error_counts"].split()[0]) == len(rows), [cells[r] for r in rows]
        # RPC latency and the followers; the last checkpoint
        assert 0 <= float(cells["rpc_latency_p50"]) <= float(cells["rpc_latency_p99"]) < 5000
        assert cells["rpc_block_subscribers"] == "0"
        assert int(cells["rpc_tcp_connections"]) >= 0
        checkpoint = int(cells["checkpoint_block_num"])
        assert checkpoint % 2 == 0 and 2 <= checkpoint <= shown
        assert 0 <= int(cells["checkpoint_age"]) < 60
        assert 'id="state" class="ok">in sync<' in dom
        assert '<meta http-equiv="refresh" content="5">' in dom
        shot = tmp_path / "status.png"
        _browse(profile, f"--screenshot={shot}", "--window-size=900,700", url=url)
        assert shot.stat().st_size > 1000
        with open(shot, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/healthz") as resp:
            assert resp.status == 200
    finally:
        node.stop()
    assert os.path.exists(tmp_path / "status.png")


def _fail_a_login(port: int) -> None:
    """An HTTP call with a wrong Basic login (refused, logged as a warning)."""
    import base64
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/rpc", data=b'{"jsonrpc":"2.0","id":1,"method":"get_chain_id",'
        b'"params":[]}', headers={"Content-Type": "application/json", "Authorization": "Basic "
                                  + base64.b64encode(b"bytemaster:wrong").decode()})
    try:
        urllib.request.urlopen(request, timeout=10).read()
    except urllib.error.HTTPError:
        pass


def _wait_for_checkpoint(data_dir) -> None:
    from kit.wait import wait_until

    wait_until(lambda: any(name.endswith(".ckpt") for name in os.listdir(data_dir / "checkpoints"))
               if (data_dir / "checkpoints").exists() else False, what="a checkpoint")


def test_status_page_shows_peers_and_the_search_database(chain, tmp_path):
    """With a followed peer and the searchdb plugin the page has their
    sections: the peer's address, state and how far it is ahead; the
    database's lag (nothing confirmed yet: the whole head) and queue."""
    from nodeapi.metrics_status import render_status
    from nodeapi.peers.service import PeerService

    from kit.searchdb import make_service

    produce(chain, 2)
    peers = PeerService(chain, seed_nodes=[f"127.0.0.1:{free_port()}"], reactor=reactor)
    searchdb = make_service("http://127.0.0.1:9/", chain, str(tmp_path))
    metrics = Metrics(chain, {"searchdb": searchdb}, peers=peers, clock=Clock())
    metrics.clock.advance(chain.head_block_time + 2)
    figures = metrics.figures()
    assert figures["peers"] == [{"addr": peers.potential_peers()[0]["addr"],
                                 "state": "connecting", "head_block_num": 0, "lag": 0,
                                 "reconnects": 0}]
    assert figures["searchdb"]["lag_blocks"] == 2 and figures["searchdb"]["queue"] == 0
    page = render_status(health(figures, HealthLimits(max_searchdb_lag=1)))
    cells = _cells(page)
    assert cells["peer0_addr"] == peers.potential_peers()[0]["addr"]
    assert cells["peer0_state"] == "connecting"
    assert cells["searchdb_lag_blocks"] == "2" and cells["searchdb_queue"] == "0"
    assert "search database is 2 blocks behind (limit 1)" in page


def test_recent_errors_are_bounded_and_counted_once():
    """The status page's log excerpt: warnings and errors only, the newest
    first, at most RECENT_ERRORS entries of at most ERROR_TEXT characters
    (a traceback's first line), each event counted once even when twistd
    hands it over again."""
    from twisted.logger import Logger

    from nodeapi.metrics_health import ERROR_TEXT, RECENT_ERRORS, RecentErrors

    recent = RecentErrors()
    events = []
    log = Logger(namespace="test", observer=events.append)
    log.info("not kept")
    for i in range(RECENT_ERRORS + 5):
        log.warn("warning {i}", i=i)
    log.error("x" * 1000 + "\nsecond line")
    try:
        1 / 0
    except ZeroDivisionError:
        log.failure("it failed")
    for event in events + events[-2:]:  # the last two seen twice
        recent(event)
    entries = recent.recent()
    assert len(entries) == RECENT_ERRORS
    assert entries[0]["level"] == "critical" and entries[0]["text"] == "it failed"
    assert entries[1]["level"] == "error" and entries[1]["text"] == "x" * ERROR_TEXT
    assert entries[2]["text"] == f"warning {RECENT_ERRORS + 4}"
    assert recent.counts == {"warn": RECENT_ERRORS + 5, "error": 1, "critical": 1}


def test_latency_window_median_and_99th_percentile():
    """Durations 1..100 ms: median 51 ms (the value at index 50 of 100),
    99th percentile 100 ms, max 100 ms; only the last ``size`` calls count."""
    from nodeapi.metrics_health import LatencyWindow

    window = LatencyWindow(size=100)
    assert window.summary() == {"calls": 0, "p50_ms": None, "p99_ms": None, "max_ms": None}
    window.add(9.0)  # pushed out by the hundred below
    for ms in range(100, 0, -1):
        window.add(ms / 1000)
    assert window.summary() == {"calls": 100, "p50_ms": 51.0, "p99_ms": 100.0,
                                "max_ms": 100.0}
