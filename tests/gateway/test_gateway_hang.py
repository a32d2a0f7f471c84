"""The gateway never hangs and never serves stale answers: upstreams that
go silent, send garbage, answer ids twice or not asked, nest 100,000
arrays deep or claim a head of 10^30 (kit.peer_stub's graphene server over
the test's chain, misbehaving on purpose) next to a real nodeapi
upstream, over loopback sockets; lagging real nodeapi upstreams (a second
chain restarted from the first's block log, then left behind); time-based
behaviour on a Clock where the pool allows it (call timeouts, checks,
reconnection delays)."""

import time

import orjson
import pytest
import pytest_twisted
import treq
from twisted.internet import defer, reactor
from twisted.internet.task import Clock

from nodeapi.api.registry import default_registry
from nodeapi.rpc.access import ApiAccess

from kit.access import VECTORS
from kit.chain import produce, transfer_op
from kit.gateway import GatewaySite
from kit.peer_stub import SILENT, ChainRpcFactory
from kit.peers import listen
from kit.rpc import ws_connect
from kit.signing import sign
from kit.site import RunningSite, make_node
from kit.wait import wait_for

ADMIN = ("bytemaster", "supersecret")
ACCESS = ApiAccess.from_json(VECTORS)


def _site(chain, registry=None):
    return RunningSite(make_node(chain), ACCESS, registry=registry or default_registry())


def _url(site):
    return f"ws://{ADMIN[0]}:{ADMIN[1]}@127.0.0.1:{site.port}"


def _stub_url(port):
    return f"ws://peer:secret@127.0.0.1:{port.getHost().port}"


def _clock():
    clock = Clock()
    clock.advance(reactor.seconds())  # head ages as on the wall clock
    return clock


@pytest_twisted.inlineCallbacks
def _get(port, path):
    response = yield treq.get(f"http://127.0.0.1:{port}{path}")
    return response.code, (yield response.content())


class Pair:
    """A gateway over a real nodeapi upstream (``good``) and a
    misbehaving graphene stub (``factory``, listening on ``port``) of one
    chain; ``metrics_port`` serves the gateway's /metrics and /healthz."""

    @pytest_twisted.inlineCallbacks
    def start(self, chain, **options):
        self.good = _site(chain)
        self.factory = ChainRpcFactory(chain)
        self.port = yield listen(self.factory)
        self.gw = GatewaySite([_url(self.good), _stub_url(self.port)], ACCESS, **options)
        self.metrics = reactor.listenTCP(0, self.gw.metrics.site(), interface="127.0.0.1")
        self.metrics_port = self.metrics.getHost().port
        yield self.gw.start()
        self.good_up, self.bad_up = self.gw.pool.upstreams

    @pytest_twisted.inlineCallbacks
    def stop(self):
        yield self.gw.stop()
        yield self.good.stop()
        for proto in list(self.factory.clients):
            proto.dropConnection(abort=True)
        yield self.port.stopListening()
        yield self.metrics.stopListening()


@pytest.fixture
def chain(funded_pair):
    produce(funded_pair, 12)
    return funded_pair


