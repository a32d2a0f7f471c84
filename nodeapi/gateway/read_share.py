"""Identical subscribing reads of many clients within one block share one
upstream call on their subscription connection.

A subscribing read (``get_full_accounts([...], true)``, ``get_objects``
with a subscribe callback set, :mod:`nodeapi.gateway.subscribing_reads`)
travels on the connection that carries its client's subscriptions (a
shard's link, :mod:`nodeapi.gateway.shards`).  When many wallets open at
once (a page load, a reconnect after a failover) they send the same
reads.  The first is sent; an identical one (same function, same
arguments as sent) on the same link

* while the first is in flight waits for its answer (the upstream
  subscribed what it returned on that link, for all of them);
* after it was answered takes that answer while the link, its
  subscription generation (the union was not subscribed again, so nothing
  it subscribed was released) and the head block its notices showed are
  unchanged, and for ``max_age`` seconds at most (a block without a
  notice on the link cannot make an answer old past that).

Each client then takes its own share of what the answer subscribes (its
interest, its budget), as it would from an answer of its own.  A failed
or lost call fails its waiters too (each sends again as after a lost
link).  At most ``max_entries`` answers are held; past that, reads are
sent unshared.
"""

from typing import Callable

import attr
import orjson
from twisted.internet import defer
from twisted.python.failure import Failure


@attr.s(auto_attribs=True)
class _Entry:
    link: object
    generation: int
    head: object
    at: float
    answer: object = None  # bytes once answered
    waiting: list = attr.Factory(list)


class ReadShare:
    """The shared subscribing reads of one shard (module text).

    :param clock: ``IReactorTime`` (answer ages).
    :param max_age: seconds an answered read is shared at most.
    :param max_entries: answers and reads in flight held at most.
    :ivar shared: reads answered with another's answer.
    """

    def __init__(self, clock, max_age: float = 1.0, max_entries: int = 1024) -> None:
        self.clock, self.max_age, self.max_entries = clock, max_age, max_entries
        self.shared = 0
        self._entries: dict = {}

    def __len__(self) -> int:
        return len(self._entries)

    def ask(self, function: str, args: list, link, generation: int, head,
            send: Callable[[], defer.Deferred]) -> defer.Deferred:
        """The answer (JSON bytes) of ``function(args)`` on ``link`` in
        subscription ``generation`` with the link's noticed ``head``
        (None: unknown, then only a read in flight is shared): another's
        when one may be shared, else ``send()``'s."""
        key = (function, orjson.dumps(args))
        now = self.clock.seconds()
        entry = self._entries.get(key)
        if entry is not None and entry.link is link and entry.generation == generation:
            if entry.answer is None:
                self.shared += 1
                d = defer.Deferred()
                entry.waiting.append(d)
                return d
            if head is not None and entry.head == head and now - entry.at <= self.max_age:
                self.shared += 1
                return defer.succeed(entry.answer)
        if len(self._entries) >= self.max_entries:
            self._prune(now)
        if len(self._entries) >= self.max_entries and key not in self._entries:
            return send()
        entry = self._entries[key] = _Entry(link, generation, head, now)
        return send().addBoth(self._answered, key, entry)

    def _answered(self, result, key, entry: _Entry):
        waiting, entry.waiting = entry.waiting, []
        if isinstance(result, Failure):
            if self._entries.get(key) is entry:
                del self._entries[key]
            for d in waiting:
                d.errback(result)
            return result
        entry.answer, entry.at = result, self.clock.seconds()
        for d in waiting:
            d.callback(result)
        return result

    def _prune(self, now: float) -> None:
        """Drop the answers too old to be shared."""
        for key in [k for k, e in self._entries.items()
                    if e.answer is not None and now - e.at > self.max_age]:
            del self._entries[key]

    def new_head(self) -> None:
        """The link's notices showed a newer head: no answer read before
        it is shared any more (reads in flight still are)."""
        self._entries = {k: e for k, e in self._entries.items() if e.answer is None}
