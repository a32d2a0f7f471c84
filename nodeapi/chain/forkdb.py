"""The blocks this chain knows off its main branch: graphene's
``fork_database`` (libraries/chain/fork_database.cpp), the part
``database::push_block`` needs to switch forks (db_block.cpp
``_push_block``).

A block that does not build on the head but on a known block (one of the
main branch still undoable, or one here) is kept here by id with its
number and its previous block; :meth:`ForkDatabase.branch` walks a kept
block back to the main branch.  The main branch's blocks that a fork
switch pops come here too, so the chain can switch back.  Bounds: only
blocks above the last irreversible block are kept (:meth:`prune`), at most
``max_size`` of them and ``max_bytes`` of their packed sizes (the lowest
go first): blocks kept on a shorter fork are not validated before a switch
to them (graphene's fork database does not either), so a peer could
otherwise fill memory with them.
"""

import collections

from nodeapi.protocol.block import block_num_of
from nodeapi.protocol.config import MAX_UNDO_HISTORY

#: blocks kept off the main branch at most (graphene's fork database keeps
#: ``GRAPHENE_MAX_UNDO_HISTORY`` worth of heights)
MAX_FORK_BLOCKS = MAX_UNDO_HISTORY
#: bytes of packed blocks kept off the main branch at most
MAX_FORK_BYTES = 64 * 1024 * 1024


class ForkDatabase:
    """Blocks by id off the main branch (module docstring).

    :param max_size: blocks kept at most.
    :param max_bytes: packed block bytes kept at most.
    """

    def __init__(self, max_size: int = MAX_FORK_BLOCKS,
                 max_bytes: int = MAX_FORK_BYTES) -> None:
        self.max_size = max_size
        self.max_bytes = max_bytes
        self.bytes = 0
        self._sizes: dict = {}      # id -> packed size
        self._blocks: dict = {}     # id -> signed block (wire JSON)
        self._by_num: dict = collections.defaultdict(set)  # num -> ids

    def __contains__(self, block_id: str) -> bool:
        return block_id in self._blocks

    def __len__(self) -> int:
        return len(self._blocks)

    def get(self, block_id: str) -> dict | None:
        """The kept block ``block_id``, or None."""
        return self._blocks.get(block_id)

    def add(self, block_id: str, block: dict, size: int) -> None:
        """Keep ``block`` (id ``block_id``, ``size`` packed bytes); past
        ``max_size`` blocks or ``max_bytes`` the lowest blocks are dropped
        (the new one too, when it is the lowest)."""
        if block_id in self._blocks:
            return
        self._blocks[block_id] = block
        self._sizes[block_id] = size
        self.bytes += size
        self._by_num[block_num_of(block_id)].add(block_id)
        while self._blocks and (len(self._blocks) > self.max_size
                                or self.bytes > self.max_bytes):
            self._drop_lowest()

    def _drop_lowest(self) -> None:
        num = min(self._by_num)
        bid = self._by_num[num].pop()
        if not self._by_num[num]:
            del self._by_num[num]
        del self._blocks[bid]
        self.bytes -= self._sizes.pop(bid)

    def remove(self, block_id: str) -> list:
        """Drop ``block_id`` and every kept block built on it (graphene
        ``fork_database::remove`` of an invalid block's branch); returns the
        ids dropped."""
        dropped, todo = [], [block_id]
        while todo:
            bid = todo.pop()
            block = self._blocks.pop(bid, None)
            if block is None:
                continue
            self.bytes -= self._sizes.pop(bid)
            num = block_num_of(bid)
            self._by_num[num].discard(bid)
            if not self._by_num[num]:
                del self._by_num[num]
            dropped.append(bid)
            todo.extend(i for i in self._by_num.get(num + 1, ())
                        if self._blocks[i]["previous"] == bid)
        return dropped

    def remove_one(self, block_id: str) -> None:
        """Drop ``block_id`` alone (it joined the main branch)."""
        if self._blocks.pop(block_id, None) is None:
            return
        self.bytes -= self._sizes.pop(block_id)
        num = block_num_of(block_id)
        self._by_num[num].discard(block_id)
        if not self._by_num[num]:
            del self._by_num[num]

    def prune(self, num: int) -> None:
        """Forget the blocks numbered ``num`` or lower (irreversible)."""
        for low in [n for n in self._by_num if n <= num]:
            for bid in self._by_num.pop(low):
                self._blocks.pop(bid, None)
                self.bytes -= self._sizes.pop(bid, 0)

    def branch_ids(self, block_id: str, on_main) -> tuple:
        """:meth:`branch` with the blocks' ids instead of the blocks."""
        ancestor, blocks = self._walk(block_id, on_main)
        return ancestor, [bid for bid, _block in blocks]

    def branch(self, block_id: str, on_main) -> tuple:
        """``(ancestor id, [blocks])``: the kept blocks from the first one
        after the main branch up to ``block_id``, in applying order, and the
        main-branch block they build on (``on_main(id)`` tells whether an
        id is on the main branch).  Raises LookupError when the walk leaves
        the kept blocks before reaching the main branch."""
        ancestor, blocks = self._walk(block_id, on_main)
        return ancestor, [block for _bid, block in blocks]

    def _walk(self, block_id: str, on_main) -> tuple:
        """``(ancestor id, [(id, block)])`` in applying order: the walk of
        :meth:`branch` back from ``block_id`` to the main branch."""
        blocks = []
        bid = block_id
        while not on_main(bid):
            block = self._blocks.get(bid)
            if block is None:
                raise LookupError(f"block {bid} is neither kept nor on the main branch")
            blocks.append((bid, block))
            bid = block["previous"]
        blocks.reverse()
        return bid, blocks