@pytest_twisted.inlineCallbacks
def test_a_silent_upstream_costs_one_timeout_then_leaves_the_rotation(chain):
    """The stub goes silent (the WebSocket stays open, pings answered):
    the read sent to it is answered by the other upstream once the
    timeout (5 s of the pool's clock) passes, not before; the silent one
    is out of rotation at once (later reads never wait), its check times
    out and opens its breaker; /healthz names it and answers 503 once the
    good upstream is gone too."""
    clock = _clock()
    pair = Pair()
    yield pair.start(chain, pool_clock=clock, timeout=5.0)
    pool, bad = pair.gw.pool, pair.bad_up
    try:
        client = yield ws_connect(pair.gw.port, *ADMIN)
        pair.factory.raw = lambda method, call_id: SILENT
        replies = [client.request(0, "get_objects", [[oid]]) for oid in ("2.1.0", "1.3.0")]
        yield wait_for(lambda: bad.pending("get_objects") == 1, timeout=5)
        yield wait_for(lambda: any(r.called for r in replies), timeout=5)
        waiting = next(r for r in replies if not r.called)
        yield wait_for(lambda: waiting.called, timeout=0.3).addErrback(lambda _f: None)
        assert not waiting.called  # nothing moves before the timeout
        clock.advance(5.0)
        answered = yield defer.gatherResults(replies)
        assert [r["result"][0]["id"] for r in answered] == ["2.1.0", "1.3.0"]
        assert bad.timeouts == 1 and bad.suspect and not pool.serves(bad)
        assert pool.retried == 1
        assert [s["state"] for s in pool.states()] == ["serving", "suspect"]
        # out of rotation: reads go to the good upstream without a timeout
        calls = len(pair.factory.calls)
        for oid in ("1.2.0", "1.2.1", "1.2.2", "1.2.3"):
            reply = yield client.request(0, "get_objects", [[oid]])
            assert reply["result"][0]["id"] == oid
        assert [c for c in pair.factory.calls[calls:] if c[1] == "get_objects"] == []
        # its check (sent at once) times out: the breaker opens
        yield wait_for(lambda: bad.pending("get_dynamic_global_properties") == 1, timeout=5)
        clock.advance(5.0)
        yield wait_for(lambda: not bad.usable, timeout=5)
        assert bad.trips == 1 and "did not answer get_dynamic_global_properties within 5 s" \
            in bad.fault
        code, body = yield _get(pair.metrics_port, "/healthz")
        health = orjson.loads(body)
        assert code == 200 and health["ok"]
        assert [(s["state"], s["fault"] is not None) for s in health["upstream"]["upstreams"]] \
            == [("serving", False), ("down", True)]
        code, body = yield _get(pair.metrics_port, "/metrics")
        assert code == 200
        assert b'nodeapi_gateway_upstream_errors_total{kind="timeout",upstream="127.0.0.1:' \
            in body and b"nodeapi_gateway_upstream_breaker_trips_total" in body
        yield pair.good.stop()
        yield wait_for(lambda: not pair.good_up.usable, timeout=5)
        code, body = yield _get(pair.metrics_port, "/healthz")
        health = orjson.loads(body)
        assert code == 503 and not health["ok"]
        assert any(p.startswith("no upstream serves reads: ")
                   and "did not answer get_dynamic_global_properties within 5 s" in p
                   for p in health["problems"]), health["problems"]
        client.dropConnection()
    finally:
        yield pair.stop()


@pytest_twisted.inlineCallbacks
def test_a_lone_silent_upstream_gives_a_clear_timeout_error(chain):
    """With no other upstream, a read the silent one does not answer gets
    ``upstream_timeout`` when the timeout passes (before: no answer ever)."""
    clock = _clock()
    factory = ChainRpcFactory(chain)
    port = yield listen(factory)
    gw = GatewaySite([_stub_url(port)], ACCESS, pool_clock=clock, timeout=2.5)
    yield gw.start()
    try:
        client = yield ws_connect(gw.port, *ADMIN)
        factory.raw = lambda method, call_id: SILENT
        reply = client.request(0, "get_block", [3])
        (upstream,) = gw.pool.upstreams
        yield wait_for(lambda: upstream.pending("get_block") == 1, timeout=5)
        clock.advance(2.5)
        reply = yield reply
        assert reply["error"]["data"]["name"] == "upstream_timeout"
        assert reply["error"]["message"].endswith(
            f"Upstream 127.0.0.1:{port.getHost().port} did not answer get_block within 2.5 "
            f"s, and no other upstream could answer it")
        client.dropConnection()
    finally:
        yield gw.stop()
        for proto in list(factory.clients):
            proto.dropConnection(abort=True)
        yield port.stopListening()


