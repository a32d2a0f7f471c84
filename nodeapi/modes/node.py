"""A node with a chain of its own (no ``--upstream``): :func:`make_node`
builds its tree along the data flow block -> chain -> plugins -> bulk ->
search database, under a :class:`~nodeapi.service.NodeService`.  The tree,
its start order and the plugins' part in it: docs/DESIGN.rst, "Service
trees".
"""

import os

from twisted.logger import Logger

from nodeapi.modes.ports import api_access, attach_ports, identity, notifier

log = Logger()


def make_node(options, reactor):
    """The node's root service for parsed ``options``: the block log, the
    chain, the plugins (:func:`build_plugins`), then the metrics and the
    checkpoints as the last block consumers, and the children
    (docs/DESIGN.rst, "Service trees").

    :raises nodeapi.errors.ConfigError: a bad api-access file or
        ``NOTIFY_SOCKET``, a plugin's startup problem.
    :raises nodeapi.errors.StorageError: an unreadable or corrupt block log
        (opened here, so it stops startup before the reactor runs, naming
        the file and offset).
    """
    from nodeapi.chain.blocklog import BlockLog
    from nodeapi.chain.chain import Chain
    from nodeapi.checkpoints import CheckpointService
    from nodeapi.metrics import Metrics
    from nodeapi.node import Node
    from nodeapi.peers.service import PeerService, split_seed_nodes
    from nodeapi.service import NodeService

    data_dir = options["data-dir"]
    access, systemd = api_access(options), notifier()
    # a devnet's blocks live in a throw-away directory: no fsync per block
    block_log = BlockLog(options.block_log_path(), sync=not options["devnet"])
    block_log.open()
    chain = Chain(options.genesis, block_log, clock=reactor,
                  statistics_type=options["account-statistics-type"])
    plugins, services = build_plugins(options, chain, reactor)
    rpc_seeds, p2p_seeds = split_seed_nodes(options["seed-node"] + options["seed-nodes"])
    # a producing node verifies every signature, as bitshares-core's
    # (application.cpp handle_block: _is_block_producer || _force_validate)
    peers = PeerService(chain, seed_nodes=rpc_seeds, reactor=reactor,
                        max_message_size=options["max-message-size"],
                        p2p_endpoint=options["p2p-endpoint"] or None, p2p_seeds=p2p_seeds,
                        node_key_path=os.path.join(data_dir, "p2p", "node_key"),
                        peer_db_path=os.path.join(data_dir, "p2p", "peers.json"),
                        p2p_connect_to_new_peers=options["p2p-connect-to-new-peers"],
                        p2p_max_connections=options["p2p-max-connections"],
                        force_validate=options["force-validate"] or "witness" in services)
    checkpoints = CheckpointService(
        chain, os.path.join(data_dir, "checkpoints"), options["checkpoint-interval"], reactor,
        replay_blockchain=options["replay-blockchain"])
    root = NodeService(chain, block_log, reactor=reactor, checkpoints=checkpoints,
                       notifier=systemd)
    devnet = make_devnet(options, reactor, chain, root.rpc_url) if options["devnet"] else None
    root.node = node = Node(
        chain=chain, plugins=plugins, limits=options.api_limits(),
        api_node_info=options["api-node-info"],
        enable_subscribe_to_all=options["enable-subscribe-to-all"], peers=peers,
        options=dict(options), reactor=reactor, devnet=devnet,
        output_dir=options["api-output-dir"])
    metrics = Metrics(chain, node.plugins, peers=peers, clock=reactor,
                      health_limits=options.health_limits(), checkpoints=checkpoints,
                      data_dir=data_dir,
                      identity=identity("node", chain.chain_id, options["plugins"]))
    chain.add_consumer(metrics)
    chain.add_consumer(checkpoints)  # last: it sees a block after every plugin
    for name, svc in [*services.items(), ("peers", peers), ("checkpoints", checkpoints)]:
        svc.setName(name)  # the plugins' in build order (nodeapi.plugins.registry)
        svc.setServiceParent(root)
    attach_ports(options, reactor, root, node, access, metrics,
                 routes=devnet.routes() if devnet else None)
    if devnet is not None:
        devnet.setName("devnet")
        devnet.setServiceParent(root)
    log.info("nodeapi: chain {chain_id}, data dir {data_dir}, plugins {plugins}",
             chain_id=chain.chain_id, data_dir=data_dir, plugins=" ".join(options["plugins"]))
    return root


def build_plugins(options, chain, reactor) -> tuple:
    """Build the plugins of ``--plugins`` in the order of
    :data:`nodeapi.plugins.registry.PLUGINS` (bitshares-core
    libraries/app/application.cpp ``initialize_plugins``), each through
    its :class:`~nodeapi.plugins.interface.IPlugin` ``build``: register
    their block consumers with ``chain`` and return ``({name: part},
    {name: service})``, both in that order."""
    from nodeapi.plugins.interface import PluginContext
    from nodeapi.plugins.registry import PLUGINS

    context = PluginContext(values=options, chain=chain, data_dir=options["data-dir"],
                            reactor=reactor, genesis=options.genesis)
    plugins, services = {}, {}
    for plugin in PLUGINS:
        if plugin.name not in options["plugins"]:
            continue
        parts = plugin.build(context)
        plugins[plugin.name] = parts.api
        for consumer in parts.consumers:
            chain.add_consumer(consumer)
        if parts.service is not None:
            services[plugin.name] = parts.service
    return plugins, services


def make_devnet(options, reactor, chain, url):
    """The :class:`~nodeapi.devnet.control.Devnet` service; it announces
    the RPC port's ``ws://`` URL (``url()``)."""
    from nodeapi.devnet.accounts import CORE_UNIT
    from nodeapi.devnet.control import Devnet, DevnetOptions
    from nodeapi.plugins.witness.plugin import DEV_WIF

    return Devnet(chain, DevnetOptions(
        accounts=options["devnet-accounts"], seed=options["devnet-seed"],
        block_interval=options["block-interval"],
        load_state=os.path.abspath(options["load-state"]) if options["load-state"] else None,
        key=DEV_WIF, max_snapshots=options["devnet-max-snapshots"],
        balance=options["devnet-balance"] * CORE_UNIT, fork_url=options["fork-url"],
        fork_block=options["fork-block"], max_message_size=options["max-message-size"],
        fork_timeout=options["fork-timeout"]),
        clock=reactor, announce=url)
