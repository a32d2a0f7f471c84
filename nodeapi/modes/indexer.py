"""The indexer: the ``searchdb`` plugin without a chain of this node's
own, fed the blocks and operation history of an upstream node by an
:class:`~nodeapi.peers.upstream.UpstreamService` (docs/searchdb-plugin.rst
"Indexer"), as the subtree :class:`IndexerService` of a gateway
(docs/DESIGN.rst, "Service trees").
"""

import os

from twisted.application import service

from nodeapi.plugins.interface import PluginContext
from nodeapi.plugins.searchdb.plugin import PLUGIN as SEARCHDB


class IndexerService(service.MultiService):
    """The indexer's subtree: children ``searchdb`` (the plugin's
    :class:`~nodeapi.plugins.searchdb.service.SearchDBService`) and
    ``upstream`` (the follower), started in that order and stopped in
    reverse (the follower stops handing blocks over, then the plugin
    flushes).

    :param options: the parsed :class:`nodeapi.config.Options`.
    :param reactor: the reactor every part uses.
    :param address: the :class:`~nodeapi.protocol.node_address.NodeAddress`
        followed first.
    :param choose: ``() -> NodeAddress`` asked at each reconnection (a
        gateway's healthy upstream,
        :meth:`~nodeapi.gateway.pool.UpstreamPool.choose_address`), or None.
    :ivar searchdb: the plugin's service (also ``node.plugins["searchdb"]``).
    :ivar follower: the :class:`~nodeapi.peers.upstream.UpstreamService`.
    """

    def __init__(self, options, reactor, address, choose=None) -> None:
        super().__init__()
        parts = SEARCHDB.build(PluginContext(
            values=options, chain=None, data_dir=options["data-dir"], reactor=reactor,
            genesis=options.genesis, asset_lookup=self.asset))
        self.searchdb = parts.service
        self.follower = follower(options, reactor, address, choose, parts.consumers,
                                 self.searchdb)
        for name, svc in (("searchdb", self.searchdb), ("upstream", self.follower)):
            svc.setName(name)
            svc.setServiceParent(self)

    def asset(self, asset_id: str):
        """``(symbol, precision)`` of an asset the follower has seen, or
        None (the plugin's visitor asks it)."""
        return self.follower.asset(asset_id)

    def prepare(self):
        """The plugin's ``prepare`` (where the database resumes), awaited
        by the root before anything starts."""
        return self.searchdb.prepare()


def follower(options, reactor, address, choose, consumers, searchdb):
    """The :class:`~nodeapi.peers.upstream.UpstreamService` handing the
    upstream's blocks to ``consumers`` (the plugin's), held back while
    ``searchdb`` has too many documents pending, resuming from the numbering
    saved beside the block ``searchdb`` last confirmed."""
    from nodeapi.peers.upstream import UpstreamService

    return UpstreamService(
        address, list(consumers), reactor, pending=lambda: searchdb.documents_pending,
        irreversible=options["upstream-irreversible-only"],
        max_message_size=options["max-message-size"],
        state_path=os.path.join(options["data-dir"], "indexer-state.json"),
        confirmed_block=lambda: searchdb.confirmed_block_num,
        asset_names=options["searchdb-visitor"], choose=choose)


def make_indexer(options, reactor, address, choose=None) -> IndexerService:
    """The indexer of ``options`` following ``address`` (then ``choose()``
    at each reconnection): an :class:`IndexerService`."""
    return IndexerService(options, reactor, address, choose)
