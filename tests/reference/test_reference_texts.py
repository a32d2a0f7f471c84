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

import calendar
import re
import time

import pytest

from nodeapi.chain.schedule import last_irreversible_block
from nodeapi.protocol.transaction import sign_transaction
from nodeapi.protocol.times import format_time

from kit.daemon import Daemon
from kit.keys import CHAIN_ID, DEV_PUB, DEV_WIF, OTHER_WIF
from kit.reference import INIT_WITNESSES, ReferenceError, requires_reference, start_reference
from kit.signing import tapos

pytestmark = [pytest.mark.reference, pytest.mark.slow, requires_reference]

INIT0, INIT1 = "1.2.6", "1.2.7"
GOLD = "1.3.1"


def core(n):
    return {"amount": n, "asset_id": "1.3.0"}


class Side:
    """One node (the reference or nodeapi) behind the same small API:
    ``call(method, *params, api)`` answering the result or raising
    :class:`Refused` with the JSON-RPC error object."""

    def __init__(self, node, reference: bool):
        self.node, self.reference = node, reference

    def call(self, method, *params, api="database"):
        try:
            return self.node.call(method, *params, api=api)
        except ReferenceError as exc:
            raise Refused(exc.error) from None
        except RuntimeError as exc:  # kit.daemon: RuntimeError(error object)
            raise Refused(exc.args[0]) from None

    def signed(self, ops, wif=DEV_WIF):
        props = self.call("get_dynamic_global_properties")
        head_time = calendar.timegm(time.strptime(props["time"], "%Y-%m-%dT%H:%M:%S"))
        trx = dict(tapos(props["head_block_number"], props["head_block_id"], head_time),
                   operations=ops, extensions=[], signatures=[])
        return sign_transaction(trx, CHAIN_ID, [wif], "TEST")

    def push(self, ops, wif=DEV_WIF):
        """Broadcast and wait for the block; the operation results."""
        reply = self.call("broadcast_transaction_synchronous", self.signed(ops, wif),
                          api="network_broadcast")
        return reply["trx"]["operation_results"]

    def refusal(self, ops, wif=DEV_WIF) -> dict:
        with pytest.raises(Refused) as info:
            self.call("broadcast_transaction", self.signed(ops, wif), api="network_broadcast")
        return info.value.error

    def fee(self, op) -> dict:
        return self.call("get_required_fees", [op], "1.3.0")[0]


class Refused(Exception):
    def __init__(self, error):
        super().__init__(error.get("message"))
        self.error = error


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    """(reference, nodeapi), both with init0 holding the genesis balance,
    GOLD (1.3.1, precision 3, 2 GOLD sat per TEST sat) issued to init0 and
    its fee pool left at 1,234,567 TEST sat."""
    tmp = tmp_path_factory.mktemp("texts")
    reference = start_reference(tmp, "reference")
    node = Daemon(tmp / "nodeapi").start()
    try:
        pair = (Side(reference, True), Side(node, False))
        for side in pair:
            side.push([[37, {"fee": core(0), "deposit_to_account": INIT0,
                             "balance_to_claim": "1.15.0", "balance_owner_key": DEV_PUB,
                             "total_claimed": core(10 ** 15)}]])
            options = {
                "max_supply": 10 ** 12, "market_fee_percent": 0, "max_market_fee": 0,
                "issuer_permissions": 0, "flags": 0,
                "core_exchange_rate": {"base": core(1), "quote": {"amount": 2, "asset_id": GOLD}},
                "whitelist_authorities": [], "blacklist_authorities": [],
                "whitelist_markets": [], "blacklist_markets": [], "description": "",
                "extensions": []}
            create = [10, {"fee": core(0), "issuer": INIT0, "symbol": "GOLD", "precision": 3,
                           "common_options": options, "is_prediction_market": False,
                           "extensions": []}]
            create[1]["fee"] = side.fee(create)
            assert side.push([create]) == [[1, GOLD]]
            side.push([[14, {"fee": core(10 ** 8), "issuer": INIT0,
                             "asset_to_issue": {"amount": 10 ** 8, "asset_id": GOLD},
                             "issue_to_account": INIT0, "extensions": []}]])
            pool = int(side.call("get_objects", ["2.3.1"])[0]["fee_pool"])
            side.push([[47, {"fee": core(10 ** 8), "issuer": INIT0, "asset_id": GOLD,
                             "amount_to_claim": core(pool - 1234567), "extensions": []}]])
            assert int(side.call("get_objects", ["2.3.1"])[0]["fee_pool"]) == 1234567
        yield pair
    finally:
        node.stop()
        reference.stop()


