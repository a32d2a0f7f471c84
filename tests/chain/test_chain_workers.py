"""Workers (34) on a devnet with a 600 s maintenance interval: creation
with vote ids, votes counted at maintenance, daily pay from the worker
budget to burn, refund and vesting workers, the budget record's leftover
and supply (values by hand from bitshares-core's worker_evaluator.cpp and
db_maint.cpp ``pay_workers`` / ``process_budget``)."""

import pytest

from nodeapi.chain.errors import InvalidOperation
from nodeapi.errors import ChainError, ProtocolError
from nodeapi.protocol.times import format_time

from kit.chain import CORE, asset_options, claim_wire, genesis_with, jump, open_chain, produce
from kit.chain import push_wire as push

INIT0 = "1.2.6"
FEE0 = {"amount": 0, "asset_id": CORE}
DAY = 86400




def worker_op(chain, name, initializer, daily_pay, days=30):
    begin = chain.head_block_time + 10
    return [34, {"owner": INIT0, "work_begin_date": format_time(begin),
                 "work_end_date": format_time(begin + days * DAY), "daily_pay": daily_pay,
                 "name": name, "url": "https://example.org", "initializer": initializer}]


def to_maintenance(chain):
    jump(chain, chain.dgp["next_maintenance_time"] - chain.head_block_time + 1)


@pytest.fixture
def chain(genesis, tmp_path):
    short = genesis_with(genesis, maintenance_interval=600, maintenance_skip_slots=0)
    chain = open_chain(short, tmp_path / "workers")
    push(chain, claim_wire())
    produce(chain)
    yield chain
    chain.block_log.close()