DEEP = b"[" * 100000 + b"]" * 100000
HOSTILE = {
    "garbage": lambda i: b'{"id":%d,"jsonrpc":"2.0","result":{"id":' % i,
    "two id members": lambda i: b'{"id":%d,"result":[],"id":%d}' % (i, i),
    "an id not asked": lambda i: b'{"id":%d,"result":[]}' % (i + 1000),
    "the same id twice": lambda i: [b'{"id":%d,"result":[null]}' % i] * 2,
    "100k-deep arrays": lambda i: b'{"id":%d,"jsonrpc":"2.0","result":%s}' % (i, DEEP),
    "10^30": lambda i: (b'{"id":%d,"jsonrpc":"2.0","result":[{"id":"2.1.0",'
                        b'"head_block_number":1000000000000000000000000000000}]}' % i),
}
FAULTS = {"garbage": "invalid JSON", "two id members": "more than one id",
          "an id not asked": "which was not asked", "the same id twice": "which was not asked",
          "100k-deep arrays": "invalid JSON", "10^30": "beyond fc's 64-bit range"}


@pytest.mark.parametrize("kind", list(HOSTILE))
@pytest_twisted.inlineCallbacks
def test_bad_replies_never_reach_a_client_and_open_the_breaker(chain, kind):
    """Of two reads sent at once one goes to the stub, which answers it
    with ``kind``: the client gets the good upstream's answer for both
    (the stub's own valid first answer when it answers twice), at once
    (no timeout: the connection is dropped and the read sent again), the
    stub's breaker opens naming the fault, and /metrics still answers.
    (Checks once a minute: none in flight to skew the pick.)"""
    pair = Pair()
    yield pair.start(chain, interval=60.0)
    bad = pair.bad_up
    try:
        client = yield ws_connect(pair.gw.port, *ADMIN)
        direct = yield ws_connect(pair.good.port, *ADMIN)
        hostile = HOSTILE[kind]
        pair.factory.raw = lambda method, i: hostile(i) if method == "get_objects" else None
        oids = ("2.1.0", "1.3.0")
        started = time.monotonic()
        replies = yield defer.gatherResults(
            [client.request(0, "get_objects", [[oid]]) for oid in oids])
        assert time.monotonic() - started < 2.0
        assert ("database", "get_objects") in pair.factory.calls
        for oid, reply in zip(oids, replies):
            if reply["result"] != [None]:  # the stub's valid first answer of two
                assert reply["result"] == (yield direct.call(0, "get_objects", [oid]))
        assert bad.bad_replies >= 1 and bad.trips >= 1 and FAULTS[kind] in bad.fault
        assert pair.gw.pool.lib <= chain.head_block_num
        code, body = yield _get(pair.metrics_port, "/metrics")
        assert code == 200 and b"nodeapi_gateway_upstream_breaker_trips_total" in body
        client.dropConnection()
        direct.dropConnection()
    finally:
        yield pair.stop()


@pytest.mark.parametrize("head", [10 ** 30, 2 ** 40, -1])
@pytest_twisted.inlineCallbacks
def test_an_upstream_claiming_an_impossible_head_is_never_used(chain, head):
    """The stub's dynamic global properties claim head block ``head``
    (beyond fc's range, beyond graphene's 32-bit block numbers, negative):
    it never becomes usable, every read goes to the good upstream, the
    last irreversible block stays the good one's and /metrics answers."""
    good = _site(chain)
    dgp = (b'{"head_block_number":%s,"last_irreversible_block_num":1,'
           b'"time":"2026-01-01T00:00:00"}' % str(head).encode())
    factory = ChainRpcFactory(
        chain, raw=lambda method, i: (b'{"id":%d,"result":%s}' % (i, dgp))
        if method == "get_dynamic_global_properties" else None)
    port = yield listen(factory)
    gw = GatewaySite([_url(good), _stub_url(port)], ACCESS)
    metrics = reactor.listenTCP(0, gw.metrics.site(), interface="127.0.0.1")
    yield gw.start(usable=1)
    good_up, bad = gw.pool.upstreams
    try:
        yield wait_for(lambda: bad.trips >= 1, timeout=5)
        assert not bad.usable and good_up.usable
        assert gw.pool.lib == good_up.lib <= chain.head_block_num
        client = yield ws_connect(gw.port, *ADMIN)
        for _ in range(4):
            assert (yield client.call(0, "get_dynamic_global_properties"))[
                "head_block_number"] == chain.head_block_num
        code, _body = yield _get(metrics.getHost().port, "/metrics")
        assert code == 200
        client.dropConnection()
    finally:
        yield gw.stop()
        yield good.stop()
        for proto in list(factory.clients):
            proto.dropConnection(abort=True)
        yield port.stopListening()
        yield metrics.stopListening()


