"""The gateway in one reactor: two real RPC sites of one chain are its
upstreams (bytemaster: every set there), the gateway's own site serves the
api-access vectors (kit.access: bytemaster every set, user2 database and
history, ``*`` database, network_broadcast and history).  A real
WebSocket client (kit.rpc) and HTTP calls compare what the gateway
answers with what an upstream answers directly."""

import orjson
import pytest
import pytest_twisted
import treq
from twisted.internet import defer, reactor

from nodeapi.api.base import api_function
from nodeapi.api.broadcast import NetworkBroadcastApi
from nodeapi.api.registry import default_registry
from nodeapi.gateway.apis import gateway_registry
from nodeapi.chain.genesis import Genesis
from nodeapi.gateway.figures import GatewayCollector
from nodeapi.gateway.pool import UpstreamPool
from nodeapi.protocol.node_address import parse_node_address
from nodeapi.protocol.transaction import transaction_id
from nodeapi.rpc.access import ApiAccess

from kit.access import VECTORS
from kit.chain import produce, transfer_op
from kit.gateway import GatewaySite
from kit.peer_stub import ChainRpcFactory
from kit.peers import listen
from kit.rpc import ws_connect
from kit.signing import sign
from kit.site import RunningSite, late_registry, make_node
from kit.wait import wait_for

ADMIN = ("bytemaster", "supersecret")


class HangingBroadcast(NetworkBroadcastApi):
    """``broadcast_transaction`` queues the transaction, then never
    answers: the connection is lost before the answer."""

    @api_function
    def broadcast_transaction(self, trx):
        """Queued, no answer."""
        self._push(trx)
        return defer.Deferred()


def _upstream(chain, registry=None):
    return RunningSite(make_node(chain), ApiAccess.from_json(VECTORS),
                       registry=registry or default_registry())


def _url(site):
    return f"ws://{ADMIN[0]}:{ADMIN[1]}@127.0.0.1:{site.port}"


@pytest.fixture
def upstreams(funded_pair):
    """Two sites of ``funded_pair`` (a few blocks produced: an
    irreversible block exists), the first with the late database set."""
    produce(funded_pair, 12)
    sites = [_upstream(funded_pair, late_registry()), _upstream(funded_pair)]
    yield sites
    for site in sites:
        site.stop_blocking()


@pytest.fixture
def gateway(upstreams):
    gw = GatewaySite([_url(s) for s in upstreams], ApiAccess.from_json(VECTORS))
    pytest_twisted.blockon(gw.start())
    yield gw
    gw.stop_blocking()


@pytest_twisted.inlineCallbacks
def _http(port, body: bytes, auth=ADMIN):
    response = yield treq.post(f"http://127.0.0.1:{port}/rpc", data=body, auth=auth)
    return response.code, orjson.loads((yield response.content()))


def _call(api, method, *args):
    return orjson.dumps({"jsonrpc": "2.0", "id": 5, "method": "call",
                         "params": [api, method, list(args)]})


READS = [("database", "get_chain_id"), ("database", "get_block", 3),
         ("database", "get_accounts", ["init0", "1.2.7"]),
         ("database", "get_full_accounts", ["init1"], False),
         ("database", "lookup_asset_symbols", ["TEST"]),
         ("database", "get_account_balances", "init1", []),
         ("database", "get_required_fees", [[0, transfer_op(1).json()]], "1.3.0"),
         ("history", "get_account_history", "init1", "1.11.0", 10, "1.11.0"),
         ("block", "get_blocks", 1, 3)]


@pytest_twisted.inlineCallbacks
def test_answers_are_the_upstreams(gateway, upstreams):
    """Every read answers as the upstream does, byte for byte, over
    WebSocket (ids as the gateway gave them) and HTTP."""
    client = yield ws_connect(gateway.port, *ADMIN)
    ids = {}
    for api, method, *args in READS:
        direct = yield _http(upstreams[1].port, _call(api, method, *args))
        through = yield _http(gateway.port, _call(api, method, *args))
        assert "result" in direct[1], (method, direct)
        assert through == direct, method
        if api not in ids:
            ids[api] = yield client.call(1, api)
        assert (yield client.call(ids[api], method, *args)) == direct[1]["result"], method
    assert ids["database"] == 0 and sorted(ids.values()) == [0, 2, 3]  # this client's ids
    client.dropConnection()


