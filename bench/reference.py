"""nodeapi against bitshares-core's witness_node (the reference node, built
beside the repository: ``../shared/reference/witness_node``) on the same
machine, the same chain, in one run; every line prints nodeapi's figure,
the reference's and the ratio nodeapi / reference.

1. The chain: the reference, with only its ``debug_witness`` plugin making
   blocks (no ``witness`` plugin: ``debug_generate_blocks`` makes each block
   at the next slot after the head, so the chain starts at the bundled
   genesis' 2016 timestamp and stays in the past, where a follower accepts
   it), makes ``--blocks`` blocks: init0 claims the genesis balance, creates
   GOLD, init0 and init1 place 50 orders a side of TEST/GOLD, and one block
   in ``--tx-every`` carries a transaction of ``--transfers`` transfers and
   two orders that fill each other inside the spread (init2 sells TEST,
   init3 GOLD).  bitshares-core's figure of the issue is 100,000 blocks;
   the default is 20,000 so the whole run takes a few minutes on 2 cores.
2. Following: a ``twistd nodeapi`` with ``--plugins "account_history
   market_history"`` (no witness) catches up from the reference over RPC
   (``--seed-node ws://...``), once as a non-producing node runs (the
   transactions' signatures skipped, as bitshares-core's ``handle_block``)
   and once with ``--force-validate``; against the reference's own
   ``--replay-blockchain`` of the same block log (its plugins
   ``account_history market_history api_helper_indexes``): blocks/s and
   ops/s, each from the start of the process until its RPC answers with
   the head (the reference's log's own replay time is printed too); and
   nodeapi's ``--replay-blockchain`` of its block log.
3. API reads, the same state on both (the reference that made the chain,
   nodeapi following it with ``--force-validate``): pipelined calls/s of
   ``get_dynamic_global_properties``, ``get_full_accounts(["init0"])``
   (its balances and 50 orders), ``get_order_book(TEST, GOLD, 50)``,
   ``get_objects`` of the 100 book orders and ``history.get_account_history``
   of init0 (100 entries), over WebSocket (``--ws-conns`` connections,
   ``--window`` calls in flight each) and over HTTP (``--http-conns``
   keep-alive connections), the load from a child process (bench/rpc.py's
   clients); alternating phases, the best of ``--rounds``; each server's
   CPU share over the window (/proc) is printed and the ratio per CPU
   second too: the reference runs its RPC on several threads, nodeapi on
   one, so on a loaded 2-core machine the plain ratio follows the load.
4. Memory: RSS of each started from its data dir of that chain (same
   plugins as above), before and after the reads.
5. Startup: time from the process start to its RPC answering with the
   head, from a data dir of that chain (nodeapi from its checkpoint).

With ``--today``, the scripts behind today's goals run after it in child
processes and their lines are printed too: ``bench/chain.py`` (replay
>= 30,000 empty and >= 20,000 transfer blocks/s on a quiet machine; the
script prints its own floor), ``bench/rpc.py`` (>= 0.85 of the bare
servers) and ``bench/notices.py`` (1,000 subscribers, p99 <= 100 ms).

Then the goals of the issue (>= 1.0 on every read, no worse than 0.8; the
catch-up >= 0.5 of the reference's replay) with met / NOT met.

Run: PYTHONPATH=. python bench/reference.py [--blocks N] [--tx-every K]
[--transfers T] [--seconds S] [--rounds R] [--today]
"""

import asyncio
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
import common  # puts the repository and tests/ on sys.path
from common import cpu_seconds, rss_mib

CORE = "1.3.0"
#: goals of the comparison: reads, their floor, catch-up against the replay
READ_GOAL, READ_FLOOR, FOLLOW_GOAL = 1.0, 0.8, 0.5
#: the reference's plugins when it serves or replays the chain (nodeapi runs
#: account_history and market_history; its API helper indexes are built in)
REFERENCE_PLUGINS = ("account_history", "market_history", "api_helper_indexes")
#: the chain maker's: no ``witness``, so only debug_generate_blocks makes blocks
MAKER_PLUGINS = ("debug_witness",) + REFERENCE_PLUGINS
NODEAPI_PLUGINS = "account_history market_history"


# -- the load generator (child process) ---------------------------------------

