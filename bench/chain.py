"""Replay speed of the chain over a real block log (targets:
>= 2,000 empty blocks/s, >= 3,000 transfers/s).

Builds two block logs with the chain itself (``generate_block``, real
signatures; the build writes without fsync, a node always syncs):

1. ``--empty`` empty blocks (default 10,000);
2. a balance claim, then ``--transfer-blocks`` blocks (default 5) of
   ``--per-block`` transfers each (default 1,000), every transaction signed.

Then times ``Chain.replay`` of each log into a fresh Chain (the startup path:
the global cooperator under the reactor, skip-signature replay), checks that
the replayed head id and balances equal the builder's, and times a raw
``BlockLog.blocks()`` pass over the same file as the baseline measured in the
same run.  Prints one line: rates, ratio to the baseline, peak RSS.

Run: PYTHONPATH=. python bench/chain.py [--empty N]
[--transfer-blocks N] [--per-block N]
"""

import os
import resource
import shutil
import struct
import sys
import tempfile
import time

import common  # puts the repository and tests/ on sys.path

from twisted.internet import defer, task  # noqa: E402

from nodeapi.chain import authority as auth  # noqa: E402
from nodeapi.chain.blocklog import BlockLog  # noqa: E402
from nodeapi.chain.chain import Chain  # noqa: E402
from nodeapi.chain.genesis import load_genesis  # noqa: E402
from nodeapi.protocol.times import format_time
from nodeapi.protocol.transaction import signature_digest  # noqa: E402

DEV_WIF = "5KQwrPbwdL6PhXujxW37FSSQZ1JiwsST4cqQzDeyXtP79zkvFD3"
CORE = "1.3.0"


def produce(chain):
    when = chain.get_slot_time(1)
    chain.generate_block(when, chain.get_scheduled_witness(1), DEV_WIF)


def signed(chain, ops, expire_in=3600):
    bid = chain.head_block_id
    trx = {"ref_block_num": chain.head_block_num & 0xFFFF,
           "ref_block_prefix": struct.unpack_from("<I", bytes.fromhex(bid), 4)[0],
           "expiration": format_time(chain.head_block_time + expire_in),
           "operations": ops, "extensions": []}
    digest = signature_digest(trx, chain.chain_id, "TEST")
    trx["signatures"] = [auth.sign_digest(digest, DEV_WIF)]
    return trx


def build_empty(genesis, path, n):
    log = BlockLog(path, sync=False).open()
    chain = Chain(genesis, log)
    for _ in range(n):
        produce(chain)
    return chain


def build_transfers(genesis, path, blocks, per_block):
    log = BlockLog(path, sync=False).open()
    chain = Chain(genesis, log)
    chain.push_transaction(signed(chain, [[37, {
        "fee": {"amount": 0, "asset_id": CORE}, "deposit_to_account": "1.2.6",
        "balance_to_claim": "1.15.0", "balance_owner_key": auth.public_key_of(DEV_WIF, chain.address_prefix),
        "total_claimed": chain.state.get("1.15.0")["balance"]}]]))
    produce(chain)
    amount = 0
    for _ in range(blocks):
        for _ in range(per_block):
            amount += 1
            op = [0, {"fee": {"amount": 0, "asset_id": CORE}, "from": "1.2.6", "to": "1.2.7",
                      "amount": {"amount": amount, "asset_id": CORE}, "extensions": []}]
            op[1]["fee"] = chain.required_fee(op)
            chain.push_transaction(signed(chain, [op]))
        produce(chain)
    return chain


@defer.inlineCallbacks
def replay(genesis, log):
    chain = Chain(genesis, log)
    started = time.perf_counter()
    count = yield chain.replay()
    return chain, count, time.perf_counter() - started


def raw_read(log):
    started = time.perf_counter()
    ops = 0
    for _num, block in log.blocks():
        ops += sum(len(t["operations"]) for t in block["transactions"])
    return ops, time.perf_counter() - started


def same(a, b, accounts=("1.2.6", "1.2.7")):
    """Both chains at the same head with the same core balances."""
    assert a.head_block_id == b.head_block_id, "replayed head differs"
    for acc in accounts:
        assert a.state.balance(acc, CORE) == b.state.balance(acc, CORE), "balances differ"


@defer.inlineCallbacks
def main(reactor, args):
    genesis = load_genesis()
    tmp = tempfile.mkdtemp(prefix="nodeapi-bench-")
    try:
        t0 = time.perf_counter()
        built = build_empty(genesis, os.path.join(tmp, "empty.log"), args.empty)
        build_empty_s = time.perf_counter() - t0
        empty_chain, n_empty, empty_s = yield replay(genesis, built.block_log)
        same(empty_chain, built)
        _ops, raw_empty_s = raw_read(built.block_log)

        t0 = time.perf_counter()
        built = build_transfers(genesis, os.path.join(tmp, "transfers.log"),
                                args.transfer_blocks, args.per_block)
        build_ops_s = time.perf_counter() - t0
        ops_chain, _n, ops_replay_s = yield replay(genesis, built.block_log)
        same(ops_chain, built)
        n_ops, raw_ops_s = raw_read(built.block_log)
        transfers = args.transfer_blocks * args.per_block
        assert n_ops == transfers + 1
    finally:
        shutil.rmtree(tmp)
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    blocks_rate, raw_blocks_rate = n_empty / empty_s, n_empty / raw_empty_s
    ops_rate, raw_ops_rate = n_ops / ops_replay_s, n_ops / raw_ops_s
    verdict = "met" if blocks_rate >= 2000 and ops_rate >= 3000 else "NOT met"
    print(f"chain replay: {n_empty} empty blocks {blocks_rate:,.0f} blocks/s "
          f"(raw BlockLog read {raw_blocks_rate:,.0f}/s, ratio {blocks_rate / raw_blocks_rate:.3f}); "
          f"{transfers} transfers in {args.transfer_blocks} blocks {ops_rate:,.0f} ops/s "
          f"(raw read {raw_ops_rate:,.0f}/s, ratio {ops_rate / raw_ops_rate:.3f}); "
          f"peak RSS {rss_mib:.0f} MiB; build {build_empty_s:.1f} s + {build_ops_s:.1f} s; "
          f"targets >= 2,000 blocks/s, >= 3,000 ops/s: {verdict}")


def parse_args(argv):
    parser = common.parser(__doc__)
    parser.add_argument("--empty", type=int, default=10000, help="empty blocks")
    parser.add_argument("--transfer-blocks", type=int, default=5, help="blocks of transfers")
    parser.add_argument("--per-block", type=int, default=1000, help="transfers per block")
    return parser.parse_args(argv)


if __name__ == "__main__":
    task.react(main, (parse_args(sys.argv[1:]),))
