"""Operation history (ohi, ``1.11.M``) and account transaction history
(ath, ``2.9.N``) numbering, shared by the ``account_history`` and the
``searchdb`` plugins so that both hand out exactly the same ids.

Rules (docs/wire-contract.rst section 8; graphene ``account_history_plugin`` and
``elasticsearch_plugin``, ``add_account_history`` / ``addNewEntry``):

- ``1.11.M`` is the chain's own count of applied operations
  (:attr:`nodeapi.applied.AppliedOperation.id_num`).
- ``2.9.N`` counts every (operation, impacted account) pair from 0, the
  impacted accounts of one operation taken in ascending instance order.
- For each pair the account's ``sequence`` is its 1-based count of entries
  and ``next`` is the account's previous entry ``2.9.K``, ``2.9.0`` for its
  first (graphene's default ``account_transaction_history_id_type``).
- The impacted accounts are the chain's
  (:attr:`~nodeapi.applied.AppliedOperation.impacted`) plus, for
  ``account_create`` (type 5), the new account taken from the operation
  result, as the graphene plugins add it.

Memory: one small tuple per account (graphene keeps the same two values in
``account_statistics``: ``most_recent_op`` and ``total_ops``); nothing grows
with history.
"""

from typing import Iterator, Optional

ATH_PREFIX = "2.9."
OHI_PREFIX = "1.11."

_ACCOUNT_CREATE = 5


def _instance(oid: str) -> int:
    return int(oid[oid.rindex(".") + 1:])


def impacted_accounts(op) -> tuple:
    """The accounts that get an ath entry for ``op`` (an
    :class:`~nodeapi.applied.AppliedOperation`), ascending by instance."""
    impacted = op.impacted
    if op.op[0] == _ACCOUNT_CREATE:
        result = op.result
        if (len(result) == 2 and result[0] == 1 and isinstance(result[1], str)
                and result[1] not in impacted):
            impacted = tuple(sorted(impacted + (result[1],), key=_instance))
    return impacted


class HistoryNumbering:
    """Hands out ``2.9.N`` ids, sequences and ``next`` links.

    :ivar next_ath: N of the next ``2.9.N`` to hand out.
    """

    __slots__ = ("next_ath", "_stats")

    def __init__(self) -> None:
        self.next_ath = 0
        # account id -> (N of its most recent entry, its total entry count)
        self._stats: dict = {}

    def assign(self, op) -> list:
        """Number the entries of one applied operation, in order.

        :returns: ``[(n, account_id, sequence, next_n)]``, one per impacted
            account ascending; ``n`` is the ``2.9.n`` instance, ``next_n``
            the instance of the account's previous entry (0 for its first).
        """
        out = []
        stats = self._stats
        n = self.next_ath
        for account in impacted_accounts(op):
            prev = stats.get(account)
            if prev is None:
                entry = (n, account, 1, 0)
            else:
                entry = (n, account, prev[1] + 1, prev[0])
            stats[account] = (n, entry[2])
            out.append(entry)
            n += 1
        self.next_ath = n
        return out

    def account_stats(self, account_id: str) -> Optional[tuple]:
        """``(most recent N, total entries)`` (ints) of ``account_id``
        (``"1.2.x"``), or None when it has no entry yet: graphene's
        ``account_statistics_object`` ``most_recent_op`` and ``total_ops``
        (libraries/plugins/account_history)."""
        return self._stats.get(account_id)

    def accounts(self) -> Iterator[str]:
        """The account ids (``"1.2.x"``) that have at least one entry, in
        order of their first entry."""
        return iter(self._stats)


def ath_id(n: int) -> str:
    """The account transaction history id ``"2.9.n"`` (str) of entry ``n``
    (int >= 0): graphene ``account_transaction_history_object`` is type 9
    of the implementation space 2 (libraries/chain/include/graphene/chain/
    operation_history_object.hpp), created per impacted account by
    libraries/plugins/account_history (``add_account_history``) and
    libraries/plugins/elasticsearch (``addNewEntry``)."""
    return f"{ATH_PREFIX}{n}"


def ohi_id(m: int) -> str:
    """The operation history id ``"1.11.m"`` (str) of operation ``m`` (int
    >= 0, :attr:`nodeapi.applied.AppliedOperation.id_num`): graphene
    ``operation_history_object``, type 11 of the protocol space 1, created
    once per applied operation by libraries/plugins/account_history."""
    return f"{OHI_PREFIX}{m}"
