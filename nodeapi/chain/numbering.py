"""Operation numbering: the chain turns a block's applied operations into
:class:`~nodeapi.applied.AppliedOperation` records carrying their operation
history id ``1.11.M`` and their account transaction history entries
``2.9.N`` - numbered here, once, for every consumer.

Rules (docs/searchdb-plugin.rst; graphene ``account_history_plugin``
``add_account_history`` and ``elasticsearch_plugin`` ``addNewEntry``):

- ``1.11.M`` counts every applied operation from 0, in the order graphene
  pushes them to ``_applied_ops`` (db_block.cpp ``apply_operation`` /
  ``push_applied_operation``): an operation is pushed before it is
  evaluated, the virtual operations it raises (fills, executed proposed
  operations, ...) while it is evaluated, so each transaction operation
  is followed by its own virtual operations; the block's own virtual
  operations come last (:func:`applied_operations`).
- ``trx_in_block``, ``op_in_trx``, ``virtual_op`` are graphene's
  ``_current_trx_in_block``, ``_current_op_in_trx`` and
  ``_current_virtual_op`` at the push: a transaction operation has its
  index and ``virtual_op`` 0; its virtual operations share its
  ``trx_in_block`` and ``op_in_trx`` with ``virtual_op`` 1, 2, ... (the
  counter is reset for every operation, ``_apply_transaction``); the
  block's virtual operations have ``trx_in_block`` = the number of
  transactions, ``op_in_trx`` 0 and ``virtual_op`` 0, 1, ... (``_apply_block``
  resets both after the transactions).
- ``2.9.N`` counts every (operation, account) pair from 0; the accounts of
  one operation are :func:`history_accounts` (its impacted accounts plus,
  for ``account_create``, the new account from the result, and the
  ``impacted_accounts`` an extendable result names, as the graphene
  plugins add them), ascending by instance.
- For each pair the account's ``sequence`` is its 1-based count of entries
  and ``next`` its previous entry ``2.9.K`` (``2.9.0`` for the first).  The
  chain keeps both in the account's ``statistics`` object
  (``total_ops``, ``most_recent_op``, as graphene's plugin does), so the
  numbers are undone with the state when a block is rolled back.
"""

from nodeapi.applied import AccountHistoryEntry, AppliedOperation
from nodeapi.protocol.ids import instance_number
from nodeapi.protocol.impacted import payer_and_impacted

_ACCOUNT_CREATE = 5
#: ``extendable_operation_result``'s tag in ``operation_result``
#: (protocol/base.hpp)
_EXTENDABLE_RESULT = 5


def payer_and_impacted_of(op: list) -> tuple:
    """``(fee payer, impacted accounts)`` of an operation: the impacted
    accounts (:func:`nodeapi.protocol.impacted.impacted_accounts` plus the
    fee payer) ascending by instance."""
    payer, accounts = payer_and_impacted(op)
    accounts.add(payer)
    if len(accounts) == 1:
        return payer, tuple(accounts)
    return payer, tuple(sorted(accounts, key=instance_number))


def history_accounts(op: list, result: list, impacted: tuple) -> tuple:
    """The accounts that get a ``2.9.N`` entry for operation ``op`` (wire
    JSON) with ``result`` and the chain's ``impacted`` accounts: those, plus
    the new account of an ``account_create`` (its ``[1, "1.2.x"]`` result)
    and the ``impacted_accounts`` of an ``extendable_operation_result``
    (``[5, {"impacted_accounts": [...]}]``: samet_fund_borrow / repay name
    the fund's owner, credit_offer_accept / credit_deal_repay the offer's),
    ascending by instance (account_history_plugin.cpp
    ``add_account_history``, elasticsearch_plugin.cpp ``addNewEntry``)."""
    extra = ()
    if len(result) == 2:
        if (op[0] == _ACCOUNT_CREATE and result[0] == 1 and isinstance(result[1], str)
                and result[1] not in impacted):
            extra = (result[1],)
        elif result[0] == 5 and isinstance(result[1], dict):
            extra = tuple(a for a in result[1].get("impacted_accounts") or ()
                          if a not in impacted)
    if not extra:
        return impacted
    # graphene orders account ids by instance
    return tuple(sorted(set(impacted + extra), key=instance_number))


