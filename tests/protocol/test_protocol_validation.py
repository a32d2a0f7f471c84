"""validate() of every operation type 0-77 on the wire form (graphene
libraries/protocol/*.cpp), with graphene's texts where clients match on
them; and the chain refusing an invalid operation before evaluating it."""

import pytest

from kit.operation_samples import DEV_PUB, sample

from nodeapi.protocol.authorities import VIRTUAL_OPERATIONS
from nodeapi.protocol.errors import InvalidField, InvalidOperation, UnknownOperation
from nodeapi.protocol.validation import validate_operation


#: a virtual operation's validate(): ``FC_ASSERT( !"virtual operation" )``
#: (market.hpp, htlc.hpp, credit_offer.hpp), asset_settle_cancel's
#: ``!"Virtual operation"`` (asset_ops.hpp), fba_distribute's ``false``
#: (fba.hpp); fc's text ends in ": " after an assert without a message
VIRTUAL_TEXTS = {42: 'Assert Exception: !"Virtual operation": ',
                 44: "Assert Exception: false: "}


@pytest.mark.parametrize("kind", range(78))
def test_samples_validate_and_virtual_operations_do_not(kind):
    if kind in VIRTUAL_OPERATIONS:
        with pytest.raises(InvalidOperation) as caught:
            validate_operation(sample(kind))
        assert caught.value.message == VIRTUAL_TEXTS.get(
            kind, 'Assert Exception: !"virtual operation": ')
        assert caught.value.name == "assert_exception"
    else:
        validate_operation(sample(kind))


def _set(path, value):
    def change(data):
        *parents, last = path.split(".")
        for p in parents:
            data = data[p]
        data[last] = value
    return change


NEG = {"amount": -1, "asset_id": "1.3.0"}
ZERO = {"amount": 0, "asset_id": "1.3.0"}

