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
6. History into the search database: the reference's
   ``--replay-blockchain`` of that chain with only its ``elasticsearch``
   plugin, then nodeapi's with only ``searchdb``, each into the same null
   sink answering as Elasticsearch 7 (a child process counting documents:
   the reference reads osmem-server's 3.8.0 as an Elasticsearch 6), bulks
   of 10,000 lines on both: documents/s from the process start to the last
   bulk (the reference sends only full bulks while replaying, so it holds
   back the last few thousand).
7. Notices: each node makes a chain of its own with its debug API (init0
   registers ``--subscribers`` accounts), ``--subscribers`` wallets in a
   child process subscribe as wallets do (``set_subscribe_callback``, then
   ``get_full_accounts([name], true)``), then each measured block carries a
   transfer to every one of them (transactions of 40 broadcast before it):
   p50 / p99 from asking for the block to the last notice any wallet read
   for it.  Both nodes send every wallet whose account a block touches
   every object the block changed (graphene's ``is_impacted_account`` of
   the whole batch): about 600 kB per wallet and block, so nodeapi runs
   with ``--max-unsent-bytes`` 2 GiB here.  Each node produces its own
   blocks, rather than nodeapi
   following the reference, so that each figure is the node's own fan-out
   and not the reference's plus a hop.  The reference needs over a minute
   per block with 1,000 such wallets (``--notice-blocks-reference``, 1 by
   default; nodeapi ``--notice-blocks``, 20); ``--subscribers 0`` leaves the
   figure out.

With ``--today``, the scripts behind today's goals run after it in child
processes and their lines are printed too: ``bench/chain.py`` (replay
>= 30,000 empty and >= 20,000 transfer blocks/s on a quiet machine; the
script prints its own floor), ``bench/rpc.py`` (>= 0.85 of the bare
servers) and ``bench/notices.py`` (1,000 subscribers, p99 <= 100 ms).

Then the goals of the issue (>= 1.0 on every read, no worse than 0.8; the
catch-up >= 0.5 of the reference's replay; the notices' p99 <= the
reference's; documents/s >= the reference's) with met / NOT met.

Before the figures, nodeapi's bytecode is compiled once, as an installed
package has it (:func:`compile_bytecode`; ``--no-compile`` leaves every
start compiling the sources where ``PYTHONDONTWRITEBYTECODE`` is set).

Run: PYTHONPATH=. python bench/reference.py [--blocks N] [--tx-every K]
[--transfers T] [--seconds S] [--rounds R] [--subscribers N]
[--notice-blocks B] [--notice-blocks-reference B] [--no-compile] [--today]
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
#: goals of the notices (p99 nodeapi / reference) and the search database (docs/s)
NOTICE_GOAL, SEARCHDB_GOAL = 1.0, 1.0
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


# -- the subscribers of the notices figure (child process) ---------------------

def client_frame(payload: bytes, opcode: int = 1) -> bytes:
    """One client frame (FIN, ``opcode``: 1 text, 0xA pong) masked with a
    fixed key."""
    from rpc import masked_frame as text_frame
    frame = text_frame(payload)
    return bytes([0x80 | opcode]) + frame[1:]


class Wallet:
    """One subscriber over a plain socket: upgraded, then subscribed as a
    wallet is (``set_subscribe_callback(1, false)``, then
    ``get_full_accounts([name], true)``); :meth:`feed` notes the monotonic
    time of every notice it reads in :attr:`times`."""

    NOTICE = b'{"method":"notice"'

    def __init__(self, sock, name: str) -> None:
        self.sock, self.times = sock, []
        self.chunks, self.have, self.need = [], 0, 2  # bytes read, their count, needed
        self.blocking = True  # False once read through epoll
        calls = [b'{"id":1,"method":"call","params":["database","set_subscribe_callback",'
                 b'[1,false]]}',
                 b'{"id":2,"method":"call","params":["database","get_full_accounts",'
                 b'[["%s"],true]]}' % name.encode()]
        self.frames = b"".join(client_frame(c) for c in calls)
        self.expect = len(calls)

    def feed(self, data: bytes, now: float) -> None:
        """Take ``data`` read at ``now``; frames are parsed once complete
        (the bytes of a frame still arriving are only collected: a notice of
        several hundred kB comes in many reads)."""
        self.chunks.append(data)
        self.have += len(data)
        if self.have < self.need:
            return
        buf = b"".join(self.chunks)
        pos, size = 0, len(buf)
        self.need = 2
        while size - pos >= 2:
            n = buf[pos + 1] & 0x7F
            start = pos + 2
            if n == 126:
                if size - pos < 4:
                    self.need = 4
                    break
                n, start = int.from_bytes(buf[pos + 2:pos + 4], "big"), pos + 4
            elif n == 127:
                if size - pos < 10:
                    self.need = 10
                    break
                n, start = int.from_bytes(buf[pos + 2:pos + 10], "big"), pos + 10
            if size < start + n:
                self.need = start + n - pos
                break
            opcode = buf[pos] & 0x0F
            if opcode == 8:
                raise SystemExit(f"server closed the WebSocket: {buf[start:start + n]!r}")
            if opcode == 9:  # a ping: the pong a browser sends (servers drop the silent)
                self.sock.setblocking(True)
                self.sock.sendall(client_frame(buf[start:start + n], opcode=0xA))
                self.sock.setblocking(self.blocking)
            elif opcode in (1, 0):
                head = buf[start:start + min(n, 40)]
                if head.startswith(self.NOTICE) or b'"method":"notice"' in head:
                    self.times.append(now)
                elif b'"error"' in buf[start:start + n]:
                    raise SystemExit(f"call failed: {buf[start:start + 300]!r}")
                else:
                    self.expect -= 1
            pos = start + n
        rest = buf[pos:]
        self.chunks, self.have = ([rest], len(rest)) if rest else ([], 0)


def wallets(port: int, names: list) -> None:
    """Connect one :class:`Wallet` per name to ``port``; print ``ready``
    once all are subscribed; read notices (epoll) until a line on stdin;
    answer ``count T`` lines on stdin with ``N LATEST`` (the wallets that
    read a notice at or after monotonic ``T``, the latest notice time); at
    any other line print each wallet's notice times (JSON, monotonic
    seconds) and return."""
    import base64
    import select
    import socket

    subs = []
    for name in names:
        sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16))
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
                     b"Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                     b"Sec-WebSocket-Version: 13\r\n\r\n" % (port, key))
        subs.append(Wallet(sock, name))
    for sub in subs:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sub.sock.recv(65536)
            if not chunk:
                raise SystemExit(f"connection closed during the upgrade: {head[:200]!r}")
            head += chunk
        if not head.startswith(b"HTTP/1.1 101"):
            raise SystemExit(f"WebSocket upgrade refused: {head[:200]!r}")
        sub.feed(head[head.index(b"\r\n\r\n") + 4:], 0.0)
        sub.sock.sendall(sub.frames)
    for sub in subs:
        while sub.expect > 0:
            sub.feed(sub.sock.recv(262144), 0.0)
        sub.times.clear()  # notices before the measured blocks
    poller = select.epoll()
    by_fd = {}
    for sub in subs:
        sub.sock.setblocking(False)
        sub.blocking = False
        by_fd[sub.sock.fileno()] = sub
        poller.register(sub.sock.fileno(), select.EPOLLIN)
    stdin = sys.stdin.fileno()
    poller.register(stdin, select.EPOLLIN)
    print("ready", flush=True)
    monotonic = time.monotonic
    lines = b""
    running = True
    while running:
        for fd, _ in poller.poll():
            if fd == stdin:
                lines += os.read(stdin, 4096)
                while b"\n" in lines:
                    line, lines = lines.split(b"\n", 1)
                    if line.startswith(b"count "):  # subscribers with a notice since T
                        since = float(line.split()[1])
                        seen = sum(1 for sub in subs if sub.times and sub.times[-1] >= since)
                        latest = max((sub.times[-1] for sub in subs if sub.times), default=0.0)
                        print(f"{seen} {latest!r}", flush=True)
                    else:
                        running = False
                continue
            sub = by_fd[fd]
            data = sub.sock.recv(262144)
            if not data:
                raise SystemExit("the server closed a subscriber's connection")
            sub.feed(data, monotonic())
    print(json.dumps([sub.times for sub in subs]), flush=True)


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

    def __init__(self, node, timeout: float = 30):
        from kit.keys import DEV_WIF
        self.node, self.wif, self.timeout = node, DEV_WIF, timeout  # seconds per call
        self.chain_id = node.call("get_chain_id", timeout=timeout)
        self.ops = 0  # operations broadcast

    def broadcast(self, ops: list) -> None:
        from nodeapi.protocol.transaction import sign_transaction

        fees = self.node.call("get_required_fees", ops, CORE, timeout=self.timeout)
        ops = [[t, dict(d, fee=fee)] for (t, d), fee in zip(ops, fees)]
        props = self.node.call("get_dynamic_global_properties", timeout=self.timeout)
        head_id = bytes.fromhex(props["head_block_id"])
        when = time.mktime(time.strptime(props["time"], "%Y-%m-%dT%H:%M:%S")) - time.timezone
        trx = {"ref_block_num": props["head_block_number"] & 0xFFFF,
               "ref_block_prefix": struct.unpack_from("<I", head_id, 4)[0],
               "expiration": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when + 3600)),
               "operations": ops, "extensions": []}
        trx = sign_transaction(trx, self.chain_id, [self.wif], "TEST")
        self.node.call("broadcast_transaction", trx, api="network_broadcast",
                       timeout=self.timeout)
        self.ops += len(ops)

    def blocks(self, count: int) -> None:
        if count > 0:
            self.node.call("debug_generate_blocks", self.wif, count, api="debug",
                           timeout=max(600, self.timeout))


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


