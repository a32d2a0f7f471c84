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

from common import GatewayOnLoopback, percentile, print_in_reactor  # sets sys.path
from twisted.internet import defer, reactor, task

from nodeapi.chain.genesis import load_genesis
from kit.chain import claim_op, open_chain, produce
from kit.rpc import ws_connect
from kit.signing import sign
from kit.wallets import create_accounts, paid, pay_each, wallet_names

#: seconds a paid wallet's notice may take before it counts as not delivered
DELIVERY_TIMEOUT = 10.0


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
    loopback = GatewayOnLoopback(chain, reactor)
    hub = loopback.hub
    yield loopback.start()
    started = time.perf_counter()
    clients = yield wallets(loopback.port, names)
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
    yield loopback.stop()
    chain.block_log.close()
    total = n * r
    ms = [1000 * percentile(block_times, 0.5), 1000 * percentile(block_times, 0.99),
          1000 * percentile(wallet_times or [0.0], 0.99)]
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
    print_in_reactor(lambda: run(n, r, per_block))


if __name__ == "__main__":
    main()
