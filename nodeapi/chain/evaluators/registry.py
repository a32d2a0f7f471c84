"""The table of evaluators: operation type number -> evaluator, built here
and nowhere else.

Each evaluator lives in the module of its operation family, one module per
bitshares-core evaluator source file (libraries/chain/<family>_evaluator.cpp);
an operation added later goes to its family's module and gets one line in
:data:`EVALUATORS`.  The homes of all 78 bitshares-core 7.x operation types
(libraries/protocol/include/graphene/protocol/operations.hpp):

========================  =====================================================
module                    operation types
========================  =====================================================
``transfer``              0 transfer, 38 override_transfer
``market``                1 limit_order_create, 2 limit_order_cancel,
                          4 fill_order (virtual)
``limit_order_update``    77 limit_order_update
``call_order``            3 call_order_update, 45 bid_collateral,
                          46 execute_bid (virtual)
``account``               5 account_create, 6 account_update,
                          7 account_whitelist, 8 account_upgrade,
                          9 account_transfer
``asset``                 10 asset_create, 11 asset_update,
                          14 asset_issue, 15 asset_reserve,
                          16 asset_fund_fee_pool, 43 asset_claim_fees,
                          44 fba_distribute (virtual), 47 asset_claim_pool,
                          48 asset_update_issuer
``bitasset``              12 asset_update_bitasset, 13 asset_update_feed_producers,
                          17 asset_settle, 18 asset_global_settle,
                          19 asset_publish_feed, 42 asset_settle_cancel
                          (virtual)
``governance``            20 witness_create, 21 witness_update,
                          29 committee_member_create, 30 committee_member_update,
                          31 committee_member_update_global_parameters (graphene
                          witness_ and committee_member_evaluator.cpp; the
                          account vote checks)
``proposal``              22 proposal_create, 23 proposal_update,
                          24 proposal_delete
``withdraw_permission``   25-28 withdraw_permission_create/update/claim/delete
``vesting_balance``       32 vesting_balance_create, 33 vesting_balance_withdraw
``worker``                34 worker_create
``custom``                35 custom
``assertion``             36 assert
``balance``               37 balance_claim
``confidential``          39 transfer_to_blind, 40 blind_transfer,
                          41 transfer_from_blind
``htlc``                  49 htlc_create, 50 htlc_redeem, 51 htlc_redeemed
                          (virtual), 52 htlc_extend, 53 htlc_refund (virtual)
``custom_authority``      54-56 custom_authority_create/update/delete
``ticket``                57 ticket_create, 58 ticket_update
``liquidity_pool``        59-63 liquidity_pool_create/delete/deposit/withdraw/
                          exchange, 75 liquidity_pool_update
``samet_fund``            64-68 samet_fund_create/delete/update/borrow/repay
``credit_offer``          69-73 credit_offer_create/delete/update/accept,
                          credit_deal_repay, 74 credit_deal_expired (virtual),
                          76 credit_deal_update
========================  =====================================================

The chain refuses a transaction carrying a type that is not in the table
before anything else is checked (:func:`check_applied`).
"""

from nodeapi.chain.errors import UnsupportedOperation
from nodeapi.chain.evaluators import (
    account, asset, assertion, balance, bitasset, call_order, credit_offer, custom,
    custom_authority, governance, htlc, limit_order_update, liquidity_pool, market, proposal, samet_fund, ticket, transfer,
    vesting_balance, withdraw_permission, worker)
from nodeapi.chain.balances import adjust_balance
from nodeapi.chain.evaluators.context import (
    ApplyContext, PhasedEvaluator, convert_fee, pay_fee, prepare_fee)
from nodeapi.protocol.errors import UnknownOperation
from nodeapi.protocol.impacted import fee_payer
from nodeapi.errors import ChainError
from nodeapi.protocol.operations import OPERATIONS, VIRTUAL_OPERATIONS, operation_type

