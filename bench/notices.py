"""Notices to many WebSocket subscribers: the time from a block's
application to the last subscriber's notice, and the node's CPU per notice,
against a bare Autobahn server sending the same bytes (same run).

This process serves, in one reactor:

1. the nodeapi RPC site (``nodeapi.rpc.site.rpc_site``, default access) of a
   chain built like bench/rpc.py's (:func:`rpc.build_market`: init0 holds the
   genesis balance, GOLD exists, a TEST/GOLD book of 40 orders);
2. a bare Autobahn server answering each call with ``{"id":N,"result":null}``
   and, per "block", sending every connection the notice bytes the node sent
   that connection's counterpart (the baseline: framing and writing alone).

The clients are a second process (this script with ``--client``: plain
sockets read through epoll, pre-masked frames, no JSON parsing; its CPU
per block is shown), ``--clients`` connections.  Each one subscribes like
a wallet: ``set_subscribe_callback``, ``get_objects`` of init0, its statistics and its TEST balance,
``set_block_applied_callback`` and ``subscribe_to_market(TEST, GOLD)``;
every connection chooses its own callback ids (``3i+1``, ``3i+2``,
``3i+3``), or with ``--same-ids`` all choose 1, 2, 3 like bitsharesjs
clients making the same calls.

Each block carries one transfer from init0 (changing its statistics and
balance; ``--transfers N``: N transfers, each in a transaction of its
own); blocks are produced every ``--interval`` seconds.  For block N this
process takes the monotonic time just before ``generate_block`` (the
application, whose observers send the notices); the client process takes,
per block, the monotonic time of the read that completed the last notice of
any connection (CLOCK_MONOTONIC is one clock for both processes).  The CPU
per notice is this process's CPU time over the measured blocks, less the
CPU of producing as many blocks with no client connected (measured first),
divided by the notices the clients counted; the share spent inside
``generate_block`` (the block's observers: choosing, encoding, framing,
handing the bytes to Twisted, whose writes follow in the next reactor
turn) and the garbage collections are shown apart.

Prints one line.  Run: PYTHONPATH=. python bench/notices.py
[--clients N] [--blocks B] [--interval S] [--transfers N] [--same-ids]
"""

import json
import os
import shutil
import sys
import tempfile
import time

import common  # puts the repository and tests/ on sys.path
from common import masked_frame, percentile, read_frames
from rpc import build_market  # bench/rpc.py's market

NOTICE = b'{"method":"notice","params":['


# -- the subscribers (second process) ------------------------------------------

class Subscriber:
    """One WebSocket connection over a plain socket: upgraded and
    subscribed (four calls) by :func:`client`, then fed what it reads: it
    counts notices and notes, per block, when its last notice was read."""

    def __init__(self, sock, calls: list, block_cb: int, shared: dict) -> None:
        self.sock, self.block_cb, self.shared = sock, block_cb, shared
        self.frames = b"".join(masked_frame(c) for c in calls)
        self.expect = len(calls)
        self.buf = b""
        self.block = 0
        self.sample = None  # callback id -> last notice text (one connection only)

    def feed(self, data: bytes, now: float) -> None:
        buf = self.buf + data if self.buf else data
        shared = self.shared
        frames, used = read_frames(buf)
        for opcode, start, end in frames:
            if opcode == 1:
                if buf.startswith(NOTICE, start):
                    comma = buf.index(b",", start + len(NOTICE))
                    cb = int(buf[start + len(NOTICE):comma])
                    if cb == self.block_cb:  # [cb,["<block id hex>"]]: its number
                        self.block = int(buf[comma + 3:comma + 11], 16)
                    shared["notices"] += 1
                    last = shared["last"]
                    if last.get(self.block, 0.0) < now:
                        last[self.block] = now
                    if self.sample is not None:
                        self.sample[cb] = buf[start:end].decode()
                else:
                    if b'"error"' in buf[start:end]:
                        raise SystemExit(f"call failed: {buf[start:end][:300]!r}")
                    self.expect -= 1
        self.buf = buf[used:]


def _read_until(sock, marker: bytes) -> bytes:
    data = b""
    while marker not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise SystemExit(f"connection closed during the upgrade: {data[:200]!r}")
        data += chunk
    return data