@pytest_twisted.inlineCallbacks
def test_upstream_errors_reach_the_client_unchanged(gateway, upstreams):
    """code, message and data of the upstream's error, for an unknown
    function, a bad argument and a missing block."""
    for body in (_call("database", "no_such_function"),
                 _call("database", "get_accounts", "not a list"),
                 _call("database", "get_transaction", 10 ** 6, 0),
                 _call("asset", "get_asset_holders", "1.3.0", 0, 10 ** 6)):
        direct = yield _http(upstreams[0].port, body)
        through = yield _http(gateway.port, body)
        assert "error" in direct[1] and through == direct
    # errors are counted unresolved: no label from a function a client made up
    # (get_accounts, a read the subscriptions' hub answers, is counted by name)
    sample = gateway.metrics.registry.get_sample_value
    assert sample("nodeapi_rpc_calls_total", {"api": "database", "function": "no_such_function",
                                              "outcome": "error"}) is None
    assert sample("nodeapi_rpc_calls_total", {"api": "unresolved", "function": "unresolved",
                                              "outcome": "error"}) == 3
    assert sample("nodeapi_rpc_calls_total", {"api": "database", "function": "get_accounts",
                                              "outcome": "error"}) == 1
    yield _http(gateway.port, _call("database", "get_chain_id"))
    assert sample("nodeapi_rpc_calls_total", {"api": "database", "function": "get_chain_id",
                                              "outcome": "ok"}) == 1
    assert sample("nodeapi_gateway_cache_misses_total") == 2  # and get_transaction


@pytest_twisted.inlineCallbacks
def test_login_and_access_stay_local(gateway, upstreams):
    """user2 may use database and history only, anonymous no block set;
    the refusals are the gateway's own (as from any node); ``debug`` is
    not served by a gateway."""
    user2 = yield ws_connect(gateway.port, "user2", "superpassword2")
    with pytest.raises(RuntimeError, match="Access denied"):
        yield user2.call(1, "network_broadcast")
    assert (yield user2.call(1, "get_available_api_sets")) == ["database_api", "history_api"]
    assert (yield user2.call(0, "get_chain_id")) == (yield client_chain_id(upstreams[0]))
    anonymous = yield ws_connect(gateway.port)
    with pytest.raises(RuntimeError, match="Access denied"):
        yield anonymous.call(1, "block")
    # anonymous may broadcast: a malformed transaction is the upstream's refusal
    body = _call("network_broadcast", "broadcast_transaction", {"operations": 5})
    direct = yield _http(upstreams[1].port, body, auth=None)
    assert "error" in direct[1] and (yield _http(gateway.port, body, auth=None)) == direct
    code, reply = yield _http(gateway.port, _call("block", "get_blocks", 1, 2), auth=None)
    assert "Access denied" in reply["error"]["message"]
    assert set(gateway_registry()) == {"database", "network_broadcast", "network_node",
                                       "crypto", "asset", "block", "orders",
                                       "custom_operations", "history"}
    for c in (user2, anonymous):
        c.dropConnection()


@pytest_twisted.inlineCallbacks
def client_chain_id(site):
    _code, reply = yield _http(site.port, _call("database", "get_chain_id"))
    return reply["result"]


@pytest_twisted.inlineCallbacks
def test_bad_input_gets_a_clear_error_and_loses_nothing(gateway):
    """Malformed requests are refused by the gateway itself, as by any
    node; the connection keeps serving."""
    client = yield ws_connect(gateway.port, *ADMIN)
    for raw, code in ((b"{not json", -32700), (b"[1, 2]", -32600),
                      (b'{"id": 1, "method": "call", "params": [0, "x"]}', -32600),
                      (b'{"id": 1, "method": "call", "params": ["nope", "x", []]}', 10),
                      (b'{"id": 1, "method": "call", "params": [99, "x", []]}', 10)):
        client.sendMessage(raw)
        reply = yield wait_for_reply(client)
        assert reply["error"]["code"] == code, raw
    assert (yield client.call(0, "get_chain_id"))
    code, reply = yield _http(gateway.port, b"{not json")
    assert (code, reply["error"]["code"]) == (400, -32700)
    client.dropConnection()


