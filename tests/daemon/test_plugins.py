"""The plugins of ``twistd nodeapi`` (nodeapi.plugins.interface): each one
declares its options and builds itself (bitshares-core
libraries/app/include/graphene/app/plugin.hpp ``plugin_set_program_options``
and ``plugin_initialize``); makeService builds the configured ones in the
registry's order and the API sets read them as ``node.plugins[name]``."""

import shutil

import pytest
from twisted.internet.testing import MemoryReactorClock
from twisted.python import usage
from zope.interface.verify import verifyObject

from nodeapi import config_options
from nodeapi.config import Options
from nodeapi.plugins.registry import PLUGINS, parse_plugins, plugins_help
from nodeapi.plugins.account_history.history import AccountHistory
from nodeapi.plugins.custom_operations.storage import AccountStorage
from nodeapi.plugins.grouped_orders.orders import GroupedOrders
from nodeapi.plugins.market_history.history import MarketHistory
from nodeapi.plugins.market_history.pools import LiquidityPoolHistory
from nodeapi.plugins.searchdb.query import SearchDBHistory
from nodeapi.applied import ICheckpointed
from nodeapi.plugins.interface import IPlugin
from nodeapi.plugins.template.counter import OperationCounter
from nodeapi.tap import makeService
from nodeapi.plugins.witness.service import WitnessService

from kit.chain import scripted_block


def make(tmp_path, *argv):
    options = Options()
    options.parseOptions(["--data-dir", str(tmp_path / "data"), *argv])
    return options, makeService(options, MemoryReactorClock())


def test_every_plugin_declares_itself():
    """Every plugin provides IPlugin, ``--plugins`` accepts exactly the
    registry's names (and their bitshares-core names) and its help names
    each, and no option name is declared twice (by two plugins, or by a
    plugin and the node)."""
    for plugin in PLUGINS:
        assert verifyObject(IPlugin, plugin)
        assert all(alias not in {o.name for o in plugin.options} for alias in plugin.aliases)
        assert set(plugin.aliases.values()) <= {o.name for o in plugin.options}
    every = " ".join(p.name for p in PLUGINS)
    assert parse_plugins(every) == [p.name for p in PLUGINS]
    assert parse_plugins("elasticsearch es_objects") == ["searchdb", "searchdb-objects"]
    with pytest.raises(ValueError, match="unknown plugin 'nosuch'.*template"):
        parse_plugins("nosuch")
    assert all(p.name in plugins_help() for p in PLUGINS)
    names = ([n for n, *_ in config_options.SINGLE] + [n for n, _ in config_options.FLAGS]
             + [n for n, *_ in config_options.MULTI])
    assert len(names) == len(set(names))
    declared = {o.name for p in PLUGINS for o in p.options}
    assert declared <= set(names)


def test_the_default_plugins_by_name(tmp_path):
    """The default ``--plugins``: the API parts by name in build order, the
    pool history kept with market_history (as graphene keeps it), every
    block consumer registered before the metrics and the checkpoints, the
    genesis the options loaded (not loaded again)."""
    options, top = make(tmp_path)
    node, chain = top.node, top.chain
    assert list(node.plugins) == ["account_history", "market_history", "grouped_orders",
                                  "custom_operations", "witness"]
    kinds = {"account_history": AccountHistory, "market_history": MarketHistory,
             "grouped_orders": GroupedOrders, "custom_operations": AccountStorage,
             "witness": WitnessService}
    assert all(isinstance(node.plugins[name], kind) for name, kind in kinds.items())
    market = node.plugins["market_history"]
    assert isinstance(market.pools, LiquidityPoolHistory)
    assert node.account_history() is node.plugins["account_history"]
    assert node.plugins["witness"] is top.getServiceNamed("witness")
    consumers = chain._consumers
    assert consumers[:5] == [node.plugins["account_history"], market, market.pools,
                             node.plugins["grouped_orders"], node.plugins["custom_operations"]]
    assert consumers[-1] is top.checkpoints
    assert chain.genesis is options.genesis
    assert node.plugins["grouped_orders"].tracked_groups == [10, 100]
    assert node.plugins["custom_operations"].start_block == 45_000_000
    top.block_log.close()


@pytest.mark.parametrize("mode, reads, writes", [
    ("all", True, True), ("only_save", False, True), ("only_query", True, False)])
def test_searchdb_parts_by_mode(tmp_path, mode, reads, writes):
    """searchdb: the service is attached (and consumes blocks unless it
    never writes); the history API reads its database unless only_save."""
    _options, top = make(tmp_path, "--plugins", "searchdb", "--searchdb-mode", mode)
    node, svc = top.node, top.getServiceNamed("searchdb")
    assert list(node.plugins) == ["searchdb"]
    assert node.plugins["searchdb"] is svc and (svc.history is not None) is reads
    assert isinstance(node.account_history(), SearchDBHistory) is reads
    assert (svc in top.chain._consumers) is writes
    top.block_log.close()


def test_no_plugin_no_part(tmp_path):
    """A node without plugins: nothing for the API sets, no service but the
    node's own."""
    _options, top = make(tmp_path, "--plugins", "")
    assert top.node.plugins == {} and top.node.account_history() is None
    assert [s.name for s in top] == ["peers", "checkpoints", "rpc"]
    top.block_log.close()