async def client(mode: str, port: int, seconds: float, conns: int, window: int,
                 request: bytes, warm_up: float) -> None:
    """Load ``port`` with ``request`` (``mode``: ``ws`` pipelined, ``http``
    keep-alive, ``http1`` a connection per request); print ``start`` after
    ``warm_up`` seconds and ``stop N S`` (N replies in S seconds) at the end
    of the window."""
    from common import masked_frame
    from rpc import HttpLoad, WsLoad, _Counter

    loop = asyncio.get_running_loop()
    counter = _Counter()
    http = common.http_request(port, request)
    frame = masked_frame(request)

    def ws():
        load = WsLoad(port, window, counter)
        load.frames = [frame]
        return load

    if mode == "http1":  # a connection per request (the reference closes each)
        async def once():
            while counter.running:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(http)
                head = await reader.readuntil(b"\r\n\r\n")
                if not head.startswith(b"HTTP/1.1 200"):
                    raise SystemExit(f"bad HTTP reply: {head[:200]!r}")
                await reader.readexactly(int(HttpLoad.LENGTH.search(head).group(1)))
                writer.close()
                counter.replies += 1

        tasks = [asyncio.ensure_future(once()) for _ in range(conns)]
        conns = 0
    for _ in range(conns):
        if mode == "http":
            await loop.create_connection(lambda: HttpLoad([http], counter), "127.0.0.1", port)
        else:
            await loop.create_connection(ws, "127.0.0.1", port)
    await common.measured_window(counter, warm_up, seconds)
    if mode == "http1":
        for t in tasks:
            t.cancel()


# -- measuring processes ----------------------------------------------------------



def load_phase(mode: str, port: int, pid: int, request: bytes, args) -> tuple:
    """One measured window of the child client against ``port`` (served by
    process ``pid``); (calls/s, the server's CPU share of the window)."""
    conns = args.ws_conns if mode == "ws" else args.http_conns
    child = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--client", mode, str(port),
         str(args.seconds), str(conns), str(args.window), request.decode(), str(args.warm_up)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        marks = {}
        for line in child.stdout:
            word, *rest = line.split()
            marks[word] = (cpu_seconds(pid), rest)
            if word == "stop":
                break
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    if "stop" not in marks or "start" not in marks:
        raise RuntimeError(f"load client failed: {child.stderr.read()[-2000:]}")
    count, elapsed = int(marks["stop"][1][0]), float(marks["stop"][1][1])
    return count / elapsed, (marks["stop"][0] - marks["start"][0]) / elapsed


#: seconds without a higher head (or without RPC) before a wait gives up
STALL = 60.0


def wait_serving(call, head: int, log) -> float:
    """Poll ``call("get_dynamic_global_properties")`` until its head is
    ``head``; the time.perf_counter() when it was.  Raises RuntimeError
    with the end of ``log()`` when the head stays where it is (or the RPC
    does not answer) for :data:`STALL` seconds."""
    seen, progress = -1, time.perf_counter()
    while time.perf_counter() - progress < STALL:
        try:
            now = call("get_dynamic_global_properties")["head_block_number"]
        except (OSError, RuntimeError, ValueError):
            now = seen
        if now >= head:
            return time.perf_counter()
        if now > seen:
            seen, progress = now, time.perf_counter()
        time.sleep(0.05)
    raise RuntimeError(f"head {head} not served (at {seen} for {STALL:g} s):\n{log()[-3000:]}")


# -- making the chain on the reference -------------------------------------------

class Maker:
    """Signs and broadcasts transactions of init accounts (the development
    key) on the reference ``node`` and makes blocks with its debug API."""

    def __init__(self, node):
        from kit.keys import DEV_WIF
        self.node, self.wif = node, DEV_WIF
        self.chain_id = node.call("get_chain_id")
        self.ops = 0  # operations broadcast

    def broadcast(self, ops: list) -> None:
        from nodeapi.protocol.transaction import sign_transaction

        fees = self.node.call("get_required_fees", ops, CORE)
        ops = [[t, dict(d, fee=fee)] for (t, d), fee in zip(ops, fees)]
        props = self.node.call("get_dynamic_global_properties")
        head_id = bytes.fromhex(props["head_block_id"])
        when = time.mktime(time.strptime(props["time"], "%Y-%m-%dT%H:%M:%S")) - time.timezone
        trx = {"ref_block_num": props["head_block_number"] & 0xFFFF,
               "ref_block_prefix": struct.unpack_from("<I", head_id, 4)[0],
               "expiration": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when + 3600)),
               "operations": ops, "extensions": []}
        trx = sign_transaction(trx, self.chain_id, [self.wif], "TEST")
        self.node.call("broadcast_transaction", trx, api="network_broadcast")
        self.ops += len(ops)

    def blocks(self, count: int) -> None:
        if count > 0:
            self.node.call("debug_generate_blocks", self.wif, count, api="debug",
                           timeout=600)


