"""The texts clients match, side by side: the same operations, signed by the
same keys, sent to bitshares-core 7.0.2's witness_node and to a nodeapi
node, each producing its own chain from the bundled genesis; the refusals
must read the same (message, code, and the values fc puts in
``data.stack[0].data``), and so must a failed proposal's ``fail_reason``.

Reference functions: transaction.cpp ``verify_authority``
(tx_missing_active_auth), evaluator.cpp ``prepare_fee`` (the fee pool),
database_api.cpp ``get_account_from_string`` ("no such account"),
proposal_evaluator.cpp (``fail_reason = e.to_string()``),
transfer_evaluator.cpp (Insufficient Balance), db_update.cpp
``update_last_irreversible_block`` (70 %)."""

import re
import time

import pytest

from nodeapi.protocol.transaction import sign_transaction

from kit.keys import CHAIN_ID, DEV_WIF, OTHER_WIF
from kit.reference import INIT_WITNESSES, requires_reference
from kit.side_by_side import Refused, amount, core, on_both, start_sides, stop_sides

pytestmark = [pytest.mark.reference, pytest.mark.slow, requires_reference]

INIT0, INIT1 = "1.2.6", "1.2.7"
GOLD = "1.3.1"


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    """(reference, nodeapi), both with init0 holding the genesis balance,
    GOLD (1.3.1, precision 3, 2 GOLD sat per TEST sat) issued to init0 and
    its fee pool left at 1,234,567 TEST sat."""
    pair = start_sides(tmp_path_factory.mktemp("texts"))
    try:
        def prepare(side):
            options = {
                "max_supply": 10 ** 12, "market_fee_percent": 0, "max_market_fee": 0,
                "issuer_permissions": 0, "flags": 0,
                "core_exchange_rate": {"base": core(1), "quote": amount(2, GOLD)},
                "whitelist_authorities": [], "blacklist_authorities": [],
                "whitelist_markets": [], "blacklist_markets": [], "description": "",
                "extensions": []}
            assert side.push([10, {"issuer": INIT0, "symbol": "GOLD", "precision": 3,
                                   "common_options": options, "is_prediction_market": False,
                                   "extensions": []}]) == [[1, GOLD]]
            side.push([14, {"issuer": INIT0, "asset_to_issue": amount(10 ** 8, GOLD),
                            "issue_to_account": INIT0, "extensions": []}])
            pool = int(side.get("2.3.1")["fee_pool"])
            side.push([47, {"issuer": INIT0, "asset_id": GOLD,
                            "amount_to_claim": core(pool - 1234567), "extensions": []}])
            assert int(side.get("2.3.1")["fee_pool"]) == 1234567
        on_both(pair, prepare)
        yield pair
    finally:
        stop_sides(pair)


def test_missing_active_authority(sides):
    """tx_missing_active_auth: code 4010001, "missing required active
    authority: Missing Active Authority 1.2.7", with id, auth and owner."""
    op = [0, {"from": INIT1, "to": INIT0, "amount": core(1), "extensions": []}]
    theirs, mine = (side.refusal(op, wif=OTHER_WIF) for side in sides)
    assert theirs["message"] == mine["message"] == (
        "Execution error: missing required active authority: Missing Active Authority 1.2.7")
    assert theirs["code"] == mine["code"] == 4010001
    assert theirs["data"]["name"] == mine["data"]["name"] == "tx_missing_active_auth"
    assert theirs["data"]["stack"][0]["data"] == mine["data"]["stack"][0]["data"]


def test_fee_pool_shortfall(sides):
    """prepare_fee: 4,000,000 GOLD sat convert to 2,000,000 TEST sat, more
    than the 1,234,567 in the pool."""
    op = [0, {"fee": amount(4000000, GOLD), "from": INIT0, "to": INIT1,
              "amount": core(1), "extensions": []}]
    theirs, mine = (side.refusal(op, fees=False) for side in sides)
    assert theirs["message"] == mine["message"] == (
        "Execution error: Assert Exception: core_fee_paid <= fee_asset_dyn_data->fee_pool: "
        "Fee pool balance of '12.34567 TEST' is less than the 20 TEST required to convert "
        "4000 GOLD")


