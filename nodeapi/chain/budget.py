"""The maintenance budget: how much of the reserve is released for witness
pay (and workers), and where the collected fees go.

Graphene reference: libraries/chain/db_maint.cpp
(``initialize_budget_record``, ``process_budget``); constants
``GRAPHENE_CORE_ASSET_CYCLE_RATE`` (17) and ``_BITS`` (32).  In core
satoshis:

- reserve = ``max_supply`` - ``current_supply`` + ``accumulated_fees`` (of
  2.3.0) + the unused ``witness_budget``;
- total budget = ``ceil(reserve * dt * 17 / 2**32)`` (at most the reserve),
  ``dt`` the seconds since ``last_budget_time``; 0 at the first
  maintenance (``last_budget_time`` still the epoch);
- witness budget = min(``witness_pay_per_block`` * blocks until the next
  maintenance, total budget); worker budget = min(``worker_budget_per_day``
  * seconds until the next maintenance / 86400, what is left), of which
  the workers are paid (:func:`nodeapi.chain.evaluators.worker.pay_workers`)
  and the rest returns;
- ``current_supply`` += witness budget + worker pay - ``accumulated_fees`` -
  the old witness budget; ``accumulated_fees`` = 0; dynamic global properties'
  ``witness_budget`` = witness budget, ``last_budget_time`` = now; a budget
  record 2.13.N (``{"time", "record": {...}}``) keeps the figures.

Witness pay out of ``witness_budget`` happens per block
(:mod:`nodeapi.chain.schedule`).
"""

from nodeapi.chain.balances import adjust_supply
from nodeapi.chain.evaluators.worker import pay_workers
from nodeapi.protocol.config import CORE_ASSET

CYCLE_RATE = 17
CYCLE_RATE_BITS = 32


def process_budget(state, now: int) -> dict:
    """Set the budget at maintenance time ``now`` (after
    ``next_maintenance_time`` moved on); returns the budget record."""
    params = state.objects["2.0.0"]["parameters"]
    dgp = state.objects["2.1.0"]
    core = state.objects[CORE_ASSET]
    core_dd = state.objects["2.3.0"]
    time_to_maint = dgp["next_maintenance_time"] - now
    interval = int(params["block_interval"])
    blocks_to_maint = (time_to_maint + interval - 1) // interval
    max_supply = int(core["options"]["max_supply"])
    fees = int(core_dd["accumulated_fees"])
    unused = int(dgp["witness_budget"])
    rec = {"time_since_last_budget": 0, "from_initial_reserve": max_supply
           - int(core_dd["current_supply"]), "from_accumulated_fees": fees,
           "from_unused_witness_budget": unused, "requested_witness_budget": 0,
           "total_budget": 0, "witness_budget": 0, "worker_budget": 0,
           "leftover_worker_funds": 0, "supply_delta": 0, "max_supply": max_supply,
           "current_supply": 0}
    last = dgp["last_budget_time"]
    if last != 0 and now > last:
        dt = now - last
        rec["time_since_last_budget"] = dt
        reserve = rec["from_initial_reserve"] + fees + unused
        budget = (reserve * dt * CYCLE_RATE + (1 << CYCLE_RATE_BITS) - 1) >> CYCLE_RATE_BITS
        rec["total_budget"] = min(budget, reserve)
    available = rec["total_budget"]
    rec["requested_witness_budget"] = int(params["witness_pay_per_block"]) * blocks_to_maint
    witness_budget = min(rec["requested_witness_budget"], available)
    rec["witness_budget"] = witness_budget
    available -= witness_budget
    worker = int(params["worker_budget_per_day"]) * time_to_maint // 86400
    rec["worker_budget"] = min(worker, available)
    # graphene pays the workers before last_budget_time moves on
    rec["leftover_worker_funds"] = pay_workers(state, rec["worker_budget"], now)
    rec["supply_delta"] = (witness_budget + rec["worker_budget"] - rec["leftover_worker_funds"]
                           - fees - unused)
    dd = adjust_supply(state, CORE_ASSET, rec["supply_delta"])
    dd["accumulated_fees"] = 0
    dgp = state.modify("2.1.0")
    dgp["witness_budget"] = witness_budget
    dgp["last_budget_time"] = now
    rec["current_supply"] = dd["current_supply"]
    state.create("2.13", {"time": now, "record": rec})
    return rec
