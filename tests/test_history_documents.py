"""Search documents (wire-contract section 8) compared with the real
documents in tests/fixtures/es, op_object typing over 203 mainnet operation
samples, the visitor data and the bulk item bytes."""

import json
import math
import os

import orjson
import pytest

from nodeapi.applied import AppliedOperation
from nodeapi.history.ids import HistoryNumbering
from nodeapi.history.searchdb.documents import DocumentBuilder, adapt_object, index_name
from nodeapi.history.searchdb.flavors import index_template

from kit.chain import open_chain
from kit.history import Recorder, build_history_chain


FIX = os.path.join(os.path.dirname(__file__), "fixtures")


def fixture_doc(name):
    with open(os.path.join(FIX, "es", f"fixture_data__{name}.json")) as f:
        data = json.load(f)
    return data[0] if isinstance(data, list) else data


def samples():
    with open(os.path.join(FIX, "mainnet_operation_samples.go-bitshares.json")) as f:
        ops = json.load(f)["operations"]
    return [(s["op_id"], s["data"]) for group in ops.values() for s in group]


def leaf_kinds(docs):
    """path -> set of JSON kinds, arrays flattened as the search database
    does (object, string, number, bool; nulls ignored)."""
    kinds = {}

    def walk(v, path):
        if isinstance(v, dict):
            kinds.setdefault(path, set()).add("object")
            for k, x in v.items():
                walk(x, f"{path}.{k}")
        elif isinstance(v, list):
            for x in v:
                walk(x, path)
        elif v is not None:
            kind = ("bool" if isinstance(v, bool) else
                    "number" if isinstance(v, (int, float)) else "string")
            kinds.setdefault(path, set()).add(kind)
    for d in docs:
        walk(d, "")
    return kinds


def applied_op(m, op, result=(0, {}), impacted=("1.2.6",), **kw):
    fields = dict(id_num=m, op=op, result=list(result), block_num=5, trx_in_block=1,
                  op_in_trx=0, virtual_op=0, is_virtual=False, trx_id="ab" * 20,
                  fee_payer=impacted[0], impacted=impacted)
    fields.update(kw)
    return AppliedOperation(**fields)


@pytest.fixture(scope="module")
def chain_docs(genesis, tmp_path_factory):
    chain = open_chain(genesis, tmp_path_factory.mktemp("docs") / "blocks")
    rec = Recorder()
    chain.add_consumer(rec)
    build_history_chain(chain, rounds=2, per_trx=3)

    def lookup(asset_id):
        a = chain.state.get(asset_id)
        return (a["symbol"], a["precision"]) if a else None
    builder = DocumentBuilder("chain-", visitor=True, asset_lookup=lookup)
    numbering = HistoryNumbering()
    docs, raw = [], []
    for b in rec.blocks:
        index = builder.index_for(b.timestamp)
        for op in b.operations:
            entries = numbering.assign(op)
            for e in entries:
                docs.append((index, builder.document(e[:4], op, b.block_num, b.time_iso)))
            raw.extend(builder.items(entries, op, b.block_num, b.time_iso, index))
    return docs, raw


def test_layout_matches_real_documents(chain_docs):
    docs, _ = chain_docs
    real_transfer = fixture_doc("transfer")
    real_trade = fixture_doc("trade")
    transfer = next(d for _i, d in docs if d["operation_type"] == 0)
    fill = next(d for _i, d in docs if d["operation_type"] == 4)
    for ours, real in ((transfer, real_transfer), (fill, real_trade)):
        assert set(ours["account_history"]) == set(real["account_history"])
        assert set(real["operation_history"]) <= set(ours["operation_history"])
        assert set(ours["operation_history"]) - set(real["operation_history"]) == {
            "is_virtual", "fee_payer", "operation_result_object"}
        # bitshares-core 7.x bulk_struct / operation_history_struct fields
        assert list(ours) == ["account_history", "operation_history", "operation_type",
                              "operation_id_num", "block_data", "additional_data"]
        assert list(ours["operation_history"]) == [
            "trx_in_block", "op_in_trx", "virtual_op", "is_virtual", "fee_payer", "op",
            "operation_result", "op_object", "operation_result_object"]
        assert set(ours["block_data"]) == {"block_num", "block_time", "trx_id"}
        assert set(ours["operation_history"]["op_object"]) == \
            set(real["operation_history"]["op_object"])
        for key in ("operation_type", "operation_id_num"):
            assert type(ours[key]) is type(real[key])
        assert type(ours["account_history"]["sequence"]) is int
        assert isinstance(ours["operation_history"]["operation_result"], str)
    # op is the JSON string of [type, {...}], as in the real documents
    assert json.loads(transfer["operation_history"]["op"])[0] == 0
    assert transfer["operation_history"]["op_object"]["amount_"]["asset_id"] == "1.3.0"
    assert "amount" not in transfer["operation_history"]["op_object"]
    assert fill["operation_history"]["is_virtual"] is True
    assert fill["operation_history"]["virtual_op"] >= 1


def test_adapt_reproduces_real_op_object():
    real = fixture_doc("transfer_null_op_object")
    op = json.loads(real["operation_history"]["op"])
    adapted = adapt_object(op[1])
    assert adapted["memo"]["nonce"] == "402434830178474"
    assert adapted["amount_"] == op[1]["amount"]
    trade = fixture_doc("trade_null_op_object")
    op = json.loads(trade["operation_history"]["op"])
    assert adapt_object(op[1]) == op[1]  # nothing to rename in a fill
    settle = fixture_doc("settlement_regular")
    data = dict(settle["operation_history"]["op_object"])
    data["amount"] = data.pop("amount_")
    assert adapt_object(data) == settle["operation_history"]["op_object"]


