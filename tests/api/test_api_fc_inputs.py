"""API arguments and operation fields are read as bitshares-fc reads a
variant (fc/src/variant.cpp ``as_int64``/``as_uint64``/``as_bool``;
fc/reflect/variant.hpp ``from_variant`` of reflected structs): doubles and
booleans as integers, numbers and "true"/"false" as booleans, absent struct
members as their defaults; out-of-range values, wrong types and bad ids
stay clear errors."""

import orjson
import pytest

from nodeapi.api.base import fc_bool, fc_int
from nodeapi.errors import ApiError
from nodeapi.protocol import errors
from nodeapi.protocol.operations import deserialize_operation, serialize_operation
from nodeapi.rpc.jsonrpc import RpcError, encode_error, parse_request

from kit.chain import CORE, produce, transfer_wire
from kit.signing import sign_wire


@pytest.mark.parametrize("value, expected", [
    (1000, 1000), (1000.0, 1000), (1000.9, 1000), (-2.7, -2), (True, 1), (False, 0),
    ("1000", 1000), ("-5", -5), (2 ** 64 - 1, 2 ** 64 - 1), (-(2 ** 63), -(2 ** 63))])
def test_fc_int_reads_like_as_uint64(value, expected):
    """fc/src/variant.cpp ``as_uint64``: ``static_cast<uint64_t>`` of a
    double truncates toward zero, a bool is 0/1, a string goes through
    ``fc::to_uint64``."""
    assert fc_int(value, "x") == expected


@pytest.mark.parametrize("value", [None, "1.5", "ten", [], {}, float("nan"), float("inf"),
                                   2 ** 64, -(2 ** 63) - 1, 1e30])
def test_fc_int_refuses_what_is_no_integer(value):
    with pytest.raises(ApiError, match="argument x: "):
        fc_int(value, "x")


@pytest.mark.parametrize("value, expected", [
    (True, True), (False, False), (0, False), (1, True), (2, True), (0.0, False), (0.5, True),
    ("true", True), ("false", False)])
def test_fc_bool_reads_like_as_bool(value, expected):
    """fc/src/variant.cpp ``as_bool``: numbers ``!= 0``; only the strings
    "true" and "false"."""
    assert fc_bool(value, "x") is expected


@pytest.mark.parametrize("value", ["yes", "1", "", [], {}])
def test_fc_bool_refuses_other_strings_and_containers(value):
    with pytest.raises(ApiError, match="argument x: expected true or false"):
        fc_bool(value, "x")


def test_lookup_accounts_limit_as_double(db):
    """python-bitshares ``Blockchain.get_all_accounts`` sends
    ``lookup_accounts("", 1000.0)`` (database_api.cpp ``lookup_accounts``
    takes a ``uint32_t limit``: fc reads 1000.0 as 1000)."""
    assert db.call("lookup_accounts", ["", 1000.0]) == db.call("lookup_accounts", ["", 1000])
    assert db.call("lookup_accounts", ["", True]) == db.call("lookup_accounts", ["", 1])
    with pytest.raises(ApiError, match="limit can not be greater than 1000"):
        db.call("lookup_accounts", ["", 1001.0])
    with pytest.raises(ApiError, match="argument limit: expected an integer"):
        db.call("lookup_accounts", ["", "many"])


@pytest.mark.parametrize("flag", [0, 1, 0.0, "true", "false", False, None])
def test_optional_bool_arguments_from_numbers_and_strings(db, flag):
    """bitshares-explorer-api sends ``get_assets([ids], 0)`` and
    ``get_full_accounts([ids], 0)``: the ``optional<bool> subscribe`` of
    database_api.cpp is read with ``as_bool``."""
    assets = db.call("get_assets", [["1.3.0"], flag])
    assert [a["id"] for a in assets] == ["1.3.0"]
    full = db.call("get_full_accounts", [["init0"], flag])
    assert full[0][0] == "init0"
    assert db.call("get_accounts", [["init0"], flag])[0]["name"] == "init0"


@pytest.mark.parametrize("function, args", [
    ("get_assets", [["1.3.0"], "yes"]), ("get_full_accounts", [["init0"], []]),
    ("get_objects", [["2.1.0"], {}]), ("get_all_workers", ["no"]),
    ("get_block_header", [1, "1"])])
def test_bool_arguments_that_fc_refuses(db, function, args):
    with pytest.raises(ApiError, match="expected true or false"):
        db.call(function, args)


def test_bad_ids_and_out_of_range_stay_errors(db):
    with pytest.raises(ApiError, match="Invalid"):
        db.call("get_objects", [["1.2.x"]])
    with pytest.raises(ApiError, match="64-bit integer range"):
        db.call("get_block", [2 ** 64])
    with pytest.raises(ApiError, match="expected an integer"):
        db.call("get_block", [[1]])