@pytest_twisted.inlineCallbacks
def test_a_broadcast_not_answered_in_time_is_looked_for_not_sent_again(chain):
    """Both upstreams (nodeapi) queue a broadcast and never answer; a block
    holds it; the timeout passes (pool clock): the pool finds it by id on
    the other (get_recent_transaction_by_id) and answers null; the
    transaction is in the chain once."""
    from nodeapi.api.base import api_function
    from nodeapi.api.broadcast import NetworkBroadcastApi

    class Hanging(NetworkBroadcastApi):
        @api_function
        def broadcast_transaction(self, trx):
            """Queued, no answer."""
            self._push(trx)
            return defer.Deferred()

    clock = _clock()
    registry = dict(default_registry(), network_broadcast=Hanging)
    sites = [_site(chain, registry) for _ in range(2)]
    gw = GatewaySite([_url(s) for s in sites], ACCESS, pool_clock=clock, timeout=5.0)
    yield gw.start()
    try:
        client = yield ws_connect(gw.port, *ADMIN)
        broadcast = yield client.call(1, "network_broadcast")
        trx = sign(chain, [transfer_op(555)])
        reply = client.request(broadcast, "broadcast_transaction", [trx])
        pool = gw.pool
        yield wait_for(lambda: any(u.pending("broadcast_transaction")
                                   for u in pool.upstreams), timeout=5)
        produce(chain)
        clock.advance(5.0)
        answer = yield reply
        assert answer["result"] is None, answer
        assert sum(u.timeouts for u in pool.upstreams) == 1
        block = chain.get_block(chain.head_block_num)
        assert [t["signatures"] for t in block["transactions"]] == [trx["signatures"]]
        client.dropConnection()
    finally:
        yield gw.stop()
        for site in sites:
            yield site.stop()


@pytest_twisted.inlineCallbacks
def test_a_lagging_upstream_serves_no_reads(chain, new_chain):
    """Two nodeapi upstreams of one chain, the second restarted from the
    first's block log and left 5 blocks behind (limit 3): every read
    answers the first's head; the second is ``lagging``; once it is 2
    behind it serves again."""
    behind = new_chain(restart_of=chain)
    behind.replay()
    produce(chain, 5)
    sites = [_site(chain), _site(behind)]
    gw = GatewaySite([_url(s) for s in sites], ACCESS, max_lag_blocks=3)
    yield gw.start()
    ahead_up, behind_up = gw.pool.upstreams
    try:
        yield wait_for(lambda: ahead_up.head == chain.head_block_num
                       and behind_up.head == behind.head_block_num, timeout=5)
        assert [s["state"] for s in gw.pool.states()] == ["serving", "lagging"]
        assert gw.pool.states()[1]["lag_blocks"] == 5
        for _ in range(10):  # a fresh connection each time: no head floor involved
            client = yield ws_connect(gw.port, *ADMIN)
            dgp = yield client.call(0, "get_dynamic_global_properties")
            assert dgp["head_block_number"] == chain.head_block_num
            client.dropConnection()
        produce(behind, 3)
        yield wait_for(lambda: gw.pool.serves(behind_up), timeout=5)
        assert [s["state"] for s in gw.pool.states()] == ["serving", "serving"]
    finally:
        yield gw.stop()
        for site in sites:
            yield site.stop()


