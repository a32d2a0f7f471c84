"""The vote tally of chain maintenance: each voting account's stake counted
for the witnesses, committee members and vote counts it (or its proxy)
chose.

Graphene reference: libraries/chain/db_maint.cpp ``perform_chain_maintenance``
(``vote_tally_helper``, ``vote_recalc_options``) with the hardfork rules in
force today applied from genesis:

- voting stake (core-2262): the core in the account's open orders
  (statistics ``total_core_in_orders``) until proof-of-burn is activated
  (dynamic global properties ``total_pob`` or ``total_inactive`` not 0),
  plus its ticket values (``total_core_pob`` / ``total_pol_value``, graphene's
  PoB/PoL arithmetic); liquid balances and cashback do not vote;
- only members vote unless ``count_non_member_votes``;
- the opinion account is ``voting_account`` unless that is proxy-to-self
  (1.2.5);
- decay (core-2103): a stake counts fully for 360 days after the opinion
  account's ``last_vote_time``, then loses 1/8 each 45 days; a proxied
  stake decays the same way over the voter's own ``last_vote_time``;
- a committee vote is divided by the opinion account's
  ``num_committee_voted`` when above 1.

:func:`tally_votes` returns a :class:`Tally`; ``vp_*`` / ``vote_tally_time``
of the opinion accounts' statistics are updated as graphene does.  Times are
integer seconds since the epoch.
"""

from nodeapi.protocol.asset import percent_of
from nodeapi.protocol.config import GRAPHENE_100_PERCENT, PROXY_TO_SELF_ACCOUNT

COMMITTEE, WITNESS, WORKER = 0, 1, 2
_FULL_POWER_SECONDS = 360 * 86400
_RECALC_STEPS = 8
_SECONDS_PER_STEP = 45 * 86400


def recalced_stake(stake: int, last_vote_time: int, now: int) -> int:
    """graphene ``vote_recalc_options::get_recalced_voting_stake`` (360
    days, 8 steps of 45 days: the same options for witnesses, committee,
    workers and delegators)."""
    full_power_time = now - _FULL_POWER_SECONDS
    zero_power_time = full_power_time - (_RECALC_STEPS - 1) * _SECONDS_PER_STEP
    if last_vote_time > full_power_time:
        return stake
    if last_vote_time <= zero_power_time:
        return 0
    step = (full_power_time - last_vote_time) // _SECONDS_PER_STEP
    subtract = GRAPHENE_100_PERCENT * (step + 1) // _RECALC_STEPS
    return stake - percent_of(stake, subtract)


