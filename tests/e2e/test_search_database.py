"""The search database after the clients' story (docs/searchdb-plugin.rst,
"Endpoints"; docs/wire-contract.rst section 8): the spec's count, search and
``_cat/indices`` calls and the four query recipes, as HTTP GET with a JSON
body against the osmem-server the daemon ships to, checked against the
eight operations of :mod:`e2e.flows` and their fourteen (operation,
impacted account) documents ``2.9.0`` .. ``2.9.13``."""

import json
import time

import pytest
import requests

from e2e.flows import ALICE, BOB
from kit.dbclient import DB, PREFIX, same_wire


pytestmark = [pytest.mark.e2e, pytest.mark.slow]

#: (1.11.M, account name) of 2.9.N, N = position: impacted accounts of each
#: operation in ascending id order, account_create adding the new account.
ATH = [(0, "init0"), (1, "init0"), (1, ALICE), (2, "init0"), (2, BOB), (3, "init0"),
       (3, ALICE), (4, "init0"), (4, BOB), (5, ALICE), (5, BOB), (6, "init0"), (7, "init0"),
       (7, ALICE)]
FEE_PAYER = {0: "init0", 1: "init0", 2: "init0", 3: "init0", 4: "init0", 5: ALICE,
             6: "init0", 7: "init0"}


@pytest.fixture(scope="module")
def db(osmem, node, scenario, plugins):
    """The database once the shipper has caught up with the story (polls
    ``_count`` after ``_refresh``, 30 s at most)."""
    if "searchdb" not in plugins.split():
        pytest.skip(f"the daemon runs {plugins!r} (NODEAPI_E2E_HISTORY): no search database")
    db = DB(osmem.url)
    deadline = time.time() + 30
    while True:
        try:
            n = db.count()["count"]
        except (AssertionError, KeyError):
            n = None  # no index yet
        if n is not None and n >= len(ATH) or time.time() > deadline:
            break
        time.sleep(0.3)
    assert n == len(ATH), f"{n} documents shipped:\n{node.log()[-3000:]}"
    return db


@pytest.fixture(scope="module")
def expected(scenario, node):
    """``{"2.9.N": document fields}`` computed from the broadcast answers."""
    ids = scenario.ids
    times = {r["block_num"]: node.call("get_block_header", r["block_num"])["timestamp"]
             for r in scenario.results}
    out, seq, prev = {}, {}, {}
    for n, (m, name) in enumerate(ATH):
        r, account = scenario.results[m], ids[name]
        seq[account] = seq.get(account, 0) + 1
        out[f"2.9.{n}"] = {
            "m": m, "account": account, "sequence": seq[account],
            "next": prev.get(account, "2.9.0"), "r": r, "time": times[r["block_num"]],
            "index": PREFIX + times[r["block_num"]][:7]}
        prev[account] = f"2.9.{n}"
    return out


def ath_of(name, ms) -> set:
    return {f"2.9.{n}" for n, (m, who) in enumerate(ATH) if who == name and m in ms}


def test_count(db):
    answer = db.count()
    assert answer["count"] == 14
    assert set(answer["_shards"]) >= {"total", "successful", "skipped", "failed"}
    assert answer["_shards"]["failed"] == 0


def test_every_document_and_its_fields(db, expected, scenario):
    hits = db.search([{"match_all": {}}])
    assert {h["_id"] for h in hits} == set(expected)
    for h in hits:
        e = expected[h["_id"]]
        r, src = e["r"], h["_source"]
        assert h["_index"] == e["index"]
        assert src["account_history"] == {"id": h["_id"], "account": e["account"],
                                          "operation_id": f"1.11.{e['m']}",
                                          "sequence": e["sequence"], "next": e["next"]}
        oh = src["operation_history"]
        assert (oh["trx_in_block"], oh["op_in_trx"], oh["virtual_op"], oh["is_virtual"]) == \
            (0, 0, 0, False)
        assert oh["fee_payer"] == scenario.ids[FEE_PAYER[e["m"]]]
        assert same_wire(oh["op"], r["operations"][0])
        assert same_wire(oh["operation_result"], r["operation_results"][0])
        assert src["operation_type"] == r["operations"][0][0]
        assert src["operation_id_num"] == e["m"]
        assert src["block_data"] == {"block_num": r["block_num"], "block_time": e["time"],
                                     "trx_id": r["id"]}


