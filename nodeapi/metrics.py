"""Prometheus metrics, the status page and the health check on
``--metrics-endpoint`` (off by default).

The series are listed in README.rst "Metrics" (all prefixed ``nodeapi_``
but prometheus_client's process collector's; a gateway's
``nodeapi_gateway_*`` in full in :mod:`nodeapi.gateway.figures`); the alert rules
and dashboard in etc/prometheus and etc/grafana use only those names
(docs/operators.rst).  Counters of what happens on the RPC port are
updated as it happens (:class:`Metrics`); values owned by other
services (the chain, ``node.plugins``, the peers, a gateway's upstreams)
are read when scraped, by a custom collector, so those services need not
know about Prometheus.  No ``_created`` series
(:func:`prometheus_client.disable_created_metrics`, called when this
module is imported).
"""

from typing import Any, Optional

from prometheus_client import (
    CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector, disable_created_metrics)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.twisted import MetricsResource
from twisted.web.resource import Resource
from twisted.web.server import Site
from zope.interface import implementer

from nodeapi.applied import IBlockConsumer, ICheckpointed
from nodeapi.metrics_guard import METRICS_HEAD_TIMEOUT, METRICS_MAX_CONNECTIONS, GuardedSite
from nodeapi.metrics_health import (
    HealthLimits, LatencyWindow, RateWindow, RecentErrors, free_bytes, key_figures,
    participation, resident_bytes)
from nodeapi.metrics_status import HealthResource, StatusResource

disable_created_metrics()

#: distinct ``code`` label values of ``nodeapi_rpc_errors_total`` (then ``other``)
MAX_ERROR_CODES = 32
#: bounds (seconds) of ``nodeapi_rpc_call_duration_seconds``
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                   10.0)


def _gauge(name: str, text: str, value, labels=None, label_values=()):
    family = GaugeMetricFamily(name, text, labels=labels)
    family.add_metric(list(label_values), value)
    return family


