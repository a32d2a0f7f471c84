"""Catch-up speed of a follower: a producer chain with N blocks
(default 10,000; a transfer every 100 blocks) served by the node's real RPC
site (``nodeapi.rpc.site.rpc_site``) over loopback WebSocket; a fresh
follower's :class:`~nodeapi.peers.service.PeerService` syncs it, validating every
block.

Baseline, measured in the same run: the same blocks pushed into a fresh
chain in-process (``chain.push_block``, the validation and application the
follower must do anyway), so the ratio is what the network path (RPC,
JSON, WebSocket, batching) keeps of the chain's own speed.

Prints one line: blocks/s over ``block.get_blocks`` (batches of 50 and of
100, the producer's default ``api-limit-get-blocks``; ``block_api`` granted
to everyone) and over the pipelined ``database.get_block`` fallback
(default access, ``block_api`` denied; 50 calls in flight), next to the
in-process baseline.

Run: PYTHONPATH=. python bench/peers.py [N]
"""

import os
import shutil
import sys
import tempfile
import time

import common  # noqa: F401  puts the repository and tests/ on sys.path

from twisted.internet import defer, reactor, task  # noqa: E402

from nodeapi.chain.genesis import load_genesis  # noqa: E402
from nodeapi.node import Node  # noqa: E402
from nodeapi.peers.service import PeerService  # noqa: E402
from nodeapi.rpc.access import DEFAULT_ALLOWED_APIS, ApiAccess  # noqa: E402
from nodeapi.rpc.site import rpc_site  # noqa: E402
from kit.chain import claim_op, open_chain, produce, transfer_op  # noqa: E402
from kit.signing import sign  # noqa: E402

LOGS = tempfile.mkdtemp(prefix="bench-peers-")


def fresh_chain(genesis, name):
    """A chain over a block log (no fdatasync) in a temporary directory."""
    return open_chain(genesis, os.path.join(LOGS, name))


OPEN_ACCESS = {"permission_map": [["*", {
    "password_hash_b64": "*", "password_salt_b64": "*",
    "allowed_apis": sorted(set(DEFAULT_ALLOWED_APIS) | {"block_api"})}]]}


def build_producer(genesis, n):
    chain = fresh_chain(genesis, "producer")
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    while chain.head_block_num < n:
        if chain.head_block_num % 100 == 0:
            chain.push_transaction(sign(chain, [transfer_op(chain.head_block_num)]))
        produce(chain)
    return chain


def push_locally(genesis, producer):
    """Seconds to push every producer block into a fresh chain in-process."""
    follower = fresh_chain(genesis, "local")
    blocks = [producer.get_block(n) for n in range(1, producer.head_block_num + 1)]
    started = time.perf_counter()
    for block in blocks:
        follower.push_block(block, now=block_time(block) + 1)
    elapsed = time.perf_counter() - started
    assert follower.head_block_id == producer.head_block_id
    return elapsed


def block_time(block) -> int:
    from nodeapi.protocol import parse_time

    return parse_time(block["timestamp"])


@defer.inlineCallbacks
def sync_once(genesis, producer, access, batch):
    node = Node(chain=producer, reactor=reactor)
    site = rpc_site(node, access, reactor=reactor)
    port = reactor.listenTCP(0, site, interface="127.0.0.1")
    follower = fresh_chain(genesis, f"follower-{batch}-{len(os.listdir(LOGS))}")
    svc = PeerService(follower, reactor=reactor, parameters={"sync_batch_size": batch})
    svc.startService()
    started = time.perf_counter()
    yield svc.add_node(f"127.0.0.1:{port.getHost().port}")
    while follower.head_block_num < producer.head_block_num:
        yield task.deferLater(reactor, 0.01, lambda: None)
    elapsed = time.perf_counter() - started
    assert follower.head_block_id == producer.head_block_id
    yield svc.stopService()
    for proto in list(site.ws_factory.connections):
        proto.dropConnection(abort=True)
    yield port.stopListening()
    return elapsed


@defer.inlineCallbacks
def main(n):
    genesis = load_genesis()
    t = time.perf_counter()
    producer = build_producer(genesis, n)
    build = time.perf_counter() - t
    base = n / push_locally(genesis, producer)
    rates = []
    for access, batch in ((ApiAccess.from_json(OPEN_ACCESS), 50),
                          (ApiAccess.from_json(OPEN_ACCESS), 100),
                          (ApiAccess.default(), 100)):
        elapsed = yield sync_once(genesis, producer, access, batch)
        rates.append(n / elapsed)
    print(f"peers: follower catch-up of {n} blocks over loopback WebSocket: "
          f"block.get_blocks batch 50 {rates[0]:,.0f} blocks/s (ratio {rates[0] / base:.2f}), "
          f"batch 100 {rates[1]:,.0f} blocks/s (ratio {rates[1] / base:.2f}), "
          f"database.get_block fallback {rates[2]:,.0f} blocks/s (ratio {rates[2] / base:.2f}); "
          f"baseline in-process push_block of the same blocks {base:,.0f} blocks/s; "
          f"build {build:.1f} s")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    d = main(count)
    d.addErrback(lambda f: (f.printTraceback(), None)[1])
    d.addBoth(lambda _: shutil.rmtree(LOGS, ignore_errors=True))
    d.addBoth(lambda _: reactor.stop())
    reactor.run()
