"""Clients' queries on the stored documents (docs/searchdb-plugin.rst,
"Endpoints"): count, search, ``_cat/indices`` and the four query recipes,
run as HTTP GET with a JSON body against a real osmem-server holding the
documents of a real chain (two calendar months), with and without the
plugin's index template.  Expected answers are computed from the applied
blocks and the chain's ohi/ath numbering."""

import orjson
import pytest
import pytest_twisted
import treq
from twisted.internet import reactor

from nodeapi.plugins.searchdb.client import SearchDBClient
from nodeapi.plugins.searchdb.documents import index_name
from nodeapi.plugins.searchdb.flavors import ServerInfo

from kit.searchdb import bulk_bodies, install_template, ship


pytestmark = pytest.mark.slow

JSON = {b"Content-Type": [b"application/json"]}


@pytest.fixture(scope="module")
def entries(built):  # noqa: F811
    """Every document expected, as dicts: n, account, m, type, block_num,
    block_time, trx_in_block, trx_id, index."""
    _chain, rec, _hist, _info = built
    out = []
    for b in rec.blocks:
        for op in b.operations:
            for n, account, seq, _nxt in op.account_history:
                out.append({"n": n, "account": account, "m": op.id_num, "seq": seq,
                            "type": op.op[0], "block_num": b.block_num,
                            "block_time": b.time_iso, "trx_in_block": op.trx_in_block,
                            "trx_id": op.trx_id, "timestamp": b.timestamp})
    return out


@pytest_twisted.async_yield_fixture(scope="module", params=["template", "dynamic"])
async def db(request, osmem, built):  # noqa: F811
    """The documents shipped under ``rc-`` (with the plugin's template) or
    ``rd-`` (database default dynamic mapping); yields (client, prefix)."""
    chain, rec, _hist, _info = built
    prefix = "rc-" if request.param == "template" else "rd-"
    if request.param == "template":
        await install_template(osmem.url, prefix)
    await ship(osmem.url, bulk_bodies(chain, rec.blocks, prefix))
    client = SearchDBClient(osmem.url, "", reactor, request_timeout=10)
    await client.detect()
    yield client, prefix
    await client.close()


async def get_json(client, path: str, body=None):
    """HTTP GET with a JSON body, as the spec's clients send it."""
    resp = await treq.request("GET", client.base + path, headers=JSON,
                              data=None if body is None else orjson.dumps(body))
    content = await resp.content()
    assert resp.code == 200, content
    return orjson.loads(content)


async def search(client, prefix, must, source=None, size=1000):
    body = {"query": {"bool": {"must": must}}, "size": size}
    if source is not None:
        body["_source"] = source
    return await get_json(client, client.info.search_path(prefix, "_search") + "?pretty=true",
                          body)


def hit_ids(answer) -> set:
    return {h["_id"] for h in answer["hits"]["hits"]}


def total(answer) -> int:
    t = answer["hits"]["total"]
    return t["value"] if isinstance(t, dict) else t


def ath(rows) -> set:
    return {f"2.9.{r['n']}" for r in rows}


def test_spec_paths_per_flavour():
    """ES 6 paths carry the type ``data`` (the spec's paths); newer servers
    and OpenSearch are typeless."""
    assert ServerInfo("6.2.0", "elasticsearch", 6).search_path("chain-", "_count") == \
        "/chain-*/data/_count"
    assert ServerInfo("7.17.0", "elasticsearch", 7).search_path("chain-", "_search") == \
        "/chain-*/_search"
    assert ServerInfo("3.8.0", "opensearch", 3).search_path("chain-", "_search") == \
        "/chain-*/_search"


@pytest_twisted.ensureDeferred
async def test_count(db, entries):
    client, prefix = db
    answer = await get_json(client, client.info.search_path(prefix, "_count") + "?pretty=true",
                            {"query": {"bool": {"must": [{"match_all": {}}]}}})
    assert answer["count"] == len(entries)
    shards = answer["_shards"]
    assert set(shards) >= {"total", "successful", "skipped", "failed"}
    assert shards["failed"] == 0 and all(isinstance(v, int) for v in shards.values())


@pytest_twisted.ensureDeferred
async def test_cat_indices(db, entries):
    """One line per monthly index: health, status, name, uuid, pri, rep,
    docs.count, docs.deleted, store.size, pri.store.size."""
    client, prefix = db
    resp = await treq.get(client.base + "/_cat/indices")
    assert resp.code == 200
    lines = [ln.split() for ln in (await resp.text()).splitlines() if ln.strip()]
    mine = {cols[2]: cols for cols in lines if cols[2].startswith(prefix)}
    expected = {}
    for e in entries:
        name = index_name(prefix, e["timestamp"])
        expected[name] = expected.get(name, 0) + 1
    assert len(expected) == 2  # the chain spans two calendar months
    assert set(mine) == set(expected)
    for name, cols in mine.items():
        assert len(cols) == 10
        assert cols[0] in ("green", "yellow") and cols[1] == "open"
        assert int(cols[6]) == expected[name] and int(cols[7]) == 0


