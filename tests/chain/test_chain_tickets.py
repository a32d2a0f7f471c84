"""Tickets (57, 58): charging to the target type, values by type, splits,
downgrades, withdrawal back to the balance, the statistics and the voting
power they give; times and values by hand from bitshares-core's
ticket_object.cpp (version 2 multipliers 0, 2, 4, 8, 8)."""

import pytest

from nodeapi.chain.errors import InvalidOperation

from kit.chain import CORE, claim_wire, jump, open_chain, produce
from kit.chain import push_wire as push

INIT0 = "1.2.6"
FEE0 = {"amount": 0, "asset_id": CORE}
DAY = 86400
MAX = 0xFFFFFFFF  # fc time_point_sec::maximum()




def create(chain, target, amount):
    [[_t, tid]] = push(chain, [57, {"account": INIT0, "target_type": target,
                                    "amount": {"amount": amount, "asset_id": CORE},
                                    "extensions": []}])
    return tid


def update(chain, tid, target, amount=None):
    data = {"account": INIT0, "ticket": tid, "target_type": target, "extensions": []}
    if amount is not None:
        data["amount_for_new_target"] = {"amount": amount, "asset_id": CORE}
    [[_t, result]] = push(chain, [58, data])
    return result


@pytest.fixture
def chain(genesis, tmp_path):
    chain = open_chain(genesis, tmp_path / "tickets")
    push(chain, claim_wire())
    produce(chain)
    yield chain
    chain.block_log.close()


def stats(chain):
    return chain.state.objects[chain.state.objects[INIT0]["statistics"]]


def test_charge_stable_downgrade_and_withdraw(chain):
    state = chain.state
    balance = state.balance(INIT0, CORE)
    created = chain.head_block_time
    tid = create(chain, 1, 100000)  # target lock_180_days
    produce(chain)
    obj = state.objects[tid]
    assert (obj["target_type"], obj["current_type"], obj["status"], obj["value"]) == (
        "lock_180_days", "liquid", "charging", 0)
    assert obj["next_auto_update_time"] == created + 15 * DAY
    assert obj["next_type_downgrade_time"] == MAX
    assert balance - state.balance(INIT0, CORE) > 100000  # the amount and the fee
    assert (int(stats(chain)["total_core_pol"]), int(stats(chain)["total_pol_value"])) == (
        100000, 0)
    jump(chain, 15 * DAY)  # one charging step: lock_180_days reached, value 2x
    obj = state.objects[tid]
    assert (obj["current_type"], obj["status"], obj["value"]) == ("lock_180_days", "stable",
                                                                  200000)
    assert obj["next_auto_update_time"] == MAX
    assert int(stats(chain)["total_pol_value"]) == 200000
    # back to liquid: a downgrade of 180 days, value 0 at once (in the
    # block, the transaction sees the previous head's time, as in graphene)
    now = chain.head_block_time
    result = update(chain, tid, 0)
    assert result == {"new_objects": [], "updated_objects": [tid], "removed_objects": []}
    produce(chain)
    obj = state.objects[tid]
    assert (obj["current_type"], obj["status"], obj["value"]) == ("liquid", "withdrawing", 0)
    assert obj["next_auto_update_time"] == obj["next_type_downgrade_time"] == now + 180 * DAY
    before = state.balance(INIT0, CORE)
    jump(chain, 180 * DAY + 10)  # withdrawn: the amount returns to the balance
    assert state.find(tid) is None
    assert state.balance(INIT0, CORE) - before == 100000
    assert (int(stats(chain)["total_core_pol"]), int(stats(chain)["total_pol_value"])) == (0, 0)


def test_split_and_rules(chain):
    tid = create(chain, 2, 90000)  # lock_360_days
    produce(chain)
    result = update(chain, tid, 1, 30000)  # 30,000 of it aims at lock_180_days
    produce(chain)
    [new] = result["new_objects"]
    assert result["updated_objects"] == [tid]
    assert chain.state.objects[new]["amount"]["amount"] == 30000
    assert chain.state.objects[tid]["amount"]["amount"] == 60000
    assert chain.state.objects[new]["target_type"] == "lock_180_days"
    with pytest.raises(InvalidOperation, match="Target type does not change"):
        update(chain, tid, 2)
    with pytest.raises(InvalidOperation, match="Insufficient amount in ticket"):
        update(chain, tid, 3, 60001)
    # one charging step makes both lock_180_days: 2 * 90,000 of value
    jump(chain, 15 * DAY)
    assert int(stats(chain)["total_pol_value"]) == 2 * 90000


def test_tickets_give_voting_power(chain):
    create(chain, 1, 500000)
    options = dict(chain.state.objects[INIT0]["options"], votes=["0:11"], num_committee=1)
    push(chain, [6, {"account": INIT0, "new_options": options, "extensions": {}}])
    produce(chain)
    jump(chain, 15 * DAY)  # lock_180_days: value 1,000,000; a maintenance passes too
    nxt = chain.dgp["next_maintenance_time"]
    jump(chain, nxt - chain.head_block_time + 1)
    assert int(chain.state.objects["1.5.0"]["total_votes"]) == 1000000
