"""Notice fan-out of the gateway's merged subscriptions: N WebSocket
clients (default 1,000) subscribe the same object (``2.1.0``, which every
block changes) through the gateway, whose hub carries one upstream
subscription for all of them; each block's upstream notice is routed and
encoded once and written to the N clients under their own callback ids.

Measured: the time from the moment the upstream node hands its notice to
its connection(s) (right after the block is applied) until the last of the
N clients has received its notice, over R blocks (default 50): p50 and
p99.  Baseline, the same run: the same N clients subscribed to the
upstream (a nodeapi node) directly, each on its own upstream subscription;
the ratio is gateway p99 / direct p99.  Also the hub's own share (routing,
encoding, writing: ``Shard.notice``) per notice.  Clients, the
gateway and the upstream share one process and one reactor.

Run: PYTHONPATH=. python bench/gateway_fanout.py [N] [R]; :func:`run` is
the same phase for a script that runs its reactor already.
"""

import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "tests")]

from twisted.internet import defer, reactor, task  # noqa: E402

from nodeapi.chain.genesis import load_genesis  # noqa: E402
from nodeapi.gateway.apis import Gateway, gateway_registry  # noqa: E402
from nodeapi.gateway.cache import ForwardedAnswerCache  # noqa: E402
from nodeapi.gateway.pool import UpstreamPool  # noqa: E402
from nodeapi.gateway.subscriptions import SubscriptionHub  # noqa: E402
from nodeapi.node import Node  # noqa: E402
from nodeapi.protocol.node_address import parse_node_address  # noqa: E402
from nodeapi.rpc.access import ApiAccess  # noqa: E402
from nodeapi.rpc.guard import RpcLimits  # noqa: E402
from nodeapi.rpc.site import rpc_site  # noqa: E402
from kit.chain import claim_op, open_chain, produce  # noqa: E402
from kit.rpc import ws_connect  # noqa: E402
from kit.signing import sign  # noqa: E402


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


#: every client connects from 127.0.0.1
LIMITS = RpcLimits(max_connections=10_000, max_connections_per_ip=10_000)


def listen(site):
    return reactor.listenTCP(0, site, interface="127.0.0.1")


@defer.inlineCallbacks
def subscribers(port, n):
    """``n`` clients of ``port``, each subscribed to 2.1.0."""
    clients = []
    for i in range(n):
        proto = yield ws_connect(port)
        yield proto.call("database", "set_subscribe_callback", 1000 + i, False)
        yield proto.call("database", "get_objects", ["2.1.0"])
        clients.append(proto)
    return clients


@defer.inlineCallbacks
def rounds(chain, clients, r):
    """Seconds from each block's notice to the last client's, ``r`` blocks."""
    times = []
    for _ in range(r):
        counts = [len(c.notices) for c in clients]
        produce(chain)
        start = time.perf_counter()
        pending = set(range(len(clients)))
        while pending:
            pending = {i for i in pending if len(clients[i].notices) <= counts[i]}
            if pending:
                yield task.deferLater(reactor, 0, lambda: None)
        times.append(time.perf_counter() - start)
    return times


@defer.inlineCallbacks
def run(n, r):
    """The bench (module docstring) in the running reactor: a Deferred
    firing with its one line (``bench/gateway.py`` may print it as its
    fan-out phase)."""
    chain = open_chain(load_genesis(), os.path.join(tempfile.mkdtemp(prefix="bench-gw-"), "b"))
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    access = ApiAccess.open_to_all()
    upstream = listen(rpc_site(Node(chain=chain, reactor=reactor), access, reactor=reactor,
                               auto_ping_interval=0, limits=LIMITS))
    port = upstream.getHost().port

    direct = yield subscribers(port, n)
    direct_times = yield rounds(chain, direct, r)
    for proto in direct:
        proto.dropConnection()
    yield task.deferLater(reactor, 0.5, lambda: None)

    pool = UpstreamPool([parse_node_address(f"ws://127.0.0.1:{port}")], reactor,
                        interval=5.0, max_head_age=10 ** 9)
    hub = SubscriptionHub(pool, reactor)
    gateway = Gateway(pool, ForwardedAnswerCache(1 << 20), hub=hub)
    hub_times = []
    shard = hub.shards[0]  # every client's: one account at most each
    notice = shard.notice

    def timed(link, cb, params):
        started = time.perf_counter()
        notice(link, cb, params)
        hub_times.append(time.perf_counter() - started)

    shard.notice = timed
    gw = listen(rpc_site(Node(chain=None, reactor=reactor, gateway=gateway), access,
                         registry=gateway_registry(), reactor=reactor, auto_ping_interval=0,
                         limits=LIMITS))
    pool.startService()
    while not pool.upstreams[0].usable:
        yield task.deferLater(reactor, 0.05, lambda: None)
    clients = yield subscribers(gw.getHost().port, n)
    hub_times.clear()
    gw_times = yield rounds(chain, clients, r)
    assert len(hub.interests.by_id) == 1  # one upstream subscription for all
    for proto in clients:
        proto.dropConnection()
    yield pool.stopService()
    yield gw.stopListening()
    yield upstream.stopListening()
    chain.block_log.close()
    ms = [1000 * percentile(t, p) for t, p in ((gw_times, 50), (gw_times, 99),
                                                (direct_times, 50), (direct_times, 99),
                                                (hub_times, 99))]
    return (f"gateway fan-out: {n} subscribers sharing one upstream subscription (2.1.0), "
          f"{r} blocks: upstream notice -> last client's notice p50 {ms[0]:.1f} ms, "
          f"p99 {ms[1]:.1f} ms (hub routing+encoding+writing p99 {ms[4]:.1f} ms); each "
          f"client subscribed directly to the upstream: p50 {ms[2]:.1f} ms, p99 {ms[3]:.1f} "
          f"ms; ratio p99 gateway/direct {ms[1] / ms[3]:.2f}")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    r = int(sys.argv[2]) if len(sys.argv) > 2 else 50

    def go():
        d = run(n, r)
        d.addCallback(print)
        d.addErrback(lambda f: f.printTraceback(file=sys.stderr))
        d.addBoth(lambda _: reactor.stop())

    reactor.callWhenRunning(go)
    reactor.run()


if __name__ == "__main__":
    main()
