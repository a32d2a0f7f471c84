"""The in-memory ``account_history`` plugin (the default history plugin).

Keeps operation history objects (``1.11.M``, compact records of
:mod:`nodeapi.history.oprecord`) and, per account, its entries (the 1.11
instances in order), and answers the history API set.  Graphene reference:
libraries/plugins/account_history/account_history_plugin.cpp (what is kept:
``track-account``, ``partial-operations`` and the trimming options of
:mod:`nodeapi.plugins.account_history.retention`) and libraries/app/api.cpp ``history_api``
(query semantics over what is kept, docs/wire-contract.rst section 6).

Numbering: ``1.11.M`` is the chain's
(:attr:`~nodeapi.applied.AppliedOperation.id_num`, an operation nobody keeps
still uses its number); ``2.9.N`` counts every (operation, impacted account)
pair (the chain's :attr:`~nodeapi.applied.AppliedOperation.account_history`,
:mod:`nodeapi.chain.numbering`), kept or not, so trimming never
renumbers.  An account's sequence numbers count its entries from 1 and go on
after trimming (graphene ``total_ops``; ``removed_ops`` counts the removed).

Checkpoints (:class:`~nodeapi.applied.ICheckpointed`): the records, the
accounts' logs, the lookups and the retention state go into the node's
checkpoints, so a start replays only the blocks after the newest one.
"""

import base64
from bisect import bisect_left, bisect_right

from twisted.logger import Logger
from zope.interface import implementer

from nodeapi.protocol.ids import instance_number
from nodeapi.applied import IAccountHistory, IBlockConsumer, ICheckpointed
from nodeapi.plugins.account_history.lookups import ROW_ARRAYS, HistoryLookups
from nodeapi.history.oprecord import history_entry, pack_record, record_accounts, \
    record_block_num, record_type
from nodeapi.plugins.account_history.retention import AccountLog, HistoryLimits, Retention
from nodeapi.history.snapshot import chunked, int_array, joined

__all__ = ["AccountHistory", "history_entry", "select_account_history", "select_relative"]

MAX_OP = (1 << 63) - 1


def array_copy(values):
    """A copy of an ``array('q')``."""
    return values[:]


def select_account_history(ops, stop: int, limit: int, start: int, lo: int = 0) -> list:
    """Graphene ``get_account_history`` over one account's ascending 1.11
    instances ``ops[lo:]``: instances in ``(stop, start]`` newest first
    (start 0 = newest), plus instance 0 when ``stop`` is 0 and the account
    has it, at most ``limit``.  Returns the selected instances."""
    if start == 0:
        start = MAX_OP
    if start < stop or limit <= 0:
        return []
    hi = bisect_right(ops, start, lo)
    low = bisect_right(ops, stop, lo)
    out = [ops[i] for i in range(hi - 1, max(low, hi - limit) - 1, -1)]
    if stop == 0 and len(out) < limit and len(ops) > lo and ops[lo] == 0:
        out.append(0)
    return out


def select_relative(total: int, stop: int, limit: int, start: int, removed: int = 0) -> range:
    """Graphene ``get_relative_account_history``: the 1-based sequence
    numbers to return, newest first, for an account with ``total`` entries
    of which the oldest ``removed`` were trimmed (start 0 = latest;
    ``[max(stop, removed + 1), start]`` inclusive, at most ``limit``;
    nothing when ``start`` is a removed entry)."""
    start = total if start == 0 else min(total, start)
    if not (start >= stop and start > removed and limit > 0):
        return range(0)
    low = max(stop, removed + 1, start - limit + 1)
    return range(start, low - 1, -1)