@pytest_twisted.inlineCallbacks
def test_a_connection_never_sees_the_head_go_backwards(chain, new_chain):
    """Two nodeapi upstreams 2 blocks apart (within the lag limit: both
    serve): a connection's reads, which the pool spreads in turn, never
    show a lower head once a higher one was served; when the upstream
    ahead is gone, a read waits for the other to reach that head (checked
    at once) rather than answer an older one; a new connection is served
    at once."""
    behind = new_chain(restart_of=chain)
    behind.replay()
    produce(chain, 2)
    sites = [_site(chain), _site(behind)]
    gw = GatewaySite([_url(s) for s in sites], ACCESS)
    yield gw.start()
    ahead_up, behind_up = gw.pool.upstreams
    try:
        yield wait_for(lambda: ahead_up.head == chain.head_block_num
                       and behind_up.head == behind.head_block_num, timeout=5)
        client = yield ws_connect(gw.port, *ADMIN)
        heads = []
        for i in range(20):
            dgp = yield client.call(0, "get_objects", ["2.1.0", f"1.2.{i}"])
            heads.append(dgp[0]["head_block_number"])
        assert heads == sorted(heads) and heads[-1] == chain.head_block_num
        high = chain.head_block_num
        yield sites[0].stop()
        yield wait_for(lambda: not ahead_up.usable, timeout=5)
        other = yield ws_connect(gw.port, *ADMIN)
        dgp = yield other.call(0, "get_dynamic_global_properties")
        assert dgp["head_block_number"] == behind.head_block_num < high  # no floor yet
        reply = client.request(0, "get_dynamic_global_properties", [])
        yield wait_for(lambda: reply.called, timeout=0.5).addErrback(lambda _f: None)
        assert not reply.called  # waits for an upstream at its head
        produce(behind, 3)
        answer = yield reply
        assert answer["result"]["head_block_number"] >= high
        client.dropConnection()
        other.dropConnection()
    finally:
        yield gw.stop()
        for site in sites:
            yield site.stop()


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_service_resumes_within_a_second_of_a_total_outage(chain):
    """The only upstream (the stub) is gone for 4 s, then listens again on
    its port: the gateway answers within a second (before: the growing
    reconnection delay, about 11 s after a long outage)."""
    factory = ChainRpcFactory(chain)
    port = yield listen(factory)
    number = port.getHost().port
    gw = GatewaySite([_stub_url(port)], ACCESS)
    yield gw.start()
    (upstream,) = gw.pool.upstreams
    try:
        yield port.stopListening()
        for proto in list(factory.clients):
            proto.dropConnection(abort=True)
        yield wait_for(lambda: not upstream.usable, timeout=5)
        before = upstream.attempts
        yield wait_for(lambda: False, timeout=4.0).addErrback(lambda _f: None)
        assert upstream.attempts - before >= 5  # at most 0.5 s (+ 0.1 s refused) apart
        port = yield listen(factory, number)
        back = time.monotonic()
        yield wait_for(lambda: upstream.usable, timeout=5)
        assert time.monotonic() - back < 1.0
        client = yield ws_connect(gw.port, *ADMIN)
        assert (yield client.call(0, "get_chain_id")) == chain.chain_id
        client.dropConnection()
    finally:
        yield gw.stop()
        for proto in list(factory.clients):
            proto.dropConnection(abort=True)
        yield port.stopListening()


@pytest_twisted.inlineCallbacks
def test_losing_the_last_usable_upstream_cuts_other_reconnection_waits_short(chain):
    """Pool clock: an upstream that refuses connections waits (a delay of
    the clock, never advanced here) while the other serves; when the
    serving one is lost, the waiting one tries again at once."""
    from kit.daemon import free_port

    clock = _clock()
    good = _site(chain)
    gw = GatewaySite([_url(good), f"ws://127.0.0.1:{free_port()}"], ACCESS, pool_clock=clock)
    yield gw.start(usable=1)
    good_up, dead = gw.pool.upstreams
    try:
        yield wait_for(lambda: dead.remote.waiting, timeout=5)
        attempts = dead.attempts
        yield wait_for(lambda: False, timeout=0.3).addErrback(lambda _f: None)
        assert dead.attempts == attempts  # the clock is not advanced: it waits
        yield good.stop()
        yield wait_for(lambda: dead.attempts > attempts, timeout=2)
    finally:
        yield gw.stop()
