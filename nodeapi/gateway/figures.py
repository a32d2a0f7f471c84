"""Prometheus figures of the gateway, read at scrape time.

:class:`GatewayCollector` yields (all prefixed ``nodeapi_gateway_``):

* ``cache_hits_total``, ``cache_misses_total`` (counters: lookups of
  cacheable calls), ``cache_bytes`` and ``cache_answers`` (gauges);
* per upstream (label ``upstream``, its ``host:port``):
  ``upstream_latency_seconds`` (histogram of call round trips),
  ``upstream_errors_total`` (counter, label ``kind``: ``rpc`` for an error
  answer, ``lost`` for a call lost with its connection, ``timeout`` for a
  call not answered in time, ``bad_reply`` for a message refused,
  :mod:`nodeapi.peers.replies`), ``upstream_breaker_trips_total`` and
  ``upstream_reconnects_total`` (counters: connections after the first),
  ``upstream_in_flight`` (gauge), ``upstream_usable``,
  ``upstream_healthy`` and ``upstream_serving`` (gauges, 0 or 1: serving
  reads, :meth:`~nodeapi.gateway.pool.UpstreamPool.serves`),
  ``upstream_head_age_seconds``, ``upstream_head_block``,
  ``upstream_lag_blocks`` (behind the best upstream) and
  ``upstream_last_irreversible_block`` (gauges);
* ``read_retries_total`` (counter: read calls sent again to another
  upstream after a lost connection), ``shared_reads_total`` (counter:
  calls answered by an identical call in flight);
* with merged subscriptions (:mod:`nodeapi.gateway.subscriptions`, the
  gateway's ``hub``): ``subscription_accounts``, ``subscription_objects``,
  ``subscription_markets`` (gauges: distinct accounts, object ids and
  markets the clients subscribed), ``subscription_clients`` (gauge:
  connections with a subscription function called),
  ``subscription_block_clients`` and ``subscription_pending_clients``
  (gauges), ``subscription_connections`` (gauge: upstream connections
  carrying subscriptions), ``subscription_refreshes_total`` (counter:
  connections that subscribed their union again to release accounts),
  ``subscription_moved_stale_total`` (counter: connections moved off an
  upstream whose notices lagged another's head),
  ``subscription_clients_per_interest`` (histogram, label ``kind``
  ``account``, ``object`` or ``market``: how many clients share each
  subscribed item),
  ``subscription_upstream_notices_total`` and
  ``subscription_notices_routed_total`` (counters: notices received from
  the upstreams, notices written to clients);
* with per-block sharing (:mod:`nodeapi.gateway.head_share`):
  ``head_share_hits_total``, ``head_share_misses_total`` (counters:
  lookups of shareable reads answered from this block's answers / not)
  and ``head_share_answers`` (gauge).

The collector reads attributes only (quick, never failing for a missing
value), so the pool and the cache need not know about Prometheus.
"""

from prometheus_client.core import (
    CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily)

from nodeapi.peers.client import LATENCY_BUCKETS

#: bounds of the clients-per-interest histogram
CLIENTS_BUCKETS = (1, 2, 5, 10, 100, 1000)