# -- the notices figure -------------------------------------------------------------

#: nodeapi's ``--max-unsent-bytes`` in the notices figure: every wallet
#: whose account a block touches receives every object of the block's batch
#: (graphene's rule, both nodes), about 600 kB per wallet and block with
#: 1,000 wallets - 600 MB a block, past the default bound of 64 MiB
NOTICE_UNSENT = (2 << 30) - 1

#: account_create operations per transaction and transfers per transaction
#: (graphene's maximum_transaction_size of the genesis is 2,048 bytes)
CREATES_PER_TRX, TRANSFERS_PER_TRX = 8, 40


def subscribers_chain(maker: Maker, count: int) -> list:
    """init0 claims the genesis balance and registers ``count`` accounts
    (``wallet-N``, the development key); their names."""
    from kit.chain import account_options, key_auth
    from kit.keys import DEV_PUB

    balance = maker.node.call("get_objects", ["1.15.0"], api="database")[0]
    maker.broadcast([[37, {"fee": _amount(0), "deposit_to_account": "1.2.6",
                           "balance_to_claim": "1.15.0", "balance_owner_key": DEV_PUB,
                           "total_claimed": balance["balance"]}]])
    maker.blocks(1)
    names = [f"wallet-{i}" for i in range(count)]
    for at in range(0, count, CREATES_PER_TRX):
        maker.broadcast([[5, {"fee": _amount(0), "registrar": "1.2.6", "referrer": "1.2.6",
                              "referrer_percent": 0, "name": name, "owner": key_auth(DEV_PUB),
                              "active": key_auth(DEV_PUB), "options": account_options(DEV_PUB),
                              "extensions": {}}] for name in names[at:at + CREATES_PER_TRX]])
        if (at // CREATES_PER_TRX) % 50 == 49:
            maker.blocks(1)
    maker.blocks(1)
    return names


def account_ids(node, names: list) -> list:
    """The account ids of ``names`` (``lookup_account_names``, 100 at a time)."""
    found = []
    for at in range(0, len(names), 100):
        found += [a["id"] for a in node.call("lookup_account_names", names[at:at + 100],
                                             api="database")]
    return found


def block_latencies(starts: list, times: list, end: float) -> tuple:
    """Per block (made at monotonic ``starts[k]``): seconds from its start
    to the last notice any subscriber read before the next block's start
    (``end`` after the last); and how many subscribers read none for it.
    ``times``: each subscriber's notice times."""
    latencies, silent = [], 0
    bounds = list(starts[1:]) + [end]
    for start, stop in zip(starts, bounds):
        last = None
        for seen in times:
            inside = [t for t in seen if start <= t < stop]
            if not inside:
                silent += 1
            elif last is None or inside[-1] > last:
                last = inside[-1]
        latencies.append(last - start if last is not None else float("inf"))
    return latencies, silent


def measure_notices(node, pid: int, port: int, blocks: int, args) -> dict:
    """Figure 2 on one producing node (``node``: ``.call`` with the debug
    API): ``--subscribers`` wallets subscribed from a child process, then
    ``blocks`` blocks each carrying a transfer to every one of them (in
    transactions broadcast before the block); after each block, the wait
    until every wallet read a notice since the block was asked for (at most
    ``--notice-timeout`` s) and then ``--notice-gap`` s without a new one.
    Returns {"p50", "p99" (seconds), "silent", "notices" (per block),
    "cpu" (the node's CPU seconds per block), "blocks"}."""
    maker = Maker(node, timeout=args.notice_timeout)
    names = subscribers_chain(maker, args.subscribers)
    ids = account_ids(node, names)
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--wallets", str(port),
                              json.dumps(names)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def count(since):
        try:
            child.stdin.write(f"count {since!r}\n")
            child.stdin.flush()
            seen, latest = child.stdout.readline().split()
        except (OSError, ValueError):
            child.kill()
            raise RuntimeError(f"subscribers failed: {child.stderr.read()[-2000:]}") from None
        return int(seen), float(latest)

    try:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError(f"subscribers failed: {child.stderr.read()[-2000:]}")
        starts, cpu = [], 0.0
        for n in range(blocks):
            for at in range(0, len(ids), TRANSFERS_PER_TRX):
                maker.broadcast([_transfer("1.2.6", to, 1 + n, CORE) for to in
                                 ids[at:at + TRANSFERS_PER_TRX]])
            time.sleep(args.notice_gap)  # the pending transactions' notices go first
            before = cpu_seconds(pid)
            starts.append(time.monotonic())
            maker.blocks(1)
            deadline = starts[-1] + args.notice_timeout
            while count(starts[-1])[0] < len(ids) and time.monotonic() < deadline:
                time.sleep(0.02)
            while True:  # then quiet for notice_gap
                latest = count(starts[-1])[1]
                if time.monotonic() - latest >= args.notice_gap or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            cpu += cpu_seconds(pid) - before
        end = time.monotonic()
        out, err = child.communicate("stop\n", timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    if child.returncode:
        raise RuntimeError(f"subscribers failed: {err[-2000:]}")
    times = json.loads(out.strip().splitlines()[-1])
    latencies, silent = block_latencies(starts, times, end)
    return {"p50": percentile(latencies, 0.5), "p99": percentile(latencies, 0.99),
            "silent": silent, "notices": sum(map(len, times)) / len(starts),
            "cpu": cpu / len(starts), "blocks": len(starts)}


def percentile(values: list, p: float) -> float:
    """The ``p`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p * len(ordered))) - 1))]


class DaemonCalls:
    """A nodeapi :class:`~kit.daemon.Daemon` called as the reference is
    (``call(method, *params, api=..., timeout=...)``; ``database`` is the
    method called by name)."""

    def __init__(self, daemon) -> None:
        self.daemon = daemon

    def call(self, method, *params, api="database", timeout=30):
        return self.daemon.call(method, *params, api=None if api == "database" else api,
                                timeout=timeout)


def notices_figure(tmp, genesis, args) -> dict:
    """Figure 2, each node producing its own blocks (debug_generate_blocks)
    so that each figure is its own fan-out: "reference" and "nodeapi" ->
    :func:`measure_notices`'s dict."""
    from kit.daemon import Daemon
    from kit.reference import API_ACCESS, ReferenceNode

    found = {}
    ref = ReferenceNode(os.path.join(tmp, "notices-reference"), produce=False,
                        extra=["--genesis-json", genesis])
    ref.plugins = MAKER_PLUGINS
    ref.start()
    try:
        found["reference"] = measure_notices(ref, ref.proc.pid, ref.rpc_port,
                                             args.notice_blocks_reference, args)
    finally:
        ref.stop()
    access = os.path.join(tmp, "notices-access.json")
    with open(access, "w") as f:
        json.dump(API_ACCESS, f)
    node = Daemon(os.path.join(tmp, "notices-nodeapi"), "--genesis-json", genesis,
                  "--api-access", access, "--plugins", NODEAPI_PLUGINS,
                  "--max-connections-per-ip", "0", "--max-unsent-bytes", str(NOTICE_UNSENT))
    node.start()
    try:
        found["nodeapi"] = measure_notices(DaemonCalls(node), node.proc.pid, node.port,
                                           args.notice_blocks, args)
    finally:
        node.stop()
    return found


# -- the search database figure -------------------------------------------------------

def sink(port_file: str) -> None:
    """The null search database (child process): a loopback HTTP server
    answering as Elasticsearch 7 (``GET /`` 7.17.0, ``/_nodes``, templates
    absent then installed, empty ``_search`` and ``_count`` answers, every
    ``_bulk`` action created) that keeps nothing but counts: ``GET
    /_bench`` answers {"docs", "bulks", "first", "last"} (documents
    received, bulks, the monotonic times of the first and last bulk) and
    ``POST /_bench/reset`` zeroes them.  Writes its port to ``port_file``;
    serves until SIGTERM.  Both nodes write to it in turn (the reference's
    plugin reads osmem-server's 3.8.0 as an Elasticsearch 6)."""
    import orjson
    from twisted.internet import reactor
    from twisted.web import resource, server

    from kit.es_capture import DELETED, NODES, VERSION

    stats = {"docs": 0, "bulks": 0, "first": None, "last": None}
    empty = orjson.dumps({"took": 0, "timed_out": False,
                          "hits": {"total": {"value": 0, "relation": "eq"}, "max_score": None,
                                   "hits": []},
                          "aggregations": {"top": {"value": None}}})

    def bulk(body: bytes) -> bytes:
        items = []
        lines = [line for line in body.split(b"\n") if line.strip()]
        at = 0
        while at < len(lines):
            [(kind, meta)] = orjson.loads(lines[at]).items()
            at += 1 if kind == "delete" else 2
            items.append({kind: {"_index": meta.get("_index"), "_type": "_doc",
                                 "_id": meta.get("_id"), "_version": 1,
                                 "result": "deleted" if kind == "delete" else "created",
                                 "_seq_no": at, "_primary_term": 1,
                                 "status": 200 if kind == "delete" else 201}})
        now = time.monotonic()
        stats["docs"] += sum(1 for item in items if "delete" not in item)
        stats["bulks"] += 1
        stats["first"] = stats["first"] or now
        stats["last"] = now
        return orjson.dumps({"took": 1, "errors": False, "items": items})

    class Root(resource.Resource):
        isLeaf = True

        def render(self, request):
            method, path = request.method, request.path
            request.setHeader(b"content-type", b"application/json; charset=UTF-8")
            if path == b"/_bulk" and method in (b"POST", b"PUT"):
                return bulk(request.content.read())
            if path == b"/_bench":
                return orjson.dumps(stats)
            if path == b"/_bench/reset":
                stats.update(docs=0, bulks=0, first=None, last=None)
                return b"{}"
            if path == b"/":
                return orjson.dumps(VERSION)
            if path == b"/_nodes":
                return orjson.dumps(NODES)
            if path.endswith(b"/_search"):
                return empty
            if path.endswith(b"/_count"):
                return b'{"count":0}'
            if path.endswith(b"/_delete_by_query"):
                return orjson.dumps(DELETED)
            if b"_template/" in path and method == b"GET":
                request.setResponseCode(404)
                return b"{}"
            return b'{"acknowledged":true}'

    site = server.Site(Root())
    site.noisy = False
    port = reactor.listenTCP(0, site, interface="127.0.0.1")
    with open(port_file + ".tmp", "w") as f:
        f.write(str(port.getHost().port))
    os.replace(port_file + ".tmp", port_file)
    reactor.run()


class Sink:
    """The :func:`sink` in a child process: ``.url``, ``.stats()``,
    ``.reset()``, ``.stop()``."""

    def __init__(self, directory: str) -> None:
        os.makedirs(directory, exist_ok=True)
        port_file = os.path.join(directory, "port")
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--sink",
                                      port_file], stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not os.path.exists(port_file):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the search database sink did not start")
            time.sleep(0.05)
        with open(port_file) as f:
            self.url = f"http://127.0.0.1:{int(f.read())}/"

    def _get(self, path: str, data=None) -> dict:
        import urllib.request
        with urllib.request.urlopen(urllib.request.Request(self.url + path, data=data),
                                    timeout=30) as resp:
            return json.loads(resp.read())

    def stats(self) -> dict:
        return self._get("_bench")

    def reset(self) -> None:
        self._get("_bench/reset", b"")

    def wait_quiet(self, quiet: float = 2.0, timeout: float = 600.0) -> dict:
        """The stats once no bulk came for ``quiet`` seconds (at most
        ``timeout``), counted from the last bulk or, before the first, from
        this call: a chain shorter than one bulk gets none from the
        reference, which sends only full bulks while replaying."""
        called = time.monotonic()
        deadline = called + timeout
        while True:
            now = self.stats()
            last = called if now["last"] is None else now["last"]
            if time.monotonic() - last >= quiet or time.monotonic() > deadline:
                return now
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


#: lines per bulk while replaying, both nodes (their defaults are 10,000)
SEARCHDB_BULK = 10000


def searchdb_figure(tmp, genesis, maker_dir: str, nodeapi_dir: str, head: int) -> dict:
    """Figure 4: the reference's ``--replay-blockchain`` with its
    ``elasticsearch`` plugin alone, then nodeapi's ``--replay-blockchain``
    with ``searchdb`` alone, of the same chain, into one :class:`Sink`;
    "reference" / "nodeapi" -> {"docs", "seconds" (from the process start to
    the last bulk), "bulks"}."""
    found = {}
    db = Sink(os.path.join(tmp, "sink"))
    try:
        ref_dir = os.path.join(tmp, "searchdb-reference")
        shutil.copytree(maker_dir, ref_dir)
        started = time.monotonic()

        def attempt():  # a start retried on a taken port replays again
            nonlocal started
            db.reset()
            started = time.monotonic()

        node = reference_node(genesis, ref_dir, "--replay-blockchain",
                              "--elasticsearch-node-url", db.url,
                              "--elasticsearch-bulk-replay", str(SEARCHDB_BULK),
                              "--elasticsearch-bulk-sync", str(SEARCHDB_BULK),
                              "--ignore-api-helper-indexes-warning",
                              plugins=("elasticsearch",))
        try:
            node.start(timeout=3600, before_attempt=attempt)
            wait_serving(node.call, head, node.log)
            done = db.wait_quiet()
        finally:
            node.stop()
        found["reference"] = {"docs": done["docs"], "bulks": done["bulks"],
                              "seconds": (done["last"] or started) - started}
        db.reset()
        mine = os.path.join(tmp, "searchdb-nodeapi")
        shutil.copytree(nodeapi_dir, mine)
        started = time.monotonic()
        daemon = start_nodeapi(genesis, mine, "--replay-blockchain",
                               "--searchdb-node-url", db.url,
                               "--searchdb-bulk-replay", str(SEARCHDB_BULK), wait=False,
                               plugins="searchdb")
        try:
            daemon.wait_rpc(timeout=3600)
            wait_serving(nodeapi_call(daemon), head, daemon.log)
            done = db.wait_quiet()
        finally:
            daemon.stop()
        found["nodeapi"] = {"docs": done["docs"], "bulks": done["bulks"],
                            "seconds": (done["last"] or started) - started}
    finally:
        db.stop()
    return found


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


def start_nodeapi(genesis, data_dir, *extra, seed=None, wait=True, plugins=NODEAPI_PLUGINS):
    from kit.daemon import Daemon
    seed_args = ("--seed-node", seed) if seed else ()
    return Daemon(data_dir, "--genesis-json", genesis, *seed_args, "--plugins",
                  plugins, *extra).start(wait=wait)


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

def compile_bytecode() -> str:
    """Compile the checkout's ``nodeapi`` package and its twistd plugin to
    bytecode once (``python -m compileall``; the ``__pycache__``
    directories are ignored by git), as installing the package does (pip
    compiles every module), so each nodeapi start in the figures reads its
    bytecode as an installed node does.  Without it, where
    ``PYTHONDONTWRITEBYTECODE`` is set (the development machine), no start
    writes bytecode and every start compiles nodeapi's modules again
    (about half a second of a start on 2 cores); ``--no-compile`` measures
    that.  Returns the line to print."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "compileall", "-q", "nodeapi", "twisted"],
                   cwd=common.ROOT, check=True, stdout=subprocess.DEVNULL)
    return (f"nodeapi: bytecode compiled in {time.perf_counter() - started:.1f} s, as an "
            "installed package has it (--no-compile: every start compiles the sources)")


def run(args) -> list:
    """Every figure; returns the printed lines."""
    tmp = tempfile.mkdtemp(prefix="nodeapi-bench-reference-")
    lines = []

    def out(line):
        print(line, flush=True)
        lines.append(line)

    running = []
    try:
        if args.compile:
            out(compile_bytecode())
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

        # history into the search database, then the notices (a chain of their own)
        searchdb = searchdb_figure(tmp, genesis, maker.data_dir, full.data_dir, head)
        notices = notices_figure(tmp, genesis, args) if args.subscribers else None
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
    if notices is not None:
        mine, theirs = notices["nodeapi"], notices["reference"]
        ratio = mine["p99"] / theirs["p99"]
        out(f"notices: {args.subscribers:,} wallets (distinct accounts, each "
            f"set_subscribe_callback + get_full_accounts subscribe=true), a transfer to each "
            f"per block, each node producing its own blocks (debug_generate_blocks): block -> "
            f"last notice nodeapi p50 {mine['p50'] * 1000:,.0f} ms p99 "
            f"{mine['p99'] * 1000:,.0f} ms ({mine['blocks']} blocks, "
            f"{mine['notices']:,.0f} notices and {mine['cpu']:.2f} CPU-s per block"
            + (f", {mine['silent']} wallet-blocks without a notice" if mine["silent"] else "")
            + f"); reference p50 {theirs['p50'] * 1000:,.0f} ms p99 "
            f"{theirs['p99'] * 1000:,.0f} ms ({theirs['blocks']} blocks, "
            f"{theirs['notices']:,.0f} notices and {theirs['cpu']:.2f} CPU-s per block"
            + (f", {theirs['silent']} wallet-blocks without a notice" if theirs["silent"] else "")
            + f"); ratio p99 {ratio:.3f} (goal <= {NOTICE_GOAL}: "
            f"{'met' if ratio <= NOTICE_GOAL else 'NOT met'})")
    mine, theirs = searchdb["nodeapi"], searchdb["reference"]
    mine_rate = mine["docs"] / mine["seconds"] if mine["seconds"] > 0 else 0.0
    theirs_rate = theirs["docs"] / theirs["seconds"] if theirs["seconds"] > 0 else 0.0
    ratio = mine_rate / theirs_rate if theirs_rate else 0.0
    out(f"history into the search database (each --replay-blockchain of the {head:,} blocks "
        f"with only its plugin, bulks of {SEARCHDB_BULK:,} lines, into one null sink answering "
        f"as Elasticsearch 7; from the process start to the last bulk): nodeapi searchdb "
        f"{mine_rate:,.0f} docs/s ({mine['docs']:,} documents in {mine['seconds']:.1f} s), "
        f"reference elasticsearch plugin {theirs_rate:,.0f} docs/s ({theirs['docs']:,} in "
        f"{theirs['seconds']:.1f} s: it sends only full bulks while replaying); ratio "
        f"{ratio:.2f} (goal >= {SEARCHDB_GOAL}: {'met' if ratio >= SEARCHDB_GOAL else 'NOT met'})")
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
    parser.add_argument("--subscribers", type=int, default=1000,
                        help="notices: subscribed wallets (distinct accounts)")
    parser.add_argument("--notice-blocks", type=int, default=20,
                        help="notices: measured blocks (a transfer to every wallet in each)")
    parser.add_argument("--notice-blocks-reference", type=int, default=1,
                        help="notices: measured blocks on the reference (each takes "
                             "it minutes with 1,000 subscribers)")
    parser.add_argument("--notice-gap", type=float, default=0.5,
                        help="notices: seconds between broadcasting and the block, and "
                             "without a notice after it")
    parser.add_argument("--notice-timeout", type=float, default=900.0,
                        help="notices: the longest wait for a block's notices (and for "
                             "a call while a node sends them)")
    parser.add_argument("--no-compile", dest="compile", action="store_false",
                        help="leave nodeapi's bytecode uncompiled (each start compiles the "
                             "sources where PYTHONDONTWRITEBYTECODE is set)")
    parser.add_argument("--today", action="store_true",
                        help="also run bench/chain.py, rpc.py and notices.py (today's goals)")
    args = parser.parse_args(argv)
    if args.blocks < 10 or args.tx_every < 1 or args.transfers < 0:
        parser.error("--blocks >= 10, --tx-every >= 1, --transfers >= 0")
    if args.subscribers < 0 or args.notice_blocks < 1 or args.notice_blocks_reference < 1:
        parser.error("--subscribers >= 0, --notice-blocks >= 1, --notice-blocks-reference >= 1")
    return args


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--sink":
        sink(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] == "--wallets":
        wallets(int(sys.argv[2]), json.loads(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--client":
        mode, port, seconds, conns, window, request, warm_up = sys.argv[2:9]
        asyncio.run(client(mode, int(port), float(seconds), int(conns), int(window),
                           request.encode(), float(warm_up)))
    else:
        import signal

        def stop(signum, _frame):
            raise SystemExit(f"stopped by signal {signum}")  # the nodes are stopped

        signal.signal(signal.SIGTERM, stop)
        run(parse_args(sys.argv[1:]))
