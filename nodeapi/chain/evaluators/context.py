"""What every evaluator shares: the :class:`ApplyContext` it runs in, fee
checks and booking (:func:`prepare_fee`, :func:`convert_fee`,
:func:`pay_fee`) and balance adjustment (:func:`adjust_balance`).

An evaluator is ``fn(ctx: ApplyContext, data: dict) -> list`` (the graphene
``operation_result``); it checks the operation against the state (raising a
:class:`~nodeapi.errors.ChainError` subclass) and applies it; an operation
whose checks must run before the fee is converted has a
:class:`PhasedEvaluator`.  The chain calls it inside an undo session, so a
failure leaves nothing behind.  The table of evaluators is
:mod:`nodeapi.chain.evaluators.registry`.

Reference: graphene libraries/chain/evaluator.cpp and
include/graphene/chain/evaluator.hpp (``prepare_fee``, ``convert_fee``,
``pay_fee``; the order of the fee's steps is
:func:`nodeapi.chain.evaluators.registry.apply_operation`'s).
"""

from typing import Callable

import attr

from nodeapi.chain.balances import adjust_balance, to_pretty_string
from nodeapi.chain.errors import InsufficientFee, InvalidOperation, fc_assert
from nodeapi.chain.fees import charge_statistics
from nodeapi.protocol.asset import amount_of, asset, core, mul_down
from nodeapi.protocol.config import CORE_ASSET
from nodeapi.protocol.fee_schedule import operation_fee
from nodeapi.chain.state import ObjectStore
from nodeapi.chain.whitelist import is_authorized_asset

VOID = [0, {}]


