"""The numbering of an indexer: an upstream's blocks made into
:class:`~nodeapi.applied.AppliedBlock` records numbered as this node would
have numbered them, and the saved copy of that numbering.

The operations of a block, ordered by (trx_in_block, op_in_trx,
virtual_op), become :class:`~nodeapi.applied.AppliedOperation` records: the
upstream's ``1.11.M``, and ``2.9.N`` entries numbered from block 1 with the
one numbering rule of the chain (:mod:`nodeapi.chain.numbering`: the
reference account_history plugin's).

The numbering needs every block from 1.  With ``state_path`` it is saved:
every ``save_every`` blocks a copy of the counters is taken, and once the
consumers confirm that block (``confirmed_block`` says the database holds
every document up to it) the copy is written to the file (write, fsync,
rename: ``{"chain_id", "block", "next_ath", "stats"}``); a start goes on
after that block.  Without it (or with a file that cannot be read) a start
follows from block 1 again.
"""

import os
from collections import deque
from typing import Optional

import orjson

from nodeapi.applied import AppliedBlock, AppliedOperation
from nodeapi.chain.numbering import history_accounts, number_entries, payer_and_impacted_of
from nodeapi.peers.errors import PeerRpcError
from nodeapi.protocol.block import block_id
from nodeapi.protocol.ids import instance_number
from nodeapi.protocol.times import parse_time
from nodeapi.protocol.transaction import transaction_id
from nodeapi.protocol.wire import from_wire, strip_block_info

#: the transaction id of an operation outside any transaction
NO_TRX = "0" * 40


class UpstreamNumbering:
    """The counters of an indexer's numbering (module docstring).

    :param log: the follower's :class:`twisted.logger.Logger`.
    :param state_path: file of the saved numbering, or None (not saved).
    :param confirmed_block: zero-argument callable: the last block whose
        documents the consumers' database confirmed (needed with
        ``state_path``).
    :param save_every: blocks between two copies of the counters.
    :ivar next_block: the next block to number.
    :ivar next_ath: the instance of the next ``2.9`` entry.
    :ivar chain_id: the upstream's chain id (saved with the counters), or
        None before it is known.
    """

    def __init__(self, log, state_path: Optional[str] = None, confirmed_block=None,
                 save_every: int = 1000) -> None:
        self.log = log
        self.state_path = state_path
        self.confirmed_block = confirmed_block
        self.save_every = save_every
        self.next_block = 1
        self.next_ath = 0
        self.chain_id = None
        self._stats: dict = {}  # account -> {"total_ops", "most_recent_op"}
        self._saved: deque = deque()  # (block, copy of the counters) awaiting confirmation
        self._load()

    # -- numbering -------------------------------------------------------------------

    def block(self, num: int, block: dict, operations: list, live: bool) -> AppliedBlock:
        """Block ``num`` (``database.get_block``'s answer) with its
        operations (``history.get_block_operation_history``'s), numbered;
        the counters move past it.

        :raises PeerRpcError: either answer missing or of the wrong shape."""
        if not isinstance(block, dict) or not isinstance(operations, list):
            raise PeerRpcError(f"block {num} or its operations missing upstream")
        ids = block.get("transaction_ids")
        signed = strip_block_info(block)
        if not isinstance(ids, list):
            ids = [transaction_id(t) for t in signed["transactions"]]
        ordered = sorted(operations, key=lambda h: (int(h["trx_in_block"]),
                                                    int(h["op_in_trx"]),
                                                    int(h["virtual_op"])))
        applied = tuple(self._applied(num, h, ids) for h in ordered)
        self.next_block = num + 1
        return AppliedBlock(num, block.get("block_id") or block_id(signed), signed,
                            parse_time(signed["timestamp"]), applied, not live)

    def _applied(self, num: int, h: dict, trx_ids: list) -> AppliedOperation:
        op, result = from_wire(h["op"]), from_wire(h["result"])
        payer, impacted = payer_and_impacted_of(op)
        entries, self.next_ath = number_entries(history_accounts(op, result, impacted),
                                                self.next_ath, self._account_stats)
        trx_in_block = int(h["trx_in_block"])
        trx_id = trx_ids[trx_in_block] if trx_in_block < len(trx_ids) else NO_TRX
        return AppliedOperation(instance_number(str(h["id"])), op, result, num,
                                trx_in_block, int(h["op_in_trx"]), int(h["virtual_op"]),
                                bool(h.get("is_virtual", False)), trx_id, payer, impacted,
                                entries)

    def _account_stats(self, account: str) -> dict:
        stats = self._stats.get(account)
        if stats is None:
            stats = self._stats[account] = {"total_ops": 0, "most_recent_op": "2.9.0"}
        return stats

    # -- the saved copy --------------------------------------------------------------

    def _load(self) -> None:
        if not self.state_path or not os.path.exists(self.state_path):
            return
        try:
            with open(self.state_path, "rb") as f:
                saved = orjson.loads(f.read())
            block, next_ath, stats = saved["block"], saved["next_ath"], saved["stats"]
            self.chain_id = saved["chain_id"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self.log.warn("Indexer state {path} not used ({error}); following from block 1",
                          path=self.state_path, error=str(exc))
            return
        self.next_block, self.next_ath, self._stats = block + 1, next_ath, stats
        self.log.info("Indexer state loaded: going on after block {num}", num=block)

    def keep(self, num: int) -> None:
        """After block ``num``: take a copy every ``save_every`` blocks, write
        the newest copy the database confirmed."""
        if not self.state_path or self.confirmed_block is None:
            return
        if num % self.save_every == 0:
            self._saved.append((num, self.next_ath,
                                {a: dict(v) for a, v in self._stats.items()}))
        self.write_confirmed()

    def write_confirmed(self) -> None:
        """Write the newest copy whose block the database confirmed (a
        failed write is logged; the next one tries again)."""
        if not self.state_path or self.confirmed_block is None:
            return
        confirmed = self.confirmed_block()
        ready = None
        while self._saved and self._saved[0][0] <= confirmed:
            ready = self._saved.popleft()
        if ready is not None:
            self._write(*ready)

    def _write(self, block: int, next_ath: int, stats: dict) -> None:
        tmp = self.state_path + ".tmp"
        try:
            with open(tmp, "wb") as f:
                f.write(orjson.dumps({"chain_id": self.chain_id, "block": block,
                                      "next_ath": next_ath, "stats": stats}))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.state_path)
        except OSError as exc:
            self.log.warn("Indexer state not written to {path}: {error}",
                          path=self.state_path, error=str(exc))
