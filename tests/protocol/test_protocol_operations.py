"""Every bitshares-core 7.x operation type (0..77): fc bytes equal to
bitsharesjs' serializer (run once for the whole module), JSON -> bytes ->
JSON round trips, and the input forms fc's ``from_variant`` accepts.

bitsharesjs 6.0.3 lacks limit_order_update (77), liquidity_pool_update (75)
and credit_deal_update (76), writes several extensions as an empty
``future_extensions`` (see operation_cases.EXTENSIONS_BITSHARESJS_DROPS)
and has no ``is_maker`` in fill_order: there the bytes are checked against
values composed by hand from the C++ reflection (``FC_REFLECT`` order,
fc/io/raw.hpp encodings)."""

import copy
import json
import os
import struct
import subprocess

import pytest

from kit.operation_cases import (
    BITSHARESJS_LACKS, EXTENSIONS_BITSHARESJS_DROPS, MEMO, PROTOTYPES, TAKE_PROFIT,
    mainnet_samples, same_json)
from kit.paths import JS_DIR

from nodeapi.protocol import errors
from nodeapi.protocol.operations import (
    OPERATIONS, VIRTUAL_OPERATIONS, deserialize_operation, operation_name, serialize_operation)
from nodeapi.protocol.serialize import pack
from nodeapi.protocol.graphene_types import PUBLIC_KEY
from nodeapi.protocol.transaction import serialize_transaction

SAMPLES = mainnet_samples()
# go-bitshares dropped every chain parameter but current_fees from this one
TRUNCATED = "gen/samples/proposalcreateoperation_5.go"


def _without(op, field):
    data = copy.deepcopy(op[1])
    if field in data.get("extensions", {}):
        data["extensions"] = {}
    return [op[0], data]


def _cases() -> dict:
    """case name -> operation; the prototypes, the mainnet samples, and the
    prototypes/samples with the extension bitsharesjs drops removed."""
    cases = {f"type {n}": [n, data] for n, data in PROTOTYPES.items()}
    for source, op in SAMPLES:
        cases[source] = op
        if EXTENSIONS_BITSHARESJS_DROPS.get(op[0]) in op[1].get("extensions", {}):
            cases[source + " without extension"] = _without(op, EXTENSIONS_BITSHARESJS_DROPS[op[0]])
    flat = copy.deepcopy(PROTOTYPES[54])
    flat["restrictions"] = flat["restrictions"][:1]
    cases["type 54 flat"] = [54, flat]
    for n, field in EXTENSIONS_BITSHARESJS_DROPS.items():
        if n in PROTOTYPES:
            cases[f"type {n} without extension"] = _without([n, PROTOTYPES[n]], field)
    return cases


CASES = _cases()
# bitsharesjs types custom authority ids as protocol_id_type("object") (it
# has no 1.17 type) and takes them as the bare instance number only
JS_FORMS = {"type 55": [55, dict(PROTOTYPES[55], authority_to_update=0)],
            "type 56": [56, dict(PROTOTYPES[56], authority_to_delete=0)]}


@pytest.fixture(scope="module")
def bitsharesjs(js_client):
    """case name -> hex bytes (or ``{"error": ...}``) from bitsharesjs, one
    node process for the whole module (``js_client``: node, with tests/js's
    packages installed, whichever module runs first)."""
    node = js_client
    assert node, "node is needed for the bitsharesjs tests (.ci/run installs it)"
    names = list(CASES)
    proc = subprocess.run([node, os.path.join(JS_DIR, "serialize.js"), "TEST"],
                          input=json.dumps([JS_FORMS.get(n, CASES[n]) for n in names]),
                          capture_output=True, text=True, timeout=120, cwd=JS_DIR, check=True)
    return {n: r.get("hex", r) for n, r in zip(names, json.loads(proc.stdout))}


def test_table_has_every_type():
    assert list(OPERATIONS) == list(range(78))
    assert operation_name(0) == "transfer" and operation_name(77) == "limit_order_update"
    assert sorted(VIRTUAL_OPERATIONS) == [4, 42, 44, 46, 51, 53, 74]
    assert set(PROTOTYPES) | {op[0] for _s, op in SAMPLES} == set(range(78)) - {31} | {1, 11}


