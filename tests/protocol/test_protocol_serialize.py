"""fc binary serialization: real mainnet operations against python-bitshares'
bitsharesbase (an independent implementation), JSON round trips, sorting
of flat sets/maps, and the documented errors for bad input."""

import copy
import json
import os

import pytest
from bitsharesbase.objects import Operation
from bitsharesbase.signedtransactions import Signed_Transaction

from kit.keys import DEV_PUB
from kit.operation_cases import same_json
from kit.paths import FIXTURES

from nodeapi.protocol import errors
from nodeapi.protocol.composite import FlatSet
from nodeapi.protocol.operations import OPERATIONS, deserialize_operation, serialize_operation
from nodeapi.protocol.serialize import (
    INT64, UINT16, UINT64, VARINT, pack, pack_varint, unpack, unpack_varint)
from nodeapi.protocol.graphene_types import PUBLIC_KEY
from nodeapi.protocol.transaction import deserialize_transaction, serialize_transaction
from nodeapi.protocol.types import ACCOUNT_ID, ASSET, ASSET_ID, AUTHORITY, OPERATION_RESULT




def _samples():
    with open(os.path.join(FIXTURES, "mainnet_operation_samples.go-bitshares.json")) as f:
        data = json.load(f)["operations"]
    return [(s["op_id"], s["data"], s["source_file"]) for group in data.values() for s in group
            if s["op_id"] in OPERATIONS]


# the first operations the node applied; fill_order (4) is virtual and bitsharesbase lacks it
ISSUE_OPS = {0, 1, 2, 5, 6, 7, 8, 10, 11, 14, 15, 16, 35, 37}


SAMPLES = _samples()


def _bitsharesbase(op_id, data):
    # bitsharesbase adds "prefix" keys to nested dicts: give it a copy
    return bytes(Operation([op_id, dict(copy.deepcopy(data), prefix="BTS")]))


def test_mainnet_samples_match_bitsharesbase():
    compared, special = 0, 0
    for op_id, data, source in SAMPLES:
        if op_id not in ISSUE_OPS:
            continue
        mine = serialize_operation([op_id, data], "BTS")
        try:
            expected = _bitsharesbase(op_id, data)
        except Exception:
            special += 1
            continue
        assert mine == expected, source
        compared += 1
    print(f"\ncompared {compared} mainnet operation samples with bitsharesbase "
          f"({special} that bitsharesbase rejects are checked separately)")
    assert compared == 100 and special == 2


def test_sample_bitsharesbase_rejects_old_asset_update_new_issuer():
    # BSIP29 made python-bitshares refuse new_issuer; graphene still serializes it
    (op_id, data, _), = [s for s in SAMPLES if s[0] == 11 and "new_issuer" in s[1]]
    without = {k: v for k, v in data.items() if k != "new_issuer"}
    base = serialize_operation([op_id, without], "BTS")
    assert base == _bitsharesbase(op_id, without)
    pos = 1 + len(pack(ASSET, data["fee"])) + len(pack(ACCOUNT_ID, data["issuer"])) + len(
        pack(ASSET_ID, data["asset_to_update"]))
    assert base[pos] == 0
    issuer = bytearray(b"\x01")
    pack_varint(int(data["new_issuer"].split(".")[2]), issuer)
    assert serialize_operation([op_id, data], "BTS") == base[:pos] + issuer + base[pos + 1:]


def test_sample_bitsharesbase_rejects_wrapped_expiration():
    # go-bitshares printed a uint32 expiration past 2038 as a negative time;
    # fc's time_point_sec(uint32_t) wraps it back to the same seconds
    (op_id, data, _), = [s for s in SAMPLES if s[0] == 1]
    assert data["expiration"] == "1963-11-25T06:31:44"
    mine = serialize_operation([op_id, data], "BTS")
    back = deserialize_operation(mine, "BTS")
    assert back[1]["expiration"] == "2099-12-31T13:00:00"
    assert mine == _bitsharesbase(op_id, back[1])


def test_round_trip_every_sample():
    for op_id, data, source in SAMPLES:
        if source == "gen/samples/proposalcreateoperation_5.go":
            continue  # truncated by go-bitshares (test_protocol_operations)
        packed = serialize_operation([op_id, data], "BTS")
        back = deserialize_operation(packed, "BTS")
        assert back[0] == op_id
        assert serialize_operation(back, "BTS") == packed, source
        if data.get("expiration") != "1963-11-25T06:31:44":
            assert same_json(data, back[1]), source
        json.dumps(back)  # plain JSON values only