def client(port: int, clients: int, same_ids: bool, watched: list) -> None:
    """Connect and subscribe ``clients`` subscribers; print ``ready``;
    read notices (epoll) until a line on stdin; print the results (JSON)."""
    import select
    import socket

    shared = {"notices": 0, "last": {}}
    subs = []
    cbs = [0 if same_ids else 3 * i for i in range(clients)]
    for i in range(clients):
        base = cbs[i]
        calls = [
            b'{"id":1,"method":"call","params":[0,"set_subscribe_callback",[%d,false]]}'
            % (base + 1),
            b'{"id":2,"method":"call","params":[0,"get_objects",[%s]]}'
            % json.dumps(watched).encode(),
            b'{"id":3,"method":"call","params":[0,"set_block_applied_callback",[%d]]}'
            % (base + 2),
            b'{"id":4,"method":"call","params":[0,"subscribe_to_market",[%d,"TEST","GOLD"]]}'
            % (base + 3),
        ]
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        subs.append(Subscriber(sock, calls, base + 2, shared))
    for sub in subs:
        sub.sock.sendall(common.upgrade_request(port))
    for sub in subs:
        head = _read_until(sub.sock, b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            raise SystemExit(f"WebSocket upgrade refused: {head[:200]!r}")
        sub.feed(head[head.index(b"\r\n\r\n") + 4:], 0.0)
        sub.sock.sendall(sub.frames)
    for sub in subs:
        while sub.expect > 0:
            sub.feed(sub.sock.recv(65536), 0.0)
    subs[0].sample = {}
    poller = select.epoll()
    by_fd = {}
    for sub in subs:
        sub.sock.setblocking(False)
        by_fd[sub.sock.fileno()] = sub
        poller.register(sub.sock.fileno(), select.EPOLLIN)
    stdin = sys.stdin.fileno()
    poller.register(stdin, select.EPOLLIN)
    print("ready", flush=True)
    cpu0 = time.process_time()
    monotonic = time.monotonic
    running = True
    while running:
        for fd, _ in poller.poll():
            if fd == stdin:
                running = False
                continue
            sub = by_fd[fd]
            data = sub.sock.recv(262144)
            if not data:
                raise SystemExit("the server closed a subscriber's connection")
            sub.feed(data, monotonic())
    print(json.dumps({"notices": shared["notices"], "last": shared["last"],
                      "sample": subs[0].sample, "cbs": cbs,
                      "cpu": time.process_time() - cpu0}), flush=True)


# -- the servers (this process) ------------------------------------------------

def cpu_seconds() -> float:
    """This process's CPU time (CLOCK_PROCESS_CPUTIME_ID: not tick-based)."""
    return time.process_time()


class GcTime:
    """Seconds this process spent in garbage collections (``gc.callbacks``)."""

    def __init__(self) -> None:
        import gc

        self.seconds, self._start = 0.0, 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase, info) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._start


GC = GcTime()


class Clients:
    """The client process: fires ``ready`` once subscribed, ``results``
    with its JSON after :meth:`finish`."""

    def __init__(self, reactor, port, args, watched):
        from twisted.internet import defer, protocol

        self.ready, self.results = defer.Deferred(), defer.Deferred()
        outer = self

        class Watch(protocol.ProcessProtocol):
            out, err = b"", b""

            def outReceived(self, data):
                self.out += data
                while b"\n" in self.out:
                    line, self.out = self.out.split(b"\n", 1)
                    if line == b"ready":
                        outer.ready.callback(None)
                    else:
                        outer.results.callback(json.loads(line))

            def errReceived(self, data):
                self.err += data

            def processEnded(self, reason):
                for d in (outer.ready, outer.results):
                    if not d.called:
                        d.errback(RuntimeError(f"client failed: {self.err.decode()[-2000:]}"))

        argv = [sys.executable, os.path.abspath(__file__), "--client", str(port),
                str(args.clients), "1" if args.same_ids else "0", json.dumps(watched)]
        self.process = reactor.spawnProcess(Watch(), sys.executable, argv, env=os.environ)

    def finish(self):
        self.process.write(b"done\n")
        return self.results


