"""Prometheus metrics, the status page and the health check on
``--metrics-endpoint`` (off by default).

Exposed series (all prefixed ``nodeapi_``):

* ``head_block_number`` (gauge), ``blocks_applied_total`` (counter, live and
  replay), ``blocks_produced_total`` (counter, by this node's witness);
* ``rpc_calls_total{api, function, outcome}`` (counter; outcome ``ok`` or
  ``error``; api is the set name), ``websocket_connections`` (gauge);
* ``rpc_limit_refusals_total{limit, scope}`` (counter): calls, connections
  and subscribed items refused by a limit (``limit`` ``calls``,
  ``connections`` or ``subscriptions``; ``scope`` ``user`` for an api-access
  entry's limits, ``source`` for the per-address options, ``node`` for
  ``--max-connections``);
* ``searchdb_documents_shipped_total``, ``searchdb_documents_failed_total``
  and ``searchdb_lag_blocks`` (head block minus the last block whose
  documents the database confirmed), when the searchdb plugin runs.

Values owned by other services (witness, searchdb) are read when scraped, by
a custom collector, so those services need not know about Prometheus.
"""

from typing import Any, Optional

from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.twisted import MetricsResource
from twisted.web.resource import Resource
from twisted.web.server import Site
from zope.interface import implementer

from nodeapi.applied import IBlockConsumer, ICheckpointed
from nodeapi.metrics_health import HealthLimits, RateWindow, key_figures
from nodeapi.metrics_status import HealthResource, StatusResource


class _PullCollector:
    """Reads head block, witness and searchdb figures at scrape time."""

    def __init__(self, metrics: "Metrics") -> None:
        self.metrics = metrics

    def describe(self):
        """prometheus_client calls this at ``register`` to learn the metric
        names for its duplicate check; [] claims none (the names are fixed
        and unique to this collector)."""
        return []

    def collect(self):
        """prometheus_client calls this at each scrape: yields
        ``nodeapi_head_block_number`` (gauge), ``nodeapi_blocks_produced``
        (counter, 0 without a witness) and, with the searchdb plugin,
        ``nodeapi_searchdb_documents_shipped`` / ``_failed`` (counters) and
        ``nodeapi_searchdb_lag_blocks`` (gauge, blocks, never negative; the
        head block number while nothing is confirmed).  Reads attributes
        only, so it is quick and never fails for a missing value."""
        m = self.metrics
        head_num = m.head_block_num
        head = GaugeMetricFamily("nodeapi_head_block_number", "Head block number")
        head.add_metric([], head_num)
        yield head
        if m.upstream is not None:
            yield from _upstream_metrics(m.upstream)
        produced = CounterMetricFamily("nodeapi_blocks_produced",
                                       "Blocks produced by this node's witness")
        produced.add_metric([], getattr(m.witness, "produced", 0) if m.witness else 0)
        yield produced
        plugin = m.searchdb
        if plugin is None:
            return
        shipped = CounterMetricFamily("nodeapi_searchdb_documents_shipped",
                                      "Documents the search database confirmed")
        shipped.add_metric([], getattr(plugin, "documents_shipped", 0))
        yield shipped
        failed = CounterMetricFamily("nodeapi_searchdb_documents_failed",
                                     "Documents the search database rejected (not 409)")
        failed.add_metric([], getattr(plugin, "documents_failed", 0))
        yield failed
        lag = GaugeMetricFamily("nodeapi_searchdb_lag_blocks",
                                "Head block minus the last block fully confirmed")
        confirmed = getattr(plugin, "confirmed_block_num", None)
        lag.add_metric([], max(head_num - confirmed, 0)
                       if confirmed is not None else head_num)
        yield lag


def _upstream_metrics(upstream):
    """Indexer mode: ``nodeapi_indexer_lag_blocks`` and ``_lag_seconds``
    (gauges) and ``nodeapi_indexer_upstream_reconnects`` (counter)."""
    blocks = GaugeMetricFamily("nodeapi_indexer_lag_blocks",
                               "Upstream head block minus the last block indexed")
    blocks.add_metric([], upstream.lag_blocks)
    yield blocks
    seconds = GaugeMetricFamily("nodeapi_indexer_lag_seconds",
                                "Seconds since the time of the last block indexed")
    seconds.add_metric([], upstream.lag_seconds)
    yield seconds
    reconnects = CounterMetricFamily("nodeapi_indexer_upstream_reconnects",
                                     "Connections to the upstream after the first")
    reconnects.add_metric([], upstream.reconnects)
    yield reconnects


class QuietSite(Site):
    """A ``twisted.web`` Site without an access log (the metrics endpoint
    is polled; a line per poll is noise) nor "Starting factory" lines."""

    noisy = False

    def log(self, request) -> None:
        """No access log."""


