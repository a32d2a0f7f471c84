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

from common import GatewayOnLoopback, percentile, print_in_reactor  # sets sys.path
from twisted.internet import defer, reactor, task

from nodeapi.chain.genesis import load_genesis
from kit.chain import claim_op, open_chain, produce
from kit.rpc import ws_connect
from kit.signing import sign


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
    loopback = GatewayOnLoopback(chain, reactor)

    direct = yield subscribers(loopback.upstream_port, n)
    direct_times = yield rounds(chain, direct, r)
    for proto in direct:
        proto.dropConnection()
    yield task.deferLater(reactor, 0.5, lambda: None)

    hub = loopback.hub
    hub_times = []
    shard = hub.shards[0]  # every client's: one account at most each
    notice = shard.notice

    def timed(link, cb, params):
        started = time.perf_counter()
        notice(link, cb, params)
        hub_times.append(time.perf_counter() - started)

    shard.notice = timed
    yield loopback.start()
    clients = yield subscribers(loopback.port, n)
    hub_times.clear()
    gw_times = yield rounds(chain, clients, r)
    assert len(hub.interests.by_id) == 1  # one upstream subscription for all
    for proto in clients:
        proto.dropConnection()
    yield loopback.stop()
    chain.block_log.close()
    ms = [1000 * percentile(t, p) for t, p in ((gw_times, 0.5), (gw_times, 0.99),
                                                (direct_times, 0.5), (direct_times, 0.99),
                                                (hub_times, 0.99))]
    return (f"gateway fan-out: {n} subscribers sharing one upstream subscription (2.1.0), "
          f"{r} blocks: upstream notice -> last client's notice p50 {ms[0]:.1f} ms, "
          f"p99 {ms[1]:.1f} ms (hub routing+encoding+writing p99 {ms[4]:.1f} ms); each "
          f"client subscribed directly to the upstream: p50 {ms[2]:.1f} ms, p99 {ms[3]:.1f} "
          f"ms; ratio p99 gateway/direct {ms[1] / ms[3]:.2f}")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    r = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    print_in_reactor(lambda: run(n, r))


if __name__ == "__main__":
    main()