@pytest.mark.parametrize("method, args", [
    ("get_account_balances", ["nobody", []]),
    ("get_named_account_balances", ["nobody", []]),
    ("get_vesting_balances", ["nobody"]),
    ("get_committee_member_by_account", ["nobody"]),
    ("get_witness_by_account", ["nobody"]),
    ("get_withdraw_permissions_by_giver", ["nobody", "1.12.0", 10]),
    ("get_htlc_by_from", ["nobody", "1.16.0", 10]),
    ("get_tickets_by_account", ["nobody"]),
    ("get_limit_orders_by_account", ["nobody"]),
    ("get_call_orders_by_account", ["nobody", "1.3.0", 10]),
    ("get_account_limit_orders", ["nobody", "TEST", "GOLD", 10]),
    ("get_full_accounts", [["nobody"], False]),
    ("get_account_by_name", ["nobody"]),
])
def test_an_unknown_account(sides, method, args):
    """database_api_helper::get_account_from_string: "no such account"
    where the reference throws it, the empty answer where it does not."""
    outcomes = []
    for side in sides:
        try:
            outcomes.append(("result", side.call(method, *args)))
        except Refused as exc:
            outcomes.append(("error", exc.error["message"]))
    assert outcomes[0] == outcomes[1]
    if outcomes[0][0] == "error":
        assert outcomes[0][1] == "Execution error: Assert Exception: account_ptr: no such account"


def test_transfer_beyond_the_balance(sides):
    """transfer_evaluator: the balance figure is the one the evaluator sees
    (the reference's is before the fee), the rest word for word."""
    op = [0, {"from": INIT0, "to": INIT1, "amount": core(10 ** 16), "extensions": []}]
    theirs, mine = (side.refusal(op)["message"] for side in sides)
    figure = re.compile(r"Insufficient Balance: [\d.]+ TEST,")
    assert figure.search(theirs) and figure.search(mine)
    assert figure.sub("Insufficient Balance: N TEST,", theirs) == \
        figure.sub("Insufficient Balance: N TEST,", mine) == (
            "Execution error: Assert Exception: insufficient_balance: Insufficient Balance: "
            "N TEST, unable to transfer '100000000000 TEST' from account 'init0' to 'init1' "
            "Unable to transfer 100000000000 TEST from init0 to init1")


def test_proposal_fail_reason(sides):
    """proposal_evaluator: an approved proposal whose asset_issue (by init1,
    not GOLD's issuer) fails keeps fc's to_string of the error."""
    def reason(side):
        # init1 can pay the proposed operation's fee: the issuer check decides
        side.push([0, {"from": INIT0, "to": INIT1, "amount": core(10 ** 9), "extensions": []}])
        issue = [14, {"fee": core(10 ** 8), "issuer": INIT1, "asset_to_issue": amount(1, GOLD),
                      "issue_to_account": INIT0, "extensions": []}]
        [[_tag, pid]] = side.push([22, {
            "fee_paying_account": INIT0, "expiration_time": side.expiration(3000),
            "proposed_ops": [{"op": issue}], "extensions": []}])
        side.push([23, {"fee_paying_account": INIT0, "proposal": pid,
                        "active_approvals_to_add": [INIT1], "active_approvals_to_remove": [],
                        "owner_approvals_to_add": [], "owner_approvals_to_remove": [],
                        "key_approvals_to_add": [], "key_approvals_to_remove": [],
                        "extensions": []}])
        return side.get(pid)["fail_reason"]

    assert on_both(sides, reason) == ["Assert Exception: o.issuer == a.issuer: "] * 2


