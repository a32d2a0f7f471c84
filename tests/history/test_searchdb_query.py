"""The history API answered from the search database (searchdb_query)
against a real osmem-server: a chain with python-bitshares-signed
transfers, account creation, asset issue and order fills is recorded by the
in-memory account_history plugin AND shipped as wire-contract section 8
documents; all three history functions must give the same answers over a
grid of (account, start, stop, limit)."""

import orjson
import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.task import Clock
from twisted.web.resource import Resource
from treq.testing import StubTreq

from nodeapi.api.base import Session
from nodeapi.api.history import HistoryApi
from nodeapi.applied import AppliedBlock, AppliedOperation
from nodeapi.errors import HistoryError
from nodeapi.plugins.account_history.history import AccountHistory
from nodeapi.plugins.searchdb.client import SearchDBClient
from nodeapi.plugins.searchdb.documents import DocumentBuilder
from nodeapi.plugins.searchdb.query import SearchDBHistory, entry_from_document
from nodeapi.plugins.searchdb.service import SearchDBService
from nodeapi.node import Node
from nodeapi.rpc.jsonrpc import to_wire

from kit.history import SyntheticNumbering
from kit.searchdb import bulk_bodies, install_template, ship


pytestmark = pytest.mark.slow

PREFIX = "sq-"


@pytest_twisted.async_yield_fixture(scope="module")
async def stored(osmem, built):
    """The chain's documents shipped to osmem (with the plugin's template);
    yields ``(client, searchdb_history, n_documents)``."""
    chain, rec, hist, _info = built
    await install_template(osmem.url, PREFIX)
    created = await ship(osmem.url, bulk_bodies(chain, rec.blocks, PREFIX))
    client = SearchDBClient(osmem.url, "", reactor, request_timeout=10)
    await client.detect()
    yield client, SearchDBHistory(client, PREFIX, chain), created
    await client.close()


def norm(entries):
    """JSON form, as the wire carries it (wire-contract section 3: 64-bit
    integers beyond int32 as strings)."""
    return orjson.loads(orjson.dumps(to_wire(entries)))