def test_mainnet_samples_match_bitsharesjs(bitsharesjs):
    compared = 0
    for source, op in SAMPLES:
        if source == TRUNCATED:
            continue
        mine = serialize_operation(op, "TEST").hex()
        expected = bitsharesjs[source]
        if op[0] == 4:
            # bitsharesjs' fill_order ends at receives: fill_price (a price)
            # and is_maker (absent in old history: graphene's default, true)
            price = op[1]["fill_price"]
            expected += "".join(_asset(price[k]["amount"], int(price[k]["asset_id"].split(".")[2]))
                                for k in ("base", "quote")) + "01"
        elif source + " without extension" in CASES:
            expected = bitsharesjs[source + " without extension"]
            ext = op[1]["extensions"]["buyback_options"]
            assert op[0] == 5 and len(ext["markets"]) == 1
            # count 1, index 3, asset_to_buy, asset_to_buy_issuer, markets (one asset)
            asset, issuer, market = (int(ext[k].split(".")[2]) if k != "markets" else
                                     int(ext[k][0].split(".")[2])
                                     for k in ("asset_to_buy", "asset_to_buy_issuer", "markets"))
            expected = expected[:-2] + "0103" + _varint(asset) + _varint(issuer) + "01" + _varint(
                market)
        assert mine == expected, source
        compared += 1
    assert compared == 202


def test_truncated_sample_takes_the_cpp_defaults(bitsharesjs):
    """A mainnet proposal whose chain parameters carry only
    ``current_fees``: bitshares-core reads it (fc/reflect/variant.hpp
    ``from_variant`` sets only the members present) and the others keep
    their member initializers of chain_parameters.hpp (GRAPHENE_DEFAULT_*
    of config.hpp), which is what nodeapi packs.  bitsharesjs refuses it."""
    op = dict(SAMPLES)[TRUNCATED]
    back = deserialize_operation(serialize_operation(op, "TEST"), "TEST")
    inner = back[1]["proposed_ops"][0]["op"]
    sent = op[1]["proposed_ops"][0]["op"][1]["new_parameters"]
    params = inner[1]["new_parameters"]
    assert inner[0] == 31 and set(sent) == {"current_fees", "extensions"}
    assert len(params["current_fees"]["parameters"]) == len(sent["current_fees"]["parameters"])
    assert {k: v for k, v in params.items() if k != "current_fees"} == {
        "block_interval": 5, "maintenance_interval": 86400, "maintenance_skip_slots": 3,
        "committee_proposal_review_period": 14 * 86400, "maximum_transaction_size": 2048,
        "maximum_block_size": 2000000, "maximum_time_until_expiration": 86400,
        "maximum_proposal_lifetime": 28 * 86400, "maximum_asset_whitelist_authorities": 10,
        "maximum_asset_feed_publishers": 10, "maximum_witness_count": 1001,
        "maximum_committee_count": 1001, "maximum_authority_membership": 10,
        "reserve_percent_of_fee": 2000, "network_percent_of_fee": 2000,
        "lifetime_referrer_percent_of_fee": 3000, "cashback_vesting_period_seconds": 31536000,
        "cashback_vesting_threshold": 100 * 100000, "count_non_member_votes": True,
        "allow_non_member_whitelists": False, "witness_pay_per_block": 10 * 100000,
        "worker_budget_per_day": 500 * 1000 * 100000, "max_predicate_opcode": 1,
        "fee_liquidation_threshold": 100 * 100000, "accounts_per_fee_scale": 1000,
        "account_fee_scale_bitshifts": 4, "max_authority_depth": 2, "extensions": {}}
    assert "error" in bitsharesjs[TRUNCATED]


def _varint(n: int) -> str:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return out.hex()


def _u(fmt, *values) -> str:
    return struct.pack("<" + fmt, *values).hex()


def _asset(amount, instance=0) -> str:
    return _u("q", amount) + _varint(instance)


FEE_HEX = _asset(100000)
TAKE_PROFIT_HEX = "00" + "00" + _u("HHI", 100, 10000, 86400) + "01" + "00"  # tag, struct
MEMO_HEX = (pack(PUBLIC_KEY, MEMO["from"]) + pack(PUBLIC_KEY, MEMO["to"])).hex() + _u(
    "Q", int(MEMO["nonce"])) + "10" + MEMO["message"]

#: the extension bytes bitsharesjs cannot write, from the C++ reflection
HAND_EXTENSIONS = {
    1: "01" + "00" + "01" + TAKE_PROFIT_HEX,  # count, on_fill index, vector of 1
    11: "02" + "00" + "04" + "01" + "01",  # new_precision 4, skip_core_exchange_rate
    19: "01" + "00" + _u("H", 1900),
    49: "01" + "00" + MEMO_HEX,
    72: "01" + "00" + "01",
}

