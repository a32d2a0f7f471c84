"""Proposals (22-24) and committee parameter changes (31) on the chain:
approvals by account (active, owner) and by key, execution once approved,
review periods, failed executions kept until expiry, deletion, nesting
rules, the committee account acting only through proposals, and a fee
changed by a committee proposal at the next maintenance (values by hand
from bitshares-core's proposal_evaluator.cpp / db_update.cpp rules)."""

import copy

import pytest

from nodeapi.chain.errors import InvalidOperation, MissingAuthority
from nodeapi.protocol.times import format_time

from kit.chain import (
    CORE, asset_options, claim_wire, genesis_with, jump, open_chain, produce, with_fees)
from kit.chain import push_wire as push
from kit.keys import DEV_PUB, OTHER_PUB

INIT0, INIT1, INIT2 = "1.2.6", "1.2.7", "1.2.8"
FEE0 = {"amount": 0, "asset_id": CORE}


def transfer(frm, to, amount):
    return [0, {"from": frm, "to": to, "amount": {"amount": amount, "asset_id": CORE},
                "extensions": []}]


def propose(chain, ops, lifetime=3600, review=None, proposer=INIT0):
    data = {"fee_paying_account": proposer,
            "expiration_time": format_time(chain.head_block_time + lifetime),
            "proposed_ops": [{"op": op} for op in with_fees(chain, ops)], "extensions": []}
    if review is not None:
        data["review_period_seconds"] = review
    [[_tag, pid]] = push(chain, [22, data])
    return pid


def approve(chain, pid, payer=INIT0, active=(), owner=(), keys=(), remove_active=()):
    return push(chain, [23, {"fee_paying_account": payer, "proposal": pid,
                             "active_approvals_to_add": list(active),
                             "active_approvals_to_remove": list(remove_active),
                             "owner_approvals_to_add": list(owner),
                             "owner_approvals_to_remove": [],
                             "key_approvals_to_add": list(keys),
                             "key_approvals_to_remove": [], "extensions": []}])


@pytest.fixture
def chain(genesis, tmp_path):
    chain = open_chain(genesis, tmp_path / "blocks")
    push(chain, claim_wire())
    push(chain, transfer(INIT0, INIT1, 10 ** 9))
    produce(chain)
    yield chain
    chain.block_log.close()


def balance(chain, account):
    return chain.state.balance(account, CORE)


def test_a_transfer_proposal_executes_once_its_account_approves(chain):
    pid = propose(chain, [transfer(INIT1, INIT2, 12345)])
    obj = chain.state.objects[pid]
    assert pid == "1.10.0"
    assert obj["proposer"] == INIT0 and obj["fail_reason"] == ""
    assert obj["required_active_approvals"] == [INIT1] and obj["required_owner_approvals"] == []
    assert obj["available_active_approvals"] == [] and "review_period_time" not in obj
    [op] = obj["proposed_transaction"]["operations"]
    assert op[1]["amount"]["amount"] == 12345
    assert obj["proposed_transaction"]["expiration"] == obj["expiration_time"]
    produce(chain)
    fee = op[1]["fee"]["amount"]
    before = balance(chain, INIT1), balance(chain, INIT2)
    approve(chain, pid, payer=INIT0, active=[INIT1])
    produce(chain)
    # executed: the transfer and its fee came from init1; the proposal is gone
    assert chain.state.find(pid) is None
    assert before[0] - balance(chain, INIT1) == 12345 + fee
    assert balance(chain, INIT2) - before[1] == 12345


def test_the_executed_operations_are_virtual_operations_of_the_update(chain):
    from kit.history import Recorder

    rec = Recorder()
    chain.add_consumer(rec)
    pid = propose(chain, [transfer(INIT1, INIT2, 5)])
    approve(chain, pid, active=[INIT1])
    produce(chain)
    [block] = rec.blocks
    kinds = [(op.op[0], op.is_virtual) for op in block.operations]
    assert kinds == [(22, False), (23, False), (0, True)]
    assert block.operations[2].result == [0, {}]
    # db_block.cpp push_proposal: the executed operation is pushed while
    # the update (operation 0 of transaction 1) is evaluated, so it takes
    # the update's trx_in_block and op_in_trx and the next virtual_op
    where = [(op.trx_in_block, op.op_in_trx, op.virtual_op) for op in block.operations]
    assert where == [(0, 0, 0), (1, 0, 0), (1, 0, 1)]