def grid_points(hist):
    total = hist.operation_count
    return sorted({0, 1, 2, 3, total // 3, total // 2, total - 2, total - 1, total, total + 5})


@pytest_twisted.ensureDeferred
async def test_documents_stored(stored, built):
    client, _db, created = stored
    _chain, _rec, hist, _info = built
    assert created == sum(hist.account_total_ops(a) for a in hist.accounts())
    assert await client.count(PREFIX) == created


@pytest_twisted.ensureDeferred
async def test_account_history_same_answers(stored, built):
    _client, db, _ = stored
    chain, _rec, hist, info = built
    accounts = sorted(hist.accounts()) + ["1.2.999"]
    points = grid_points(hist)
    checked = 0
    for account in accounts:
        for start in points:
            for stop in points:
                for limit in (1, 4, 100):
                    want = hist.get_account_history(account, stop, limit, start)
                    got = await db.get_account_history(account, stop, limit, start)
                    assert norm(got) == norm(want), (account, stop, limit, start)
                    checked += bool(want)
    assert checked > 100


@pytest_twisted.ensureDeferred
async def test_relative_account_history_same_answers(stored, built):
    _client, db, _ = stored
    _chain, _rec, hist, _info = built
    accounts = sorted(hist.accounts()) + ["1.2.999"]
    seqs = [0, 1, 2, 3, 5, 8, 13, 40, 1000]
    checked = 0
    for account in accounts:
        for start in seqs:
            for stop in seqs:
                for limit in (0, 1, 3, 100):
                    want = hist.get_relative_account_history(account, stop, limit, start)
                    got = await db.get_relative_account_history(account, stop, limit, start)
                    assert norm(got) == norm(want), (account, stop, limit, start)
                    checked += bool(want)
    assert checked > 50


@pytest_twisted.ensureDeferred
async def test_account_history_operations_same_answers(stored, built):
    _client, db, _ = stored
    _chain, rec, hist, _info = built
    types = sorted({e["op"][0] for m in range(hist.operation_count)
                    for e in [hist.get_operation(m)]})
    assert {0, 1, 4, 5, 10, 14} <= set(types)  # transfer, orders, fill, create, asset
    accounts = sorted(hist.accounts())
    ath0 = next(a for a in accounts if hist.account_total_ops(a) and
                hist.get_account_history(a, 0, 100, 0)[-1]["id"] == "1.11.0")
    points = grid_points(hist)
    checked = 0
    for account in accounts:
        for op_type in types + [30]:
            for start in points[::2]:
                for stop in points[::3]:
                    for limit in (1, 100):
                        want = hist.get_account_history_operations(account, op_type, start,
                                                                   stop, limit)
                        got = await db.get_account_history_operations(account, op_type,
                                                                      start, stop, limit)
                        assert norm(got) == norm(want), (account, op_type, start, stop, limit)
                        checked += bool(want)
    assert checked > 50
    # the owner of 2.9.0 (balance claim) still sees op 0 with stop 0
    got = await db.get_account_history_operations(ath0, 37, 0, 0, 100)
    assert [e["id"] for e in got] == ["1.11.0"]


@pytest_twisted.ensureDeferred
async def test_paging_beyond_page_size(stored, built):
    """More hits than one page: read by lowering the upper bound."""
    client, _db, _ = stored
    chain, _rec, hist, _info = built
    small = SearchDBHistory(client, PREFIX, chain, page_size=3)
    for account in ("1.2.6", "1.2.7"):
        assert norm(await small.get_account_history(account, 0, 100, 0)) == \
            norm(hist.get_account_history(account, 0, 100, 0))
        assert norm(await small.get_relative_account_history(account, 0, 100, 0)) == \
            norm(hist.get_relative_account_history(account, 0, 100, 0))
        assert norm(await small.get_account_history_operations(account, 0, 0, 0, 100)) == \
            norm(hist.get_account_history_operations(account, 0, 0, 0, 100))
    assert len(hist.get_account_history("1.2.6", 0, 100, 0)) > 10


async def resolve(value):
    """An API answer: a value or a Deferred firing with one."""
    return (await value) if isinstance(value, Deferred) else value


@pytest_twisted.ensureDeferred
async def test_history_api_set_over_searchdb(stored, built, tmp_path):
    """The history API set answers with the Deferreds of SearchDBHistory
    (the ``history`` of the searchdb plugin's service, ``node.plugins``'
    part, which queries and never writes here)."""
    client, _db, _ = stored
    chain, _rec, hist, info = built
    plugin = SearchDBService(client, chain, str(tmp_path), reactor, index_prefix=PREFIX,
                             writes=False, queries=True)
    mem_api = HistoryApi(Node(chain=chain, plugins={"account_history": hist}), Session())
    db_api = HistoryApi(Node(chain=chain, plugins={"searchdb": plugin}), Session())
    assert db_api.node.account_history() is plugin.history
    calls = [("get_account_history", [name, "1.11.0", 100, "1.11.0"])
             for name in ("init0", "alice-1", info["accounts"][1], "nobody-here")]
    calls += [("get_account_history", ["init0", "1.11.3", 2, "1.11.10"]),
              ("get_account_history", ["init0", "1.11.10", 5, "1.11.3"]),
              ("get_relative_account_history", ["init1", 2, 3, 6]),
              ("get_relative_account_history", ["alice-1", 0, 100, 0]),
              ("get_account_history_operations", ["init0", 5, "1.11.0", "1.11.0", 10]),
              ("get_account_history_operations", ["init1", 4, "1.11.0", "1.11.0", 100])]
    for function, args in calls:
        want = mem_api.call(function, args)
        got = await resolve(db_api.call(function, args))
        assert norm(got) == norm(want), (function, args)
    assert [e["id"] for e in await resolve(db_api.call(
        "get_account_history", ["init0", "1.11.3", 2, "1.11.10"]))] == ["1.11.10", "1.11.9"]


@pytest_twisted.ensureDeferred
async def test_documents_above_head_ignored(stored, built, genesis, new_chain):
    """A database holding more than the block log answers what the chain
    has applied (the block log is the source of truth)."""
    client, _db, _ = stored
    _chain, rec, hist, _info = built
    short = new_chain()
    short_hist = AccountHistory()
    short.add_consumer(short_hist)
    for b in rec.blocks[:4]:
        short.push_block(b.block)
    db = SearchDBHistory(client, PREFIX, short)
    for account in ("1.2.6", "1.2.7", "1.2.8"):
        assert norm(await db.get_account_history(account, 0, 100, 0)) == \
            norm(short_hist.get_account_history(account, 0, 100, 0))
        assert norm(await db.get_relative_account_history(account, 0, 100, 0)) == \
            norm(short_hist.get_relative_account_history(account, 0, 100, 0))
    assert len(short_hist.get_account_history("1.2.6", 0, 100, 0)) < \
        len(hist.get_account_history("1.2.6", 0, 100, 0))


def _applied(m, accounts, op_type=0):
    return AppliedOperation(
        id_num=m, op=[op_type, {"fee": {"amount": 1, "asset_id": "1.3.0"}}], result=[0, {}],
        block_num=m + 1, trx_in_block=0, op_in_trx=0, virtual_op=0, is_virtual=False,
        trx_id=f"{m:040x}", fee_payer=accounts[0], impacted=accounts)


async def _ship_ops(url, prefix, hist, numbering, ops):
    builder = DocumentBuilder(prefix)
    lines = []
    for op in ops:
        op = numbering.numbered(op)
        block = AppliedBlock(op.block_num, "00" * 20, {}, 1451606400 + op.block_num, (op,),
                             False)
        hist.block_applied(block)
        lines.extend(raw for _n, raw in builder.items(
            op.account_history, op, block.block_num, block.time_iso,
            builder.index_for(block.timestamp)))
    await ship(url, [b"".join(lines)])


@pytest_twisted.ensureDeferred
async def test_ath0_quirk_same_answers(stored, osmem):
    """2.9.0 is never reached by graphene's `next` walk; an account whose
    only entry is 2.9.0 reads as having none (test_history.test_ath0_quirk)."""
    client, _db, _ = stored
    prefix = "sq0-"
    hist, numbering = AccountHistory(), SyntheticNumbering()
    db = SearchDBHistory(client, prefix)

    async def same(expected_5=None):
        for account in ("1.2.5", "1.2.6"):
            for start, stop in ((0, 0), (0, 1), (1, 0), (2, 0), (2, 1)):
                for op_type in (0, 1):
                    want = hist.get_account_history_operations(account, op_type, start,
                                                               stop, 10)
                    got = await db.get_account_history_operations(account, op_type, start,
                                                                  stop, 10)
                    assert norm(got) == norm(want), (account, op_type, start, stop)
                assert norm(await db.get_account_history(account, stop, 10, start)) == \
                    norm(hist.get_account_history(account, stop, 10, start))
        if expected_5 is not None:
            got = await db.get_account_history_operations("1.2.5", 0, 0, 0, 10)
            assert [e["id"] for e in got] == expected_5

    await _ship_ops(osmem.url, prefix, hist, numbering,
                    [_applied(0, ("1.2.5", "1.2.6")), _applied(1, ("1.2.6",))])
    await same(expected_5=[])
    assert [e["id"] for e in await db.get_account_history_operations("1.2.6", 0, 0, 0, 10)] \
        == ["1.11.1"]
    await _ship_ops(osmem.url, prefix, hist, numbering, [_applied(2, ("1.2.5",))])
    await same(expected_5=["1.11.2", "1.11.0"])


@pytest_twisted.ensureDeferred
async def test_same_answers_without_template(stored, built, osmem):
    """Indexes created with the database's dynamic mapping (no template
    installed) answer the same."""
    client, _db, _ = stored
    chain, rec, hist, _info = built
    await ship(osmem.url, bulk_bodies(chain, rec.blocks, "sqd-", max_ops=400))
    db = SearchDBHistory(client, "sqd-", chain)
    for account in sorted(hist.accounts()):
        assert norm(await db.get_account_history(account, 0, 100, 0)) == \
            norm(hist.get_account_history(account, 0, 100, 0))
        assert norm(await db.get_relative_account_history(account, 2, 5, 0)) == \
            norm(hist.get_relative_account_history(account, 2, 5, 0))
        assert norm(await db.get_account_history_operations(account, 0, 0, 0, 100)) == \
            norm(hist.get_account_history_operations(account, 0, 0, 0, 100))
    for bad_type in (-1, 1 << 40):
        assert await db.get_account_history_operations("1.2.6", bad_type, 0, 0, 10) == []


@pytest_twisted.ensureDeferred
async def test_database_down_raises_history_error(osmem):
    client = SearchDBClient("http://127.0.0.1:9", "", reactor, request_timeout=5)
    db = SearchDBHistory(client, PREFIX)
    with pytest.raises(HistoryError) as err:
        await db.get_account_history("1.2.6", 0, 10, 0)
    assert "127.0.0.1" not in str(err.value)
    await client.close()


class Es6Root(Resource):
    """An ES 6.2 answering ``GET /`` and recording search paths/bodies."""

    isLeaf = True

    def __init__(self, hits):
        super().__init__()
        self.searches, self.hits = [], hits

    def render_GET(self, request):
        return orjson.dumps({"version": {"number": "6.2.0"}, "tagline": "You Know, for Search"})

    def render_POST(self, request):
        self.searches.append((request.path.decode(), orjson.loads(request.content.read())))
        return orjson.dumps({"hits": {"total": len(self.hits), "hits": self.hits}})


@pytest_twisted.ensureDeferred
async def test_es6_paths_carry_type_data(built):
    _chain, _rec, hist, _info = built
    entry = hist.get_account_history("1.2.6", 0, 1, 0)[0]
    hit = {"_id": "2.9.5", "_source": {
        "account_history": {"account": "1.2.6", "sequence": 3},
        "operation_id_num": int(entry["id"].split(".")[2]), "operation_type": entry["op"][0],
        "operation_history": {k: entry[k] for k in ("trx_in_block", "op_in_trx",
                                                     "virtual_op", "is_virtual")} | {
            "op": orjson.dumps(entry["op"]).decode(),
            "operation_result": orjson.dumps(entry["result"]).decode()},
        "block_data": {"block_num": entry["block_num"], "block_time": entry["block_time"],
                       "trx_id": "00" * 20}}}
    root = Es6Root([hit])
    client = SearchDBClient("http://es6.invalid:9200/", "", Clock(), http_client=StubTreq(root))
    db = SearchDBHistory(client, "chain-")
    got = await db.get_account_history("1.2.6", 0, 1, 0)
    assert norm(got) == norm([entry])
    path, body = root.searches[0]
    assert path == "/chain-*/data/_search"
    assert body["sort"] == [{"operation_id_num": {"order": "desc", "unmapped_type": "long"}}]
    assert {"term": {"account_history.account.keyword": "1.2.6"}} in body["query"]["bool"]["filter"]


def test_entry_from_document_rejects_malformed():
    with pytest.raises(HistoryError):
        entry_from_document({"operation_id_num": 1, "operation_history": {"op": "[0,"}})


def test_returns_deferred_and_limit_zero(stored):
    _client, db, _ = stored
    d = db.get_relative_account_history("1.2.6", 0, 0, 0)
    assert isinstance(d, Deferred)
    assert d.result == []


@pytest_twisted.ensureDeferred
async def test_block_time_and_object_lookups_same_answers(stored, built):
    """get_block_operation_history, get_block_operations_by_time,
    get_account_history_by_time and the history objects of get_objects
    answer from the database as from the in-memory plugin."""
    _client, db, _ = stored
    chain, rec, hist, _info = built
    checked = 0
    for b in rec.blocks:
        for trx in (None, 0, 1):
            want = hist.get_block_operation_history(b.block_num, trx)
            got = await db.get_block_operation_history(b.block_num, trx)
            assert norm(got) == norm(want), (b.block_num, trx)
            checked += bool(want)
        for start in (b.timestamp - 1, b.timestamp):
            want = hist.get_block_operations_by_time(start)
            got = await db.get_block_operations_by_time(start)
            assert norm(got) == norm(want), start
    assert checked > 5
    assert norm(await db.get_block_operations_by_time(None)) == norm(
        hist.get_block_operations_by_time(None))
    times = [None] + [b.timestamp for b in rec.blocks[::3]]
    for account in sorted(hist.accounts()):
        for start in times:
            for limit in (1, 5, 100):
                want = hist.get_account_history_by_time(account, limit, start)
                got = await db.get_account_history_by_time(account, limit, start)
                assert norm(got) == norm(want), (account, limit, start)
    ids = [f"1.11.{m}" for m in (0, 1, hist.operation_count - 1, hist.operation_count + 3)] + [
        f"2.9.{n}" for n in (0, 2, hist.entry_count - 1, hist.entry_count)]
    want = hist.get_history_objects(ids)
    got = await db.get_history_objects(ids)
    assert norm(got) == norm(want) and len(want) == 6
