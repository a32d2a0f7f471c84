"""Credit offers and deals: credit_offer_create (69), _delete (70), _update
(71), _accept (72), credit_deal_repay (73), credit_deal_update (76), and
at each block the auto-disabling of offers and the expiry of deals
(automatic repayment, else virtual credit_deal_expired 74); objects
1.21.N offers, 1.22.N deals, 2.18.N deal summaries (offer, borrower).

Graphene reference: libraries/chain/credit_offer_evaluator.cpp,
credit_offer_object.hpp, small_objects.cpp (reflection order), db_update.cpp
(``update_credit_offers_and_deals``), with every hardfork passed (2595's
auto-repay).  ``fee_rate`` in millionths; offers and deals live at most 380
days (GRAPHENE_MAX_CREDIT_OFFER_DAYS / _DEAL_DAYS).

- accept: collateral required = ``ceil(borrow * quote / base)`` of the
  offer's price for that collateral asset (base: the debt asset); the deal
  must be repaid by ``head time + max_duration_seconds``;
- repay: a credit fee of at least ``ceil(repay * fee_rate / 1000000)``
  goes to the offer (its total and current balance); a partial repayment
  releases ``repay * collateral // debt`` of the collateral;
- expiry: an auto-repaying deal is repaid in full (``only_full_repayment``
  1, or when the balance covers debt and fee) or in part (2: what the
  balance covers, rounded as the reference); a deal still open gives its
  collateral to the offer owner, the offer's total balance loses the debt.
"""

from nodeapi.chain.errors import ChainError, InvalidOperation, fc_assert
from nodeapi.chain.evaluators.context import ApplyContext
from nodeapi.chain.balances import adjust_balance
from nodeapi.protocol.times import parse_time
from nodeapi.chain.whitelist import is_authorized_asset
from nodeapi.errors import ProtocolError
from nodeapi.protocol.ids import instance_number
from nodeapi.protocol.config import MAX_TIME
from nodeapi.protocol.validation import validate_operation
from nodeapi.protocol.asset import amount_of, asset, core

OFFER, DEAL, SUMMARY = "1.21", "1.22", "2.18"
FEE_RATE_DENOM = 1000000
MAX_DAYS_SECONDS = 380 * 86400
NO_AUTO_REPAY, ONLY_FULL_REPAYMENT = 0, 1


def _fail(message: str):
    raise InvalidOperation(message)


def _authorized(state, account: str, asset_id: str, message: str) -> None:
    if not is_authorized_asset(state, account, state.objects[asset_id]):
        _fail(message)


def _auto_disable(now: int, when: int) -> None:
    fc_assert(when > now, "op.auto_disable_time > block_time",
              "Auto-disable time should be in the future")
    fc_assert(when - now <= MAX_DAYS_SECONDS,
              "op.auto_disable_time - block_time <= fc::days(GRAPHENE_MAX_CREDIT_OFFER_DAYS)",
              "Auto-disable time should not be later than 380 days in the future")


def _own_offer(state, data: dict) -> dict:
    offer = state.require(data["offer_id"])
    fc_assert(offer["owner_account"] == data["owner_account"],
              "_offer->owner_account == op.owner_account",
              "The account is not the owner of the credit offer")
    return offer


def _check_balances(offer: dict) -> None:
    fc_assert(int(offer["total_balance"]) > 0, "_offer->total_balance > 0",
              "Total balance in the credit offer should be positive")
    fc_assert(int(offer["current_balance"]) >= 0, "_offer->current_balance >= 0",
              "Current balance in the credit offer should not be negative")
    fc_assert(int(offer["total_balance"]) >= int(offer["current_balance"]),
              "_offer->total_balance >= _offer->current_balance",
              "Total balance in the credit offer should not be less than current balance")