class Tally:
    """What the tally found.

    :ivar votes: vote id instance -> stake (graphene ``_vote_tally_buffer``).
    :ivar witness_histogram: ``num_witness // 2`` -> stake.
    :ivar committee_histogram: ``num_committee // 2`` -> stake.
    :ivar total_witness_stake: the witness stakes counted.
    :ivar total_committee_stake: the committee stakes counted (undivided).
    """

    def __init__(self, next_vote_id: int, max_witnesses: int, max_committee: int) -> None:
        self.votes = [0] * next_vote_id
        self.witness_histogram = [0] * (max_witnesses // 2 + 1)
        self.committee_histogram = [0] * (max_committee // 2 + 1)
        self.total_witness_stake = 0
        self.total_committee_stake = 0


def _pob_stake(stake: int, stats: dict) -> int:
    """graphene's PoB / PoL adjustment of the order stake."""
    pol_amount, pol_value = int(stats["total_core_pol"]), int(stats["total_pol_value"])
    pob_amount, pob_value = int(stats["total_core_pob"]), int(stats["total_pob_value"])
    if pob_amount == 0:
        return stake + pol_value
    if pol_amount == 0:
        if pob_amount <= stake:
            return stake + pob_value - pob_amount
        return stake * pob_value // pob_amount
    if pob_amount <= pol_amount:
        base = pob_value * pol_value // pol_amount
        diff = pob_amount * pol_value // pol_amount
        return stake + base + pol_value - diff
    base = pol_value * pob_value // pob_amount
    diff_amount = pob_amount - pol_amount
    if diff_amount <= stake:
        base += pob_value - pol_amount * pob_value // pob_amount
        return stake + base - diff_amount
    return base + stake * pob_value // pob_amount


def has_some_core_voting(stats: dict) -> bool:
    """graphene ``account_statistics_object::has_some_core_voting``."""
    return bool(stats["is_voting"]) and (
        int(stats["total_core_in_orders"]) > 0 or int(stats["core_in_balance"]) > 0
        or bool(stats["has_cashback_vb"]) or int(stats["total_core_pol"]) > 0
        or int(stats["total_core_pob"]) > 0)


def _count_account(state, tally: Tally, acc: dict, stats: dict, now: int,
                   pob_activated: bool) -> None:
    params = state.objects["2.0.0"]["parameters"]
    if pob_activated and int(stats["total_core_pob"]) == 0 and int(
            stats["total_core_inactive"]) == 0:
        return
    if not (params.get("count_non_member_votes", True)
            or acc["membership_expiration_date"] > now):
        return
    direct = acc["options"]["voting_account"] == PROXY_TO_SELF_ACCOUNT
    opinion = acc if direct else state.objects[acc["options"]["voting_account"]]
    stake = _pob_stake(0 if pob_activated else int(stats["total_core_in_orders"]), stats)
    if stake == 0:
        return
    opinion_stats = stats if direct else state.objects[opinion["statistics"]]
    voted = opinion_stats["last_vote_time"]
    vp_all = vp_active = stake
    if not direct:
        stake = vp_active = recalced_stake(stake, stats["last_vote_time"], now)
    witness = recalced_stake(stake, voted, now)
    committee_stake = recalced_stake(stake, voted, now)
    committee = committee_stake
    if int(opinion.get("num_committee_voted", 0)) > 1:
        committee //= int(opinion["num_committee_voted"])
    worker = recalced_stake(stake, voted, now)
    powers = {"vp_all": vp_all, "vp_active": vp_active, "vp_committee": committee_stake,
              "vp_witness": witness, "vp_worker": worker}
    upd = state.modify(opinion_stats["id"])
    again = upd["vote_tally_time"] == now
    for key, value in powers.items():
        upd[key] = int(upd[key]) + value if again else value
    upd["vote_tally_time"] = now
    by_type = (committee, witness, worker)
    for vote in opinion["options"]["votes"]:
        kind, instance = (int(x) for x in vote.split(":"))
        if instance < len(tally.votes):
            tally.votes[instance] += by_type[min(kind, WORKER)]
    num_witness = int(opinion["options"]["num_witness"])
    if witness > 0 and num_witness <= int(params["maximum_witness_count"]):
        tally.witness_histogram[num_witness // 2] += witness
    num_committee = int(opinion["options"]["num_committee"])
    if committee_stake > 0 and num_committee <= int(params["maximum_committee_count"]):
        tally.committee_histogram[num_committee // 2] += committee_stake
    tally.total_committee_stake += committee_stake
    tally.total_witness_stake += witness


def tally_votes(state, now: int) -> Tally:
    """Count every account with some core voting
    (:func:`has_some_core_voting`), by account id (module docstring
    rules)."""
    gpo, dgp = state.objects["2.0.0"], state.objects["2.1.0"]
    params = gpo["parameters"]
    tally = Tally(int(gpo["next_available_vote_id"]), int(params["maximum_witness_count"]),
                  int(params["maximum_committee_count"]))
    pob_activated = int(dgp["total_pob"]) > 0 or int(dgp["total_inactive"]) > 0
    for aid in state.ids_of_type("1.2."):
        acc = state.objects[aid]
        stats = state.objects[acc["statistics"]]
        if has_some_core_voting(stats):
            _count_account(state, tally, acc, stats, now, pob_activated)
    return tally
