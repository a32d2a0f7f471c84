"""Block application for :class:`~nodeapi.chain.chain.Chain`: producing a
block from the pending transactions, validating and applying a peer's block,
writing it to the block log (the chain then notifies the consumers).

Graphene reference: libraries/chain/db_block.cpp (``_generate_block``,
``push_block``, ``_apply_block``).  A :class:`BlockApplier` is owned by
the ``Chain``, which gives it the state and the bookkeeping it changes; the
public entry points stay ``Chain.generate_block`` and ``Chain.push_block``
(which take the pending transactions away before and put them back after).

Order of a block (produced or pushed): every transaction in a nested undo
session inside one block session, the global objects and bookkeeping
updated, then the block *written to the block log*, and only then the block
session committed and consumers notified.  When anything fails - a
transaction, the merkle root, or the block log write (disk full, I/O
error: :class:`~nodeapi.chain.blocklog.BlockLogError`) - the block session
is rolled back and the bookkeeping restored, so the head in memory never
runs ahead of the log and consumers see exactly the logged blocks.

Block contents, as graphene: ``transactions`` are *processed* transactions
(the signed transaction plus ``operation_results``), and
``transaction_merkle_root`` is :func:`nodeapi.protocol.block.merkle_root`
over them (``signed_block::calculate_merkle_root``: sha256 of each full
processed transaction, signatures and results included).  A block this
chain produces carries empty ``operation_results``, as bitshares-core 7.x
produces them (db_block.cpp ``_generate_block`` clears the results of each
``processed_transaction`` ``_apply_transaction`` returns, "to save disk
space and network bandwidth", and sizes the transaction without them); the
results reach clients through the broadcast answers and callbacks and the
applied operations (account history).  ``push_block``
checks that root before applying anything
(:class:`~nodeapi.chain.errors.MerkleRootMismatch`), so a changed signature
or result is refused.

Results of a peer's block: graphene's ``_apply_block`` calls
``apply_transaction`` and discards the processed transaction it returns -
the results a block carries are covered by the merkle root and the witness
signature but never compared with what applying produced.  This chain does
the same (a block graphene accepts is accepted here) and, where they
differ, logs a warning (``block_results_differ``) - but not for a
transaction that states no results: bitshares-core (since 6.0) clears them
in the blocks it makes (db_block.cpp ``_generate_block``).  Each side keeps its own
version consistently: the block (block log, ``get_block``, ``get_blocks``,
``get_transaction``) is stored exactly as signed, while the applied
operations consumers see (:class:`~nodeapi.applied.AppliedOperation`
``result``: account history, statistics) carry the results of applying it,
as graphene's ``_applied_ops`` / history plugins do.
"""

import collections

import attr
from twisted.logger import Logger

from nodeapi.applied import AppliedBlock
from nodeapi.chain import authority as auth
from nodeapi.chain import schedule
from nodeapi.chain.blocklog import BlockLogError
from nodeapi.chain.errors import InvalidBlock
from nodeapi.chain.evaluators.context import ApplyContext
from nodeapi.chain.numbering import OperationNumbering, applied_operations
from nodeapi.chain.remote import NotHereYet
from nodeapi.chain.recent import RecentTransactions
from nodeapi.chain.state import ObjectStore
from nodeapi.chain.transactions import REJECTIONS, apply_transaction, new_context
from nodeapi.chain.validation import check_block_form, check_block_limits, check_merkle_root
from nodeapi.errors import NodeAPIError, ProtocolError
from nodeapi.protocol.block import (
    block_header_bytes, block_id_of_header, block_signing_digest, header_time, merkle_root,
    signing_digest_of_header)
from nodeapi.protocol.config import MAX_UNDO_HISTORY
from nodeapi.protocol.times import format_time, parse_time
from nodeapi.protocol.transaction import serialize_processed_transaction, unsigned_of_processed