#: full bytes of the types bitsharesjs lacks, from the C++ reflection
HAND_BYTES = {
    # bitsharesjs reads fba_id as a 1.16.x varint id and refuses 2.16.1;
    # graphene's is an object_id_type: uint64 space << 56 | type << 48 | instance
    # bitsharesjs' htlc_redeemed and htlc_refund stop before the fields core
    # 4.0 added (redeemer, original_htlc_recipient, preimage hash and size)
    51: "33" + FEE_HEX + "02" + "11" + "12" + "12" + _asset(1000) + "00" + "cd" * 20
    + _u("H", 5) + "05" + "0102030405",
    53: "35" + FEE_HEX + "02" + "11" + "12" + _asset(1000) + "01" + "ef" * 20 + _u("H", 5),
    44: "2c" + FEE_HEX + "11" + _u("Q", 2 << 56 | 16 << 48 | 1) + _u("q", 1000),
    # fee, account 17, pool 19.0, taker_fee_percent present 40, withdrawal absent, extensions
    75: "4b" + FEE_HEX + "11" + "00" + "01" + _u("H", 40) + "00" + "00",
    # fee, account 18, deal 0, auto_repay 2, extensions
    76: "4c" + FEE_HEX + "12" + "00" + "02" + "00",
    # fee, seller 17, order 9, new_price (base 10 x 1.3.0, quote 3 x 1.3.1),
    # delta -10 of 1.3.0, new_expiration, on_fill [take profit], extensions
    77: "4d" + FEE_HEX + "11" + "09" + "01" + _asset(10) + _asset(3, 1) + "01" + _asset(-10)
    + "01" + _u("I", 1896134400) + "01" + "01" + TAKE_PROFIT_HEX + "00",
}


def test_prototypes_match_bitsharesjs(bitsharesjs):
    for n, data in PROTOTYPES.items():
        mine = serialize_operation([n, data], "TEST").hex()
        if n == 54:
            # bitsharesjs' restriction refers to itself before it exists (nested
            # restrictions crash it) and has no variant_assert pair (tag 41):
            # it writes the first, flat restriction; the nested ones by hand
            flat = bitsharesjs["type 54 flat"]
            first = "02" + "00" + "07" + "12" + "00"  # member 2, func_eq, account 1.2.18
            assert flat.endswith("01" + first + "00")
            nested = (
                # member 3, func_attr, vector<restriction> [member 0 func_lt int64 1000]
                "03" + "0a" + "27" + "01" + ("00" + "02" + "02" + _u("q", 1000) + "00") + "00"
                # member 4, func_variant_assert, pair(0, [member 1 func_in {1.2.8, 1.2.9}])
                + "04" + "0c" + "29" + _u("q", 0) + "01" + ("01" + "06" + "1a" + "020809" + "00")
                + "00"
                # member 0, func_logical_or, [[member 0 func_eq string "x"], []]
                + "00" + "0b" + "28" + "02" + "01" + ("00" + "00" + "03" + "0178" + "00") + "00"
                + "00")
            assert mine == flat[:-14] + "04" + first + nested + "00"
        elif n == 42:  # bitsharesjs adds an extensions field graphene does not have
            assert mine == bitsharesjs["type 42"][:-2]
        elif n in HAND_BYTES:
            assert n not in BITSHARESJS_LACKS or "error" in bitsharesjs[f"type {n}"]
            assert mine == HAND_BYTES[n], n
        elif n in EXTENSIONS_BITSHARESJS_DROPS:
            without = bitsharesjs[f"type {n} without extension"]
            assert bitsharesjs[f"type {n}"] == without  # the extension is lost
            assert mine == without[:-2] + HAND_EXTENSIONS[n], n
        else:
            assert mine == bitsharesjs[f"type {n}"], n


def test_global_parameters_with_extensions():
    """committee_member_update_global_parameters (31) with the chain
    parameter extensions; bitsharesjs writes them as future_extensions."""
    inner = next(w["op"] for _s, op in SAMPLES if op[0] == 22
                 for w in op[1]["proposed_ops"] if w["op"][0] == 31
                 and "block_interval" in w["op"][1]["new_parameters"])
    params = copy.deepcopy(inner[1]["new_parameters"])
    base = serialize_operation([31, inner[1]], "TEST")
    params["extensions"] = {"updatable_htlc_options": {"max_timeout_secs": 86400,
                                                       "max_preimage_size": 1024},
                            "market_fee_network_percent": 2000}
    mine = serialize_operation([31, {"fee": inner[1]["fee"], "new_parameters": params}], "TEST")
    assert base.endswith(b"\x00")
    assert mine == base[:-1] + bytes.fromhex("02" + "00" + _u("II", 86400, 1024) + "02"
                                             + _u("H", 2000))
    assert deserialize_operation(mine, "TEST")[1]["new_parameters"]["extensions"][
        "market_fee_network_percent"] == 2000