def test_partial_approval_waits_and_removal_of_approvals(chain):
    # a transfer from init1 and one from init2: both must approve
    pid = propose(chain, [transfer(INIT1, INIT0, 1), transfer(INIT2, INIT0, 1)])
    assert chain.state.objects[pid]["required_active_approvals"] == [INIT1, INIT2]
    approve(chain, pid, active=[INIT1])
    produce(chain)
    assert chain.state.objects[pid]["available_active_approvals"] == [INIT1]
    approve(chain, pid, remove_active=[INIT1])
    assert chain.state.objects[pid]["available_active_approvals"] == []
    produce(chain)
    with pytest.raises(InvalidOperation, match="available_active_approvals.find"):
        approve(chain, pid, remove_active=[INIT1])


def test_key_approval_and_a_superfluous_key(chain):
    # init1's active authority is the development key: a key approval does
    pid = propose(chain, [transfer(INIT1, INIT2, 7)])
    before = balance(chain, INIT2)
    approve(chain, pid, keys=[DEV_PUB])
    produce(chain)
    assert chain.state.find(pid) is None and balance(chain, INIT2) - before == 7


def test_owner_approval_for_an_owner_change(chain):
    new_owner = {"weight_threshold": 1, "account_auths": [], "key_auths": [[OTHER_PUB, 1]],
                 "address_auths": []}
    pid = propose(chain, [[6, {"account": INIT1, "owner": new_owner, "extensions": {}}]])
    obj = chain.state.objects[pid]
    assert obj["required_owner_approvals"] == [INIT1]
    assert obj["required_active_approvals"] == []
    approve(chain, pid, active=[INIT1])  # not enough: the owner is required
    assert chain.state.find(pid) is not None
    approve(chain, pid, owner=[INIT1])
    assert chain.state.find(pid) is None
    assert chain.state.objects[INIT1]["owner"]["key_auths"] == [[OTHER_PUB, 1]]


def test_review_period_executes_only_at_expiration(chain):
    pid = propose(chain, [transfer(INIT1, INIT2, 99)], lifetime=600, review=300)
    obj = chain.state.objects[pid]
    # review_period_time = expiration - review period
    assert obj["review_period_time"] == obj["expiration_time"] - 300
    approve(chain, pid, active=[INIT1])
    produce(chain)
    assert chain.state.find(pid) is not None  # a review period: not yet
    jump(chain, 400)  # inside the review period: no new approvals
    with pytest.raises(InvalidOperation, match="in its review period"):
        approve(chain, pid, active=[INIT2])
    before = balance(chain, INIT2)
    jump(chain, 300)  # past the expiration: executed by the block
    assert chain.state.find(pid) is None and balance(chain, INIT2) - before == 99


def test_the_approval_index_drops_an_account_whose_approval_is_removed(chain, tmp_path):
    """proposal_object.cpp ``required_approval_index``: ``object_inserted``
    enters the required and available approvals; ``object_modified`` then
    follows only the available approvals (``insert_or_remove_delta``), so
    init1, required, drops out of the lists when its approval is removed
    and comes back when it approves again; init0 (the proposer, not named)
    is never in them.  The database API's ``get_proposed_transactions`` and
    ``get_full_accounts`` answer from it; a store restored from a
    checkpoint lists init1 again (graphene rebuilds the index at start)."""
    from kit.api import make_api

    from nodeapi.chain.evaluators.proposal import approval_index_accounts
    from nodeapi.chain.state import ObjectStore

    db = make_api(chain)[0]

    def listed(account):
        return [p["id"] for p in db.get_proposed_transactions(account)]

    pid = propose(chain, [transfer(INIT1, INIT2, 5)], lifetime=600, review=300)
    assert listed(INIT1) == [pid] and listed(INIT0) == []
    approve(chain, pid, active=[INIT1])
    assert listed(INIT1) == [pid]
    approve(chain, pid, remove_active=[INIT1])
    produce(chain)
    proposal = chain.state.objects[pid]
    assert proposal["required_active_approvals"] == [INIT1]
    assert proposal["available_active_approvals"] == []
    assert listed(INIT1) == []
    [full] = db.get_full_accounts([INIT1], False)
    assert full[1]["proposals"] == []
    assert approval_index_accounts(proposal) == set()
    # restored from the objects (a restart): every named account again
    objects, counters = chain.state.committed()
    restored = ObjectStore.restored(chain.state.statistics_space,
                                    {k: dict(v) for k, v in objects.items()}, counters)
    assert approval_index_accounts(restored.objects[pid]) == {INIT1}
    # approving again brings it back
    approve(chain, pid, payer=INIT1, active=[INIT1])
    produce(chain)
    assert listed(INIT1) == [pid]


