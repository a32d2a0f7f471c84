"""Client calls waiting for the gateway's subscription link
(:class:`~nodeapi.gateway.subscriptions.SubscriptionHub`): each goes on
with the link once one carries the subscriptions, fails with the
upstream's refusal to subscribe, or gives up after :data:`LINK_WAIT`
seconds with a JSON-RPC error.  There is no graphene counterpart: a
bitshares-core node answers subscriptions from its own database."""

from typing import Any

from twisted.internet import defer

from nodeapi.errors import ApiError

#: Seconds a client's call waits for a subscription link.
LINK_WAIT = 30.0


class LinkWait:
    """The calls waiting for a link.

    :param clock: an ``IReactorTime`` (each wait times out on it).
    :param patience: seconds one call waits (default :data:`LINK_WAIT`)."""

    def __init__(self, clock: Any, patience: float = LINK_WAIT) -> None:
        self.clock = clock
        self.patience = patience
        self._waiting: list = []

    def wait(self) -> defer.Deferred:
        """A Deferred firing with the link given to :meth:`release`, failing
        with what :meth:`fail` is given, or with :class:`ApiError` ("No
        upstream node is available for subscriptions") after
        ``patience`` seconds."""
        d = defer.Deferred()
        self._waiting.append(d)
        timer = self.clock.callLater(self.patience, self._timed_out, d)
        d.addBoth(lambda r: (timer.cancel() if timer.active() else None, r)[1])
        return d

    def _timed_out(self, d: defer.Deferred) -> None:
        if d in self._waiting:
            self._waiting.remove(d)
            d.errback(ApiError("No upstream node is available for subscriptions"))

    def release(self, link: Any) -> None:
        """Every waiting call goes on with ``link``."""
        waiting, self._waiting = self._waiting, []
        for d in waiting:
            d.callback(link)

    def fail(self, exc: Exception) -> None:
        """Every waiting call fails with ``exc``."""
        waiting, self._waiting = self._waiting, []
        for d in waiting:
            d.errback(exc)
