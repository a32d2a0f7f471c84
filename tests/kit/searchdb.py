"""searchdb plugin helpers against a real osmem-server (an
OpenSearch-compatible server): services with test timings, a loopback
proxy for outages, expected history numbers, stored documents, shipping
bulk bodies (docs/searchdb-plugin.rst)."""

import orjson
import treq
from twisted.internet import defer, reactor
from twisted.protocols.portforward import ProxyFactory

from nodeapi.plugins.searchdb.client import SearchDBClient
from nodeapi.plugins.searchdb.documents import DocumentBuilder
from nodeapi.plugins.searchdb.flavors import index_template
from nodeapi.plugins.searchdb.service import SearchDBService

from kit.chain import INIT, open_chain, produce, transfer_op
from kit.daemon import free_port
from kit.history import Recorder, build_history_chain
from kit.signing import sign


NDJSON = {b"Content-Type": [b"application/x-ndjson"]}


class HeadClock:
    """``seconds()`` one second after the chain's head block: the node is
    synchronized for live blocks."""

    def __init__(self, chain):
        self.chain = chain

    def seconds(self):
        return self.chain.head_block_time + 1


class FarClock:
    """``seconds()`` far after any test block: the node is never in sync."""

    def seconds(self):
        return 4_000_000_000


class Proxy:
    """A loopback TCP proxy to the database that can go down and come back
    on the same port (an outage that keeps the database's data), or hang
    (:meth:`hang`)."""

    def __init__(self, url):
        host, port = url.rsplit("//", 1)[1].rstrip("/").split(":")
        self.target = (host, int(port))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.listening = None
        self.conns = []
        self.hung = False

    def up(self):
        self.hung = False
        factory = ProxyFactory(*self.target)
        build = factory.buildProtocol

        def track(addr):
            p = build(addr)
            forward = p.dataReceived
            p.dataReceived = lambda data: None if self.hung else forward(data)
            self.conns.append(p)
            return p
        factory.buildProtocol = track
        self.listening = reactor.listenTCP(self.port, factory, interface="127.0.0.1")

    def hang(self):
        """From now on (until :meth:`up`) swallow what clients send:
        connections are taken and stay open, no request gets an answer (a
        database too slow to answer)."""
        self.hung = True

    @defer.inlineCallbacks
    def down(self):
        if self.listening is not None:
            yield self.listening.stopListening()
            self.listening = None
        for p in self.conns:
            if p.transport is not None:
                p.transport.abortConnection()
        self.conns = []


def write_history_log(genesis, path):
    """A closed block log at ``path`` with transfers, account creation,
    asset create/issue, fills and a second calendar month; returns
    ``expected`` (:func:`expected_of` its blocks)."""
    chain = open_chain(genesis, path)
    rec = Recorder()
    chain.add_consumer(rec)
    build_history_chain(chain, rounds=2, per_trx=3)
    chain.block_log.close()
    return expected_of(rec.blocks)


def expected_of(blocks):
    """{N: (account, operation id number M, block number)} of the applied
    ``blocks``, as the chain numbered 2.9.N."""
    out = {}
    for b in blocks:
        for op in b.operations:
            for n, account, _seq, _nxt in op.account_history:
                out[n] = (account, op.id_num, b.block_num)
    return out


def make_service(url, chain, data_dir, **kw):
    """A SearchDBService on ``url`` with small bulks and short backoffs
    (``node_url``/``basic_auth`` go to the client, the rest overrides)."""
    client = SearchDBClient(kw.pop("node_url", url), kw.pop("basic_auth", ""), reactor,
                            request_timeout=10)
    args = dict(bulk_replay=8, bulk_sync=6, reactor=reactor, clock=HeadClock(chain),
                initial_backoff=0.05, max_backoff=0.3, prepare_timeout=5, stop_timeout=10)
    args.update(kw)
    return SearchDBService(client, chain, data_dir, **args)


