"""The Prometheus alert rules and the Grafana dashboard shipped in etc/:
the rules pass ``promtool check rules`` (Debian's ``prometheus`` package),
the dashboard is valid JSON of the shape Grafana imports, and every metric
name either uses is one that running nodes export - a producer (witness
and searchdb plugins), a follower of it and a gateway in front of it,
scraped over loopback; their expositions pass ``promtool check metrics``."""

import json
import os
import shutil
import subprocess

import pytest

from kit.daemon import ACCESS, Daemon, free_port
from kit.metrics import exported_names, promql_names, samples, scrape_text
from kit.paths import ROOT
from kit.wait import wait_until

RULES = os.path.join(ROOT, "etc", "prometheus", "nodeapi-rules.yml")
DASHBOARD = os.path.join(ROOT, "etc", "grafana", "nodeapi-dashboard.json")
#: the names Prometheus itself makes for each target (not exported by the node)
PROMETHEUS_MADE = {"up"}


def _promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        pytest.fail("promtool is not installed (Debian: apt-get install -y prometheus; "
                    ".ci/run installs it)")
    return path


def _rule_expressions() -> dict:
    import yaml

    with open(RULES) as f:
        groups = yaml.safe_load(f)["groups"]
    return {rule["alert"]: rule["expr"] for group in groups for rule in group["rules"]}


def _dashboard_expressions() -> dict:
    with open(DASHBOARD) as f:
        dash = json.load(f)
    found = {}
    for panel in dash["panels"]:
        for target in panel.get("targets", ()):
            found[f"{panel['title']} ({target['refId']})"] = target["expr"]
    for var in dash["templating"]["list"]:
        if var["type"] == "query":
            found[f"variable {var['name']}"] = var["definition"]
    return found


def test_alert_rules_pass_promtool():
    proc = subprocess.run([_promtool(), "check", "rules", RULES], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS" in proc.stdout
    rules = _rule_expressions()
    assert len(rules) >= 20 and "NodeapiHeadBlockStale" in rules


def test_alert_rule_fires_on_a_stale_head():
    """``promtool test rules``: NodeapiHeadBlockStale fires after its 2
    minutes of a head older than 60 s, and not before."""
    test = {"rule_files": [RULES], "evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": [{"series": 'nodeapi_head_block_age_seconds{instance="n1",job="nodeapi"}',
                          "values": "3 3 90 150 210 270"}],
        "alert_rule_test": [
            {"eval_time": "3m", "alertname": "NodeapiHeadBlockStale", "exp_alerts": []},
            {"eval_time": "5m", "alertname": "NodeapiHeadBlockStale", "exp_alerts": [{
                "exp_labels": {"severity": "critical", "instance": "n1", "job": "nodeapi"},
                "exp_annotations": {
                    "summary": "nodeapi n1: head block is 4m 30s old",
                    "description": "No new block for over a minute (blocks come every 3 s on "
                                   "BitShares): its peers or upstreams are gone, or it is "
                                   "catching up. /status names the reason."}}]}]}]}
    import tempfile

    import yaml

    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
        yaml.safe_dump(test, f)
    try:
        proc = subprocess.run([_promtool(), "test", "rules", f.name], capture_output=True,
                              text=True, timeout=60)
    finally:
        os.unlink(f.name)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_dashboard_is_a_grafana_dashboard():
    with open(DASHBOARD) as f:
        dash = json.load(f)
    assert dash["uid"] == "nodeapi" and dash["schemaVersion"] >= 30
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids))
    queries = _dashboard_expressions()
    assert len(queries) >= 30
    for panel in dash["panels"]:
        if panel["type"] != "row":
            assert panel["targets"] and panel["datasource"]["uid"] == "${datasource}"
            grid = panel["gridPos"]
            assert grid["x"] + grid["w"] <= 24
    grids = [p["gridPos"] for p in dash["panels"]]
    overlapping = [(a, b) for i, a in enumerate(grids) for b in grids[i + 1:]
                   if a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"]
                   and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]]
    assert overlapping == []


@pytest.mark.slow
def test_rules_and_dashboard_use_only_exported_metrics(tmp_path, osmem):
    """Scrape a producer (witness and searchdb plugins, a checkpoint every
    2 blocks), a follower of it and a gateway over it; every metric name in
    the rules' expressions and the dashboard's queries is among the names
    they export (or Prometheus's ``up``)."""
    ports = {name: free_port() for name in ("producer", "follower", "gateway")}

    def metrics_endpoint(name):
        return ["--metrics-endpoint", f"tcp:{ports[name]}:interface=127.0.0.1"]

    producer = Daemon(tmp_path / "producer", "--api-access", ACCESS,
                      "--plugins", "witness searchdb", "--searchdb-node-url", osmem.url,
                      "--checkpoint-interval", "2", *metrics_endpoint("producer")).start()
    nodes = [producer]
    try:
        seed = f"ws://bytemaster:supersecret@127.0.0.1:{producer.port}"
        follower = Daemon(tmp_path / "follower", "--seed-node", seed,
                          "--plugins", "account_history market_history",
                          *metrics_endpoint("follower")).start()
        nodes.append(follower)
        gateway = Daemon(tmp_path / "gateway", "--upstream", seed,
                         *metrics_endpoint("gateway")).start()
        nodes.append(gateway)
        producer.wait_head(4)
        wait_until(lambda: follower.head()[0] >= 4, what="follower sync")
        with pytest.raises(RuntimeError):
            producer.call("no_such_function")  # an error counted by its code
        wait_until(lambda: "nodeapi_checkpoint_age_seconds" in scrape_text(ports["producer"]),
                   what="a checkpoint on the producer")
        texts = {name: scrape_text(port) for name, port in ports.items()}
    finally:
        for node in reversed(nodes):
            node.stop()
    exported = set().union(*(exported_names(text) for text in texts.values()))
    produced = samples(texts["producer"])
    assert produced["nodeapi_block_subscribers"] >= 1  # the follower
    assert produced["nodeapi_blocks_produced_total"] >= 4
    assert produced["nodeapi_searchdb_queue_documents"] >= 0
    assert any(k.startswith("nodeapi_rpc_errors_total{") for k in produced)
    followed = samples(texts["follower"])
    assert followed[f'nodeapi_peer_connected{{peer="127.0.0.1:{producer.port}"}}'] == 1
    # no witness plugin on the follower: no produced or missed blocks series
    assert not [k for k in followed if k.startswith(("nodeapi_blocks_produced",
                                                      "nodeapi_witness_missed"))]
    for name, text in texts.items():
        assert "_created" not in text, name
        # the exposition passes Prometheus's own linter (names, units, help)
        lint = subprocess.run([_promtool(), "check", "metrics"], input=text,
                              capture_output=True, text=True, timeout=60)
        assert lint.returncode == 0 and not lint.stdout.strip(), (name, lint.stdout,
                                                                   lint.stderr)
    missing = {}
    for where, expressions in (("rule", _rule_expressions()),
                               ("dashboard", _dashboard_expressions())):
        for title, expr in expressions.items():
            unknown = promql_names(expr) - exported - PROMETHEUS_MADE
            if unknown:
                missing[f"{where} {title}"] = sorted(unknown)
    assert missing == {}
    assert promql_names("rate(nodeapi_x_total[5m]) / up") == {"nodeapi_x_total", "up"}
