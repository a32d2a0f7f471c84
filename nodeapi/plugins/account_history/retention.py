"""How much account history the in-memory ``account_history`` plugin keeps:
its options and the trimming rule of bitshares-core 7.x
(libraries/plugins/account_history/account_history_plugin.cpp,
``get_max_ops_to_keep``, ``remove_old_histories_by_account``,
``remove_old_histories``).

- An account keeps at most ``max-ops-per-account`` entries (its newest),
  or ``extended-max-ops-per-account`` when it is listed in
  ``extended-history-by-account`` or its registrar is listed in
  ``extended-history-by-registrar``; a limit of 0 keeps 1 (the newest entry
  is never removed).
- Entries of operations in the latest ``min-blocks-to-keep`` blocks are
  removed only while the account holds more than
  ``max-ops-per-acc-by-min-blocks`` entries; an account left over its limit
  that way is looked at again once its oldest entry leaves that window.
- Trimming never renumbers: an account's ``sequence`` numbers and its total
  count go on, the removed ones are counted (graphene
  ``account_statistics_object::removed_ops``).
"""

import heapq
from array import array

import attr

#: graphene's ``uint64_t(-1)``: the default of the two ``max-ops`` options.
UNLIMITED = (1 << 64) - 1


@attr.s(frozen=True, slots=True, auto_attribs=True)
class HistoryLimits:
    """The ``account_history`` options (config.ini names with ``-`` for
    ``_``), as given; :class:`Retention` applies graphene's adjustments
    (an extended or by-min-blocks limit below ``max_ops_per_account`` is
    raised to it).

    :ivar max_ops_per_account: entries kept per account (int, 0 = none at
        all: the plugin then records no account history).
    :ivar extended_max_ops_per_account: the same for extended accounts.
    :ivar min_blocks_to_keep: blocks whose operations are protected (int).
    :ivar max_ops_per_acc_by_min_blocks: the most entries the protection
        keeps per account (int).
    :ivar partial_operations: True: keep only operations some kept entry
        refers to.
    :ivar track_accounts: account ids (``"1.2.N"``) to keep history for;
        empty = every account.
    :ivar extended_history_accounts: account ids with the extended limit.
    :ivar extended_history_registrars: registrar ids whose accounts get the
        extended limit.
    """

    max_ops_per_account: int = UNLIMITED
    extended_max_ops_per_account: int = UNLIMITED
    min_blocks_to_keep: int = 30000
    max_ops_per_acc_by_min_blocks: int = 1000
    partial_operations: bool = False
    track_accounts: frozenset = attr.ib(default=frozenset(), converter=frozenset)
    extended_history_accounts: frozenset = attr.ib(default=frozenset(), converter=frozenset)
    extended_history_registrars: frozenset = attr.ib(default=frozenset(), converter=frozenset)


class AccountLog:
    """One account's kept entries: the 1.11 instances in ascending order.

    :ivar ops: ``array('q')``; the first :attr:`dead` items are removed
        entries not compacted away yet (compaction is amortized, so trimming
        an account with a long history costs O(1) per entry).
    :ivar dead: removed entries still at the front of :attr:`ops`.
    :ivar removed: entries removed in all (graphene ``removed_ops``).
    :ivar keep: the most entries to keep (int >= 1).
    """

    __slots__ = ("ops", "dead", "removed", "keep")

    def __init__(self, keep: int) -> None:
        self.ops = array("q")
        self.dead = 0
        self.removed = 0
        self.keep = keep

    @property
    def kept(self) -> int:
        """Number of kept entries."""
        return len(self.ops) - self.dead

    @property
    def total(self) -> int:
        """Entries ever added (graphene ``total_ops``): sequence of the newest."""
        return self.removed + len(self.ops) - self.dead

    def oldest(self) -> int:
        """1.11 instance of the oldest kept entry (IndexError when none)."""
        return self.ops[self.dead]

    def drop_oldest(self) -> int:
        """Remove the oldest kept entry; returns its 1.11 instance."""
        m = self.ops[self.dead]
        self.dead += 1
        self.removed += 1
        if self.dead >= 16 and self.dead * 2 >= len(self.ops):
            del self.ops[:self.dead]
            self.dead = 0
        return m


