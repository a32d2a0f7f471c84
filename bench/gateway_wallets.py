"""1,000 wallets with distinct accounts subscribed through the gateway.

A chain with N accounts (default 1,000: ``wallet-0``..) is served by a
nodeapi upstream, which subscribes at most 100 accounts per connection as
bitshares-core does (``api_limit_get_full_accounts_subscribe``); an
in-process gateway (an UpstreamPool, the forwarded sets, the merged
subscriptions' hub) serves N WebSocket wallets, each
``set_subscribe_callback`` then ``get_full_accounts([its account], true)``.
Then R rounds (default 2) pay every account once: each block pays B
accounts (default 100, in transactions of 30 transfers), and the time
from the block's production to each paid wallet's notice showing its new
balance is recorded.

Printed (one line): notices delivered (wallets told of their payment
within 10 s, of all payments), p50/p99 of the time from a block to the
last of its paid wallets' notices and p99 per wallet, the upstream
connections the subscriptions used, and the time the wallets took to
subscribe.  Clients, gateway and upstream share one process and one
reactor.

Run: PYTHONPATH=. python bench/gateway_wallets.py [N] [R] [B]; :func:`run`
is the same phase for a script that runs its reactor already.
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
from kit.wallets import create_accounts, paid, pay_each, wallet_names  # noqa: E402

#: every client connects from 127.0.0.1
LIMITS = RpcLimits(max_connections=10_000, max_connections_per_ip=10_000)
#: seconds a paid wallet's notice may take before it counts as not delivered
DELIVERY_TIMEOUT = 10.0


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def listen(site):
    return reactor.listenTCP(0, site, interface="127.0.0.1")


@defer.inlineCallbacks
def wallets(port, names):
    """A client of ``port`` per name, subscribed to that account."""
    out = []
    for i, name in enumerate(names):
        proto = yield ws_connect(port)
        yield proto.call("database", "set_subscribe_callback", i, False)
        yield proto.call("database", "get_full_accounts", [name], True)
        out.append(proto)
    return out


@defer.inlineCallbacks
def pay_round(chain, clients, ids, balances, amount, per_block, block_times, wallet_times):
    """Pay each account ``amount`` more, ``per_block`` a block (``balances``:
    each account's balance before, updated); returns the payments
    delivered (the paid wallet's notice shows its new balance)."""
    delivered = 0
    for first in range(0, len(ids), per_block):
        batch = list(range(first, min(first + per_block, len(ids))))
        seen = {i: len(clients[i].notices) for i in batch}
        pay_each(chain, [ids[i] for i in batch], amount)
        produce(chain)
        start = time.perf_counter()
        waiting = set(batch)
        while waiting and time.perf_counter() - start < DELIVERY_TIMEOUT:
            now = time.perf_counter()
            for i in [i for i in waiting if len(clients[i].notices) > seen[i]]:
                if paid(clients[i].notices[seen[i]:], ids[i], balances[i] + amount):
                    waiting.discard(i)
                    wallet_times.append(now - start)
            if waiting:
                yield task.deferLater(reactor, 0, lambda: None)
        block_times.append(time.perf_counter() - start)
        for i in batch:
            balances[i] += amount
        delivered += len(batch) - len(waiting)
    return delivered


@defer.inlineCallbacks
def run(n, r, per_block):
    """The bench (module docstring) in the running reactor: a Deferred
    firing with its one line."""
    chain = open_chain(load_genesis(), os.path.join(tempfile.mkdtemp(prefix="bench-gw-w-"), "b"))
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    names = wallet_names(n)
    ids = create_accounts(chain, names)
    balances = [0] * n
    access = ApiAccess.open_to_all()
    upstream = listen(rpc_site(Node(chain=chain, reactor=reactor), access, reactor=reactor,
                               auto_ping_interval=0, limits=LIMITS))
    pool = UpstreamPool([parse_node_address(f"ws://127.0.0.1:{upstream.getHost().port}")],
                        reactor, interval=5.0, max_head_age=10 ** 9)
    hub = SubscriptionHub(pool, reactor)
    gateway = Gateway(pool, ForwardedAnswerCache(1 << 20), hub=hub)
    gw = listen(rpc_site(Node(chain=None, reactor=reactor, gateway=gateway), access,
                         registry=gateway_registry(), reactor=reactor, auto_ping_interval=0,
                         limits=LIMITS))
    pool.startService()
    while not pool.upstreams[0].usable:
        yield task.deferLater(reactor, 0.05, lambda: None)
    started = time.perf_counter()
    clients = yield wallets(gw.getHost().port, names)
    subscribed = time.perf_counter() - started
    connections = len(hub.links)
    block_times, wallet_times = [], []
    delivered = 0
    for k in range(r):
        delivered += yield pay_round(chain, clients, ids, balances, 1000 + k, per_block,
                                     block_times, wallet_times)
    figures = hub.figures()
    for proto in clients:
        proto.dropConnection()
    yield task.deferLater(reactor, 0.2, lambda: None)
    yield pool.stopService()
    yield gw.stopListening()
    yield upstream.stopListening()
    chain.block_log.close()
    total = n * r
    ms = [1000 * percentile(block_times, 50), 1000 * percentile(block_times, 99),
          1000 * percentile(wallet_times or [0.0], 99)]
    return (f"gateway wallets: {n} wallets with distinct accounts (one connection each), "
            f"{r} rounds paying each account, {per_block} payments a block: notices delivered "
            f"{100 * delivered / total:.1f} % ({delivered}/{total}); block -> last paid "
            f"wallet's notice p50 {ms[0]:.0f} ms, p99 {ms[1]:.0f} ms (per wallet p99 "
            f"{ms[2]:.0f} ms); upstream connections used {connections} "
            f"({figures['accounts']} accounts, 100 per connection); notices routed "
            f"{figures['notices_routed']:,}; wallets subscribed in {subscribed:.1f} s")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    r = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    per_block = int(sys.argv[3]) if len(sys.argv) > 3 else 100

    def go():
        d = run(n, r, per_block)
        d.addCallback(print)
        d.addErrback(lambda f: f.printTraceback(file=sys.stderr))
        d.addBoth(lambda _: reactor.stop())

    reactor.callWhenRunning(go)
    reactor.run()


if __name__ == "__main__":
    main()
