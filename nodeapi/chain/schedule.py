"""Witness schedule, slot arithmetic and the per-block update of the global
objects (dynamic global properties 2.1.0 and the signing witness).

Graphene reference: libraries/chain/db_witness_schedule.cpp
(``get_slot_time``, ``get_slot_at_time``, ``get_scheduled_witness``) and
db_update.cpp (``update_global_dynamic_data``, ``update_signing_witness``,
``update_last_irreversible_block``).

Witness schedule (graphene ``get_scheduled_witness`` /
``update_witness_schedule``): the witness of absolute slot ``A``
(``current_aslot`` + slot) is ``current_shuffled_witnesses[A % n]`` of the
witness schedule object 2.12.0.  After every block whose number is a
multiple of the number of active witnesses, that list is rebuilt from
global properties' ``active_witnesses`` and shuffled by graphene's xorshift
rule seeded with the head block time (:func:`shuffle_witnesses`).

Per-block work after the transactions (graphene ``database::_apply_block``
order): missed slots counted on the witnesses scheduled for them, the
dynamic global properties, the signing witness (and its pay from
``witness_budget``), the last irreversible block, then, when the block
reached ``next_maintenance_time``, chain maintenance
(:func:`nodeapi.chain.maintenance.perform_chain_maintenance`), expired limit
orders cancelled
(:func:`~nodeapi.chain.evaluators.market.clear_expired_orders`), due force
settlements (:mod:`nodeapi.chain.market.upkeep`), expired
HTLCs refunded (:func:`~nodeapi.chain.evaluators.htlc.clear_expired_htlcs`),
expired price feeds and core exchange rates of market-issued assets,
expired withdraw permissions removed
(:func:`~nodeapi.chain.evaluators.withdraw_permission.update_withdraw_permissions`), the
maintenance flag (``dynamic_flags`` bit 1, which makes the next slot skip
``maintenance_skip_slots``) and the witness schedule; see
:func:`update_global_objects`.

Every function reads the head from ``state`` (an
:class:`~nodeapi.chain.state.ObjectStore`: 2.0.0 global properties, 2.1.0
dynamic global properties); times are integer seconds since the epoch.
:class:`~nodeapi.chain.chain.Chain` exposes them as ``get_slot_time``,
``get_slot_at_time`` and ``get_scheduled_witness``.
"""

import operator

from nodeapi.chain.evaluators.context import ApplyContext
from nodeapi.chain.evaluators.credit_offer import update_credit_offers_and_deals
from nodeapi.chain.evaluators.htlc import clear_expired_htlcs
from nodeapi.chain.evaluators.market import clear_expired_orders
from nodeapi.chain.evaluators.proposal import clear_expired_proposals
from nodeapi.chain.evaluators.registry import apply_operation
from nodeapi.chain.evaluators.ticket import process_tickets
from nodeapi.chain.market.upkeep import (
    clear_expired_force_settlements, update_core_exchange_rates, update_expired_feeds)
from nodeapi.chain.evaluators.withdraw_permission import update_withdraw_permissions
from nodeapi.chain.genesis import ALL_SLOTS_FILLED
from nodeapi.chain.maintenance import perform_chain_maintenance
from nodeapi.chain.vesting import deposit_lazy_vesting
from nodeapi.protocol.config import GRAPHENE_100_PERCENT, GRAPHENE_IRREVERSIBLE_THRESHOLD

MAINTENANCE_FLAG = 0x01  # dynamic_global_property_object::maintenance_flag
RECENTLY_MISSED_INCREMENT = 4  # GRAPHENE_RECENTLY_MISSED_COUNT_INCREMENT
RECENTLY_MISSED_DECREMENT = 3  # GRAPHENE_RECENTLY_MISSED_COUNT_DECREMENT
_MULTIPLIER = 2685821657736338717
_MASK64 = (1 << 64) - 1
_ALL_FILLED_TEXT = str(ALL_SLOTS_FILLED)
_LAST_CONFIRMED = operator.itemgetter("last_confirmed_block_num")


def _interval(state) -> int:
    return int(state.objects["2.0.0"]["parameters"]["block_interval"])


def slot_time(state, initial_timestamp: int, slot: int) -> int:
    """graphene ``get_slot_time``: time of the ``slot``-th slot after head
    (0 -> 0); before the first block, slots count from the genesis'
    ``initial_timestamp``; after a maintenance block
    ``maintenance_skip_slots`` slots are skipped."""
    if slot == 0:
        return 0
    interval = _interval(state)
    dgp = state.objects["2.1.0"]
    if dgp["head_block_number"] == 0:
        return initial_timestamp + slot * interval
    head = dgp["time"]
    if dgp["dynamic_flags"] & MAINTENANCE_FLAG:
        slot += int(state.objects["2.0.0"]["parameters"]["maintenance_skip_slots"])
    return head - head % interval + slot * interval


