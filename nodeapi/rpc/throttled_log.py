"""Warnings about limit events that hostile clients can cause by the
thousand: the first one of each kind at once, then at most one line per
kind per interval (a minute) with the number of events not logged in
between.  The RPC site's guard, its request-head deadlines and the limits
per user and address log through one of these.
"""

from collections import Counter

from twisted.logger import Logger

#: Seconds between two log lines of the same kind of limit event.
LOG_INTERVAL = 60.0


class ThrottledLog:
    """Warnings about limit events, at most one line per kind per interval.

    :param log: the :class:`twisted.logger.Logger` to write to.
    :param clock: ``IReactorTime`` (``seconds()``).
    :param interval: seconds between two lines of one kind.

    Each line carries the structured fields ``event`` (the kind),
    ``suppressed`` (events of that kind not logged since the previous line)
    and the caller's own fields.
    """

    def __init__(self, log: Logger, clock, interval: float = LOG_INTERVAL) -> None:
        self._log, self._clock, self._interval = log, clock, interval
        self._last: dict = {}  # kind -> time of its last line
        self._suppressed: Counter = Counter()

    def event(self, kind: str, text: str, **fields) -> bool:
        """Record one event of ``kind``; log ``text`` (a PEP 3101 format with
        ``fields``) unless a line of this kind was written less than the
        interval ago.  True when a line was written."""
        now = self._clock.seconds()
        last = self._last.get(kind)
        if last is not None and now - last < self._interval:
            self._suppressed[kind] += 1
            return False
        self._last[kind] = now
        suppressed = self._suppressed.pop(kind, 0)
        if suppressed:
            text += " ({suppressed} more since the last such line)"
        self._log.warn(text, event=kind, suppressed=suppressed, **fields)
        return True
