"""The RPC port under clients that never read (issue: memory exhaustion by
non-reading clients): the node's real RPC site (``rpc_site`` with default
limits, except the per-address limit, off because every client here is
127.0.0.1) serves in a child process; this process drives it over loopback.

Phase 1, baseline: 100 well-behaved WebSocket clients, each calling
``get_objects(["1.2.6", "2.1.0"])`` every 100 ms and waiting for the reply,
for 10 s; latencies are measured per call.
Phase 2: 200 hostile clients (receive buffer 4 KiB, never read) pipeline
``get_objects`` of 100 ids as fast as their sockets take them; once the node
has answered what it had read and stopped reading them (its CPU use under
10 % for a second, at most 30 s), the same
100 well-behaved clients run for 10 s while they stay connected and keep
trying.

The server's RSS (``/proc/PID/status`` VmRSS) is sampled every 100 ms.
Prints one line: server RSS peak of each phase and after the hostile
clients are gone, the well-behaved clients' p50/p99 latency in each phase
and their ratios, and whether the targets hold (RSS growth under hostile
load within the unsent budget plus 64 KiB per connection and 32 MiB of
slack; p99 under 50 ms).  Bounded: 300 connections, at most about 70 s.

Run: PYTHONPATH=. python bench/hostile.py
"""

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time

import common  # puts the repository and tests/ on sys.path
from common import cpu_seconds, masked_frame, read_frames, rss_mib

HERE = os.path.dirname(os.path.abspath(__file__))
POLITE, HOSTILE, SECONDS, INTERVAL, STALL_WAIT = 100, 200, 10.0, 0.1, 30.0
POLITE_CALL = b'{"id":1,"method":"call","params":[0,"get_objects",[["1.2.6","2.1.0"]]]}'
HOSTILE_CALL = (b'{"id":1,"method":"call","params":[0,"get_objects",[[%s]]]}'
                % b",".join(b'"1.2.%d"' % (i % 17) for i in range(100)))
MIB = 1024 * 1024


def serve() -> None:
    """Child process: the node's RPC site on 127.0.0.1; prints the port."""
    from twisted.internet import reactor

    from nodeapi.api.registry import default_registry
    from nodeapi.chain.genesis import load_genesis
    from nodeapi.plugins.account_history.history import AccountHistory
    from nodeapi.node import Node
    from nodeapi.rpc.access import ApiAccess
    from nodeapi.rpc.guard import RpcLimits
    from nodeapi.rpc.site import rpc_site
    from kit.chain import open_chain

    chain = open_chain(load_genesis(), os.path.join(tempfile.mkdtemp(prefix="bench-hostile-"),
                                                    "blocks"))
    history = AccountHistory()
    chain.add_consumer(history)
    node = Node(chain=chain, plugins={"account_history": history}, reactor=reactor)
    site = rpc_site(node, ApiAccess.default(), registry=default_registry(), reactor=reactor,
                    limits=RpcLimits(max_connections_per_ip=0))
    port = reactor.listenTCP(0, site, interface="127.0.0.1", backlog=512)
    print(port.getHost().port, flush=True)
    reactor.run()


class Polite(asyncio.Protocol):
    """Calls, waits for the reply, sleeps INTERVAL; records latencies."""

    def __init__(self, port, latencies, opened):
        self.port, self.latencies, self.opened = port, latencies, opened
        self.buf, self.open, self.sent_at = b"", False, None
        self.frame = masked_frame(POLITE_CALL)
        self.running = True

    def connection_made(self, transport):
        self.transport = transport
        transport.write(common.upgrade_request(self.port))

    def data_received(self, data):
        buf = self.buf + data
        if not self.open:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                self.buf = buf
                return
            buf, self.open = buf[end + 4:], True
            self.opened.set_result(self) if not self.opened.done() else None
        frames, used = read_frames(buf)
        if frames and self.sent_at is not None:
            self.latencies.append(time.perf_counter() - self.sent_at)
            self.sent_at = None
            asyncio.get_running_loop().call_later(INTERVAL, self.call)
        self.buf = buf[used:]

    def call(self):
        if self.running and not self.transport.is_closing():
            self.sent_at = time.perf_counter()
            self.transport.write(self.frame)


