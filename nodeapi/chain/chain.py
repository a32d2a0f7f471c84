"""The Chain: genesis state, pending transactions, block production,
validation of peer blocks, replay, and notification of consumers.

Contract: docs/DESIGN.rst "The Chain contract".  Graphene reference:
libraries/chain/db_block.cpp (``push_transaction``, ``_apply_transaction``,
``generate_block``, ``push_block``).  The transaction acceptance checks are
in :mod:`nodeapi.chain.validation`; the witness schedule, slot arithmetic and
the per-block update of the global objects in :mod:`nodeapi.chain.schedule`;
the chunked replay driver in :mod:`nodeapi.chain.replay`; applying one
transaction in :mod:`nodeapi.chain.transactions`; the pending transactions
in :mod:`nodeapi.chain.pending` (:attr:`Chain.pending`); block production,
application and logging in :mod:`nodeapi.chain.blocks` (the chain's
:class:`~nodeapi.chain.blocks.BlockApplier`).

State layering: ``chain.state`` always shows the head state plus the
pending transactions (one undo session is open for them, like graphene's
``_pending_tx_session``).  Each transaction is applied in its own nested
session and rolled back on failure, so a rejected transaction changes nothing.

Operations: the table of :mod:`nodeapi.chain.evaluators.registry` (a type
not in it raises ``UnsupportedOperation``).  Maintenance
(:mod:`nodeapi.chain.maintenance`) and the per-block upkeep
(:mod:`nodeapi.chain.schedule`) run inside the block's application.

Read helpers for the API sets are on :class:`~nodeapi.chain.state.ObjectStore`
(``chain.state``); :meth:`Chain.changed_objects_of_last_block` gives the ids
changed by the last applied block.
"""

import time

import attr
from twisted.logger import Logger

from nodeapi.applied import AppliedBlock
from nodeapi.chain import schedule
from nodeapi.chain.blocks import BlockApplier
from nodeapi.chain.debug_updates import apply_debug_update
from nodeapi.chain.errors import ChainError, InvalidBlock, UnlinkableBlock
from nodeapi.chain.forkdb import ForkDatabase
from nodeapi.chain.genesis import DEFAULT_STATISTICS_TYPE, init_genesis
from nodeapi.chain.numbering import OperationNumbering
from nodeapi.chain.pending import PendingTransactions
from nodeapi.chain.replay import replay_blocks
from nodeapi.chain.state import ObjectStore
from nodeapi.errors import ProtocolError
from nodeapi.protocol.block import block_id as compute_block_id
from nodeapi.protocol.block import block_num_of, serialize_block
from nodeapi.protocol.fee_schedule import required_fees
from nodeapi.protocol.operations import canonical_operation
from nodeapi.protocol.config import CORE_ASSET
from nodeapi.protocol.transaction import transaction_id


@attr.s(slots=True, frozen=True, auto_attribs=True)
class ForkResult:
    """What :meth:`Chain.push_network_block` did.

    :ivar applied: the :class:`~nodeapi.applied.AppliedBlock` of each block
        applied, in order (one for a block on the head; the branch after a
        fork switch).
    :ivar popped: the blocks popped for a fork switch, head first.
    :ivar kept: the block was kept off the main branch (or known already):
        nothing applied.
    """

    applied: list
    popped: list
    kept: bool

    @property
    def switched(self) -> bool:
        """Whether the chain switched forks."""
        return bool(self.popped)


def _popped_transactions(applied, prefix: str) -> list:
    """A popped block's transactions as pending entries ``(trx, None,
    id)`` (graphene ``_popped_tx``): signed transactions without
    ``operation_results``."""
    entries = []
    for trx in applied.block["transactions"]:
        signed = {k: v for k, v in trx.items() if k != "operation_results"}
        entries.append((signed, None, transaction_id(signed, prefix)))
    return entries


class WallClock:
    """The clock of a :class:`Chain` built without one (tests, benchmarks):
    ``seconds()`` is ``time.time()``.  A node passes its reactor."""

    @staticmethod
    def seconds() -> float:
        """Local wall-clock seconds since the epoch (float)."""
        return time.time()


