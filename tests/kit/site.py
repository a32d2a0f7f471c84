"""Start the real RPC site of a real chain on a loopback port for tests
(kit.api.RecordingSession serves API sets called without a transport)."""

from contextlib import contextmanager

import pytest_twisted
from twisted.internet import reactor, task
from twisted.logger import globalLogPublisher

from nodeapi.api.answers import ApiAnswers
from nodeapi.api.base import api_function
from nodeapi.api.database import DatabaseApi
from nodeapi.api.registry import default_registry

from nodeapi.node import Node
from nodeapi.rpc.site import rpc_site


class RunningSite:
    """The site listening on 127.0.0.1; ``port`` is the TCP port."""

    def __init__(self, node, access, clock=None, port=0, **kwargs):
        """``clock``: the site's reactor for timers (default: the real one);
        it listens on the real reactor either way, on ``port`` (0: any
        free one; a stopped site's port to restart it)."""
        self.node = node
        self.site = rpc_site(node, access, reactor=clock or reactor, **kwargs)
        self.listening = reactor.listenTCP(port, self.site, interface="127.0.0.1")
        self.port = self.listening.getHost().port
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self):
        """Drop every client and stop listening; a Deferred."""
        for proto in list(self.site.ws_factory.connections):
            proto.dropConnection(abort=True)
        for connection in list(self.site.guard.connections):
            connection.abortConnection()
        return self.listening.stopListening()

    def stop_blocking(self):
        """:meth:`stop` from a (non-reactor) pytest fixture."""
        pytest_twisted.blockon(self.stop())


#: Plugins :func:`make_node` takes by name.
PLUGIN_NAMES = ("market_history", "grouped_orders", "custom_operations", "witness")


def make_node(chain, history=None, **kwargs):
    """A :class:`Node` over ``chain`` whose ``account_history`` plugin is
    ``history`` (default: a new ``AccountHistory`` consuming ``chain``),
    with the other plugins of :data:`PLUGIN_NAMES` given by name
    (``market_history=plugin``) and the remaining ``kwargs`` as Node fields.
    Its encoded-object cache runs in check mode: a chain object changed in
    place after it was stored fails the test that reads it."""
    kwargs.setdefault("api_answers", ApiAnswers(check=True))
    if history is None:
        from nodeapi.plugins.account_history.history import AccountHistory

        history = AccountHistory()
        chain.add_consumer(history)
    plugins = {"account_history": history}
    plugins.update((name, kwargs.pop(name)) for name in PLUGIN_NAMES if name in kwargs)
    return Node(chain=chain, plugins=plugins, reactor=reactor, **kwargs)


class LateDatabase(DatabaseApi):
    """The database set plus ``late_blob(size)``: a string of ``size``
    bytes from a Deferred that fires 50 ms later (an asynchronous result,
    which a connection cannot hold back the way it holds unread requests)."""

    @api_function
    def late_blob(self, size):
        """``"x" * size``, 50 ms later."""
        return task.deferLater(reactor, 0.05, lambda: "x" * int(size))


def late_registry():
    """The default registry with :class:`LateDatabase` as ``database``."""
    return dict(default_registry(), database=LateDatabase)


@contextmanager
def log_events(wanted):
    """The Twisted log events for which ``wanted(event)`` is true, logged
    inside the ``with`` block (a list that fills as they come)."""
    events = []

    def observer(event):
        if wanted(event):
            events.append(event)

    globalLogPublisher.addObserver(observer)
    try:
        yield events
    finally:
        globalLogPublisher.removeObserver(observer)