def slot_at_time(state, initial_timestamp: int, when: int) -> int:
    """graphene ``get_slot_at_time``: slot number of ``when`` (0 if not
    after head)."""
    first = slot_time(state, initial_timestamp, 1)
    if when < first:
        return 0
    return (when - first) // _interval(state) + 1


def scheduled_witness(state, slot: int) -> str:
    """Witness id (``1.6.N``) of ``slot`` (module docstring rule)."""
    shuffled = state.objects["2.12.0"]["current_shuffled_witnesses"]
    return shuffled[(state.objects["2.1.0"]["current_aslot"] + slot) % len(shuffled)]


def shuffle_witnesses(witnesses: list, now: int) -> list:
    """graphene ``update_witness_schedule``'s shuffle of ``witnesses`` with
    the head block time ``now`` (seconds) as seed: for each position ``i``,
    ``k`` = xorshift64* of ``(now << 32) + i * 2685821657736338717`` and
    position ``i`` swaps with ``i + k % (n - i)``.  Returns a new list."""
    out = list(witnesses)
    now_hi = (now << 32) & _MASK64
    for i in range(len(out)):
        k = (now_hi + i * _MULTIPLIER) & _MASK64
        k ^= k >> 12
        k ^= (k << 25) & _MASK64
        k ^= k >> 27
        k = (k * _MULTIPLIER) & _MASK64
        j = i + k % (len(out) - i)
        out[i], out[j] = out[j], out[i]
    return out


def update_witness_schedule(state) -> None:
    """graphene ``update_witness_schedule``: after a block whose number is a
    multiple of the active witness count, 2.12.0's
    ``current_shuffled_witnesses`` = :func:`shuffle_witnesses` of the active
    witnesses seeded with the head time."""
    dgp = state.objects["2.1.0"]
    active = state.objects["2.0.0"]["active_witnesses"]
    if dgp["head_block_number"] % len(active) == 0:
        state.modify("2.12.0")["current_shuffled_witnesses"] = shuffle_witnesses(
            active, dgp["time"])


def _count_missed(state, slot: int) -> int:
    """graphene ``update_witness_missed_blocks``: the slots missed before
    the block at ``slot``; when fewer than the scheduled witnesses, each
    witness scheduled for a missed slot gets ``total_missed`` + 1 (a longer
    gap - a chain started long after its genesis time - counts on nobody)."""
    missed = slot - 1
    if missed < len(state.objects["2.12.0"]["current_shuffled_witnesses"]):
        for i in range(missed):
            wit = state.modify(scheduled_witness(state, i + 1))
            wit["total_missed"] = int(wit["total_missed"]) + 1
    return missed


def _recently_missed(count: int, missed: int, block_num: int) -> int:
    """graphene ``update_global_dynamic_data``'s ``recently_missed_count``."""
    if block_num == 1:
        return 0
    if missed:
        return count + RECENTLY_MISSED_INCREMENT * missed
    if count > RECENTLY_MISSED_INCREMENT:
        return count - RECENTLY_MISSED_DECREMENT
    return max(count - 1, 0)


def slots_filled(filled: int, missed: int) -> int:
    """``recent_slots_filled`` after a block that follows ``missed`` empty
    slots (graphene db_update.cpp ``update_global_dynamic_data``:
    ``((filled << 1) + 1) << missed`` on a 128-bit ``fc::uint128_t``).
    The reference's ``__uint128_t`` shift by a count of 128 or more is
    compiled (GCC, x86-64) to a shift by the count modulo 128, which is
    what its nodes store after a long gap (block 1 of a chain produced long
    after its genesis time), so the same here."""
    return (((filled << 1) + 1) << (missed & 127)) & ALL_SLOTS_FILLED


def _pay_signing_witness(state, witness_id: str, now: int) -> None:
    """graphene ``update_signing_witness`` / ``deposit_witness_pay``: the
    smaller of ``witness_pay_per_block`` and the ``witness_budget`` leaves
    the budget into the witness' pay vesting balance (``pay_vb``, a
    coin-days-destroyed balance of ``witness_pay_vesting_seconds``, type
    ``witness``)."""
    params = state.objects["2.0.0"]["parameters"]
    dgp = state.objects["2.1.0"]
    pay = min(int(params["witness_pay_per_block"]), int(dgp["witness_budget"]))
    if pay <= 0:
        return
    state.modify("2.1.0")["witness_budget"] = int(dgp["witness_budget"]) - pay
    wit = state.objects[witness_id]
    new_vb = deposit_lazy_vesting(
        state, wit.get("pay_vb"), pay, int(params.get("witness_pay_vesting_seconds", 86400)),
        "witness", wit["witness_account"], True, now)
    if new_vb is not None:
        state.modify(witness_id)["pay_vb"] = new_vb


