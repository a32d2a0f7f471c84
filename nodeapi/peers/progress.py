"""Progress lines of a long catch-up (a follower syncing from a peer, an
indexer following its upstream), like the replay's
(:func:`nodeapi.chain.replay.replay_blocks`): the block reached, the target,
blocks per second since the previous line and the time left, every
:data:`EVERY` seconds of the clock while there is work left.
"""

#: Seconds between two progress lines.
EVERY = 5.0


class CatchUpProgress:
    """Counts blocks and logs a progress line now and then.

    :param clock: ``IReactorTime`` (``seconds()``).
    :param log: the ``twisted.logger.Logger`` to write to.
    :param what: the start of each line (``"Sync from peer 1.2.3.4:8090"``).
    :param every: seconds between two lines.

    Each line: ``"{what}: block {num} of {target}, {rate} blocks/s, ETA
    {eta} s"`` with the structured fields ``num``, ``target``, ``rate``
    (blocks/s since the previous line) and ``eta`` (seconds).
    """

    def __init__(self, clock, log, what: str, every: float = EVERY) -> None:
        self.clock, self.log, self.what, self.every = clock, log, what, every
        self._since = None  # (time, block) of the last line or of the start

    def step(self, num: int, target: int) -> bool:
        """Block ``num`` of ``target`` is done; True when a line was logged.
        A step with nothing left resets the count (the next catch-up
        starts afresh)."""
        now = self.clock.seconds()
        if num >= target:
            self._since = None
            return False
        if self._since is None:
            self._since = (now, num)
            return False
        then, before = self._since
        if now - then < self.every:
            return False
        rate = (num - before) / max(now - then, 1e-9)
        self._since = (now, num)
        self.log.info(self.what + ": block {num} of {target}, {rate:.0f} blocks/s, "
                      "ETA {eta:.0f} s", num=num, target=target, rate=rate,
                      eta=(target - num) / max(rate, 1e-9))
        return True