def _amount(n, asset=CORE):
    return {"amount": n, "asset_id": asset}


def _transfer(frm, to, n, asset=CORE):
    return [0, {"fee": _amount(0), "from": frm, "to": to, "amount": _amount(n, asset),
                "extensions": []}]


def _order(seller, sell, sell_asset, receive, receive_asset):
    return [1, {"fee": _amount(0), "seller": seller, "amount_to_sell": _amount(sell, sell_asset),
                "min_to_receive": _amount(receive, receive_asset),
                "expiration": "2030-01-01T00:00:00", "fill_or_kill": False, "extensions": []}]


def make_chain(maker: Maker, args) -> dict:
    """The chain of the module docstring; returns {"head", "ops", "gold"}."""
    from kit.keys import DEV_PUB

    node = maker.node
    balance = node.call("get_objects", ["1.15.0"])[0]
    maker.broadcast([[37, {"fee": _amount(0), "deposit_to_account": "1.2.6",
                           "balance_to_claim": "1.15.0", "balance_owner_key": DEV_PUB,
                           "total_claimed": balance["balance"]}]])
    maker.blocks(1)
    opts = {"max_supply": 10 ** 12, "market_fee_percent": 0, "max_market_fee": 0,
            "issuer_permissions": 0, "flags": 0,
            "core_exchange_rate": {"base": _amount(1), "quote": _amount(2, "1.3.1")},
            "whitelist_authorities": [], "blacklist_authorities": [], "whitelist_markets": [],
            "blacklist_markets": [], "description": "", "extensions": {}}
    maker.broadcast([[10, {"fee": _amount(0), "issuer": "1.2.6", "symbol": "GOLD",
                           "precision": 3, "common_options": opts,
                           "is_prediction_market": False, "extensions": []}]])
    maker.blocks(1)
    gold = node.call("lookup_asset_symbols", ["GOLD"])[0]["id"]
    maker.broadcast([[14, {"fee": _amount(0), "issuer": "1.2.6",
                           "asset_to_issue": _amount(10 ** 11, gold),
                           "issue_to_account": "1.2.7", "extensions": []}]]
                    + [_transfer("1.2.6", f"1.2.{i}", 10 ** 13) for i in (7, 8, 9)])
    maker.blocks(1)
    maker.broadcast([_transfer("1.2.7", "1.2.9", 10 ** 10, gold)])
    # 50 asks (init0 sells TEST at 0.0067-0.01 GOLD) and 50 bids (init1 pays
    # 0.004-0.005 GOLD per TEST): the spread holds the fills below
    maker.broadcast([_order("1.2.6", 100000 + 1000 * i, CORE, 1000, gold) for i in range(50)])
    maker.broadcast([_order("1.2.7", 1000, gold, 200000 + 1000 * i, CORE) for i in range(50)])
    maker.blocks(1)
    made = 4
    n = 0
    while made < args.blocks:
        n += 1
        ops = [_transfer("1.2.6", f"1.2.{10 + i % 7}", 1000 + n * 100 + i)
               for i in range(args.transfers)]
        # init2 sells TEST at 0.006 GOLD, init3 buys it at that price: a fill
        ops += [_order("1.2.8", 100000, CORE, 600, gold), _order("1.2.9", 600, gold, 100000, CORE)]
        maker.broadcast(ops)
        step = min(args.tx_every, args.blocks - made)
        maker.blocks(step)
        made += step
    head = node.head()
    assert head == args.blocks, (head, args.blocks)
    return {"head": head, "ops": maker.ops, "gold": gold}


