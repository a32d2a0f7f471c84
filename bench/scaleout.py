"""Read throughput of replicas behind HAProxy: one follower against two.

Starts three real ``twistd -n nodeapi`` daemons (a producer and two
followers: ``--seed-node``, no witness plugin, as in README "Replicas
behind HAProxy") and Debian's haproxy with the shipped ``etc/haproxy.cfg``.
The producer is put in maintenance (HAProxy's runtime API, ``set server
... state maint``) so only followers serve; then, in alternating rounds:

* one follower: follower2 in maintenance too, every call reaches follower1;
* two followers: both ready, round robin;
* baseline: the same load straight at follower1, without HAProxy (what the
  proxy costs).

The load comes from a child process (this script with ``--client``: the
asyncio keep-alive HTTP client of bench/rpc.py, ``--conns`` connections,
one request in flight each) rotating over ``get_dynamic_global_properties``,
``get_full_accounts`` (init0) and ``get_block_header`` (block 1).  Each
phase has a 1 s warm-up and a measured window; the CPU time each process
used in the window is read from ``/proc`` (a follower near 100 % set the
pace; on 2 cores the client and HAProxy share them with the followers).

Prints one line with the calls/s, the ratio two/one and the CPU use.
Run: PYTHONPATH=. python bench/scaleout.py [--seconds S] [--rounds N] [--conns C]
"""

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time

import common  # puts the repository and tests/ on sys.path

MIX = [
    b'{"jsonrpc":"2.0","id":1,"method":"call","params":[0,"get_dynamic_global_properties",[]]}',
    b'{"jsonrpc":"2.0","id":2,"method":"call","params":[0,"get_full_accounts",[["init0"],false]]}',
    b'{"jsonrpc":"2.0","id":3,"method":"call","params":[0,"get_block_header",[1]]}',
]


async def client(port: int, seconds: float, conns: int) -> None:
    """Load ``port``; print ``start`` after the warm-up and ``stop N S``."""
    from rpc import HttpLoad, _Counter  # bench/rpc.py's load generator

    loop = asyncio.get_running_loop()
    counter = _Counter()
    requests = [common.http_request(port, call) for call in MIX]
    for i in range(conns):
        mine = requests[i % len(requests):] + requests[:i % len(requests)]
        await loop.create_connection(lambda: HttpLoad(mine, counter), "127.0.0.1", port)
    await common.measured_window(counter, 1.0, seconds)


def run_phase(port: int, args, watched: dict) -> tuple:
    """One measured window against ``port``: (calls/s, {name: CPU share})."""
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--client", str(port),
                             str(args.seconds), str(args.conns)], stdout=subprocess.PIPE,
                            text=True)
    watched = dict(watched, client=proc.pid)
    assert proc.stdout.readline().strip() == "start"
    before = {name: common.cpu_seconds(pid) for name, pid in watched.items()}
    word, count, elapsed = proc.stdout.readline().split()
    after = {name: common.cpu_seconds(pid) for name, pid in watched.items()}
    proc.wait(30)
    assert word == "stop"
    elapsed = float(elapsed)
    return int(count) / elapsed, {n: (after[n] - before[n]) / elapsed for n in watched}


def set_state(proxy, server: str, state: str) -> None:
    answer = proxy.command(f"set server nodeapi_http/{server} state {state}")
    assert answer.strip() == "", answer


def main(args) -> None:
    from kit.daemon import ACCESS, Daemon
    from kit.haproxy import HAProxy
    from kit.wait import wait_until

    load = os.getloadavg()[0]
    tmp = tempfile.mkdtemp(prefix="bench-scaleout-")
    producer = Daemon(os.path.join(tmp, "producer"), "--api-access", ACCESS).start()
    seed = f"ws://bytemaster:supersecret@127.0.0.1:{producer.port}"
    followers = [Daemon(os.path.join(tmp, f"follower{i}"), "--api-access", ACCESS,
                        "--plugins", "account_history market_history", "--seed-node",
                        seed).start() for i in (1, 2)]
    proxy = None
    try:
        producer.wait_head(2)
        for follower in followers:
            wait_until(lambda: follower.head()[0] >= 2, what="follower sync")
        proxy = HAProxy(tmp, f"127.0.0.1:{producer.port}",
                        *(f"127.0.0.1:{f.port}" for f in followers)).start()
        set_state(proxy, "producer", "maint")
        watched = {"follower1": followers[0].proc.pid, "follower2": followers[1].proc.pid,
                   "haproxy": proxy.proc.pid}
        best = {}
        for _ in range(args.rounds):
            set_state(proxy, "follower2", "maint")
            one = run_phase(proxy.port, args, watched)
            set_state(proxy, "follower2", "ready")
            two = run_phase(proxy.port, args, watched)
            direct = run_phase(followers[0].port, args, watched)
            for name, result in (("one", one), ("two", two), ("direct", direct)):
                if name not in best or result[0] > best[name][0]:
                    best[name] = result
    finally:
        if proxy is not None:
            proxy.stop()
        for node in (*followers, producer):
            node.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    def cpu(result):
        return ", ".join(f"{n} {share:.0%}" for n, share in result[1].items()
                         if share >= 0.005)

    one, two, direct = best["one"][0], best["two"][0], best["direct"][0]
    print(f"scaleout (HTTP reads: get_dynamic_global_properties, get_full_accounts, "
          f"get_block_header; {args.conns} keep-alive connections; {os.cpu_count()} cores): "
          f"through HAProxy 1 follower {one:,.0f} calls/s [CPU {cpu(best['one'])}], "
          f"2 followers {two:,.0f} calls/s [CPU {cpu(best['two'])}], ratio 2/1 {two / one:.2f}; "
          f"follower1 without HAProxy {direct:,.0f} calls/s [CPU {cpu(best['direct'])}], "
          f"HAProxy keeps {one / direct:.2f}; best of {args.rounds} rounds of {args.seconds:g} s; "
          f"load average {load:.2f} at start")


def parse_args(argv):
    parser = common.parser(__doc__)
    common.add_load_options(parser, seconds=4.0, rounds=2, conns=16)
    return parser.parse_args(argv)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--client"]:
        port, seconds, conns = sys.argv[2:5]
        asyncio.run(client(int(port), float(seconds), int(conns)))
    else:
        main(parse_args(sys.argv[1:]))
