"""``GET /status`` (a page for a person) and ``GET /healthz`` (JSON for a
load balancer) on the metrics port, from
:func:`nodeapi.metrics_health.key_figures` and
:func:`~nodeapi.metrics_health.health`.

The page is one small HTML document, rendered on the server at each
request, with its style inline and no script or external asset (it works
offline and behind a strict Content-Security-Policy); it reloads itself
every :data:`REFRESH` seconds (``<meta http-equiv="refresh">``).  Each
figure sits in an element whose ``id`` is the figure's name (``head_block_num``,
``searchdb_lag_blocks``, ...), so scripts and tests can read it.  Sections:
the node's identity and resources (version, chain id, mode, plugins,
uptime, resident memory, free space under the data dir), the chain, the
last checkpoint, the upstreams or followed peers, the search database, RPC
(connections, connected followers, calls, latency) and the recent warnings
and errors of the log.

``/healthz`` answers HTTP 200 with the figures and ``"ok": true`` while the
node is in sync, 503 with ``"ok": false`` and ``"problems"`` otherwise
(HAProxy ``option httpchk GET /healthz``, nginx, systemd timers).
"""

import html
import json

from twisted.web.resource import Resource

from nodeapi.metrics_health import HealthLimits, health

#: Seconds between two reloads of the status page.
REFRESH = 5

_STYLE = ("body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fafafa}"
          "h1{font-size:1.3em}h2{font-size:1.05em;margin-top:1.2em}"
          "table{border-collapse:collapse}td,th{padding:.2em .8em;text-align:left;"
          "border-bottom:1px solid #ddd}th{font-weight:600;color:#555}"
          ".ok{color:#070}.bad{color:#b00}")


def _cell(name: str, value) -> str:
    text = "-" if value is None else value
    return f'<td id="{name}">{html.escape(str(text))}</td>'


def _rows(rows) -> str:
    return "".join(f"<tr><th>{html.escape(label)}</th>{_cell(name, value)}</tr>"
                   for label, name, value in rows)


def _size(count) -> str:
    """Bytes as ``12.3 MiB`` (binary units), None as None."""
    if count is None:
        return None
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024


def _duration(seconds) -> str:
    """Seconds as ``3d 4h 5m 6s`` (the larger units only when non-zero)."""
    if seconds is None:
        return None
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [(days, "d"), (hours, "h"), (minutes, "m")]
    shown = [f"{n}{u}" for i, (n, u) in enumerate(parts) if n or any(p[0] for p in parts[:i])]
    return " ".join(shown + [f"{secs}s"])


def _node_section(node: dict) -> tuple:
    """The identity and resources of the process, and its recent warnings
    and errors: two lists of HTML parts."""
    rows = [("Version", "node_version", node["version"]),
            ("Chain id", "node_chain_id", node["chain_id"]),
            ("Mode", "node_mode", node["mode"]),
            ("Plugins", "node_plugins", " ".join(node["plugins"]) or None),
            ("Uptime", "node_uptime", _duration(node["uptime"])),
            ("Resident memory", "node_rss", _size(node["rss_bytes"])),
            ("Data dir", "node_data_dir", node["data_dir"]),
            ("Free under the data dir", "node_data_dir_free",
             _size(node["data_dir_free_bytes"]))]
    counts = node.get("error_counts") or {}
    rows.append(("Warnings / errors since start", "node_error_counts",
                 f"{counts.get('warn', 0)} / "
                 f"{counts.get('error', 0) + counts.get('critical', 0)}"))
    identity = ["<h2>Node</h2><table>", _rows(rows), "</table>"]
    errors = node["errors"]
    parts = ["<h2>Recent warnings and errors</h2>"]
    if not errors:
        parts.append('<p id="errors_none">None since start.</p>')
    else:
        parts.append("<table><tr><th>Time (UTC)</th><th>Level</th><th>Message</th></tr>")
        for i, entry in enumerate(errors):
            parts.append("<tr>" + "".join(_cell(f"error{i}_{key}", entry[key])
                                          for key in ("time", "level", "text")) + "</tr>")
        parts.append("</table>")
    return identity, parts


