"""Applying one transaction to the chain state, shared by the pending
transactions (:class:`~nodeapi.chain.chain.Chain`) and block application
(:class:`~nodeapi.chain.blocks.BlockApplier`).

Graphene reference: libraries/chain/db_block.cpp (``_apply_transaction``:
the checks of :func:`~nodeapi.chain.validation.check_transaction`, then
each operation's evaluator in a nested undo session).
"""

from nodeapi.chain.evaluators.context import ApplyContext
from nodeapi.chain.evaluators.registry import apply_operation, apply_operations
from nodeapi.chain.state import ObjectStore
from nodeapi.chain.validation import check_transaction
from nodeapi.errors import ChainError, ProtocolError

#: The errors that reject a transaction (validation and evaluator rules,
#: malformed wire data); a pending transaction failing with one of them is
#: dropped quietly, any other exception is a bug and logged with its traceback.
REJECTIONS = (ChainError, ProtocolError)


def new_context(state: ObjectStore, prefix: str, summary: dict | None = None,
                block_time: int | None = None) -> ApplyContext:
    """The :class:`ApplyContext` of the block after the head of ``state``
    (its time is the head block's, as graphene's pending state;
    ``block_time``, seconds, the timestamp of the block being applied when
    known: graphene's ``_current_block_time``)."""
    dgp = state.objects["2.1.0"]
    return ApplyContext(state, dgp["time"], dgp["head_block_number"] + 1, prefix,
                        summary, block_time, apply_operation=apply_operation)


def apply_transaction(ctx: ApplyContext, trx: dict, check_sigs: bool, chain_id: str,
                      summary: dict, is_known, packed: bytes | None = None,
                      approved=(), replay: bool = False) -> tuple:
    """Check ``trx`` (:func:`~nodeapi.chain.validation.check_transaction`
    at ``ctx.now``, TaPoS against ``summary``, ``is_known(trx_id)`` for
    duplicates; ``packed``: its bytes when already made; ``approved``:
    accounts whose authority counts as given, a devnet's impersonated
    ones; ``replay``: a transaction of the node's own block log, whose
    sizes and TaPoS are not checked again) and apply its operations in a nested session of
    ``ctx.state`` (graphene ``_apply_transaction``); returns ``(packed,
    trx_id, expiration, operation_results)``.  On failure the session is
    rolled back and the error re-raised (a ChainError, a ProtocolError)."""
    state = ctx.state
    state.begin()
    try:
        packed, trx_id, exp = check_transaction(trx, ctx.now, state, chain_id, ctx.prefix,
                                                summary, is_known, check_sigs, packed,
                                                approved, replay)
        results = apply_operations(ctx, trx["operations"])
    except Exception:
        state.rollback()
        raise
    state.commit()
    return packed, trx_id, exp, results
