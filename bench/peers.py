"""Catch-up speed of a follower: a producer chain with N blocks (default
10,000; a transfer every 100 blocks) served over loopback WebSocket RPC; a fresh
follower's PeerService syncs it.  Prints blocks/s for the get_blocks path
and for the get_block fallback (block_api denied).

Run: /work/venv/bin/python bench/peers.py [N]

The producer is served by ``nodeapi.rpc.site.rpc_site`` when that exists
with ``block_api`` granted; otherwise by the small RPC server of the peers
tests (tests/test_peers_rpcserver.py), which answers the same calls.
"""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "tests")]

from twisted.internet import defer, reactor, task  # noqa: E402
from twisted.internet.endpoints import TCP4ServerEndpoint  # noqa: E402

import conftest  # noqa: E402
from nodeapi.chain.chain import Chain  # noqa: E402
from nodeapi.chain.genesis import load_genesis  # noqa: E402
from nodeapi.peers import PeerService  # noqa: E402
from test_chain_core import claim_op, produce, sign, transfer_op  # noqa: E402
from test_peers_rpcserver import ChainRpcFactory  # noqa: E402


def build_producer(genesis, n):
    chain = Chain(genesis, conftest.ListBlockLog())
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    while chain.head_block_num < n:
        if chain.head_block_num % 100 == 0:
            chain.push_transaction(sign(chain, [transfer_op(chain.head_block_num)]))
        produce(chain)
    return chain


@defer.inlineCallbacks
def sync_once(genesis, producer, block_api, batch):
    port = yield TCP4ServerEndpoint(reactor, 0, interface="127.0.0.1").listen(
        ChainRpcFactory(producer, block_api=block_api))
    follower = Chain(genesis, conftest.ListBlockLog())
    svc = PeerService(follower, reactor=reactor, parameters={"sync_batch_size": batch})
    svc.startService()
    started = time.perf_counter()
    yield svc.add_node(f"127.0.0.1:{port.getHost().port}")
    while follower.head_block_num < producer.head_block_num:
        yield task.deferLater(reactor, 0.01, lambda: None)
    elapsed = time.perf_counter() - started
    assert follower.head_block_id == producer.head_block_id
    yield svc.stopService()
    yield port.stopListening()
    return elapsed


@defer.inlineCallbacks
def main(n):
    genesis = load_genesis()
    t = time.perf_counter()
    producer = build_producer(genesis, n)
    print(f"producer: {n} blocks built in {time.perf_counter() - t:.1f} s")
    for block_api, batch in ((True, 100), (True, 1000), (False, 100)):
        elapsed = yield sync_once(genesis, producer, block_api, batch)
        path = "block.get_blocks" if block_api else "database.get_block (pipelined)"
        print(f"catch-up via {path}, batch {batch}: {n} blocks in {elapsed:.2f} s = "
              f"{n / elapsed:.0f} blocks/s")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    d = main(count)
    d.addErrback(lambda f: (f.printTraceback(), None)[1])
    d.addBoth(lambda _: reactor.stop())
    reactor.run()
