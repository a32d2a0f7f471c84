"""Memory of idle WebSocket connections: the RSS a node grows by serving
``--conns`` open, idle WebSocket connections, per connection (budget 20
KiB), next to a bare Autobahn server holding as many (same run).

Each server runs in a child process of its own (this script with
``--serve node`` or ``--serve bare``) so neither inherits the other's
heap: the node is the RPC site (``nodeapi.rpc.site.rpc_site``, default
access and options, no per-address limit: every client comes from
127.0.0.1) over a chain built like bench/rpc.py's; the bare server is an
Autobahn ``WebSocketServerFactory`` with the node's protocol options whose
protocol does nothing.  This process opens the connections (plain sockets,
the upgrade only, then nothing), and asks the server for its RSS
(``/proc/self/statm``, after a garbage collection) before and one second
after.  With ``--trace`` the node's child also prints, to stderr, the
allocation sites (``tracemalloc``) that grew most, and the object types
added, for both servers.

Prints one line.  Run: PYTHONPATH=. python bench/connections.py
[--conns N] [--trace]
"""

import base64
from collections import Counter
import gc
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import common  # puts the repository and tests/ on sys.path

from rpc import build_market  # noqa: E402  bench/rpc.py's chain

#: KiB per connection the node may use.
BUDGET_KIB = 20


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# -- the servers (child processes) -------------------------------------------

def serve(kind: str, trace: bool) -> None:
    """Listen, print the port, then answer each line on stdin with the RSS
    (and, traced, the allocation sites that grew since the first line)."""
    import tracemalloc

    from twisted.internet import reactor, stdio
    from twisted.protocols.basic import LineReceiver

    tmp = tempfile.mkdtemp(prefix="nodeapi-bench-conns-")
    if kind == "node":
        from nodeapi.api.registry import default_registry
        from nodeapi.chain.blocklog import BlockLog
        from nodeapi.chain.chain import Chain
        from nodeapi.chain.genesis import load_genesis
        from nodeapi.plugins.account_history.history import AccountHistory
        from nodeapi.node import Node
        from nodeapi.rpc.access import ApiAccess
        from nodeapi.rpc.guard import RpcLimits
        from nodeapi.rpc.site import rpc_site

        chain = Chain(load_genesis(), BlockLog(os.path.join(tmp, "blocks"), sync=False).open())
        history = AccountHistory()
        chain.add_consumer(history)
        build_market(chain)
        node = Node(chain=chain, plugins={"account_history": history}, reactor=reactor)
        factory = rpc_site(node, ApiAccess.default(), registry=default_registry(),
                           reactor=reactor, limits=RpcLimits(max_connections_per_ip=0))
    else:
        from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol

        factory = WebSocketServerFactory(reactor=reactor)
        factory.protocol = WebSocketServerProtocol
        factory.setProtocolOptions(maxMessagePayloadSize=4 * 1024 * 1024,
                                   maxFramePayloadSize=4 * 1024 * 1024, webStatus=False,
                                   openHandshakeTimeout=30, closeHandshakeTimeout=5,
                                   failByDrop=False, autoPingInterval=30.0,
                                   autoPingTimeout=30.0)
    port = reactor.listenTCP(0, factory, interface="127.0.0.1", backlog=1024)
    first = []

    class Control(LineReceiver):
        delimiter = b"\n"

        def connectionMade(self):
            self.sendLine(b"%d" % port.getHost().port)

        def lineReceived(self, line):
            gc.collect()
            if trace:
                snapshot = tracemalloc.take_snapshot()
                types = Counter(type(o).__qualname__ for o in gc.get_objects())
                if not first:
                    first.append(snapshot)
                    first.append(types)
                else:
                    stats = snapshot.compare_to(first[0], "lineno")
                    print(f"traced: {sum(s.size_diff for s in stats)} B in all",
                          file=sys.stderr, flush=True)
                    grown = (types - first[1]).most_common(30)
                    print("objects (gc-tracked) added: " + ", ".join(
                        f"{name} {n}" for name, n in grown), file=sys.stderr, flush=True)
                    for stat in stats[:60]:
                        print(f"{stat.size_diff:>10} B {stat.count_diff:>7} blocks  "
                              f"{stat.traceback}", file=sys.stderr, flush=True)
            self.sendLine(b"%d" % rss_bytes())

    if trace:
        tracemalloc.start()
    stdio.StandardIO(Control())
    try:
        reactor.run()
    finally:
        shutil.rmtree(tmp)


# -- the clients (this process) ----------------------------------------------

def measure(kind: str, conns: int, trace: bool) -> tuple:
    """``(RSS before, RSS with the connections open)`` of a ``kind`` server."""
    argv = [sys.executable, os.path.abspath(__file__), "--serve", kind]
    if trace:
        argv.append("--trace")
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              env=os.environ)
    try:
        port = int(server.stdout.readline())

        def rss() -> int:
            server.stdin.write(b"rss\n")
            server.stdin.flush()
            return int(server.stdout.readline())

        time.sleep(0.5)
        before = rss()
        socks = []
        for _ in range(conns):
            sock = socket.create_connection(("127.0.0.1", port))
            key = base64.b64encode(os.urandom(16))
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
                         b"Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                         b"Sec-WebSocket-Version: 13\r\n\r\n" % (port, key))
            socks.append(sock)
        for sock in socks:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = sock.recv(4096)
                if not chunk:
                    raise SystemExit(f"{kind}: connection closed during the upgrade")
                head += chunk
            if not head.startswith(b"HTTP/1.1 101"):
                raise SystemExit(f"{kind}: upgrade refused: {head[:200]!r}")
        time.sleep(1.0)
        after = rss()
        for sock in socks:
            sock.close()
        return before, after
    finally:
        server.terminate()
        server.wait()


def main(args) -> None:
    figures = {kind: measure(kind, args.conns, args.trace) for kind in ("node", "bare")}
    node_before, node_after = figures["node"]
    bare_before, bare_after = figures["bare"]
    per_node = (node_after - node_before) / args.conns / 1024
    per_bare = (bare_after - bare_before) / args.conns / 1024
    verdict = "met" if per_node <= BUDGET_KIB else "NOT met"
    print(f"connections: {args.conns} idle WebSocket connections: node RSS "
          f"{node_before / 2**20:.1f} -> {node_after / 2**20:.1f} MiB, {per_node:.1f} KiB per "
          f"connection (bare Autobahn {per_bare:.1f} KiB, ratio {per_node / per_bare:.2f}); "
          f"budget {BUDGET_KIB} KiB: {verdict}")


def parse_args(argv):
    parser = common.parser(__doc__)
    parser.add_argument("--conns", type=int, default=1000)
    parser.add_argument("--trace", action="store_true",
                        help="print the node's allocation sites that grew (tracemalloc)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--serve":
        serve(sys.argv[2], "--trace" in sys.argv[3:])
    else:
        main(parse_args(sys.argv[1:]))
