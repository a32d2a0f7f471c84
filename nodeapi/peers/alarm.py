"""A sleep that a notice can cut short: the loop of a follower waits for
the next poll or for the upstream's block notice, whichever comes first;
the gateway's upstream check waits for the next poll or for the close of
its connection."""

from typing import Any, Optional

from twisted.internet import defer


class Alarm:
    """One sleeper at a time on ``clock``.

    :param clock: ``IReactorTime`` (``callLater``).
    """

    def __init__(self, clock: Any) -> None:
        self.clock = clock
        self._wake: Optional[defer.Deferred] = None

    def sleep(self, seconds: float) -> defer.Deferred:
        """``Deferred[None]`` firing after ``seconds``, or at the next
        :meth:`ring` if that comes first."""
        wake = self._wake = defer.Deferred()
        timer = self.clock.callLater(seconds, self.ring)
        return wake.addBoth(lambda r: timer.cancel() if timer.active() else None)

    def ring(self) -> None:
        """End the current sleep now (nothing when none is running)."""
        wake, self._wake = self._wake, None
        if wake is not None:
            wake.callback(None)
