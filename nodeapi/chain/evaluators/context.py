"""What every evaluator shares: the :class:`ApplyContext` it runs in, fee
payment (:func:`pay_fee`) and balance adjustment (:func:`adjust_balance`).

An evaluator is ``fn(ctx: ApplyContext, data: dict) -> list`` (the graphene
``operation_result``); it checks the operation against the state (raising a
:class:`~nodeapi.errors.ChainError` subclass) and applies it.  The chain
calls it inside an undo session, so a failure leaves nothing behind.  The
table of evaluators is :mod:`nodeapi.chain.evaluators.registry`.

Reference: graphene libraries/chain/evaluator.cpp (fee payment).
"""

from typing import Callable

from nodeapi.chain.balances import adjust_balance
from nodeapi.chain.errors import InsufficientFee
from nodeapi.chain.fees import charge_statistics, core_fee, fee_in_core
from nodeapi.chain.state import ObjectStore

VOID = [0, {}]


class ApplyContext:
    """What an evaluator sees: the store, the time and block being built, the
    fee schedule and a sink for virtual operations.

    :ivar state: the :class:`ObjectStore`.
    :ivar now: head/pending block time, seconds.
    :ivar block_num: number of the block being applied.
    :ivar prefix: public key prefix (``TEST``).
    :ivar virtual_ops: ``[(op, result)]`` generated while applying (fills),
        in the order graphene pushes them (``push_applied_operation``).
    :ivar op_starts: for each operation of the transaction applied so far,
        the length of ``virtual_ops`` when it began
        (:meth:`virtual_ops_by_operation`).
    :ivar core_fee_paid: core value of the fee of the operation being applied.
    :ivar fee_paid: that fee as paid, ``{"amount", "asset_id"}``.
    :ivar block_summary: the chain's block summary, ``{slot: block id}``
        (slot = block number & 0xffff; graphene ``block_summary_object``),
        read by the assert evaluator's block_id predicate.
    :ivar apply_operation: ``fn(ctx, op) -> operation_result``: pays an
        operation's fee and applies it
        (:func:`nodeapi.chain.evaluators.registry.apply_operation`, which the
        chain passes); the proposal evaluator applies proposed operations
        with it, so no evaluator imports the registry.
    """

    def __init__(self, state: ObjectStore, now: int, block_num: int, prefix: str,
                 block_summary: dict | None = None, *,
                 apply_operation: Callable[["ApplyContext", list], list]) -> None:
        self.block_summary = {} if block_summary is None else block_summary
        self.apply_operation = apply_operation
        self.state = state
        self.now = now
        self.block_num = block_num
        self.prefix = prefix
        self.virtual_ops: list = []
        self.op_starts: list = []
        self.core_fee_paid = 0
        self.fee_paid = {"amount": 0, "asset_id": "1.3.0"}
        #: True while a proposal's operations are applied (graphene
        #: ``transaction_evaluation_state::_is_proposed_trx``)
        self.proposed = False

    def virtual_ops_by_operation(self) -> list:
        """The virtual operations each operation of the transaction raised:
        one list of ``(op, result)`` per operation, in order (graphene
        pushes a virtual operation while its parent is evaluated, so it
        takes its parent's ``op_in_trx``: db_block.cpp
        ``_apply_transaction`` / ``push_applied_operation``)."""
        ends = self.op_starts[1:] + [len(self.virtual_ops)]
        return [self.virtual_ops[a:b] for a, b in zip(self.op_starts, ends)]

    @property
    def parameters(self) -> dict:
        return self.state.objects["2.0.0"]["parameters"]


#: operations whose fee the order keeps as its deferred fee (graphene
#: limit_order_create / limit_order_update evaluators' ``pay_fee``)
_DEFERRED = (1, 77)


def pay_fee(ctx: ApplyContext, op: list, payer: str) -> None:
    """Check, deduct and book the operation's fee (graphene
    ``evaluator::prepare_fee`` / ``convert_fee`` / ``pay_fee``).

    Raises :class:`InsufficientFee` below the schedule or when the fee
    asset's pool cannot cover the conversion, :class:`InsufficientBalance`
    when the payer cannot pay.  A fee in another asset goes to that asset's
    ``accumulated_fees`` and takes its core value (``core_fee_paid``, through
    the core_exchange_rate, rounded down) from its ``fee_pool``; the core
    value is booked on the payer's statistics (``pending_fees`` /
    ``pending_vested_fees``, :func:`~nodeapi.chain.fees.charge_statistics`),
    never on 2.3.0 directly.  Per-operation overrides (graphene):
    limit_order_create (1) and limit_order_update (77) book nothing and
    leave ``accumulated_fees`` alone - the order carries the fee as ``deferred_fee`` /
    ``deferred_paid_fee`` (market_evaluator.cpp, after HF 445/604);
    asset_create (10) books the upper half, the lower half seeds the new
    asset's fee pool (asset_evaluator.cpp, after HF core-429)."""
    fee = op[1]["fee"]
    amount = int(fee["amount"])
    state = ctx.state
    asset = state.require(fee["asset_id"])
    required = core_fee(op, ctx.parameters["current_fees"], ctx.prefix)
    paid_core = fee_in_core(amount, asset)
    if paid_core < required:
        raise InsufficientFee(
            f"Insufficient fee: paid {paid_core} core satoshis, operation type {op[0]} "
            f"requires {required}")
    if asset["id"] != "1.3.0" and paid_core > state.objects[asset["dynamic_asset_data_id"]][
            "fee_pool"]:
        raise InsufficientFee(f"Fee pool of {asset['symbol']} is too small to convert "
                              f"{amount} into {paid_core} core satoshis")
    adjust_balance(state, payer, asset["id"], -amount)
    ctx.core_fee_paid = paid_core
    ctx.fee_paid = {"amount": amount, "asset_id": asset["id"]}
    if asset["id"] != "1.3.0" and amount:
        dyn = state.modify(asset["dynamic_asset_data_id"])
        dyn["fee_pool"] -= paid_core
        if op[0] not in _DEFERRED:
            dyn["accumulated_fees"] += amount
    if op[0] in _DEFERRED:
        return
    booked = paid_core - paid_core // 2 if op[0] == 10 else paid_core
    charge_statistics(state, payer, booked)