def update_global_objects(state, initial_timestamp: int, block: dict, ts: int, bid: str,
                          prefix: str, block_summary: dict | None = None,
                          irreversible_follows_head: bool = False) -> list:
    """Advance the head to ``block`` (wire JSON, timestamp ``ts`` seconds,
    id ``bid``) in ``state``'s
    open session (module docstring order): missed slots, head
    number/id/time, current witness and ``current_aslot``,
    ``recent_slots_filled`` and ``recently_missed_count``, the signing
    witness' ``last_aslot`` / ``last_confirmed_block_num`` and pay, and
    ``last_irreversible_block_num`` (the block confirmed by 70 % of the
    active witnesses, ``GRAPHENE_IRREVERSIBLE_THRESHOLD``, never lower than
    before: graphene ``update_last_irreversible_block``; with
    ``irreversible_follows_head`` the block before the head: a devnet, one
    producer and no fork to undo - not the head itself, as python-bitshares
    takes its TaPoS from the header of the block after the last
    irreversible one); then
    the due ticket updates (``process_tickets``), maintenance, expired
    proposals (executed when authorized, graphene
    ``clear_expired_proposals``; ``prefix`` and ``block_summary`` serve the
    operations they apply), expired orders, HTLCs, withdraw permissions,
    credit offers and deals, the maintenance flag and the witness schedule.

    Returns the virtual operations this generated outside any transaction,
    ``[(op, result)]`` (graphene pushes them after the block's transactions:
    ``trx_in_block`` = number of transactions, ``op_in_trx`` 0)."""
    objects = state.objects
    dgp = objects["2.1.0"]
    num = dgp["head_block_number"] + 1
    maintenance = ts >= dgp["next_maintenance_time"]
    missed = _count_missed(state, slot_at_time(state, initial_timestamp, ts))
    # the signing witness' pay reads and changes only the witness budget,
    # so 2.1.0 is copied once, after it, with every head field
    witness_id = block["witness"]
    _pay_signing_witness(state, witness_id, ts)
    old = objects["2.1.0"]
    filled = old["recent_slots_filled"]
    if missed or filled != _ALL_FILLED_TEXT:  # every slot filled stays so
        filled = int(filled)
        filled = str(slots_filled(filled, missed))
    aslot = old["current_aslot"] + missed + 1
    wit = state.modify(witness_id)
    wit["last_aslot"] = aslot
    wit["last_confirmed_block_num"] = num
    confirmed = sorted(map(_LAST_CONFIRMED, map(objects.__getitem__,
                                                objects["2.0.0"]["active_witnesses"])))
    new = state.modify("2.1.0")
    new["head_block_number"] = num
    new["head_block_id"] = bid
    new["time"] = ts
    new["current_witness"] = witness_id
    new["current_aslot"] = aslot
    new["recent_slots_filled"] = filled
    new["recently_missed_count"] = _recently_missed(old["recently_missed_count"], missed, num)
    offset = ((GRAPHENE_100_PERCENT - GRAPHENE_IRREVERSIBLE_THRESHOLD) * len(confirmed)
              // GRAPHENE_100_PERCENT)
    lib = num - 1 if irreversible_follows_head else confirmed[offset]
    if lib > old["last_irreversible_block_num"]:  # it never moves back
        new["last_irreversible_block_num"] = lib
    process_tickets(state, ts)
    ctx = ApplyContext(state, ts, num, prefix, block_summary, apply_operation=apply_operation)
    if maintenance:
        perform_chain_maintenance(state, ts, num, ctx)
    clear_expired_proposals(ctx)
    vops = ctx.virtual_ops
    vops += clear_expired_orders(state, ts, prefix)
    clear_expired_force_settlements(ctx)  # its virtual operations join vops
    vops += clear_expired_htlcs(state, ts)
    update_expired_feeds(ctx)
    update_core_exchange_rates(state)
    update_withdraw_permissions(state, ts)
    update_credit_offers_and_deals(ctx)  # its virtual operations join vops
    flags = state.objects["2.1.0"]["dynamic_flags"]
    flags = (flags & ~MAINTENANCE_FLAG) | (MAINTENANCE_FLAG if maintenance else 0)
    if flags != state.objects["2.1.0"]["dynamic_flags"]:
        state.modify("2.1.0")["dynamic_flags"] = flags
    update_witness_schedule(state)
    return vops