#: (type, change, message regex)
FAILURES = [
    (0, _set("to", "1.2.6"), r"^Assert Exception: from != to: $"),
    (0, _set("amount", ZERO), r"amount.amount > 0"),
    (0, _set("fee", NEG), r"^Assert Exception: fee.amount >= 0: $"),
    (1, _set("min_to_receive", {"amount": 1, "asset_id": "1.3.0"}),
     r"amount_to_sell.asset_id != min_to_receive.asset_id"),
    (1, _set("extensions", {"on_fill": [[0, {"fee_asset_id": "1.3.0", "spread_percent": 0,
                                              "size_percent": 1, "expiration_seconds": 1,
                                              "repeat": False, "extensions": []}]]}),
     r"The spread percentage must be positive"),
    (5, _set("name", "Alice"), r"^Assert Exception: is_valid_name\( name \)"),
    (5, _set("name", "a..b"), r"is_valid_name"),
    (5, _set("owner.weight_threshold", 2),
     r"cannot create an account with an impossible owner authority threshold"),
    (5, _set("options.num_witness", 1),
     r"May not specify fewer witnesses or committee members than the number voted for."),
    (6, lambda d: d.pop("new_options"), r"has_action"),
    (6, _set("account", "1.2.4"), r"account != GRAPHENE_TEMP_ACCOUNT"),
    (7, _set("new_listing", 4), r"new_listing < 0x4"),
    (10, _set("symbol", "BITUSD"), r"is_valid_symbol"),
    (10, _set("common_options.core_exchange_rate.quote.asset_id", "1.3.2"),
     r"dummy.asset_id == asset_id_type\(1\)"),
    (10, _set("common_options.flags", 0x20), r"Can not set global_settle flag"),
    (10, _set("is_prediction_market", True),
     r"Cannot have a User-Issued Asset implement a prediction market."),
    (11, _set("new_issuer", "1.2.6"), r"issuer != \*new_issuer"),
    (11, _set("extensions", {"skip_core_exchange_rate": False}),
     r"If skip_core_exchange_rate is specified, it can only be true"),
    (14, _set("asset_to_issue", {"amount": 5, "asset_id": "1.3.0"}),
     r"asset_to_issue.asset_id != asset_id_type\(0\)"),
    (16, _set("fee", {"amount": 0, "asset_id": "1.3.1"}), r"fee.asset_id == asset_id_type\(\)"),
    (19, _set("asset_id", "1.3.5"), r"feed.is_for\( asset_id \)"),
    (20, _set("url", "x" * 127), r"url.size\(\) < GRAPHENE_MAX_URL_LENGTH"),
    (22, _set("proposed_ops", []), r"!proposed_ops.empty\(\)"),
    (22, _set("proposed_ops", [{"op": sample(0)[:1] + [dict(sample(0)[1], to="1.2.6")]}]),
     r"from != to"),
    (22, _set("proposed_ops", [{"op": sample(4)}]), r"virtual operation"),
    (23, _set("active_approvals_to_remove", ["1.2.7"]),
     r"Cannot add and remove approval at the same time."),
    (25, _set("authorized_account", "1.2.6"), r"withdraw_from_account != authorized_account"),
    (31, _set("new_parameters.block_interval", 31), r"block_interval"),
    (34, _set("daily_pay", 0), r"daily_pay > 0"),
    (35, _set("fee", ZERO), r"fee.amount > 0"),
    (37, _set("fee", {"amount": 1, "asset_id": "1.3.0"}), r"fee == asset\(\)"),
    (37, _set("balance_owner_key", "TEST1111111111111111111111111111111114T1Anm"),
     r"balance_owner_key != public_key_type\(\)"),
    (38, _set("issuer", "1.2.7"), r"issuer != from"),
    (39, lambda d: d["outputs"].reverse(), r"all outputs must be sorted by commitment id"),
    (40, _set("inputs", []), r"there must be at least one input"),
    (41, _set("amount", {"amount": 5, "asset_id": "1.3.1"}), r"amount.asset_id == fee.asset_id"),
    (47, _set("asset_id", "1.3.0"), r"fee.asset_id != asset_id"),
    (49, _set("amount", ZERO), r"HTLC amount should be greater than zero"),
    (54, _set("account", "1.2.0"), r"Can not create custom authority for special accounts"),
    (54, _set("valid_to", "2029-01-01T00:00:00"), r"valid_from must be earlier than valid_to"),
    (55, lambda d: d.pop("new_auth"), r"Must update something"),
    (57, _set("target_type", 0), r"Target type can not be liquid"),
    (57, _set("amount", {"amount": 5, "asset_id": "1.3.1"}), r"Amount must be in BTS so far"),
    (59, _set("asset_b", "1.3.0"),
     r"ID of the first asset should be smaller than ID of the second asset"),
    (66, lambda d: d.pop("new_fee_rate"), r"Should change something"),
    (69, _set("max_duration_seconds", 381 * 86400),
     r"Maximum duration should not be greater than 380 days"),
    (69, _set("acceptable_collateral", []), r"Acceptable collateral list should not be empty"),
    (71, lambda d: d.pop("delta_amount"), r"Should change something - at least one"),
    (72, _set("extensions", {"auto_repay": 3}), r"auto_repay should be less than 3"),
    (75, _set("withdrawal_fee_percent", 1), r"Withdrawal fee percent can only be updated to zero"),
    (77, lambda d: d.pop("delta_amount_to_sell"),
     r"Cannot update limit order if nothing is specified to update"),
]


@pytest.mark.parametrize("kind, change, message", FAILURES,
                         ids=[f"{f[0]}-{i}" for i, f in enumerate(FAILURES)])
def test_rule_failures(kind, change, message):
    op = sample(kind)
    change(op[1])
    with pytest.raises(InvalidOperation, match=message):
        validate_operation(op)


def test_malformed_and_unknown():
    with pytest.raises(InvalidField, match="operation 0: missing or malformed field"):
        validate_operation([0, {"fee": {"amount": 1}}])
    with pytest.raises(UnknownOperation):
        validate_operation([78, {}])
    assert DEV_PUB.startswith("TEST")


def test_chain_refuses_an_invalid_operation_before_evaluating_it(chain):
    """transaction::validate runs each operation's validate() first: a
    transfer to oneself is refused with graphene's assertion, not evaluated."""
    from nodeapi.protocol.transaction import sign_transaction
    from kit.keys import DEV_WIF
    from nodeapi.protocol.keys import PrivateKey

    op = sample(0)
    op[1].update({"from": "1.2.6", "to": "1.2.6", "fee": {"amount": 2100000,
                                                          "asset_id": "1.3.0"}})
    del op[1]["memo"]
    trx = {"ref_block_num": 0, "ref_block_prefix": 0, "expiration": "2016-01-18T09:19:00",
           "operations": [op], "extensions": []}
    trx = sign_transaction(trx, chain.chain_id, [PrivateKey.from_wif(DEV_WIF)])
    before = dict(chain.state.objects)
    with pytest.raises(InvalidOperation, match="^Assert Exception: from != to: $"):
        chain.push_transaction(trx)
    assert chain.state.objects == before
