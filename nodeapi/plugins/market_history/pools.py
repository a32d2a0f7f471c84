"""Liquidity pool history: every liquidity pool operation, numbered per
pool, for ``history_api::get_liquidity_pool_history*``.

Graphene reference: libraries/plugins/market_history/market_history_plugin.cpp
``update_liquidity_pool_histories`` (``liquidity_pool_history_object``
``5.4.K``: ``{id, pool, sequence, time, op_type, op}``; the pool's
``liquidity_pool_create`` gets sequence 1, its later operations the
previous sequence + 1, or 2 when the history starts after the creation)
and libraries/app/api.cpp (the two queries).  An :class:`IBlockConsumer`
attached to the chain by :func:`nodeapi.modes.node.build_plugins`.
"""

import collections

from zope.interface import implementer

from nodeapi.applied import IBlockConsumer, ICheckpointed
from nodeapi.history.oprecord import history_entry, pack_record

CREATE = 59
#: liquidity_pool_delete, _deposit, _withdraw, _exchange, _update: ops naming their pool.
WITH_POOL = frozenset((60, 61, 62, 63, 75))
#: blocks whose records are kept to take them back (the chain pops at most
#: as many, graphene ``GRAPHENE_MAX_UNDO_HISTORY``)
MAX_UNDO_BLOCKS = 10000


def _created_pool(result) -> str | None:
    """The pool id in a liquidity_pool_create result (a
    ``generic_operation_result`` ``[3, {new_objects: [...]}]``)."""
    if isinstance(result, list) and len(result) == 2 and isinstance(result[1], dict):
        for oid in result[1].get("new_objects", ()):
            if isinstance(oid, str) and oid.startswith("1.19."):
                return oid
    return None


@implementer(IBlockConsumer, ICheckpointed)
class LiquidityPoolHistory:
    """Liquidity pool history objects by pool, oldest first.

    :ivar count: number of history objects recorded (the next ``5.4.K``);
        checkpointed (:class:`~nodeapi.applied.ICheckpointed`)."""

    checkpoint_key = "pool_history"

    def __init__(self) -> None:
        self.count = 0
        self._by_pool: dict = {}  # pool id -> [record], ascending sequence
        # (block number, count before, [pool]) of the last blocks that
        # recorded pool operations, to take a popped one back
        self._undo: collections.deque = collections.deque(maxlen=MAX_UNDO_BLOCKS)

    def checkpoint_records(self):
        """Records: the count and each pool's history (never changed once
        recorded)."""
        pools = [(pool, list(records)) for pool, records in self._by_pool.items()]
        return [("count", self.count), *[("pool", [p, r]) for p, r in pools]]

    def checkpoint_usable(self, meta: dict) -> bool:
        """``ICheckpointed``: always True (its records restore it whole)."""
        return True

    def restore_checkpoint(self, meta: dict, records: list) -> None:
        """``ICheckpointed``: the count and each pool's history from the
        records of :meth:`checkpoint_records`."""
        self.count = next(v for k, v in records if k == "count")
        self._by_pool = {pool: list(items) for k, (pool, items) in
                         ((k, v) for k, v in records if k == "pool")}

    def block_applied(self, applied) -> None:
        """Record the block's liquidity pool operations."""
        count, pools = self.count, []
        for op in applied.operations:
            kind = op.op[0]
            if kind == CREATE:
                pool, sequence = _created_pool(op.result), 1
            elif kind in WITH_POOL:
                pool, sequence = op.op[1].get("pool"), 0
            else:
                continue
            if not isinstance(pool, str):
                continue
            records = self._by_pool.setdefault(pool, [])
            if sequence == 0:
                sequence = records[-1]["sequence"] + 1 if records else 2
            records.append({"id": f"5.4.{self.count}", "pool": pool, "sequence": sequence,
                            "time": applied.time_iso, "op_type": kind,
                            "op": history_entry(op.id_num,
                                                pack_record(op, applied.timestamp, ()))})
            self.count += 1
            pools.append(pool)
        if pools:
            self._undo.append((applied.block_num, count, pools))

    def block_popped(self, applied) -> None:
        """A block popped by a fork switch: its records are taken back
        (graphene's ``liquidity_pool_history_object`` sits in the database,
        under its undo database)."""
        if not self._undo or self._undo[-1][0] != applied.block_num:
            return  # the block recorded nothing (or is past MAX_UNDO_BLOCKS)
        _num, self.count, pools = self._undo.pop()
        for pool in reversed(pools):
            records = self._by_pool[pool]
            records.pop()
            if not records:
                del self._by_pool[pool]

    def _newest_first(self, pool: str, op_type) -> list:
        records = self._by_pool.get(pool, ())
        return [r for r in reversed(records) if op_type is None or r["op_type"] == op_type]

    def by_time(self, pool: str, start, stop, limit: int, op_type=None) -> list:
        """Records of ``pool`` (of ``op_type`` unless None), newest first,
        with ``stop < time <= start`` (ISO strings; None = no bound), at
        most ``limit``: ``[]`` when ``start <= stop``."""
        if start is not None and stop is not None and start <= stop:
            return []
        return self._walk(pool, op_type, lambda r: start is not None and r["time"] > start,
                          stop, limit)

    def by_sequence(self, pool: str, start, stop, limit: int, op_type=None) -> list:
        """Records of ``pool`` newest first from sequence ``start`` (None =
        the newest) while ``time > stop`` (ISO; None = no bound), at most
        ``limit``."""
        return self._walk(pool, op_type, lambda r: start is not None and r["sequence"] > start,
                          stop, limit)

    def _walk(self, pool: str, op_type, skip, stop, limit: int) -> list:
        """Newest first: records past ``skip`` while ``time > stop``."""
        out = []
        for r in self._newest_first(pool, op_type):
            if len(out) >= limit or (stop is not None and r["time"] <= stop):
                break
            if not skip(r):
                out.append(r)
        return out