#: operation type number -> evaluator ``fn(ctx, data) -> operation_result``
#: or :class:`~nodeapi.chain.evaluators.context.PhasedEvaluator`
#: (:mod:`nodeapi.chain.evaluators.context`).
EVALUATORS = {
    0: transfer.transfer,
    1: market.limit_order_create,
    2: market.limit_order_cancel,
    3: call_order.call_order_update,
    5: account.account_create,
    6: account.account_update,
    7: account.account_whitelist,
    8: account.account_upgrade,
    10: asset.asset_create,
    11: asset.asset_update,
    12: bitasset.asset_update_bitasset,
    13: bitasset.asset_update_feed_producers,
    14: asset.asset_issue,
    15: asset.asset_reserve,
    16: asset.asset_fund_fee_pool,
    17: bitasset.asset_settle,
    18: bitasset.asset_global_settle,
    19: bitasset.asset_publish_feed,
    20: governance.witness_create,
    21: governance.witness_update,
    22: proposal.proposal_create,
    23: proposal.proposal_update,
    24: proposal.proposal_delete,
    25: withdraw_permission.withdraw_permission_create,
    26: withdraw_permission.withdraw_permission_update,
    27: withdraw_permission.withdraw_permission_claim,
    28: withdraw_permission.withdraw_permission_delete,
    29: governance.committee_member_create,
    30: governance.committee_member_update,
    31: proposal.committee_member_update_global_parameters,
    32: vesting_balance.vesting_balance_create,
    33: vesting_balance.vesting_balance_withdraw,
    34: worker.worker_create,
    35: custom.custom,
    36: assertion.assert_operation,
    37: balance.balance_claim,
    38: transfer.override_transfer,
    43: asset.asset_claim_fees,
    45: call_order.bid_collateral,
    47: asset.asset_claim_pool,
    48: asset.asset_update_issuer,
    49: htlc.htlc_create,
    50: htlc.htlc_redeem,
    52: htlc.htlc_extend,
    54: custom_authority.custom_authority_create,
    55: custom_authority.custom_authority_update,
    56: custom_authority.custom_authority_delete,
    57: ticket.ticket_create,
    58: ticket.ticket_update,
    59: liquidity_pool.liquidity_pool_create,
    60: liquidity_pool.liquidity_pool_delete,
    61: liquidity_pool.liquidity_pool_deposit,
    62: liquidity_pool.liquidity_pool_withdraw,
    63: liquidity_pool.liquidity_pool_exchange,
    64: samet_fund.samet_fund_create,
    65: samet_fund.samet_fund_delete,
    66: samet_fund.samet_fund_update,
    67: samet_fund.samet_fund_borrow,
    68: samet_fund.samet_fund_repay,
    69: credit_offer.credit_offer_create,
    70: credit_offer.credit_offer_delete,
    71: credit_offer.credit_offer_update,
    72: credit_offer.credit_offer_accept,
    73: credit_offer.credit_deal_repay,
    75: liquidity_pool.liquidity_pool_update,
    76: credit_offer.credit_deal_update,
    77: limit_order_update.limit_order_update,
}


def not_applied_message(op_type: int) -> str:
    """The refusal text for an operation type with no evaluator, naming the
    operation when the protocol knows its name: ``"Operation type 22
    (proposal_create) is not applied by this chain"``."""
    known = OPERATIONS.get(op_type)
    name = f" ({known[0]})" if known else ""
    why = BLIND_REFUSAL if op_type in BLIND_OPERATIONS else \
        ACCOUNT_TRANSFER_REFUSAL if op_type == 9 else ""
    return f"Operation type {op_type}{name} is not applied by this chain{why}"


#: account_transfer (9) is defined by the protocol but bitshares-core
#: registers no evaluator for it (libraries/chain/db_init.cpp): refused there too
ACCOUNT_TRANSFER_REFUSAL = (": bitshares-core defines account_transfer but has no evaluator "
                            "for it, so no graphene chain applies it")

#: confidential (blind) transfers: refused for want of a verifier
BLIND_OPERATIONS = frozenset((39, 40, 41))
BLIND_REFUSAL = (": confidential transfers need Pedersen commitments and range proofs "
                 "(libsecp256k1-zkp), which no maintained Python library provides")