# -- the nodes --------------------------------------------------------------------

#: the genesis' start and maintenance interval: block 1 (one second after
#: the start) falls on a maintenance time, so it is a maintenance block for
#: both nodes.  bitshares-core starts with next_maintenance_time 0
#: (db_genesis.cpp leaves it default), so its block 1 always is one and the
#: next block comes maintenance_skip_slots later; nodeapi's genesis sets the
#: next multiple of the interval, which a first block made at the first slot
#: (debug_generate_blocks) does not reach on the bundled genesis.  Both
#: nodes then run a maintenance every 3,601 blocks.
GENESIS_TIMESTAMP, MAINTENANCE_INTERVAL = "2016-01-18T11:05:30", 3601


def write_genesis(tmp) -> str:
    """The bundled genesis with :data:`GENESIS_TIMESTAMP` and
    :data:`MAINTENANCE_INTERVAL` (its own chain id: the sha256 of the file,
    on both nodes); its path."""
    from nodeapi.chain.genesis import DEFAULT_GENESIS
    with open(DEFAULT_GENESIS, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r'"initial_timestamp": "[^"]+"',
                  f'"initial_timestamp": "{GENESIS_TIMESTAMP}"', text, count=1)
    text = re.sub(r'"maintenance_interval": \d+',
                  f'"maintenance_interval": {MAINTENANCE_INTERVAL}', text, count=1)
    path = os.path.join(tmp, "genesis.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def start_nodeapi(genesis, data_dir, *extra, seed=None, wait=True):
    from kit.daemon import Daemon
    seed_args = ("--seed-node", seed) if seed else ()
    return Daemon(data_dir, "--genesis-json", genesis, *seed_args, "--plugins",
                  NODEAPI_PLUGINS, *extra).start(wait=wait)


def reference_node(genesis, data_dir, *extra, plugins=REFERENCE_PLUGINS):
    from kit.reference import ReferenceNode
    return ReferenceNode(data_dir, plugins=plugins, produce=False,
                         extra=["--genesis-json", genesis, *extra])


def nodeapi_call(daemon):
    return lambda method, *params: daemon.call(method, *params, api="database", timeout=30)


def timed_catch_up(genesis, tmp, name, reference, head, *extra):
    """A nodeapi node started empty following ``reference``: (daemon,
    seconds from its start until it serves ``head``)."""
    started = time.perf_counter()
    daemon = start_nodeapi(genesis, os.path.join(tmp, name), *extra, seed=reference.ws_url)
    done = wait_serving(nodeapi_call(daemon), head, daemon.log)
    return daemon, done - started


def timed_reference_start(genesis, data_dir, head, *extra):
    """The reference started on ``data_dir`` (a copy of the maker's):
    (node, seconds until it serves ``head``)."""
    node = reference_node(genesis, data_dir, *extra)
    started = time.perf_counter()
    node.start(timeout=3600)
    done = wait_serving(node.call, head, node.log)
    return node, done - started


def timed_nodeapi_start(genesis, data_dir, head, *extra):
    started = time.perf_counter()
    daemon = start_nodeapi(genesis, data_dir, *extra, wait=False)
    daemon.wait_rpc(timeout=3600)
    done = wait_serving(nodeapi_call(daemon), head, daemon.log)
    return daemon, done - started


def reference_replay_seconds(log: str):
    """The reference's own replay time from its log ("Done reindexing,
    elapsed time: S sec"), or None."""
    found = re.findall(r"Done reindexing, elapsed time: ([0-9.]+) sec", log)
    return float(found[-1]) if found else None


# -- the reads -------------------------------------------------------------------------

def read_calls(reference, gold: str) -> dict:
    """name -> request bytes (JSON-RPC ``call`` by API name)."""
    accounts = reference.call("get_full_accounts", ["init0", "init1"], False)
    ids = [o["id"] for _name, full in accounts for o in full["limit_orders"]][:100]
    assert len(ids) == 100, len(ids)

    def call(api, method, params):
        return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "call",
                           "params": [api, method, params]}, separators=(",", ":")).encode()

    return {
        "get_dynamic_global_properties": call("database", "get_dynamic_global_properties", []),
        "get_full_accounts": call("database", "get_full_accounts", [["init0"], False]),
        "get_order_book": call("database", "get_order_book", ["TEST", "GOLD", 50]),
        "get_objects(100)": call("database", "get_objects", [ids]),
        "get_account_history": call("history", "get_account_history",
                                    ["init0", "1.11.0", 100, "1.11.0"]),
    }