class Hostile(asyncio.Protocol):
    """Upgrades, then writes calls whenever the socket takes them and never
    reads a reply."""

    def __init__(self, port, opened, stats):
        self.port, self.opened, self.stats = port, opened, stats
        self.frames = masked_frame(HOSTILE_CALL) * 20
        self.paused, self.open, self.buf = False, False, b""

    def connection_made(self, transport):
        self.transport = transport
        transport.set_write_buffer_limits(high=64 * 1024)
        transport.write(common.upgrade_request(self.port))

    def data_received(self, data):
        self.buf += data
        if not self.open and b"\r\n\r\n" in self.buf:
            self.open = True
            self.transport.pause_reading()  # from now on, never read
            self.opened.set_result(self)
            self.flood()

    def flood(self):
        if self.transport.is_closing() or self.paused:
            return
        self.transport.write(self.frames)
        self.stats["sent"] += 20
        asyncio.get_running_loop().call_soon(self.flood)

    def pause_writing(self):
        self.paused = True

    def resume_writing(self):
        self.paused = False
        self.flood()

    def connection_lost(self, exc):
        self.stats["lost"] += 1


async def open_polite(loop, port, latencies):
    opened = loop.create_future()
    await loop.create_connection(lambda: Polite(port, latencies, opened), "127.0.0.1", port)
    return await opened


async def open_hostile(loop, port, stats):
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small receive buffer
    sock.setblocking(False)
    await loop.sock_connect(sock, ("127.0.0.1", port))
    opened = loop.create_future()
    await loop.create_connection(lambda: Hostile(port, opened, stats), sock=sock)
    return await opened


async def sample_rss(pid, samples, stop):
    while not stop.is_set():
        samples.append(rss_mib(pid))
        await asyncio.sleep(0.1)


async def phase(loop, port, pid, hostile_count):
    """(latencies, RSS peak, hostile stats) of one phase."""
    stats = {"sent": 0, "lost": 0}
    samples, stop = [], asyncio.Event()
    sampler = asyncio.ensure_future(sample_rss(pid, samples, stop))
    hostile = []
    for start in range(0, hostile_count, 50):
        hostile += await asyncio.gather(*[open_hostile(loop, port, stats)
                                          for _ in range(start, min(start + 50, hostile_count))])
    # until the node has answered what it read and stopped reading them
    # (under 10 % of a core for a second)
    started, busy = time.perf_counter(), 1.0
    while hostile and busy > 0.1 and time.perf_counter() - started < STALL_WAIT:
        before = cpu_seconds(pid)
        await asyncio.sleep(1.0)
        busy = cpu_seconds(pid) - before
    stats["stalled_after"] = time.perf_counter() - started
    stats["lost"] = 0
    latencies = []
    polite = []
    for start in range(0, POLITE, 50):
        polite += await asyncio.gather(*[open_polite(loop, port, latencies)
                                         for _ in range(start, start + 50)])
    await asyncio.sleep(1.0)  # warm-up: the hostile clients are flooding by now
    del latencies[:]
    for client in polite:
        client.call()
    await asyncio.sleep(SECONDS)
    cut = stats["lost"]
    for client in polite:
        client.running = False
        client.transport.close()
    for client in hostile:
        client.transport.abort()
    stop.set()
    await sampler
    stats["lost"] = cut
    return list(latencies), max(samples), stats


async def main():
    loop = asyncio.get_running_loop()
    server = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve"],
                              stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        start_rss = rss_mib(server.pid)
        base_lat, base_peak, _ = await phase(loop, port, server.pid, 0)
        hostile_lat, hostile_peak, stats = await phase(loop, port, server.pid, HOSTILE)
        await asyncio.sleep(2.0)
        after = rss_mib(server.pid)
    finally:
        server.terminate()
        server.wait()
    budget = 64 + HOSTILE * 64 / 1024 + 32  # --max-unsent-bytes, transport buffers, slack
    growth = hostile_peak - base_peak
    p50b, p99b = (1000 * common.percentile(base_lat, f) for f in (0.5, 0.99))
    p50h, p99h = (1000 * common.percentile(hostile_lat, f) for f in (0.5, 0.99))
    met = growth <= budget and p99h < 50
    print(f"hostile: {HOSTILE} non-reading WebSocket clients (4 KiB receive buffer) pipelining "
          f"get_objects of 100 ids ({stats['sent']:,} sent, all stalled by the node after "
          f"{stats['stalled_after']:.0f} s, {stats['lost']} cut while measured): "
          f"server RSS peak {hostile_peak:.0f} MiB (baseline {base_peak:.0f} MiB, start "
          f"{start_rss:.0f} MiB, ratio {hostile_peak / base_peak:.2f}, growth {growth:.0f} MiB "
          f"<= {budget:.0f} MiB), {after:.0f} MiB 2 s after they left; {POLITE} well-behaved "
          f"clients p50 {p50h:.1f} ms p99 {p99h:.1f} ms over {len(hostile_lat):,} calls "
          f"(baseline p50 {p50b:.1f} ms p99 {p99b:.1f} ms over {len(base_lat):,} calls, p99 "
          f"ratio {p99h / p99b:.2f}); targets (RSS bounded, p99 < 50 ms): "
          f"{'met' if met else 'NOT met'}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        asyncio.run(main())