def test_op_object_typed_consistently_over_mainnet_samples(chain_docs):
    objs = [{"op_object": adapt_object(data)} for _t, data in samples()]
    objs += [{"op_object": d["operation_history"]["op_object"]} for _i, d in chain_docs[0]]
    assert len(objs) > 203
    kinds = leaf_kinds(objs)
    conflicts = {p: k for p, k in kinds.items() if len(k) > 1}
    assert conflicts == {}
    # authorities: string arrays plus typed *_object entries
    create = adapt_object(next(d for t, d in samples() if t == 5))
    assert all(isinstance(x, str) for pair in create["owner"]["key_auths"] for x in pair)
    assert create["owner"]["key_auths_object"][0]["data_int"] == 1
    assert create["owner"]["key_auths_object"][0]["key_string"].startswith("BTS")
    # proposals: proposed_ops as a JSON string plus a typed object list
    prop = adapt_object(next(d for t, d in samples() if t == 22))
    assert isinstance(prop["proposed_ops"], str)
    assert isinstance(prop["proposed_ops_object"], list)


def test_quoted_64bit_integers_become_numbers():
    data = {"fee": {"amount": "5000000000", "asset_id": "1.3.0"}, "max_supply": "1000000000000000",
            "description": "123"}
    out = adapt_object(data)
    assert out["fee"]["amount"] == 5000000000 and out["max_supply"] == 10 ** 15
    assert out["description"] == "123"


def test_visitor_data(chain_docs):
    docs, _ = chain_docs
    for _i, d in docs:
        add = d["additional_data"]
        fee = add["fee_data"]
        assert set(fee) == {"asset", "asset_name", "amount", "amount_units"}
        assert isinstance(fee["amount_units"], float) and math.isfinite(fee["amount_units"])
        if d["operation_type"] == 0:
            t = add["transfer_data"]
            op = json.loads(d["operation_history"]["op"])[1]
            assert t["from"] == op["from"] and t["to"] == op["to"]
            assert t["amount"] == int(op["amount"]["amount"])  # op is wire JSON
            assert t["asset_name"] == "TEST"
            assert t["amount_units"] == int(op["amount"]["amount"]) / 10 ** 5
        else:  # the reference's empty transfer_data (visitor_struct has all three)
            assert add["transfer_data"] == {"asset": "1.3.0", "asset_name": "TEST", "amount": 0,
                                            "amount_units": 0.0, "from": "1.2.0", "to": "1.2.0"}
        assert list(add) == ["fee_data", "transfer_data", "fill_data"]
    fills = [d for _i, d in docs if d["operation_type"] == 4]
    assert {d["additional_data"]["fee_data"]["asset_name"] for d in fills} <= {"TEST", "GOLD"}


def test_unknown_asset_never_nan():
    builder = DocumentBuilder(visitor=True, asset_lookup=lambda a: None)
    op = applied_op(0, [0, {"fee": {"amount": 10, "asset_id": "1.3.99"}, "from": "1.2.6",
                            "to": "1.2.7", "amount": {"amount": 7, "asset_id": "1.3.99"},
                            "extensions": []}], impacted=("1.2.6", "1.2.7"))
    doc = builder.document((0, "1.2.6", 1, 0), op, 5, "2016-01-01T00:00:00")
    assert doc["additional_data"]["transfer_data"]["amount_units"] == 7.0
    assert b"NaN" not in orjson.dumps(doc)


def test_bulk_items_bytes(chain_docs):
    docs, raw = chain_docs
    assert len(raw) == len(docs)
    for (n, item), (index, doc) in zip(raw, docs):
        action, body, rest = item.split(b"\n")
        assert rest == b""
        assert orjson.loads(action) == {"create": {"_index": index, "_id": f"2.9.{n}"}}
        assert orjson.loads(body) == doc
        assert doc["account_history"]["id"] == f"2.9.{n}"
    assert [n for n, _ in raw] == list(range(len(raw)))
    assert {i for i, _ in docs} == {"chain-2016-01", "chain-2016-02"}


def test_es6_action_and_templates():
    builder = DocumentBuilder("x-", doc_type="data")
    op = applied_op(3, [37, {"fee": {"amount": 0, "asset_id": "1.3.0"}}])
    (n, item), = builder.items([(9, "1.2.6", 1, 0)], op, 5, "2016-01-01T00:00:00",
                               builder.index_for(1453108706))
    action = orjson.loads(item.split(b"\n")[0])
    assert action == {"create": {"_index": "x-2016-01", "_type": "data", "_id": "2.9.9"}}
    assert index_name("chain-", 0) == "chain-1970-01"
    es6 = index_template("x-", "es6")
    assert es6["index_patterns"] == ["x-*"] and "data" in es6["mappings"]
    comp = index_template("x-", "composable")["template"]["mappings"]["properties"]
    assert comp["operation_history"]["properties"]["op"] == {"type": "text", "index": False}
    assert comp["block_data"]["properties"]["block_time"]["type"] == "date"
    assert comp["account_history"]["properties"]["account"]["type"] == "keyword"
    legacy = index_template("x-", "legacy")
    assert legacy["mappings"] == index_template("x-", "composable")["template"]["mappings"]