@attr.s(slots=True, frozen=True, auto_attribs=True)
class UndoRecord:
    """What undoes one applied block (:meth:`BlockApplier.pop`).

    :ivar layer: the block session's objects before it (``ObjectStore.undo``).
    :ivar counters: the session's next instances before it.
    :ivar saved: the bookkeeping before it (``_save_bookkeeping``).
    :ivar added: recent transaction ids it added.
    :ivar expired: ``(id, expiration)`` of the recent transactions it expired.
    :ivar applied: its :class:`~nodeapi.applied.AppliedBlock`.
    """

    layer: dict
    counters: dict
    saved: tuple
    added: list
    expired: list
    applied: AppliedBlock


def processed(trx: dict, results: list) -> dict:
    """The processed transaction graphene puts in a block: ``trx`` (wire
    JSON signed transaction) with ``operation_results`` = ``results``."""
    return dict(trx, operation_results=list(results))


class BlockApplier:
    """Produces and applies the blocks of a :class:`~nodeapi.chain.chain.Chain`
    (module docstring), which owns it.  Its callers take the pending
    transactions away before and put them back after (so the state holds
    no pending session while a block is applied) and notify the consumers.

    :param state: the chain's :class:`~nodeapi.chain.state.ObjectStore`.
    :param genesis: the loaded genesis (``initial_timestamp``,
        ``chain_id``, ``address_prefix``).
    :param block_log: the block log (``append``, ``corrupt``).
    :param numbering: the chain's
        :class:`~nodeapi.chain.numbering.OperationNumbering`.
    :param summary: the chain's block summary ``{slot: block id}``,
        changed in place.
    :param recent: the chain's recent transactions ``{trx id: expiration
        seconds}`` (graphene ``transaction_index``), changed in place.
    :ivar changed_last: ids of the objects the last applied block changed.
    :ivar impersonated: account ids whose authority counts as given in
        the blocks this node produces (:attr:`Chain.impersonated`; blocks
        from peers are checked in full).
    :ivar irreversible_follows_head: the last irreversible block is the
        one before the head (a devnet: :attr:`Chain.irreversible_follows_head`).
    :ivar undo_history: the :class:`UndoRecord` of each block above the
        last irreversible block, oldest first (:meth:`pop`).
    """

    log = Logger()

    def __init__(self, state: ObjectStore, genesis, block_log, numbering: OperationNumbering,
                 summary: dict, recent: dict) -> None:
        self.state = state
        self.genesis = genesis
        self.block_log = block_log
        self.prefix = genesis.address_prefix
        self.start = genesis.initial_timestamp  # seconds, read once
        self.numbering = numbering
        self.summary = summary
        self.recent = RecentTransactions(recent)
        self.changed_last: set = set()
        self.irreversible_follows_head = False
        self.impersonated: set = set()
        #: :class:`UndoRecord` of the blocks above the last irreversible one
        self.undo_history: collections.deque = collections.deque()

    @property
    def _head_num(self) -> int:
        return self.state.objects["2.1.0"]["head_block_number"]

    def _apply_trx(self, trx: dict, ctx: ApplyContext, check_sigs: bool,
                   packed: bytes | None = None, approved=(), replay: bool = False) -> tuple:
        # a duplicate is a recent one: the callers took the pending ones away
        return apply_transaction(ctx, trx, check_sigs, self.genesis.chain_id, self.summary,
                                 self.recent.__contains__, packed, approved, replay)

    def _apply_block_trxs(self, block: dict, ts: int, check_sigs: bool, replay: bool,
                          packed: list | None = None) -> list:
        """Apply every transaction of ``block`` (timestamp ``ts`` seconds, in
        the open block session; ``packed``: their unsigned bytes, when
        already made; ``replay``: a block of the node's own block log, its
        transactions' sizes and TaPoS not checked again,
        :func:`~nodeapi.chain.validation.check_transaction`);
        returns ``[(trx, packed, trx_id, exp, results, vops_by_op)]`` with
        the results applying produced and the virtual operations of each
        operation.  Unless ``replay``, a transaction
        whose ``operation_results`` differ from those is logged (module
        docstring: graphene does not compare them either)."""
        records = []
        trxs = block["transactions"]
        for num, trx in enumerate(trxs):
            ctx = new_context(self.state, self.prefix, self.summary, ts)
            unsigned, trx_id, exp, results = self._apply_trx(
                trx, ctx, check_sigs, None if packed is None else packed[num], replay=replay)
            self.recent.add(trx_id, exp)
            records.append((trx, unsigned, trx_id, exp, results,
                            ctx.virtual_ops_by_operation()))
            if not replay:
                self._compare_results(trx, results, num, trx_id)
        return records

    def _compare_results(self, trx: dict, results: list, num: int, trx_id: str) -> None:
        """Log ``block_results_differ`` when the ``operation_results`` in
        the block (``trx``) do not serialize like ``results``, the ones
        applying produced."""
        prefix = self.prefix
        stated = trx.get("operation_results", [])
        if stated == results or not stated:
            # none stated: bitshares-core clears them when it makes a block
            # (db_block.cpp _generate_block, "to save disk space and network
            # bandwidth", since 6.0), so its blocks carry none
            return
        try:
            same = (serialize_processed_transaction(trx, prefix)
                    == serialize_processed_transaction(processed(trx, results), prefix))
        except ProtocolError:
            same = False
        if not same:
            self.log.warn(
                "Block {block_num} transaction {trx_num} ({trx_id}) carries "
                "operation_results {stated} but applying it gave {applied}; accepted as "
                "graphene does", block_num=self._head_num + 1, trx_num=num,
                trx_id=trx_id, stated=stated, applied=results,
                log_event="block_results_differ")

    def _finish_block(self, block: dict, ts: int, bid: str, records: list,
                      replay: bool) -> AppliedBlock:
        """Update the global objects and bookkeeping for an applied block
        (timestamp ``ts`` seconds, id ``bid``); returns its
        :class:`AppliedBlock` (logging and notifying are the caller's)."""
        state = self.state
        num = self._head_num + 1
        self.summary[num & 0xFFFF] = bid  # graphene create_block_summary
        # virtual operations made outside transactions (expired-order
        # cancels, operations of proposals executed at expiry)
        block_vops = schedule.update_global_objects(state, self.start, block, ts, bid,
                                                    self.prefix, self.summary,
                                                    self.irreversible_follows_head)
        self.recent.expire(ts)
        ops = applied_operations(records, num, self.numbering, block_vops or ())
        self.changed_last = state.reset_changed()
        return AppliedBlock(num, bid, block, ts, ops, replay)

    def _max_header_size(self, witness_id: str, ts: int) -> int:
        """graphene ``_generate_block``'s ``max_block_header_size``: the
        packed signed header of the block to produce plus 3 bytes reserved
        for the transaction count varint."""
        header = {"previous": self.state.objects["2.1.0"]["head_block_id"],
                  "timestamp": format_time(ts), "witness": witness_id,
                  "transaction_merkle_root": "0" * 40, "extensions": [],
                  "witness_signature": "00" * 65}
        return len(block_header_bytes(header)) + 3

    # -- producing -----------------------------------------------------------------

    def check_producer(self, when: int, witness_id: str, key) -> int:
        """The slot time (seconds) of the block ``witness_id`` signing with
        ``key`` (WIF or private key object) may produce at ``when``.

        :raises InvalidBlock: ``when`` is not after the head block, the
            witness is not scheduled for that slot, or ``key`` is not its
            signing key."""
        state, start = self.state, self.start
        slot = schedule.slot_at_time(state, start, when)
        if slot == 0:
            raise InvalidBlock(f"Time {format_time(when)} is not after the head block")
        scheduled = schedule.scheduled_witness(state, slot)
        if scheduled != witness_id:
            raise InvalidBlock(f"Slot at {format_time(when)} belongs to {scheduled}, "
                               f"not {witness_id}")
        signing = state.objects[witness_id]["signing_key"]
        if auth.public_key_of(key, self.prefix) != signing:
            raise InvalidBlock(f"Key does not match signing key {signing} of {witness_id}")
        return schedule.slot_time(state, start, slot)

    def produce(self, pending: list, ts: int, witness_id: str, key) -> tuple:
        """Apply ``pending`` (``[(trx, packed, trx_id)]``, taken from the
        pending state) into a new block at slot time ``ts`` signed with
        ``key``, write it to the block log and commit it (``Chain.generate_block``'s
        rules); returns ``(block, AppliedBlock, ids of the included
        transactions)``.  On any failure nothing stays applied and the error
        is raised (:class:`~nodeapi.chain.blocklog.BlockLogError` for the log)."""
        saved = self._save_bookkeeping()
        self.state.begin()
        try:
            block, applied, kept = self._produce(pending, ts, witness_id, key)
            self._append_to_log(block, applied)
        except BaseException:
            self._undo_block(saved)
            raise
        self._keep_undo(saved, applied)
        return block, applied, kept

    def _produce(self, pending: list, ts: int, witness_id: str, key) -> tuple:
        """Apply ``pending`` (in the open block session) into a new signed
        block at ``ts``; returns ``(block, AppliedBlock, ids of the included
        transactions)``."""
        state = self.state
        records, kept = [], []
        limit = int(state.objects["2.0.0"]["parameters"]["maximum_block_size"])
        total = self._max_header_size(witness_id, ts)
        postponed = 0
        prefix = self.prefix
        for entry in pending:
            trx = entry[0]
            if parse_time(trx["expiration"]) <= ts:
                continue
            if total + len(serialize_processed_transaction(trx, prefix)) > limit:
                postponed += 1  # stays pending for a later block
                continue
            ctx = new_context(state, prefix, self.summary, ts)
            state.begin()
            try:
                packed, trx_id, exp, results = self._apply_trx(trx, ctx, True,
                                                               approved=self.impersonated)
            except REJECTIONS as exc:
                state.rollback()
                self.log.info("Dropped transaction {trx_id}: {error}", trx_id=entry[2],
                              error=str(exc))
                continue
            except NotHereYet:  # a lazy fork: the block is made again once loaded
                state.rollback()
                raise
            except Exception:  # an evaluator bug: report it, production goes on
                state.rollback()
                self.log.failure("Dropped transaction {trx_id}: unexpected error",
                                 trx_id=entry[2])
                continue
            # bitshares-core 7.x clears the results before the block takes the
            # transaction and sizes it so (db_block.cpp _generate_block)
            ptrx = processed(trx, [])
            size = len(serialize_processed_transaction(ptrx, prefix))
            if total + size > limit:
                state.rollback()
                postponed += 1
                continue
            state.commit()
            self.recent.add(trx_id, exp)
            records.append((ptrx, packed, trx_id, exp, results, ctx.virtual_ops_by_operation()))
            kept.append(trx_id)
            total += size
        if postponed:
            self.log.warn("Postponed {count} transactions due to block size limit "
                          "{limit}", count=postponed, limit=limit)
        transactions = [r[0] for r in records]
        block = {
            "previous": state.objects["2.1.0"]["head_block_id"],
            "timestamp": format_time(ts),
            "witness": witness_id,
            "transaction_merkle_root": merkle_root(transactions, prefix),
            "extensions": [],
        }
        block["witness_signature"] = auth.sign_digest(block_signing_digest(block), key)
        block["transactions"] = transactions
        bid = block_id_of_header(block_header_bytes(block))
        return block, self._finish_block(block, ts, bid, records, False), kept

    # -- bookkeeping -----------------------------------------------------------------

    def _save_bookkeeping(self) -> tuple:
        """The chain's bookkeeping outside the ObjectStore that applying a
        block changes (the block summary slot, the 1.11 and 2.9 counters,
        the last changed ids; the recent transactions record their own
        changes), for :meth:`_undo_block`."""
        slot = (self._head_num + 1) & 0xFFFF
        numbering = self.numbering
        self.recent.begin_block()
        return (slot, self.summary.get(slot), numbering.next_op, numbering.next_ath,
                self.changed_last)

    def _undo_block(self, saved: tuple) -> None:
        """Roll back the open block session and restore the bookkeeping
        :meth:`_save_bookkeeping` returned: the head is as before the block."""
        self.state.rollback()
        self.state.reset_changed()
        numbering = self.numbering
        (slot, summary, numbering.next_op, numbering.next_ath, self.changed_last) = saved
        self.recent.undo_block()
        if summary is None:
            self.summary.pop(slot, None)
        else:
            self.summary[slot] = summary

    def _append_to_log(self, block: dict, applied: AppliedBlock) -> None:
        """Write ``block`` to the block log before its state is committed.

        :raises BlockLogError: the write failed (disk full, I/O error, ...);
            the caller rolls the block back, so memory never runs ahead of
            the disk and a later block can succeed once the disk recovers."""
        try:
            self.block_log.append(block)
        except Exception as exc:
            raise BlockLogError(
                f"Block {applied.block_num} ({applied.block_id}) not applied: cannot "
                f"write it to the block log: {exc}") from exc

    # -- applying ----------------------------------------------------------------------

    def check_pushed(self, block: dict, now: float) -> tuple:
        """Validate a block from a peer before anything is applied
        (``Chain.push_block``; ``now``: local wall-clock seconds); returns
        ``(timestamp seconds, block id, [unsigned transaction bytes])`` for
        :meth:`apply`: the header and each transaction are packed once, here
        (a transaction's processed bytes give its merkle leaf and, cut
        before its signatures, its id and size).

        :raises MalformedBlock: ``block`` is not a well-formed signed block
            (:func:`~nodeapi.chain.validation.check_block_form`).
        :raises BlockFromFuture, BlockExtensionsNotEmpty, BlockTooLarge:
            :func:`~nodeapi.chain.validation.check_block_limits`.
        :raises MerkleRootMismatch: ``transaction_merkle_root`` is not the
            root of the processed transactions
            (:func:`~nodeapi.chain.validation.check_merkle_root`).
        :raises InvalidBlock: link, slot, witness, signature."""
        state, prefix, start = self.state, self.prefix, self.start
        ts, size, header, packed = check_block_form(block, prefix)
        check_block_limits(block, ts, size, state.objects["2.0.0"]["parameters"], now)
        head_id = state.objects["2.1.0"]["head_block_id"]
        if block["previous"] != head_id:
            raise InvalidBlock(f"Block does not link to head {head_id}")
        slot = schedule.slot_at_time(state, start, ts)
        if slot == 0 or schedule.slot_time(state, start, slot) != ts:
            raise InvalidBlock(f"Timestamp {block['timestamp']} is not a slot after head")
        if schedule.scheduled_witness(state, slot) != block["witness"]:
            raise InvalidBlock(f"Witness {block['witness']} is not scheduled for that slot")
        signing = state.objects[block["witness"]]["signing_key"]
        signer = auth.recover_key(block["witness_signature"], signing_digest_of_header(header),
                                  prefix)
        if signer != signing:
            raise InvalidBlock(f"Block signed by {signer}, not by {signing}")
        check_merkle_root(block, prefix, packed)
        unsigned = [unsigned_of_processed(p, trx, prefix)
                    for p, trx in zip(packed, block["transactions"])]
        return ts, block_id_of_header(header), unsigned

    def apply(self, block: dict, check_sigs: bool, replay: bool,
              checked: tuple | None = None) -> AppliedBlock:
        """Apply ``block`` (``checked``: what :meth:`check_pushed` returned
        for it, else its header is packed here) in its own session, write it
        to the block log
        (unless ``replay``: it comes from there) and commit; returns its
        :class:`AppliedBlock` (the caller notifies).  On any failure nothing
        stays applied and the error is raised; during a replay, an error
        applying the block becomes the block log's :class:`BlockLogError`
        (:meth:`_unreplayable`).  The transactions' ``operation_results``
        are compared with what applying produces only when not ``replay``,
        and only logged (module docstring)."""
        saved = self._save_bookkeeping()
        self.state.begin()
        try:
            if checked is None:
                header = block_header_bytes(block)
                checked = (header_time(header), block_id_of_header(header), None)
            ts, bid, packed = checked
            records = self._apply_block_trxs(block, ts, check_sigs, replay, packed)
            applied = self._finish_block(block, ts, bid, records, replay)
            if not replay:
                self._append_to_log(block, applied)
        except BaseException as exc:
            self._undo_block(saved)
            if replay and isinstance(exc, Exception) and not isinstance(exc, BlockLogError):
                raise self._unreplayable(exc) from exc
            raise
        self._keep_undo(saved, applied)
        return applied

    # -- undo history (graphene undo_database, pop_block) -----------------------------

    def _keep_undo(self, saved: tuple, applied: AppliedBlock) -> None:
        """Close the block session keeping what undoes it (the session's
        layer, the bookkeeping before it, the recent transactions it added
        and expired) while the block is above the last irreversible block,
        at most :data:`MAX_UNDO_HISTORY` blocks (graphene
        ``undo_database::set_max_size(head - last_irreversible + 1)``,
        db_block.cpp ``_apply_block``; ``GRAPHENE_MAX_UNDO_HISTORY``)."""
        state = self.state
        if state.depth != 1:  # inside another session: merged, not undoable alone
            state.commit()
            self.undo_history.clear()
            return
        layer, counters = state.detach()
        added, expired = self.recent.block_changes()
        history = self.undo_history
        history.append(UndoRecord(layer, counters, saved, added, expired, applied))
        lib = state.objects["2.1.0"].get("last_irreversible_block_num", 0)
        while history and (history[0].applied.block_num <= lib
                           or len(history) > MAX_UNDO_HISTORY):
            history.popleft()

    def can_pop(self) -> bool:
        """Whether the head block can be popped (its undo record is kept)."""
        return bool(self.undo_history) and \
            self.undo_history[-1].applied.block_num == self._head_num

    def pop(self) -> tuple:
        """Pop the head block (graphene ``database::pop_block``,
        db_block.cpp): the block log is cut to the block before it, then its
        state changes and bookkeeping are undone.  Returns ``(AppliedBlock,
        ids of the objects the undo changed)``.  The caller has taken the
        pending transactions away.

        :raises InvalidBlock: no undo record for the head (at or below the
            last irreversible block, or past the undo history).
        :raises BlockLogError: the block log could not be cut (nothing is
            undone then)."""
        if not self.can_pop():
            raise InvalidBlock(f"Cannot pop block {self._head_num}: it is irreversible or "
                               "past the undo history")
        record = self.undo_history[-1]
        num = record.applied.block_num
        if self.block_log.head_num >= num:
            self.block_log.truncate(num - 1)
        self.undo_history.pop()
        self.state.undo(record.layer, record.counters)
        self.state.reset_changed()
        numbering = self.numbering
        (slot, summary, numbering.next_op, numbering.next_ath, self.changed_last) = record.saved
        if summary is None:
            self.summary.pop(slot, None)
        else:
            self.summary[slot] = summary
        self.recent.undo_changes(record.added, record.expired)
        return record.applied, set(record.layer)

    def _unreplayable(self, exc: Exception) -> BlockLogError:
        """The error for the next block of the block log failing to apply
        during replay (``exc``): it was accepted when written, so its record
        is damaged (a valid checksum over values that are no block, or an
        operation this chain cannot apply) - one line naming the file, the
        byte offset and the block
        (:meth:`~nodeapi.chain.blocklog.BlockLog.corrupt`), which service
        startup reports with exit status 1.  An exception that is not a
        :class:`~nodeapi.errors.NodeAPIError` is named with its type (it
        stays the ``__cause__``)."""
        num = self._head_num + 1
        reason = str(exc) if isinstance(exc, NodeAPIError) else f"{type(exc).__name__}: {exc}"
        return self.block_log.corrupt(num, f"the block cannot be replayed: {reason}")