def test_transfer_without_extensions_and_float_amounts_is_applied(funded):
    """A transfer without ``extensions`` (fc/reflect/variant.hpp sets only
    the members present: the empty set stays) and with amounts given as
    doubles and a boolean is applied; its stored form is graphene's."""
    chain = funded
    op = transfer_wire(12345)
    body = dict(op[1], fee={"amount": float(op[1]["fee"]["amount"]), "asset_id": CORE},
                amount={"amount": 12345.0, "asset_id": CORE})
    body.pop("extensions")
    before = chain.state.balance("1.2.7", CORE)
    chain.push_transaction(sign_wire(chain, [[0, body]]))
    produce(chain)
    assert chain.state.balance("1.2.7", CORE) - before == 12345
    stored = chain.get_block(chain.head_block_num)["transactions"][0]["operations"][0]
    assert stored[1]["extensions"] == [] and stored[1]["amount"]["amount"] == 12345


def test_absent_members_keep_their_cpp_initializers():
    """asset_ops.hpp ``asset_options``: ``max_supply`` and
    ``max_market_fee`` = GRAPHENE_MAX_SHARE_SUPPLY (10^15),
    ``issuer_permissions`` = DEFAULT_UIA_ASSET_ISSUER_PERMISSION
    (0x01|0x02|0x04|0x08|0x40 = 79), ``bitasset_options`` feed lifetime
    and settlement delay one day, ``minimum_feeds`` 1, settlement volume
    20 percent; account.hpp ``voting_account`` = GRAPHENE_PROXY_TO_SELF_ACCOUNT
    (1.2.5); plain members are zero, the epoch, instance 0."""
    fee = {"amount": 0, "asset_id": "1.3.0"}
    op = [10, {"fee": fee, "issuer": "1.2.6", "symbol": "GOLD", "precision": 4,
               "common_options": {"core_exchange_rate": {
                   "base": {"amount": 1, "asset_id": "1.3.0"},
                   "quote": {"amount": 1, "asset_id": "1.3.1"}}},
               "bitasset_opts": {"short_backing_asset": "1.3.0"}}]
    back = deserialize_operation(serialize_operation(op, "TEST"), "TEST")[1]
    common = back["common_options"]
    assert (common["max_supply"], common["max_market_fee"], common["issuer_permissions"],
            common["market_fee_percent"], common["flags"], common["description"]) == (
        10 ** 15, 10 ** 15, 79, 0, 0, "")
    bitasset = back["bitasset_opts"]
    assert (bitasset["feed_lifetime_sec"], bitasset["minimum_feeds"],
            bitasset["force_settlement_delay_sec"], bitasset["force_settlement_offset_percent"],
            bitasset["maximum_force_settlement_volume"]) == (86400, 1, 86400, 0, 2000)
    assert back["is_prediction_market"] is False
    update = [6, {"fee": fee, "account": "1.2.6", "new_options": {"memo_key": None}}]
    options = deserialize_operation(serialize_operation(update, "TEST"), "TEST")[1][
        "new_options"]
    assert options["voting_account"] == "1.2.5" and options["votes"] == []
    assert options["memo_key"] == "TEST1111111111111111111111111111111114T1Anm"
    # market.hpp: a limit order's expiration is time_point_sec::maximum();
    # asset.hpp price_feed: MCR 1750 and MSSR 1500 (GRAPHENE_DEFAULT_*);
    # asset_ops.hpp: core_exchange_rate = price(asset(), asset(0, 1.3.1))
    order = [1, {"fee": fee, "seller": "1.2.6", "amount_to_sell": {"amount": 1},
                 "min_to_receive": {"amount": 1, "asset_id": "1.3.1"}}]
    back = deserialize_operation(serialize_operation(order, "TEST"), "TEST")[1]
    assert back["expiration"] == "2106-02-07T06:28:15" and back["fill_or_kill"] is False
    assert back["amount_to_sell"] == {"amount": 1, "asset_id": "1.3.0"}
    feed = [19, {"fee": fee, "publisher": "1.2.6", "asset_id": "1.3.1", "feed": {}}]
    back = deserialize_operation(serialize_operation(feed, "TEST"), "TEST")[1]["feed"]
    assert (back["maintenance_collateral_ratio"], back["maximum_short_squeeze_ratio"]) == (
        1750, 1500)
    create = [10, dict(op[1], common_options={})]
    back = deserialize_operation(serialize_operation(create, "TEST"), "TEST")[1]
    assert back["common_options"]["core_exchange_rate"] == {
        "base": {"amount": 0, "asset_id": "1.3.0"}, "quote": {"amount": 0, "asset_id": "1.3.1"}}


@pytest.mark.parametrize("field, value, error", [
    ("amount", {"amount": 2 ** 63, "asset_id": CORE}, errors.IntegerOutOfRange),
    ("amount", {"amount": "1.5", "asset_id": CORE}, errors.InvalidField),
    ("amount", {"amount": [1], "asset_id": CORE}, errors.InvalidField),
    ("to", "1.3.7", errors.InvalidObjectId),
    ("amount", 5, errors.InvalidField),
])
def test_wire_fields_out_of_range_or_of_wrong_type_stay_errors(field, value, error):
    op = transfer_wire(1)
    with pytest.raises(error, match=f"transfer_operation.{field}"):
        serialize_operation([0, dict(op[1], **{field: value})], "TEST")