def test_workers_are_created_voted_and_paid(chain):
    state = chain.state
    next_vote = int(state.objects["2.0.0"]["next_available_vote_id"])
    [[_, burn]] = push(chain, worker_op(chain, "burn", [2, {}], 10 ** 9))
    [[_, refund]] = push(chain, worker_op(chain, "refund", [0, {}], 2 * 10 ** 9))
    [[_, vesting]] = push(chain, worker_op(chain, "vesting", [1, {"pay_vesting_period_days": 7}],
                                           3 * 10 ** 9))
    # two vote ids each, for and against, from the one sequence
    assert [state.objects[w]["vote_for"] for w in (burn, refund, vesting)] == [
        f"2:{next_vote}", f"2:{next_vote + 2}", f"2:{next_vote + 4}"]
    assert state.objects[burn]["vote_against"] == f"2:{next_vote + 1}"
    assert state.objects[burn]["worker"] == [2, {"total_burned": 0}]
    vb = state.objects[vesting]["worker"][1]["balance"]
    assert state.objects[vb]["balance_type"] == "worker"
    assert state.objects[vb]["policy"][1]["vesting_seconds"] == 7 * DAY
    # voting stake under the current rules: core in open orders
    [[_, gold]] = push(chain, [10, {"issuer": INIT0, "symbol": "GOLD", "precision": 3,
                                    "common_options": asset_options(),
                                    "is_prediction_market": False, "extensions": []}])
    stake = 10 ** 12
    push(chain, [1, {"seller": INIT0, "amount_to_sell": {"amount": stake, "asset_id": CORE},
                     "min_to_receive": {"amount": 1000, "asset_id": gold},
                     "expiration": "2030-01-01T00:00:00", "fill_or_kill": False,
                     "extensions": {}}])
    # init0 approves the burn and vesting workers, not the refund one
    votes = [state.objects[burn]["vote_for"], state.objects[vesting]["vote_for"]]
    options = dict(state.objects[INIT0]["options"], votes=sorted(
        votes, key=lambda v: int(v.split(":")[1])))
    push(chain, [6, {"account": INIT0, "new_options": options, "extensions": {}}])
    # half the supply back to the reserve, so the budget has something to give:
    # total budget = ceil(reserve * 600 s * 17 / 2^32), witness pay first
    push(chain, [15, {"payer": INIT0, "amount_to_reserve": {"amount": 5 * 10 ** 14,
                                                            "asset_id": CORE},
                      "extensions": []}])
    produce(chain)
    to_maintenance(chain)  # first maintenance: votes tallied, no budget yet
    assert state.objects[burn]["total_votes_for"] == stake
    assert state.objects[vesting]["total_votes_for"] == stake
    assert state.objects[refund]["total_votes_for"] == 0
    assert state.objects[burn]["worker"] == [2, {"total_burned": 0}]
    last_budget = chain.dgp["last_budget_time"]
    null_before = state.balance("1.2.3", CORE)
    to_maintenance(chain)
    now = chain.head_block_time
    [rec_id] = sorted(state.ids_of_type("2.13."), key=lambda i: int(i.split(".")[2]))[-1:]
    rec = state.objects[rec_id]["record"]
    passed = now - last_budget
    # both approved workers tie on votes: the lower id (burn) is paid first
    burn_pay = min(rec["worker_budget"], 10 ** 9 * passed // DAY)
    vesting_pay = min(rec["worker_budget"] - burn_pay, 3 * 10 ** 9 * passed // DAY)
    # the budget covers both: each gets daily_pay * seconds since the last
    # budget / 86400, rounded down
    assert burn_pay == 10 ** 9 * passed // DAY > 0
    assert vesting_pay == 3 * 10 ** 9 * passed // DAY > 0
    assert state.objects[burn]["worker"] == [2, {"total_burned": burn_pay}]
    assert state.balance("1.2.3", CORE) - null_before == burn_pay
    assert int(state.objects[vb]["balance"]["amount"]) == vesting_pay
    assert state.objects[refund]["worker"] == [0, {"total_burned": 0}]
    assert rec["leftover_worker_funds"] == rec["worker_budget"] - burn_pay - vesting_pay
    assert rec["supply_delta"] == (rec["witness_budget"] + rec["worker_budget"]
                                   - rec["leftover_worker_funds"]
                                   - rec["from_accumulated_fees"]
                                   - rec["from_unused_witness_budget"])


def test_worker_rules(chain):
    # init1 (a genesis lifetime member) gives up nothing; a fresh account
    # registered by init0 is a basic member
    from kit.keys import DEV_PUB

    key = {"weight_threshold": 1, "account_auths": [], "key_auths": [[DEV_PUB, 1]],
           "address_auths": []}
    [[_, basic]] = push(chain, [5, {"registrar": INIT0, "referrer": INIT0,
                                    "referrer_percent": 0, "name": "basic-member",
                                    "owner": key, "active": key, "options": {
                                        "memo_key": DEV_PUB, "voting_account": "1.2.5",
                                        "num_witness": 0, "num_committee": 0, "votes": [],
                                        "extensions": []}, "extensions": {}}])
    push(chain, [0, {"from": INIT0, "to": basic, "amount": {"amount": 10 ** 10,
                                                            "asset_id": CORE},
                     "extensions": []}])
    with pytest.raises(InvalidOperation, match="is_lifetime_member"):
        push(chain, [34, dict(worker_op(chain, "w", [2, {}], 1)[1], owner=basic)])
    late = worker_op(chain, "w", [2, {}], 1)
    late[1]["work_begin_date"] = format_time(chain.head_block_time - 1)
    with pytest.raises(InvalidOperation, match="work_begin_date >= d.head_block_time"):
        push(chain, late)


def test_validate_and_the_evaluator_refuse_a_worker_with_one_error(chain):
    """worker_create's ``validate()`` (worker.cpp: ``FC_ASSERT( daily_pay >
    0 )``) and its evaluator (worker_evaluator.cpp ``do_evaluate``:
    ``FC_ASSERT( o.work_begin_date >= d.head_block_time() )``) both throw
    fc's ``assert_exception``: nodeapi refuses both with the one
    InvalidOperation, a ChainError (what a transaction's refusal is) and a
    ProtocolError, answered alike (name, code, fc's description)."""
    unpaid = worker_op(chain, "w", [2, {}], 0)
    late = worker_op(chain, "w", [2, {}], 1)
    late[1]["work_begin_date"] = format_time(chain.head_block_time - 1)
    refusals = []
    for op in (unpaid, late):
        with pytest.raises(ChainError) as caught:
            push(chain, op)
        refusals.append(caught.value)
    assert [type(e) for e in refusals] == [InvalidOperation, InvalidOperation]
    assert all(isinstance(e, ProtocolError) for e in refusals)
    assert [(e.name, e.code, e.what) for e in refusals] == [
        ("assert_exception", 10, "Assert Exception")] * 2
    assert [e.message for e in refusals] == [
        "Assert Exception: daily_pay > 0: ",
        "Assert Exception: o.work_begin_date >= d.head_block_time(): "]
    assert [e.log_format for e in refusals] == [
        "daily_pay > 0: ", "o.work_begin_date >= d.head_block_time(): "]