def render_status(report: dict) -> str:
    """The HTML page of a :func:`~nodeapi.metrics_health.health` report."""
    r = report
    state = ('<p id="state" class="ok">in sync</p>' if r["ok"] else
             '<p id="state" class="bad">not in sync: '
             + html.escape("; ".join(r["problems"])) + "</p>")
    chain = [("Head block", "head_block_num", r["head_block_num"]),
             ("Head block id", "head_block_id", r["head_block_id"]),
             ("Head block time (UTC)", "head_block_time", r["head_block_time"]),
             ("Head block age (s)", "head_block_age", r["head_block_age"]),
             ("Last irreversible block", "last_irreversible_block_num",
              r["last_irreversible_block_num"]),
             ("Witness participation (%)", "participation", r["participation"]),
             ("Blocks produced", "blocks_produced", r["blocks_produced"])]
    if r["replay"] is not None:
        chain.append(("Replay", "replay", f"block {r['replay']['block']} of "
                      f"{r['replay']['target']} ({r['replay']['percent']}%)"))
    parts = ["<!DOCTYPE html><html><head><meta charset=\"utf-8\">",
             f'<meta http-equiv="refresh" content="{REFRESH}">',
             "<title>nodeapi status</title>", f"<style>{_STYLE}</style></head><body>",
             "<h1>nodeapi status</h1>", state]
    identity, errors = _node_section(r["node"]) if r.get("node") is not None else ([], [])
    parts += identity
    parts += ["<h2>Chain</h2><table>", _rows(chain), "</table>"]
    checkpoint = r.get("checkpoint")
    if checkpoint is not None:
        parts += ["<h2>Last checkpoint</h2><table>", _rows([
            ("Block", "checkpoint_block_num", checkpoint["block_num"]),
            ("Written (s ago)", "checkpoint_age", checkpoint["age"])]), "</table>"]
    if r["upstream"] is not None:
        up = r["upstream"]
        parts += ["<h2>Upstream</h2><table>", _rows([
            ("Lag (blocks)", "upstream_lag_blocks", up["lag_blocks"]),
            ("Lag (s)", "upstream_lag_seconds", up["lag_seconds"]),
            ("Reconnections", "upstream_reconnects", up["reconnects"])]), "</table>"]
        if up.get("upstreams"):
            parts.append("<h2>Upstreams</h2><table><tr><th>Upstream</th><th>State</th>"
                         "<th>Head block</th><th>Behind by</th><th>Last fault</th></tr>")
            for i, one in enumerate(up["upstreams"]):
                parts.append("<tr>" + "".join(
                    _cell(f"upstream{i}_{key}", one[key]) for key in (
                        "upstream", "state", "head_block_num", "lag_blocks", "fault"))
                    + "</tr>")
            parts.append("</table>")
    if r["peers"]:
        parts.append("<h2>Followed peers</h2><table><tr><th>Address</th><th>State</th>"
                     "<th>Head block</th><th>Ahead by</th><th>Reconnections</th></tr>")
        for i, peer in enumerate(r["peers"]):
            parts.append("<tr>" + "".join(_cell(f"peer{i}_{key}", peer.get(key)) for key in (
                "addr", "state", "head_block_num", "lag", "reconnects")) + "</tr>")
        parts.append("</table>")
    if r["searchdb"] is not None:
        db = r["searchdb"]
        parts += ["<h2>Search database</h2><table>", _rows([
            ("Lag (blocks)", "searchdb_lag_blocks", db["lag_blocks"]),
            ("Queued documents", "searchdb_queue", db["queue"]),
            ("Spooled to disk", "searchdb_spooled", _size(db.get("spooled_bytes"))),
            ("Documents shipped", "searchdb_shipped", db["shipped"]),
            ("Documents refused", "searchdb_failed", db["failed"])]), "</table>"]
    if r["rpc"] is not None:
        rpc = r["rpc"]
        latency = rpc.get("latency") or {}
        parts += ["<h2>RPC</h2><table>", _rows([
            ("TCP connections (HTTP and WebSocket)", "rpc_tcp_connections",
             rpc.get("tcp_connections")),
            ("WebSocket connections", "rpc_connections", rpc["connections"]),
            ("of them logged in as a user", "rpc_logged_in", rpc.get("logged_in")),
            ("Connected followers (block-applied callbacks)", "rpc_block_subscribers",
             rpc.get("block_subscribers")),
            ("Calls per second (last minute)", "rpc_calls_per_second",
             rpc["calls_per_second"]),
            ("Calls since start", "rpc_calls_total", rpc["calls_total"]),
            (f"Latency median (ms, last {latency.get('calls', 0)} calls)", "rpc_latency_p50",
             latency.get("p50_ms")),
            ("Latency 99th percentile (ms)", "rpc_latency_p99", latency.get("p99_ms")),
            ("Latency max (ms)", "rpc_latency_max", latency.get("max_ms"))]), "</table>"]
    parts += errors
    parts.append(f"<p>Reloads every {REFRESH} s. JSON: <a href=\"healthz\">/healthz</a>, "
                 "Prometheus: <a href=\"metrics\">/metrics</a>.</p></body></html>")
    return "".join(parts)


class _Report(Resource):
    isLeaf = True

    def __init__(self, figures, limits: HealthLimits) -> None:
        super().__init__()
        self.figures, self.limits = figures, limits


class HealthResource(_Report):
    """``GET /healthz``: the health report as JSON, 200 in sync, 503 not.

    :param figures: zero-argument callable returning
        :func:`~nodeapi.metrics_health.key_figures`.
    """

    def render_GET(self, request) -> bytes:
        """``Resource`` GET: the report of
        :func:`~nodeapi.metrics_health.health` as sorted JSON, status 200 when
        it is ``ok``, else 503; ``Cache-Control: no-store``."""
        report = health(self.figures(), self.limits)
        request.setResponseCode(200 if report["ok"] else 503)
        request.setHeader(b"Content-Type", b"application/json")
        request.setHeader(b"Cache-Control", b"no-store")
        return json.dumps(report, sort_keys=True).encode()


class StatusResource(_Report):
    """``GET /status``: the page of :func:`render_status` (always 200)."""

    def render_GET(self, request) -> bytes:
        """``Resource`` GET: the HTML page of :func:`render_status`, status
        200; ``Cache-Control: no-store``."""
        request.setHeader(b"Content-Type", b"text/html; charset=utf-8")
        request.setHeader(b"Cache-Control", b"no-store")
        return render_status(health(self.figures(), self.limits)).encode()