def replay_through(chain, svc):
    """Prepare ``svc``, replay ``chain`` into it (unless it does not write),
    start and stop it (the flush), close the block log; a generator for
    ``yield from`` inside ``inlineCallbacks``."""
    if svc.writes:
        chain.add_consumer(svc)
    yield svc.prepare()
    yield chain.replay()
    svc.startService()
    yield svc.stopService()
    chain.block_log.close()


@defer.inlineCallbacks
def stored_docs(url, prefix="chain-"):
    """{N: hit} of every stored document."""
    client = SearchDBClient(url, "", reactor)
    yield client.detect()
    yield client.request("POST", f"/{prefix}*/_refresh", ok=(200, 404))
    answer = yield client.search(prefix, {"size": 10000, "query": {"match_all": {}}})
    yield client.close()
    hits = answer["hits"]["hits"]
    return {int(h["_id"][4:]): h for h in hits}


@defer.inlineCallbacks
def check_all_once(url, expected):
    """Every expected document stored exactly once with its account and
    operation; returns :func:`stored_docs`."""
    docs = yield stored_docs(url)
    assert sorted(docs) == sorted(expected)
    for n, (account, m, _b) in expected.items():
        assert docs[n]["_source"]["account_history"]["account"] == account
        assert docs[n]["_source"]["operation_id_num"] == m
    return docs


def transfers(chain, count, amount=500):
    """One block with ``count`` transfers from init0 to init1..init3."""
    ops = [transfer_op(amount + i, fee=3000000, to=INIT[1 + i % 3]) for i in range(count)]
    chain.push_transaction(sign(chain, ops))
    produce(chain)


def bulk_bodies(chain, blocks, prefix, doc_type=None, max_ops=60) -> list:
    """NDJSON bulk bodies (create actions, ``_id`` 2.9.N) of all blocks,
    built with DocumentBuilder and the chain's numbering."""
    def lookup(asset_id):
        a = chain.state.get(asset_id)
        return (a["symbol"], a["precision"]) if a else None
    builder = DocumentBuilder(prefix, visitor=True, asset_lookup=lookup, doc_type=doc_type)
    bodies, lines = [], []
    for b in blocks:
        index = builder.index_for(b.timestamp)
        for op in b.operations:
            entries = op.account_history
            lines.extend(raw for _n, raw in
                         builder.items(entries, op, b.block_num, b.time_iso, index))
            if len(lines) >= max_ops:
                bodies.append(b"".join(lines))
                lines = []
    if lines:
        bodies.append(b"".join(lines))
    return bodies


async def ship(url: str, bodies: list) -> int:
    """POST each body to ``_bulk?refresh=true``; returns the items created."""
    created = 0
    for body in bodies:
        resp = await treq.post(url + "/_bulk?refresh=true", data=body, headers=NDJSON)
        answer = orjson.loads(await resp.content())
        assert resp.code == 200 and answer["errors"] is False, answer
        created += sum(1 for item in answer["items"] if item["create"]["status"] == 201)
    return created


async def install_template(url: str, prefix: str) -> None:
    """PUT the plugin's composable index template for ``prefix``."""
    resp = await treq.put(f"{url}/_index_template/{prefix}template",
                          data=orjson.dumps(index_template(prefix, "composable")),
                          headers={b"Content-Type": [b"application/json"]})
    assert resp.code == 200, await resp.text()


@defer.inlineCallbacks
def refuse_january_transfers(url):
    """Install an operator's mapping on ``chain-2016-01`` that refuses the
    transfer documents of January 2016 (``op_object.to`` as a number: the
    database answers those items with HTTP 400, every other one is stored)."""
    client = SearchDBClient(url, "", reactor)
    yield client.detect()
    yield client.request_json("PUT", "/chain-2016-01", {"mappings": {"properties": {
        "operation_history": {"properties": {"op_object": {"properties": {
            "to": {"type": "long"}}}}}}}})
    yield client.close()
