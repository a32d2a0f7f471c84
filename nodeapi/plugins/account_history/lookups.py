"""Lookups of the in-memory ``account_history`` plugin beyond an account's
own list: operations by block and by time, the account history entries
``2.9.N`` by id, and the history objects ``get_objects`` returns.

Graphene reference: libraries/chain/include/graphene/chain/
operation_history_object.hpp (``operation_history_index`` ``by_block``
``(block_num, trx_in_block, op_in_trx, virtual_op)`` and ``by_time``
``(block_time desc, id desc)``; ``account_transaction_history_object``
``{id, account, operation_id, sequence, next}``) and libraries/app/api.cpp
``history_api::get_block_operation_history`` /
``get_block_operations_by_time`` / ``get_account_history_by_time``.

Operation numbers grow with blocks and ``2.9.N`` with operations, so the
plugin keeps one row per kept operation, in ``1.11.M`` order: ``(M, block
number, block time, N of its first entry)``; a block, a time bound or an
entry number is a binary search over them.  Rows of operations dropped by
trimming (``partial-operations``) are skipped and compacted away once they
are as many as the live ones: the lookups take memory in proportion to what
is kept, not to the chain's length.  Only what the plugin keeps
is answered: an operation it does not keep is left out, an entry trimmed
away (``max-ops-per-account`` ...) or of an untracked account is not found,
and the oldest kept entry of an account links ``next`` to ``2.9.0`` as
graphene resets it.
"""

from array import array
from bisect import bisect_left, bisect_right

from nodeapi.protocol.ids import instance_number, kind_and_instance
from nodeapi.history.oprecord import history_entry, record_accounts, record_first_n


#: Dropped rows tolerated before a compaction is considered.
MIN_DEAD_ROWS = 1024

#: The names of the row arrays in :meth:`HistoryLookups.arrays` (and in the
#: plugin's checkpoints).
ROW_ARRAYS = ("_row_m", "_row_block", "_row_time", "_row_n")


