"""Tickets: ticket_create (57), ticket_update (58) and their automatic
updates; objects 1.18.N.

Graphene reference: libraries/chain/ticket_evaluator.cpp, ticket_object.cpp
/ .hpp (``init_new``, ``init_split``, ``update_target_type``,
``auto_update``, value multipliers of ticket version 2, in force since
core-2262), db_update.cpp (``process_tickets``, run at every block before
maintenance and by ticket_update).

Object (wire, enums by name as fc writes them): ``{id, account,
target_type, amount: {amount, asset_id}, current_type, status, value,
next_auto_update_time, next_type_downgrade_time}``; types ``liquid``,
``lock_180_days``, ``lock_360_days``, ``lock_720_days``, ``lock_forever``;
status ``charging``, ``stable``, ``withdrawing``.  Value = amount times 0,
2, 4, 8, 8 by current type; a lock_forever ticket keeps its value while it
charges and loses a quarter of 8 * amount each 180 days once there.

Charging: one type up each 15 days until the target; downgrading: one type
down after 180, 180 or 360 days (from lock_180 / lock_360 / lock_720), or
7 days to cancel a charge; a liquid ticket that is withdrawing returns its
amount to the balance.  The account statistics keep ``total_core_pol`` /
``total_pol_value`` (locked) and ``total_core_pob`` / ``total_pob_value``
(forever), which the vote tally reads; the dynamic global properties
``total_pob`` / ``total_inactive``.
"""

from nodeapi.protocol.ids import instance_number
from nodeapi.chain.errors import fc_assert
from nodeapi.chain.evaluators.context import ApplyContext
from nodeapi.chain.balances import adjust_balance
from nodeapi.protocol.config import CORE_ASSET, MAX_TIME
from nodeapi.protocol.asset import amount_of, core

KIND = "1.18"
TYPES = ("liquid", "lock_180_days", "lock_360_days", "lock_720_days", "lock_forever")
LIQUID, FOREVER = 0, 4
MULTIPLIER = (0, 2, 4, 8, 8)
FOREVER_STEPS = 4
FOREVER_STEP_SECONDS = 180 * 86400
CHARGING_STEP_SECONDS = 15 * 86400
CANCEL_CHARGING_SECONDS = 7 * 86400
DOWNGRADE_SECONDS = (180 * 86400, 180 * 86400, 360 * 86400)