class Retention:
    """Applies :class:`HistoryLimits` to :class:`AccountLog` objects.

    :param limits: the options.
    :param registrar_of: ``account id -> registrar id`` (needed only with
        ``extended_history_registrars``; the chain state answers it).
    :raises ValueError: registrars configured without ``registrar_of``.
    """

    def __init__(self, limits: HistoryLimits, registrar_of=None) -> None:
        if limits.extended_history_registrars and registrar_of is None:
            raise ValueError("extended-history-by-registrar needs the chain's registrars")
        self.limits = limits
        self.max_ops = limits.max_ops_per_account
        self.extended_max_ops = max(limits.extended_max_ops_per_account, self.max_ops)
        self.by_min_blocks = max(limits.max_ops_per_acc_by_min_blocks, self.max_ops)
        self._registrar_of = registrar_of
        self.latest_removable = 0  # block number; entries at or below it are not protected
        self._exceeded: dict = {}  # account -> block number of its oldest kept entry
        self._queue: list = []  # heap of (block number, account); stale items skipped

    def new_log(self, account: str) -> AccountLog:
        """An empty log for ``account`` with its limit (graphene
        ``get_max_ops_to_keep``; registrars do not change, so it is fixed)."""
        lim = self.limits
        extended = account in lim.extended_history_accounts
        if not extended and lim.extended_history_registrars:
            extended = self._registrar_of(account) in lim.extended_history_registrars
        keep = self.extended_max_ops if extended else self.max_ops
        return AccountLog(keep or 1)

    def start_block(self, block_num: int) -> None:
        """Set the protection window for the entries of block ``block_num``."""
        keep = self.limits.min_blocks_to_keep
        self.latest_removable = block_num - keep if block_num > keep else 0

    def trim(self, account: str, log: AccountLog, block_num_of) -> list:
        """Remove the oldest entries of ``account`` over its limit (graphene
        ``remove_old_histories_by_account``); ``block_num_of(m)`` gives the
        block number of operation ``1.11.m``.  Returns the removed 1.11
        instances, oldest first."""
        total = log.total
        to_remove = total - log.keep if total > log.keep else 0
        by_blocks = total - self.by_min_blocks if total > self.by_min_blocks else 0
        latest = self.latest_removable
        oldest_block = latest
        removed = []
        while log.removed < to_remove and log.kept > 1:
            oldest_block = block_num_of(log.oldest())
            if oldest_block > latest and log.removed >= by_blocks:
                break
            removed.append(log.drop_oldest())
        if log.removed < to_remove and oldest_block > latest:
            if self._exceeded.get(account) != oldest_block:
                self._exceeded[account] = oldest_block
                heapq.heappush(self._queue, (oldest_block, account))
        else:
            self._exceeded.pop(account, None)
        return removed

    def due(self) -> list:
        """Accounts left over their limit whose oldest entry has left the
        protection window (graphene ``remove_old_histories``), each once;
        the caller trims them."""
        out = []
        queue, exceeded, latest = self._queue, self._exceeded, self.latest_removable
        if latest == 0:
            return out
        while queue and queue[0][0] <= latest:
            block_num, account = heapq.heappop(queue)
            if exceeded.get(account) == block_num:
                del exceeded[account]
                out.append(account)
        return out

    def state(self) -> dict:
        """A copy of what the retention remembers between blocks, for a
        checkpoint: ``{"latest_removable": block number, "exceeded":
        {account: block number}, "queue": [(block number, account)]}``."""
        return {"latest_removable": self.latest_removable, "exceeded": dict(self._exceeded),
                "queue": list(self._queue)}

    def restore(self, state: dict) -> None:
        """Take back a :meth:`state` (its lists may have become JSON arrays)."""
        self.latest_removable = state["latest_removable"]
        self._exceeded = dict(state["exceeded"])
        self._queue = [tuple(item) for item in state["queue"]]
        heapq.heapify(self._queue)

    @property
    def exceeded_count(self) -> int:
        """Accounts currently kept over their limit by the protection."""
        return len(self._exceeded)
