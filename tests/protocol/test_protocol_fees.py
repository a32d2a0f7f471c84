"""Fees of every operation type 0-77, computed here by hand from graphene's
rules (each operation's ``calculate_fee``, fee_schedule_calc.cpp,
fee_schedule.hpp, database_api.cpp ``get_required_fees``) under the bundled
genesis schedule, and checked against nodeapi.protocol.fee_schedule."""

import copy

import pytest

from kit.operation_samples import GENESIS, MEMO, sample

from nodeapi.protocol.errors import InvalidField, UnknownOperation
from nodeapi.protocol.fee_parameters import DEFAULT_FEE_PARAMETERS, fee_parameters
from nodeapi.protocol.fee_schedule import operation_fee, required_fees
from nodeapi.protocol.operations import VIRTUAL_OPERATIONS, table, transfers

P = 100000  # GRAPHENE_BLOCKCHAIN_PRECISION
SCHEDULE = GENESIS["initial_parameters"]["current_fees"]
MEMO_BYTES = 1 + 33 + 33 + 8 + 1  # optional flag + from + to + nonce + empty message


def kb(size: int, price: int) -> int:
    """graphene calculate_data_fee."""
    return size * price // 1024


#: type -> required core fee of operation_samples.SAMPLES[type] under the
#: bundled genesis (its entries, else bitshares-core's defaults)
EXPECTED = {
    0: 20 * P + kb(MEMO_BYTES, 10 * P),       # transfer: fee + memo at price_per_kbyte
    1: 5 * P, 2: 0, 3: 20 * P, 4: 0,
    5: 2000 * P + kb(144, P),                  # premium name + whole op (144 bytes)
    6: 20 * P + kb(54, P),                     # new_options: whole op (54 bytes)
    7: 300000, 8: 10000 * P,                   # lifetime membership
    9: 500 * P,
    10: 500000 * P + kb(64, 10),               # 3-letter symbol
    11: 500 * P + kb(60, 10), 12: 500 * P, 13: 500 * P,
    14: 20 * P + kb(1, P),                     # asset_issue: the absent memo's flag byte
    15: 20 * P, 16: P, 17: 100 * P, 18: 500 * P, 19: P, 20: 5000 * P, 21: 20 * P,
    22: 20 * P + kb(40, 10), 23: 20 * P + kb(53, 10), 24: P, 25: P, 26: P,
    27: 20 * P + kb(MEMO_BYTES, 10), 28: 0, 29: 5000 * P, 30: 20 * P, 31: P, 32: P,
    33: 20 * P, 34: 5000 * P,
    35: P + kb(2063, 10),                      # custom: whole op (2063 bytes)
    36: 2 * P,                                 # assert: fee per predicate (2)
    37: 0, 38: 20 * P + kb(MEMO_BYTES, 10),
    39: 5 * P + 2 * 5 * P,                     # price_per_output x 2 outputs
    40: 5 * P + 3 * 5 * P, 41: 5 * P, 42: 0, 43: 20 * P, 44: 0,
    45: 20 * P,                                # no entry: call_order_update's fee
    46: 0,
    47: P,                                     # no entry: asset_fund_fee_pool's fee
    48: 500 * P,                               # no entry: asset_update's fee
    49: P + 2 * P + kb(MEMO_BYTES, 10 * P),    # 2 days, memo at transfer's price
    50: P + 2 * P,                             # 1025-byte preimage: 2 kb
    51: 0, 52: P + 4 * P,                      # 3 days + 1 s: 4 days
    53: 0,
    54: P + (P // 10) * (1 + 42),              # price_per_byte x (restrictions + auth)
    55: P + (P // 10) * (1 + 42),
    56: P, 57: 50 * P, 58: 50 * P, 59: 50 * P, 60: 0, 61: P // 10, 62: 5 * P, 63: P,
    64: P, 65: 0, 66: P, 67: P, 68: P,
    69: P + kb(62, P), 70: 0, 71: P + kb(29, P), 72: P, 73: P, 74: 0, 75: P, 76: P,
    77: 3 * P // 8,
}
@pytest.mark.parametrize("kind", range(78))
def test_fee_of_every_type(kind):
    assert operation_fee(sample(kind), SCHEDULE, "TEST") == EXPECTED[kind]


def test_every_type_has_a_row():
    assert sorted(EXPECTED) == list(range(78)) == sorted(DEFAULT_FEE_PARAMETERS)
    with pytest.raises(UnknownOperation):
        operation_fee([78, {}], SCHEDULE, "TEST")
    with pytest.raises(UnknownOperation):
        operation_fee(["transfer", {}], SCHEDULE, "TEST")
    assert operation_fee(["0", {}], SCHEDULE, "TEST") == 20 * P  # fc reads "0" as 0
    with pytest.raises(InvalidField, match="missing or malformed field 'symbol'"):
        operation_fee([10, {}], SCHEDULE, "TEST")


def test_memo_and_name_variants():
    op = sample(0)
    del op[1]["memo"]
    assert operation_fee(op, SCHEDULE, "TEST") == 20 * P
    issue = sample(14)
    issue[1]["memo"] = MEMO
    assert operation_fee(issue, SCHEDULE, "TEST") == 20 * P + kb(MEMO_BYTES, P)
    upgrade = sample(8)
    upgrade[1]["upgrade_to_lifetime_member"] = False
    assert operation_fee(upgrade, SCHEDULE, "TEST") == 2000 * P


def test_name_and_symbol_variants():
    create = sample(5)
    create[1]["name"] = "bcd"  # no vowel: cheap; body 142 bytes
    assert operation_fee(create, SCHEDULE, "TEST") == 5 * P + kb(142, P)
    asset = sample(10)
    for symbol, fee in (("ABCD", 300000 * P), ("ABCDE", 5000 * P), ("ABC.D", 5000 * P)):
        asset[1]["symbol"] = symbol
        assert operation_fee(asset, SCHEDULE, "TEST") == fee
    # a sub-asset pays account_transfer's fee once ticket_create has an entry
    with_tickets = dict(SCHEDULE, parameters=SCHEDULE["parameters"] + [[57, {"fee": 7}]])
    assert operation_fee(asset, with_tickets, "TEST") == 500 * P
    asset[1]["symbol"] = "ABCDE"
    assert operation_fee(asset, with_tickets, "TEST") == 5000 * P


def test_schedule_lookup_rules():
    empty = {"parameters": [], "scale": 10000}
    assert fee_parameters(empty, 45) == {"fee": 20 * P}  # defaults without entries
    assert fee_parameters({"parameters": [[3, {"fee": 11}]]}, 45) == {"fee": 11}
    assert fee_parameters({"parameters": [[16, {"fee": 12}]]}, 47) == {"fee": 12}
    assert fee_parameters({"parameters": [[11, {"fee": 13}]]}, 48) == {"fee": 13}
    assert fee_parameters({"parameters": [[45, {"fee": 14}], [3, {"fee": 11}]]}, 45) == {
        "fee": 14}
    # ticket fees ignore the schedule (fee_helper<ticket_*_operation>)
    assert fee_parameters({"parameters": [[57, {"fee": 1}]]}, 57) == {"fee": 50 * P}
    # fields an entry leaves out keep their defaults; strings are accepted
    assert fee_parameters({"parameters": [[0, {"fee": "5"}]]}, 0) == {
        "fee": 5, "price_per_kbyte": 10 * P}
    with pytest.raises(InvalidField):
        fee_parameters({"parameters": [[0, {"fee": -5}]]}, 0)
    # htlc_create's memo uses transfer's price_per_kbyte, default when absent
    assert operation_fee(sample(49), empty, "TEST") == P + 2 * P + kb(MEMO_BYTES, 10 * P)
    assert operation_fee(sample(49), {"parameters": [[0, {"price_per_kbyte": 1024}]]},
                         "TEST") == \
        P + 2 * P + MEMO_BYTES


def test_scale():
    half = dict(SCHEDULE, scale=5000)
    assert operation_fee(sample(0), half, "TEST") == EXPECTED[0] * 5000 // 10000
    assert operation_fee(sample(37), half, "TEST") == 0


def test_required_fees_in_another_asset_round_up():
    cer = {"base": {"amount": 3, "asset_id": "1.3.0"}, "quote": {"amount": 7, "asset_id": "1.3.1"}}
    ops = [sample(1), sample(37), sample(4)]
    before = copy.deepcopy(ops)
    assert required_fees(ops, SCHEDULE, cer, "TEST") == [
        {"amount": -(-5 * P * 7 // 3), "asset_id": "1.3.1"},
        {"amount": 0, "asset_id": "1.3.1"},
        {"amount": 0, "asset_id": "1.3.1"}]  # a virtual operation: 0, not refused
    assert ops == before  # graphene works on copies
    flipped = {"base": cer["quote"], "quote": cer["base"]}
    assert required_fees([sample(1)], SCHEDULE, flipped, "TEST")[0]["amount"] == -(-5 * P * 7 // 3)


def test_required_fees_of_nested_proposals():
    core = {"base": {"amount": 1, "asset_id": "1.3.0"}, "quote": {"amount": 1, "asset_id": "1.3.0"}}
    fee = {"amount": 20 * P, "asset_id": "1.3.0"}
    prop = sample(22)
    assert required_fees([prop], SCHEDULE, core, "TEST") == [[fee, [fee]]]
    inner = sample(22)
    for _ in range(3):
        inner[1]["proposed_ops"] = [{"op": copy.deepcopy(inner)}]
    [answer] = required_fees([inner], SCHEDULE, core, "TEST")
    assert answer[0]["asset_id"] == "1.3.0"
    inner[1]["proposed_ops"] = [{"op": copy.deepcopy(inner)}]  # five proposals deep
    with pytest.raises(InvalidField, match="current_recursion < max_recursion"):
        required_fees([inner], SCHEDULE, core, "TEST")


def test_chain_required_fees(chain):
    assert chain.required_fees([sample(0), sample(2)]) == [
        {"amount": EXPECTED[0], "asset_id": "1.3.0"}, {"amount": EXPECTED[2], "asset_id": "1.3.0"}]
    assert chain.required_fee(sample(4)) == {"amount": 0, "asset_id": "1.3.0"}


def test_each_family_holds_its_own_fee_formulas_and_authorities():
    """A fee formula or an authority rule sits in the family module of its
    operation (changing a fee rule touches that module and this test), and
    the virtual operations' ``calculate_fee`` is 0 (their fee_params_t is
    empty)."""
    for family in table._FAMILIES:
        for name in ("CALCULATE_FEE", "REQUIRED_AUTHORITIES", "OTHER_AUTHORITIES"):
            rules = getattr(family, name)
            assert set(rules) <= set(family.OPERATIONS), (family.__name__, name)
            assert all(table.__dict__[name][k] is rule for k, rule in rules.items())
    for kind in VIRTUAL_OPERATIONS:
        assert operation_fee(sample(kind), SCHEDULE, "TEST") == 0
    # a transfer without a memo pays its flat fee (the family's formula)
    assert transfers.CALCULATE_FEE[0]({"fee": {}}, {"fee": 7, "price_per_kbyte": 1}, None) == 7