class Producer:
    """Blocks of ``transfers`` transfers each (init0 -> init1, 1, 2, ...
    satoshis), each in a transaction of its own."""

    def __init__(self, chain, transfers: int = 1):
        self.chain, self.transfers = chain, transfers
        self.apply_cpu = 0.0  # CPU seconds in generate_block (application, observers)

    def block(self) -> tuple:
        """Produce one block; returns (its number, monotonic time before its
        application)."""
        import struct

        from nodeapi.plugins.witness.plugin import DEV_WIF
        from nodeapi.protocol.times import format_time
        from nodeapi.protocol.transaction import sign_transaction

        chain = self.chain
        zero = {"amount": 0, "asset_id": "1.3.0"}
        head = bytes.fromhex(chain.head_block_id)
        for i in range(self.transfers):
            op = [0, {"from": "1.2.6", "to": "1.2.7",
                      "amount": {"amount": 1 + i, "asset_id": "1.3.0"}, "extensions": []}]
            op[1]["fee"] = chain.required_fee([0, dict(op[1], fee=zero)])
            trx = {"ref_block_num": chain.head_block_num & 0xFFFF,
                   "ref_block_prefix": struct.unpack_from("<I", head, 4)[0],
                   "expiration": format_time(chain.head_block_time + 60), "operations": [op],
                   "extensions": []}
            chain.push_transaction(sign_transaction(trx, chain.chain_id, [DEV_WIF]))
        when, witness = chain.get_slot_time(1), chain.get_scheduled_witness(1)
        started, cpu = time.monotonic(), cpu_seconds()
        chain.generate_block(when, witness, DEV_WIF)
        self.apply_cpu += cpu_seconds() - cpu
        return chain.head_block_num, started


def start_bare(reactor):
    """The baseline server: answers calls with a null result; broadcast()
    sends each open connection its list of notice bytes."""
    from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol

    class Bare(WebSocketServerProtocol):
        def onMessage(self, payload, isBinary):
            rid = payload[payload.index(b'"id":') + 5:payload.index(b",")]
            self.sendMessage(b'{"id":%s,"result":null}' % rid, False)

        def onOpen(self):
            self.factory.conns.append(self)

    factory = WebSocketServerFactory(reactor=reactor)
    factory.protocol = Bare
    factory.conns = []
    factory.setProtocolOptions(maxMessagePayloadSize=4 * 1024 * 1024,
                               maxFramePayloadSize=4 * 1024 * 1024, failByDrop=False)
    port = reactor.listenTCP(0, factory, interface="127.0.0.1", backlog=1024).getHost().port
    return port, factory


def sleep(reactor, seconds):
    from twisted.internet import task
    return task.deferLater(reactor, seconds, lambda: None)


async def node_phase(reactor, chain, port, args, watched):
    producer = Producer(chain, args.transfers)
    # the CPU of producing blocks with nobody subscribed
    cpu0 = cpu_seconds()
    for _ in range(args.blocks):
        producer.block()
    alone = (cpu_seconds() - cpu0) / args.blocks
    apply_alone, producer.apply_cpu = producer.apply_cpu / args.blocks, 0.0
    clients = Clients(reactor, port, args, watched)
    await clients.ready
    await sleep(reactor, 0.5)
    starts = {}
    cpu0, gc0 = cpu_seconds(), GC.seconds
    for _ in range(args.blocks):
        num, started = producer.block()
        starts[num] = started
        await sleep(reactor, args.interval)
    cpu = cpu_seconds() - cpu0
    results = await clients.finish()
    results["gc"] = (GC.seconds - gc0) / args.blocks
    # the observers' share: choosing, encoding, framing, handing to Twisted
    results["fanout"] = (producer.apply_cpu - apply_alone * args.blocks) / results["notices"]
    latencies = [results["last"][str(n)] - t for n, t in starts.items()
                 if str(n) in results["last"]]
    if len(latencies) != len(starts):
        raise SystemExit(f"notices of {len(starts) - len(latencies)} blocks never arrived")
    notices = results["notices"]
    per_notice = (cpu - alone * args.blocks) / notices
    return latencies, per_notice, notices, alone, results


async def bare_phase(reactor, port, factory, args, sample, cbs):
    """Broadcast, per block, to each connection the notices the node sent
    its counterpart (connection 0's bytes with that connection's ids)."""
    clients = Clients(reactor, port, args, [])
    await clients.ready
    await sleep(reactor, 0.5)
    conns = factory.conns
    block_cb, subscribe_cb = 2, 1
    objects = sample[str(subscribe_cb)]
    head = len('{"method":"notice","params":[%d' % subscribe_cb)
    tail = objects[head:].encode()
    per_conn = [b'{"method":"notice","params":[%d' % (cbs[i] + subscribe_cb) + tail
                for i in range(len(conns))]
    starts = {}
    cpu0 = cpu_seconds()
    for n in range(1, args.blocks + 1):
        started = time.monotonic()
        for i, conn in enumerate(conns):
            conn.sendMessage(b'{"method":"notice","params":[%d,["%08x%s"]]}'
                             % (cbs[i] + block_cb, n, b"0" * 32), False)
            conn.sendMessage(per_conn[i], False)
        starts[n] = started
        await sleep(reactor, args.interval)
    cpu = cpu_seconds() - cpu0
    results = await clients.finish()
    latencies = [results["last"][str(n)] - t for n, t in starts.items()]
    return latencies, cpu / results["notices"], results["notices"]