class _Ticket:
    """A ticket's fields as numbers while its rules run."""

    def __init__(self, obj: dict) -> None:
        self.target = TYPES.index(obj["target_type"])
        self.amount = amount_of(obj["amount"])
        self.current = TYPES.index(obj["current_type"])
        self.status = obj["status"]
        self.value = int(obj["value"])
        self.next_update = obj["next_auto_update_time"]
        self.next_downgrade = obj["next_type_downgrade_time"]

    def fields(self) -> dict:
        return {"target_type": TYPES[self.target],
                "amount": core(self.amount),
                "current_type": TYPES[self.current], "status": self.status,
                "value": self.value, "next_auto_update_time": self.next_update,
                "next_type_downgrade_time": self.next_downgrade}

    def update_value(self) -> None:
        if self.current != FOREVER:
            self.value = self.amount * MULTIPLIER[self.current]

    def update_target_type(self, now: int, target: int) -> None:
        if self.current < target:
            if self.status != "charging":
                self.status = "charging"
                self.next_update = now + CHARGING_STEP_SECONDS
        else:
            self.status = "withdrawing"
            if self.next_downgrade == MAX_TIME:
                if self.current == target:
                    self.next_downgrade = now + CANCEL_CHARGING_SECONDS
                else:
                    self.current -= 1
                    self.next_downgrade = now + DOWNGRADE_SECONDS[self.current]
            self.next_update = self.next_downgrade
        self.target = target
        self.update_value()

    def auto_update(self) -> None:
        if self.status == "charging":
            self.current += 1
            self.next_downgrade = MAX_TIME
            if self.current < self.target:
                self.next_update += CHARGING_STEP_SECONDS
            elif self.current != FOREVER:
                self.status = "stable"
                self.next_update = MAX_TIME
            else:
                self.status = "withdrawing"
                self.next_update += FOREVER_STEP_SECONDS
                self.value = self.amount * MULTIPLIER[FOREVER]
        elif self.current == FOREVER:
            delta = max(self.amount * MULTIPLIER[FOREVER] // FOREVER_STEPS, 1)
            if self.value <= delta:
                self.value = 0
                self.status = "stable"
                self.next_update = MAX_TIME
            else:
                self.value -= delta
                self.next_update += FOREVER_STEP_SECONDS
        elif self.current == self.target:
            self.status = "stable"
            self.next_downgrade = MAX_TIME
            self.next_update = MAX_TIME
        else:
            self.current -= 1
            self.next_downgrade += DOWNGRADE_SECONDS[self.current]
            self.next_update = self.next_downgrade
        self.update_value()


def _stats(state, account: str) -> dict:
    return state.modify(state.objects[account]["statistics"])


def ticket_create(ctx: ApplyContext, data: dict) -> list:
    """ticket_create (57): lock core from the balance in a charging liquid
    ticket aiming at ``target_type``; result ``[1, "1.18.N"]``."""
    state = ctx.state
    amount = amount_of(data["amount"])
    adjust_balance(state, data["account"], CORE_ASSET, -amount)
    ticket = _Ticket({"target_type": TYPES[int(data["target_type"])],
                      "amount": data["amount"], "current_type": "liquid",
                      "status": "charging", "value": 0,
                      "next_auto_update_time": ctx.now + CHARGING_STEP_SECONDS,
                      "next_type_downgrade_time": MAX_TIME})
    ticket.update_value()
    obj = state.create(KIND, dict({"account": data["account"]}, **ticket.fields()))
    stats = _stats(state, data["account"])
    stats["total_core_pol"] = int(stats["total_core_pol"]) + amount
    stats["total_pol_value"] = int(stats["total_pol_value"]) + ticket.value
    return [1, obj["id"]]


def ticket_update(ctx: ApplyContext, data: dict) -> list:
    """ticket_update (58): a new target type for the whole ticket, or for
    ``amount_for_new_target`` split into a new ticket; then the due
    automatic updates; result a ``generic_operation_result``."""
    state = ctx.state
    obj = state.require(data["ticket"])
    fc_assert(obj["account"] == data["account"], "_ticket->account == op.account",
              "Ticket is not owned by the account")
    fc_assert(obj["current_type"] != "lock_forever", "_ticket->current_type != lock_forever",
              "Can not to update a ticket that is locked forever")
    target = int(data["target_type"])
    fc_assert(TYPES.index(obj["target_type"]) != target,
              "static_cast<uint64_t>(_ticket->target_type) != op.target_type",
              "Target type does not change")
    split = data.get("amount_for_new_target")
    if split is not None:
        fc_assert(amount_of(split) <= amount_of(obj["amount"]),
                  "*op.amount_for_new_target <= _ticket->amount",
                  "Insufficient amount in ticket to be updated")
    ticket = _Ticket(obj)
    old_value = ticket.value
    new_objects = []
    if split is not None and amount_of(split) < ticket.amount:
        part = _Ticket(obj)
        part.amount = amount_of(split)
        part.update_target_type(ctx.now, target)
        new = state.create(KIND, dict({"account": obj["account"]}, **part.fields()))
        new_objects.append(new["id"])
        ticket.amount -= part.amount
        ticket.update_value()
        delta = part.value + ticket.value - old_value
    else:
        ticket.update_target_type(ctx.now, target)
        delta = ticket.value - old_value
    state.modify(obj["id"]).update(ticket.fields())
    if delta:
        stats = _stats(state, data["account"])
        stats["total_pol_value"] = int(stats["total_pol_value"]) + delta
    updated, removed = process_tickets(state, ctx.now)
    updated = (set(updated) | {obj["id"]}) - set(new_objects) - set(removed)
    key = instance_number
    return [3, {"new_objects": new_objects, "updated_objects": sorted(updated, key=key),
                "removed_objects": sorted(removed, key=key)}]


def process_tickets(state, now: int) -> tuple:
    """graphene ``process_tickets``: apply the due automatic updates, oldest
    due first (ties by id); returns ``(updated ids, removed ids)``."""
    updated, removed = [], []
    if not state.by_kind.get(KIND):  # no tickets: the usual block
        return updated, removed
    delta_pob = delta_inactive = 0
    while True:
        due = [(state.objects[oid]["next_auto_update_time"], instance_number(oid), oid)
               for oid in state.ids_of_type(KIND + ".")]
        due = [d for d in due if d[0] <= now]
        if not due:
            break
        oid = min(due)[2]
        obj = state.objects[oid]
        ticket = _Ticket(obj)
        stats = _stats(state, obj["account"])
        if ticket.status == "withdrawing" and ticket.current == LIQUID:
            adjust_balance(state, obj["account"], CORE_ASSET, ticket.amount)
            stats = _stats(state, obj["account"])
            stats["total_core_pol"] = int(stats["total_core_pol"]) - ticket.amount
            stats["total_pol_value"] = int(stats["total_pol_value"]) - ticket.value
            state.remove(oid)
            removed.append(oid)
            continue
        old_type, old_value = ticket.current, ticket.value
        ticket.auto_update()
        state.modify(oid).update(ticket.fields())
        updated.append(oid)
        changes = {"total_core_inactive": 0, "total_core_pob": 0, "total_core_pol": 0,
                   "total_pob_value": 0, "total_pol_value": 0}
        if old_type == FOREVER:
            if ticket.value == 0:
                delta_pob -= ticket.amount
                delta_inactive += ticket.amount
                changes["total_core_inactive"] = ticket.amount
                changes["total_core_pob"] = -ticket.amount
            changes["total_pob_value"] = ticket.value - old_value
        elif ticket.current == FOREVER:
            delta_pob += ticket.amount
            changes.update(total_core_pob=ticket.amount, total_pob_value=ticket.value,
                           total_core_pol=-ticket.amount, total_pol_value=-old_value)
        else:
            changes["total_pol_value"] = ticket.value - old_value
        for field, change in changes.items():
            if change:
                stats[field] = int(stats[field]) + change
    if delta_pob or delta_inactive:
        dgp = state.modify("2.1.0")
        dgp["total_pob"] = int(dgp["total_pob"]) + delta_pob
        dgp["total_inactive"] = int(dgp["total_inactive"]) + delta_inactive
    return updated, removed
