"""SameT funds (flash loans): samet_fund_create (64), _delete (65),
_update (66), _borrow (67), _repay (68); objects 1.20.N.

Graphene reference: libraries/chain/samet_fund_evaluator.cpp,
samet_fund_object.hpp, db_block.cpp (``_apply_transaction`` and
``push_proposal``: a transaction, or an executed proposal, may not end with
an unpaid SameT fund debt), with every hardfork passed.

Object (wire): ``{id, owner_account, asset_type, balance, fee_rate,
unpaid_amount}``; ``fee_rate`` in millionths (GRAPHENE_FEE_RATE_DENOM).
A borrower must repay within the same transaction with a fund fee of at
least ``ceil(repay_amount * fee_rate / 1000000)``, which the fund keeps.
Borrow and repay answer an ``extendable_operation_result`` naming the
fund owner as impacted.
"""

from nodeapi.chain.errors import InvalidOperation, fc_assert
from nodeapi.chain.evaluators.context import ApplyContext
from nodeapi.chain.balances import adjust_balance
from nodeapi.chain.whitelist import is_authorized_asset
from nodeapi.protocol.asset import amount_of, asset

KIND = "1.20"
FEE_RATE_DENOM = 1000000


def _authorized(state, account: str, asset_id: str) -> None:
    if not is_authorized_asset(state, account, state.objects[asset_id]):
        raise InvalidOperation("The account is unauthorized by the asset")


def _own_fund(state, data: dict) -> dict:
    fund = state.require(data["fund_id"])
    fc_assert(fund["owner_account"] == data["owner_account"],
              "_fund->owner_account == op.owner_account",
              "The account is not the owner of the SameT Fund")
    return fund


def samet_fund_create(ctx: ApplyContext, data: dict) -> list:
    """samet_fund_create (64): ``balance`` of ``asset_type`` leaves the
    owner's balance into a new fund; result ``[1, "1.20.N"]``."""
    state = ctx.state
    state.require(data["asset_type"])
    _authorized(state, data["owner_account"], data["asset_type"])
    adjust_balance(state, data["owner_account"], data["asset_type"], -int(data["balance"]))
    fund = state.create(KIND, {"owner_account": data["owner_account"],
                               "asset_type": data["asset_type"],
                               "balance": int(data["balance"]),
                               "fee_rate": int(data["fee_rate"]), "unpaid_amount": 0})
    return [1, fund["id"]]


def samet_fund_delete(ctx: ApplyContext, data: dict) -> list:
    """samet_fund_delete (65): the whole balance back to the owner; result
    the released ``asset``."""
    state = ctx.state
    fund = _own_fund(state, data)
    fc_assert(int(fund["unpaid_amount"]) == 0, "_fund->unpaid_amount == 0",
              "Can only delete a SameT Fund when the unpaid amount is zero")
    released = int(fund["balance"])
    adjust_balance(state, data["owner_account"], fund["asset_type"], released)
    state.remove(fund["id"])
    return [2, asset(released, fund["asset_type"])]


def samet_fund_update(ctx: ApplyContext, data: dict) -> list:
    """samet_fund_update (66): add to or take from the balance
    (``delta_amount``), change ``fee_rate``."""
    state = ctx.state
    fund = _own_fund(state, data)
    delta = data.get("delta_amount")
    if delta is not None:
        fc_assert(fund["asset_type"] == delta["asset_id"],
                  "_fund->asset_type == op.delta_amount->asset_id", "Asset type mismatch")
        fc_assert(int(fund["unpaid_amount"]) == 0, "_fund->unpaid_amount == 0",
                  "Can only update the balance of a SameT Fund when the unpaid amount is zero")
        if amount_of(delta) > 0:
            _authorized(state, data["owner_account"], fund["asset_type"])
        else:
            fc_assert(int(fund["balance"]) > -amount_of(delta),
                      "_fund->balance > -op.delta_amount->amount",
                      "Insufficient balance in the SameT Fund")
    rate = data.get("new_fee_rate")
    if rate is not None:
        fc_assert(int(fund["fee_rate"]) != int(rate), "_fund->fee_rate != *op.new_fee_rate",
                  "New fee rate should not be the same as the original fee rate")
    obj = state.modify(fund["id"])
    if delta is not None:
        adjust_balance(state, data["owner_account"], fund["asset_type"], -amount_of(delta))
        obj["balance"] = int(obj["balance"]) + amount_of(delta)
    if rate is not None:
        obj["fee_rate"] = int(rate)
    fc_assert(int(obj["balance"]) > 0, "_fund->balance > 0",
              "Balance in the SameT Fund should be positive")
    return [0, {}]


def samet_fund_borrow(ctx: ApplyContext, data: dict) -> list:
    """samet_fund_borrow (67): lend ``borrow_amount`` to the borrower, to be
    repaid within this transaction."""
    state = ctx.state
    fund = state.require(data["fund_id"])
    amount = data["borrow_amount"]
    fc_assert(fund["asset_type"] == amount["asset_id"],
              "_fund->asset_type == op.borrow_amount.asset_id", "Asset type mismatch")
    fc_assert(int(fund["balance"]) >= int(fund["unpaid_amount"]) + amount_of(amount),
              "_fund->balance >= _fund->unpaid_amount + op.borrow_amount.amount",
              "Insufficient balance in the SameT Fund thus unable to borrow")
    _authorized(state, data["borrower"], fund["asset_type"])
    obj = state.modify(fund["id"])
    obj["unpaid_amount"] = int(obj["unpaid_amount"]) + amount_of(amount)
    adjust_balance(state, data["borrower"], fund["asset_type"], amount_of(amount))
    return [5, {"impacted_accounts": [fund["owner_account"]]}]


def samet_fund_repay(ctx: ApplyContext, data: dict) -> list:
    """samet_fund_repay (68): ``repay_amount`` back and ``fund_fee`` to the
    fund."""
    state = ctx.state
    fund = state.require(data["fund_id"])
    repay, fee = data["repay_amount"], data["fund_fee"]
    fc_assert(fund["asset_type"] == repay["asset_id"],
              "_fund->asset_type == op.repay_amount.asset_id", "Asset type mismatch")
    _authorized(state, data["account"], fund["asset_type"])
    fc_assert(amount_of(repay) <= int(fund["unpaid_amount"]),
              "op.repay_amount.amount <= _fund->unpaid_amount",
              "Repay amount should not be greater than unpaid amount")
    required = (amount_of(repay) * int(fund["fee_rate"]) + FEE_RATE_DENOM - 1) \
        // FEE_RATE_DENOM
    fc_assert(amount_of(fee) >= required, "fc::uint128_t(op.fund_fee.amount.value) >= "
              "required_fee", f"Insuffient fund fee, requires {required}, offered "
              f"{fee['amount']}")
    adjust_balance(state, data["account"], fund["asset_type"],
                   -(amount_of(repay) + amount_of(fee)))
    obj = state.modify(fund["id"])
    obj["balance"] = int(obj["balance"]) + amount_of(fee)
    obj["unpaid_amount"] = int(obj["unpaid_amount"]) - amount_of(repay)
    return [5, {"impacted_accounts": [fund["owner_account"]]}]


def check_no_unpaid_debt(state) -> None:
    """At the end of a transaction (or an executed proposal): no SameT fund
    may be left with an unpaid amount (graphene ``_apply_transaction``)."""
    for oid in state.ids_of_type(KIND + "."):
        fc_assert(int(state.objects[oid]["unpaid_amount"]) == 0,
                  "samet_fund_idx.empty() || samet_fund_idx.begin()->unpaid_amount == 0",
                  "Unpaid SameT Fund debt detected")
