"""The searchdb plugin's pace: synchronized or catching up, and the bulk
size that goes with it (docs/searchdb-plugin.rst).

Bulk size in lines: ``bulk_replay`` while not synchronized, ``bulk_sync``
once synchronized.  Synchronized means: a live block (not replay) whose
time is within :data:`SYNC_WINDOW` seconds of the injected clock's
``seconds()``; it lasts (hysteresis) until a block is more than
:data:`UNSYNC_WINDOW` seconds old, so an indexer whose upstream's
irreversible block advances by two (one of them handed over as not live)
does not flip between the two states.  The reference
(libraries/plugins/elasticsearch/elasticsearch_plugin.cpp
``checkState``) switches on the block time alone.
"""

from typing import Any

#: Seconds between a live block's time and the clock within which the node
#: counts as synchronized.
SYNC_WINDOW = 30.0
#: Seconds a block may be behind the clock before a synchronized node counts
#: as catching up again.
UNSYNC_WINDOW = 120.0


class Pace:
    """Synchronized or catching up (module text).

    :param clock: ``seconds()`` (an ``IReactorTime``).
    :param bulk_replay: ``searchdb-bulk-replay``, lines (2 per document).
    :param bulk_sync: ``searchdb-bulk-sync``, lines.
    :ivar synchronized: the state after the last block seen (False first).
    """

    def __init__(self, clock: Any, bulk_replay: int, bulk_sync: int) -> None:
        self.clock = clock
        self.bulk_replay, self.bulk_sync = bulk_replay, bulk_sync
        self.synchronized = False

    @property
    def lines(self) -> int:
        """Lines per bulk in the current state."""
        return self.bulk_sync if self.synchronized else self.bulk_replay

    def observe(self, applied) -> bool:
        """Take the state after the
        :class:`~nodeapi.applied.AppliedBlock` ``applied``; True when it
        changed."""
        behind = abs(self.clock.seconds() - applied.timestamp)
        synced = (behind <= UNSYNC_WINDOW if self.synchronized
                  else not applied.replay and behind <= SYNC_WINDOW)
        changed, self.synchronized = synced != self.synchronized, synced
        return changed