@defer.inlineCallbacks
def wait_for_reply(client):
    seen = len(client.raw_replies)
    yield wait_for(lambda: len(client.raw_replies) > seen, timeout=5)
    return client.raw_replies[seen]


@pytest_twisted.inlineCallbacks
def test_answers_that_cannot_change_are_cached(gateway):
    cache = gateway.gateway.cache
    lib = gateway.pool.lib
    assert lib >= 2
    for _ in range(3):
        yield _http(gateway.port, _call("database", "get_chain_id"))
        yield _http(gateway.port, _call("database", "get_block", lib))
        yield _http(gateway.port, _call("database", "get_block", lib + 5))  # not final
    assert (cache.hits, cache.misses) == (4, 5)
    assert len(cache) == 2
    figures = {(m.name, tuple(sorted(s.labels.items()))): s.value
               for m in GatewayCollector(gateway.gateway).collect() for s in m.samples}
    assert figures[("nodeapi_gateway_cache_hits", ())] == 4
    assert figures[("nodeapi_gateway_cache_misses", ())] == 5
    first = gateway.pool.upstreams[0].name
    assert figures[("nodeapi_gateway_upstream_usable", (("upstream", first),))] == 1
    calls = figures[("nodeapi_gateway_upstream_latency_seconds",
                     (("le", "+Inf"), ("upstream", first)))]
    assert calls == gateway.pool.upstreams[0].calls - gateway.pool.upstreams[0].in_flight


@pytest_twisted.inlineCallbacks
def test_identical_calls_in_flight_share_one_upstream_call(gateway):
    """Five identical reads sent at once cost the upstream one call; a
    broadcast-set call is never shared."""
    client = yield ws_connect(gateway.port, *ADMIN)
    calls_before = sum(u.calls for u in gateway.pool.upstreams)
    replies = yield defer.gatherResults(
        [client.request(0, "get_objects", [["2.1.0", "1.3.0"]]) for _ in range(5)])
    assert gateway.gateway.shared == 4
    assert len({orjson.dumps(r["result"]) for r in replies}) == 1
    assert [r["id"] for r in replies] == sorted(r["id"] for r in replies)
    assert sum(u.calls for u in gateway.pool.upstreams) - calls_before <= 1 + 2  # + checks
    figures = {m.name: m.samples[0].value for m in GatewayCollector(gateway.gateway).collect()
               if m.name == "nodeapi_gateway_shared_reads"}
    assert figures == {"nodeapi_gateway_shared_reads": 4}
    client.dropConnection()


@pytest_twisted.inlineCallbacks
def test_a_read_in_flight_on_a_lost_upstream_is_answered_by_the_other(gateway, upstreams):
    """``late_blob`` (a test function of the first upstream's database set,
    answered 50 ms later) is in flight when that upstream's connection is
    lost: the pool asks the second, whose answer (an error: it has no such
    function) is what the client gets."""
    client = yield ws_connect(gateway.port, *ADMIN)
    first = gateway.pool.upstreams[0]
    calls = []
    for size in range(10, 14):  # least in flight, in turn: some go to the first
        calls.append(client.request(0, "late_blob", [size]))
    yield wait_for(lambda: first.pending("late_blob") > 0, timeout=5)
    on_first = first.pending("late_blob")
    for proto in list(upstreams[0].site.ws_factory.connections):
        proto.dropConnection(abort=True)
    replies = yield defer.gatherResults(calls)
    # the second upstream has no late_blob: every call got its -32601
    assert all(r["error"]["code"] == -32601 and "late_blob" in r["error"]["data"]
               for r in replies)
    assert gateway.pool.retried == on_first >= 1
    assert (yield client.call(0, "get_chain_id"))
    client.dropConnection()


@pytest_twisted.inlineCallbacks
def test_a_broadcast_callback_reaches_the_calling_client(gateway, funded_pair):
    client = yield ws_connect(gateway.port, *ADMIN)
    other = yield ws_connect(gateway.port, *ADMIN)
    net = yield client.call(1, "network_broadcast")
    trx = sign(funded_pair, [transfer_op(12345)])
    assert (yield client.call(net, "broadcast_transaction_with_callback", 77, trx)) is None
    notice = client.next_notice()
    produce(funded_pair)
    cb, (confirmation,) = yield notice
    assert cb == 77 and confirmation["id"] == transaction_id(trx)
    assert confirmation["block_num"] == funded_pair.head_block_num
    assert confirmation["trx"]["signatures"] == trx["signatures"]
    assert other.notices == []
    # HTTP has no notices: refused as by the node itself
    _code, reply = yield _http(gateway.port, _call("network_broadcast",
                                                    "broadcast_transaction_with_callback", 1,
                                                    trx))
    assert "WebSocket" in reply["error"]["message"]
    for c in (client, other):
        c.dropConnection()