def test_last_irreversible_block_rule(sides):
    """update_last_irreversible_block: the reference's LIB is the 70 % rule
    over its 11 active witnesses' last confirmed blocks (read in one call):
    ascending, at offset (10000 - 7000) * 11 // 10000 = 3, the block 8 of
    them confirmed (75 % would take offset 2)."""
    reference = sides[0]
    deadline = time.monotonic() + 60
    while True:  # until each of the 11 has made a block (a round: 11 s)
        objects = reference.call("get_objects", ["2.1.0", *INIT_WITNESSES])
        dgp, witnesses = objects[0], objects[1:]
        confirmed = sorted(w["last_confirmed_block_num"] for w in witnesses)
        if confirmed[0] > 0 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert len(confirmed) == 11 and len(set(confirmed)) == 11  # one block each, in turn
    assert dgp["last_irreversible_block_num"] == confirmed[3] > 0


def _fc(error: dict) -> tuple:
    """(code, fc's name, its description, the top stack entry's format)."""
    data = error["data"]
    return error["code"], data["name"], data["message"], data["stack"][0]["format"]


def _resigned(side, trx: dict) -> dict:
    """``trx`` (changed after signing) signed again as it now reads."""
    return sign_transaction(dict(trx, signatures=[]), CHAIN_ID, [DEV_WIF], "TEST")


def _refused_trx(side, trx: dict) -> dict:
    with pytest.raises(Refused) as info:
        side.call("broadcast_transaction", trx, api="network_broadcast")
    return info.value.error


@pytest.mark.parametrize("case", ["expired", "too_far", "virtual", "extensions_object",
                                  "cancel_unknown_order"])
def test_fc_exceptions_of_refused_transactions(sides, case):
    """The same refusals carry the same fc exception on both nodes: name,
    code, description and the format of the top stack entry (with its
    ``${name}`` placeholders).  db_block.cpp ``_apply_transaction``
    (``FC_ASSERT( trx.expiration <= now + ...max_time_until_expiration )``,
    ``FC_ASSERT( now <= trx.expiration )``: assert_exception), market.hpp
    fill_order's ``validate()`` (``FC_ASSERT( !"virtual operation" )``),
    bitshares-fc variant.cpp ``variant::get_array`` (bad_cast_exception 7
    for ``"extensions": {}`` of a transfer), market_evaluator.cpp
    (``limit_order_cancel_nonexist_order``, 3050201)."""
    transfer = [0, {"from": INIT0, "to": INIT1, "amount": core(1), "extensions": []}]
    got = []
    for side in sides:
        trx = side.signed(side.with_fees([transfer]))
        if case == "expired":
            trx = _resigned(side, dict(trx, expiration=side.expiration(-1)))
        elif case == "too_far":
            trx = _resigned(side, dict(trx, expiration=side.expiration(86400 + 60)))
        elif case == "virtual":
            fill = [4, {"fee": core(0), "order_id": "1.7.0", "account_id": INIT0,
                        "pays": core(1), "receives": core(1),
                        "fill_price": {"base": core(1), "quote": core(1)}, "is_maker": True}]
            trx = side.signed([fill])
        elif case == "extensions_object":
            trx["operations"][0][1]["extensions"] = {}
        else:
            trx = side.signed(side.with_fees([[2, {"fee_paying_account": INIT0,
                                                   "order": "1.7.99", "extensions": []}]]))
        got.append(_refused_trx(side, trx))
    theirs, mine = got
    assert _fc(theirs) == _fc(mine), (theirs, mine)
    assert theirs["message"] == mine["message"]


@pytest.mark.parametrize("method, args", [
    ("get_call_orders", ["GOLD", 10]),
    ("get_collateral_bids", ["GOLD", 10, 0]),
    ("get_vested_balances", [["1.15.99"]]),
])
def test_fc_exceptions_of_refused_reads(sides, method, args):
    """database_api.cpp: a read of what does not exist or is not
    market-issued is refused with fc's ``assert_exception`` on both
    (``asset_object::bitasset_data``'s assert, ``get_collateral_bids``'
    "Asset is not a MPA", the index's "Unable to find Object")."""
    got = []
    for side in sides:
        with pytest.raises(Refused) as info:
            side.call(method, *args)
        got.append(info.value.error)
    theirs, mine = got
    assert (theirs["code"], theirs["data"]["name"], theirs["data"]["message"]) == \
        (mine["code"], mine["data"]["name"], mine["data"]["message"]) == \
        (10, "assert_exception", "Assert Exception")
