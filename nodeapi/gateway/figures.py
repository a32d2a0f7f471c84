"""Prometheus figures of the gateway, read at scrape time.

:class:`GatewayCollector` yields (all prefixed ``nodeapi_gateway_``):

* ``cache_hits_total``, ``cache_misses_total`` (counters: lookups of
  cacheable calls), ``cache_bytes`` and ``cache_answers`` (gauges);
* per upstream (label ``upstream``, its ``host:port``):
  ``upstream_latency_seconds`` (histogram of call round trips),
  ``upstream_errors_total`` (counter, label ``kind``: ``rpc`` for an error
  answer, ``lost`` for a call lost with its connection),
  ``upstream_in_flight`` (gauge), ``upstream_usable`` and
  ``upstream_healthy`` (gauges, 0 or 1), ``upstream_head_age_seconds``
  and ``upstream_last_irreversible_block`` (gauges);
* ``read_retries_total`` (counter: read calls sent again to another
  upstream after a lost connection).

The collector reads attributes only (quick, never failing for a missing
value), so the pool and the cache need not know about Prometheus.
"""

from prometheus_client.core import (
    CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily)

from nodeapi.gateway.upstream import LATENCY_BUCKETS


class GatewayCollector:
    """A prometheus_client collector over ``pool`` (an
    :class:`~nodeapi.gateway.pool.UpstreamPool`) and ``cache`` (an
    :class:`~nodeapi.gateway.cache.AnswerCache`): register it with
    ``registry.register(GatewayCollector(pool, cache))``."""

    def __init__(self, pool, cache) -> None:
        self.pool, self.cache = pool, cache

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
                      ("head_age_seconds", "Age of the upstream's head block at its check"),
                      ("last_irreversible_block", "The upstream's last irreversible block"))}
        for u in self.pool.upstreams:
            buckets = [(str(bound), count) for bound, count in
                       zip(LATENCY_BUCKETS, u.latency_buckets)]
            buckets.append(("+Inf", u.latency_buckets[-1]))
            latency.add_metric([u.name], buckets, u.latency_sum)
            errors.add_metric([u.name, "rpc"], u.errors)
            errors.add_metric([u.name, "lost"], u.lost)
            gauges["in_flight"].add_metric([u.name], u.in_flight)
            gauges["usable"].add_metric([u.name], int(u.usable))
            gauges["healthy"].add_metric([u.name], int(u.healthy))
            gauges["head_age_seconds"].add_metric([u.name], u.head_age or 0.0)
            gauges["last_irreversible_block"].add_metric([u.name], u.lib)
        yield latency
        yield errors
        yield from gauges.values()
