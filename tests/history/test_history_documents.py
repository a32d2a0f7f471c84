"""Search documents (wire-contract section 8) compared with the real
documents in tests/fixtures/es, op_object typing over 203 mainnet operation
samples, the visitor data and the bulk item bytes."""

import json
import math
import os

import orjson
import pytest

from nodeapi.applied import AppliedOperation
from nodeapi.plugins.searchdb.documents import DocumentBuilder, adapt_object, index_name
from nodeapi.plugins.searchdb.flavors import index_template

from kit.chain import open_chain
from kit.history import Recorder, build_history_chain
from kit.paths import FIXTURES


FIX = FIXTURES


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
    docs, raw = [], []
    for b in rec.blocks:
        index = builder.index_for(b.timestamp)
        for op in b.operations:
            entries = op.account_history
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


def test_nonce_is_fc_as_string_of_the_number():
    """bitshares-core libraries/utilities/elasticsearch.cpp
    ``es_data_adaptor::adapt``: ``o["nonce"] = o["nonce"].as_string()`` on
    the in-memory variant, where the ``uint64_t`` nonce is a number: plain
    decimal text.  The producing node (nonce an int) and an indexer (nonce
    read from the wire as a string beyond 32 bits) write the same."""
    real = fixture_doc("transfer_null_op_object")
    op = json.loads(real["operation_history"]["op"])[1]
    in_memory = dict(op, memo=dict(op["memo"], nonce=402434830178474))
    from_wire = dict(op, memo=dict(op["memo"], nonce="402434830178474"))
    assert adapt_object(in_memory)["memo"]["nonce"] == "402434830178474"
    assert adapt_object(from_wire) == adapt_object(in_memory)
    small = dict(op, memo=dict(op["memo"], nonce=7))
    assert adapt_object(small)["memo"]["nonce"] == "7"
    # scalars inside arrays go through as_string too (in_situ_adapt)
    assert adapt_object({"xs": [2 ** 40, True, None, "a"]})["xs"] == [
        "1099511627776", "true", "", "a"]


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


# -- parity with bitshares-core 7.x elasticsearch_plugin documents --------------------

REAL = ("transfer", "trade", "settlement_regular", "settlement_regular_new", "settlement_gs",
        "settlement_gs_old_style", "transfer_null_op_object", "trade_null_op_object")


def rebuilt(real):
    """The applied operation and numbering entry of a real document (its
    operation from ``op`` or, when that is "", from ``op_object`` with the
    adaptor's renames undone)."""
    oh = real["operation_history"]
    if oh["op"]:
        op = json.loads(oh["op"])
    else:
        data = {("amount" if k == "amount_" else k): v for k, v in oh["op_object"].items()}
        op = [real["operation_type"], data]
    ah = real["account_history"]
    applied = applied_op(real["operation_id_num"], op, json.loads(oh["operation_result"]),
                         impacted=(ah["account"],), trx_in_block=oh["trx_in_block"],
                         op_in_trx=oh["op_in_trx"], virtual_op=oh["virtual_op"],
                         is_virtual=real["operation_type"] == 4,
                         block_num=real["block_data"]["block_num"],
                         trx_id=real["block_data"]["trx_id"])
    entry = (int(ah["id"][4:]), ah["account"], ah["sequence"], int(ah["next"][4:]))
    return applied, entry


def leaves(doc, path=""):
    """{path: value} of every leaf (lists whole)."""
    if isinstance(doc, dict) and doc:
        out = {}
        for k, v in doc.items():
            out.update(leaves(v, f"{path}.{k}"))
        return out
    return {path: doc}


@pytest.mark.parametrize("name", REAL)
def test_real_documents_reproduced(name):
    """Built from the operation of a real mainnet document (transfers, fills,
    asset settlements incl. those during a global settlement), our document
    holds every field of the real one with the same value, and the fields
    bitshares-core 7.x added with the types its bulk_struct gives."""
    real = fixture_doc(name)
    op, entry = rebuilt(real)
    with_string = real["operation_history"]["op"] != ""
    with_object = real["operation_history"]["op_object"] is not None
    builder = DocumentBuilder(operation_string=with_string, operation_object=with_object)
    ours = builder.document(entry, op, real["block_data"]["block_num"],
                            real["block_data"]["block_time"])
    ours_leaves, real_leaves = leaves(ours), leaves(real)
    for path, value in real_leaves.items():
        assert ours_leaves[path] == value, path
        assert type(ours_leaves[path]) is type(value), path
    extra = set(ours_leaves) - set(real_leaves)
    assert {p for p in extra if not p.startswith(
        ".operation_history.operation_result_object")} == {
        ".operation_history.is_virtual", ".operation_history.fee_payer"}
    result = ours["operation_history"]["operation_result_object"]
    if with_object:
        which, value = json.loads(real["operation_history"]["operation_result"])
        assert result["which"] == which
        kind = {dict: "object", str: "string"}[type(value)]
        assert list(result) == ["which", f"data_{kind}"]
    else:
        assert result is None