def test_operation_names_refused():
    """bitshares fc reads the static_variant tag with ``as_uint64`` (no
    name lookup, unlike hive's legacy form): a name is an unknown type."""
    op_id, data, _ = SAMPLES[0]
    name = OPERATIONS[op_id][0]
    with pytest.raises(errors.UnknownOperation, match=f"^Operation type '{name}' is not an "):
        serialize_operation([name, data])
    assert serialize_operation([op_id, data])[0] == op_id


def test_flat_sets_and_maps_are_sorted_and_deduplicated():
    other = "TEST8aoWV6SV5aMTa4SfMPfysZBZx2UU9sTH4bJbJWFWZT83yt7mP1"
    a = {"weight_threshold": 2, "account_auths": [["1.2.10", 1], ["1.2.9", 1], ["1.2.10", 5]],
         "key_auths": [[other, 1], [DEV_PUB, 1]], "address_auths": []}
    b = {"weight_threshold": 2, "account_auths": [["1.2.9", 1], ["1.2.10", 1]],
         "key_auths": sorted([[other, 1], [DEV_PUB, 1]], key=lambda p: pack(PUBLIC_KEY, p[0])),
         "address_auths": []}
    assert pack(AUTHORITY, a) == pack(AUTHORITY, b)
    assert unpack(AUTHORITY, pack(AUTHORITY, a), "TEST")["account_auths"] == [
        ["1.2.9", 1], ["1.2.10", 1]]
    assert pack(FlatSet(ACCOUNT_ID), ["1.2.100", "1.2.20", "1.2.100"]) == b"\x02\x14\x64"


def test_varint_and_integers():
    for n in (0, 1, 127, 128, 300, 2 ** 32 - 1):
        assert unpack_varint(pack(VARINT, n), 0) == (n, len(pack(VARINT, n)))
    assert pack(VARINT, 300) == b"\xac\x02"
    assert pack(INT64, "1000000000000000") == (10 ** 15).to_bytes(8, "little")
    assert pack(INT64, -1) == b"\xff" * 8
    assert unpack(INT64, b"\xff" * 8) == -1


def test_operation_results():
    for result in ([0, {}], [1, "1.7.42"], [2, {"amount": 5, "asset_id": "1.3.0"}],
                   [3, {"new_objects": ["1.7.1"], "updated_objects": [], "removed_objects": []}],
                   [4, {"paid": [{"amount": 1, "asset_id": "1.3.0"}], "received": [],
                        "fees": []}],
                   [5, {"impacted_accounts": ["1.2.5"]}]):
        assert unpack(OPERATION_RESULT, pack(OPERATION_RESULT, result)) == result
    assert pack(OPERATION_RESULT, [1, "1.7.42"]) == b"\x01" + ((1 << 56 | 7 << 48 | 42)
                                                               .to_bytes(8, "little"))


TRANSFER = [0, {"fee": {"amount": 100, "asset_id": "1.3.0"}, "from": "1.2.6", "to": "1.2.7",
                "amount": {"amount": "5000000000", "asset_id": "1.3.0"}, "extensions": []}]


def test_transaction_matches_bitsharesbase():
    trx = {"ref_block_num": 12345, "ref_block_prefix": 3141592653,
           "expiration": "2025-01-02T03:04:05", "operations": [TRANSFER], "extensions": []}
    ops = [Operation([o[0], dict(o[1], prefix="TEST")]) for o in trx["operations"]]
    expected = Signed_Transaction(ref_block_num=trx["ref_block_num"],
                                  ref_block_prefix=trx["ref_block_prefix"],
                                  expiration=trx["expiration"], operations=ops, signatures=[])
    expected.data.pop("signatures")
    assert serialize_transaction(trx, "TEST") == bytes(expected)
    assert deserialize_transaction(serialize_transaction(trx), "TEST")["operations"][0][1][
        "amount"]["amount"] == 5000000000