def credit_offer_create(ctx: ApplyContext, data: dict) -> list:
    """credit_offer_create (69); result ``[1, "1.21.N"]``."""
    state = ctx.state
    if data["enabled"]:
        _auto_disable(ctx.now, parse_time(data["auto_disable_time"]))
    for asset_id, _price in data.get("acceptable_collateral") or ():
        state.require(asset_id)
    for account, _limit in data.get("acceptable_borrowers") or ():
        state.require(account)
    state.require(data["asset_type"])
    _authorized(state, data["owner_account"], data["asset_type"],
                "The account is unauthorized by the asset")
    balance = int(data["balance"])
    adjust_balance(state, data["owner_account"], data["asset_type"], -balance)
    offer = state.create(OFFER, {
        "owner_account": data["owner_account"], "asset_type": data["asset_type"],
        "total_balance": balance, "current_balance": balance,
        "fee_rate": int(data["fee_rate"]),
        "max_duration_seconds": int(data["max_duration_seconds"]),
        "min_deal_amount": int(data["min_deal_amount"]), "enabled": bool(data["enabled"]),
        "auto_disable_time": parse_time(data["auto_disable_time"]),
        "acceptable_collateral": data.get("acceptable_collateral") or [],
        "acceptable_borrowers": data.get("acceptable_borrowers") or []})
    return [1, offer["id"]]


def credit_offer_delete(ctx: ApplyContext, data: dict) -> list:
    """credit_offer_delete (70): no deal open; the balance back; result the
    released ``asset``."""
    state = ctx.state
    offer = _own_offer(state, data)
    fc_assert(int(offer["total_balance"]) == int(offer["current_balance"]),
              "_offer->total_balance == _offer->current_balance",
              "Can only delete a credit offer when the unpaid amount is zero")
    released = int(offer["current_balance"])
    if released:
        adjust_balance(state, data["owner_account"], offer["asset_type"], released)
    state.remove(offer["id"])
    return [2, asset(released, offer["asset_type"])]


def credit_offer_update(ctx: ApplyContext, data: dict) -> list:
    """credit_offer_update (71): balance, terms, enabling."""
    state = ctx.state
    offer = _own_offer(state, data)
    delta = data.get("delta_amount")
    if delta is not None:
        fc_assert(offer["asset_type"] == delta["asset_id"],
                  "_offer->asset_type == op.delta_amount->asset_id", "Asset type mismatch")
        change = amount_of(delta)
        if change > 0:
            _authorized(state, data["owner_account"], offer["asset_type"],
                        "The account is unauthorized by the asset")
        else:
            fc_assert(int(offer["total_balance"]) > -change,
                      "_offer->total_balance > -op.delta_amount->amount",
                      "Should leave some funds in the credit offer when updating")
            fc_assert(int(offer["current_balance"]) >= -change,
                      "_offer->current_balance >= -op.delta_amount->amount",
                      "Insufficient balance in the credit offer")
    enabled = data["enabled"] if data.get("enabled") is not None else offer["enabled"]
    if enabled:
        when = (parse_time(data["auto_disable_time"]) if data.get("auto_disable_time")
                else offer["auto_disable_time"])
        _auto_disable(ctx.now, when)
    for asset_id, price in data.get("acceptable_collateral") or ():
        state.require(asset_id)
        fc_assert(offer["asset_type"] == price["base"]["asset_id"],
                  "_offer->asset_type == collateral.second.base.asset_id",
                  "Asset type mismatch in a price of acceptable collateral")
    for account, _limit in data.get("acceptable_borrowers") or ():
        state.require(account)
    obj = state.modify(offer["id"])
    if delta is not None:
        adjust_balance(state, data["owner_account"], offer["asset_type"], -amount_of(delta))
        obj["total_balance"] = int(obj["total_balance"]) + amount_of(delta)
        obj["current_balance"] = int(obj["current_balance"]) + amount_of(delta)
    for field in ("fee_rate", "max_duration_seconds", "min_deal_amount"):
        if data.get(field) is not None:
            obj[field] = int(data[field])
    for field in ("enabled", "acceptable_collateral", "acceptable_borrowers"):
        if data.get(field) is not None:
            obj[field] = data[field]
    if data.get("auto_disable_time") is not None:
        obj["auto_disable_time"] = parse_time(data["auto_disable_time"])
    _check_balances(obj)
    return [0, {}]


def _summary(state, offer_id: str, borrower: str) -> dict | None:
    for oid in state.ids_of_type(SUMMARY + "."):
        obj = state.objects[oid]
        if obj["offer_id"] == offer_id and obj["borrower"] == borrower:
            return obj
    return None