def number_entries(accounts: tuple, next_n: int, stats_of) -> tuple:
    """Number one operation's entries for ``accounts``, the first being
    ``2.9.next_n``.

    :param stats_of: ``stats_of(account_id)`` -> the account's statistics
        (a mutable mapping with ``most_recent_op`` ``"2.9.K"`` and
        ``total_ops``), updated here.
    :returns: ``(tuple of AccountHistoryEntry, the next N)``."""
    entries = []
    n = next_n
    for account in accounts:
        stats = stats_of(account)
        sequence = int(stats["total_ops"]) + 1
        previous = instance_number(stats["most_recent_op"]) if sequence > 1 else 0
        entries.append(AccountHistoryEntry(n, account, sequence, previous))
        stats["most_recent_op"] = f"2.9.{n}"
        stats["total_ops"] = sequence
        n += 1
    return tuple(entries), n


class OperationNumbering:
    """The two counters: ``next_op`` (M of the next ``1.11.M``) and
    ``next_ath`` (N of the next ``2.9.N``); ``stats_of`` as in
    :func:`number_entries` (a writable copy of the account's statistics,
    taken once per account while one block's operations are numbered:
    :func:`applied_operations`)."""

    __slots__ = ("next_op", "next_ath", "stats_of", "_written")

    def __init__(self, stats_of, next_op: int = 0, next_ath: int = 0) -> None:
        self.stats_of = stats_of
        self.next_op = next_op
        self.next_ath = next_ath
        self._written: dict = {}  # account -> its statistics copy, within one block

    def block_done(self) -> None:
        """Forget the statistics copies of the block just numbered (the next
        change of those objects copies them again)."""
        self._written.clear()

    def _stats(self, account: str):
        stats = self._written.get(account)
        if stats is None:
            stats = self._written[account] = self.stats_of(account)
        return stats

    def applied(self, op: list, result: list, block_num: int, trx_in_block: int,
                op_in_trx: int, virtual_op: int, is_virtual: bool,
                trx_id: str) -> AppliedOperation:
        """The :class:`AppliedOperation` of one operation, with the next
        ``1.11`` id and its ``2.9`` entries (module rules)."""
        payer, impacted = payer_and_impacted_of(op)
        entries, self.next_ath = number_entries(history_accounts(op, result, impacted),
                                                self.next_ath, self._stats)
        applied = AppliedOperation(self.next_op, op, result, block_num, trx_in_block,
                                   op_in_trx, virtual_op, is_virtual, trx_id, payer,
                                   impacted, entries)
        self.next_op += 1
        return applied


def applied_operations(records: list, block_num: int, numbering: OperationNumbering,
                       block_vops: list = ()) -> tuple:
    """The tuple of :class:`AppliedOperation` of a block, numbered by
    ``numbering`` in graphene's order (module rules).

    :param records: the applied transactions ``[(trx, packed, trx_id, exp,
        results, vops_by_op)]``; ``vops_by_op`` holds one list of virtual
        operations ``[(op, result)]`` per operation of ``trx``
        (:meth:`~nodeapi.chain.evaluators.context.ApplyContext.virtual_ops_by_operation`).
    :param block_vops: ``[(op, result)]`` generated outside transactions
        (what :func:`nodeapi.chain.schedule.update_global_objects` returns),
        recorded with the transaction id all zeros, as graphene does.

    Each account's statistics are copied once for the whole block (the
    copy is the store's object only while these operations are numbered,
    with nothing else running)."""
    try:
        return _numbered(records, block_num, numbering, block_vops)
    finally:
        numbering.block_done()


def _numbered(records: list, block_num: int, numbering: OperationNumbering,
              block_vops) -> tuple:
    ops = []
    for trx_in_block, (trx, _p, trx_id, _e, results, vops_by_op) in enumerate(records):
        for op_in_trx, (op, result, vops) in enumerate(zip(trx["operations"], results,
                                                           vops_by_op, strict=True)):
            ops.append(numbering.applied(op, result, block_num, trx_in_block, op_in_trx, 0,
                                         False, trx_id))
            for virtual_op, (vop, vresult) in enumerate(vops, 1):
                ops.append(numbering.applied(vop, vresult, block_num, trx_in_block, op_in_trx,
                                             virtual_op, True, trx_id))
    for virtual_op, (op, result) in enumerate(block_vops):
        ops.append(numbering.applied(op, result, block_num, len(records), 0, virtual_op, True,
                                     "0" * 40))
    return tuple(ops)