class _PullCollector:
    """Reads the chain, witness, peers, checkpoints and searchdb figures
    at scrape time."""

    def __init__(self, metrics: "Metrics") -> None:
        self.metrics = metrics

    def describe(self):
        """prometheus_client calls this at ``register`` to learn the metric
        names for its duplicate check; [] claims none (the names are fixed
        and unique to this collector)."""
        return []

    def collect(self):
        """prometheus_client calls this at each scrape: the pulled series of
        the module docstring.  Reads attributes only, so it is quick and
        never fails for a missing value."""
        m = self.metrics
        now = m.clock.seconds()
        info = GaugeMetricFamily("nodeapi_build_info", "Version and build of this node (1)",
                                 labels=["version", "python", "twisted", "chain_id", "mode"])
        ident = m.identity
        info.add_metric([ident.get("version", ""), ident.get("python", ""),
                         ident.get("twisted", ""), ident.get("chain_id", ""),
                         ident.get("mode", "")], 1)
        yield info
        if m.data_dir is not None:
            free = free_bytes(m.data_dir)
            if free is not None:
                yield _gauge("nodeapi_data_dir_free_bytes",
                             "Bytes free for the node on the file system of its data dir", free)
        head_num = m.head_block_num
        yield _gauge("nodeapi_head_block_number", "Head block number", head_num)
        yield from self._chain(m, now)
        if m.upstream is not None:
            yield from _upstream_metrics(m.upstream, now)
        witness = m.witness
        if witness is not None:  # it runs on a chain (the witness plugin)
            yield CounterMetricFamily("nodeapi_blocks_produced",
                                      "Blocks produced by this node's witnesses",
                                      value=witness.produced)
            missed = GaugeMetricFamily("nodeapi_witness_missed_blocks",
                                       "Slots missed by this node's witnesses "
                                       "(total_missed)", labels=["witness"])
            for witness_id in witness.witness_ids:
                obj = witness.chain.state.objects.get(witness_id) or {}
                missed.add_metric([witness_id], int(obj.get("total_missed", 0)))
            yield missed
        if m.peers is not None:
            yield from _peer_metrics(m.peers.potential_peers(), head_num)
        yield from self._rpc(m)
        if m.checkpoints is not None:
            newest = m.checkpoints.newest()
            if newest is not None:
                num, when = newest
                yield _gauge("nodeapi_checkpoint_block_number", "Block of the newest checkpoint",
                             num)
                yield _gauge("nodeapi_checkpoint_age_seconds",
                             "Seconds since the newest checkpoint was written",
                             max(now - when, 0.0))
        plugin = m.searchdb
        if plugin is None:
            return
        yield CounterMetricFamily("nodeapi_searchdb_documents_shipped",
                                  "Documents the search database confirmed",
                                  value=getattr(plugin, "documents_shipped", 0))
        yield CounterMetricFamily("nodeapi_searchdb_documents_failed",
                                  "Documents the search database rejected (not 409)",
                                  value=getattr(plugin, "documents_failed", 0))
        yield _gauge("nodeapi_searchdb_queue_documents",
                     "Documents built and not yet confirmed by the search database",
                     getattr(plugin, "documents_pending", 0))
        yield _gauge("nodeapi_searchdb_spool_bytes",
                     "Bytes of queued documents spooled to disk",
                     getattr(getattr(plugin, "queue", None), "spooled_bytes", 0))
        confirmed = getattr(plugin, "confirmed_block_num", None)
        yield _gauge("nodeapi_searchdb_lag_blocks",
                     "Head block minus the last block fully confirmed",
                     max(head_num - confirmed, 0) if confirmed is not None else head_num)

    @staticmethod
    def _chain(m, now: float):
        """Head age, last irreversible block, participation and missed
        slots of a node with a chain."""
        if m.chain is None:
            return
        chain = m.chain
        dgp = chain.state.objects["2.1.0"]
        yield _gauge("nodeapi_head_block_age_seconds",
                     "Seconds between the head block's time and now",
                     max(now - chain.head_block_time, 0.0))
        yield _gauge("nodeapi_last_irreversible_block_number", "Last irreversible block",
                     int(dgp.get("last_irreversible_block_num", 0)))
        yield _gauge("nodeapi_witness_participation_ratio",
                     "Share of the last 128 slots a witness filled (0..1)",
                     participation(dgp) / 100.0)
        yield _gauge("nodeapi_recently_missed_blocks",
                     "graphene recently_missed_count (grows with each missed slot)",
                     int(dgp.get("recently_missed_count", 0)))

    @staticmethod
    def _rpc(m):
        count = m.connection_count
        if count is not None:
            yield _gauge("nodeapi_rpc_connections",
                         "Open TCP connections on the RPC port (HTTP and WebSocket)", count())
        if m.logged_in is not None:
            yield _gauge("nodeapi_websocket_logged_in_sessions",
                         "WebSocket sessions logged in as a named api-access user",
                         m.logged_in())
        node = m.node
        if node is not None and getattr(node, "chain", None) is not None:
            yield _gauge("nodeapi_block_subscribers",
                         "WebSocket sessions with a block-applied callback",
                         getattr(node, "block_subscribers", 0))


def _peer_metrics(peers: list, head: int):
    """The followed peers' series (module docstring), label ``peer``."""
    connected = GaugeMetricFamily("nodeapi_peer_connected",
                                  "1 while the followed peer's WebSocket is open",
                                  labels=["peer"])
    heads = GaugeMetricFamily("nodeapi_peer_head_block_number",
                              "The followed peer's last known head block", labels=["peer"])
    lag = GaugeMetricFamily("nodeapi_peer_lag_blocks",
                            "Blocks the followed peer's head is ahead of this node's",
                            labels=["peer"])
    reconnects = CounterMetricFamily("nodeapi_peer_reconnects",
                                     "Connections to the followed peer after the first",
                                     labels=["peer"])
    for p in peers:
        addr = p["addr"]
        connected.add_metric([addr], int(p["state"] in ("syncing", "live")))
        heads.add_metric([addr], p["head_block_num"] or 0)
        lag.add_metric([addr], max((p["head_block_num"] or 0) - head, 0))
        reconnects.add_metric([addr], p.get("reconnects", 0))
    yield from (connected, heads, lag, reconnects)


def _upstream_metrics(upstream, now: float):
    """Indexer mode: ``nodeapi_indexer_lag_blocks`` and ``_lag_seconds``
    (gauges) and ``nodeapi_indexer_upstream_reconnects`` (counter); with
    either upstream kind the head block's age."""
    last = getattr(upstream, "last_block_time", None)
    if last is not None:
        yield _gauge("nodeapi_head_block_age_seconds",
                     "Seconds between the head block's time and now", max(now - last, 0.0))
    yield _gauge("nodeapi_indexer_lag_blocks",
                 "Upstream head block minus the last block indexed", upstream.lag_blocks)
    yield _gauge("nodeapi_indexer_lag_seconds",
                 "Seconds since the time of the last block indexed", upstream.lag_seconds)
    yield CounterMetricFamily("nodeapi_indexer_upstream_reconnects",
                              "Connections to the upstream after the first",
                              value=upstream.reconnects)