def test_missing_active_authority(sides):
    """tx_missing_active_auth: code 4010001, "missing required active
    authority: Missing Active Authority 1.2.7", with id, auth and owner."""
    op = [0, {"fee": core(2000000), "from": INIT1, "to": INIT0, "amount": core(1),
              "extensions": []}]
    theirs, mine = (side.refusal([op], OTHER_WIF) for side in sides)
    assert theirs["message"] == mine["message"] == (
        "Execution error: missing required active authority: Missing Active Authority 1.2.7")
    assert theirs["code"] == mine["code"] == 4010001
    assert theirs["data"]["name"] == mine["data"]["name"] == "tx_missing_active_auth"
    assert theirs["data"]["stack"][0]["data"] == mine["data"]["stack"][0]["data"]


def test_fee_pool_shortfall(sides):
    """prepare_fee: 4,000,000 GOLD sat convert to 2,000,000 TEST sat, more
    than the 1,234,567 in the pool."""
    op = [0, {"fee": {"amount": 4000000, "asset_id": GOLD}, "from": INIT0, "to": INIT1,
              "amount": core(1), "extensions": []}]
    theirs, mine = (side.refusal([op]) for side in sides)
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
    op = [0, {"fee": core(2000000), "from": INIT0, "to": INIT1, "amount": core(10 ** 16),
              "extensions": []}]
    theirs, mine = (side.refusal([op])["message"] for side in sides)
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
    reasons = []
    for side in sides:
        # init1 can pay the proposed operation's fee: the issuer check decides
        side.push([[0, {"fee": core(2000000), "from": INIT0, "to": INIT1,
                        "amount": core(10 ** 9), "extensions": []}]])
        props = side.call("get_dynamic_global_properties")
        expires = calendar.timegm(time.strptime(props["time"], "%Y-%m-%dT%H:%M:%S")) + 3000
        issue = [14, {"fee": core(10 ** 8), "issuer": INIT1,
                      "asset_to_issue": {"amount": 1, "asset_id": GOLD},
                      "issue_to_account": INIT0, "extensions": []}]
        [[_tag, pid]] = side.push([[22, {
            "fee": core(10 ** 8), "fee_paying_account": INIT0,
            "expiration_time": format_time(expires), "proposed_ops": [{"op": issue}],
            "extensions": []}]])
        side.push([[23, {"fee": core(10 ** 8), "fee_paying_account": INIT0, "proposal": pid,
                         "active_approvals_to_add": [INIT1], "active_approvals_to_remove": [],
                         "owner_approvals_to_add": [], "owner_approvals_to_remove": [],
                         "key_approvals_to_add": [], "key_approvals_to_remove": [],
                         "extensions": []}]])
        reasons.append(side.call("get_objects", [pid])[0]["fail_reason"])
    assert reasons == ["Assert Exception: o.issuer == a.issuer: "] * 2


def test_last_irreversible_block_rule(sides):
    """update_last_irreversible_block: the reference's LIB is the 70 % rule
    over its active witnesses' last confirmed blocks, read in one call."""
    reference = sides[0]
    objects = reference.call("get_objects", ["2.1.0", *INIT_WITNESSES])
    dgp, witnesses = objects[0], objects[1:]
    confirmed = [w["last_confirmed_block_num"] for w in witnesses]
    assert dgp["last_irreversible_block_num"] == last_irreversible_block(confirmed)
    assert dgp["last_irreversible_block_num"] > 0
