"""Read calls through the gateway against the same calls made directly to
its upstream.

Starts two real ``twistd -n nodeapi`` daemons: a producer (the upstream)
and a gateway (``--upstream ws://bytemaster:...@producer``, README
"nodeapi in front of bitshares-core nodes").  The load comes from a child
process (this script with ``--client``): ``--conns`` WebSocket connections
(the minimal pre-masked client of bench/rpc.py), one call in flight each,
rotating over :data:`MIX` (head-dependent reads, an account, assets, and
block 1, which the gateway answers from its cache once it is
irreversible).  Each phase has a 1 s warm-up and a measured window; the
client records every call's round trip, and the CPU time of the upstream
and the gateway over the window is read from ``/proc`` (on 2 cores they
share the machine with the client).  Phases alternate (direct,
gateway) for ``--rounds`` rounds; the best round of each is kept.

Then the notice fan-out phase (``bench/gateway_fanout.py`` in a child
process): ``--subscribers`` WebSocket clients (1,000) sharing one upstream
subscription through an in-process gateway, from the upstream's notice to
the last client's, against the same clients subscribed to the upstream
directly.  Then the wallets phase (``bench/gateway_wallets.py`` in a child
process): ``--wallets`` wallets (1,000) with distinct accounts subscribed
through an in-process gateway, every account paid once per round: notices
delivered, p99 from a block to its last paid wallet's notice, upstream
connections used (0: the phase is skipped; ``--wallets-only``: only it).

The gateway runs with ``--upstream-share-seconds`` ``--share`` (default
its own default; 0: no per-block sharing of head-dependent reads); its
metrics are read at the end: the share's hits among its lookups, the calls
shared in flight and the cache's hits.

Prints one line: calls/s and p99 latency of each, and the ratios
gateway/direct, the gateway's sharing figures; then the fan-out figures.
Run: PYTHONPATH=. python bench/gateway.py [--seconds S] [--rounds N]
[--conns C] [--share SECONDS] [--subscribers N] [--blocks R] [--wallets W]
[--wallet-rounds R] [--wallets-only]
"""

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
import common  # puts the repository and tests/ on sys.path

MIX = [
    b'{"id":1,"method":"call","params":[0,"get_dynamic_global_properties",[]]}',
    b'{"id":2,"method":"call","params":[0,"get_full_accounts",[["init0"],false]]}',
    b'{"id":3,"method":"call","params":[0,"get_objects",[["2.1.0","1.3.0","1.2.6"]]]}',
    b'{"id":4,"method":"call","params":[0,"lookup_asset_symbols",[["TEST"]]]}',
    b'{"id":5,"method":"call","params":[0,"get_block",[1]]}',
    b'{"id":6,"method":"call","params":[0,"get_accounts",[["init1","init2"]]]}',
]


async def client(port: int, seconds: float, conns: int) -> None:
    """Load ``port``; print ``start`` after the warm-up and
    ``stop N S P99`` (replies, seconds, p99 in ms) at the end."""
    from common import masked_frame
    from rpc import WsLoad, _Counter  # bench/rpc.py's client

    class Timed(WsLoad):
        """One call in flight; each round trip recorded."""

        def __init__(self, *args):
            super().__init__(*args)
            self.frames = [masked_frame(call) for call in MIX]
            self.sent_at = 0.0

        def send(self, n):
            self.sent_at = time.perf_counter()
            super().send(n)

        def data_received(self, data):
            before, sent_at = self.counter.replies, self.sent_at
            got_at = time.perf_counter()
            super().data_received(data)  # sends the next call
            if self.counter.replies > before and self.counter.measuring:
                latencies.append(got_at - sent_at)

    loop = asyncio.get_running_loop()
    counter = _Counter()
    counter.measuring = False
    latencies: list = []
    for _ in range(conns):
        await loop.create_connection(lambda: Timed(port, 1, counter), "127.0.0.1", port)
    await asyncio.sleep(1.0)
    base, started = counter.replies, time.perf_counter()
    counter.measuring = True
    print("start", flush=True)
    await asyncio.sleep(seconds)
    count, elapsed = counter.replies - base, time.perf_counter() - started
    counter.running = counter.measuring = False
    latencies.sort()
    p99 = latencies[int(len(latencies) * 0.99)] * 1000 if latencies else float("nan")
    print(f"stop {count} {elapsed:.6f} {p99:.3f}", flush=True)