class HistoryLookups:
    """The lookups of an :class:`~nodeapi.plugins.account_history.history.AccountHistory`,
    owned by it: it calls :meth:`count_entries` with every operation's
    entries, :meth:`add_row` for every operation it keeps and
    :meth:`row_dropped` for every one it drops.

    :param records: the plugin's operation records, ``{M: record bytes}``
        (:mod:`nodeapi.history.oprecord`), read here and changed in place
        by the plugin only.
    :param logs: the plugin's account logs, ``{"1.2.x":``
        :class:`~nodeapi.plugins.account_history.retention.AccountLog` ``}``, read here.
    """

    def __init__(self, records: dict, logs: dict) -> None:
        self._records = records
        self._logs = logs
        # one row per kept operation, ascending: M, block number, block
        # time (s), N of its first entry; rows of dropped operations stay
        # until a compaction
        self._row_m = array("q")
        self._row_block = array("q")
        self._row_time = array("q")
        self._row_n = array("q")
        self._row_dead = 0
        self._ath_count = 0  # entries 2.9.N numbered, kept or not

    @property
    def entry_count(self) -> int:
        """Number of ``2.9.N`` entries numbered (kept or not)."""
        return self._ath_count

    @property
    def row_count(self) -> int:
        """Rows held: the kept operations plus the dropped ones not yet
        compacted away."""
        return len(self._row_m)

    def count_entries(self, entries) -> None:
        """Count an operation's entries (``AppliedOperation.account_history``)."""
        if entries:
            self._ath_count = entries[-1].n + 1

    def add_row(self, m: int, block_num: int, timestamp: int, first_n: int) -> None:
        """The plugin keeps ``1.11.m`` of block ``block_num`` at
        ``timestamp`` (seconds) whose first entry is ``2.9.first_n``."""
        self._row_m.append(m)
        self._row_block.append(block_num)
        self._row_time.append(timestamp)
        self._row_n.append(first_n)

    def row_dropped(self) -> None:
        """One kept operation was dropped: compact the rows once the dropped
        ones are as many as the live ones (amortized O(1) per operation)."""
        self._row_dead += 1
        if self._row_dead < MIN_DEAD_ROWS or self._row_dead * 2 < len(self._row_m):
            return
        records = self._records
        keep = [i for i, m in enumerate(self._row_m) if m in records]
        for name in ROW_ARRAYS:
            old = getattr(self, name)
            setattr(self, name, array("q", [old[i] for i in keep]))
        self._row_dead = 0

    def rows_popped(self, first_m: int, entry_count: int) -> None:
        """A popped block (a fork switch): forget the rows of ``1.11.m``
        from ``first_m`` on and count the entries as ``entry_count`` again."""
        cut = len(self._row_m)
        while cut and self._row_m[cut - 1] >= first_m:
            cut -= 1
        for name in ROW_ARRAYS:
            del getattr(self, name)[cut:]
        self._ath_count = min(self._ath_count, entry_count)
        self._row_dead = min(self._row_dead, len(self._row_m))

    # -- checkpoints --------------------------------------------------------------

    def arrays(self) -> dict:
        """``{name: copy of the array}`` for each of :data:`ROW_ARRAYS`."""
        return {name: getattr(self, name)[:] for name in ROW_ARRAYS}

    @property
    def dead_rows(self) -> int:
        """Rows of dropped operations not compacted away yet."""
        return self._row_dead

    def restore(self, arrays: dict, entry_count: int, dead_rows: int) -> None:
        """Take back what :meth:`arrays`, :attr:`entry_count` and
        :attr:`dead_rows` gave (a checkpoint); ``arrays`` holds ``array('q')``."""
        for name in ROW_ARRAYS:
            setattr(self, name, arrays[name])
        self._ath_count, self._row_dead = entry_count, dead_rows

    # -- helpers ------------------------------------------------------------------

    def _entries(self, ms) -> list:
        records = self._records
        return [history_entry(m, records[m]) for m in ms]

    def _kept_ops(self, account_id: str):
        """``(ops, lo)``: the account's kept 1.11 instances are ``ops[lo:]``."""
        log = self._logs.get(account_id)
        return (array("q"), 0) if log is None else (log.ops, log.dead)

    def _live(self, lo: int, hi: int) -> list:
        """The M of the live rows ``lo..hi-1``, ascending."""
        records = self._records
        return [m for m in self._row_m[lo:hi] if m in records]

    # -- queries ------------------------------------------------------------------

    def get_block_operation_history(self, block_num: int, trx_in_block=None) -> list:
        """The kept operations of block ``block_num`` ordered by
        (trx_in_block, op_in_trx, virtual_op), only those of transaction
        ``trx_in_block`` when it is not None."""
        lo = bisect_left(self._row_block, block_num)
        hi = bisect_right(self._row_block, block_num, lo)
        entries = self._entries(self._live(lo, hi))
        if trx_in_block is not None:
            entries = [e for e in entries if e["trx_in_block"] == trx_in_block]
        entries.sort(key=lambda e: (e["trx_in_block"], e["op_in_trx"], e["virtual_op"]))
        return entries

    def get_block_operations_by_time(self, start=None) -> list:
        """The kept operations of the block of the newest kept operation
        whose time is at or before ``start`` (seconds; None = the newest),
        newest first (graphene's ``by_time`` index holds kept operations)."""
        i = len(self._row_time) if start is None else bisect_right(self._row_time, start)
        records = self._records
        while i > 0 and self._row_m[i - 1] not in records:
            i -= 1
        if i == 0:
            return []
        block = self._row_block[i - 1]
        lo = bisect_left(self._row_block, block, 0, i)
        return self._entries(reversed(self._live(lo, i)))

    def get_account_history_by_time(self, account_id: str, limit: int, start=None) -> list:
        """The account's kept operations at or before ``start`` (seconds;
        None = no bound), newest first, at most ``limit``."""
        ops, lo = self._kept_ops(account_id)
        if len(ops) <= lo or limit <= 0:
            return []
        if start is None:
            hi = len(ops)
        else:
            i = bisect_right(self._row_time, start)
            if i == 0:
                return []
            hi = bisect_right(ops, self._row_m[i - 1], lo)
        return self._entries(ops[j] for j in range(hi - 1, max(hi - limit, lo) - 1, -1))

    def _entry(self, n: int):
        """``(account id, M, index in the account's log)`` of the kept entry
        ``2.9.n``, or None."""
        if n >= self._ath_count:
            return None
        i = bisect_right(self._row_n, n) - 1
        if i < 0:
            return None
        m = self._row_m[i]
        rec = self._records.get(m)
        if rec is None:
            return None
        accounts = record_accounts(rec)
        k = n - record_first_n(rec)
        if k >= len(accounts):
            return None  # an entry of an operation the plugin does not keep
        account = f"1.2.{accounts[k]}"
        ops, lo = self._kept_ops(account)
        j = bisect_left(ops, m, lo)
        if j == len(ops) or ops[j] != m:
            return None
        return account, m, j

    def get_history_objects(self, ids: list) -> dict:
        """``{id: object}`` for the kept ``1.11.M`` and ``2.9.N`` of
        ``ids`` (graphene ``operation_history_object`` /
        ``account_transaction_history_object``)."""
        found = {}
        for oid in ids:
            kind, n = kind_and_instance(oid)
            if kind == "1.11":
                rec = self._records.get(n)
                if rec is not None:
                    found[oid] = history_entry(n, rec)
            elif kind == "2.9":
                held = self._entry(n)
                if held is None:
                    continue
                account, m, j = held
                log = self._logs[account]
                next_n = 0  # the oldest kept entry: graphene resets its link
                if j > log.dead:
                    prev = self._records[log.ops[j - 1]]
                    instance_of = instance_number(account)
                    next_n = record_first_n(prev) + record_accounts(prev).index(instance_of)
                found[oid] = {"id": oid, "account": account, "operation_id": f"1.11.{m}",
                              "sequence": log.removed + (j - log.dead) + 1,
                              "next": f"2.9.{next_n}"}
        return found
