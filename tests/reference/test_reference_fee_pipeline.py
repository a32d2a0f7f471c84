"""The fee leaves the payer's balance after the operation, on the reference
and on nodeapi: the same signed transactions broadcast to bitshares-core
7.0.2's witness_node, whose blocks a nodeapi node follows; the balances
both then answer are compared with each other and with amounts by hand
(evaluator.hpp ``evaluator<>::apply``: ``db_adjust_balance(fee_payer,
-fee_from_account)`` after ``do_apply``).

init2 (1.2.8) and init3 (1.2.9) hold no TEST: only init0 claims the genesis
balance.  Fees: the genesis schedule's vesting_balance_withdraw 2,000,000
and limit_order_create 500,000."""

import pytest

from kit.chain import claim_wire
from kit.reference import ReferenceError, nodeapi_follower, requires_reference, start_reference
from kit.signing import sign_wire_over_head
from kit.wait import wait_until

pytestmark = [pytest.mark.reference, pytest.mark.slow, requires_reference]

INIT0, INIT1, INIT2, INIT3 = "1.2.6", "1.2.7", "1.2.8", "1.2.9"
CORE = "1.3.0"


def amt(n, asset_id=CORE):
    return {"amount": n, "asset_id": asset_id}


def broadcast(ref, *ops):
    """Broadcast one transaction of ``ops`` to the reference and wait for
    its block; the operation results."""
    trx = sign_wire_over_head(ref, list(ops))
    done = ref.call("broadcast_transaction_synchronous", trx, api="network_broadcast",
                    timeout=60)
    return done["trx"]["operation_results"]


def vesting_for(owner, amount):
    return [32, {"creator": INIT0, "owner": owner, "amount": amt(amount),
                 "policy": [0, {"begin_timestamp": "2015-01-01T00:00:00",
                                "vesting_cliff_seconds": 0, "vesting_duration_seconds": 1}]}]


def pending_fees(node, account):
    [acc] = node.call("get_objects", [account])
    [stats] = node.call("get_objects", [acc["statistics"]])
    return int(stats["pending_fees"]), int(stats["pending_vested_fees"])


@pytest.fixture
def nodes(tmp_path):
    ref = start_reference(tmp_path, "producer")
    node = None
    try:
        ref.wait_head(2)
        node = nodeapi_follower(tmp_path, ref)
        yield ref, node
    finally:
        if node is not None:
            node.stop()
        ref.stop()