class ApplyContext:
    """What an evaluator sees: the store, the time and block being built, the
    fee schedule and a sink for virtual operations.

    :ivar state: the :class:`ObjectStore`.
    :ivar now: head block time, seconds (graphene ``head_block_time()``,
        what the rules compare with while a block is applied).
    :ivar block_num: number of the block being applied.
    :ivar block_time: timestamp of the block being applied (graphene
        ``_current_block_time``, the creation time of accounts and
        assets); the head block time for a transaction pushed alone.
    :ivar prefix: public key prefix (``TEST``).
    :ivar virtual_ops: ``[(op, result)]`` generated while applying (fills),
        in the order graphene pushes them (``push_applied_operation``).
    :ivar op_starts: for each operation of the transaction applied so far,
        the length of ``virtual_ops`` when it began
        (:meth:`virtual_ops_by_operation`).
    :ivar core_fee_paid: core value of the fee of the operation being applied.
    :ivar fee_paid: that fee as paid, ``{"amount", "asset_id"}``.
    :ivar fee_payer: the account that pays it (set by :func:`prepare_fee`;
        its balance is debited only after the operation is applied).
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
                 block_summary: dict | None = None, block_time: int | None = None, *,
                 apply_operation: Callable[["ApplyContext", list], list]) -> None:
        self.block_summary = {} if block_summary is None else block_summary
        self.apply_operation = apply_operation
        self.state = state
        self.now = now
        self.block_time = now if block_time is None else block_time
        self.block_num = block_num
        self.prefix = prefix
        self.virtual_ops: list = []
        self.op_starts: list = []
        self.core_fee_paid = 0
        self.fee_paid = core(0)
        #: the account that pays ``fee_paid``
        self.fee_payer: str | None = None
        #: True while a proposal's operations are applied (graphene
        #: ``transaction_evaluation_state::_is_proposed_trx``)
        self.proposed = False
        #: graphene ``transaction_evaluation_state::skip_limit_order_price_check``:
        #: set while a take-profit action updates its linked order
        self.skip_limit_order_price_check = False
        #: nested undo sessions of virtual operations open now (graphene
        #: ``database::_undo_session_nesting_depth``)
        self.nested_sessions = 0

    def open_nested_session(self) -> None:
        """Count one more nested session (graphene
        ``undo_session_nesting_guard``); the caller decrements
        ``nested_sessions`` when it ends.

        :raises InvalidOperation: when twice the number of active witnesses
            are already open."""
        limit = 2 * len(self.state.objects["2.0.0"]["active_witnesses"])
        if self.nested_sessions >= limit:
            raise InvalidOperation("Max undo session nesting depth exceeded!")
        self.nested_sessions += 1

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
        """The current chain parameters: ``parameters`` of the global
        properties 2.0.0 as the state holds them (not a copy), graphene's
        ``get_global_properties().parameters``."""
        return self.state.objects["2.0.0"]["parameters"]


@attr.s(frozen=True, auto_attribs=True)
class PhasedEvaluator:
    """An evaluator in graphene's two phases, for an operation whose checks
    read what :func:`convert_fee` changes (graphene ``evaluator<>::evaluate``
    runs ``do_evaluate`` before ``apply`` converts the fee): ``evaluate(ctx,
    data) -> checked`` makes the checks and changes nothing, ``apply(ctx,
    data, checked) -> operation_result`` makes the changes.
    :func:`nodeapi.chain.evaluators.registry.apply_operation` converts and
    books the fee between them.  An evaluator given as one function runs
    after the fee is converted and booked, which is the same wherever its
    checks read no fee pool, ``accumulated_fees`` or pending fees."""

    evaluate: Callable[["ApplyContext", dict], object]
    apply: Callable[["ApplyContext", dict, object], list]


#: operations whose fee the order keeps as its deferred fee (graphene
#: limit_order_create / limit_order_update evaluators' ``convert_fee`` /
#: ``pay_fee``)
_DEFERRED = (1, 77)


def prepare_fee(ctx: ApplyContext, op: list, payer: str) -> None:
    """Check the operation's fee and record it on ``ctx`` (graphene
    ``generic_evaluator::prepare_fee`` and the fee schedule check of
    ``evaluator<>::evaluate``); nothing in the state changes: the fee leaves
    the payer's balance only after the operation is applied
    (:func:`nodeapi.chain.evaluators.registry.apply_operation`), so each
    evaluator sees the payer's balance as it was before the fee.

    In graphene's order: the payer must be authorized to hold the fee asset
    (:func:`~nodeapi.chain.whitelist.is_authorized_asset`, else
    :class:`InvalidOperation` with ``prepare_fee``'s text); a fee in another
    asset takes its core value (through the ``core_exchange_rate``, rounded
    down) from that asset's ``fee_pool``, which must cover it (else
    :class:`InvalidOperation`, ``prepare_fee``'s assertion: "Fee pool
    balance of '1 TEST' is less than the 2 TEST required to convert 2
    GOLD"); then the core value must meet the schedule
    (:class:`InsufficientFee`, "insufficient fee: Insufficient Fee Paid",
    ``details`` ``{"core_fee_paid", "required"}``).
    Sets ``ctx.core_fee_paid`` (core satoshis), ``ctx.fee_paid``
    (``{"amount", "asset_id"}``) and ``ctx.fee_payer``."""
    fee = op[1]["fee"]
    amount = amount_of(fee)
    state = ctx.state
    fee_asset = state.require(fee["asset_id"])
    account = state.require(payer)
    fc_assert(is_authorized_asset(state, payer, fee_asset),
              "is_authorized_asset( d, *fee_paying_account, *fee_asset )",
              f"Account {payer} '{account['name']}' attempted to pay fee by using asset "
              f"{fee_asset['id']} '{fee_asset['symbol']}', which is unauthorized due to whitelist / "
              "blacklist")
    if fee_asset["id"] == CORE_ASSET:
        paid_core = amount
    else:
        # graphene ``fee * fee_asset.options.core_exchange_rate``
        paid_core = mul_down(amount, fee_asset["id"], fee_asset["options"]["core_exchange_rate"])
        pool = int(state.objects[fee_asset["dynamic_asset_data_id"]]["fee_pool"])
        values = {"b": to_pretty_string(state, pool, CORE_ASSET),
                  "r": to_pretty_string(state, paid_core, CORE_ASSET),
                  "c": to_pretty_string(state, amount, fee_asset["id"])}
        fc_assert(paid_core <= pool, "core_fee_paid <= fee_asset_dyn_data->fee_pool",
                  f"Fee pool balance of '{values['b']}' is less than the {values['r']} "
                  f"required to convert {values['c']}", values,
                  "Fee pool balance of '${b}' is less than the ${r} required to convert ${c}")
    required = operation_fee(op, ctx.parameters["current_fees"], ctx.prefix)
    if paid_core < required:
        # GRAPHENE_ASSERT( ..., insufficient_fee, "Insufficient Fee Paid", ...):
        # the exception's name, then the text; the amounts ride in its data
        error = InsufficientFee("insufficient fee: Insufficient Fee Paid")
        error.details = {"core_fee_paid": paid_core, "required": required}
        raise error
    ctx.core_fee_paid = paid_core
    ctx.fee_paid = asset(amount, fee_asset["id"])
    ctx.fee_payer = payer


def convert_fee(ctx: ApplyContext, op: list) -> None:
    """Convert the fee :func:`prepare_fee` recorded (graphene
    ``generic_evaluator::convert_fee``): a fee in another asset than core
    goes to that asset's ``accumulated_fees`` and its core value leaves the
    asset's ``fee_pool``.  limit_order_create (1) and limit_order_update
    (77) take only the core value from the pool: the order keeps the fee as
    its deferred fee (market_evaluator.cpp, after HF core-604)."""
    fee = ctx.fee_paid
    if fee["asset_id"] == CORE_ASSET:
        return
    state = ctx.state
    dyn = state.modify(state.objects[fee["asset_id"]]["dynamic_asset_data_id"])
    dyn["fee_pool"] -= ctx.core_fee_paid
    if op[0] not in _DEFERRED:
        dyn["accumulated_fees"] += fee["amount"]


def pay_fee(ctx: ApplyContext, op: list) -> None:
    """Book the core value of the fee on the payer's statistics (graphene
    ``generic_evaluator::pay_fee``: ``pending_fees`` /
    ``pending_vested_fees``, :func:`~nodeapi.chain.fees.charge_statistics`),
    never on 2.3.0 directly.  Per-operation overrides (graphene):
    limit_order_create (1) and limit_order_update (77) book nothing, the
    order carries the fee as ``deferred_fee`` / ``deferred_paid_fee``
    (after HF 445/604); asset_create (10) books the upper half, the lower
    half seeds the new asset's fee pool (asset_evaluator.cpp, after HF
    core-429)."""
    if op[0] in _DEFERRED:
        return
    paid_core = ctx.core_fee_paid
    booked = paid_core - paid_core // 2 if op[0] == 10 else paid_core
    charge_statistics(ctx.state, ctx.fee_payer, booked)


#: asset_object's members in FC_REFLECT order (bitshares-core
#: chain/asset_object.hpp): the optional ones are set after creation, and
#: ``creation_block_num`` / ``creation_time`` stay last.
ASSET_MEMBERS = ("id", "symbol", "precision", "issuer", "options", "dynamic_asset_data_id",
                 "bitasset_data_id", "buyback_account", "for_liquidity_pool",
                 "creation_block_num", "creation_time")


def set_asset_member(state: ObjectStore, asset_id: str, key: str, value) -> dict:
    """Set the optional member ``key`` (``buyback_account``,
    ``for_liquidity_pool``) of asset ``asset_id`` and keep the members in
    :data:`ASSET_MEMBERS` order, as graphene's ``to_variant`` writes them;
    returns the modified asset."""
    asset = state.modify(asset_id)
    asset[key] = value
    for later in ASSET_MEMBERS[ASSET_MEMBERS.index(key) + 1:]:
        if later in asset:
            asset[later] = asset.pop(later)
    return asset