@implementer(IBlockConsumer, IAccountHistory, ICheckpointed)
class AccountHistory:
    """In-memory account history: ``IBlockConsumer`` (register with
    ``chain.add_consumer``) and ``IAccountHistory`` (``node.plugins["account_history"]``).

    :param limits: the ``account_history`` options
        (:class:`~nodeapi.plugins.account_history.retention.HistoryLimits`; default: keep
        everything, as bitshares-core without options).
    :param registrar_of: ``account id -> registrar id``, required with
        ``extended_history_registrars`` (e.g. from the chain state).
    :raises ValueError: registrars configured without ``registrar_of``.

    Answers synchronously with lists of :func:`history_entry` dicts.
    Account arguments are ``1.2.N`` ids (the API set resolves names);
    ``stop``/``start`` are 1.11 instance numbers.

    :ivar lookups: its :class:`~nodeapi.plugins.account_history.lookups.HistoryLookups`
        (operations by block and time, history objects), over the same
        records and logs.
    """

    log = Logger()
    checkpoint_key = "account_history"

    def __init__(self, limits: HistoryLimits = HistoryLimits(), registrar_of=None) -> None:
        self.retention = Retention(limits, registrar_of)
        self._partial = limits.partial_operations
        self._tracked = limits.track_accounts
        self._records: dict = {}  # M -> record bytes (oprecord)
        self._logs: dict = {}  # account -> AccountLog
        self._ath0 = None  # (account, M) of the entry 2.9.0
        self.lookups = HistoryLookups(self._records, self._logs)

    # -- IBlockConsumer ------------------------------------------------------

    def block_applied(self, applied) -> None:
        """Record the block's operations and entries, then trim (graphene
        ``update_account_histories``)."""
        retention = self.retention
        retention.start_block(applied.block_num)
        timestamp = applied.timestamp
        for op in applied.operations:
            self._add(op, timestamp)
        logs = self._logs
        for account in retention.due():
            self._trim(account, logs[account])

    def block_popped(self, applied) -> None:
        """A block popped by a fork switch (``Chain.push_network_block``):
        its operations and their entries leave the history, as graphene's
        undo database takes back the ``operation_history_object`` and
        ``account_transaction_history_object`` of a popped block
        (db_block.cpp ``pop_block``).  Entries an account's limit trimmed
        while the block was applied are not brought back (they stay
        removed, a difference with graphene only with
        ``max-ops-per-account`` set)."""
        ops = applied.operations
        if not ops:
            return
        first_m = min(op.id_num for op in ops)
        first_n = min((e.n for op in ops for e in op.account_history),
                      default=self.lookups.entry_count)
        logs = self._logs
        for op in reversed(ops):
            self._records.pop(op.id_num, None)
            for entry in op.account_history:
                log = logs.get(entry.account)
                if log is not None and log.kept and log.ops[-1] == op.id_num:
                    log.ops.pop()
        self.lookups.rows_popped(first_m, first_n)
        if self._ath0 is not None and self._ath0[1] >= first_m:
            self._ath0 = None

    def _add(self, op, timestamp: int) -> None:
        entries = op.account_history  # numbered by the chain
        accounts = [entry.account for entry in entries]
        m = op.id_num
        first_n = entries[0].n if entries else self.lookups.entry_count
        self.lookups.count_entries(entries)
        if accounts and self._ath0 is None:
            self._ath0 = (accounts[0], m)
        if self.retention.max_ops == 0:
            if not self._partial:
                self._keep(op, timestamp, accounts, first_n)
            return
        holders = [a for a in accounts if a in self._tracked] if self._tracked else accounts
        if self._partial and not holders:
            return
        self._keep(op, timestamp, accounts, first_n)
        logs = self._logs
        for account in holders:
            log = logs.get(account)
            if log is None:
                log = logs[account] = self.retention.new_log(account)
            log.ops.append(m)
            if log.kept > log.keep:
                self._trim(account, log)

    def _keep(self, op, timestamp: int, accounts: list, first_n: int) -> None:
        self._records[op.id_num] = pack_record(
            op, timestamp, [instance_number(a) for a in accounts], first_n)
        self.lookups.add_row(op.id_num, op.block_num, timestamp, first_n)

    def _block_num_of(self, m: int) -> int:
        return record_block_num(self._records[m])

    def _trim(self, account: str, log: AccountLog) -> None:
        removed = self.retention.trim(account, log, self._block_num_of)
        if removed and self._partial:
            for m in removed:
                self._release(m)

    def _release(self, m: int) -> None:
        """Drop ``1.11.m`` when no kept entry refers to it (graphene
        ``check_and_remove_op_history_obj``)."""
        logs = self._logs
        for instance in record_accounts(self._records[m]):
            log = logs.get(f"1.2.{instance}")
            if log is not None:
                i = bisect_left(log.ops, m, log.dead)
                if i < len(log.ops) and log.ops[i] == m:
                    return
        del self._records[m]
        self.lookups.row_dropped()

    # -- ICheckpointed ----------------------------------------------------------

    def checkpoint_records(self):
        """Records (``ICheckpointed``): the operation records (base64),
        every account's log, the lookup arrays, the retention state.  The
        captures are copies; encoding them is left to the iteration."""
        records = list(self._records.items())
        logs = [(a, array_copy(log.ops), log.dead, log.removed, log.keep)
                for a, log in self._logs.items()]
        lookups = self.lookups.arrays()
        misc = {"ath0": self._ath0, "ath_count": self.lookups.entry_count,
                "row_dead": self.lookups.dead_rows, **self.retention.state()}

        def produce():
            yield "misc", misc
            for key, part in chunked("records", records):
                yield key, [[m, base64.b64encode(rec).decode()] for m, rec in part]
            for account, ops, dead, removed, keep in logs:
                yield "log", [account, ops.tolist(), dead, removed, keep]
            for name, values in lookups.items():
                yield from chunked(name, values.tolist())

        return produce()

    def checkpoint_usable(self, meta: dict) -> bool:
        """Always: the records cover every operation up to the checkpoint."""
        return True

    def restore_checkpoint(self, meta: dict, records: list) -> None:
        """Rebuild from :meth:`checkpoint_records`' records."""
        misc = next(v for k, v in records if k == "misc")
        # in place: the lookups read the same dicts
        self._records.clear()
        self._records.update((m, base64.b64decode(rec)) for m, rec in joined(records, "records"))
        self._logs.clear()
        for key, value in records:
            if key != "log":
                continue
            account, ops, dead, removed, keep = value
            log = AccountLog(keep)
            log.ops, log.dead, log.removed = int_array(ops), dead, removed
            self._logs[account] = log
        self.lookups.restore({name: int_array(joined(records, name)) for name in ROW_ARRAYS},
                             misc["ath_count"], misc["row_dead"])
        self._ath0 = tuple(misc["ath0"]) if misc["ath0"] else None
        self.retention.restore(misc)

    # -- reading ---------------------------------------------------------------

    @property
    def operation_count(self) -> int:
        """Number of operation history objects held."""
        return len(self._records)

    def get_operation(self, m: int):
        """``history_entry`` of ``1.11.m`` or None (never recorded, or
        dropped by ``partial-operations``)."""
        rec = self._records.get(m)
        return None if rec is None else history_entry(m, rec)

    def account_total_ops(self, account_id: str) -> int:
        """Entries ever added for ``account_id`` (``"1.2.x"``), trimmed ones
        included; 0 for an account without history (graphene
        ``account_statistics_object::total_ops``)."""
        log = self._logs.get(account_id)
        return 0 if log is None else log.total

    def accounts(self):
        """Iterator of the account ids (``"1.2.x"``) holding history, in
        the order of their first entry."""
        return iter(self._logs)

    def account_removed_ops(self, account_id: str) -> int:
        """Entries of ``account_id`` removed by trimming (graphene
        ``account_statistics_object::removed_ops``)."""
        log = self._logs.get(account_id)
        return 0 if log is None else log.removed

    def _entries(self, ms) -> list:
        records = self._records
        return [history_entry(m, records[m]) for m in ms]

    # -- lookups (IAccountHistory) ------------------------------------------------

    @property
    def entry_count(self) -> int:
        """Number of ``2.9.N`` entries numbered (kept or not)."""
        return self.lookups.entry_count

    def get_block_operation_history(self, block_num: int, trx_in_block=None) -> list:
        """:meth:`HistoryLookups.get_block_operation_history
        <nodeapi.plugins.account_history.lookups.HistoryLookups.get_block_operation_history>`."""
        return self.lookups.get_block_operation_history(block_num, trx_in_block)

    def get_block_operations_by_time(self, start=None) -> list:
        """:meth:`HistoryLookups.get_block_operations_by_time
        <nodeapi.plugins.account_history.lookups.HistoryLookups.get_block_operations_by_time>`."""
        return self.lookups.get_block_operations_by_time(start)

    def get_account_history_by_time(self, account_id: str, limit: int, start=None) -> list:
        """:meth:`HistoryLookups.get_account_history_by_time
        <nodeapi.plugins.account_history.lookups.HistoryLookups.get_account_history_by_time>`."""
        return self.lookups.get_account_history_by_time(account_id, limit, start)

    def get_history_objects(self, ids: list) -> dict:
        """:meth:`HistoryLookups.get_history_objects
        <nodeapi.plugins.account_history.lookups.HistoryLookups.get_history_objects>`."""
        return self.lookups.get_history_objects(ids)

    def _owns_kept_ath0(self, account_id: str, log: AccountLog) -> bool:
        return (self._ath0 is not None and self._ath0[0] == account_id and log.removed == 0
                and log.kept > 0 and log.oldest() == self._ath0[1])

    # -- IAccountHistory -------------------------------------------------------

    def get_account_history(self, account_id: str, stop: int, limit: int, start: int) -> list:
        """Kept operations of the account with ``stop < M <= start`` newest
        first (``start`` 0 = newest; ``stop`` 0 also includes 1.11.0), at most
        ``limit``; ``[]`` when ``start < stop`` (docs/wire-contract.rst section 6)."""
        log = self._logs.get(account_id)
        if log is None:
            return []
        return self._entries(select_account_history(log.ops, stop, limit, start, log.dead))

    def get_relative_account_history(self, account_id: str, stop: int, limit: int,
                                     start: int) -> list:
        """By the account's 1-based sequence numbers ``[stop, start]``
        inclusive, newest first; ``start`` 0 = latest; trimmed sequence
        numbers are skipped and a ``start`` among them answers ``[]``."""
        log = self._logs.get(account_id)
        if log is None:
            return []
        ops, base = log.ops, log.dead - log.removed - 1
        return self._entries(ops[base + seq] for seq in
                             select_relative(log.total, stop, limit, start, log.removed))

    def get_account_history_operations(self, account_id: str, operation_type: int,
                                       start: int, stop: int, limit: int) -> list:
        """Kept operations of type ``operation_type`` with ``stop < M <=
        start`` newest first (``start`` 0 = the account's newest; ``stop`` 0
        also includes 1.11.0), at most ``limit``.  Graphene quirk kept: an
        account whose most recent entry is ``2.9.0`` gets ``[]``."""
        log = self._logs.get(account_id)
        if log is None or log.kept == 0 or limit <= 0:
            return []
        ops = log.ops
        owns_ath0 = self._owns_kept_ath0(account_id, log)
        if owns_ath0 and log.kept == 1:
            return []  # graphene: most_recent_op == 2.9.0 reads as "none"
        if start == 0:
            start = ops[-1]
        recs = self._records
        out = []
        # the walk over `next` links ends at the entry whose next is 2.9.0:
        # the oldest kept one (trimming resets its link), or the one after
        # 2.9.0 itself
        first = log.dead + (1 if owns_ath0 else 0)
        i = len(ops) - 1
        while i >= first and ops[i] > stop and len(out) < limit:
            m = ops[i]
            if m <= start and record_type(recs[m]) == operation_type:
                out.append(m)
            i -= 1
        if (stop == 0 and len(out) < limit and owns_ath0
                and record_type(recs[ops[log.dead]]) == operation_type):
            out.append(ops[log.dead])
        return self._entries(out)