def credit_offer_accept(ctx: ApplyContext, data: dict) -> list:
    """credit_offer_accept (72): borrow against collateral; result an
    ``extendable_operation_result`` with the new deal."""
    state = ctx.state
    offer = state.require(data["offer_id"])
    borrow, collateral = data["borrow_amount"], data["collateral"]
    amount = amount_of(borrow)
    fc_assert(offer["enabled"], "_offer->enabled", "The credit offer is not enabled")
    fc_assert(offer["asset_type"] == borrow["asset_id"],
              "_offer->asset_type == op.borrow_amount.asset_id", "Asset type mismatch")
    fc_assert(int(offer["current_balance"]) >= amount,
              "_offer->current_balance >= op.borrow_amount.amount",
              "Insufficient balance in the credit offer thus unable to borrow")
    fc_assert(int(offer["min_deal_amount"]) <= amount,
              "_offer->min_deal_amount <= op.borrow_amount.amount",
              "Borrowing amount should not be less than minimum deal amount")
    fc_assert(int(offer["fee_rate"]) <= int(data["max_fee_rate"]),
              "_offer->fee_rate <= op.max_fee_rate",
              "The maximum accceptable fee rate is lower than offered")
    fc_assert(int(offer["max_duration_seconds"]) >= int(data["min_duration_seconds"]),
              "_offer->max_duration_seconds >= op.min_duration_seconds",
              "The minimum accceptable duration is longer than offered")
    price = dict(offer["acceptable_collateral"]).get(collateral["asset_id"])
    fc_assert(price is not None, "coll_itr != _offer->acceptable_collateral.end()",
              "Collateral asset type is not acceptable by the credit offer")
    borrower, owner = data["borrower"], offer["owner_account"]
    for who, asset_id, text in (
            (borrower, offer["asset_type"], "The borrower is unauthorized by the borrowing asset"),
            (borrower, collateral["asset_id"],
             "The borrower is unauthorized by the collateral asset"),
            (owner, offer["asset_type"],
             "The owner of the credit offer is unauthorized by the borrowing asset"),
            (owner, collateral["asset_id"],
             "The owner of the credit offer is unauthorized by the collateral asset")):
        _authorized(state, who, asset_id, text)
    base, quote = amount_of(price["base"]), amount_of(price["quote"])
    required = -(-amount * quote // base)
    # credit_offer_evaluator.cpp credit_offer_accept_evaluator::do_evaluate
    fc_assert(required <= amount_of(collateral),
              "required_collateral.amount <= op.collateral.amount",
              f"Insufficient collateral provided, requires {required}, provided "
              f"{collateral['amount']}", {"r": required, "p": collateral["amount"]},
              "Insufficient collateral provided, requires ${r}, provided ${p}")
    summary = _summary(state, offer["id"], borrower)
    limits = dict(offer["acceptable_borrowers"])
    if limits:
        fc_assert(borrower in limits, "itr != _offer->acceptable_borrowers.end()",
                  "Account is not in acceptable borrowers")
        already = int(summary["total_debt_amount"]) if summary else 0
        if already + amount > int(limits[borrower]):
            _fail(f"Unable to borrow {amount}, already borrowed {already}, maximum allowed "
                  f"{limits[borrower]}")
    adjust_balance(state, borrower, collateral["asset_id"], -amount_of(collateral))
    adjust_balance(state, borrower, offer["asset_type"], amount)
    obj = state.modify(offer["id"])
    obj["current_balance"] = int(obj["current_balance"]) - amount
    duration = int(offer["max_duration_seconds"])
    repay_time = ctx.now + duration if MAX_TIME - ctx.now >= duration else MAX_TIME
    ext = data.get("extensions")
    auto_repay = int(ext.get("auto_repay", NO_AUTO_REPAY)) if isinstance(ext, dict) \
        else NO_AUTO_REPAY
    deal = state.create(DEAL, {
        "borrower": borrower, "offer_id": offer["id"], "offer_owner": owner,
        "debt_asset": offer["asset_type"], "debt_amount": amount,
        "collateral_asset": collateral["asset_id"],
        "collateral_amount": amount_of(collateral), "fee_rate": int(offer["fee_rate"]),
        "latest_repay_time": repay_time, "auto_repay": auto_repay})
    if summary is not None:
        state.modify(summary["id"])["total_debt_amount"] = \
            int(summary["total_debt_amount"]) + amount
    else:
        state.create(SUMMARY, {"borrower": borrower, "offer_id": offer["id"],
                               "offer_owner": owner, "debt_asset": offer["asset_type"],
                               "total_debt_amount": amount})
    _check_balances(obj)
    fc_assert(repay_time > ctx.now, "new_deal.latest_repay_time > block_time",
              "Latest repayment time should be in the future")
    fc_assert(repay_time - ctx.now <= MAX_DAYS_SECONDS,
              "new_deal.latest_repay_time - block_time <= fc::days(GRAPHENE_MAX_CREDIT_DEAL_DAYS)",
              "Latest repayment time should not be too late in the future")
    return [5, {"impacted_accounts": [owner], "new_objects": [deal["id"]]}]


def _required_fee(amount: int, rate: int) -> int:
    return (amount * rate + FEE_RATE_DENOM - 1) // FEE_RATE_DENOM


def credit_deal_repay(ctx: ApplyContext, data: dict) -> list:
    """credit_deal_repay (73): module docstring arithmetic; result an
    ``extendable_operation_result`` with the released collateral."""
    state = ctx.state
    deal = state.require(data["deal_id"])
    repay, fee = data["repay_amount"], data["credit_fee"]
    amount = amount_of(repay)
    fc_assert(deal["borrower"] == data["account"], "_deal->borrower == op.account",
              "A credit deal can only be repaid by the borrower")
    fc_assert(deal["debt_asset"] == repay["asset_id"],
              "_deal->debt_asset == op.repay_amount.asset_id", "Asset type mismatch")
    fc_assert(int(deal["debt_amount"]) >= amount, "_deal->debt_amount >= op.repay_amount.amount",
              "Repay amount should not be greater than unpaid amount")
    required = _required_fee(amount, int(deal["fee_rate"]))
    if amount_of(fee) < required:
        _fail(f"Insuffient credit fee, requires {required}, offered {fee['amount']}")
    _authorized(state, data["account"], deal["debt_asset"],
                "The account is unauthorized by the repaying asset")
    _authorized(state, deal["offer_owner"], deal["debt_asset"],
                "The owner of the credit offer is unauthorized by the repaying asset")
    total = amount + amount_of(fee)
    adjust_balance(state, data["account"], deal["debt_asset"], -total)
    offer = state.modify(deal["offer_id"])
    offer["total_balance"] = int(offer["total_balance"]) + amount_of(fee)
    offer["current_balance"] = int(offer["current_balance"]) + total
    _check_balances(offer)
    result = {"impacted_accounts": [offer["owner_account"]], "updated_objects": [offer["id"]]}
    summary = _summary(state, deal["offer_id"], data["account"])
    if int(summary["total_debt_amount"]) == amount:
        state.remove(summary["id"])
    else:
        state.modify(summary["id"])["total_debt_amount"] = \
            int(summary["total_debt_amount"]) - amount
    debt, held = int(deal["debt_amount"]), int(deal["collateral_amount"])
    if debt == amount:
        released = held
        result["removed_objects"] = [deal["id"]]
        state.remove(deal["id"])
    else:
        released = amount * held // debt
        obj = state.modify(deal["id"])
        obj["debt_amount"] = debt - amount
        obj["collateral_amount"] = held - released
        result["updated_objects"] = sorted([offer["id"], deal["id"]],
                                           key=lambda i: (i[:5], instance_number(i)))
    adjust_balance(state, data["account"], deal["collateral_asset"], released)
    result["received"] = [asset(released, deal["collateral_asset"])]
    return [5, result]


def credit_deal_update(ctx: ApplyContext, data: dict) -> list:
    """credit_deal_update (76): the deal's automatic repayment type."""
    deal = ctx.state.require(data["deal_id"])
    fc_assert(deal["borrower"] == data["account"], "_deal->borrower == op.account",
              "A credit deal can only be updated by the borrower")
    fc_assert(int(deal["auto_repay"]) != int(data["auto_repay"]),
              "_deal->auto_repay != op.auto_repay",
              "The automatic repayment type does not change")
    ctx.state.modify(deal["id"])["auto_repay"] = int(data["auto_repay"])
    return [0, {}]


def _auto_repay_op(state, deal: dict) -> list:
    debt, rate = int(deal["debt_amount"]), int(deal["fee_rate"])
    fee = _required_fee(debt, rate)
    balance = state.balance(deal["borrower"], deal["debt_asset"])
    if int(deal["auto_repay"]) == ONLY_FULL_REPAYMENT or balance >= debt + fee:
        repay = debt
    else:
        repay = balance * FEE_RATE_DENOM // (FEE_RATE_DENOM + rate)
        held = int(deal["collateral_amount"])
        released = repay * held // debt
        repay = (released * debt + held - 1) // held
        fee = _required_fee(repay, rate)
    return [73, {"fee": core(0), "account": deal["borrower"],
                 "deal_id": deal["id"],
                 "repay_amount": asset(repay, deal["debt_asset"]),
                 "credit_fee": asset(fee, deal["debt_asset"]),
                 "extensions": []}]


def update_credit_offers_and_deals(ctx: ApplyContext) -> None:
    """graphene ``update_credit_offers_and_deals`` at the block time
    ``ctx.now``: disable offers past ``auto_disable_time``; for each deal
    past ``latest_repay_time`` (earliest first), try its automatic
    repayment (a virtual credit_deal_repay, no fee), then expire what is
    left (virtual credit_deal_expired).  A repayment that fails, its
    ``validate()`` included (graphene ``try_push_virtual_operation`` calls
    ``operation_validate`` first: a partial repayment out of an empty
    balance repays 0, "Amount to repay should be positive"), leaves nothing
    behind and records no operation."""
    state, now = ctx.state, ctx.now
    by_kind = state.by_kind
    if not by_kind.get(OFFER) and not by_kind.get(DEAL):  # the usual block
        return
    for oid in state.ids_of_type(OFFER + "."):
        offer = state.objects[oid]
        if offer["enabled"] and offer["auto_disable_time"] <= now:
            state.modify(oid)["enabled"] = False
    due = sorted((state.objects[d]["latest_repay_time"], instance_number(d), d)
                 for d in state.ids_of_type(DEAL + "."))
    for when, _n, did in due:
        if when > now:
            break
        deal = state.objects[did]
        if int(deal["auto_repay"]) != NO_AUTO_REPAY:
            op = _auto_repay_op(state, deal)
            state.begin()
            try:
                validate_operation(op)
                result = credit_deal_repay(ctx, op[1])
            except (ChainError, ProtocolError):
                state.rollback()
            else:
                state.commit()
                ctx.virtual_ops.append((op, result))
            if state.find(did) is None:
                continue
            deal = state.objects[did]
        offer = state.modify(deal["offer_id"])
        offer["total_balance"] = int(offer["total_balance"]) - int(deal["debt_amount"])
        summary = _summary(state, deal["offer_id"], deal["borrower"])
        if summary is not None:
            if int(summary["total_debt_amount"]) == int(deal["debt_amount"]):
                state.remove(summary["id"])
            else:
                state.modify(summary["id"])["total_debt_amount"] = \
                    int(summary["total_debt_amount"]) - int(deal["debt_amount"])
        adjust_balance(state, deal["offer_owner"], deal["collateral_asset"],
                       int(deal["collateral_amount"]))
        ctx.virtual_ops.append(([74, {
            "fee": core(0), "deal_id": did,
            "offer_id": deal["offer_id"], "offer_owner": deal["offer_owner"],
            "borrower": deal["borrower"],
            "unpaid_amount": asset(int(deal["debt_amount"]), deal["debt_asset"]),
            "collateral": {"amount": int(deal["collateral_amount"]),
                           "asset_id": deal["collateral_asset"]},
            "fee_rate": int(deal["fee_rate"])}], [0, {}]))
        state.remove(did)
