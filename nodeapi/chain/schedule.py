"""Witness schedule, slot arithmetic and the per-block update of the global
objects (dynamic global properties 2.1.0 and the signing witness).

Graphene reference: libraries/chain/db_witness_schedule.cpp
(``get_slot_time``, ``get_slot_at_time``, ``get_scheduled_witness``) and
db_update.cpp (``update_global_dynamic_data``, ``update_signing_witness``,
``update_last_irreversible_block``).

Witness schedule (deterministic, documented rule): the witness of absolute
slot ``A`` (``current_aslot`` + slot) is ``active_witnesses[A % n]`` of
global properties 2.0.0.

Per-block work after the head moved (graphene ``database::_apply_block``
order): expired limit orders are cancelled
(:func:`~nodeapi.chain.evaluators_market.clear_expired_orders`), then, when
the block reached ``next_maintenance_time``, the maintenance fee processing
runs (:func:`~nodeapi.chain.fees.process_fees`); see
:func:`update_global_objects`.

Every function reads the head from ``state`` (an
:class:`~nodeapi.chain.state.ObjectStore`: 2.0.0 global properties, 2.1.0
dynamic global properties); times are integer seconds since the epoch.
:class:`~nodeapi.chain.chain.Chain` exposes them as ``get_slot_time``,
``get_slot_at_time`` and ``get_scheduled_witness``.
"""

from nodeapi.chain.evaluators_market import clear_expired_orders
from nodeapi.chain.fees import process_fees
from nodeapi.chain.genesis import ALL_SLOTS_FILLED, format_time, parse_time


def _interval(state) -> int:
    return int(state.objects["2.0.0"]["parameters"]["block_interval"])


def slot_time(state, initial_timestamp: int, slot: int) -> int:
    """graphene ``get_slot_time``: time of the ``slot``-th slot after head
    (0 -> 0); before the first block, slots count from the genesis'
    ``initial_timestamp``."""
    if slot == 0:
        return 0
    interval = _interval(state)
    dgp = state.objects["2.1.0"]
    if dgp["head_block_number"] == 0:
        return initial_timestamp + slot * interval
    head = parse_time(dgp["time"])
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
    active = state.objects["2.0.0"]["active_witnesses"]
    return active[(state.objects["2.1.0"]["current_aslot"] + slot) % len(active)]


def update_global_objects(state, initial_timestamp: int, block: dict, bid: str) -> list:
    """Advance the head to ``block`` (wire JSON, id ``bid``) in ``state``'s
    open session: head number/id/time, current witness and ``current_aslot``,
    ``recent_slots_filled`` and ``recently_missed_count`` (missed slots
    since the previous head), ``next_maintenance_time`` (next multiple of
    ``maintenance_interval`` once passed), the signing witness'
    ``last_aslot`` / ``last_confirmed_block_num``, and
    ``last_irreversible_block_num`` (the block confirmed by 75 % of the
    active witnesses, graphene ``update_last_irreversible_block``).

    Then the per-block sweep and maintenance (module docstring).  Returns the
    virtual operations this generated outside any transaction,
    ``[(op, result)]`` (graphene pushes them after the block's transactions:
    ``trx_in_block`` = number of transactions, ``op_in_trx`` 0)."""
    num = state.objects["2.1.0"]["head_block_number"] + 1
    ts = parse_time(block["timestamp"])
    slot = slot_at_time(state, initial_timestamp, ts)
    missed = max(slot - 1, 0)
    dgp = state.modify("2.1.0")
    filled = int(dgp["recent_slots_filled"])
    filled = (((filled << 1) + 1) << missed) & ALL_SLOTS_FILLED if missed < 128 else 0
    dgp.update({
        "head_block_number": num, "head_block_id": bid, "time": block["timestamp"],
        "current_witness": block["witness"], "current_aslot": dgp["current_aslot"] + slot,
        "recent_slots_filled": str(filled),
        "recently_missed_count": (dgp["recently_missed_count"] + 4 * missed if missed
                                  else max(dgp["recently_missed_count"] - 1, 0)),
    })
    maintenance = ts >= parse_time(dgp["next_maintenance_time"])
    if maintenance:
        interval = int(state.objects["2.0.0"]["parameters"]["maintenance_interval"])
        dgp["next_maintenance_time"] = format_time((ts // interval + 1) * interval)
    wit = state.modify(block["witness"])
    wit["last_aslot"] = dgp["current_aslot"]
    wit["last_confirmed_block_num"] = num
    confirmed = sorted(state.objects[w]["last_confirmed_block_num"]
                       for w in state.objects["2.0.0"]["active_witnesses"])
    dgp["last_irreversible_block_num"] = confirmed[(10000 - 7500) * len(confirmed) // 10000]
    vops = clear_expired_orders(state, ts)
    if maintenance:
        process_fees(state, ts)
    return vops
