"""Shipping speed of the searchdb plugin (targets: >= 20,000
documents/s, ratio to plain orjson >= 0.5, RSS growth < 10 %).

1. Builds a block log with the chain itself: a balance claim, then blocks of
   ``--per-trx`` transfers per signed transaction up to ``--ops`` operations
   (default 200,000; each transfer gives two documents, sender and
   receiver).
2. Replays it into a fresh Chain (``Chain.replay``, the startup path) with a
   recorder keeping the applied blocks, so the plugin's figure is its own
   and not the chain's.
3. Baseline, same run: plain Python builds every document as a dict
   (numbering, ``DocumentBuilder.document``) and serializes it and its
   action line with orjson.
4. The plugin: a :class:`~nodeapi.plugins.searchdb.service.SearchDBService` gets the
   replayed blocks (``replay=True``, chunks of blocks under the reactor like
   a replay) and ships to a minimal bulk sink started by the bench in a
   child process (a loopback HTTP server answering ``_bulk`` the way the
   database does, per-item ``201``, ``409`` for ids it has), until the sink
   confirmed every document.  RSS is read at 100,000 documents confirmed
   and at the end (the recorded blocks are loaded before, so the growth is
   the plugin's); the process peak is printed too.
5. A small end-to-end run: the first ``--osmem-ops`` operations (default
   5,000) shipped into osmem-server, checked with ``_count``.
6. Indexer mode: a ``twistd nodeapi`` child process serves the same block
   log (``account_history``, no witness) and an
   :class:`~nodeapi.peers.upstream.UpstreamService` in this process follows
   it over loopback WebSocket into a fresh plugin shipping to the sink:
   documents/s from the upstream's first block until the sink confirmed the
   last document (target: >= 10,000 documents/s, over twice the
   reference plugin's replay rate of about 4,200/s).

Prints one line of figures.

Run: PYTHONPATH=. python bench/history.py [--ops N]
[--per-trx N] [--osmem-ops N]
Sink alone: python bench/history.py --sink (prints its port).
"""

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import common  # puts the repository and tests/ on sys.path

import orjson  # noqa: E402
from twisted.internet import defer, task  # noqa: E402

from chain import CORE, DEV_WIF, produce, signed  # noqa: E402
from nodeapi.chain import authority as auth  # noqa: E402

VERSION = {"version": {"number": "7.10.2", "distribution": "elasticsearch"}}


def sink_main(reactor):
    """The bulk sink (child process): prints its port, serves until stdin
    closes."""
    from twisted.internet import stdio
    from twisted.internet.protocol import Protocol
    from twisted.web import resource as wresource, server

    stored = set()

    class Root(wresource.Resource):
        isLeaf = True

        def render(self, request):
            path = request.path
            request.setHeader(b"content-type", b"application/json")
            if path == b"/_bulk":
                return bulk(request.content.read())
            if path == b"/":
                return orjson.dumps(VERSION)
            if path.startswith(b"/_template/") and request.method == b"GET":
                request.setResponseCode(404)
                return b"{}"
            if path.endswith(b"/_search"):
                return orjson.dumps({"hits": {"total": {"value": 0}, "hits": []},
                                     "aggregations": {"top": {"value": None}}})
            return b'{"acknowledged":true}'

    def bulk(body):
        items = []
        lines = body.split(b"\n")
        for i in range(0, len(lines) - 1, 2):
            line = lines[i]
            start = line.index(b'"_id":"') + 7
            doc_id = line[start:line.index(b'"', start)]
            if doc_id in stored:
                items.append({"create": {"_id": doc_id.decode(), "status": 409}})
            else:
                stored.add(doc_id)
                items.append({"create": {"_id": doc_id.decode(), "status": 201}})
        return orjson.dumps({"took": 1, "errors": False, "items": items})

    site = server.Site(Root())
    site.noisy = False
    port = reactor.listenTCP(0, site, interface="127.0.0.1")
    print(port.getHost().port, flush=True)
    done = defer.Deferred()

    class Stdin(Protocol):
        def connectionLost(self, reason):
            done.callback(None)
    stdio.StandardIO(Stdin())
    return done


def build(genesis, path, ops, per_trx):
    from nodeapi.chain.blocklog import BlockLog
    from nodeapi.chain.chain import Chain

    log = BlockLog(path, sync=False).open()
    chain = Chain(genesis, log)
    chain.push_transaction(signed(chain, [[37, {
        "fee": {"amount": 0, "asset_id": CORE}, "deposit_to_account": "1.2.6",
        "balance_to_claim": "1.15.0",
        "balance_owner_key": auth.public_key_of(DEV_WIF, chain.address_prefix),
        "total_claimed": chain.state.get("1.15.0")["balance"]}]]))
    produce(chain)
    made = 1
    while made < ops:
        for _ in range(25):
            batch = []
            for i in range(min(per_trx, ops - made - len(batch))):
                op = [0, {"fee": {"amount": 0, "asset_id": CORE}, "from": "1.2.6",
                          "to": f"1.2.{7 + (made + i) % 10}",
                          "amount": {"amount": made + i, "asset_id": CORE}, "extensions": []}]
                op[1]["fee"] = chain.required_fee(op)
                batch.append(op)
            if not batch:
                break
            chain.push_transaction(signed(chain, batch))
            made += len(batch)
        produce(chain)
    log.close()


