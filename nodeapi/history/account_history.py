"""The in-memory ``account_history`` plugin (the default history plugin).

Keeps every applied operation (``1.11.M``) and, per account, the list of
its operations in ath order, and answers the history API set.  Graphene
reference: libraries/plugins/account_history/account_history_plugin.cpp
(numbering, with no ``max-ops-per-account`` trimming) and
libraries/app/api.cpp ``history_api`` (query semantics, docs/wire-contract.rst
section 6).  Numbering is :mod:`nodeapi.history.ids`, shared with searchdb.

The chain keeps no state on disk and replays its block log on every start,
so this plugin needs no storage of its own: it is rebuilt by the replay.
"""

from array import array
from bisect import bisect_right

from twisted.logger import Logger
from zope.interface import implementer

from nodeapi.applied import IAccountHistory, IBlockConsumer
from nodeapi.history.ids import HistoryNumbering

MAX_OP = (1 << 63) - 1


def history_entry(op, block_time: str) -> dict:
    """The API form of an operation history object (graphene
    ``operation_history_object``): ``{id, op, result, block_num,
    trx_in_block, op_in_trx, virtual_op, is_virtual, block_time}``."""
    return {
        "id": f"1.11.{op.id_num}",
        "op": op.op,
        "result": op.result,
        "block_num": op.block_num,
        "trx_in_block": op.trx_in_block,
        "op_in_trx": op.op_in_trx,
        "virtual_op": op.virtual_op,
        "is_virtual": op.is_virtual,
        "block_time": block_time,
    }


def select_account_history(ops: "array", stop: int, limit: int, start: int) -> list:
    """Graphene ``get_account_history`` over one account's ascending 1.11
    instances ``ops``: instances in ``(stop, start]`` newest first (start 0
    = newest), plus instance 0 when ``stop`` is 0 and the account has it,
    at most ``limit``.  Returns the selected instances."""
    if start == 0:
        start = MAX_OP
    if start < stop or limit <= 0:
        return []
    hi = bisect_right(ops, start)
    lo = bisect_right(ops, stop)
    out = [ops[i] for i in range(hi - 1, max(lo, hi - limit) - 1, -1)]
    if stop == 0 and len(out) < limit and ops and ops[0] == 0:
        out.append(0)
    return out


def select_relative(total: int, stop: int, limit: int, start: int) -> range:
    """Graphene ``get_relative_account_history``: the 1-based sequence
    numbers to return, newest first, for an account with ``total`` entries
    (start 0 = latest; ``[max(stop, 1), start]`` inclusive, at most
    ``limit``)."""
    start = total if start == 0 else min(total, start)
    if not (start >= stop and start > 0 and limit > 0):
        return range(0)
    low = max(stop, 1, start - limit + 1)
    return range(start, low - 1, -1)


@implementer(IBlockConsumer, IAccountHistory)
class AccountHistory:
    """In-memory account history: ``IBlockConsumer`` (register with
    ``chain.add_consumer``) and ``IAccountHistory`` (``node.history``).

    Constructor: ``AccountHistory()``.  Answers synchronously with lists of
    :func:`history_entry` dicts.  Account arguments are ``1.2.N`` ids (the
    API set resolves names); ``stop``/``start`` are 1.11 instance numbers.
    """

    log = Logger()

    def __init__(self) -> None:
        self.numbering = HistoryNumbering()
        self._ops: dict = {}  # M -> (AppliedOperation, block_time str)
        self._by_account: dict = {}  # account -> array of M, ascending
        self._ath0_account = None  # the account owning 2.9.0

    # -- IBlockConsumer ------------------------------------------------------

    def block_applied(self, applied) -> None:
        """Record the block's operations and number their ath entries."""
        block_time = applied.time_iso
        ops, by_account, assign = self._ops, self._by_account, self.numbering.assign
        for op in applied.operations:
            ops[op.id_num] = (op, block_time)
            for n, account, _seq, _next in assign(op):
                lst = by_account.get(account)
                if lst is None:
                    lst = by_account[account] = array("q")
                lst.append(op.id_num)
                if n == 0:
                    self._ath0_account = account

    # -- reading ---------------------------------------------------------------

    @property
    def operation_count(self) -> int:
        """Number of operation history objects held."""
        return len(self._ops)

    def get_operation(self, m: int):
        """``history_entry`` of ``1.11.m`` or None."""
        rec = self._ops.get(m)
        return None if rec is None else history_entry(*rec)

    def account_total_ops(self, account_id: str) -> int:
        """Number of operations (int) held for ``account_id`` (``"1.2.x"``);
        0 for an unknown account (graphene ``account_statistics_object``
        ``total_ops``)."""
        lst = self._by_account.get(account_id)
        return len(lst) if lst is not None else 0

    def _entries(self, ms) -> list:
        ops = self._ops
        return [history_entry(*ops[m]) for m in ms]

    # -- IAccountHistory -------------------------------------------------------

    def get_account_history(self, account_id: str, stop: int, limit: int, start: int) -> list:
        """Operations of the account with ``stop < M <= start`` newest first
        (``start`` 0 = newest; ``stop`` 0 also includes 1.11.0), at most
        ``limit``; ``[]`` when ``start < stop`` (wire-contract section 6)."""
        ops = self._by_account.get(account_id)
        if ops is None:
            return []
        return self._entries(select_account_history(ops, stop, limit, start))

    def get_relative_account_history(self, account_id: str, stop: int, limit: int,
                                     start: int) -> list:
        """By the account's 1-based sequence numbers ``[stop, start]``
        inclusive, newest first; ``start`` 0 = latest."""
        ops = self._by_account.get(account_id)
        if ops is None:
            return []
        return self._entries(ops[seq - 1] for seq in select_relative(len(ops), stop, limit, start))

    def get_account_history_operations(self, account_id: str, operation_type: int,
                                       start: int, stop: int, limit: int) -> list:
        """Operations of type ``operation_type`` with ``stop < M <= start``
        newest first (``start`` 0 = the account's newest; ``stop`` 0 also
        includes 1.11.0), at most ``limit``.  Graphene quirk kept: an account
        whose most recent entry is ``2.9.0`` gets ``[]``."""
        ops = self._by_account.get(account_id)
        if ops is None or limit <= 0:
            return []
        if account_id == self._ath0_account and len(ops) == 1:
            return []  # graphene: most_recent_op == 2.9.0 reads as "none"
        if start == 0:
            start = ops[-1]
        recs = self._ops
        out = []
        # the walk over `next` links ends at the entry whose next is 2.9.0
        first = 1 if account_id == self._ath0_account else 0
        i = len(ops) - 1
        while i >= first and ops[i] > stop and len(out) < limit:
            m = ops[i]
            if m <= start and recs[m][0].op[0] == operation_type:
                out.append(m)
            i -= 1
        if stop == 0 and len(out) < limit and first == 1 and recs[ops[0]][0].op[0] == operation_type:
            out.append(ops[0])
        return self._entries(out)