@pytest_twisted.inlineCallbacks
def test_a_broadcast_callback_survives_the_loss_of_its_upstream(gateway, upstreams,
                                                                funded_pair):
    """The upstream that took the transaction loses its connection before
    the block: the gateway finds the transaction in the block through the
    other upstream and calls the client back all the same, once."""
    client = yield ws_connect(gateway.port, *ADMIN)
    trx = sign(funded_pair, [transfer_op(4321)])
    assert (yield client.call("network_broadcast", "broadcast_transaction_with_callback", 9,
                              trx)) is None
    confirmations = gateway.gateway.confirmations
    (taken,) = [u for u, entries in confirmations._pending.items() if entries]
    site = upstreams[gateway.pool.upstreams.index(taken)]
    for proto in list(site.site.ws_factory.connections):
        proto.dropConnection(abort=True)
    yield wait_for(lambda: not taken.usable, timeout=5)
    produce(funded_pair)
    yield wait_for(lambda: client.notices, timeout=5)
    cb, (confirmation,) = client.notices[0]
    assert cb == 9 and confirmation["block_num"] == funded_pair.head_block_num
    assert confirmation["trx_num"] == 0 and confirmation["id"] == transaction_id(trx)
    assert confirmations.recovered == 1
    produce(funded_pair)
    yield wait_for(lambda: taken.usable, timeout=5)
    assert len(client.notices) == 1
    client.dropConnection()


@pytest_twisted.inlineCallbacks
def test_a_lost_broadcast_is_looked_for_not_sent_again(funded_pair):
    """Both upstreams queue a broadcast and never answer; the one that got
    it is stopped once a block holds the transaction: the pool finds it by
    id on the other (get_recent_transaction_by_id) and answers null; the
    transaction is in the chain once."""
    produce(funded_pair, 3)
    registry = dict(default_registry(), network_broadcast=HangingBroadcast)
    sites = [_upstream(funded_pair, registry) for _ in range(2)]
    gw = GatewaySite([_url(s) for s in sites], ApiAccess.from_json(VECTORS))
    yield gw.start()
    try:
        trx = sign(funded_pair, [transfer_op(555)])
        reply = _http(gw.port, _call("network_broadcast", "broadcast_transaction", trx))
        pool = gw.pool
        yield wait_for(lambda: any(u.pending("broadcast_transaction")
                                   for u in pool.upstreams), timeout=5)
        produce(funded_pair)
        taken = next(i for i, u in enumerate(pool.upstreams)
                     if u.pending("broadcast_transaction"))
        yield sites[taken].stop()
        code, answer = yield reply
        assert (code, answer["result"]) == (200, None)
        block = funded_pair.get_block(funded_pair.head_block_num)
        assert [t["signatures"] for t in block["transactions"]] == [trx["signatures"]]
    finally:
        yield gw.stop()
        for site in sites:
            yield site.stop()


@pytest_twisted.inlineCallbacks
def test_an_upstream_of_another_chain_is_not_used(funded_pair, new_chain, genesis):
    """The pool's chain id is given; an upstream serving another chain
    (another genesis id) connects but is never chosen."""
    other = new_chain(Genesis(genesis.data, "11" * 32, genesis.address_prefix,
                              genesis.core_symbol))
    produce(other, 2)
    sites = [_upstream(other), _upstream(funded_pair)]
    pool = UpstreamPool([parse_node_address(_url(s)) for s in sites], reactor, interval=0.1,
                        max_head_age=10 ** 9, chain_id=funded_pair.chain_id)
    pool.startService()
    try:
        # the chain id is read before the first health check makes one usable
        yield wait_for(lambda: all(u.chain_id for u in pool.upstreams)
                       and any(u.usable for u in pool.upstreams), timeout=10)
        wrong, right = pool.upstreams
        assert wrong.chain_id == "11" * 32 and not wrong.usable and right.usable
        for _ in range(6):
            _upstream_used, chain_id = yield defer.Deferred.fromCoroutine(
                pool.call("database", "get_chain_id", [], raw=False))
            assert _upstream_used is right and chain_id == funded_pair.chain_id
        # each connection: its login and chain id, not even a health check after
        assert wrong.calls == 2 * wrong.connections
    finally:
        yield pool.stopService()
        for site in sites:
            yield site.stop()