def baseline(blocks):
    """Plain Python: dict per document, orjson for it and its action line."""
    from nodeapi.plugins.searchdb.documents import DocumentBuilder

    builder, docs, size = DocumentBuilder(), 0, 0
    started = time.perf_counter()
    for b in blocks:
        index = builder.index_for(b.timestamp)
        for op in b.operations:
            for entry in op.account_history:
                action = {"create": {"_index": index, "_id": f"2.9.{entry[0]}"}}
                doc = builder.document(entry, op, b.block_num, b.time_iso)
                size += len(orjson.dumps(action)) + len(orjson.dumps(doc)) + 2
                docs += 1
    return docs, time.perf_counter() - started


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mib():
    """Current resident set size (Linux ``/proc/self/statm``), else the peak."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1 << 20)
    except OSError:
        return peak_rss_mib()


@defer.inlineCallbacks
def ship(reactor, blocks, url, data_dir, sample_at=None):
    """Feed ``blocks`` to a fresh SearchDBService shipping to ``url``;
    returns (documents, seconds, RSS MiB at ``sample_at`` documents
    confirmed, RSS MiB once all are confirmed)."""
    from nodeapi.plugins.searchdb.service import SearchDBService
    from nodeapi.plugins.searchdb.client import SearchDBClient

    client = SearchDBClient(url, "", reactor)
    svc = SearchDBService(client, None, data_dir, reactor=reactor, stop_timeout=600)
    yield svc.prepare()
    sampled = [None]

    def feed():
        for i, b in enumerate(blocks):
            svc.block_applied(b)
            if sampled[0] is None and sample_at and svc.documents_shipped >= sample_at:
                sampled[0] = rss_mib()
            if i % 5 == 4:
                yield None
    started = time.perf_counter()
    yield task.cooperate(feed()).whenDone()
    svc.startService()
    while svc.documents_pending:
        if sampled[0] is None and sample_at and svc.documents_shipped >= sample_at:
            sampled[0] = rss_mib()
        yield task.deferLater(reactor, 0.01, lambda: None)
    elapsed = time.perf_counter() - started
    rss_end = rss_mib()
    yield svc.stopService()
    assert svc.documents_failed == 0, "documents rejected"
    return svc.documents_shipped, elapsed, sampled[0], rss_end


@defer.inlineCallbacks
def indexer(reactor, tmp, block_log_path, sink_url, head):
    """Step 6: (documents, seconds) of an indexer following a child
    ``twistd nodeapi`` over the block log at ``block_log_path``."""
    import socket
    import urllib.request

    from twisted.internet import threads

    from nodeapi.plugins.searchdb.client import SearchDBClient
    from nodeapi.plugins.searchdb.service import SearchDBService
    from nodeapi.peers.upstream import UpstreamService
    from nodeapi.protocol.node_address import parse_node_address

    data = os.path.join(tmp, "upstream")
    os.makedirs(data)
    shutil.copyfile(block_log_path, os.path.join(data, "blocks.log"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from twisted.scripts.twistd import run; run()", "-n",
         "--pidfile=", "nodeapi", "--data-dir", data, "--rpc-endpoint",
         f"tcp:{port}:interface=127.0.0.1", "--plugins", "account_history",
         "--checkpoint-interval", "0", "--max-calls-in-flight", "1000"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        cwd=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

    def up():
        body = b'{"jsonrpc":"2.0","id":1,"method":"get_dynamic_global_properties","params":[]}'
        try:
            with urllib.request.urlopen(urllib.request.Request(
                    f"http://127.0.0.1:{port}/rpc", data=body), timeout=5) as r:
                return orjson.loads(r.read())["result"]["head_block_number"] == head
        except OSError:
            return False

    try:
        while not (yield threads.deferToThread(up)):
            yield task.deferLater(reactor, 0.5, lambda: None)
        os.makedirs(os.path.join(tmp, "indexed"))
        svc = SearchDBService(SearchDBClient(sink_url, "", reactor), None,
                              os.path.join(tmp, "indexed"), reactor=reactor, stop_timeout=600)
        yield svc.prepare()
        svc.startService()
        follower = UpstreamService(parse_node_address(f"ws://127.0.0.1:{port}"), [svc],
                                   reactor, pending=lambda: svc.documents_pending,
                                   irreversible=False, batch=200, poll=0.05)
        started = time.perf_counter()
        follower.startService()
        while follower.next_block <= head:
            yield task.deferLater(reactor, 0.05, lambda: None)
        svc.caught_up()
        while svc.documents_pending:
            yield task.deferLater(reactor, 0.01, lambda: None)
        elapsed = time.perf_counter() - started
        yield follower.stopService()
        yield svc.stopService()
        assert svc.documents_failed == 0, "documents rejected"
        return svc.documents_shipped, elapsed
    finally:
        proc.terminate()
        proc.wait()


@defer.inlineCallbacks
def main(reactor, args):
    from nodeapi.chain.blocklog import BlockLog
    from nodeapi.chain.chain import Chain
    from nodeapi.chain.genesis import load_genesis

    genesis = load_genesis()
    tmp = tempfile.mkdtemp(prefix="nodeapi-bench-history-")
    sink = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--sink"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        sink_url = f"http://127.0.0.1:{int(sink.stdout.readline())}/"
        t0 = time.perf_counter()
        build(genesis, os.path.join(tmp, "blocks"), args.ops, args.per_trx)
        build_s = time.perf_counter() - t0
        log = BlockLog(os.path.join(tmp, "blocks")).open()
        chain = Chain(genesis, log)
        blocks = []
        chain.add_consumer(type("R", (), {"block_applied": lambda s, b: blocks.append(b)})())
        t0 = time.perf_counter()
        yield chain.replay()
        replay_s = time.perf_counter() - t0
        log.close()
        head = blocks[-1].block_num
        n_ops = sum(len(b.operations) for b in blocks)
        assert n_ops >= args.ops, (n_ops, args.ops)
        base_docs, base_s = baseline(blocks)
        os.makedirs(os.path.join(tmp, "sink"))
        sample_at = min(100_000, base_docs // 2)
        docs, ship_s, rss_100k, rss_end = yield ship(reactor, blocks, sink_url,
                                            os.path.join(tmp, "sink"), sample_at=sample_at)
        assert docs == base_docs, (docs, base_docs)
        i_docs, i_s = yield indexer(reactor, tmp, os.path.join(tmp, "blocks"), sink_url, head)
        assert i_docs == base_docs, (i_docs, base_docs)
        small = []
        for b in blocks:
            small.append(b)
            if sum(len(x.operations) for x in small) >= args.osmem_ops:
                break
        small_ops = sum(len(b.operations) for b in small)
        del blocks
        from osmem_server import OsmemServer

        server = OsmemServer.start(addr="127.0.0.1:0", japanese=False)
        try:
            os.makedirs(os.path.join(tmp, "osmem"))
            o_docs, o_s, _, _ = yield ship(reactor, small, server.url, os.path.join(tmp, "osmem"))
            server.request("POST", "/chain-*/_refresh")
            counted = server.request("GET", "/chain-*/_count")["count"]
            assert counted == o_docs, (counted, o_docs)
        finally:
            server.close()
    finally:
        sink.stdin.close()
        sink.wait()
        shutil.rmtree(tmp)
    rate, base_rate = docs / ship_s, base_docs / base_s
    growth = (rss_end / rss_100k - 1) * 100 if rss_100k else float("nan")
    i_rate = i_docs / i_s
    ok = rate >= 20000 and rate / base_rate >= 0.5 and growth < 10 and i_rate >= 10000
    print(f"searchdb: {n_ops} ops -> {docs} documents shipped to a loopback bulk sink at "
          f"{rate:,.0f} docs/s (plain orjson build+serialize {base_rate:,.0f} docs/s, ratio "
          f"{rate / base_rate:.2f}); RSS {rss_100k:.0f} MiB at {sample_at // 1000}k docs, "
          f"{rss_end:.0f} MiB at the end ({growth:+.1f} %), peak {peak_rss_mib():.0f} MiB; "
          f"osmem-server end to end: {small_ops} ops, "
          f"{o_docs} docs at {o_docs / o_s:,.0f} docs/s; indexer following a twistd upstream "
          f"over loopback: {i_docs} docs at {i_rate:,.0f} docs/s ({i_rate / 4200:.1f}x the "
          f"reference plugin's ~4,200/s replay); build {build_s:.0f} s, chain replay "
          f"{replay_s:.0f} s; targets >= 20,000 docs/s, ratio >= 0.5, RSS growth < 10 %, "
          f"indexer >= 10,000 docs/s: {'met' if ok else 'NOT met'}")


def parse_args(argv):
    parser = common.parser(__doc__)
    parser.add_argument("--ops", type=int, default=200_000, help="operations in the chain")
    parser.add_argument("--per-trx", type=int, default=40, help="transfers per transaction")
    parser.add_argument("--osmem-ops", type=int, default=5000,
                        help="operations of the osmem-server run")
    parser.add_argument("--sink", action="store_true", help="run the bulk sink only")
    return parser.parse_args(argv)


if __name__ == "__main__":
    _args = parse_args(sys.argv[1:])
    if _args.sink:
        task.react(sink_main)
    else:
        task.react(main, (_args,))