def run_phase(port: int, args, watched: dict) -> tuple:
    """One measured window against ``port``: (calls/s, p99 ms, {name: CPU
    share of the window})."""
    from scaleout import cpu_of

    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--client", str(port),
                             str(args.seconds), str(args.conns)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "start"
    before = {name: cpu_of(pid) for name, pid in watched.items()}
    word, count, elapsed, p99 = proc.stdout.readline().split()
    after = {name: cpu_of(pid) for name, pid in watched.items()}
    proc.wait(30)
    assert word == "stop"
    elapsed = float(elapsed)
    return (int(count) / elapsed, float(p99),
            {n: (after[n] - before[n]) / elapsed for n in watched})


def sharing(metrics_port: int) -> str:
    """The gateway's sharing figures from its /metrics."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics",
                                  timeout=10).read().decode()
    values = {}
    for line in text.splitlines():
        if line.startswith("nodeapi_gateway_") and " " in line:
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)

    def of(name):
        return values.get(f"nodeapi_gateway_{name}_total", 0.0)

    hits, misses = of("head_share_hits"), of("head_share_misses")
    share = (f"per-block share hits {hits:,.0f} of {hits + misses:,.0f} lookups"
             if hits + misses else "no per-block share")
    return (f"{share}, {of('shared_reads'):,.0f} shared in flight, cache hits "
            f"{of('cache_hits'):,.0f}")


def wallets_phase(args) -> str:
    """The wallets phase's line (``bench/gateway_wallets.py``), or "" when
    ``--wallets`` is 0."""
    if not args.wallets:
        return ""
    return subprocess.run([sys.executable, os.path.join(HERE, "gateway_wallets.py"),
                           str(args.wallets), str(args.wallet_rounds)], capture_output=True,
                          text=True, check=True).stdout.strip().splitlines()[-1]


def main(args) -> None:
    if args.wallets_only:
        print(wallets_phase(args))
        return
    from kit.daemon import ACCESS, Daemon, free_port
    from kit.wait import wait_until

    load = os.getloadavg()[0]
    tmp = tempfile.mkdtemp(prefix="bench-gateway-")
    producer = Daemon(os.path.join(tmp, "producer"), "--api-access", ACCESS).start()
    gateway = None
    try:
        producer.wait_head(2)
        metrics_port = free_port()
        share = [] if args.share is None else ["--upstream-share-seconds", f"{args.share:g}"]
        gateway = Daemon(os.path.join(tmp, "gateway"), "--api-access", ACCESS, "--upstream",
                         f"ws://bytemaster:supersecret@127.0.0.1:{producer.port}",
                         "--metrics-endpoint", f"tcp:{metrics_port}:interface=127.0.0.1",
                         *share).start()
        wait_until(lambda: gateway.call("get_block", 1), what="the gateway serving")
        watched = {"upstream": producer.proc.pid, "gateway": gateway.proc.pid}
        best: dict = {}
        for _ in range(args.rounds):
            for name, port in (("direct", producer.port), ("gateway", gateway.port)):
                result = run_phase(port, args, watched)
                if name not in best or result[0] > best[name][0]:
                    best[name] = result
        shared = sharing(metrics_port)
    finally:
        for node in (gateway, producer):
            if node is not None:
                node.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    (direct, direct_p99, _), (through, through_p99, cpu) = best["direct"], best["gateway"]
    fanout = subprocess.run([sys.executable, os.path.join(HERE, "gateway_fanout.py"),
                             str(args.subscribers), str(args.blocks)], capture_output=True,
                            text=True, check=True).stdout.strip().splitlines()[-1]
    print(f"gateway (WebSocket reads, {len(MIX)}-call mix, {args.conns} connections x 1 in "
          f"flight; {os.cpu_count()} cores): direct {direct:,.0f} calls/s p99 "
          f"{direct_p99:.1f} ms; through the gateway {through:,.0f} calls/s p99 "
          f"{through_p99:.1f} ms [CPU upstream {cpu['upstream']:.0%}, gateway "
          f"{cpu['gateway']:.0%}]; ratio calls/s {through / direct:.2f}, p99 "
          f"{through_p99 / direct_p99:.2f}; {shared}; best of {args.rounds} rounds of "
          f"{args.seconds:g} s; load average {load:.2f} at start; {fanout}")
    wallets = wallets_phase(args)
    if wallets:
        print(wallets)


def parse_args(argv):
    parser = common.parser(__doc__)
    common.add_load_options(parser, seconds=4.0, rounds=2, conns=16)
    parser.add_argument("--share", type=float, default=None)
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--blocks", type=int, default=50)
    parser.add_argument("--wallets", type=int, default=1000)
    parser.add_argument("--wallet-rounds", type=int, default=2)
    parser.add_argument("--wallets-only", action="store_true")
    return parser.parse_args(argv)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--client"]:
        port, seconds, conns = sys.argv[2:5]
        asyncio.run(client(int(port), float(seconds), int(conns)))
    else:
        main(parse_args(sys.argv[1:]))