class QuietSite(Site):
    """A ``twisted.web`` Site without an access log (the metrics endpoint
    is polled; a line per poll is noise) nor "Starting factory" lines."""

    noisy = False

    def log(self, request) -> None:
        """No access log."""


@implementer(IBlockConsumer, ICheckpointed)
class Metrics:
    """The node's metrics registry.

    :param chain: the Chain (head block number), or None (a gateway).
    :param plugins: the node's ``{name: plugin part}``
        (:attr:`nodeapi.node.Node.plugins`, read at each scrape): the
        ``witness`` (a :class:`~nodeapi.plugins.witness.service.WitnessService`:
        ``produced``, ``witness_ids``) and the ``searchdb`` plugin (a
        :class:`~nodeapi.plugins.searchdb.service.SearchDBService`:
        ``documents_shipped``, ``documents_failed``, ``documents_pending``,
        ``queue``, ``confirmed_block_num``) give their figures.
    :param upstream: indexer mode's
        :class:`~nodeapi.peers.upstream.UpstreamService` (lag, reconnects),
        or None; ``chain`` is None then.
    :param peers: the PeerService (followed peers) or None.
    :param clock: ``IReactorTime`` of the call rate, call durations and
        ages (default: the chain's clock, else the wall clock).
    :param health_limits: :class:`~nodeapi.metrics_health.HealthLimits` of
        ``/healthz`` (default ones when None).
    :param checkpoints: the :class:`~nodeapi.checkpoints.CheckpointService`
        (``newest()``) or None.
    :param data_dir: the data dir whose free space is shown, or None.
    :param identity: ``{"version", "python", "twisted", "chain_id",
        "mode", "plugins"}`` (strings; plugins a list) for
        ``nodeapi_build_info`` and the status page.
    :ivar node: the :class:`~nodeapi.node.Node` the API sets see (its
        ``block_subscribers``), set by :meth:`watch_rpc`.
    :ivar recent_errors: a :class:`~nodeapi.metrics_health.RecentErrors`
        log observer; the caller adds it to the log publisher.
    """

    def __init__(self, chain, plugins: Optional[dict] = None, upstream: Optional[Any] = None,
                 peers: Optional[Any] = None, clock: Optional[Any] = None,
                 health_limits: Optional[HealthLimits] = None, *,
                 checkpoints: Optional[Any] = None, data_dir: Optional[str] = None,
                 identity: Optional[dict] = None) -> None:
        self.chain = chain
        self.plugins = plugins if plugins is not None else {}
        self.upstream, self.peers, self.checkpoints = upstream, peers, checkpoints
        self.data_dir = data_dir
        self.identity = dict(identity or {})
        if clock is None:
            clock = getattr(chain, "clock", None)
        if clock is None or not hasattr(clock, "seconds"):
            import time

            clock = type("WallClock", (), {"seconds": staticmethod(time.time)})()
        self.clock = clock
        self.started = clock.seconds()
        self.health_limits = health_limits or HealthLimits()
        self.calls = RateWindow(clock)
        self.latency = LatencyWindow()
        self.recent_errors = RecentErrors()
        self.calls_total = 0
        self._codes: set = set()  # error code labels given so far
        self.node = None
        self.connection_count = self.logged_in = None
        self.registry = CollectorRegistry(auto_describe=False)
        ProcessCollector(registry=self.registry)
        self.blocks_applied = Counter("nodeapi_blocks_applied", "Blocks applied (live and replay)",
                                      registry=self.registry)
        self.blocks_popped = Counter("nodeapi_blocks_popped", "Blocks popped by fork switches",
                                     registry=self.registry)
        self.rpc_calls = Counter("nodeapi_rpc_calls", "RPC calls answered",
                                 ["api", "function", "outcome"], registry=self.registry)
        self.rpc_duration = Histogram("nodeapi_rpc_call_duration_seconds",
                                      "Seconds from a call's request to its encoded reply",
                                      ["api", "function"], buckets=LATENCY_BUCKETS,
                                      registry=self.registry)
        #: the series of rpc_calls by (api, function, outcome), of
        #: rpc_duration by (api, function), once used (see rpc_call)
        self._rpc_calls: dict = {}
        self._rpc_duration: dict = {}
        self.rpc_errors = Counter("nodeapi_rpc_errors", "RPC calls answered with an error, "
                                  "by JSON-RPC error code", ["api", "function", "code"],
                                  registry=self.registry)
        self.limit_refusals = Counter("nodeapi_rpc_limit_refusals",
                                      "RPC calls, connections and subscribed items refused "
                                      "by a limit", ["limit", "scope"], registry=self.registry)
        self.ws_connections = Gauge("nodeapi_websocket_connections", "Open WebSocket connections",
                                    registry=self.registry)
        self.metrics_refused = Counter("nodeapi_metrics_connections_refused",
                                       "Connections to the metrics port refused over its cap",
                                       registry=self.registry)
        self.registry.register(_PullCollector(self))

    checkpoint_key = "metrics"

    @property
    def witness(self):
        """The witness plugin's service, or None."""
        return self.plugins.get("witness")

    @property
    def searchdb(self):
        """The searchdb plugin's service, or None."""
        return self.plugins.get("searchdb")

    @property
    def head_block_num(self) -> int:
        """The chain's head, or in indexer mode the last block indexed."""
        if self.chain is not None:
            return self.chain.head_block_num
        return self.upstream.next_block - 1 if self.upstream is not None else 0

    def checkpoint_records(self):
        """No records (``ICheckpointed``): counters start at 0 in every
        process, as Prometheus expects."""
        return []

    def checkpoint_usable(self, meta: dict) -> bool:
        """``ICheckpointed``: always True (nothing is kept)."""
        return True

    def restore_checkpoint(self, meta: dict, records: list) -> None:
        """Nothing to restore."""

    def block_applied(self, applied) -> None:
        """:class:`~nodeapi.applied.IBlockConsumer`: the chain calls this
        for every applied block (live and replay); increments
        ``nodeapi_blocks_applied_total`` by 1.  ``applied`` (an
        :class:`~nodeapi.applied.AppliedBlock`) is not looked at."""
        self.blocks_applied.inc()

    def block_popped(self, applied) -> None:
        """The chain popped a block (a fork switch): increments
        ``nodeapi_blocks_popped_total`` by 1."""
        self.blocks_popped.inc()

    def watch_rpc(self, node, connection_count, logged_in=None) -> None:
        """The RPC site being built (:func:`nodeapi.rpc.site.rpc_site`):
        ``node`` (the :class:`~nodeapi.node.Node`: its block subscribers),
        ``connection_count`` (``() -> int``: open TCP connections on the
        RPC port) and ``logged_in`` (``() -> int``: WebSocket sessions
        logged in as a named api-access user, or None) are read at each
        scrape."""
        self.node, self.connection_count = node, connection_count
        self.logged_in = logged_in

    def call_started(self) -> float:
        """The clock's time now, to hand back to :meth:`rpc_call`."""
        return self.clock.seconds()

    def rpc_call(self, request, outcome: str, started: Optional[float] = None,
                 code: Optional[int] = None) -> None:
        """Count one answered call in ``nodeapi_rpc_calls_total{api,
        function, outcome}``, its duration (since ``started``, from
        :meth:`call_started`; not measured when None) in
        ``nodeapi_rpc_call_duration_seconds{api, function}`` and, for an
        error, its JSON-RPC ``code`` in ``nodeapi_rpc_errors_total{api,
        function, code}``.  ``request`` is a
        :class:`nodeapi.rpc.jsonrpc.Request`, ``outcome`` ``"ok"`` or
        ``"error"`` (called by :func:`nodeapi.rpc.answer.answer`).  A call
        that resolved to no API function (unknown set or name) is counted
        under ``api="unresolved", function="unresolved"``, so clients cannot
        create label values."""
        self.calls_total += 1
        self.calls.add()
        if request.api_name:
            api, function = request.api_name, request.function
        else:  # unknown set or function: never a client-chosen label value
            api, function = "unresolved", "unresolved"
        # a label lookup takes a lock and builds a key at every call: each
        # series is kept once looked up (the registered functions bound them)
        calls = self._rpc_calls.get((api, function, outcome))
        if calls is None:
            calls = self._rpc_calls[api, function, outcome] = self.rpc_calls.labels(
                api, function, outcome)
        calls.inc()
        if started is not None:
            seconds = max(self.clock.seconds() - started, 0.0)
            duration = self._rpc_duration.get((api, function))
            if duration is None:
                duration = self._rpc_duration[api, function] = self.rpc_duration.labels(
                    api, function)
            duration.observe(seconds)
            self.latency.add(seconds)
        if outcome == "error":
            self.rpc_errors.labels(api, function, self._code_label(code)).inc()

    def _code_label(self, code) -> str:
        """The ``code`` label of an error: the code as text, or ``other``
        past :data:`MAX_ERROR_CODES` distinct ones (a gateway passes its
        upstreams' codes on: they must not grow the series without bound)."""
        label = str(code) if isinstance(code, int) and not isinstance(code, bool) else "other"
        if label not in self._codes:
            if len(self._codes) >= MAX_ERROR_CODES:
                return "other"
            self._codes.add(label)
        return label

    def limit_refused(self, limit: str, scope: str) -> None:
        """Count one refusal in ``nodeapi_rpc_limit_refusals_total{limit,
        scope}``: ``limit`` ``"calls"``, ``"connections"`` or
        ``"subscriptions"``, ``scope`` ``"user"``, ``"source"`` or
        ``"node"`` (called by :mod:`nodeapi.rpc.limits` and
        :class:`nodeapi.rpc.guard.ConnectionGuard`; fixed label values only)."""
        self.limit_refusals.labels(limit, scope).inc()

    def figures(self) -> dict:
        """The node's :func:`~nodeapi.metrics_health.key_figures` now."""
        now = self.clock.seconds()
        connections = self.registry.get_sample_value("nodeapi_websocket_connections")
        rpc = {"connections": int(connections or 0), "calls_total": self.calls_total,
               "calls_per_second": round(self.calls.rate(), 2),
               "latency": self.latency.summary(),
               "tcp_connections": (self.connection_count() if self.connection_count
                                   else None),
               "logged_in": self.logged_in() if self.logged_in else None,
               "block_subscribers": (getattr(self.node, "block_subscribers", None)
                                     if self.node is not None and self.chain is not None
                                     else None)}
        ident = self.identity
        node = {"version": ident.get("version"), "chain_id": ident.get("chain_id"),
                "mode": ident.get("mode"), "plugins": list(ident.get("plugins") or ()),
                "uptime": round(max(now - self.started, 0.0)),
                "rss_bytes": resident_bytes(), "data_dir": self.data_dir,
                "data_dir_free_bytes": (free_bytes(self.data_dir)
                                        if self.data_dir is not None else None),
                "errors": self.recent_errors.recent(),
                "error_counts": dict(self.recent_errors.counts)}
        checkpoint = None
        if self.checkpoints is not None:
            newest = self.checkpoints.newest()
            checkpoint = ({"block_num": newest[0], "age": round(max(now - newest[1], 0.0))}
                          if newest is not None else {"block_num": None, "age": None})
        return key_figures(
            now=now, chain=self.chain, witness=self.witness, peers=self.peers,
            upstream=self.upstream, searchdb=self.searchdb, rpc=rpc, node=node,
            checkpoint=checkpoint)

    def site(self, reactor=None, max_connections: int = METRICS_MAX_CONNECTIONS,
             head_timeout: float = METRICS_HEAD_TIMEOUT) -> Site:
        """A new ``twisted.web`` Site serving ``GET /metrics`` in the
        Prometheus text exposition format (prometheus_client
        ``MetricsResource`` over this registry), ``GET /status`` and
        ``GET /healthz`` (:mod:`nodeapi.metrics_status`); other paths are
        404; no access log.  The daemon listens on ``--metrics-endpoint``
        with it.

        With ``reactor`` the site is a
        :class:`~nodeapi.metrics_guard.GuardedSite`: at most
        ``max_connections`` open connections (more are closed at once and
        counted in ``nodeapi_metrics_connections_refused_total``), and a
        connection whose request head is not complete ``head_timeout``
        seconds after it opened, or which stays open that long after its
        answer, is closed."""
        root = Resource()
        root.putChild(b"metrics", MetricsResource(registry=self.registry))
        root.putChild(b"status", StatusResource(self.figures, self.health_limits))
        root.putChild(b"healthz", HealthResource(self.figures, self.health_limits))
        if reactor is None:
            return QuietSite(root)
        return GuardedSite(root, reactor=reactor, max_connections=max_connections,
                           head_timeout=head_timeout, refused=self.metrics_refused.inc)
