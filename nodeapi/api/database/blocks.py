"""database API, graphene section "Blocks and transactions": block headers,
signed blocks and the transactions in them (a section of
:class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp section
"Blocks and transactions".  A block that does not exist gives ``null``.
"""

from nodeapi.api.arguments import (
    check_count, optional_bool, require_hex, require_list)
from nodeapi.api.base import Section, api_function, fc_int
from nodeapi.errors import ApiError
from nodeapi.protocol.times import parse_time
from nodeapi.protocol.transaction import transaction_id


class Blocks(Section):
    """Blocks and the transactions in them."""

    @api_function
    def get_block_header(self, block_num: int, with_witness_signature: bool | None = None):
        """Header ``{previous, timestamp, witness, transaction_merkle_root,
        extensions}`` of block ``block_num``, or null; with
        ``with_witness_signature`` true also its ``witness_signature``
        (graphene ``maybe_signed_block_header``)."""
        signed = optional_bool(with_witness_signature, "with_witness_signature")
        header = self.chain.get_block_header(block_num) if block_num > 0 else None
        if header is not None and signed:
            header = dict(header, witness_signature=self.chain.get_block(block_num)[
                "witness_signature"])
        return header

    @api_function
    def get_block_header_batch(self, block_nums, with_witness_signatures: bool | None = None):
        """``[[num, header | null], ...]`` ascending by number, each number
        once (graphene returns a ``map<uint32_t, optional<block_header>>``);
        ``with_witness_signatures`` as for :meth:`get_block_header`."""
        optional_bool(with_witness_signatures, "with_witness_signatures")
        nums = set()
        for n in require_list(block_nums, "block_nums"):
            num = fc_int(n, "block_nums")
            if not 0 <= num <= 0xFFFFFFFF:
                raise ApiError(f"block_nums: expected block numbers, got {n!r}")
            nums.add(num)
        check_count(len(nums), self.node.limits.get_blocks, "blocks")
        return [[n, self.get_block_header(n, with_witness_signatures)] for n in sorted(nums)]

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

    @api_function
    def get_recent_transaction_by_id(self, txid):
        """The signed transaction with id ``txid`` (40 hex digits) if a
        block holds it and it has not expired yet, else null (graphene
        ``get_recent_transaction``: the transaction index keeps a
        transaction until its expiration)."""
        txid = require_hex(txid, 20, "transaction id").hex()
        expiration = self.chain.recent_transaction_expiration(txid)
        if expiration is None:
            return None
        params = self.chain.state.objects["2.0.0"]["parameters"]
        earliest = expiration - int(params["maximum_time_until_expiration"])
        for num in range(self.chain.head_block_num, 0, -1):
            block = self.chain.get_block(num)
            if parse_time(block["timestamp"]) < earliest:
                break
            for trx in block["transactions"]:
                if transaction_id(trx) == txid:
                    return {k: v for k, v in trx.items() if k != "operation_results"}
        return None
