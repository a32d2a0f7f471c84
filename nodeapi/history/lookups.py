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

Operation numbers grow with blocks, so one block's operations are a
contiguous range of ``1.11.M`` and a time bound is a bound on ``M``.  Only
what the plugin keeps is answered: an operation it does not keep
(``partial-operations``) is left out, an entry trimmed away
(``max-ops-per-account`` ...) or of an untracked account is not found, and
the oldest kept entry of an account links ``next`` to ``2.9.0`` as graphene
resets it.
"""

from array import array
from bisect import bisect_left, bisect_right


class HistoryLookups:
    """A mixin of :class:`nodeapi.history.account_history.AccountHistory`:
    it calls :meth:`_init_lookups` once, :meth:`_record_block` for every
    block and :meth:`_record_entries` with every operation's entries; the plugin
    provides ``_records`` (M -> record), ``_logs`` (account ->
    :class:`~nodeapi.history.retention.AccountLog`), ``_entries(ms)`` and
    ``get_operation(m)``."""

    def _init_lookups(self) -> None:
        # per block holding operations, ascending: block time (s), number, first M
        self._block_time = array("q")
        self._block_num = array("q")
        self._block_first = array("q")
        self._last_op = -1
        # per 2.9.N: operation M, account instance, sequence, next N
        self._ath_op = array("q")
        self._ath_account = array("q")
        self._ath_seq = array("q")
        self._ath_next = array("q")

    @property
    def entry_count(self) -> int:
        """Number of ``2.9.N`` entries numbered (kept or not)."""
        return len(self._ath_op)

    def _record_block(self, applied) -> None:
        """Note the first operation of a block holding operations."""
        if applied.operations:
            self._block_time.append(applied.timestamp)
            self._block_num.append(applied.block_num)
            self._block_first.append(applied.operations[0].id_num)
            self._last_op = applied.operations[-1].id_num

    def _record_entries(self, m: int, entries) -> None:
        """Keep the entries ``2.9.N`` of operation ``m`` (the chain's
        :class:`~nodeapi.applied.AccountHistoryEntry` values, numbered in
        order), whether the plugin keeps them or not."""
        for entry in entries:
            if entry.n != len(self._ath_op):
                continue  # numbering out of step: never the case for a chain's blocks
            self._ath_op.append(m)
            self._ath_account.append(int(entry.account.rpartition(".")[2]))
            self._ath_seq.append(entry.sequence)
            self._ath_next.append(entry.next_n)

    def _block_range(self, i: int) -> range:
        first = self._block_first[i]
        end = self._block_first[i + 1] if i + 1 < len(self._block_first) else self._last_op + 1
        return range(first, end)

    def _kept_ops(self, account_id: str):
        """``(ops, lo)``: the account's kept 1.11 instances are ``ops[lo:]``."""
        log = self._logs.get(account_id)
        return (array("q"), 0) if log is None else (log.ops, log.dead)

    def _holds_entry(self, account_id: str, m: int) -> bool:
        ops, lo = self._kept_ops(account_id)
        i = bisect_left(ops, m, lo)
        return i < len(ops) and ops[i] == m

    # -- queries ------------------------------------------------------------------

    def get_block_operation_history(self, block_num: int, trx_in_block=None) -> list:
        """The kept operations of block ``block_num`` ordered by
        (trx_in_block, op_in_trx, virtual_op), only those of transaction
        ``trx_in_block`` when it is not None."""
        i = bisect_left(self._block_num, block_num)
        if i == len(self._block_num) or self._block_num[i] != block_num:
            return []
        entries = self._entries(m for m in self._block_range(i) if m in self._records)
        if trx_in_block is not None:
            entries = [e for e in entries if e["trx_in_block"] == trx_in_block]
        entries.sort(key=lambda e: (e["trx_in_block"], e["op_in_trx"], e["virtual_op"]))
        return entries

    def get_block_operations_by_time(self, start=None) -> list:
        """The kept operations of the newest block holding operations whose
        time is at or before ``start`` (seconds; None = the newest), newest
        first."""
        i = len(self._block_time) if start is None else bisect_right(self._block_time, start)
        if i == 0:
            return []
        return self._entries(m for m in reversed(self._block_range(i - 1))
                             if m in self._records)

    def get_account_history_by_time(self, account_id: str, limit: int, start=None) -> list:
        """The account's kept operations at or before ``start`` (seconds;
        None = no bound), newest first, at most ``limit``."""
        ops, lo = self._kept_ops(account_id)
        if len(ops) <= lo or limit <= 0:
            return []
        if start is None:
            hi = len(ops)
        else:
            i = bisect_right(self._block_time, start)
            if i == 0:
                return []
            hi = bisect_right(ops, self._block_range(i - 1)[-1], lo)
        return self._entries(ops[j] for j in range(hi - 1, max(hi - limit, lo) - 1, -1))

    def get_history_objects(self, ids: list) -> dict:
        """``{id: object}`` for the kept ``1.11.M`` and ``2.9.N`` of
        ``ids`` (graphene ``operation_history_object`` /
        ``account_transaction_history_object``)."""
        found = {}
        for oid in ids:
            kind, _, instance = oid.rpartition(".")
            n = int(instance)
            if kind == "1.11":
                entry = self.get_operation(n)
                if entry is not None:
                    found[oid] = entry
            elif kind == "2.9" and n < len(self._ath_op):
                account, m = f"1.2.{self._ath_account[n]}", self._ath_op[n]
                if not self._holds_entry(account, m):
                    continue
                next_n = self._ath_next[n]
                if next_n and not self._holds_entry(account, self._ath_op[next_n]):
                    next_n = 0  # the oldest kept entry: graphene resets its link
                found[oid] = {"id": oid, "account": account, "operation_id": f"1.11.{m}",
                              "sequence": self._ath_seq[n], "next": f"2.9.{next_n}"}
        return found
