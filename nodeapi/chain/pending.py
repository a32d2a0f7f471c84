"""The pending transactions: accepted since the head block and applied in
the chain's pending undo session, as graphene keeps ``_pending_tx`` under
its ``_pending_tx_session`` (libraries/chain/db_block.cpp
``push_transaction``, ``_push_transaction``, ``validate_transaction``, and
the re-application of popped transactions after ``push_block`` /
``generate_block``).

The :class:`~nodeapi.chain.chain.Chain` owns one :class:`PendingTransactions`
and passes it the state on each call (a checkpoint restore replaces the
state): a block is applied with the pending transactions taken away
(:meth:`PendingTransactions.take`, which rolls their session back) and put
back after it (:meth:`PendingTransactions.restore`, which applies each again
and drops those no longer valid).
"""

from twisted.logger import Logger

from nodeapi.chain.evaluators.context import ApplyContext
from nodeapi.chain.remote import NotHereYet
from nodeapi.chain.transactions import REJECTIONS, apply_transaction, new_context
from nodeapi.chain.validation import received_transaction


class PendingTransactions:
    """The pending transactions of one chain (module docstring).

    :param chain_id: hex chain id (signatures).
    :param prefix: the public key prefix.
    :param summary: the chain's block summary ``{slot: block id}`` (TaPoS).
    :param recent: the chain's transactions in blocks ``{trx id:
        expiration}`` (duplicates).
    :ivar entries: ``[(trx, packed bytes, trx id)]`` in arrival order.
    :ivar observers: ``fn(trx dict)`` for each newly accepted transaction.
    :ivar checks: ``fn(trx dict)`` run on each pushed transaction (as
        held) before it is applied, raising a
        :class:`~nodeapi.errors.ChainError` to refuse it (the devnet's
        rule that an accepted transaction fits the next block).
    :ivar rejections: ``fn(trx dict, error)`` for each pushed transaction
        refused (the devnet logs them).
    :ivar impersonated: account ids whose authority counts as given
        without signatures (:attr:`Chain.impersonated`; empty but on a
        devnet).
    """

    log = Logger()

    def __init__(self, chain_id: str, prefix: str, summary: dict, recent: dict) -> None:
        self.chain_id = chain_id
        self.prefix = prefix
        self.summary = summary
        self.recent = recent
        self.entries: list = []
        self.ids: set = set()
        self.observers: list = []
        self.checks: list = []
        self.impersonated: set = set()
        self.rejections: list = []

    @property
    def transactions(self) -> list:
        """The queued transactions (wire JSON) in arrival order."""
        return [entry[0] for entry in self.entries]

    def _apply(self, trx: dict, ctx: ApplyContext) -> tuple:
        """:func:`~nodeapi.chain.transactions.apply_transaction` with
        signatures checked, a duplicate being one in a block or pending;
        returns ``(packed, trx_id, expiration, results)``."""
        return apply_transaction(
            ctx, trx, True, self.chain_id, self.summary,
            lambda trx_id: trx_id in self.recent or trx_id in self.ids,
            approved=self.impersonated)

    def received(self, state, trx: dict) -> dict:
        """``trx`` as the chain holds it
        (:func:`~nodeapi.chain.validation.received_transaction`)."""
        return received_transaction(trx, self.prefix, state.objects["2.0.0"]["parameters"])

    def push(self, state, trx: dict) -> dict:
        """Read ``trx`` (wire JSON) as the chain holds it, apply it to the
        pending state and queue it; the observers see it.  Returns the
        processed transaction (with ``operation_results``); raises what
        :attr:`checks` or applying raise (:meth:`Chain.push_transaction`),
        the :attr:`rejections` observers told first."""
        try:
            trx = self.received(state, trx)
            for check in list(self.checks):
                check(trx)
            results = self.queue(state, trx)
        except Exception as exc:
            for fn in list(self.rejections):
                fn(trx, exc)
            raise
        for fn in list(self.observers):
            fn(trx)
        return dict(trx, operation_results=results)

    def validate(self, state, trx: dict) -> dict:
        """Apply ``trx`` as :meth:`push` would, then undo it (graphene
        ``database::validate_transaction``); returns the processed
        transaction, raises the same errors."""
        trx = self.received(state, trx)
        ctx = new_context(state, self.prefix)
        changed = set(state.changed)
        state.begin()
        try:
            results = self._apply(trx, ctx)[3]
        finally:
            state.rollback()
            state.changed = changed
        return dict(trx, operation_results=results)

    def queue(self, state, trx: dict) -> list:
        """Apply ``trx`` (as held) in the pending session and queue it;
        returns its operation results."""
        ctx = new_context(state, self.prefix, self.summary)
        packed, trx_id, _exp, results = self._apply(trx, ctx)
        self.entries.append((trx, packed, trx_id))
        self.ids.add(trx_id)
        return results

    def take(self, state) -> list:
        """Roll back the pending session of ``state``; returns the pending
        entries (for :meth:`restore`)."""
        entries, self.entries = self.entries, []
        self.ids = set()
        state.rollback()
        state.reset_changed()
        return entries

    def restore(self, state, entries: list) -> None:
        """Reopen the pending session of ``state`` and apply ``entries``
        again, dropping (and logging) the ones no longer valid (graphene's
        ``_popped_tx`` / pending re-application)."""
        state.begin()
        for trx, _packed, trx_id in entries:
            try:
                self.queue(state, trx)
            except REJECTIONS as exc:
                self.log.debug("Dropped pending transaction {trx_id}: {error}", trx_id=trx_id,
                               error=str(exc))
            except NotHereYet as missing:  # a lazy fork: nothing may wait here
                self.log.warn("Dropped pending transaction {trx_id}: it needs {want} of the "
                              "live chain, not loaded yet", trx_id=trx_id, want=missing.want)
            except Exception:
                self.log.failure("Dropped pending transaction {trx_id}: unexpected error",
                                 trx_id=trx_id)
