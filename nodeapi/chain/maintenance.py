"""Chain maintenance: at the first block at or after
``next_maintenance_time``, votes are tallied, the active witnesses and
committee members chosen, fees processed and the budget set.

Graphene reference: libraries/chain/db_maint.cpp
(``perform_chain_maintenance``, ``update_active_witnesses``,
``update_active_committee_members``, ``initialize_budget_record``,
``process_budget``) and vote_count.hpp (``vote_counter``), with today's
hardfork rules from genesis (core-533 authorities).  Order:

1. the account pass: :func:`nodeapi.chain.balances.update_core_in_balances`
   (statistics ``core_in_balance`` of the core balances changed since the
   last maintenance), :func:`nodeapi.chain.votes.tally_votes` and
   :func:`nodeapi.chain.fees.process_fees`;
2. the active witnesses: the number voted for is the smallest ``2k + 1``
   (at least ``min_witness_count`` of the chain's immutable parameters) for
   which the witness count histogram passes half of the witness stake of
   the accounts voting for more than one; the witnesses with the most votes
   (ties by vote id) become global properties' ``active_witnesses``, in id
   order (a ``flat_set<witness_id_type>`` in global_property_object.hpp),
   every
   witness' ``total_votes`` is its tally (graphene's ``track-standby-votes``
   default) and the witness account's active authority is
   :func:`vote_authority` of the chosen ones; the committee alike
   (``min_committee_member_count``, the committee account's active
   authority, copied to the relaxed committee account; its
   ``active_committee_members`` is a ``vector`` and keeps the vote order);
3. the registration fee loses this interval's scaling
   (:func:`nodeapi.chain.fees.unscale_account_fee`), then pending
   parameters apply; dynamic global properties: ``next_maintenance_time`` (the next multiple
   of ``maintenance_interval`` after the block time: for block 1 from the
   epoch, else from the previous maintenance time),
   ``last_vote_tally_time`` = the block time,
   ``accounts_registered_this_interval`` = 0;
4. the market-issued assets (:func:`nodeapi.chain.market.upkeep.process_bitassets`:
   force settlement volumes, expired witness/committee feeds, collateral
   bids), expired custom authorities, then
   :func:`nodeapi.chain.budget.process_budget`.
"""

from nodeapi.protocol.ids import instance_number
from nodeapi.chain.evaluators.custom_authority import delete_expired_custom_authorities
from nodeapi.chain.evaluators.worker import update_worker_votes
from nodeapi.chain.market.upkeep import process_bitassets
from nodeapi.chain.balances import update_core_in_balances
from nodeapi.chain.budget import process_budget
from nodeapi.chain.special_authority import create_buyback_orders, update_top_n_authorities
from nodeapi.chain.fees import process_fees, unscale_account_fee
from nodeapi.chain.votes import tally_votes
from nodeapi.protocol.config import COMMITTEE_ACCOUNT, RELAXED_COMMITTEE_ACCOUNT, WITNESS_ACCOUNT

_DEFAULT_MIN_COUNT = 11  # GRAPHENE_DEFAULT_MIN_WITNESS_COUNT / _COMMITTEE_COUNT


def vote_authority(members: list) -> dict | None:
    """graphene ``vote_counter``: an authority of ``members`` ``[(account
    id, votes)]`` (most votes first) with weights scaled so the largest
    keeps 16 significant bits (at least 1 each; members with 0 votes are
    left out) and a threshold of half the total plus one; None when nobody
    has votes (the authority then stays as it was)."""
    weights: dict[str, int] = {}
    shift = -1
    total = 0
    for account, votes in members:
        if votes == 0:
            continue
        if shift == -1:
            shift = max(votes.bit_length() - 1 - 15, 0)
        scaled = max(votes >> shift, 1)
        total += scaled
        weights[account] = weights.get(account, 0) + scaled
    if total == 0:
        return None
    return {"weight_threshold": (total >> 1) + 1,
            "account_auths": sorted(([a, w] for a, w in weights.items()),
                                    key=lambda e: instance_number(e[0])),
            "key_auths": [], "address_auths": []}


def _voted_count(histogram: list, total_stake: int, minimum: int) -> int:
    target = (total_stake - histogram[0]) // 2
    tally = count = 0
    if target > 0:
        while count < len(histogram) - 1 and tally <= target:
            count += 1
            tally += histogram[count]
    return max(count * 2 + 1, minimum)


