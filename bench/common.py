"""What the bench scripts share: the import path, argparse set-up, the
client side of a WebSocket (upgrade request, masked frames, a frame
parser), percentiles, a process's CPU time and memory, and a gateway in
front of an upstream node on loopback (bench/gateway_fanout.py,
bench/gateway_wallets.py).

Not a bench itself: importing it puts the repository and tests/ on
``sys.path`` (the scripts import ``nodeapi`` and ``kit``) and nothing else.
"""

import argparse
import asyncio
import base64
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for _path in (os.path.join(ROOT, "tests"), ROOT):
    if _path not in sys.path:
        sys.path.insert(0, _path)


def parser(doc: str) -> argparse.ArgumentParser:
    """An argument parser described by the first line of a script's
    docstring ``doc``."""
    return argparse.ArgumentParser(description=doc.split("\n")[0])


def add_load_options(parser: argparse.ArgumentParser, *, seconds: float, rounds: int,
                     conns: int) -> None:
    """``--seconds`` (the measured window of a phase), ``--rounds`` (the
    best of how many) and ``--conns`` (client connections)."""
    parser.add_argument("--seconds", type=float, default=seconds,
                        help="measured window per phase")
    parser.add_argument("--rounds", type=int, default=rounds, help="best of this many rounds")
    parser.add_argument("--conns", type=int, default=conns, help="client connections")


def percentile(values, fraction: float):
    """The value at ``fraction`` (0.5, 0.99) of the sorted ``values``
    (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


async def measured_window(counter, warm_up: float, seconds: float) -> None:
    """The load generators' protocol with the measuring process: after
    ``warm_up`` seconds print ``start``, after ``seconds`` more print
    ``stop N S`` (N more ``counter.replies`` in S seconds) and clear
    ``counter.running``."""
    await asyncio.sleep(warm_up)
    base, started = counter.replies, time.perf_counter()
    print("start", flush=True)
    await asyncio.sleep(seconds)
    count, elapsed = counter.replies - base, time.perf_counter() - started
    counter.running = False
    print(f"stop {count} {elapsed:.6f}", flush=True)


def http_request(port: int, body: bytes) -> bytes:
    """A keep-alive JSON-RPC ``POST /rpc`` of ``body`` to ``127.0.0.1:port``."""
    return (b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (port, len(body), body))


# -- the client side of a WebSocket (RFC 6455) --------------------------------

def upgrade_request(port: int) -> bytes:
    """The HTTP request upgrading a connection to ``127.0.0.1:port`` to a
    WebSocket (a fresh key each)."""
    key = base64.b64encode(os.urandom(16))
    return (b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
            b"Sec-WebSocket-Version: 13\r\n\r\n" % (port, key))


def masked_frame(payload: bytes) -> bytes:
    """One client text frame (FIN, opcode 1, 7-, 16- or 64-bit length) of
    ``payload``, masked with a zero key, which leaves the payload as it is
    (a client must mask; the server unmasks whatever the key)."""
    n = len(payload)
    if n < 126:
        head = bytes((0x81, 0x80 | n))
    elif n < 65536:
        head = bytes((0x81, 0x80 | 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x81, 0x80 | 127)) + n.to_bytes(8, "big")
    return head + b"\0\0\0\0" + payload


def read_frames(buf) -> tuple:
    """``([(opcode, start, end), ...], used)``: the complete unmasked
    (server) frames at the start of ``buf`` (bytes or bytearray), their
    payloads ``buf[start:end]``, and the bytes they take (the rest waits for
    more data).

    :raises SystemExit: a close frame (opcode 8), with its payload."""
    frames = []
    pos, size = 0, len(buf)
    while size - pos >= 2:
        n = buf[pos + 1] & 0x7F
        if n < 126:
            start = pos + 2
        elif n == 126:
            if size - pos < 4:
                break
            n, start = int.from_bytes(buf[pos + 2:pos + 4], "big"), pos + 4
        else:
            if size - pos < 10:
                break
            n, start = int.from_bytes(buf[pos + 2:pos + 10], "big"), pos + 10
        if size < start + n:
            break
        opcode = buf[pos] & 0x0F
        if opcode == 8:
            raise SystemExit(f"server closed the WebSocket: {bytes(buf[start:start + n])!r}")
        frames.append((opcode, start, start + n))
        pos = start + n
    return frames, pos


# -- measuring processes -------------------------------------------------------

def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far, all its
    threads (``/proc/<pid>/stat``)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    """Resident set size of process ``pid`` in MiB (``VmRSS``)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def print_in_reactor(make) -> None:
    """Run Twisted's global reactor until the Deferred ``make()`` returns
    has fired: print its result (a failure's traceback to stderr), then
    stop."""
    from twisted.internet import reactor

    def go():
        d = make()
        d.addCallback(print)
        d.addErrback(lambda f: f.printTraceback(file=sys.stderr))
        d.addBoth(lambda _: reactor.stop())

    reactor.callWhenRunning(go)
    reactor.run()


