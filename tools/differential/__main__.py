"""``python -m tools.differential``: one differential run (see
docs/differential.rst); prints one summary line, writes every difference
to ``--out``; exits 1 when a block was refused or a difference is not in
the deliberate list, 2 on a usage error."""

import argparse
import sys

from tools.differential.runner import MAINTENANCE_INTERVAL, REVIEW_PERIOD, Run, Settings


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.differential",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1, help="the scenario's random seed")
    parser.add_argument("--transactions", type=int, default=200,
                        help="how many transactions to judge (default 200)")
    parser.add_argument("--per-block", type=int, default=8,
                        help="at most this many transactions per block (default 8)")
    parser.add_argument("--sweep-every", type=int, default=10,
                        help="blocks between full object sweeps and reads (default 10)")
    parser.add_argument("--objects-per-call", type=int, default=50,
                        help="object ids per get_objects call (default 50)")
    parser.add_argument("--maintenance-interval", type=int, default=MAINTENANCE_INTERVAL,
                        help="the run genesis' maintenance interval in seconds "
                             f"(default {MAINTENANCE_INTERVAL})")
    parser.add_argument("--review-period", type=int, default=REVIEW_PERIOD,
                        help="the run genesis' committee proposal review period in seconds "
                             f"(default {REVIEW_PERIOD})")
    parser.add_argument("--broadcast-disputed", action="store_true",
                        help="also broadcast what only the reference accepts")
    parser.add_argument("--out", default="diff.json", help="the JSON file of differences")
    parser.add_argument("--work-dir", default=None,
                        help="data dirs and logs of both nodes (kept); default a temporary one")
    parser.add_argument("--deliberate", default=None,
                        help="the deliberate-differences file (default: the bundled one)")
    parser.add_argument("--producer", choices=("reference", "nodeapi"), default="reference",
                        help="which node makes the blocks: the reference (nodeapi follows "
                             "over RPC, the default) or nodeapi (the reference follows over "
                             "graphene's P2P protocol and applies every block itself)")
    parser.add_argument("--verbose", action="store_true", help="a progress line per block")
    args = parser.parse_args(argv)
    if min(args.transactions, args.per_block, args.sweep_every, args.objects_per_call,
           args.maintenance_interval - 1, args.review_period) < 1:
        parser.error("--transactions, --per-block, --sweep-every and --objects-per-call "
                     "must be positive")
    run = Run(Settings(seed=args.seed, transactions=args.transactions,
                       per_block=args.per_block, sweep_every=args.sweep_every,
                       broadcast_disputed=args.broadcast_disputed, work_dir=args.work_dir,
                       deliberate_path=args.deliberate, objects_per_call=args.objects_per_call,
                       producer=args.producer,
                       maintenance_interval=args.maintenance_interval,
                       review_period=args.review_period,
                       progress=(lambda line: print(line, file=sys.stderr))
                       if args.verbose else None))
    summary = run.run()
    run.write(args.out)
    print(f"seed {args.seed}: {run.summary_line()} ({summary['seconds']} s; {args.out})")
    unexplained = (summary["refused_blocks"] + summary["validation_differences"]
                   + summary["object_differences"] + summary["read_differences"])
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