async def main(reactor, args):
    from nodeapi.api.registry import default_registry
    from nodeapi.chain.blocklog import BlockLog
    from nodeapi.chain.chain import Chain
    from nodeapi.chain.genesis import load_genesis
    from nodeapi.plugins.account_history.history import AccountHistory
    from nodeapi.node import Node
    from nodeapi.rpc.access import ApiAccess
    from nodeapi.rpc.guard import RpcLimits
    from nodeapi.rpc.site import rpc_site

    tmp = tempfile.mkdtemp(prefix="nodeapi-bench-notices-")
    try:
        chain = Chain(load_genesis(), BlockLog(os.path.join(tmp, "blocks"), sync=False).open())
        history = AccountHistory()
        chain.add_consumer(history)
        build_market(chain)
        node = Node(chain=chain, plugins={"account_history": history}, reactor=reactor)
        # one source address for every client: no per-address limit
        site = rpc_site(node, ApiAccess.default(), registry=default_registry(),
                        auto_ping_interval=0, reactor=reactor,
                        limits=RpcLimits(max_connections_per_ip=0))
        port = reactor.listenTCP(0, site, interface="127.0.0.1", backlog=1024).getHost().port
        init0 = chain.state.objects["1.2.6"]
        watched = ["1.2.6", init0["statistics"], chain.state.balance_by_owner["1.2.6"]["1.3.0"]]
        latencies, per_notice, notices, alone, results = await node_phase(
            reactor, chain, port, args, watched)
        bare_port, factory = start_bare(reactor)
        bare_lat, bare_per_notice, bare_notices = await bare_phase(
            reactor, bare_port, factory, args, results["sample"], results["cbs"])
    finally:
        shutil.rmtree(tmp)
    p50, p99 = percentile(latencies, 0.5) * 1000, percentile(latencies, 0.99) * 1000
    b50, b99 = percentile(bare_lat, 0.5) * 1000, percentile(bare_lat, 0.99) * 1000
    sizes = "/".join(str(len(results["sample"][k])) for k in sorted(results["sample"]))
    verdict = "met" if p99 <= 100 else "NOT met"
    print(f"notices ({args.clients} WebSocket subscribers, "
          f"{'same' if args.same_ids else 'own'} callback ids, {args.blocks} blocks of "
          f"{args.transfers} transfer(s) every {args.interval:g} s, "
          f"{notices / args.blocks:.0f} notices/block of {sizes} bytes): block applied -> last notice p50 {p50:.1f} ms p99 {p99:.1f} ms; "
          f"node CPU {per_notice * 1e6:.1f} us/notice (of which "
          f"{results['fanout'] * 1e6:.1f} us in the block's observers; block production alone "
          f"{alone * 1000:.1f} ms/block, garbage collection {results['gc'] * 1000:.1f} "
          f"ms/block); bare Autobahn sending the same bytes p50 "
          f"{b50:.1f} ms p99 {b99:.1f} ms, {bare_per_notice * 1e6:.1f} us/notice "
          f"(ratios p99 {p99 / b99:.2f}, CPU {per_notice / bare_per_notice:.2f}); "
          f"clients' CPU {results['cpu'] / args.blocks * 1000:.0f} ms/block; "
          f"target p99 <= 100 ms: {verdict}")


def parse_args(argv):
    parser = common.parser(__doc__)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--blocks", type=int, default=50)
    parser.add_argument("--interval", type=float, default=0.3, help="seconds between blocks")
    parser.add_argument("--transfers", type=int, default=1, help="transfers per block")
    parser.add_argument("--same-ids", action="store_true",
                        help="every client chooses callback ids 1, 2, 3")
    return parser.parse_args(argv)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        port, clients, same, watched = sys.argv[2:6]
        client(int(port), int(clients), same == "1", json.loads(watched))
    else:
        from twisted.internet import defer, task

        task.react(lambda reactor, a: defer.ensureDeferred(main(reactor, a)),
                   (parse_args(sys.argv[1:]),))