# -- a gateway in front of an upstream node ------------------------------------

class GatewayOnLoopback:
    """An upstream nodeapi node serving ``chain`` and a gateway forwarding
    to it (one upstream pool, a subscription hub), both listening on
    127.0.0.1 in ``reactor``, every client allowed (``max_connections``
    10,000 per address).  :meth:`start` fires once the gateway's upstream is
    usable; :meth:`stop` closes both.

    :ivar upstream_port: the upstream node's RPC port.
    :ivar port: the gateway's RPC port (after :meth:`start`).
    :ivar hub: the gateway's :class:`~nodeapi.gateway.subscriptions.SubscriptionHub`."""

    def __init__(self, chain, reactor) -> None:
        from nodeapi.gateway.apis import Gateway
        from nodeapi.gateway.cache import ForwardedAnswerCache
        from nodeapi.gateway.pool import UpstreamPool
        from nodeapi.gateway.subscriptions import SubscriptionHub
        from nodeapi.node import Node
        from nodeapi.protocol.node_address import parse_node_address
        from nodeapi.rpc.access import ApiAccess
        from nodeapi.rpc.guard import RpcLimits

        self.reactor = reactor
        self.access = ApiAccess.open_to_all()
        self.limits = RpcLimits(max_connections=10_000, max_connections_per_ip=10_000)
        self.upstream = self.listen(Node(chain=chain, reactor=reactor))
        self.upstream_port = self.upstream.getHost().port
        self.pool = UpstreamPool([parse_node_address(f"ws://127.0.0.1:{self.upstream_port}")],
                                 reactor, interval=5.0, max_head_age=10 ** 9)
        self.hub = SubscriptionHub(self.pool, reactor)
        self.gateway = Gateway(self.pool, ForwardedAnswerCache(1 << 20), hub=self.hub)
        self.listening = None
        self.port = None

    def listen(self, node, **options):
        """``node``'s RPC site listening on 127.0.0.1 (any port)."""
        from nodeapi.rpc.site import rpc_site

        site = rpc_site(node, self.access, reactor=self.reactor, auto_ping_interval=0,
                        limits=self.limits, **options)
        return self.reactor.listenTCP(0, site, interface="127.0.0.1")

    def start(self):
        """Listen as the gateway and start its pool: a Deferred firing once
        the upstream is usable (polled every 50 ms)."""
        from twisted.internet import defer, task

        from nodeapi.gateway.apis import gateway_registry
        from nodeapi.node import Node

        self.listening = self.listen(Node(chain=None, reactor=self.reactor, gateway=self.gateway),
                                     registry=gateway_registry())
        self.port = self.listening.getHost().port
        self.pool.startService()

        @defer.inlineCallbacks
        def usable():
            while not self.pool.upstreams[0].usable:
                yield task.deferLater(self.reactor, 0.05, lambda: None)

        return usable()

    def stop(self):
        """Stop the pool and both listeners: a Deferred."""
        from twisted.internet import defer

        ports = [p for p in (self.listening, self.upstream) if p is not None]
        return defer.gatherResults([defer.maybeDeferred(self.pool.stopService)]
                                   + [defer.maybeDeferred(p.stopListening) for p in ports])