def test_operations_that_pay_their_own_fee(nodes):
    ref, node = nodes
    broadcast(ref, claim_wire())
    [[_t, vb2], [_t2, vb3], [_t3, gold]] = broadcast(
        ref, vesting_for(INIT2, 10000000), vesting_for(INIT3, 1000000),
        [10, {"issuer": INIT0, "symbol": "GOLD", "precision": 3,
              "common_options": {
                  "max_supply": 10 ** 12, "market_fee_percent": 0, "max_market_fee": 0,
                  "issuer_permissions": 0, "flags": 0,
                  "core_exchange_rate": {"base": amt(1), "quote": amt(1, "1.3.1")},
                  "whitelist_authorities": [], "blacklist_authorities": [],
                  "whitelist_markets": [], "blacklist_markets": [], "description": "",
                  "extensions": {}},
              "is_prediction_market": False, "extensions": []}])
    assert gold == "1.3.1"
    broadcast(ref, [14, {"issuer": INIT0, "asset_to_issue": amt(1000, gold),
                         "issue_to_account": INIT2, "extensions": []}],
              [14, {"issuer": INIT0, "asset_to_issue": amt(10 ** 11, gold),
                    "issue_to_account": INIT0, "extensions": []}],
              [1, {"seller": INIT0, "amount_to_sell": amt(1000000),
                   "min_to_receive": amt(1000, gold), "expiration": "2100-01-01T00:00:00",
                   "fill_or_kill": False, "extensions": {}}])
    # vesting_balance_withdraw: 10,000,000 in, then the 2,000,000 fee out
    broadcast(ref, [33, {"vesting_balance": vb2, "owner": INIT2, "amount": amt(10000000)}])
    # an order filled at once: 1,000,000 TEST received, then the 500,000 fee
    broadcast(ref, [1, {"seller": INIT2, "amount_to_sell": amt(1000, gold),
                        "min_to_receive": amt(1000000), "expiration": "2100-01-01T00:00:00",
                        "fill_or_kill": True, "extensions": {}}])
    # 1,000,000 credited cannot pay a 2,000,000 fee: db_balance.cpp's text
    with pytest.raises(ReferenceError) as refused:
        broadcast(ref, [33, {"vesting_balance": vb3, "owner": INIT3, "amount": amt(1000000)}])
    text = ("Assert Exception: abo->get_balance() >= -delta: Insufficient Balance: init3's "
            "balance of 10 TEST is less than required 20 TEST")
    assert text in refused.value.error["message"]

    # transfer_evaluator.cpp: the balance before the fee against the amount
    moving = [0, {"from": INIT3, "to": INIT0, "amount": amt(1), "extensions": []}]
    with pytest.raises(ReferenceError) as no_transfer:
        broadcast(ref, moving)
    transfer_text = ("Assert Exception: insufficient_balance: Insufficient Balance: 0 TEST, "
                     "unable to transfer '0.00001 TEST' from account 'init3' to 'init0'")
    assert transfer_text in no_transfer.value.error["message"]

    # asset_evaluator.cpp asset_claim_fees: do_evaluate sees GOLD's
    # accumulated_fees before this operation's own GOLD fee is converted
    # into them.  init0 pays 5,000,000 GOLD sat for a transfer (5,000,000
    # accumulated), then makes init2 GOLD's issuer; init2, holding no GOLD,
    # pays the claim's 2,000,000 fee in GOLD out of what it claims
    broadcast(ref, [0, {"fee": amt(5000000, gold), "from": INIT0, "to": INIT1,
                        "amount": amt(1, gold), "extensions": []}],
              [48, {"issuer": INIT0, "asset_to_update": gold, "new_issuer": INIT2,
                    "extensions": []}])
    claim = {"fee": amt(2000000, gold), "issuer": INIT2, "extensions": {}}
    with pytest.raises(ReferenceError) as too_much:
        broadcast(ref, [43, dict(claim, amount_to_claim=amt(6000000, gold))])
    assert "Attempt to claim more fees than have accumulated" in too_much.value.error["message"]
    broadcast(ref, [43, dict(claim, amount_to_claim=amt(5000000, gold))])

    # evaluator.cpp prepare_fee: a fee worth more than GOLD's fee pool (the
    # lower half of GOLD's creation fee: 30,000,000,000 core sat plus an odd
    # size part, halved, less the odd one: 15,000,000,000; less the two
    # fees above: 14,993,000,000)
    [gold_dyn] = ref.call("get_objects", ["2.3.1"])
    pool = int(gold_dyn["fee_pool"])
    costly = [0, {"fee": amt(pool + 1, gold), "from": INIT0, "to": INIT3,
                  "amount": amt(1, gold), "extensions": []}]
    with pytest.raises(ReferenceError) as no_pool:
        broadcast(ref, costly)
    assert pool == 15 * 10 ** 9 - 5000000 - 2000000
    pool_text = ("Assert Exception: core_fee_paid <= fee_asset_dyn_data->fee_pool: Fee pool "
                 "balance of '149930 TEST' is less than the 149930.00001 TEST required to "
                 "convert 14993000.001 GOLD")
    assert pool_text in no_pool.value.error["message"]

    # evaluator.hpp evaluate: a fee below the schedule's
    cheap = [0, {"fee": amt(1), "from": INIT0, "to": INIT3, "amount": amt(5),
                 "extensions": []}]
    with pytest.raises(ReferenceError) as too_cheap:
        broadcast(ref, cheap)
    assert too_cheap.value.error["message"] == ("Execution error: insufficient fee: "
                                                "Insufficient Fee Paid")

    head = ref.head()
    wait_until(lambda: node.head()[0] >= head, timeout=60,
               what=f"nodeapi following the reference to block {head}")
    assert node.call("get_block_header", head) == ref.call("get_block_header", head)
    # nodeapi refuses the same withdrawal with the same text (validated on
    # its own state: validate_transaction is not relayed)
    short = sign_wire_over_head(node, [[33, {"vesting_balance": vb3, "owner": INIT3,
                                             "amount": amt(1000000)}]])
    with pytest.raises(RuntimeError) as also_refused:
        node.call("validate_transaction", short)
    assert text in also_refused.value.args[0]["message"]
    with pytest.raises(RuntimeError) as also_no_transfer:
        node.call("validate_transaction", sign_wire_over_head(node, [moving]))
    assert transfer_text in also_no_transfer.value.args[0]["message"]
    with pytest.raises(RuntimeError) as also_too_cheap:
        node.call("validate_transaction", sign_wire_over_head(node, [cheap]))
    assert also_too_cheap.value.args[0]["message"] == too_cheap.value.error["message"]
    with pytest.raises(RuntimeError) as also_no_pool:
        node.call("validate_transaction", sign_wire_over_head(node, [costly]))
    ours = also_no_pool.value.args[0]["message"]
    assert ours[ours.index("Assert Exception"):] == \
        no_pool.value.error["message"][no_pool.value.error["message"].index("Assert Exception"):]
    expected = [amt(8500000), amt(3000000, gold)]
    for side in (ref, node):
        [dyn] = side.call("get_objects", ["2.3.1"])
        assert int(dyn["accumulated_fees"]) == 2000000
        assert int(dyn["fee_pool"]) == 15 * 10 ** 9 - 5000000 - 2000000
        assert side.call("get_account_balances", INIT2, []) == expected
        assert side.call("get_account_balances", INIT3, []) == []
        assert side.call("get_objects", [vb2])[0]["balance"] == amt(0)
        assert side.call("get_objects", [vb3])[0]["balance"] == amt(1000000)
        # pay_fee: each fee <= cashback_vesting_threshold (10,000,000):
        # 2,000,000 (withdrawal) + 500,000 (the filled order's deferred
        # fee) + 2,000,000 (the claim's GOLD fee in core)
        assert pending_fees(side, INIT2) == (0, 4500000)
