"""The transactions in recent blocks, kept until they expire so that a
duplicate is refused: graphene's ``transaction_index`` of
``transaction_history_object`` (ordered by id and by expiration;
libraries/chain/db_block.cpp ``_apply_transaction`` adds each applied
transaction, db_update.cpp ``clear_expired_transactions`` removes those
whose expiration is at or before the head block time).

The chain keeps ``{trx id: expiration seconds}`` (read by the pending
transactions and written into checkpoints); :class:`RecentTransactions`
changes it for block application with an expiration heap, so a block costs
the transactions it adds and expires, not the size of the index, and it can
undo a failed block the same way.
"""

import heapq


class RecentTransactions:
    """The recent transactions over the chain's ``entries`` dict (changed
    in place; module docstring).  :meth:`begin_block` starts recording
    what a block changes, :meth:`undo_block` takes it back."""

    def __init__(self, entries: dict) -> None:
        self.entries = entries
        self._heap: list = []
        self._added: list = []  # ids the current block added
        self._expired: list = []  # (id, expiration) the current block removed
        self._rebuild()

    def _rebuild(self) -> None:
        self._heap = [(exp, trx_id) for trx_id, exp in self.entries.items()]
        heapq.heapify(self._heap)

    def __contains__(self, trx_id: str) -> bool:
        return trx_id in self.entries

    def add(self, trx_id: str, expiration: int) -> None:
        """A transaction of the block being applied, kept until
        ``expiration`` (seconds)."""
        self.entries[trx_id] = expiration
        heapq.heappush(self._heap, (expiration, trx_id))
        self._added.append(trx_id)

    def expire(self, now: int) -> None:
        """Forget the transactions whose expiration is before ``now``
        (graphene ``clear_expired_transactions``: ``head_block_time() >
        trx.expiration``; one expiring at ``now`` may still be applied, so
        it is still a duplicate)."""
        heap, entries = self._heap, self.entries
        while heap and heap[0][0] < now:
            exp, trx_id = heapq.heappop(heap)
            if entries.get(trx_id) == exp:
                del entries[trx_id]
                self._expired.append((trx_id, exp))

    def begin_block(self) -> None:
        """Start recording the changes of one block."""
        self._added, self._expired = [], []

    def block_changes(self) -> tuple:
        """``(added ids, [(id, expiration)] expired)`` of the block since
        :meth:`begin_block`, kept to undo it later (:meth:`undo_changes`)."""
        return list(self._added), list(self._expired)

    def undo_changes(self, added: list, expired: list) -> None:
        """Take back a block's changes :meth:`block_changes` gave (a popped
        block; later blocks' changes already taken back)."""
        for trx_id in added:
            self.entries.pop(trx_id, None)
        for trx_id, exp in expired:
            self.entries[trx_id] = exp
        self._added, self._expired = [], []
        self._rebuild()

    def undo_block(self) -> None:
        """Take back what the block since :meth:`begin_block` changed."""
        for trx_id in self._added:
            self.entries.pop(trx_id, None)
        for trx_id, exp in self._expired:
            self.entries[trx_id] = exp
        self._added, self._expired = [], []
        self._rebuild()