def test_operation_result_objects():
    """es_data_adaptor::adapt_static_variant of the result kinds: void,
    object id, asset, extendable (paid / received / new_objects / fees)."""
    from nodeapi.plugins.searchdb.adaptor import adapt_static_variant
    assert adapt_static_variant([0, {}]) == {"which": 0, "data_object": {}}
    assert adapt_static_variant([1, "1.7.5"]) == {"which": 1, "data_string": "1.7.5"}
    asset = {"amount": 61699652, "asset_id": "1.3.0"}
    assert adapt_static_variant([2, asset]) == {"which": 2, "data_object": asset}
    gs = json.loads(fixture_doc("settlement_gs")["operation_history"]["operation_result"])
    out = adapt_static_variant(gs)
    assert out["which"] == 5
    assert out["data_object"]["paid"] == gs[1]["paid"]
    assert adapt_static_variant([5, {"new_objects": ["1.4.13254"]}]) == {
        "which": 5, "data_object": {"new_objects": ["1.4.13254"]}}
    assert adapt_static_variant([0, {}], 0) == "[0,{}]"


def test_fill_data_of_chain_fills(chain_docs):
    """The visitor's fill_data of fills made on the chain, as the reference's
    doVisitor computes it (elasticsearch_plugin.cpp): amounts and units of
    both sides, fill_price = base/quote amounts, fill_price_units =
    received units per paid unit, is_maker."""
    docs, _ = chain_docs
    fills = [d for _i, d in docs if d["operation_type"] == 4]
    assert {d["operation_history"]["op_object"]["is_maker"] for d in fills} == {True, False}
    precision = {"1.3.0": 10 ** 5, "1.3.1": 10 ** 3}
    names = {"1.3.0": "TEST", "1.3.1": "GOLD"}
    for d in fills:
        op = d["operation_history"]["op_object"]
        f = d["additional_data"]["fill_data"]
        pays, receives = op["pays"], op["receives"]
        assert f == {
            "order_id": op["order_id"], "account_id": op["account_id"],
            "pays_asset_id": pays["asset_id"], "pays_asset_name": names[pays["asset_id"]],
            "pays_amount": pays["amount"],
            "pays_amount_units": pays["amount"] / precision[pays["asset_id"]],
            "receives_asset_id": receives["asset_id"],
            "receives_asset_name": names[receives["asset_id"]],
            "receives_amount": receives["amount"],
            "receives_amount_units": receives["amount"] / precision[receives["asset_id"]],
            "fill_price": op["fill_price"]["base"]["amount"] / op["fill_price"]["quote"]["amount"],
            "fill_price_units": (receives["amount"] / precision[receives["asset_id"]])
            / (pays["amount"] / precision[pays["asset_id"]]),
            "is_maker": op["is_maker"]}
        assert d["block_data"]["trx_id"] != ""  # fills of a transaction keep its id
    transfer = next(d for _i, d in docs if d["operation_type"] == 0)
    assert transfer["additional_data"]["fill_data"] == {
        "order_id": "0.0.0", "account_id": "1.2.0", "pays_asset_id": "1.3.0",
        "pays_asset_name": "TEST", "pays_amount": 0, "pays_amount_units": 0.0,
        "receives_asset_id": "1.3.0", "receives_asset_name": "TEST", "receives_amount": 0,
        "receives_amount_units": 0.0, "fill_price": 0.0, "fill_price_units": 0.0,
        "is_maker": False}


def test_block_level_virtual_operation_trx_id():
    """The reference's doBlock writes "" for an operation past the block's
    transactions (block-level virtual operations); the chain gives those
    the zero id."""
    builder = DocumentBuilder()
    fill = [4, {"fee": {"amount": 0, "asset_id": "1.3.0"}, "order_id": "1.7.1",
                "account_id": "1.2.6", "pays": {"amount": 5, "asset_id": "1.3.0"},
                "receives": {"amount": 1, "asset_id": "1.3.1"},
                "fill_price": {"base": {"amount": 5, "asset_id": "1.3.0"},
                               "quote": {"amount": 1, "asset_id": "1.3.1"}},
                "is_maker": True}]
    block_level = applied_op(3, fill, trx_id="0" * 40, trx_in_block=2, is_virtual=True,
                             virtual_op=1)
    doc = builder.document((0, "1.2.6", 1, 0), block_level, 5, "2016-01-01T00:00:00")
    assert doc["block_data"]["trx_id"] == ""
    in_trx = applied_op(3, fill, trx_id="ab" * 20, is_virtual=True, virtual_op=1)
    doc = builder.document((0, "1.2.6", 1, 0), in_trx, 5, "2016-01-01T00:00:00")
    assert doc["block_data"]["trx_id"] == "ab" * 20