def test_round_trip_every_case():
    for name, op in CASES.items():
        if name == TRUNCATED:
            continue
        packed = serialize_operation(op, "TEST")
        back = deserialize_operation(packed, "TEST")
        assert back[0] == op[0]
        assert serialize_operation(back, "TEST") == packed, name
        if op[1].get("expiration") != "1963-11-25T06:31:44":  # see test_protocol_serialize
            assert same_json(op[1], back[1]), name
        json.dumps(back)


TRANSFER = PROTOTYPES[9] | {}


@pytest.mark.parametrize("tag", [9, 9.0, 9.5, "9"])
def test_tag_forms_fc_reads(tag):
    """fc reads the tag with ``as_uint64`` (fc/src/variant.cpp): a number, a
    double (truncated) or a decimal string give the same bytes."""
    assert serialize_operation([tag, PROTOTYPES[9]]) == serialize_operation([9, PROTOTYPES[9]])


@pytest.mark.parametrize("tag, message", [
    ("account_transfer", "is not an integer"), ([9], "is not an integer"),
    ("9.5", "is not an integer"), (None, "is not an integer"), (78, "is not supported"),
    (-1, "is not supported"), ("78", "is not supported")])
def test_tags_fc_refuses(tag, message):
    with pytest.raises(errors.UnknownOperation, match=message):
        serialize_operation([tag, PROTOTYPES[9]])


def test_number_forms_and_ranges():
    op = copy.deepcopy(PROTOTYPES[61])
    plain = serialize_operation([61, op])
    op["amount_a"]["amount"], op["amount_b"]["amount"] = 100.0, "200"
    assert serialize_operation([61, op]) == plain
    for bad, error in ((2 ** 63, errors.IntegerOutOfRange), ("9223372036854775808",
                                                            errors.IntegerOutOfRange),
                       ("1.5", errors.InvalidField), ("1e3", errors.InvalidField),
                       (float("nan"), errors.InvalidField), ({}, errors.InvalidField)):
        op["amount_a"]["amount"] = bad
        with pytest.raises(error, match="liquidity_pool_deposit_operation.amount_a"):
            serialize_operation([61, op])


def test_extension_forms():
    """An ``extension<T>`` (limit_order_create's) reads ``{}`` and ``[]`` as
    empty and refuses an unknown member, as graphene's from_variant does;
    an ``extensions_type`` (liquidity_pool_delete's ``flat_set``) is read
    only from an array: an object, ``{}`` included, is fc's bad cast
    (bitshares-fc variant.cpp ``variant::get_array``: "Invalid cast from
    ${type} to Array"), as bitshares-core refuses it."""
    base = dict(PROTOTYPES[1], extensions=[])
    assert serialize_operation([1, dict(base, extensions={})]) == serialize_operation([1, base])
    with pytest.raises(errors.InvalidField, match="unknown extension 'bogus'"):
        serialize_operation([1, dict(base, extensions={"bogus": 1})])
    for bad in ({}, {"bogus": 1}):
        with pytest.raises(errors.BadCast) as caught:
            serialize_operation([60, dict(PROTOTYPES[60], extensions=bad)])
        error = caught.value
        assert (error.name, error.code, error.what) == ("bad_cast_exception", 7, "Bad Cast")
        assert error.message == "Bad Cast: Invalid cast from object_type to Array"
        assert error.log_format == "Invalid cast from ${type} to Array"
        assert error.details == {"type": "object_type"}
    with pytest.raises(errors.BadCast, match="from string_type to Array"):
        serialize_operation([60, dict(PROTOTYPES[60], extensions="")])
    with_null = dict(base, extensions={"on_fill": None})
    assert serialize_operation([1, with_null]) == serialize_operation([1, base])
    assert serialize_operation([1, dict(base, extensions={"on_fill": [TAKE_PROFIT]})]) != \
        serialize_operation([1, base])


def test_nested_proposal_and_transaction():
    inner = [[n, PROTOTYPES[n]] for n in (49, 54, 69, 77)]
    prop = {"fee": PROTOTYPES[9]["fee"], "fee_paying_account": "1.2.17",
            "expiration_time": "2030-01-01T00:00:00",
            "proposed_ops": [{"op": o} for o in inner], "review_period_seconds": 3600,
            "extensions": []}
    packed = serialize_operation([22, prop], "TEST")
    assert all(serialize_operation(o, "TEST")[1:] in packed for o in inner)
    trx = {"ref_block_num": 1, "ref_block_prefix": 2, "expiration": "2030-01-01T00:00:00",
           "operations": [[22, prop]] + inner, "extensions": []}
    assert serialize_transaction(trx, "TEST").count(serialize_operation(inner[3], "TEST")) == 2
    with pytest.raises(errors.UnknownOperation, match="proposed_ops: op_wrapper.op: "):
        serialize_operation([22, dict(prop, proposed_ops=[{"op": [99, {}]}])])