class GatewayCollector:
    """A prometheus_client collector over ``gateway`` (a
    :class:`~nodeapi.gateway.apis.Gateway`: its pool, cache and shared
    reads): register it with ``registry.register(GatewayCollector(gateway))``."""

    def __init__(self, gateway) -> None:
        self.gateway = gateway
        self.pool, self.cache = gateway.pool, gateway.cache

    def describe(self):
        """No names claimed at register time (they are fixed and unique)."""
        return []

    def collect(self):
        """The series of the module docstring, now."""
        p = "nodeapi_gateway_"
        cache = self.cache
        yield CounterMetricFamily(p + "cache_hits", "Cacheable calls answered from the cache",
                                  value=cache.hits)
        yield CounterMetricFamily(p + "cache_misses", "Cacheable calls sent upstream",
                                  value=cache.misses)
        yield GaugeMetricFamily(p + "cache_bytes", "Bytes of answers in the cache",
                                value=cache.size)
        yield GaugeMetricFamily(p + "cache_answers", "Answers in the cache", value=len(cache))
        yield CounterMetricFamily(p + "shared_reads",
                                  "Calls answered by an identical call in flight",
                                  value=self.gateway.shared)
        hub = getattr(self.gateway, "hub", None)
        if hub is not None:
            figures = hub.figures()
            for name, text in (
                    ("accounts", "Distinct accounts the clients subscribed"),
                    ("objects", "Distinct object ids the clients subscribed"),
                    ("markets", "Distinct markets the clients subscribed"),
                    ("clients", "Client connections that called a subscription function"),
                    ("block_clients", "Clients with a block-applied callback"),
                    ("pending_clients", "Clients with a pending-transaction callback"),
                    ("connections", "Upstream connections carrying subscriptions")):
                yield GaugeMetricFamily(p + "subscription_" + name, text, value=figures[name])
            per = HistogramMetricFamily(p + "subscription_clients_per_interest",
                                        "Clients sharing each subscribed account, object id "
                                        "or market", labels=["kind"])
            for kind, counts in hub.clients_per_interest().items():
                cumulative = [sum(1 for c in counts if c <= bound)
                              for bound in CLIENTS_BUCKETS]
                buckets = [(str(bound), n) for bound, n in zip(CLIENTS_BUCKETS, cumulative)]
                buckets.append(("+Inf", len(counts)))
                per.add_metric([kind], buckets, sum(counts))
            yield per
            for name, text in (
                    ("refreshes", "Subscription connections that subscribed their clients' "
                                  "union again to release accounts"),
                    ("moved_stale", "Subscription connections moved off an upstream whose "
                                    "notices lagged another's head"),
                    ("upstream_notices", "Notices received on subscription connections"),
                    ("notices_routed", "Notices written to clients")):
                yield CounterMetricFamily(p + "subscription_" + name, text,
                                          value=figures[name])
        share = self.gateway.share
        if share is not None:
            yield CounterMetricFamily(p + "head_share_hits",
                                      "Reads answered with an answer of the same head block",
                                      value=share.hits)
            yield CounterMetricFamily(p + "head_share_misses",
                                      "Shareable reads sent upstream", value=share.misses)
            yield GaugeMetricFamily(p + "head_share_answers",
                                    "Answers kept for the current head block", value=len(share))
        yield CounterMetricFamily(p + "read_retries",
                                  "Read calls sent again after a lost upstream",
                                  value=self.pool.retried)
        latency = HistogramMetricFamily(p + "upstream_latency_seconds",
                                        "Round trip of calls to an upstream",
                                        labels=["upstream"])
        errors = CounterMetricFamily(p + "upstream_errors", "Calls to an upstream that failed",
                                     labels=["upstream", "kind"])
        gauges = {name: GaugeMetricFamily(p + "upstream_" + name, text, labels=["upstream"])
                  for name, text in (
                      ("in_flight", "Calls sent to an upstream and not answered"),
                      ("usable", "1 when the upstream is connected, logged in, on the chain"),
                      ("healthy", "1 when usable and its head block is fresh"),
                      ("serving", "1 when the upstream is given reads (in rotation, "
                                  "not lagging)"),
                      ("head_block", "The upstream's highest known head block"),
                      ("lag_blocks", "Blocks the upstream's head is behind the best one"),
                      ("head_age_seconds", "Age of the upstream's head block at its check"),
                      ("last_irreversible_block", "The upstream's last irreversible block"))}
        reconnects = CounterMetricFamily(p + "upstream_reconnects",
                                         "Connections to an upstream after the first",
                                         labels=["upstream"])
        trips = CounterMetricFamily(p + "upstream_breaker_trips",
                                    "Times an upstream was taken out of rotation (breaker "
                                    "open)", labels=["upstream"])
        best = self.pool.best_head
        for u in self.pool.upstreams:
            cumulative = u.latency_buckets
            buckets = [(str(bound), count) for bound, count in
                       zip(LATENCY_BUCKETS, cumulative)]
            buckets.append(("+Inf", cumulative[-1]))
            latency.add_metric([u.name], buckets, u.latency_sum)
            errors.add_metric([u.name, "rpc"], u.errors)
            errors.add_metric([u.name, "lost"], u.calls_lost)
            errors.add_metric([u.name, "timeout"], u.timeouts)
            errors.add_metric([u.name, "bad_reply"], u.bad_replies)
            trips.add_metric([u.name], u.trips)
            reconnects.add_metric([u.name], max(u.connections - 1, 0))
            gauges["in_flight"].add_metric([u.name], u.in_flight)
            gauges["usable"].add_metric([u.name], int(u.usable))
            gauges["healthy"].add_metric([u.name], int(u.healthy))
            gauges["serving"].add_metric([u.name], int(self.pool.serves(u)))
            gauges["head_block"].add_metric([u.name], u.head)
            gauges["lag_blocks"].add_metric([u.name], max(best - u.head, 0))
            gauges["head_age_seconds"].add_metric([u.name], u.head_age or 0.0)
            gauges["last_irreversible_block"].add_metric([u.name], u.lib)
        yield latency
        yield errors
        yield trips
        yield reconnects
        yield from gauges.values()


class PoolHead:
    """The head figures of a gateway without the searchdb plugin, in the
    form the status page and ``/healthz`` read from indexer mode's
    :class:`~nodeapi.peers.upstream.UpstreamService` (``next_block``,
    ``last_block_time``, ``lag_blocks``, ``lag_seconds``, ``reconnects``):
    the freshest upstream's head block at its last check among those that
    serve reads (:meth:`~nodeapi.gateway.pool.UpstreamPool.serves`), so the
    health check fails when none serves (:meth:`states` names why) or
    every head is old.

    :param pool: the :class:`~nodeapi.gateway.pool.UpstreamPool`."""

    lag_blocks = 0

    def __init__(self, pool) -> None:
        self.pool = pool

    def states(self) -> list:
        """:meth:`~nodeapi.gateway.pool.UpstreamPool.states`."""
        return self.pool.states()

    def _freshest(self):
        serving = [u for u in self.pool.upstreams if self.pool.serves(u)]
        return max(serving, key=lambda u: u.head_time, default=None)

    @property
    def next_block(self) -> int:
        """The freshest serving upstream's head block number plus one (1
        without one)."""
        best = self._freshest()
        return best.head_block_num + 1 if best is not None else 1

    @property
    def last_block_time(self):
        """Its head block time (s), or None without a serving upstream."""
        best = self._freshest()
        return float(best.head_time) if best is not None else None

    @property
    def lag_seconds(self) -> float:
        """Seconds since that head block's time (0 without one)."""
        best = self._freshest()
        return (best.head_age or 0.0) if best is not None else 0.0

    @property
    def reconnects(self) -> int:
        """Connections to the upstreams after the first of each."""
        return sum(max(u.connections - 1, 0) for u in self.pool.upstreams)