def test_integer_literal_beyond_64_bits_fails_the_message():
    """fc/src/io/json.cpp ``number_from_stream`` reads an integer literal
    with ``fc::to_uint64`` (``to_int64`` when negative), fc/src/string.cpp;
    beyond the range the whole message is a parse error, answered -32700
    "Invalid JSON message" with the exception as data (fc/src/rpc/
    websocket_api.cpp ``on_message``); its last stack frame carries the
    message, where python-bitshares finds the request id."""
    raw = (b'{"id": 7, "method": "call", "params": [0, "get_objects", '
           b'[["1.2.0"], 18446744073709551616]]}')
    with pytest.raises(RpcError) as info:
        parse_request(raw)
    error = info.value
    assert (error.code, error.message, error.request_id) == (-32700, "Invalid JSON message", None)
    assert error.data["code"] == 4 and error.data["name"] == "parse_error_exception"
    assert error.data["stack"][0]["format"] == "Couldn't parse uint64_t"
    assert error.data["stack"][1]["data"] == {"i": "18446744073709551616"}
    assert orjson.loads(error.data["stack"][-1]["data"]["str"])["id"] == 7
    reply = orjson.loads(encode_error(error))
    assert reply["id"] is None and reply["error"]["message"] == "Invalid JSON message"
    with pytest.raises(RpcError, match="Invalid JSON message") as info:
        parse_request(b'{"id": 1, "method": "get_block", "params": [-9223372036854775809]}')
    assert info.value.data["stack"][0]["format"] == "Couldn't parse int64_t"


def test_integers_at_the_64_bit_edges_strings_and_doubles_parse():
    raw = (b'{"id": 1, "method": "call", "params": [0, "f", ["18446744073709551616", '
           b'18446744073709551615, -9223372036854775808, 1.00000000000000000000001, '
           b'"x\\"123456789012345678901234"]]}')
    assert parse_request(raw).args[:3] == [
        "18446744073709551616", 2 ** 64 - 1, -(2 ** 63)]


def test_initialized_members_keep_their_wire_class():
    """A member with a C++ initializer is still of its type's class, so
    what dispatches on the member types (custom authority restrictions,
    protocol/restrictions.py) sees an integer, a bool, an account id."""
    from nodeapi.protocol.operations.chain_parameters import CHAIN_PARAMETERS
    from nodeapi.protocol.serialize import Bool, Int
    from nodeapi.protocol.graphene_types import ObjectIdType
    from nodeapi.protocol.types import ACCOUNT_OPTIONS, ASSET_OPTIONS

    fields = dict(ASSET_OPTIONS.fields)
    assert isinstance(fields["max_supply"], Int) and fields["max_supply"].default == (
        10 ** 15).to_bytes(8, "little")
    assert isinstance(dict(ACCOUNT_OPTIONS.fields)["voting_account"], ObjectIdType)
    params = dict(CHAIN_PARAMETERS.fields)
    assert isinstance(params["count_non_member_votes"], Bool)
    assert params["block_interval"].default == b"\x05"


def test_fee_parameters_left_out_keep_their_initializers():
    """transfer.hpp ``fee_params_t``: ``fee = 20 * GRAPHENE_BLOCKCHAIN_PRECISION``,
    ``price_per_kbyte = 10 * GRAPHENE_BLOCKCHAIN_PRECISION``;
    limit_order_create's ``fee = 5 * ...``; fee_schedule.hpp ``scale =
    GRAPHENE_100_PERCENT`` (10000)."""
    op = [31, {"fee": {"amount": 0, "asset_id": "1.3.0"}, "new_parameters": {
        "current_fees": {"parameters": [[0, {"fee": 5}], [1, {}]]}}}]
    fees = deserialize_operation(serialize_operation(op, "TEST"), "TEST")[1][
        "new_parameters"]["current_fees"]
    assert fees == {"parameters": [[0, {"fee": 5, "price_per_kbyte": 10 * 100000}],
                                   [1, {"fee": 5 * 100000}]], "scale": 10000}


def test_block_numbers_in_a_vector_are_read_like_uint32(db):
    """database_api.cpp ``get_block_header_batch(vector<uint32_t>)``: each
    number through ``as_uint64`` (a double, a decimal string); a negative
    or non-numeric one stays an error."""
    assert db.call("get_block_header_batch", [[1.0, "1", 1]]) == db.call(
        "get_block_header_batch", [[1]])
    for bad in (-1, "x", [1]):
        with pytest.raises(ApiError, match="block_nums"):
            db.call("get_block_header_batch", [[bad]])
