"""The ``template`` plugin's block consumer: applied operations counted by
type, from a configured block on (bitshares-core
libraries/plugins/template_plugin/template_plugin.cpp ``onBlock``, which
connects to ``database::applied_block`` the same way and does no more).

Checkpointed (:class:`~nodeapi.applied.ICheckpointed`): without it every
start of a node running the plugin would replay the whole block log.
"""

from zope.interface import implementer

from nodeapi.applied import IBlockConsumer, ICheckpointed


@implementer(IBlockConsumer, ICheckpointed)
class OperationCounter:
    """Applied operations by type number.

    :param start_block: blocks below this number are not counted (the
        ``template-start-block`` option).
    :ivar blocks: blocks counted.
    :ivar by_type: ``{operation type number: operations counted}``.
    :ivar last_block_num: the last block counted, 0 before any.
    """

    checkpoint_key = "template"

    def __init__(self, start_block: int = 0) -> None:
        self.start_block = start_block
        self.blocks = 0
        self.by_type: dict = {}
        self.last_block_num = 0

    def block_applied(self, applied) -> None:
        """Count the block's operations (virtual ones too) by type."""
        if applied.block_num < self.start_block:
            return
        self.blocks += 1
        self.last_block_num = applied.block_num
        for op in applied.operations:
            self.by_type[op.op[0]] = self.by_type.get(op.op[0], 0) + 1

    def block_popped(self, applied) -> None:
        """A block popped by a fork switch (the chain calls this newest
        first, :class:`~nodeapi.applied.IBlockConsumer`): its operations are
        counted out again, so the figures are those of the chain's
        blocks."""
        if applied.block_num < self.start_block:
            return
        self.blocks -= 1
        self.last_block_num = applied.block_num - 1 if self.blocks else 0
        for op in applied.operations:
            left = self.by_type.get(op.op[0], 0) - 1
            if left > 0:
                self.by_type[op.op[0]] = left
            else:
                self.by_type.pop(op.op[0], None)

    def checkpoint_records(self):
        """One record: the figures after the last block applied."""
        return [("figures", {"blocks": self.blocks, "last": self.last_block_num,
                             "by_type": sorted(self.by_type.items())})]

    def checkpoint_usable(self, meta: dict) -> bool:
        """Every checkpoint is: the figures need nothing outside it."""
        return True

    def restore_checkpoint(self, meta: dict, records: list) -> None:
        """The figures of :meth:`checkpoint_records`."""
        figures = dict(records)["figures"]
        self.blocks, self.last_block_num = figures["blocks"], figures["last"]
        self.by_type = {int(kind): count for kind, count in figures["by_type"]}
