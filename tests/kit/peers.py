"""Peer-service helpers: fast reconnect parameters, a loopback listener
and an orderly shutdown (nodeapi.peers)."""

import pytest_twisted
from twisted.internet import reactor, task
from twisted.internet.endpoints import TCP4ServerEndpoint

#: PeerService parameters for tests: reconnect after 50..200 ms, no jitter


FAST = {"reconnect_initial_delay": 0.05, "reconnect_max_delay": 0.2, "reconnect_jitter": 0}


@pytest_twisted.inlineCallbacks
def listen(factory, port=0):
    """Listen with ``factory`` on 127.0.0.1 (``port`` 0: any); the port."""
    lp = yield TCP4ServerEndpoint(reactor, port, interface="127.0.0.1").listen(factory)
    return lp


@pytest_twisted.inlineCallbacks
def close(service, *ports):
    """Stop ``service``, then every listening port, then let 50 ms of
    connection teardown run."""
    yield service.stopService()
    for p in ports:
        yield p.stopListening()
    yield task.deferLater(reactor, 0.05, lambda: None)