def _elect(state, space_type: str, votes: list, count: int) -> list:
    """The ``count`` objects of ``space_type`` with the most votes (ties by
    vote id instance), after setting every one's ``total_votes``."""
    def tally(obj):
        instance = int(obj["vote_id"].split(":")[1])
        return votes[instance] if instance < len(votes) else 0

    objects = [state.objects[oid] for oid in state.ids_of_type(space_type + ".")]
    for obj in objects:
        if int(obj["total_votes"]) != tally(obj):
            state.modify(obj["id"])["total_votes"] = tally(obj)
    objects.sort(key=lambda o: (-tally(o), int(o["vote_id"].split(":")[1])))
    return [(o["id"], tally(o)) for o in objects[:min(count, len(objects))]]


def _set_active(state, account_id: str, authority: dict | None) -> None:
    """Modify ``account_id`` and give it the ``authority`` (None: it keeps
    its own).  The reference modifies the account either way
    (db_maint.cpp ``update_active_witnesses`` / ``_committee_members``:
    ``vote_counter::finish`` leaves the authority when nobody voted), so it
    counts as changed by the maintenance block (subscriptions, the
    ``searchdb-objects`` documents)."""
    acc = state.modify(account_id)
    if authority is not None:
        old = dict(acc)
        acc["active"] = authority
        state.reindex(acc, old)


def update_active_sets(state, tally) -> None:
    """Step 2 of the module docstring."""
    immutable = state.objects["2.11.0"].get("immutable_parameters", {})
    count = _voted_count(tally.witness_histogram, tally.total_witness_stake,
                         int(immutable.get("min_witness_count", _DEFAULT_MIN_COUNT)))
    witnesses = _elect(state, "1.6", tally.votes, count)
    _set_active(state, WITNESS_ACCOUNT, vote_authority(
        [(state.objects[w]["witness_account"], v) for w, v in witnesses]))
    state.modify("2.0.0")["active_witnesses"] = sorted((w for w, _ in witnesses),
                                                       key=instance_number)
    count = _voted_count(tally.committee_histogram, tally.total_committee_stake,
                         int(immutable.get("min_committee_member_count", _DEFAULT_MIN_COUNT)))
    members = _elect(state, "1.5", tally.votes, count)
    if members:
        authority = vote_authority(
            [(state.objects[c]["committee_member_account"], v) for c, v in members])
        _set_active(state, COMMITTEE_ACCOUNT, authority)
        _set_active(state, RELAXED_COMMITTEE_ACCOUNT,
                    state.objects[COMMITTEE_ACCOUNT]["active"])
    state.modify("2.0.0")["active_committee_members"] = [c for c, _ in members]


def next_maintenance_time(state, now: int, block_num: int) -> int:
    """Step 3's ``next_maintenance_time`` (graphene
    ``perform_chain_maintenance``)."""
    interval = int(state.objects["2.0.0"]["parameters"]["maintenance_interval"])
    nxt = state.objects["2.1.0"]["next_maintenance_time"]
    if nxt > now:
        return nxt
    if block_num == 1:
        return (now // interval + 1) * interval
    return nxt + ((now - nxt) // interval + 1) * interval


def apply_pending_parameters(state) -> None:
    """The parameters a committee proposal set (``pending_parameters`` of
    2.0.0, committee_member_update_global_parameters) replace the current
    ones (graphene ``perform_chain_maintenance``, before the next
    maintenance time is computed)."""
    gpo = state.objects["2.0.0"]
    if gpo.get("pending_parameters") is not None:
        gpo = state.modify("2.0.0")
        gpo["parameters"] = gpo.pop("pending_parameters")


def perform_chain_maintenance(state, now: int, block_num: int, ctx=None) -> None:
    """The maintenance of the block ``block_num`` at ``now`` (module
    docstring), in ``state``'s open session; ``ctx`` (an ApplyContext of
    the block) receives the virtual operations of buyback orders.

    On a devnet's lazy fork (``state.remote``, :mod:`nodeapi.chain.remote`)
    the votes are not tallied: the state holds only the accounts touched,
    so the live chain's active witnesses, committee, top-n authorities and
    worker votes stay as the fork found them."""
    if ctx is not None:
        create_buyback_orders(ctx)
    update_core_in_balances(state)
    partial = state.remote is not None  # a lazy fork holds only what it touched
    tally = None if partial else tally_votes(state, now)
    process_fees(state, now)
    if not partial:
        update_top_n_authorities(state, lambda members: vote_authority(
            sorted(members, key=lambda m: -m[1])))
        update_active_sets(state, tally)
        update_worker_votes(state, tally.votes)
    unscale_account_fee(state)
    apply_pending_parameters(state)
    dgp = state.modify("2.1.0")
    dgp["next_maintenance_time"] = next_maintenance_time(state, now, block_num)
    dgp["last_vote_tally_time"] = now
    dgp["accounts_registered_this_interval"] = 0
    if ctx is not None:
        process_bitassets(ctx)
    delete_expired_custom_authorities(state, now)
    process_budget(state, now)
