"""Memory of the in-memory ``account_history`` plugin at scale.

Generating a million transfers through the chain (signing, evaluating)
takes too long on a small machine, so the plugin is fed synthetic applied
blocks directly: :class:`~nodeapi.applied.AppliedBlock` objects of
``--per-block`` transfers (default 50) among ``--accounts`` accounts
(default 10,000), each operation parsed from its wire JSON with orjson, as
the chain hands fresh objects to its consumers.  Each run is a child
process, so its RSS is its own; the baseline is the child's RSS after
imports, before the first block (same run).

1. Limited: ``max-ops-per-account = 100``, ``partial-operations = true``
   (without it bitshares-core keeps every operation object),
   ``min-blocks-to-keep = 0`` (with the default 30000, a chain of 20,000
   blocks is entirely in the protected window).  RSS at 100,000, 500,000
   ``--ops`` / 2 and ``--ops`` (default 1,000,000) transfers.  Each account
   keeps 100 entries, so the history stops growing once the accounts have
   100 each (about 500,000 transfers): the RSS at 100,000 (20 entries per
   account, nothing trimmed yet) is below the bound, the later points show
   it.
2. Unlimited (the defaults): ``--unlimited-ops`` transfers (default
   200,000); bytes of RSS per kept operation.
3. Restart (bench/restart.py in a child): a block log of
   ``--restart-blocks`` blocks (default 1,000,000) of
   ``--restart-per-block`` signed transfers (default 1) built with the
   chain, its full replay against a restart from a checkpoint, both
   opening the block log (targets: ratio <= 0.1 and under 10 s).  The
   default takes about an hour on a 2-core machine; ``--restart-blocks 0``
   leaves it out.

Prints one line of figures.

Run: PYTHONPATH=. python bench/scale.py [--ops N]
[--unlimited-ops N] [--accounts N] [--per-block N] [--restart-blocks N]
[--restart-per-block N]
"""

import argparse
import gc
import json
import os
import random
import subprocess
import sys
import time

import common  # noqa: F401  puts the repository and tests/ on sys.path

import orjson  # noqa: E402

from nodeapi.applied import AppliedBlock, AppliedOperation  # noqa: E402
from nodeapi.chain.numbering import number_entries  # noqa: E402
from nodeapi.plugins.account_history.history import AccountHistory  # noqa: E402

MIB = 1 << 20
FIRST_ACCOUNT = 17
T0 = 1_600_000_000


def rss() -> int:
    """Resident set size of this process in bytes (/proc/self/statm)."""
    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def blocks(total: int, accounts: int, per_block: int, seed: int = 7):
    """Applied blocks of ``total`` transfers (the last one may be shorter),
    their ``2.9.N`` entries numbered as the chain numbers them (the
    statistics this needs, a small dict per account, are in the RSS)."""
    rng = random.Random(seed)
    stats: dict = {}
    next_ath = 0

    def stats_of(account):
        got = stats.get(account)
        if got is None:
            got = stats[account] = {"total_ops": 0, "most_recent_op": "2.9.0"}
        return got

    m = 0
    num = 0
    while m < total:
        num += 1
        ops = []
        for trx in range(min(per_block, total - m)):
            a = FIRST_ACCOUNT + rng.randrange(accounts)
            b = FIRST_ACCOUNT + (a - FIRST_ACCOUNT + 1 + rng.randrange(accounts - 1)) % accounts
            op = orjson.loads(
                b'[0,{"fee":{"amount":264160,"asset_id":"1.3.0"},"from":"1.2.%d","to":"1.2.%d",'
                b'"amount":{"amount":%d,"asset_id":"1.3.0"},"extensions":[]}]'
                % (a, b, rng.randrange(1, 10 ** 9)))
            impacted = tuple(f"1.2.{x}" for x in sorted((a, b)))
            entries, next_ath = number_entries(impacted, next_ath, stats_of)
            ops.append(AppliedOperation(m, op, [0, {}], num, trx, 0, 0, False,
                                        "%040x" % rng.getrandbits(160), op[1]["from"], impacted,
                                        entries))
            m += 1
        yield AppliedBlock(num, "%040x" % num, {}, T0 + 3 * num, tuple(ops), False)