@pytest_twisted.inlineCallbacks
def test_no_upstream_is_a_clear_error_after_a_short_wait():
    """With its only upstream unreachable, a forwarded call waits
    ``patience`` seconds, then gets ``no_upstream``; login stays local."""
    from kit.daemon import free_port

    gw = GatewaySite([f"ws://127.0.0.1:{free_port()}"], ApiAccess.from_json(VECTORS),
                     patience=0.3)
    gw.pool.startService()
    try:
        code, reply = yield _http(gw.port, _call("database", "get_chain_id"))
        assert code == 200 and reply["error"]["data"]["name"] == "no_upstream"
        assert "No upstream node is connected" in reply["error"]["message"]
        code, reply = yield _http(gw.port, _call("login", "get_available_api_sets"))
        assert "database_api" in reply["result"]
    finally:
        yield gw.stop()


@pytest_twisted.inlineCallbacks
def test_a_lone_upstream_that_comes_back_answers_the_lost_read(funded_pair):
    """One upstream; its connection is lost while ``late_blob`` is in
    flight: the call waits for the reconnection and is answered there."""
    site = _upstream(funded_pair, late_registry())
    gw = GatewaySite([_url(site)], ApiAccess.from_json(VECTORS))
    yield gw.start()
    try:
        client = yield ws_connect(gw.port, *ADMIN)
        (upstream,) = gw.pool.upstreams
        reply = client.request(0, "late_blob", [7])
        yield wait_for(lambda: upstream.pending("late_blob"), timeout=5)
        for proto in list(site.site.ws_factory.connections):
            proto.dropConnection(abort=True)
        answer = yield reply
        assert answer.get("result") == "x" * 7, answer
        assert gw.pool.retried == 1 and upstream.connections == 2
        client.dropConnection()
    finally:
        yield gw.stop()
        yield site.stop()


@pytest_twisted.inlineCallbacks
def test_a_graphene_style_upstream_is_forwarded_generically(funded_pair):
    """An upstream that is not nodeapi (kit.peer_stub: a small graphene
    server writing ``{"id": n, "result": ...}`` with spaces, errors without
    ``data``, a login of its own): its replies in fc's form
    (``{"id":N,"jsonrpc":"2.0","result":...}``, bitshares-fc
    include/fc/rpc/state.hpp) reach the client byte for byte, the others
    decoded and encoded again, its errors unchanged."""
    produce(funded_pair, 3)

    def fc_form(method, call_id):
        if method != "get_block":
            return None
        return (b'{"id":%d,"jsonrpc":"2.0","result":{"n":"18446744073709551615",'
                b'"t":"2026-01-01T00:00:00","v":[1,"2.50000000000000000"]}}' % call_id)

    factory = ChainRpcFactory(funded_pair, raw=fc_form)
    port = yield listen(factory)
    gw = GatewaySite([f"ws://peer:secret@127.0.0.1:{port.getHost().port}"],
                     ApiAccess.from_json(VECTORS))
    yield gw.start()
    try:
        response = yield treq.post(f"http://127.0.0.1:{gw.port}/rpc", auth=ADMIN,
                                   data=_call("database", "get_block", 2))
        body = yield response.content()
        assert body == (b'{"id":5,"jsonrpc":"2.0","result":{"n":"18446744073709551615",'
                        b'"t":"2026-01-01T00:00:00","v":[1,"2.50000000000000000"]}}')
        _code, reply = yield _http(gw.port, _call("database", "get_chain_id"))
        assert reply["result"] == funded_pair.chain_id
        _code, reply = yield _http(gw.port, _call("database", "no_such_function"))
        assert reply["error"] == {"code": 10, "message": "Execution error: No method "
                                                         "no_such_function"}
        assert ("database", "no_such_function") in factory.calls  # by the set's name
    finally:
        yield gw.stop()
        yield port.stopListening()