def evaluator_for(op_type):
    """The evaluator of operation type ``op_type`` (the int tag).

    :raises UnsupportedOperation: the chain does not apply that type
        (:func:`not_applied_message`)."""
    evaluator = EVALUATORS.get(op_type)
    if evaluator is None:
        raise UnsupportedOperation(not_applied_message(op_type))
    return evaluator


def apply_operations(ctx: ApplyContext, ops: list) -> list:
    """Apply a transaction's operations in order; the results.  None may
    leave a SameT fund debt unpaid (graphene ``_apply_transaction``).
    Where each operation's virtual operations begin is recorded in
    ``ctx.op_starts`` (:meth:`ApplyContext.virtual_ops_by_operation`).
    A :class:`~nodeapi.errors.ChainError` of one of several operations
    carries its index (0-based) in its ``details`` as ``op_index`` (the
    error's data: graphene's stack names the failing ``op``)."""
    results = []
    for index, op in enumerate(ops):
        ctx.op_starts.append(len(ctx.virtual_ops))
        try:
            results.append(apply_operation(ctx, op))
        except ChainError as exc:
            if len(ops) > 1:  # which one failed (the text unchanged)
                exc.details = dict(exc.details or {}, op_index=index)
            raise
    samet_fund.check_no_unpaid_debt(ctx.state)
    return results


def apply_operation(ctx: ApplyContext, op: list):
    """Apply ``op`` with its fee in graphene's order (evaluator.hpp
    ``generic_evaluator::start_evaluate`` -> ``evaluator<>::evaluate`` /
    ``apply``); returns its ``operation_result``.

    1. :func:`~nodeapi.chain.evaluators.context.prepare_fee`: the fee is
       checked (authorization, fee pool, schedule) and nothing changes;
    2. a :class:`~nodeapi.chain.evaluators.context.PhasedEvaluator` makes
       its checks (``do_evaluate``);
    3. :func:`~nodeapi.chain.evaluators.context.convert_fee` and
       :func:`~nodeapi.chain.evaluators.context.pay_fee`;
    4. the evaluator (its ``apply`` phase: ``do_apply``);
    5. only then does the fee leave the payer's balance
       (``db_adjust_balance(fee_payer, -fee_from_account)``), so an
       operation that credits its payer can pay its own fee; when the
       balance is short the whole operation fails with
       :class:`~nodeapi.chain.errors.InsufficientBalance` (db_balance.cpp
       ``adjust_balance``'s "Insufficient Balance" assertion).

    Raises what the fee checks or the evaluator raise; the caller's undo
    session drops whatever the operation changed."""
    evaluator = evaluator_for(op[0])
    data = op[1]
    prepare_fee(ctx, op, fee_payer(op))
    payer, fee = ctx.fee_payer, ctx.fee_paid
    if isinstance(evaluator, PhasedEvaluator):
        checked = evaluator.evaluate(ctx, data)
        convert_fee(ctx, op)
        pay_fee(ctx, op)
        result = evaluator.apply(ctx, data, checked)
    else:
        convert_fee(ctx, op)
        pay_fee(ctx, op)
        result = evaluator(ctx, data)
    adjust_balance(ctx.state, payer, fee["asset_id"], -fee["amount"])
    return result


def check_applied(operations) -> None:
    """Refuse ``operations`` (a transaction's wire JSON list) when one names
    an operation type of bitshares-core (its tag read as
    :func:`nodeapi.protocol.operations.operation_type` reads it) that the
    chain does not apply, so the client learns which operation it is before
    anything else is checked.  A tag that names no operation and anything
    malformed are left to serialization, which names the problem; a
    virtual operation to its ``validate()`` (refused there as on the
    reference).

    :raises UnsupportedOperation: naming the first such operation."""
    if not isinstance(operations, list):
        return
    for op in operations:
        if not (isinstance(op, list) and op):
            continue
        try:
            number = operation_type(op[0])
        except UnknownOperation:
            continue
        if number not in EVALUATORS and number not in VIRTUAL_OPERATIONS:
            # a virtual operation is refused by its validate(), as the
            # reference refuses it (transaction::validate)
            raise UnsupportedOperation(not_applied_message(number))