def test_documents_per_account(db, scenario):
    for name, n in (("init0", 7), (ALICE, 4), (BOB, 3)):
        hits = db.search([{"term": {"account_history.account.keyword": scenario.ids[name]}}])
        assert {h["_id"] for h in hits} == ath_of(name, range(8)), name
        assert len(hits) == n


def test_cat_indices(db, expected):
    resp = requests.get(db.url + "/_cat/indices", timeout=10)
    assert resp.status_code == 200
    mine = {cols[2]: cols for cols in (ln.split() for ln in resp.text.splitlines())
            if len(cols) > 2 and cols[2].startswith(PREFIX)}
    want = {}
    for e in expected.values():
        want[e["index"]] = want.get(e["index"], 0) + 1
    assert set(mine) == set(want)
    for name, cols in mine.items():
        assert len(cols) == 10 and cols[1] == "open" and cols[0] in ("green", "yellow")
        assert (int(cols[6]), int(cols[7])) == (want[name], 0)


def test_recipe_1_account_in_time_window(db, scenario, expected):
    times = {e["m"]: e["time"] for e in expected.values()}
    hits = db.search([
        {"term": {"account_history.account.keyword": scenario.ids[ALICE]}},
        {"range": {"block_data.block_time": {"gte": times[3], "lte": times[5]}}}])
    assert {h["_id"] for h in hits} == ath_of(ALICE, {3, 5})


def test_recipe_2_account_in_block_range(db, scenario):
    res = scenario.results
    hits = db.search([
        {"term": {"account_history.account.keyword": scenario.ids[BOB]}},
        {"range": {"block_data.block_num": {"gte": res[2]["block_num"],
                                            "lte": res[4]["block_num"]}}}])
    assert {h["_id"] for h in hits} == ath_of(BOB, {2, 4})


def test_recipe_3_trx_id_from_block_and_position(db, scenario):
    r = scenario.results[5]
    must = [{"term": {"block_data.block_num": r["block_num"]}},
            {"term": {"operation_history.trx_in_block": 0}}]
    hits = db.search(must, source=["block_data.trx_id"])
    assert sorted(h["_id"] for h in hits) == ["2.9.10", "2.9.9"]
    assert [h["_source"] for h in hits] == [{"block_data": {"trx_id": r["id"]}}] * 2
    # without _source: every operation of the transaction, whole
    assert {h["_source"]["operation_id_num"] for h in db.search(must)} == {5}


def test_recipe_4_operations_of_a_transaction(db, scenario):
    r = scenario.results[7]
    hits = db.search([{"term": {"block_data.trx_id": r["id"]}}])
    assert {h["_id"] for h in hits} == {"2.9.12", "2.9.13"}
    assert all(same_wire(h["_source"]["operation_history"]["op"], r["operations"][0])
               for h in hits)


def test_daemon_history_api_matches_the_documents(db, node, scenario):
    """Under searchdb the daemon answers history from these documents."""
    hits = {h["_id"]: h["_source"] for h in db.search([{"match_all": {}}])}
    for name in ("init0", ALICE, BOB):
        account = scenario.ids[name]
        entries = node.call("get_account_history", account, "1.11.0", 100, "1.11.0",
                            api="history")
        docs = sorted((s for s in hits.values() if s["account_history"]["account"] == account),
                      key=lambda s: -s["operation_id_num"])
        assert [e["id"] for e in entries] == [s["account_history"]["operation_id"]
                                              for s in docs]
        for e, s in zip(entries, docs):
            assert same_wire(s["operation_history"]["op"], e["op"])
            assert e["block_num"] == s["block_data"]["block_num"]
            assert e["block_time"] == s["block_data"]["block_time"]
    # and no document is written for empty blocks produced since
    node.wait_head(node.head()[0] + 2)
    assert db.count()["count"] == 14


def test_document_op_is_the_wire_json(db, scenario):
    """The ``op`` string of 2.9.0 (total_claimed 10^15) and 2.9.5 (memo
    nonce, a uint64) is the operation's wire JSON."""
    hits = {h["_id"]: h["_source"] for h in db.search([{"match_all": {}}])}
    for ath, m in (("2.9.0", 0), ("2.9.5", 3)):
        assert json.loads(hits[ath]["operation_history"]["op"]) == scenario.op(m)
