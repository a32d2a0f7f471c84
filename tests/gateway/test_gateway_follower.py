"""The searchdb plugin's follower in a gateway follows one healthy
upstream (nodeapi.peers.upstream with ``choose``,
nodeapi.gateway.pool.UpstreamPool.choose_address): when its upstream is
lost it goes on from the next block at another upstream of the same chain,
every block handed over once and in order."""

import pytest_twisted
from twisted.internet import reactor

from nodeapi.gateway.pool import UpstreamPool
from nodeapi.peers.upstream import UpstreamService
from nodeapi.protocol.node_address import parse_node_address
from nodeapi.rpc.access import ApiAccess

from kit.access import VECTORS
from kit.chain import produce
from kit.site import RunningSite, make_node
from kit.wait import wait_for


class Blocks:
    """A block consumer keeping the numbers handed over."""

    def __init__(self):
        self.nums = []

    def block_applied(self, applied):
        self.nums.append(applied.block_num)


@pytest_twisted.inlineCallbacks
def test_the_follower_moves_to_a_healthy_upstream(funded_pair):
    chain = funded_pair
    produce(chain, 30)
    sites = [RunningSite(make_node(chain), ApiAccess.from_json(VECTORS)) for _ in range(2)]
    addresses = [parse_node_address(f"ws://bytemaster:supersecret@127.0.0.1:{s.port}")
                 for s in sites]
    pool = UpstreamPool(addresses, reactor, interval=0.1, max_head_age=10 ** 9)
    blocks = Blocks()
    follower = UpstreamService(addresses[0], [blocks], reactor, irreversible=False, batch=2,
                               poll=0.05, asset_names=False, choose=pool.choose_address)
    pool.startService()
    yield wait_for(lambda: all(u.usable for u in pool.upstreams), timeout=10)
    follower.startService()
    try:
        yield wait_for(lambda: len(blocks.nums) >= 8, timeout=20)
        first = addresses.index(follower.address)  # a healthy one, the first if checked
        for proto in list(sites[first].site.ws_factory.connections):
            proto.dropConnection(abort=True)
        yield sites[first].listening.stopListening()
        yield wait_for(lambda: follower.next_block > chain.head_block_num, timeout=30)
        assert follower.address == addresses[1 - first]
        assert blocks.nums == list(range(1, chain.head_block_num + 1))
        assert follower.reconnects >= 1
    finally:
        yield follower.stopService()
        yield pool.stopService()
        for site in sites:
            for proto in list(site.site.ws_factory.connections):
                proto.dropConnection(abort=True)
            if site.listening.connected:
                yield site.listening.stopListening()