def check_replies(reference, daemon, calls) -> dict:
    """Each call answered without error by both; name -> (nodeapi reply
    bytes, reference reply bytes, same result)."""
    import urllib.request

    sizes = {}
    for name, body in calls.items():
        replies = []
        for port in (daemon.port, reference.rpc_port):
            req = urllib.request.Request(f"http://127.0.0.1:{port}/rpc", data=body,
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=30) as resp:
                raw = resp.read()
            reply = json.loads(raw)
            assert "result" in reply, (name, port, raw[:500])
            replies.append((len(raw), reply["result"]))
        if name == "get_order_book":
            for _size, book in replies:
                assert len(book["bids"]) == 50 == len(book["asks"]), book
        sizes[name] = (replies[0][0], replies[1][0], differences(replies[0][1], replies[1][1]))
    return sizes


def differences(mine, theirs, path="", limit=3) -> list:
    """Up to ``limit`` paths (``.key[3]``) where two JSON values differ."""
    found = []
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in sorted(set(mine) | set(theirs)):
            if len(found) >= limit:
                break
            if key not in mine or key not in theirs:
                found.append(f"{path}.{key}" + (" (nodeapi only)" if key in mine
                                                 else " (reference only)"))
            else:
                found += differences(mine[key], theirs[key], f"{path}.{key}",
                                     limit - len(found))
    elif isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        for i, (a, b) in enumerate(zip(mine, theirs)):
            if len(found) >= limit:
                break
            found += differences(a, b, f"{path}[{i}]", limit - len(found))
    elif mine != theirs:
        found.append(path or "(the result)")
    return found[:limit]


def measure_reads(reference, daemon, calls, args) -> dict:
    """(name, mode) -> {"nodeapi": (rate, cpu), "reference": (rate, cpu)},
    the best of ``args.rounds`` alternating rounds."""
    servers = {"nodeapi": (daemon.port, daemon.proc.pid),
               "reference": (reference.rpc_port, reference.proc.pid)}
    best = {}
    for _ in range(args.rounds):
        for mode in ("ws", "http1", "http"):
            for name, body in calls.items():
                for server, (port, pid) in servers.items():
                    if mode == "http" and server == "reference":
                        continue  # it closes every HTTP connection after one reply
                    rate, cpu = load_phase(mode, port, pid, body, args)
                    slot = best.setdefault((name, mode), {})
                    old = slot.get(server)
                    slot[server] = (max(rate, old[0]) if old else rate,
                                    max(rate / max(cpu, 1e-9), old[1]) if old else
                                    rate / max(cpu, 1e-9),
                                    cpu)
    return best


def keep_alive_rate(best, name) -> float:
    """nodeapi's calls/s of ``name`` over keep-alive HTTP connections."""
    return best[(name, "http")]["nodeapi"][0]


# -- the run -------------------------------------------------------------------------

