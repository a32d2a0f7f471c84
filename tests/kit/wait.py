"""The one ``wait_for``: poll a condition on the running reactor
(:func:`wait_for`) or, for tests driving subprocess daemons without a
reactor, blocking (:func:`wait_until`)."""

import time

from twisted.internet import defer, reactor
from twisted.internet.task import deferLater


@defer.inlineCallbacks
def wait_for(predicate, timeout=20.0, interval=0.01):
    """A Deferred firing once ``predicate()`` is true (checked every
    ``interval`` s); fails with AssertionError after ``timeout`` s."""
    for _ in range(int(timeout / interval)):
        if predicate():
            return
        yield deferLater(reactor, interval, lambda: None)
    raise AssertionError("condition not reached")


def wait_until(predicate, timeout=30, what="condition", interval=0.2):
    """Blocking form for subprocess daemons (no reactor in the test):
    poll ``predicate()`` every ``interval`` s; its first true value, or
    AssertionError naming ``what`` after ``timeout`` s."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"{what} not reached in {timeout} s")
