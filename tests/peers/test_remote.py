"""One connection to another node (nodeapi.peers.remote.RemoteNode) with an
owner of the test's own (IRemoteOwner) over loopback sockets: the calls'
bound in flight and their timeouts on a Clock, the owner's chain check,
and the quiet reconnections within the grace after a planned stop."""

import pytest
import pytest_twisted
from twisted.application.internet import backoffPolicy
from twisted.internet import defer, reactor, task
from twisted.logger import formatEvent, globalLogPublisher
from zope.interface import implementer

from nodeapi.peers.errors import RemoteBusy, UpstreamTimeout
from nodeapi.peers.reconnect import RESTART_GRACE
from nodeapi.peers.remote import IRemoteOwner, RemoteNode
from nodeapi.protocol.node_address import parse_node_address
from nodeapi.rpc.access import ApiAccess
from nodeapi.rpc.site import rpc_site

from kit.chain import produce
from kit.peer_stub import SILENT, ChainRpcFactory
from kit.peers import listen
from kit.site import make_node
from kit.wait import wait_for


@implementer(IRemoteOwner)
class Owner:
    """Records what it is told; its chain is ``chain_id``."""

    def __init__(self, chain_id):
        self.chain_id = chain_id
        self.heads, self.timed_out, self.errors, self.lost_count = [], [], [], 0

    def claim_chain(self, remote, chain_id):
        return chain_id == self.chain_id

    def connected(self, remote, head):
        self.heads.append(head)

    def notice(self, remote, callback_id, payload):
        pass

    def call_timed_out(self, remote, method):
        self.timed_out.append(method)

    def failed(self, remote, error):
        self.errors.append(error)
        return False

    def lost(self, remote):
        self.lost_count += 1


@pytest.fixture
def lines():
    out = []

    def observer(event):
        if event.get("log_namespace", "").startswith("nodeapi.peers"):
            out.append((event["log_level"].name, formatEvent(event)))

    globalLogPublisher.addObserver(observer)
    yield out
    globalLogPublisher.removeObserver(observer)


@pytest_twisted.inlineCallbacks
def test_calls_beyond_the_bound_wait_and_every_call_times_out(producer):
    """Two calls in flight at most, twenty waiting: of 25 ``get_block``
    calls the node never answers, two are sent, twenty wait and three fail
    at once with RemoteBusy; when the timeout passes (a Clock), each of
    the 22 fails with UpstreamTimeout, the waiting ones being sent as
    places free up, and the owner hears of each; the connection stays."""
    produce(producer, 2)
    factory = ChainRpcFactory(producer, raw=lambda method, call_id: SILENT
                              if method == "get_block" else None)
    port = yield listen(factory)
    timeouts = task.Clock()
    owner = Owner(producer.chain_id)
    remote = RemoteNode(parse_node_address(f"ws://127.0.0.1:{port.getHost().port}"), owner,
                        reactor=reactor, timeouts=timeouts, backoff=backoffPolicy(),
                        what="Node", timeout=5.0, max_in_flight=2)
    remote.startService()
    try:
        yield wait_for(lambda: owner.heads)
        assert owner.heads[0].head_block_num == 2
        assert owner.heads[0].chain_id == producer.chain_id
        calls = [remote.call("database", "get_block", [n]) for n in range(1, 26)]
        busy = yield defer.DeferredList(calls[22:], consumeErrors=True)
        assert all(not ok and f.check(RemoteBusy) for ok, f in busy)
        yield wait_for(lambda: factory.calls.count(("database", "get_block")) == 2)
        assert remote.protocol.pending_methods() == ["get_block"] * 22
        assert remote.figures.in_flight == 22
        timeouts.advance(5.0)
        results = yield defer.DeferredList(calls[:22], consumeErrors=True)
        assert [ok for ok, _f in results] == [False] * 22
        assert all(f.check(UpstreamTimeout) for _ok, f in results)
        assert owner.timed_out == ["get_block"] * 22
        yield wait_for(lambda: factory.calls.count(("database", "get_block")) == 22)
        assert remote.figures.timeouts == 22 and remote.figures.in_flight == 0
        assert remote.protocol is not None and owner.lost_count == 0
    finally:
        yield remote.stopService()
        yield port.stopListening()


@pytest_twisted.inlineCallbacks
def test_another_chain_is_a_failure_that_backs_off(producer, lines):
    """The owner refuses the node's chain: the owner is told (WrongChain),
    never ``connected``, and each attempt is one error line whose delay
    grows with the failures in a row."""
    produce(producer, 1)
    port = yield listen(ChainRpcFactory(producer, chain_id="11" * 32))
    clock = task.Clock()
    owner = Owner(producer.chain_id)
    remote = RemoteNode(parse_node_address(f"ws://127.0.0.1:{port.getHost().port}"), owner,
                        reactor=reactor, clock=clock, backoff=lambda n: float(n),
                        what="Node")
    remote.startService()
    try:
        for attempt in range(1, 4):
            yield wait_for(lambda: clock.getDelayedCalls())
            [call] = clock.getDelayedCalls()
            assert call.getTime() - clock.seconds() == attempt
            clock.advance(attempt)
        assert owner.heads == [] and remote.failures >= 3
        assert [type(e).__name__ for e in owner.errors][:3] == ["WrongChain"] * 3
        errors = [text for level, text in lines if level == "error"]
        assert errors[0] == (f"Node failed (1 in a row): it serves chain id {'11' * 32}, "
                             "another chain; reconnecting in 1.0 s")
    finally:
        yield remote.stopService()
        yield port.stopListening()


@pytest_twisted.inlineCallbacks
def test_refused_reconnections_are_quiet_only_within_the_grace_of_a_planned_stop(
        producer, lines):
    """The node closes with 1001 going away and stays down: one info line,
    the refused reconnections are not logged for RESTART_GRACE seconds,
    the first one after is."""
    produce(producer, 1)
    site = rpc_site(make_node(producer), ApiAccess.default(), reactor=reactor)
    port = reactor.listenTCP(0, site, interface="127.0.0.1")
    portnum = port.getHost().port
    clock = task.Clock()
    owner = Owner(producer.chain_id)
    remote = RemoteNode(parse_node_address(f"ws://127.0.0.1:{portnum}"), owner,
                        reactor=reactor, clock=clock, backoff=lambda n: 60.0, what="Node")
    remote.startService()
    try:
        yield wait_for(lambda: owner.heads)
        yield port.stopListening()
        yield site.ws_factory.going_away()
        yield wait_for(lambda: owner.lost_count == 1)
        assert remote.stopping_since == clock.seconds()
        waited = 0.0
        while waited < RESTART_GRACE:
            yield wait_for(lambda: clock.getDelayedCalls())
            clock.advance(60.0)
            waited += 60.0
        yield wait_for(lambda: [t for _l, t in lines if "unreachable" in t])
    finally:
        yield remote.stopService()
    texts = [text for _level, text in lines]
    assert texts[1] == ("Node is stopping (1001 going away: node stopping); following it "
                        "again when it is back")
    unreachable = [(level, text) for level, text in lines if "unreachable" in text]
    assert len(unreachable) == 1 and unreachable[0][0] == "warn"
    assert unreachable[0][1].startswith("Node unreachable (")
    assert unreachable[0][1].endswith("; reconnecting in 60.0 s")
