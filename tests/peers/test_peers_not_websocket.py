"""An upstream or seed node that is not a WebSocket server (an HTTP-only
port, the wrong port): one clear line per attempt, growing delays, no
critical ``automat`` ``NoTransition`` traceback from Twisted's
ClientService; a refused port is one line per attempt too."""

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.task import Clock
from twisted.logger import LogLevel, formatEvent, globalLogPublisher
from twisted.web.resource import Resource
from twisted.web.server import Site

from nodeapi.peers.service import PeerService
from nodeapi.peers.upstream import UpstreamService
from nodeapi.protocol.node_address import parse_node_address

from kit.daemon import free_port
from kit.wait import wait_for


class Captured:
    def __init__(self):
        self.events = []

    def __enter__(self):
        globalLogPublisher.addObserver(self.events.append)
        return self

    def __exit__(self, *exc):
        globalLogPublisher.removeObserver(self.events.append)

    def lines(self, text):
        return [formatEvent(e) for e in self.events if text in (formatEvent(e) or "")]

    def critical(self):
        return [e for e in self.events if e.get("log_level") == LogLevel.critical]


class Hello(Resource):
    isLeaf = True

    def render_GET(self, request):
        return b"hello"


def http_only():
    """A plain HTTP server (answers 200 "hello" to every GET)."""
    site = Site(Hello())
    site.noisy = False
    site.log = lambda request: None
    return reactor.listenTCP(0, site, interface="127.0.0.1")


@pytest_twisted.inlineCallbacks
def test_upstream_that_is_no_websocket_server_is_one_line_per_attempt():
    port = http_only()
    clock = Clock()
    url = f"ws://127.0.0.1:{port.getHost().port}"
    svc = UpstreamService(parse_node_address(url), [], reactor, clock=clock)
    with Captured() as log:
        svc.startService()
        try:
            for attempt in range(1, 6):
                yield wait_for(lambda: len(log.lines("not a WebSocket RPC server")) >= attempt)
                clock.advance(60)  # the retry delay, at most 30 s
        finally:
            yield svc.stopService()
            yield port.stopListening()
    lines = log.lines("not a WebSocket RPC server")
    assert len(lines) >= 5
    assert lines[0].startswith(f"Upstream {url}/ failed (1 in a row): not a WebSocket RPC "
                               "server (")
    assert "200" in lines[0]
    delays = [float(line.rsplit("reconnecting in ", 1)[1].split()[0]) for line in lines[:5]]
    # backoff grows over failed handshakes (0.5 s * 1.5^n plus up to 1 s of
    # jitter, so only delays a few failures apart are ordered for certain)
    assert delays[0] < delays[4]
    assert not log.lines("NoTransition") and not log.lines("Traceback")
    assert not log.critical()
    assert not log.lines("Scheduling retry") and not log.lines("dropping connection")


@pytest_twisted.inlineCallbacks
def test_refused_upstream_is_one_line_per_attempt():
    clock = Clock()
    url = f"ws://127.0.0.1:{free_port()}"
    svc = UpstreamService(parse_node_address(url), [], reactor, clock=clock)
    with Captured() as log:
        svc.startService()
        try:
            for attempt in range(1, 3):
                yield wait_for(lambda: len(log.lines("unreachable")) >= attempt)
                clock.advance(60)
        finally:
            yield svc.stopService()
    lines = log.lines("unreachable")
    assert lines[0].startswith(f"Upstream {url}/ unreachable (") and "refused" in lines[0]


@pytest_twisted.inlineCallbacks
def test_seed_node_without_scheme_that_is_no_websocket_server_says_so(new_chain):
    """bitshares' seed-node = host:port names a P2P endpoint: a peers
    service without a P2P node follows such an address over RPC, and when
    the port is no WebSocket server the line says how to use P2P instead,
    once; retries keep going with a growing delay and short lines."""
    port = http_only()
    clock = Clock()
    address = f"127.0.0.1:{port.getHost().port}"
    svc = PeerService(new_chain(), seed_nodes=[address], reactor=reactor, clock=clock)
    with Captured() as log:
        svc.startService()
        try:
            for attempt in range(1, 3):
                yield wait_for(lambda: len(log.lines("not a WebSocket RPC server")) >= attempt)
                clock.advance(600)
        finally:
            yield svc.stopService()
            yield port.stopListening()
    lines = log.lines("not a WebSocket RPC server")
    assert lines[0].startswith(f"Peer {address} failed (1 in a row): not a "
                               "WebSocket RPC server (")
    assert "this node has no P2P node" in lines[0] and "--p2p-endpoint" in lines[0]
    assert "(2 in a row)" in lines[1]
    assert "P2P" not in lines[1]  # said once
    assert not log.lines("NoTransition") and not log.lines("Traceback")