def test_a_failed_execution_keeps_the_proposal_until_it_expires(chain):
    too_much = balance(chain, INIT1) + 1
    pid = propose(chain, [transfer(INIT1, INIT2, too_much)], lifetime=120)
    approve(chain, pid, active=[INIT1])
    produce(chain)
    obj = chain.state.objects[pid]
    assert "Insufficient Balance" in obj["fail_reason"]
    jump(chain, 200)
    assert chain.state.find(pid) is None


def test_fail_reason_is_fc_to_string_of_the_error(chain):
    """proposal_evaluator.cpp: ``fail_reason = e.to_string()``, fc's
    ``what(): format`` of each log entry with a format: an asset_issue by a
    non-issuer fails asset_issue_evaluator's ``FC_ASSERT( o.issuer ==
    a.issuer )``, which has no message (the reference node writes exactly
    this text)."""
    [[_t, aid]] = push(chain, [10, {
        "issuer": INIT0, "symbol": "FAILR", "precision": 3,
        "common_options": asset_options(), "is_prediction_market": False,
        "extensions": []}])
    pid = propose(chain, [[14, {"issuer": INIT1, "asset_to_issue": {"amount": 1, "asset_id": aid},
                                "issue_to_account": INIT0, "extensions": []}]])
    approve(chain, pid, active=[INIT1])
    assert chain.state.objects[pid]["fail_reason"] == "Assert Exception: o.issuer == a.issuer: "


def test_delete_by_a_required_account_only(chain):
    pid = propose(chain, [transfer(INIT1, INIT2, 1)])
    with pytest.raises(InvalidOperation, match="not authoritative for this proposal"):
        push(chain, [24, {"fee_paying_account": INIT0, "using_owner_authority": False,
                          "proposal": pid, "extensions": []}])
    push(chain, [24, {"fee_paying_account": INIT1, "using_owner_authority": False,
                      "proposal": pid, "extensions": []}])
    assert chain.state.find(pid) is None


@pytest.mark.parametrize("lifetime, review, message", [
    (0, None, "already expired on creation"),
    (2419201, None, "too far in the future"),
    (600, 600, "review period must be less than its overall lifetime"),
])
def test_creation_limits(chain, lifetime, review, message):
    with pytest.raises(InvalidOperation, match=message):
        propose(chain, [transfer(INIT1, INIT2, 1)], lifetime=lifetime, review=review)


def test_nesting_rules(chain):
    first = propose(chain, [transfer(INIT1, INIT2, 1)])
    update = [23, {"fee_paying_account": INIT0, "proposal": first,
                   "active_approvals_to_add": [INIT1], "active_approvals_to_remove": [],
                   "owner_approvals_to_add": [], "owner_approvals_to_remove": [],
                   "key_approvals_to_add": [], "key_approvals_to_remove": [],
                   "extensions": []}]
    with pytest.raises(InvalidOperation, match="At most one proposal update"):
        propose(chain, [update, copy.deepcopy(update)])
    future = dict(update[1], proposal="1.10.5")
    with pytest.raises(InvalidOperation, match="future id"):
        propose(chain, [[23, future]])
    # a proposal approving the first one: executing it executes both
    second = propose(chain, [update])
    before = balance(chain, INIT2)
    approve(chain, second, active=[INIT0, INIT1])
    produce(chain)
    assert chain.state.find(first) is None and chain.state.find(second) is None
    assert balance(chain, INIT2) - before == 1