def child(kind: str, args) -> dict:
    if kind == "limited":
        from nodeapi.plugins.account_history.retention import HistoryLimits

        hist = AccountHistory(HistoryLimits(max_ops_per_account=100, partial_operations=True,
                                            min_blocks_to_keep=0))
        marks, total = {100_000, 500_000, args.ops // 2, args.ops}, args.ops
    else:
        hist = AccountHistory()
        marks, total = {args.unlimited_ops}, args.unlimited_ops
    out = {"base": rss(), "rss": {}}
    done = 0
    started = time.process_time()
    feed = 0.0
    for block in blocks(total, args.accounts, args.per_block):
        t = time.process_time()
        hist.block_applied(block)
        feed += time.process_time() - t
        done += len(block.operations)
        if done in marks:
            out["rss"][done] = rss()
    out["cpu"] = time.process_time() - started
    out["feed_us"] = feed / total * 1e6
    out["kept_ops"] = hist.operation_count
    assert out["kept_ops"], "the plugin kept no operation: the bench feeds it wrongly"
    logs = getattr(hist, "_logs", None)
    if logs is not None:
        out["entries"] = sum(log.kept for log in logs.values())
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=1_000_000)
    parser.add_argument("--unlimited-ops", type=int, default=200_000)
    parser.add_argument("--accounts", type=int, default=10_000)
    parser.add_argument("--per-block", type=int, default=50)
    parser.add_argument("--restart-blocks", type=int, default=1_000_000)
    parser.add_argument("--restart-per-block", type=int, default=1)
    parser.add_argument("--child", choices=("limited", "unlimited"))
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args)))
        return
    res = {}
    for kind in ("limited", "unlimited"):
        cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, "--ops", str(args.ops),
               "--unlimited-ops", str(args.unlimited_ops), "--accounts", str(args.accounts),
               "--per-block", str(args.per_block)]
        res[kind] = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                              text=True).stdout)
    restart = ""
    if args.restart_blocks:
        cmd = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                            "restart.py"), "--json",
               "--blocks", str(args.restart_blocks), "--per-block", str(args.restart_per_block)]
        m = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                      text=True).stdout.splitlines()[-1])
        ratio = m["restart_s"] / m["full_s"]
        met = ratio <= 0.1 and m["restart_s"] < 10
        restart = (f" | restart: {m['blocks']:,} blocks, {m['transfers']:,} transfers: full "
                   f"replay {m['full_s']:.1f} s, from a checkpoint {m['restart_s']:.2f} s, ratio "
                   f"{ratio:.3f} ({'PASS' if met else 'FAIL'} <= 0.1 and < 10 s), checkpoint "
                   f"{m['size'] / MIB:.0f} MiB written in {m['write_s']:.1f} s")
    lim, unl = res["limited"], res["unlimited"]
    r = {int(k): v for k, v in lim["rss"].items()}
    ratio = r[args.ops] / r[100_000]
    half = args.ops // 2
    saturated = r[args.ops] / r[half]
    points = ", ".join(f"{k // 1000}k {v / MIB:.1f}" for k, v in sorted(r.items()))
    per_op = (unl["rss"][str(args.unlimited_ops)] - unl["base"]) / unl["kept_ops"]
    print(f"scale (synthetic applied blocks fed to account_history, {args.per_block} transfers "
          f"per block among {args.accounts:,} accounts): max-ops-per-account=100 "
          f"partial-operations=true min-blocks-to-keep=0: RSS base {lim['base'] / MIB:.1f} MiB, "
          f"{points} MiB ({args.ops // 1000}k/100k "
          f"{ratio:.2f} {'PASS' if ratio <= 1.2 else 'FAIL'} <= 1.20; "
          f"{args.ops // 1000}k/{half // 1000}k {saturated:.2f}), kept {lim['kept_ops']:,} ops "
          f"{lim['entries']:,} entries, {lim['feed_us']:.1f} us/op | unlimited: "
          f"{args.unlimited_ops // 1000}k ops, base {unl['base'] / MIB:.1f} MiB -> "
          f"{unl['rss'][str(args.unlimited_ops)] / MIB:.1f} MiB, {per_op:.0f} bytes of RSS per "
          f"kept operation ({'PASS' if per_op < 400 else 'FAIL'} < 400), "
          f"{unl['feed_us']:.1f} us/op{restart}")


if __name__ == "__main__":
    main()