@pytest.mark.parametrize("op, error", [
    ([78, {}], errors.UnknownOperation),
    (["no_such_op", {}], errors.UnknownOperation),
    ([0, dict(TRANSFER[1], amount={"amount": 2 ** 63, "asset_id": "1.3.0"})],
     errors.IntegerOutOfRange),
    ([0, dict(TRANSFER[1], to="1.3.7")], errors.InvalidObjectId),
    ([0, dict(TRANSFER[1], to="1.2.x")], errors.InvalidObjectId),
    ([0, dict(TRANSFER[1], amount={"amount": "12a", "asset_id": "1.3.0"})], errors.InvalidField),
    ([35, {"fee": TRANSFER[1]["fee"], "payer": "1.2.6", "required_auths": [], "id": 1,
           "data": "abc"}], errors.InvalidHex),
    ([35, {"fee": TRANSFER[1]["fee"], "payer": "1.2.6", "required_auths": [], "id": 70000,
           "data": ""}], errors.IntegerOutOfRange),
    ([37, {"fee": TRANSFER[1]["fee"], "deposit_to_account": "1.2.6",
           "balance_to_claim": "1.15.0", "balance_owner_key": DEV_PUB,
           "total_claimed": TRANSFER[1]["fee"]}], errors.WrongKeyPrefix),
    ([1, {"fee": TRANSFER[1]["fee"], "seller": "1.2.6", "amount_to_sell": TRANSFER[1]["fee"],
          "min_to_receive": TRANSFER[1]["fee"], "expiration": "tomorrow",
          "fill_or_kill": False}], errors.InvalidTime),
])
def test_bad_input_errors(op, error):
    with pytest.raises(error) as info:
        serialize_operation(op, "BTS")
    assert str(info.value)


@pytest.mark.parametrize("tag, message", [
    ("transfer", "^Operation type 'transfer' is not an integer"),
    ({}, r"^Operation type \{\} is not an integer"),
    (None, "^Operation type None is not an integer"),
    (-1, r"^Operation type -1 is not supported \(bitshares-core 7.x has 0..77\)"),
    (78, "^Operation type 78 is not supported"),
])
def test_operation_tag_must_be_a_known_integer(tag, message):
    """The static_variant tag is read like fc's ``as_uint64`` (an integer,
    integral float or decimal string, see test_protocol_operations); any
    other tag is refused when serializing, not later by the chain."""
    with pytest.raises(errors.UnknownOperation, match=message):
        serialize_operation([tag, TRANSFER[1]], "TEST")
    with pytest.raises(errors.UnknownOperation, match="^transaction.operations: "
                                                     + message.lstrip("^")):
        serialize_transaction({"ref_block_num": 1, "ref_block_prefix": 2,
                               "expiration": "2025-01-02T03:04:05",
                               "operations": [[tag, TRANSFER[1]]], "extensions": []})
    assert serialize_operation([0, TRANSFER[1]], "TEST")[0] == 0


def test_error_names_the_field():
    with pytest.raises(errors.IntegerOutOfRange, match=r"transfer_operation\.amount: "
                                                       r"asset\.amount"):
        serialize_operation([0, dict(TRANSFER[1], amount={"amount": 2 ** 63,
                                                          "asset_id": "1.3.0"})])


def test_truncated_and_trailing_bytes():
    packed = serialize_operation(TRANSFER)
    with pytest.raises(errors.TruncatedData):
        deserialize_operation(packed[:-3], "TEST")
    with pytest.raises(errors.TruncatedData):
        deserialize_operation(packed + b"\0", "TEST")
    with pytest.raises(errors.UnknownOperation):
        deserialize_operation(b"\x4e" + packed[1:], "TEST")
    with pytest.raises(errors.IntegerOutOfRange):
        unpack_varint(b"\xff\xff\xff\xff\x7f", 0)
    assert pack(UINT16, 65535) == b"\xff\xff"
    with pytest.raises(errors.IntegerOutOfRange):
        pack(UINT64, -1)


def test_reading_a_key_needs_the_chains_prefix():
    """No default prefix: a public key is read with the prefix given, and
    reading one without a prefix is an error (types without keys need
    none)."""
    raw = bytes([2]) + bytes(range(1, 33))
    assert unpack(PUBLIC_KEY, raw, "XYZ").startswith("XYZ")
    assert unpack(PUBLIC_KEY, raw, "TEST")[4:] == unpack(PUBLIC_KEY, raw, "XYZ")[3:]
    with pytest.raises(TypeError, match="key prefix"):
        unpack(PUBLIC_KEY, raw)
    assert unpack(INT64, b"\x01" + bytes(7)) == 1
