"""Workers: worker_create (34), their votes and their daily pay from the
worker budget at maintenance; objects 1.14.N.

Graphene reference: libraries/chain/worker_evaluator.cpp, worker_object.hpp
(``is_active``, ``approving_stake``), small_objects.cpp (reflection order),
db_maint.cpp (``update_worker_votes``, ``pay_workers`` inside
``process_budget``), with every hardfork passed (votes against a worker no
longer count: ``total_votes_against`` stays 0).

Object (wire): ``{id, worker_account, work_begin_date, work_end_date,
daily_pay, worker: [which, {...}], vote_for, vote_against,
total_votes_for, total_votes_against, name, url}``; ``worker`` is 0
refund (``{total_burned}``: its pay leaves the supply), 1 vesting balance
(``{balance: "1.13.N"}``: a worker-type cdd vesting balance of
``pay_vesting_period_days`` receives the pay) or 2 burn (``{total_burned}``:
its pay goes to the null account 1.2.3).

Pay (per maintenance, in core satoshis): the active workers (``begin <=
now <= end``) whose ``total_votes_for - total_votes_against`` is positive,
most approved first (ties: lower id), each get ``min(budget left,
daily_pay * seconds since last_budget_time // 86400)`` until the worker
budget is spent.
"""

from nodeapi.chain.errors import fc_assert
from nodeapi.chain.evaluators.context import ApplyContext
from nodeapi.chain.balances import adjust_balance, adjust_supply
from nodeapi.protocol.config import CORE_ASSET, MAX_TIME, NULL_ACCOUNT
from nodeapi.protocol.times import parse_time
from nodeapi.chain.vesting import deposit
from nodeapi.protocol.ids import instance_number
from nodeapi.protocol.asset import core

KIND = "1.14"
REFUND, VESTING, BURN = 0, 1, 2
WORKER_VOTE = 2
_DAY = 86400


def _next_vote_id(state) -> str:
    gpo = state.modify("2.0.0")
    instance = int(gpo["next_available_vote_id"])
    gpo["next_available_vote_id"] = instance + 1
    return f"{WORKER_VOTE}:{instance}"


def worker_create(ctx: ApplyContext, data: dict) -> list:
    """worker_create (34): a worker of the lifetime member ``owner`` with
    two vote ids (for, against); result ``[1, "1.14.N"]``."""
    state = ctx.state
    owner = state.require(data["owner"])
    fc_assert(owner["membership_expiration_date"] == MAX_TIME,
              "d.get(o.owner).is_lifetime_member()")
    begin = parse_time(data["work_begin_date"])
    fc_assert(begin >= ctx.now,
              "o.work_begin_date >= d.head_block_time()")
    vote_for, vote_against = _next_vote_id(state), _next_vote_id(state)
    which, init = int(data["initializer"][0]), data["initializer"][1]
    if which == VESTING:
        vbo = state.create("1.13", {
            "owner": data["owner"], "balance": core(0),
            "policy": [1, {"vesting_seconds": int(init["pay_vesting_period_days"]) * _DAY,
                           "start_claim": 0,
                           "coin_seconds_earned": "0",
                           "coin_seconds_earned_last_update": ctx.now}],
            "balance_type": "worker"})
        worker = [VESTING, {"balance": vbo["id"]}]
    else:
        worker = [which, {"total_burned": 0}]
    obj = state.create(KIND, {
        "worker_account": data["owner"], "work_begin_date": begin,
        "work_end_date": parse_time(data["work_end_date"]), "daily_pay": int(data["daily_pay"]),
        "worker": worker, "vote_for": vote_for, "vote_against": vote_against,
        "total_votes_for": 0, "total_votes_against": 0, "name": data["name"],
        "url": data["url"]})
    return [1, obj["id"]]


def update_worker_votes(state, votes: list) -> None:
    """graphene ``update_worker_votes``: ``total_votes_for`` from the tally
    (``votes``: vote id instance -> stake); ``total_votes_against`` 0."""
    for oid in state.ids_of_type(KIND + "."):
        worker = state.objects[oid]
        instance = int(worker["vote_for"].split(":")[1])
        total = votes[instance] if instance < len(votes) else 0
        if int(worker["total_votes_for"]) != total or int(worker["total_votes_against"]):
            obj = state.modify(oid)
            obj["total_votes_for"] = total
            obj["total_votes_against"] = 0


def _approving(worker: dict) -> int:
    return int(worker["total_votes_for"]) - int(worker["total_votes_against"])


def pay_workers(state, budget: int, now: int) -> int:
    """graphene ``pay_workers``: pay the active, approved workers out of
    ``budget`` (module docstring); returns what is left."""
    active = [state.objects[oid] for oid in state.ids_of_type(KIND + ".")]
    active = [w for w in active if w["work_begin_date"] <= now <= w["work_end_date"]
              and _approving(w) > 0]
    active.sort(key=lambda w: (-_approving(w), instance_number(w["id"])))
    passed = now - state.objects["2.1.0"]["last_budget_time"]
    for worker in active:
        if budget <= 0:
            break
        pay = min(budget, int(worker["daily_pay"]) * passed // _DAY)
        _pay(state, worker, pay, now)
        budget -= pay
    return budget


def _pay(state, worker: dict, pay: int, now: int) -> None:
    which, data = worker["worker"]
    if which == VESTING:
        deposit(state, data["balance"], pay, now)
        return
    obj = state.modify(worker["id"])
    obj["worker"] = [which, {"total_burned": int(data["total_burned"]) + pay}]
    if which == REFUND:
        adjust_supply(state, CORE_ASSET, -pay)
    else:
        adjust_balance(state, NULL_ACCOUNT, CORE_ASSET, pay)
