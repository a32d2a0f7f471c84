"""history API, the operations of one block (a section of
:class:`nodeapi.api.history.HistoryApi`): ``get_block_operation_history``,
``get_block_operations_by_time``.

Graphene reference: bitshares-core libraries/app/api.cpp (``history_api``).
Times are fc ``time_point_sec`` strings (``YYYY-MM-DDTHH:MM:SS``).  The
answers come from ``node.account_history()`` (:class:`nodeapi.applied.IAccountHistory`,
possibly Deferreds); without a history plugin they are ``[]``.
"""

from typing import Any

from nodeapi.api.base import Section, api_function
from nodeapi.api.history.arguments import U16, U32, optional_time, uint


class BlockHistory(Section):
    """The operations of a block, by number or by time."""

    @api_function
    def get_block_operation_history(self, block_num: int, trx_in_block=None) -> Any:
        """The operations of block ``block_num`` by (trx_in_block,
        op_in_trx, virtual_op), only those of transaction ``trx_in_block``
        when given."""
        block_num = uint(block_num, "block_num", U32)
        trx = None if trx_in_block is None else uint(trx_in_block, "trx_in_block", U16)
        history = self.node.account_history()
        if history is None:
            return []
        return history.get_block_operation_history(block_num, trx)

    @api_function
    def get_block_operations_by_time(self, start=None) -> Any:
        """The operations of the newest block holding operations at or
        before ``start`` (default: the newest), newest first."""
        start_s = optional_time(start, "start")
        history = self.node.account_history()
        if history is None:
            return []
        return history.get_block_operations_by_time(start_s)
