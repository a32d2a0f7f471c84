"""Restart time with checkpoints against a full replay (target:
a restart takes at most 1/10 of the full replay).

Builds a block log with the chain itself: a balance claim, then
``--blocks`` blocks (default 2,000) of ``--per-block`` signed transfers
each (default 10), with the default history plugins (account_history,
market_history) attached.  Then, in the same run:

1. the baseline: a fresh chain with fresh plugins replays the whole log
   (``Chain.replay``, the startup path);
2. a checkpoint of the builder is written (``CheckpointService.write``),
   then ``--after`` more blocks are produced and the builder's log closed;
3. a restart: the block log is opened again (its records are checked and
   indexed, as at a node's start), a fresh chain with fresh plugins
   restores the checkpoint (reading and checking the file included) and
   replays what is after it.

Both timings include opening the block log.  Checks that both reach the
builder's head and balances, and prints one line: both times, their ratio,
the checkpoint's write time and size (``--json``: the figures as JSON, for
bench/scale.py).

Run: PYTHONPATH=. python bench/restart.py [--blocks N]
[--per-block N] [--after N] [--json]
"""

import json
import os
import shutil
import sys
import tempfile
import time

import common  # puts the repository and tests/ on sys.path

from twisted.internet import defer, task  # noqa: E402

from nodeapi.chain.blocklog import BlockLog  # noqa: E402
from nodeapi.chain.chain import Chain  # noqa: E402
from nodeapi.chain.genesis import load_genesis  # noqa: E402
from nodeapi.checkpoints import CheckpointService  # noqa: E402
from nodeapi.plugins.account_history.history import AccountHistory  # noqa: E402
from nodeapi.plugins.market_history.history import MarketHistory  # noqa: E402

from chain import CORE, produce, signed  # noqa: E402  (bench/chain.py)
from chain import same as chain_same  # noqa: E402


def with_plugins(chain):
    for plugin in (AccountHistory(), MarketHistory()):
        chain.add_consumer(plugin)
    return chain


def build(genesis, path, blocks, per_block):
    from nodeapi.chain import authority as auth
    from chain import DEV_WIF

    chain = with_plugins(Chain(genesis, BlockLog(path, sync=False).open()))
    chain.push_transaction(signed(chain, [[37, {
        "fee": {"amount": 0, "asset_id": CORE}, "deposit_to_account": "1.2.6",
        "balance_to_claim": "1.15.0",
        "balance_owner_key": auth.public_key_of(DEV_WIF, chain.address_prefix),
        "total_claimed": chain.state.get("1.15.0")["balance"]}]]))
    produce(chain)
    amount = 0
    fee = None
    for _ in range(blocks):
        for _ in range(per_block):
            amount += 1
            op = [0, {"fee": {"amount": 0, "asset_id": CORE}, "from": "1.2.6",
                      "to": f"1.2.{7 + amount % 10}",
                      "amount": {"amount": amount, "asset_id": CORE}, "extensions": []}]
            fee = fee or chain.required_fee(op)
            op[1]["fee"] = fee
            chain.push_transaction(signed(chain, [op]))
        produce(chain)
    return chain


def same(a, b):
    """Both chains at the same head with the same balances (init0..init10)."""
    chain_same(a, b, accounts=[f"1.2.{i}" for i in range(6, 17)])


def reopened(genesis, path, reactor):
    """A fresh chain with fresh plugins on the block log at ``path``, opened
    anew (the records checked and indexed, as at a node's start)."""
    return with_plugins(Chain(genesis, BlockLog(path).open(), clock=reactor))


@defer.inlineCallbacks
def measure(reactor, args):
    """Build, replay, checkpoint and restart; returns the figures (seconds,
    bytes) as a dict."""
    genesis = load_genesis()
    tmp = tempfile.mkdtemp(prefix="nodeapi-bench-")
    log_path = os.path.join(tmp, "blocks.log")
    try:
        t0 = time.perf_counter()
        built = build(genesis, log_path, args.blocks, args.per_block)
        build_s = time.perf_counter() - t0
        built.block_log.close()

        t0 = time.perf_counter()
        full = reopened(genesis, log_path, reactor)
        yield full.replay()
        full_s = time.perf_counter() - t0
        same(full, built)
        full.block_log.close()
        del full

        built.block_log.open()
        writer = CheckpointService(built, os.path.join(tmp, "ckpt"), 0, reactor)
        t0 = time.perf_counter()
        path = yield writer.write()
        write_s = time.perf_counter() - t0
        size = os.path.getsize(path)
        for _ in range(args.after):
            produce(built)
        built.block_log.close()

        t0 = time.perf_counter()
        restarted = reopened(genesis, log_path, reactor)
        service = CheckpointService(restarted, os.path.join(tmp, "ckpt"), 0, reactor)
        restarted.add_consumer(service)
        yield service.restore()
        replayed = yield restarted.replay()
        restart_s = time.perf_counter() - t0
        same(restarted, built)
        assert replayed == args.after
        restarted.block_log.close()
    finally:
        shutil.rmtree(tmp)
    return {"blocks": built.head_block_num, "transfers": args.blocks * args.per_block,
            "full_s": full_s, "restart_s": restart_s, "after": args.after,
            "write_s": write_s, "size": size, "build_s": build_s}


@defer.inlineCallbacks
def main(reactor, args):
    m = yield measure(reactor, args)
    if args.json:
        print(json.dumps(m))
        return
    ratio = m["restart_s"] / m["full_s"]
    print(f"restart: {m['blocks']} blocks, {m['transfers']} transfers, account_history + "
          f"market_history: full replay {m['full_s']:.2f} s, restart from a checkpoint "
          f"{m['restart_s']:.2f} s (+{m['after']} blocks replayed), ratio {ratio:.3f}; "
          f"checkpoint write {m['write_s']:.2f} s, {m['size'] / (1 << 20):.1f} MiB; build "
          f"{m['build_s']:.0f} s; target ratio <= 0.1 and restart < 10 s: "
          f"{'met' if ratio <= 0.1 and m['restart_s'] < 10 else 'NOT met'}")


def parse_args(argv):
    parser = common.parser(__doc__)
    parser.add_argument("--blocks", type=int, default=2000, help="blocks of transfers")
    parser.add_argument("--per-block", type=int, default=10, help="transfers per block")
    parser.add_argument("--after", type=int, default=20,
                        help="blocks produced after the checkpoint")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    return parser.parse_args(argv)


if __name__ == "__main__":
    task.react(main, (parse_args(sys.argv[1:]),))
