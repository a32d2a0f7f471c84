"""Devnet speed (targets: 10,000 blocks in under 5 s; ``--load-state`` of a
10,000-block dump in under 5 s).

Runs the devnet service (nodeapi.devnet.control.Devnet, the account
history plugin attached) on a ``task.Clock`` over a block log in a
temporary directory written as ``twistd nodeapi --devnet`` writes it (no
fsync per block), and times:

1. ``--blocks`` empty blocks (default 10,000) produced as
   ``produce_blocks`` produces them;
2. the same count with fsync per block (``--synced``, default 1,000,
   scaled): what the devnet saves by not syncing;
3. the dump of that state (``dump_state``) and its load into a fresh
   chain (``--load-state``, nodeapi.devnet.snapshots.load).

Prints one line per figure.

Run: PYTHONPATH=. python bench/devnet.py [--blocks N] [--synced N]
"""

import os
import shutil
import sys
import tempfile
import time

import common  # puts the repository and tests/ on sys.path

from twisted.internet import task  # noqa: E402

from nodeapi.chain.blocklog import BlockLog  # noqa: E402
from nodeapi.chain.chain import Chain  # noqa: E402
from nodeapi.chain.genesis import load_genesis  # noqa: E402
from nodeapi.devnet import snapshots  # noqa: E402
from nodeapi.devnet.control import Devnet, DevnetOptions  # noqa: E402
from nodeapi.plugins.account_history.history import AccountHistory  # noqa: E402
from nodeapi.plugins.witness.plugin import DEV_WIF  # noqa: E402


def make_chain(genesis, path, sync):
    log = BlockLog(path, sync=sync)
    log.open()
    chain = Chain(genesis, log)
    chain.add_consumer(AccountHistory())
    return chain


def devnet_on(chain):
    clock = task.Clock()
    clock.advance(time.time())
    net = Devnet(chain, DevnetOptions(accounts=10, key=DEV_WIF), clock=clock)
    net.startService()
    return net


def produce(genesis, path, count, sync):
    chain = make_chain(genesis, path, sync)
    net = devnet_on(chain)
    start = time.perf_counter()
    for _ in range(count):
        net.produce_block()
    elapsed = time.perf_counter() - start
    return net, elapsed


def main():
    parser = common.parser(__doc__)
    parser.add_argument("--blocks", type=int, default=10_000)
    parser.add_argument("--synced", type=int, default=1_000)
    args = parser.parse_args()
    genesis = load_genesis()
    work = tempfile.mkdtemp(prefix="nodeapi-bench-devnet-")
    try:
        net, elapsed = produce(genesis, os.path.join(work, "fast", "blocks.log"), args.blocks,
                               False)
        print(f"devnet: {args.blocks} blocks in {elapsed:.2f} s "
              f"({args.blocks / elapsed:,.0f} blocks/s, no fsync)")
        synced, synced_s = produce(genesis, os.path.join(work, "synced", "blocks.log"),
                                   args.synced, True)
        print(f"with fsync per block: {args.synced} blocks in {synced_s:.2f} s "
              f"({args.synced / synced_s:,.0f} blocks/s; {args.blocks} would take "
              f"{synced_s * args.blocks / args.synced:.1f} s)")
        synced.stopService()
        synced.chain.block_log.close()
        state = os.path.join(work, "state")
        start = time.perf_counter()
        net.dump_state(state)
        dumped = time.perf_counter() - start
        net.stopService()
        head = net.chain.head_block_id
        net.chain.block_log.close()
        fresh = make_chain(genesis, os.path.join(work, "loaded", "blocks.log"), False)
        start = time.perf_counter()
        snapshots.load(fresh, state)
        loaded = time.perf_counter() - start
        assert fresh.head_block_id == head, "the loaded head differs"
        print(f"dump_state of {fresh.head_block_num} blocks: {dumped:.2f} s "
              f"({os.path.getsize(state) / 2 ** 20:.1f} MiB); --load-state: {loaded:.2f} s")
        fresh.block_log.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
