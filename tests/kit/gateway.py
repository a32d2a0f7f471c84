"""A gateway (nodeapi.gateway) in the test's reactor: an UpstreamPool of
the given upstream URLs, the merged subscriptions' hub installed as tap.py
does, and the real RPC site serving the gateway's API sets on a loopback
port."""

import pytest_twisted
from twisted.internet import defer, reactor

from nodeapi.gateway.apis import Gateway, gateway_registry
from nodeapi.gateway.cache import ForwardedAnswerCache
from nodeapi.gateway.confirmations import Confirmations
from nodeapi.gateway.figures import GatewayCollector, PoolHead
from nodeapi.gateway.head_share import HeadShare
from nodeapi.gateway.pool import UpstreamPool
from nodeapi.gateway.subscriptions import SubscriptionHub
from nodeapi.metrics import Metrics
from nodeapi.metrics_health import HealthLimits
from nodeapi.node import Node
from nodeapi.protocol.node_address import parse_node_address

from kit.site import RunningSite
from kit.wait import wait_for


class GatewaySite:
    """``urls``: the upstreams (``ws://[user:pass@]127.0.0.1:port``);
    ``access``: the gateway's own ApiAccess.  Health checks every 0.1 s,
    any head age counts as fresh (the test chains' blocks are produced at
    slot times in the past); a lost broadcast callback is looked for every
    0.1 s; :attr:`metrics` is the site's Metrics, with the gateway's
    figures.  ``clock``: the site's clock (the call buckets of ``limits``,
    an :class:`~nodeapi.rpc.guard.RpcLimits`); the pool runs on the
    reactor either way.  ``share_seconds``: the per-block sharing's
    ``max_age`` (0: none, the default here, as the tests produce blocks by
    hand faster than the checks see them).  ``pool_clock``: the pool's
    clock (its checks, call timeouts, reconnection delays; default the
    reactor); ``timeout``, ``max_lag_blocks``, ``outage_retry``: the
    pool's.  The metrics' ``/healthz`` judges the pool's upstreams
    (:class:`~nodeapi.gateway.figures.PoolHead`, any head age in time).
    ``hub_args``: keyword arguments of the SubscriptionHub
    (``full_accounts_limit``, ``max_connections``).  ``routes``: the
    gateway's :class:`~nodeapi.gateway.routes.UpstreamRoutes`;
    ``cache_clock``: the clock of the answers kept for seconds (default
    the reactor)."""

    def __init__(self, urls, access, cache_bytes=1 << 20, patience=5.0, clock=None,
                 limits=None, share_seconds=0, pool_clock=None, timeout=5.0,
                 max_lag_blocks=3, outage_retry=0.5, interval=0.1, hub_args=None,
                 routes=None, cache_clock=None):
        self.pool = UpstreamPool([parse_node_address(u) for u in urls], reactor,
                                 clock=pool_clock, interval=interval, max_head_age=10 ** 9,
                                 patience=patience, timeout=timeout,
                                 max_lag_blocks=max_lag_blocks, outage_retry=outage_retry)
        share = HeadShare(self.pool, reactor, share_seconds) if share_seconds else None
        self.hub = SubscriptionHub(self.pool, reactor, **(hub_args or {}))
        self.gateway = Gateway(self.pool,
                               ForwardedAnswerCache(cache_bytes, clock=cache_clock or reactor),
                               Confirmations(self.pool, interval=0.1), share=share,
                               **({"routes": routes} if routes is not None else {}),
                               hub=self.hub)
        self.node = Node(chain=None, reactor=reactor, gateway=self.gateway)
        self.metrics = Metrics(None, clock=clock or reactor, upstream=PoolHead(self.pool),
                               health_limits=HealthLimits(max_head_age=10 ** 9))
        self.metrics.registry.register(GatewayCollector(self.gateway))
        self.server = RunningSite(self.node, access, clock=clock, registry=gateway_registry(),
                                  metrics=self.metrics, limits=limits)
        self.port = self.server.port

    def start(self, usable=None):
        """Start the pool; a Deferred firing once ``usable`` upstreams
        (default all) are usable.  (The subscriptions' hub takes a link of
        its own only once a client subscribes.)"""
        self.pool.startService()
        want = len(self.pool.upstreams) if usable is None else usable
        return wait_for(lambda: sum(u.usable for u in self.pool.upstreams) >= want,
                        timeout=10.0)

    @defer.inlineCallbacks
    def stop(self):
        yield self.server.stop()
        yield self.pool.stopService()

    def stop_blocking(self):
        pytest_twisted.blockon(self.stop())