@implementer(IBlockConsumer, ICheckpointed)
class Metrics:
    """The node's metrics registry.

    :param chain: the Chain (head block number).
    :param witness: the WitnessService (``blocks_produced``) or None.
    :param searchdb: the searchdb plugin (``documents_shipped``,
        ``documents_failed``, ``confirmed_block_num``) or None.
    :param upstream: indexer mode's
        :class:`~nodeapi.peers.upstream.UpstreamService` (lag, reconnects),
        or None; ``chain`` is None then.
    :param peers: the PeerService (the status page's peers) or None.
    :param clock: ``IReactorTime`` of the call rate and head block age
        (default: the chain's clock, else the wall clock).
    :param health_limits: :class:`~nodeapi.metrics_health.HealthLimits` of
        ``/healthz`` (default ones when None).
    """

    def __init__(self, chain, witness: Optional[Any] = None,
                 searchdb: Optional[Any] = None, upstream: Optional[Any] = None,
                 peers: Optional[Any] = None, clock: Optional[Any] = None,
                 health_limits: Optional[HealthLimits] = None) -> None:
        self.chain, self.witness, self.searchdb = chain, witness, searchdb
        self.upstream, self.peers = upstream, peers
        if clock is None:
            clock = getattr(chain, "clock", None)
        if clock is None or not hasattr(clock, "seconds"):
            import time

            clock = type("WallClock", (), {"seconds": staticmethod(time.time)})()
        self.clock = clock
        self.health_limits = health_limits or HealthLimits()
        self.calls = RateWindow(clock)
        self.calls_total = 0
        self.registry = CollectorRegistry(auto_describe=False)
        self.blocks_applied = Counter("nodeapi_blocks_applied", "Blocks applied (live and replay)",
                                      registry=self.registry)
        self.rpc_calls = Counter("nodeapi_rpc_calls", "RPC calls answered",
                                 ["api", "function", "outcome"], registry=self.registry)
        self.limit_refusals = Counter("nodeapi_rpc_limit_refusals",
                                      "RPC calls, connections and subscribed items refused "
                                      "by a limit", ["limit", "scope"], registry=self.registry)
        self.ws_connections = Gauge("nodeapi_websocket_connections", "Open WebSocket connections",
                                    registry=self.registry)
        self.registry.register(_PullCollector(self))

    checkpoint_key = "metrics"

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
        return True

    def restore_checkpoint(self, meta: dict, records: list) -> None:
        """Nothing to restore."""

    def block_applied(self, applied) -> None:
        """:class:`~nodeapi.applied.IBlockConsumer`: the chain calls this
        for every applied block (live and replay); increments
        ``nodeapi_blocks_applied_total`` by 1.  ``applied`` (an
        :class:`~nodeapi.applied.AppliedBlock`) is not looked at."""
        self.blocks_applied.inc()

    def rpc_call(self, request, outcome: str) -> None:
        """Count one answered call in ``nodeapi_rpc_calls_total{api,
        function, outcome}``; ``request`` is a
        :class:`nodeapi.rpc.jsonrpc.Request` and ``outcome`` ``"ok"`` or
        ``"error"`` (called by the HTTP and WebSocket transports).  A call
        that resolved to no API function (unknown set or name) is counted
        under ``api="unresolved", function="unresolved"``, so clients cannot
        create label values."""
        self.calls_total += 1
        self.calls.add()
        if request.api_name:
            self.rpc_calls.labels(request.api_name, request.function, outcome).inc()
        else:  # unknown set or function: never a client-chosen label value
            self.rpc_calls.labels("unresolved", "unresolved", outcome).inc()

    def limit_refused(self, limit: str, scope: str) -> None:
        """Count one refusal in ``nodeapi_rpc_limit_refusals_total{limit,
        scope}``: ``limit`` ``"calls"``, ``"connections"`` or
        ``"subscriptions"``, ``scope`` ``"user"``, ``"source"`` or
        ``"node"`` (called by :mod:`nodeapi.rpc.limits` and
        :class:`nodeapi.rpc.guard.ConnectionGuard`; fixed label values only)."""
        self.limit_refusals.labels(limit, scope).inc()

    def figures(self) -> dict:
        """The node's :func:`~nodeapi.metrics_health.key_figures` now."""
        connections = self.registry.get_sample_value("nodeapi_websocket_connections")
        return key_figures(
            now=self.clock.seconds(), chain=self.chain, witness=self.witness, peers=self.peers,
            upstream=self.upstream, searchdb=self.searchdb,
            rpc={"connections": int(connections or 0), "calls_total": self.calls_total,
                 "calls_per_second": round(self.calls.rate(), 2)})

    def site(self) -> Site:
        """A new ``twisted.web`` Site serving ``GET /metrics`` in the
        Prometheus text exposition format (prometheus_client
        ``MetricsResource`` over this registry), ``GET /status`` and
        ``GET /healthz`` (:mod:`nodeapi.metrics_status`); other paths are
        404; no access log.  The daemon listens on ``--metrics-endpoint``
        with it."""
        root = Resource()
        root.putChild(b"metrics", MetricsResource(registry=self.registry))
        root.putChild(b"status", StatusResource(self.figures, self.health_limits))
        root.putChild(b"healthz", HealthResource(self.figures, self.health_limits))
        return QuietSite(root)