def test_max_mapping_depth():
    """elasticsearch-max-mapping-depth: op_object and operation_result_object
    get depth - 2 levels (they sit at depth 2); what lies deeper is a JSON
    string."""
    real = fixture_doc("transfer_null_op_object")
    op, entry = rebuilt(real)
    op = applied_op(op.id_num, op.op, [2, {"amount": 1, "asset_id": "1.3.0"}])

    def doc(depth):
        return DocumentBuilder(max_mapping_depth=depth).document(entry, op, 5, "2016-01-01T00:00:00")
    full = doc(20)["operation_history"]
    assert full["op_object"]["memo"]["nonce"] == "402434830178474"
    assert isinstance(full["op_object"]["amount_"], dict)
    two = doc(2)["operation_history"]  # nothing left for the objects
    assert json.loads(two["op_object"])["amount"] == {"amount": 203463500, "asset_id": "1.3.2635"}
    assert json.loads(two["operation_result_object"]) == [2, {"amount": 1, "asset_id": "1.3.0"}]
    three = doc(3)["operation_history"]  # one level: inner objects become strings
    assert isinstance(three["op_object"]["amount_"], str)
    assert isinstance(three["op_object"]["memo"], str)
    assert three["op_object"]["from"] == "1.2.973383"
    assert three["operation_result_object"] == {
        "which": 2, "data_object": '{"amount":1,"asset_id":"1.3.0"}'}


def test_operation_object_and_string_switches():
    """elasticsearch-operation-object false: op_object and
    operation_result_object null; elasticsearch-operation-string false:
    op "" (the real documents of both kinds are in tests/fixtures/es)."""
    op, entry = rebuilt(fixture_doc("transfer"))
    none = DocumentBuilder(operation_object=False, operation_string=False)
    oh = none.document(entry, op, 5, "2016-01-01T00:00:00")["operation_history"]
    assert oh["op"] == "" and oh["op_object"] is None and oh["operation_result_object"] is None
    assert oh["operation_result"] == "[0,{}]"
    both = DocumentBuilder().document(entry, op, 5, "2016-01-01T00:00:00")["operation_history"]
    assert json.loads(both["op"]) == op.op and both["op_object"]["amount_"]


def test_start_after_block_items():
    """elasticsearch-start-es-after-block N: no documents for blocks up to N."""
    op, entry = rebuilt(fixture_doc("transfer"))
    builder = DocumentBuilder(start_after_block=7)
    assert builder.items([entry], op, 7, "2016-01-01T00:00:00", "chain-2016-01") == []
    assert len(builder.items([entry], op, 8, "2016-01-01T00:00:00", "chain-2016-01")) == 1


def test_no_entries_no_document_part():
    """An operation without entries to write gives no items and its
    document part is not built at all (the service asks for the popped
    ids' ``index`` items and the rest's ``create`` items of every
    operation, most often with no popped ids): an operation whose part
    cannot be encoded answers ``[]`` and raises only once an entry asks
    for its document."""
    op, entry = rebuilt(fixture_doc("transfer"))
    unencodable = applied_op(op.id_num, [0, {"memo": object()}])
    builder = DocumentBuilder()
    assert builder.items([], unencodable, 8, "2016-01-01T00:00:00", "chain-2016-01") == []
    assert builder.items([], op, 8, "2016-01-01T00:00:00", "chain-2016-01", "index") == []
    with pytest.raises(TypeError):
        builder.items([entry], unencodable, 8, "2016-01-01T00:00:00", "chain-2016-01")


def test_template_fill_data_types_and_depth():
    for flavor in ("es6", "legacy", "composable"):
        t = index_template("p-", flavor)
        assert "settings" not in json.dumps(t)
        deep = index_template("p-", flavor, 30)
        assert '"index.mapping.depth.limit": 30' in json.dumps(deep)
    mappings = index_template("p-", "legacy")["mappings"]["properties"]
    fill = mappings["additional_data"]["properties"]["fill_data"]["properties"]
    assert fill["fill_price"] == {"type": "double"} and fill["is_maker"] == {"type": "boolean"}
    assert fill["pays_amount"] == {"type": "long"}
    assert fill["receives_asset_id"] == {"type": "keyword"}