def run(args) -> list:
    """Every figure; returns the printed lines."""
    tmp = tempfile.mkdtemp(prefix="nodeapi-bench-reference-")
    lines = []

    def out(line):
        print(line, flush=True)
        lines.append(line)

    running = []
    try:
        load = os.getloadavg()
        from kit.reference import ReferenceNode
        genesis = write_genesis(tmp)
        maker = ReferenceNode(os.path.join(tmp, "maker"), produce=False,
                              extra=["--genesis-json", genesis])
        # no witness plugin: only debug_generate_blocks makes blocks (the kit
        # drops debug_witness from a node that does not produce)
        maker.plugins = MAKER_PLUGINS
        running.append(maker.start())
        t0 = time.perf_counter()
        chain = make_chain(Maker(maker), args)
        head, ops = chain["head"], chain["ops"]
        out(f"reference: chain of {head:,} blocks, {ops:,} operations (transfers, 100 book "
            f"orders, fills) made in {time.perf_counter() - t0:.1f} s with "
            f"debug_generate_blocks (issue figure: 100,000 blocks; --blocks scales it); "
            f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")

        # following: nodeapi catching up over RPC, both modes
        fast, fast_s = timed_catch_up(genesis, tmp, "nodeapi-skip", maker, head)
        running.append(fast)
        fast.stop()
        full, full_s = timed_catch_up(genesis, tmp, "nodeapi-force", maker, head, "--force-validate")
        running.append(full)

        # reads: the maker (same plugins as a serving reference, plus the
        # idle debug_witness) and nodeapi holding the same state
        calls = read_calls(maker, chain["gold"])
        sizes = check_replies(maker, full, calls)
        rss_before = (rss_mib(full.proc.pid), rss_mib(maker.proc.pid))
        best = measure_reads(maker, full, calls, args)
        rss_after = (rss_mib(full.proc.pid), rss_mib(maker.proc.pid))
        full.stop()
        maker.stop()

        # the reference's own replay of the same block log, then a plain start
        ref_dir = os.path.join(tmp, "reference")
        shutil.copytree(maker.data_dir, ref_dir)
        replayed, replay_s = timed_reference_start(genesis, ref_dir, head, "--replay-blockchain")
        running.append(replayed)
        ref_log_s = reference_replay_seconds(replayed.log())
        ref_rss_replayed = rss_mib(replayed.proc.pid)
        replayed.stop()
        restarted, ref_start_s = timed_reference_start(genesis, ref_dir, head)
        running.append(restarted)
        ref_rss = rss_mib(restarted.proc.pid)
        restarted.stop()

        # nodeapi: a plain start from its data dir, then its own replay
        node, node_start_s = timed_nodeapi_start(genesis, full.data_dir, head)
        running.append(node)
        node_rss = rss_mib(node.proc.pid)
        node.stop()
        node, node_replay_s = timed_nodeapi_start(genesis, full.data_dir, head, "--replay-blockchain")
        running.append(node)
        node_rss_replayed = rss_mib(node.proc.pid)
        node.stop()
    finally:
        for proc in running:
            proc.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    ref_rate = head / replay_s
    for label, seconds in (("signatures skipped (default)", fast_s),
                           ("--force-validate", full_s)):
        ratio = ref_rate and (head / seconds) / ref_rate
        out(f"following {head:,} blocks: nodeapi catching up over RPC, {label}: "
            f"{head / seconds:,.0f} blocks/s {ops / seconds:,.0f} ops/s ({seconds:.1f} s); "
            f"reference --replay-blockchain {ref_rate:,.0f} blocks/s {ops / replay_s:,.0f} "
            f"ops/s ({replay_s:.1f} s to serve"
            + (f", {ref_log_s:.1f} s replaying by its log" if ref_log_s is not None else "")
            + f"); ratio {ratio:.2f} (goal >= {FOLLOW_GOAL}: "
            f"{'met' if ratio >= FOLLOW_GOAL else 'NOT met'})")
    out(f"replay: nodeapi --replay-blockchain of its block log {head / node_replay_s:,.0f} "
        f"blocks/s ({node_replay_s:.1f} s to serve, RSS {node_rss_replayed:.0f} MiB); "
        f"reference {ref_rate:,.0f} blocks/s (RSS {ref_rss_replayed:.0f} MiB); "
        f"ratio {(head / node_replay_s) / ref_rate:.2f}")
    verdicts = []
    for (name, mode), both in best.items():
        if mode == "http":  # nodeapi only: the reference closes each HTTP connection
            continue
        node_rate, node_per_cpu, node_cpu = both["nodeapi"]
        ref_rate_r, ref_per_cpu, ref_cpu = both["reference"]
        node_size, ref_size, differ = sizes[name]
        if ref_rate_r and ref_per_cpu:
            ratio, per_cpu = node_rate / ref_rate_r, node_per_cpu / ref_per_cpu
            verdicts.append(ratio)
            ratios = f"ratio {ratio:.2f}, per CPU-second {per_cpu:.2f}"
        else:  # a window too short for a single reply (tiny runs on a busy machine)
            ratios = "ratio n/a (no reply from the reference in the window)"
        kind = ("WebSocket pipelined" if mode == "ws" else "HTTP, a connection per request")
        extra = (f"; nodeapi over keep-alive {keep_alive_rate(best, name):,.0f} calls/s"
                 if mode == "http1" else "")
        out(f"reads {kind} {name}: "
            f"nodeapi {node_rate:,.0f} calls/s (CPU {node_cpu:.0%}, {node_size} B) "
            f"reference {ref_rate_r:,.0f} calls/s (CPU {ref_cpu:.0%}, {ref_size} B"
            + (f"; results differ at {', '.join(differ)}" if differ else "")
            + f"); {ratios}{extra}")
    low = min(verdicts, default=0.0)
    out(f"reads: lowest ratio {low:.2f} (goal >= {READ_GOAL} on every call: "
        f"{'met' if low >= READ_GOAL else 'NOT met'}; floor {READ_FLOOR}: "
        f"{'met' if low >= READ_FLOOR else 'NOT met'}); best of {args.rounds} rounds of "
        f"{args.seconds:g} s, {args.ws_conns} WebSocket connections x {args.window} in "
        f"flight, {args.http_conns} HTTP connections")
    out(f"memory: RSS holding the {head:,}-block state (account_history, market_history): "
        f"nodeapi {node_rss:.0f} MiB started from its data dir, {rss_before[0]:.0f} MiB "
        f"after catching up, {rss_after[0]:.0f} MiB after the reads; reference "
        f"{ref_rss:.0f} MiB started (+api_helper_indexes), {rss_before[1]:.0f} MiB having "
        f"made the chain, {rss_after[1]:.0f} MiB after the reads; ratio started "
        f"{node_rss / ref_rss:.2f}")
    out(f"startup: serving the head from a data dir of that chain: nodeapi {node_start_s:.2f} s "
        f"(from its checkpoint), reference {ref_start_s:.2f} s; ratio "
        f"{node_start_s / ref_start_s:.2f}")
    if args.today:
        for script, extra in TODAY:
            done = subprocess.run([sys.executable, os.path.join(HERE, script), *extra],
                                  capture_output=True, text=True, timeout=1800,
                                  env=dict(os.environ, PYTHONPATH=os.path.join(HERE, "..")))
            last = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
            out(f"today's goals, bench/{' '.join((script,) + extra)}: " + (
                last if done.returncode == 0 else f"FAILED: {done.stderr[-500:]}"))
    end = os.getloadavg()
    out(f"load average at the end {end[0]:.2f} {end[1]:.2f} {end[2]:.2f} (2 shared cores: "
        f"compare the ratios, measured in the same run)")
    return lines


#: the scripts of today's goals (``--today``) and their arguments
TODAY = (("chain.py", ()), ("rpc.py", ("--rounds", "1", "--seconds", "3")),
         ("notices.py", ("--blocks", "20")))


def parse_args(argv):
    parser = common.parser(__doc__)
    parser.add_argument("--blocks", type=int, default=20000,
                        help="blocks of the chain (the issue's figure: 100000)")
    parser.add_argument("--tx-every", type=int, default=10,
                        help="one block in this many carries a transaction")
    parser.add_argument("--transfers", type=int, default=20,
                        help="transfers in each such transaction (plus two filling orders)")
    parser.add_argument("--seconds", type=float, default=3.0, help="measured window per phase")
    parser.add_argument("--warm-up", type=float, default=1.0,
                        help="seconds of load before each measured window")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of the read phases")
    parser.add_argument("--http-conns", type=int, default=16)
    parser.add_argument("--ws-conns", type=int, default=4)
    parser.add_argument("--window", type=int, default=64, help="WebSocket calls in flight")
    parser.add_argument("--today", action="store_true",
                        help="also run bench/chain.py, rpc.py and notices.py (today's goals)")
    args = parser.parse_args(argv)
    if args.blocks < 10 or args.tx_every < 1 or args.transfers < 0:
        parser.error("--blocks >= 10, --tx-every >= 1, --transfers >= 0")
    return args


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        mode, port, seconds, conns, window, request, warm_up = sys.argv[2:9]
        asyncio.run(client(mode, int(port), float(seconds), int(conns), int(window),
                           request.encode(), float(warm_up)))
    else:
        import signal

        def stop(signum, _frame):
            raise SystemExit(f"stopped by signal {signum}")  # the nodes are stopped

        signal.signal(signal.SIGTERM, stop)
        run(parse_args(sys.argv[1:]))
