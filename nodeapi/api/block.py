"""The block API set (login accessor ``block``, access name ``block_api``).

Graphene reference: bitshares-core libraries/app/api.cpp
``block_api::get_blocks``.  Peers following this node fetch their sync
batches with it (:mod:`nodeapi.peers.follower`).
"""

from nodeapi.api.base import ApiSet, api_function
from nodeapi.errors import ApiError, ApiLimitExceeded


class BlockApi(ApiSet):
    """graphene ``block_api``: signed blocks by number range."""

    name = "block"

    @api_function
    def get_blocks(self, block_num_from: int, block_num_to: int):
        """Blocks ``block_num_from`` .. ``block_num_to`` inclusive, each the
        signed block (as ``database.get_block``) or null when the node does
        not have it.  At most ``api-limit-get-blocks`` blocks per call.

        :raises ApiError: ``block_num_to`` < ``block_num_from`` or a negative
            number; :class:`~nodeapi.errors.ApiLimitExceeded` for too many blocks.
        """
        if block_num_from < 0:
            raise ApiError(f"block_num_from must not be negative, got {block_num_from}")
        if block_num_to < block_num_from:
            raise ApiError(f"block_num_to ({block_num_to}) must not be less than "
                           f"block_num_from ({block_num_from})")
        limit = self.node.limits.get_blocks
        if block_num_to - block_num_from + 1 > limit:
            raise ApiLimitExceeded(limit, f"Too many blocks: "
                                          f"{block_num_to - block_num_from + 1} requested, ")
        chain = self.node.chain
        return [chain.get_block(n) if n > 0 else None
                for n in range(block_num_from, block_num_to + 1)]