@pytest_twisted.ensureDeferred
async def test_search_returns_documents(db, entries):
    client, prefix = db
    answer = await search(client, prefix, [{"match_all": {}}])
    assert total(answer) == len(entries)
    by_id = {h["_id"]: h for h in answer["hits"]["hits"]}
    assert set(by_id) == ath(entries)
    for e in entries[:40]:
        hit = by_id[f"2.9.{e['n']}"]
        assert hit["_index"] == index_name(prefix, e["timestamp"])
        src = hit["_source"]
        assert src["account_history"]["account"] == e["account"]
        assert src["account_history"]["sequence"] == e["seq"]
        assert src["operation_id_num"] == e["m"] and src["operation_type"] == e["type"]
        assert src["block_data"] == {"block_num": e["block_num"], "block_time": e["block_time"],
                                     "trx_id": e["trx_id"]}
        assert orjson.loads(src["operation_history"]["op"])[0] == e["type"]
    # _source limits the fields returned
    answer = await search(client, prefix, [{"match_all": {}}], source=["operation_id_num"],
                          size=3)
    assert all(set(h["_source"]) == {"operation_id_num"} for h in answer["hits"]["hits"])


@pytest_twisted.ensureDeferred
async def test_recipe1_account_time_window(db, entries):
    client, prefix = db
    times = sorted({e["block_time"] for e in entries})
    for account in ("1.2.6", "1.2.7", sorted({e["account"] for e in entries})[-1]):
        for lo, hi in ((times[0], times[-1]), (times[2], times[-3]),
                       (times[len(times) // 2], times[-1]), (times[3], times[3])):
            must = [{"term": {"account_history.account.keyword": account}},
                    {"range": {"block_data.block_time": {"gte": lo, "lte": hi}}}]
            want = ath(e for e in entries
                       if e["account"] == account and lo <= e["block_time"] <= hi)
            answer = await search(client, prefix, must)
            assert hit_ids(answer) == want, (account, lo, hi)
            assert total(answer) == len(want)
    assert want


@pytest_twisted.ensureDeferred
async def test_recipe2_account_block_range(db, entries):
    client, prefix = db
    head = max(e["block_num"] for e in entries)
    nonempty = 0
    for account in ("1.2.6", "1.2.8", "1.2.999"):
        for lo, hi in ((1, head), (3, 6), (head - 2, head), (5, 4)):
            must = [{"term": {"account_history.account.keyword": account}},
                    {"range": {"block_data.block_num": {"gte": lo, "lte": hi}}}]
            want = ath(e for e in entries if e["account"] == account and lo <= e["block_num"] <= hi)
            assert hit_ids(await search(client, prefix, must)) == want, (account, lo, hi)
            nonempty += bool(want)
    assert nonempty >= 5


@pytest_twisted.ensureDeferred
async def test_recipe3_trx_id_by_block_and_position(db, entries):
    client, prefix = db
    trxs = sorted({(e["block_num"], e["trx_in_block"], e["trx_id"]) for e in entries
                   if e["trx_id"]})
    assert len(trxs) > 8
    for block_num, pos, trx_id in trxs[::2]:
        must = [{"term": {"block_data.block_num": block_num}},
                {"term": {"operation_history.trx_in_block": pos}}]
        only = await search(client, prefix, must, source=["block_data.trx_id"])
        hits = only["hits"]["hits"]
        assert hits and all(h["_source"] == {"block_data": {"trx_id": trx_id}} for h in hits)
        # without _source: every document of the transaction's operations
        full = await search(client, prefix, must)
        want = ath(e for e in entries if e["block_num"] == block_num
                   and e["trx_in_block"] == pos)
        assert hit_ids(full) == want
        assert {h["_source"]["block_data"]["trx_id"] for h in full["hits"]["hits"]} == {trx_id}


@pytest_twisted.ensureDeferred
async def test_recipe4_operations_of_a_transaction(db, entries):
    client, prefix = db
    by_trx: dict = {}
    for e in entries:
        by_trx.setdefault(e["trx_id"], []).append(e)
    big = max(by_trx, key=lambda t: len(by_trx[t]))
    assert len(by_trx[big]) > 5  # the batched issue + transfers transaction
    for trx_id in [big] + [t for t in sorted(by_trx) if t][:6]:
        answer = await search(client, prefix, [{"term": {"block_data.trx_id": trx_id}}])
        assert hit_ids(answer) == ath(by_trx[trx_id])
        ms = {h["_source"]["operation_id_num"] for h in answer["hits"]["hits"]}
        assert ms == {e["m"] for e in by_trx[trx_id]}
    answer = await search(client, prefix, [{"term": {"block_data.trx_id": "ff" * 20}}])
    assert answer["hits"]["hits"] == []