def test_seed_nodes_reach_the_peers_as_parsed(tmp_path):
    """``--seed-node`` and ``--seed-nodes`` are parsed once (options); the
    peers service follows a ``ws://`` URL (or an address with credentials)
    over RPC, and dials a bare host:port over graphene's peer protocol, as
    bitshares-core means it."""
    options, top = make(tmp_path, "--seed-node", "127.0.0.1:1", "--seed-node",
                        "ws://127.0.0.1:2/ws", "--seed-nodes", '["127.0.0.1:3", "u:p@127.0.0.1:4"]')
    service = top.getServiceNamed("peers")
    assert [a.address for a in options["seed-node"]] == ["127.0.0.1:1", "127.0.0.1:2"]
    assert sorted(service.peers) == ["127.0.0.1:2", "127.0.0.1:4"]
    assert service.peers["127.0.0.1:2"].remote.handshake_hint is None  # a ws:// URL
    assert "no P2P node" in service.peers["127.0.0.1:4"].remote.handshake_hint
    assert sorted(service.p2p.seeds) == ["127.0.0.1:1", "127.0.0.1:3"]
    top.block_log.close()


def test_a_devnet_block_log_is_not_synced(tmp_path):
    """``--devnet``: the block log (in a throw-away directory) skips the
    per-block fdatasync; any other node syncs each block."""
    _options, top = make(tmp_path, "--plugins", "")
    assert top.block_log.sync is True
    top.block_log.close()
    options, top = make(tmp_path / "dev", "--devnet", "--devnet-accounts", "0")
    try:
        assert top.block_log.sync is False
    finally:
        top.block_log.close()
        shutil.rmtree(options["data-dir"])  # the devnet's (removed at reactor shutdown)


def test_the_template_plugin_counts_operations_from_its_block(tmp_path):
    """The template plugin, built through the registry as any plugin:
    ``template-start-block 2`` leaves block 1 (the genesis balance claim,
    type 37) out and counts the transfers (type 0) of blocks 2 and 3, one
    each; its checkpoint records give the same figures back; the counter
    is the API part and the block consumer (bitshares-core
    template_plugin: ``onBlock`` on ``applied_block``)."""
    _options, top = make(tmp_path, "--plugins", "template", "--template-start-block", "2")
    try:
        counter, chain = top.node.plugins["template"], top.chain
        assert isinstance(counter, OperationCounter) and counter in chain._consumers
        assert verifyObject(ICheckpointed, counter)
        for k in range(3):
            scripted_block(chain, k)
        assert (counter.blocks, counter.last_block_num, counter.by_type) == (2, 3, {0: 2})
        again = OperationCounter(2)
        again.restore_checkpoint({}, [list(r) for r in counter.checkpoint_records()])
        assert (again.blocks, again.last_block_num, again.by_type) == (2, 3, {0: 2})
    finally:
        top.block_log.close()


def test_the_template_plugin_refuses_a_gateway(tmp_path):
    """Its check across options: a gateway (``--upstream``) has no chain to
    count; the same options without the plugin are fine."""
    argv = ["--data-dir", str(tmp_path), "--upstream", "ws://127.0.0.1:1"]
    with pytest.raises(usage.UsageError, match="template counts a chain's blocks"):
        Options().parseOptions([*argv, "--plugins", "template"])
    Options().parseOptions([*argv, "--plugins", ""])


def test_the_gateway_tree_holds_what_it_runs(tmp_path):
    """``--upstream`` with the searchdb plugin: a ModeService (no chain, no
    block log) whose children are the pool, the indexer (its searchdb
    plugin, built through the plugin interface with the follower's asset
    names, then the follower) and the RPC port; the plugin is
    ``node.plugins["searchdb"]``, which the metrics read; without the
    plugin, no indexer."""
    from nodeapi.gateway.pool import UpstreamPool
    from nodeapi.modes.indexer import IndexerService
    from nodeapi.peers.upstream import UpstreamService
    from nodeapi.plugins.searchdb.service import SearchDBService
    from nodeapi.service import ModeService, NodeService

    _options, top = make(tmp_path, "--upstream", "ws://127.0.0.1:1", "--plugins", "searchdb")
    assert type(top) is ModeService and not isinstance(top, NodeService)
    assert [s.name for s in top] == ["upstreams", "indexer", "rpc"]
    assert isinstance(top.getServiceNamed("upstreams"), UpstreamPool)
    indexer = top.getServiceNamed("indexer")
    assert isinstance(indexer, IndexerService)
    assert [s.name for s in indexer] == ["searchdb", "upstream"]
    searchdb, follower = indexer.searchdb, indexer.follower
    assert isinstance(searchdb, SearchDBService) and isinstance(follower, UpstreamService)
    assert follower.consumers == [searchdb]
    follower.assets["1.3.9"] = ("BEE", 4)  # the visitor's names are the follower's
    assert searchdb.documents._asset_lookup("1.3.9") == ("BEE", 4)
    assert top.node.chain is None and top.node.plugins == {"searchdb": searchdb}
    assert top.node.account_history() is searchdb.history
    _options, plain = make(tmp_path / "plain", "--upstream", "ws://127.0.0.1:1",
                           "--plugins", "")
    assert [s.name for s in plain] == ["upstreams", "rpc"] and plain.node.plugins == {}
