"""database API, graphene section "Blocks and transactions": block headers,
signed blocks and the transactions in them (a mixin of
:class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp section
"Blocks and transactions".  A block that does not exist gives ``null``.
"""

from nodeapi.api.arguments import api_limit, check_count, require_list
from nodeapi.api.base import api_function
from nodeapi.errors import ApiError


class BlocksMixin:
    """Blocks and the transactions in them."""

    @api_function
    def get_block_header(self, block_num: int):
        """Header ``{previous, timestamp, witness, transaction_merkle_root,
        extensions}`` of block ``block_num``, or null."""
        return self.chain.get_block_header(block_num) if block_num > 0 else None

    @api_function
    def get_block_header_batch(self, block_nums):
        """``[[num, header | null], ...]`` ascending by number, each number
        once (graphene returns a ``map<uint32_t, optional<block_header>>``)."""
        nums = set()
        for n in require_list(block_nums, "block_nums"):
            if isinstance(n, bool) or not isinstance(n, (int, str)) or not str(n).isdigit():
                raise ApiError(f"block_nums: expected block numbers, got {n!r}")
            nums.add(int(n))
        check_count(len(nums), api_limit(self.node, "get_blocks", 100), "blocks")
        return [[n, self.get_block_header(n)] for n in sorted(nums)]

    @api_function
    def get_block(self, block_num: int):
        """Signed block ``block_num`` (header, ``witness_signature``,
        ``transactions``), or null."""
        return self.chain.get_block(block_num) if block_num > 0 else None

    @api_function
    def get_transaction(self, block_num: int, trx_in_block: int):
        """Transaction ``trx_in_block`` (0-based) of block ``block_num``.

        :raises ApiError: no such block, or the block has fewer transactions.
        """
        block = self.chain.get_block(block_num) if block_num > 0 else None
        if block is None:
            raise ApiError(f"Block {block_num} does not exist")
        trxs = block["transactions"]
        if not 0 <= trx_in_block < len(trxs):
            raise ApiError(f"Block {block_num} has {len(trxs)} transaction(s); "
                           f"no transaction {trx_in_block}")
        return trxs[trx_in_block]
