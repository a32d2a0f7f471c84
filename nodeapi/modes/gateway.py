"""Gateway mode (``--upstream``, :mod:`nodeapi.gateway`): no block log and
no chain; login and api-access are local, every other API set is
forwarded to the upstreams, but with the ``searchdb`` plugin the history
set, served from the search database the indexer
(:mod:`nodeapi.modes.indexer`) fills.  The tree :func:`make_gateway`
builds: docs/DESIGN.rst, "Service trees".
"""

from twisted.logger import Logger

from nodeapi.modes.ports import api_access, attach_ports, identity, notifier

log = Logger()

#: bytes: the smallest largest message a gateway accepts from its upstreams
UPSTREAM_MESSAGE_SIZE = 64 * 1024 * 1024


def upstream_pool(options, reactor):
    """The :class:`~nodeapi.gateway.pool.UpstreamPool` of ``--upstream``."""
    from nodeapi.gateway.pool import UpstreamPool

    return UpstreamPool(
        options["upstream"], reactor, max_head_age=options["upstream-max-head-age"],
        chain_id=options["upstream-chain-id"] or None,
        timeout=options["upstream-timeout"], max_lag_blocks=options["upstream-max-lag-blocks"],
        # answers may be larger than the clients' requests may: a block range
        # over the limit would close the shared connection for every call on it
        max_message_size=max(options["max-message-size"], UPSTREAM_MESSAGE_SIZE))


def make_gateway(options, reactor):
    """The gateway's root service for parsed ``options``: a
    :class:`~nodeapi.service.ModeService` over ``upstreams``, with the
    plugin ``indexer``, ``rpc`` and ``metrics``.

    :raises nodeapi.errors.ConfigError: a bad api-access file or
        ``NOTIFY_SOCKET``."""
    from nodeapi.api.history import HistoryApi
    from nodeapi.gateway.apis import Gateway, gateway_registry
    from nodeapi.gateway.cache import ForwardedAnswerCache
    from nodeapi.gateway.figures import GatewayCollector, PoolHead
    from nodeapi.gateway.head_share import HeadShare
    from nodeapi.gateway.subscriptions import SubscriptionHub
    from nodeapi.metrics import Metrics
    from nodeapi.modes.indexer import make_indexer
    from nodeapi.node import Node
    from nodeapi.service import ModeService

    access = api_access(options)
    root = ModeService(reactor=reactor, notifier=notifier())
    pool = upstream_pool(options, reactor)
    indexer = None
    if "searchdb" in options["plugins"]:
        indexer = make_indexer(options, reactor, options["upstream"][0], pool.choose_address)
    share_seconds = options["upstream-share-seconds"]
    gateway = Gateway(
        pool, ForwardedAnswerCache(options["upstream-cache-size"] * 1024 * 1024, clock=reactor),
        share=HeadShare(pool, reactor, share_seconds) if share_seconds else None,
        routes=options.upstream_routes(),
        hub=SubscriptionHub(
            pool, reactor, full_accounts_limit=options["upstream-accounts-per-connection"],
            max_connections=options["upstream-subscription-connections"],
            max_message_size=max(options["max-message-size"], UPSTREAM_MESSAGE_SIZE)))
    root.node = node = Node(
        chain=None, plugins={"searchdb": indexer.searchdb} if indexer else {},
        limits=options.api_limits(), api_node_info=options["api-node-info"],
        options=dict(options), reactor=reactor,
        account_lookup=indexer.follower.account_id if indexer else None, gateway=gateway)
    metrics = Metrics(None, node.plugins, clock=reactor,
                      upstream=indexer.follower if indexer else PoolHead(pool),
                      health_limits=options.health_limits(), data_dir=options["data-dir"],
                      identity=identity("gateway", options["upstream-chain-id"] or "",
                                        options["plugins"]))
    metrics.registry.register(GatewayCollector(gateway))
    pool.setName("upstreams")
    pool.setServiceParent(root)
    if indexer is not None:
        indexer.setName("indexer")
        indexer.setServiceParent(root)
    attach_ports(options, reactor, root, node, access, metrics,
                 registry=gateway_registry(HistoryApi if indexer else None))
    log.info("nodeapi gateway: upstreams {upstreams}, data dir {data_dir}",
             upstreams=" ".join(a.address for a in options["upstream"]),
             data_dir=options["data-dir"])
    return root