def test_the_committee_account_acts_only_through_proposals(chain):
    with pytest.raises(MissingAuthority, match="Committee account may only propose"):
        push(chain, transfer("1.2.0", INIT0, 1))
    # a committee proposal needs the committee review period
    with pytest.raises(InvalidOperation, match="Review period not given, but at least "
                                               "1209600 required"):
        propose(chain, [transfer("1.2.0", INIT0, 1)])
    with pytest.raises(InvalidOperation, match="Review period of 60 specified"):
        propose(chain, [transfer("1.2.0", INIT0, 1)], lifetime=2000000, review=60)


def test_committee_parameters_outside_a_proposal_are_refused(chain):
    params = chain.state.objects["2.0.0"]["parameters"]
    with pytest.raises(MissingAuthority, match="Committee account may only propose"):
        push(chain, [31, {"new_parameters": params, "extensions": []}])


@pytest.fixture
def committee_chain(genesis, tmp_path):
    """A devnet with a 600 s maintenance interval and a 60 s committee
    review period whose committee is init0 alone: under the current voting
    rules (core-2262) only core in open orders and tickets vote, so init0
    offers 10^12 core satoshis for 1 GOLD and votes for its committee
    member 1.5.0 (vote id 0:11); the first maintenance makes the committee
    account's active authority init0's."""
    from kit.chain import asset_options

    short = genesis_with(genesis, maintenance_interval=600, committee_proposal_review_period=60,
                         maintenance_skip_slots=0)
    chain = open_chain(short, tmp_path / "committee")
    push(chain, claim_wire())
    [[_t, gold]] = push(chain, [10, {"issuer": INIT0, "symbol": "GOLD", "precision": 3,
                                     "common_options": asset_options(), "is_prediction_market":
                                     False, "extensions": []}])
    push(chain, [1, {"seller": INIT0, "amount_to_sell": {"amount": 10 ** 12, "asset_id": CORE},
                     "min_to_receive": {"amount": 1000, "asset_id": gold},
                     "expiration": "2030-01-01T00:00:00", "fill_or_kill": False,
                     "extensions": {}}])
    options = dict(chain.state.objects[INIT0]["options"], votes=["0:11"], num_committee=1)
    push(chain, [6, {"account": INIT0, "new_options": options, "extensions": {}}])
    # the committee account pays the fees of what its proposals execute
    push(chain, transfer(INIT0, "1.2.0", 10 ** 8))
    produce(chain)
    jump(chain, chain.dgp["next_maintenance_time"] - chain.head_block_time + 1)
    assert [a for a, _w in chain.state.objects["1.2.0"]["active"]["account_auths"]] == [INIT0]
    yield chain
    chain.block_log.close()


def test_a_committee_proposal_changes_a_fee_at_the_next_maintenance(committee_chain):
    chain = committee_chain
    params = copy.deepcopy(chain.state.objects["2.0.0"]["parameters"])
    for entry in params["current_fees"]["parameters"]:
        if entry[0] == 0:
            entry[1]["fee"] = 3000000  # transfer: 20 TEST -> 30 TEST
    before = chain.required_fee([0, dict(transfer(INIT0, INIT1, 1)[1], fee=FEE0)])
    assert before["amount"] == 2000000
    pid = propose(chain, [[31, {"new_parameters": params, "extensions": []}]],
                  lifetime=300, review=120)
    obj = chain.state.objects[pid]
    assert obj["required_active_approvals"] == ["1.2.0"]
    # the committee account's authority is init0's (fixture): it approves
    approve(chain, pid, active=[INIT0])
    produce(chain)
    assert chain.state.find(pid) is not None  # waits for its expiration
    jump(chain, 310)
    assert chain.state.find(pid) is None
    gpo = chain.state.objects["2.0.0"]
    pending = dict(gpo["pending_parameters"]["current_fees"]["parameters"])
    assert pending[0] == {"fee": 3000000, "price_per_kbyte": 1000000}
    assert chain.required_fee([0, dict(transfer(INIT0, INIT1, 1)[1], fee=FEE0)])[
        "amount"] == 2000000  # not before the maintenance
    nxt = chain.dgp["next_maintenance_time"]
    jump(chain, nxt - chain.head_block_time + 1)
    assert "pending_parameters" not in chain.state.objects["2.0.0"]
    assert chain.required_fee([0, dict(transfer(INIT0, INIT1, 1)[1], fee=FEE0)])[
        "amount"] == 3000000