class Chain:
    """A graphene chain in memory over a block log (see module docstring;
    block production and application are its
    :class:`~nodeapi.chain.blocks.BlockApplier`, :attr:`blocks`).

    :param genesis: the loaded genesis (:mod:`nodeapi.chain.genesis`).
    :param block_log: the block log (``append``, ``read``, ``blocks``,
        ``head_num``).
    :param clock: an ``IReactorTime`` (the node's reactor): local wall time
        for peer blocks and replay progress; :class:`WallClock` when None.

    :ivar pending: the
        :class:`~nodeapi.chain.pending.PendingTransactions` (under one undo
        session of :attr:`state`).
    :ivar blocks: the :class:`~nodeapi.chain.blocks.BlockApplier` that
        produces and applies the blocks, over :attr:`state` and the chain's
        bookkeeping.
    :ivar replay_target: while :meth:`replay` runs, the block number it
        replays to (the status page's progress); None otherwise.
    """

    log = Logger()
    replay_target = None

    def __init__(self, genesis, block_log, clock=None,
                 statistics_type: int = DEFAULT_STATISTICS_TYPE) -> None:
        """``statistics_type``: the type (in space 2) of account statistics
        objects, 7 (the specification) or 6 (graphene); the option
        ``account-statistics-type``.  Raises ValueError for another value.
        Nothing of it is in the block log: a replay with another type
        numbers the same statistics the other way."""
        self.genesis = genesis
        self.statistics_type = statistics_type
        self.chain_id = genesis.chain_id
        self.address_prefix = genesis.address_prefix
        self.block_log = block_log
        self.clock = clock if clock is not None else WallClock()
        self.state = init_genesis(genesis, statistics_type)
        self._summary = {0: "0" * 40}  # ref_block_num -> block id (block_summary)
        self._recent = {}  # trx id -> expiration (graphene transaction_index)
        self._irreversible_follows_head = False
        #: account ids whose active and owner authorities count as given
        #: without signatures in pushed transactions and produced blocks: a
        #: devnet's impersonated accounts (anvil_impersonateAccount); empty
        #: on any other node.  Changed in place (shared with the pending
        #: transactions and the block applier).
        self.impersonated: set = set()
        self.pending = PendingTransactions(self.chain_id, self.address_prefix, self._summary,
                                           self._recent)
        self.pending.impersonated = self.impersonated
        # 1.11.M and 2.9.N counters; the per-account 2.9 figures live in the
        # statistics objects (nodeapi.chain.numbering)
        self._numbering = OperationNumbering(
            lambda account: self.state.modify(self.state.objects[account]["statistics"]))
        self._consumers: list = []
        self._block_observers: list = []
        self._change_observers: list = []
        self._pop_observers: list = []
        self.blocks = self._block_applier()
        #: blocks off the main branch (:meth:`push_network_block`)
        self.forks = ForkDatabase()
        self.state.begin()

    def _block_applier(self) -> BlockApplier:
        applier = BlockApplier(self.state, self.genesis, self.block_log, self._numbering,
                               self._summary, self._recent)
        applier.irreversible_follows_head = self._irreversible_follows_head
        applier.impersonated = self.impersonated
        return applier

    @property
    def irreversible_follows_head(self) -> bool:
        """Whether the last irreversible block follows the head: the
        dynamic global properties' ``last_irreversible_block_num`` is the
        block before the head (a devnet, :mod:`nodeapi.devnet`: one
        producer, no fork to undo; one behind, as python-bitshares reads
        the header of the block after it for its TaPoS); otherwise
        graphene's rule (:mod:`nodeapi.chain.schedule`)."""
        return self._irreversible_follows_head

    @irreversible_follows_head.setter
    def irreversible_follows_head(self, value: bool) -> None:
        """Set the rule for the chain and its block applier."""
        self._irreversible_follows_head = self.blocks.irreversible_follows_head = bool(value)

    def restore(self, state: ObjectStore, summary: dict, recent: dict, next_op: int,
                next_ath: int) -> None:
        """Take the state of a checkpoint
        (:func:`nodeapi.chain.checkpoint.restore_chain`): ``state`` (its
        pending session not open yet), the block summary ``{slot: block
        id}``, the recent transactions ``{trx id: expiration}`` and the
        1.11 / 2.9 counters.  The chain must be fresh (no block applied,
        nothing pending), or have just put its pending transactions away
        (:meth:`clear_pending`).  The state of a lazy fork
        (:mod:`nodeapi.chain.remote`) makes ``state`` lazy too."""
        if self.state.remote is not None:  # a lazy fork stays one
            self.state.remote.install(state)
        self.state = state
        self._summary.clear()
        self._summary.update(summary)
        self._recent.clear()
        self._recent.update(recent)
        self._numbering.next_op, self._numbering.next_ath = next_op, next_ath
        self.blocks = self._block_applier()
        self.forks = ForkDatabase()
        state.begin()  # the pending session

    # -- head --------------------------------------------------------------

    @property
    def dgp(self) -> dict:
        """The dynamic global property object ``2.1.0`` (graphene
        ``dynamic_global_property_object``, times in seconds)."""
        return self.state.objects["2.1.0"]

    @property
    def head_block_num(self) -> int:
        """The head block's number (0 before the first block)."""
        return self.dgp["head_block_number"]

    @property
    def head_block_id(self) -> str:
        """The head block's id, 40 hex characters (all zeros at genesis)."""
        return self.dgp["head_block_id"]

    @property
    def head_block_time(self) -> int:
        """The head block's time, seconds since the epoch (UTC); the
        genesis' initial timestamp before the first block."""
        return self.dgp["time"]

    @property
    def block_interval(self) -> int:
        """Seconds between slots: the chain parameter ``block_interval``
        (``2.0.0``), which a maintenance may change."""
        return int(self.state.objects["2.0.0"]["parameters"]["block_interval"])

    def required_fees(self, ops: list, asset_id: str = CORE_ASSET) -> list:
        """The fees ``ops`` need under the current schedule, in ``asset_id``
        (converted through its core_exchange_rate, rounded up): per
        operation ``{"amount", "asset_id"}``, for proposal_create ``[fee,
        [fees of the proposed operations]]`` - graphene ``get_required_fees``
        (:func:`nodeapi.protocol.fee_schedule.required_fees`) over the
        operations as graphene reads them
        (:func:`~nodeapi.protocol.operations.canonical_operation`; each must
        deserialize, as graphene's ``vector<operation>`` argument must).  Raises :class:`~nodeapi.chain.errors.UnknownObject`
        for a bad asset, a :class:`~nodeapi.errors.ProtocolError` for an
        operation that does not serialize."""
        ops = [canonical_operation(op, self.address_prefix) for op in ops]
        asset = self.state.require(asset_id)
        return required_fees(ops, self.state.objects["2.0.0"]["parameters"]["current_fees"],
                             asset["options"]["core_exchange_rate"], self.address_prefix)

    def required_fee(self, op: list, asset_id: str = CORE_ASSET):
        """:meth:`required_fees` of the one operation ``op``."""
        return self.required_fees([op], asset_id)[0]

    # -- observers -----------------------------------------------------------

    def add_consumer(self, consumer) -> None:
        """Register an ``IBlockConsumer``; it sees every applied block."""
        self._consumers.append(consumer)

    def add_pending_observer(self, fn) -> None:
        """``fn(trx dict)`` for each newly accepted pending transaction."""
        self.pending.observers.append(fn)

    def remove_pending_observer(self, fn) -> None:
        """Stop telling ``fn`` (:meth:`add_pending_observer`); ValueError if
        it was not registered."""
        self.pending.observers.remove(fn)

    def add_block_observer(self, fn) -> None:
        """``fn(AppliedBlock)`` after each applied block (API callbacks)."""
        self._block_observers.append(fn)

    def remove_block_observer(self, fn) -> None:
        """Stop telling ``fn`` (:meth:`add_block_observer`); ValueError if
        it was not registered."""
        self._block_observers.remove(fn)

    def add_pop_observer(self, fn) -> None:
        """``fn(AppliedBlock)`` after a block was popped (a fork switch,
        :meth:`push_network_block`): its state is undone and it is no
        longer in the block log."""
        self._pop_observers.append(fn)

    def remove_pop_observer(self, fn) -> None:
        """Stop telling ``fn`` (:meth:`add_pop_observer`); ValueError if it
        was not registered."""
        self._pop_observers.remove(fn)

    def add_change_observer(self, fn) -> None:
        """``fn(ids)`` after a change of the state outside a block: a debug
        update (:meth:`debug_apply`) or the devnet's revert
        (:meth:`notify_state_changed`); ``ids`` the objects created,
        modified or removed (API subscriptions notify them as after a
        block)."""
        self._change_observers.append(fn)

    def remove_change_observer(self, fn) -> None:
        """Stop telling ``fn`` (:meth:`add_change_observer`); ValueError if
        it was not registered."""
        self._change_observers.remove(fn)

    def notify_state_changed(self, ids) -> None:
        """Tell the change observers that objects ``ids`` changed outside a
        block (an observer failing is logged, the others still told)."""
        ids = set(ids)
        if not ids:
            return
        for fn in list(self._change_observers):
            try:
                fn(ids)
            except Exception:
                self.log.failure("A state change observer failed")

    def existed_before_last_block(self) -> set | None:
        """Ids of the objects the last applied block changed or removed
        that existed before it (graphene's undo session of the block:
        ``old_values`` and ``removed``, without the ``new_ids``), or None
        when that block's undo record is not kept (the block is
        irreversible already, or was applied inside another session such
        as a devnet snapshot's)."""
        history = self.blocks.undo_history
        if not history or history[-1].applied.block_num != self.head_block_num:
            return None
        return self.state.existed_before(history[-1].layer)

    def changed_objects_of_last_block(self) -> set:
        """Ids of objects created, modified or removed by the last applied
        block (valid inside block observers/consumers and until the next
        block; pending transactions are not included)."""
        return set(self.blocks.changed_last)

    # -- slots ---------------------------------------------------------------

    def get_slot_time(self, slot: int) -> int:
        """graphene ``get_slot_time``: time of the slot-th slot after head (0 -> 0)."""
        return schedule.slot_time(self.state, self.genesis.initial_timestamp, slot)

    def get_slot_at_time(self, when: int) -> int:
        """graphene ``get_slot_at_time``: slot number of ``when`` (0 if not after head)."""
        return schedule.slot_at_time(self.state, self.genesis.initial_timestamp, when)

    def get_scheduled_witness(self, slot: int) -> str:
        """Witness id of ``slot`` (:mod:`nodeapi.chain.schedule` rule)."""
        return schedule.scheduled_witness(self.state, slot)

    # -- transactions ----------------------------------------------------------

    def push_transaction(self, trx: dict) -> dict:
        """Validate ``trx`` (wire JSON) against the pending state and queue it;
        raises a ChainError subclass (or a ProtocolError naming a field that
        does not serialize).  ``trx`` is first read into the form the chain
        holds (:func:`~nodeapi.chain.validation.received_transaction`:
        numeric-string operation tags become integers).  Returns that
        processed transaction (plus ``operation_results``); pending
        observers are called with it."""
        return self.pending.push(self.state, trx)

    def validate_transaction(self, trx: dict) -> dict:
        """Apply ``trx`` to the pending state as :meth:`push_transaction`
        would (read the same way first), then undo it (graphene
        ``database::validate_transaction``); raises the same errors.
        Returns the processed transaction."""
        return self.pending.validate(self.state, trx)

    @property
    def pending_transactions(self) -> list:
        """The queued transactions in arrival order."""
        return self.pending.transactions

    def debug_update(self, update: dict) -> str:
        """Apply a debug update (:mod:`nodeapi.chain.debug_updates`) to the
        committed state, under the pending transactions (which are then
        validated again); returns the action taken."""
        return self.debug_apply(lambda state: apply_debug_update(state, update))

    def debug_apply(self, change):
        """Run ``change(state)`` on the committed state, under the pending
        transactions (then validated again), as graphene's debug updates
        are applied; returns what ``change`` returns.  Used by the debug
        API and the devnet (:mod:`nodeapi.devnet`): such a change is not in
        the block log.  The change observers are told which objects it
        changed (:meth:`add_change_observer`)."""
        pending = self._take_pending()
        # blocks before such a change can no longer be popped: their undo
        # records would put back objects without it
        self.blocks.undo_history.clear()
        try:
            return change(self.state)
        finally:
            changed = self.state.reset_changed()
            self._restore_pending(pending)
            self.notify_state_changed(changed)

    # -- blocks ----------------------------------------------------------------

    def _take_pending(self) -> list:
        """:meth:`PendingTransactions.take` of the chain's state."""
        return self.pending.take(self.state)

    def _restore_pending(self, pending: list) -> None:
        """:meth:`PendingTransactions.restore` into the chain's state."""
        self.pending.restore(self.state, pending)

    def drop_pending(self, trx_id: str) -> list:
        """Drop the pending transaction ``trx_id`` (hex id): the others are
        applied again without it (those depending on it, e.g. spending
        what it transferred, fail then and are dropped too, as graphene
        drops pending transactions no longer valid).  Returns the ids
        dropped ([] when ``trx_id`` is not pending)."""
        if trx_id not in self.pending.ids:
            return []
        pending = self._take_pending()
        self._restore_pending([p for p in pending if p[2] != trx_id])
        return [p[2] for p in pending if p[2] not in self.pending.ids]

    def clear_pending(self) -> int:
        """Drop the pending transactions and roll back their session, as
        graphene ``database::clear_pending`` (libraries/chain/db_block.cpp);
        returns how many were dropped.  The state is left without an open
        pending session: the next call must be :meth:`restore` (the devnet
        putting a snapshot back, :mod:`nodeapi.devnet.snapshots`), which
        opens one on the restored state and starts an empty change set of
        the last block."""
        return len(self._take_pending())

    def generate_block(self, when: int, witness_id: str, key) -> dict:
        """Build, sign, apply and log a block at slot time ``when`` (seconds)
        by ``witness_id`` signing with ``key`` (WIF or private key object).
        Raises :class:`InvalidBlock` when the witness is not scheduled for
        that slot or ``key`` is not its signing key.

        Pending transactions go in arrival order; as graphene
        ``database::_generate_block``, one that would take the packed block
        (header + 3 bytes + packed transactions) over ``maximum_block_size``
        is postponed: left out and kept pending, while later, smaller ones
        may still fit.  Expired or now failing ones are dropped."""
        ts = self.blocks.check_producer(when, witness_id, key)
        pending = self._take_pending()
        try:
            block, applied, kept = self.blocks.produce(pending, ts, witness_id, key)
        except BaseException:
            self._restore_pending(pending)
            raise
        try:
            self._notify(applied)
        finally:  # a failing consumer must not leave the pending session closed
            self._restore_pending([p for p in pending if p[2] not in kept])
        return block

    def push_block(self, block: dict, now: float | None = None, *,
                   check_signatures: bool = True) -> AppliedBlock:
        """Validate a block from a peer
        (:meth:`~nodeapi.chain.blocks.BlockApplier.check_pushed`: form,
        limits against ``now``, the local wall-clock seconds, default
        :meth:`wall_time`; link, slot, witness, the witness signature,
        merkle root) and apply it, raising what that raises, or
        :class:`InvalidBlock` / the failing transaction's ChainError.

        ``check_signatures=False`` is graphene's
        ``skip_transaction_signatures`` (libraries/app/application.cpp
        ``handle_block`` on a node that neither produces nor runs with
        ``--force-validate``; db_block.cpp ``_apply_transaction``): the
        transactions' signers are not recovered and their authorities not
        verified; the witness signature, TaPoS, expiration, duplicates,
        sizes and every operation's rules are checked all the same.  The
        ``operation_results`` in the block are not compared with what
        applying produces, as in graphene (:mod:`nodeapi.chain.blocks`)."""
        checked = self.blocks.check_pushed(block, self.wall_time() if now is None else now)
        pending = self._take_pending()
        try:
            applied = self._apply_block(block, check_sigs=check_signatures, replay=False,
                                        checked=checked)
        finally:
            self._restore_pending(pending)
        return applied

    # -- forks (graphene fork_database, db_block.cpp push_block / pop_block) -----

    def main_block_id(self, num: int) -> str | None:
        """The main branch's block id at ``num`` where a fork may start:
        the head, the blocks of the undo history and the one before them
        (the last irreversible block, which a fork may build on); else
        None."""
        if num == self.head_block_num:
            return self.head_block_id
        history = self.blocks.undo_history
        if history:
            first = history[0].applied.block_num
            if num == first - 1:
                return history[0].applied.block["previous"]
            if first <= num <= history[-1].applied.block_num:
                record = history[num - first]
                if record.applied.block_num == num:
                    return record.applied.block_id
        return None

    def _on_main(self, bid: str) -> bool:
        return self.main_block_id(block_num_of(bid)) == bid

    def push_network_block(self, block: dict, now: float | None = None, *,
                           check_signatures: bool = True) -> ForkResult:
        """graphene ``database::push_block`` with its fork database
        (db_block.cpp ``_push_block``): a block building on the head is
        pushed (:meth:`push_block`); a block building on another known block
        above the last irreversible one is kept in :attr:`forks`, and when
        its branch is longer than the main branch (its number past the
        head) the chain switches to it: the main branch's blocks after the
        fork point are popped (:meth:`pop_block`, kept in :attr:`forks`),
        the branch's blocks pushed in order.  When one of them is refused,
        it and the blocks built on it leave :attr:`forks`, the branch's
        blocks applied so far are popped, the popped ones applied again,
        and the error is raised.  The popped blocks' transactions go back
        to the pending ones before them (graphene ``_popped_tx``); those
        in the new branch are dropped as duplicates.

        Returns a :class:`ForkResult`.

        :raises UnlinkableBlock: ``block`` builds on no known block.
        :raises InvalidBlock: it is at or below the last irreversible block,
            or a block of its branch is refused (or the error of
            :meth:`push_block` for a block building on the head)."""
        bid = compute_block_id(block)
        num = block_num_of(bid)
        if block["previous"] == self.head_block_id:
            return ForkResult([self.push_block(block, now, check_signatures=check_signatures)],
                              [], False)
        if bid in self.forks or self._on_main(bid):
            return ForkResult([], [], True)
        lib = int(self.dgp.get("last_irreversible_block_num", 0))
        if num <= lib:
            raise InvalidBlock(f"Block {num} {bid} is at or below the last irreversible block "
                               f"{lib}")
        previous = block["previous"]
        if previous not in self.forks and not self._on_main(previous):
            raise UnlinkableBlock(f"Block {num} {bid} builds on {previous}, a block this node "
                                  "does not know")
        self.forks.add(bid, block, len(serialize_block(block, self.address_prefix)))
        self.forks.prune(lib)
        if num <= self.head_block_num:
            self.log.info("Block {num} {block_id} kept on a fork no longer than the head "
                          "{head}", num=num, block_id=bid, head=self.head_block_num)
            return ForkResult([], [], True)
        return self._switch_to(bid, now, check_signatures)

    def _switch_to(self, bid: str, now: float | None, check_signatures: bool) -> ForkResult:
        ancestor, branch = self.forks.branch(bid, self._on_main)
        history = self.blocks.undo_history
        first = block_num_of(ancestor) + 1
        if first <= self.head_block_num and (
                not history or history[0].applied.block_num > first):
            raise InvalidBlock(f"Block {block_num_of(bid)} {bid} is on a fork from block "
                               f"{first - 1}, older than this node can undo (a start from a "
                               "checkpoint, or a debug update, since)")
        self.log.warn("Switching to the fork of block {num} {block_id}: popping {count} blocks "
                      "back to {ancestor}", num=block_num_of(bid), block_id=bid,
                      count=self.head_block_num - block_num_of(ancestor), ancestor=ancestor)
        now = self.wall_time() if now is None else now
        pending = self._take_pending()
        popped, applied = [], []
        try:
            try:
                while self.head_block_id != ancestor:
                    popped.append(self._pop())
            except BaseException:  # the block log could not be cut: back to where we were
                self._give_up_fork(None, None, applied, popped)
                raise
            for block in branch:
                try:
                    checked = self.blocks.check_pushed(block, now)
                    applied.append(self._apply_block(block, check_sigs=check_signatures,
                                                     replay=False, checked=checked))
                except (ChainError, ProtocolError) as exc:
                    self._give_up_fork(block, exc, applied, popped)
                    raise
                self.forks.remove_one(applied[-1].block_id)
        finally:
            popped_trxs = [entry for old in reversed(popped)
                           for entry in _popped_transactions(old, self.address_prefix)]
            self._restore_pending(popped_trxs + pending)
        return ForkResult(applied, popped, False)

    def _give_up_fork(self, block: dict | None, exc, applied: list, popped: list) -> None:
        """Back to the main branch: the fork's ``applied`` blocks popped,
        the ``popped`` ones applied again; ``block`` (refused with
        ``exc``) and what builds on it leave the fork database."""
        if block is not None:
            bad = compute_block_id(block)
            dropped = self.forks.remove(bad)
            self.log.warn("Block {block_id} of the fork refused ({error}): {count} blocks of "
                          "the fork dropped, back to the main branch", block_id=bad,
                          error=str(exc), count=len(dropped))
        for _ in applied:
            self._pop()
        applied.clear()
        for old in reversed(popped):
            # they were applied before: graphene pushes them again with the
            # checks skipped (db_block.cpp _push_block, "restore all blocks
            # from the good fork")
            self._apply_block(old.block, check_sigs=False, replay=False)
            self.forks.remove_one(old.block_id)
        popped.clear()

    def pop_block(self) -> AppliedBlock:
        """Pop the head block (graphene ``database::pop_block``): its state
        undone, the block log cut, the block kept in :attr:`forks`; its
        transactions go back to the pending ones.  Consumers with a
        ``block_popped`` and the pop observers are told.

        :raises InvalidBlock: the head is irreversible or past the undo
            history (nothing changes)."""
        pending = self._take_pending()
        try:
            old = self._pop()
        except BaseException:
            self._restore_pending(pending)
            raise
        self._restore_pending(_popped_transactions(old, self.address_prefix) + pending)
        return old

    def _pop(self) -> AppliedBlock:
        old, changed = self.blocks.pop()
        self.forks.add(old.block_id, old.block,
                       len(serialize_block(old.block, self.address_prefix)))
        for consumer in list(self._consumers):
            popped = getattr(consumer, "block_popped", None)
            if popped is not None:
                popped(old)
            elif old.operations:
                self.log.warn("{consumer} keeps the {count} operations of popped block {num}",
                              consumer=type(consumer).__name__, count=len(old.operations),
                              num=old.block_num)
        for fn in list(self._pop_observers):
            fn(old)
        self.notify_state_changed(changed)
        return old

    def _apply_block(self, block: dict, check_sigs: bool, replay: bool,
                     checked: tuple | None = None) -> AppliedBlock:
        applied = self.blocks.apply(block, check_sigs, replay, checked)
        self._notify(applied)
        return applied

    def _notify(self, applied: AppliedBlock) -> None:
        for consumer in list(self._consumers):
            consumer.block_applied(applied)
        for fn in list(self._block_observers):
            fn(applied)

    def wall_time(self) -> float:
        """Local wall-clock seconds (``self.clock.seconds()``)."""
        return self.clock.seconds()

    def get_block(self, num: int) -> dict | None:
        """Signed block ``num`` from the block log, or None."""
        return self.block_log.read(num)

    def next_object_instance(self, kind: str, with_pending: bool = True) -> int:
        """The instance the next object of ``kind`` (``"1.2"``) gets: in
        the pending state, or with ``with_pending`` false as the head block
        left it.  Operation history ``1.11`` and account history ``2.9``
        are numbered when a block is applied (graphene counts them in the
        history plugin's indexes)."""
        if kind == "1.11":
            return self._numbering.next_op
        if kind == "2.9":
            return self._numbering.next_ath
        return self.state.next_instance_of(kind, outermost=not with_pending)

    def block_summary(self, instance: int) -> dict | None:
        """The block summary object ``2.8.<instance>`` as graphene keeps it
        (block_summary_object.hpp; db_genesis.cpp makes 2.8.0..2.8.65536,
        db_block.cpp ``create_block_summary`` sets 2.8.(num & 0xFFFF) to
        each block's id): ``{"id", "block_id"}``, the block id all zeros
        for a slot no block filled yet; None beyond 2.8.65536."""
        if not 0 <= instance <= 0x10000:
            return None
        return {"id": f"2.8.{instance}", "block_id": self._summary.get(instance, "0" * 40)}

    def recent_transaction_expiration(self, trx_id: str) -> int | None:
        """The expiration (seconds) of transaction ``trx_id`` if a block
        holds it and it has not expired yet (graphene
        ``transaction_index``), else None."""
        return self._recent.get(trx_id)

    def get_block_header(self, num: int) -> dict | None:
        """The header fields of block ``num``, or None."""
        block = self.get_block(num)
        if block is None:
            return None
        return {k: block[k] for k in ("previous", "timestamp", "witness",
                                      "transaction_merkle_root", "extensions")}

    def replay(self, cooperator=None, chunk: int = 200, progress_every: float = 5.0):
        """Apply every block of the block log without the checks its blocks
        passed when they were written (graphene reindex's skip flags,
        libraries/app/application.cpp: the witness signature, the schedule,
        the merkle root, the transactions' signatures, sizes and TaPoS);
        the operations' rules, the expirations and the duplicate check run
        as for any block.  Consumers see ``replay=True``.

        Works in chunks of ``chunk`` blocks through ``cooperator`` so the
        reactor stays responsive (default: a ``task.Cooperator`` scheduling
        its steps with ``self.clock.callLater`` - the reactor the caller
        gave the chain -, or ``twisted.internet.task``'s global cooperator
        for a chain built without one, :class:`WallClock`), and logs
        progress (blocks/s, ETA) every ``progress_every`` seconds of
        ``self.clock``.  Returns a Deferred firing with the number of
        blocks replayed."""
        clock = self.clock
        if cooperator is None and hasattr(clock, "callLater"):
            from twisted.internet import task

            # one step per reactor turn (a step is a few milliseconds,
            # :func:`~nodeapi.chain.replay.replay_blocks`)
            cooperator = task.Cooperator(terminationPredicateFactory=lambda: lambda: True,
                                         scheduler=lambda step: clock.callLater(0.0, step))
        pending = self._take_pending()
        total = max(int(self.block_log.head_num) - self.head_block_num, 0)
        self.replay_target = int(self.block_log.head_num) if total else None
        d = replay_blocks(
            lambda: self.block_log.blocks(self.head_block_num + 1),
            lambda block: self._apply_block(block, check_sigs=False, replay=True),
            lambda: self.head_block_num, total, clock, self.log, cooperator, chunk,
            progress_every)

        def done(count):
            self.replay_target = None
            self._restore_pending(pending)
            if count or self.head_block_num:  # nothing to say of a new chain
                self.log.info("Replayed {count} blocks, head {head}", count=count,
                              head=self.head_block_num)
            return count

        def failed(failure):
            self.replay_target = None
            return failure

        return d.addCallbacks(done, failed)
