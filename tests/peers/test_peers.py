"""Peers: a follower node syncs from a producer over loopback WebSocket RPC,
follows it live, relays transactions and rejects bad blocks."""

import pytest
import pytest_twisted
from twisted.internet import reactor, task

from nodeapi.peers.errors import InvalidNodeParameter, PeerUnreachable
from nodeapi.peers.service import PeerService
from nodeapi.protocol.errors import InvalidPeerAddress
from nodeapi.protocol.node_address import NodeAddress, parse_node_address
from nodeapi.protocol.wire import strip_block_info
from nodeapi.rpc.access import ApiAccess

from kit.access import VECTORS
from kit.chain import claim_op, produce, transfer_op
from kit.keys import DEV_WIF
from kit.peer_stub import ChainRpcFactory
from kit.peers import FAST, close, listen
from kit.signing import sign
from kit.site import RunningSite, make_node
from kit.wait import wait_for


def test_addresses_and_parameters(follower):
    assert parse_node_address("127.0.0.1:8090") == NodeAddress("127.0.0.1", 8090)
    for bad in ("nohost", "h:0", "h:x", ":80", 5):
        with pytest.raises(InvalidPeerAddress):
            parse_node_address(bad)
    assert strip_block_info({"previous": "a", "block_id": "b", "signing_key": "c",
                             "transaction_ids": []}) == {"previous": "a"}
    trx = {"ref_block_prefix": "3000000000", "operations": [[0, {
        "amount": {"amount": "1000000000000000", "asset_id": "1.3.0"},
        "memo": {"message": "1234"}}]]}
    assert strip_block_info({"transactions": [trx]})["transactions"] == [{
        "ref_block_prefix": 3000000000, "operations": [[0, {
            "amount": {"amount": 1000000000000000, "asset_id": "1.3.0"},
            "memo": {"message": "1234"}}]]}]
    svc = PeerService(follower, reactor=reactor)
    svc.set_advanced_node_parameters({"sync_batch_size": "7", "reconnect_factor": 2,
                                      "reconnect_jitter": 0})
    params = svc.get_advanced_node_parameters()
    assert params["sync_batch_size"] == 7 and params["reconnect_factor"] == 2.0
    assert svc.retry_policy(1) == 1.0 and svc.retry_policy(2) == 2.0
    for bad in ({"nope": 1}, {"sync_batch_size": 0}, {"sync_batch_size": 1.5},
                {"reconnect_max_delay": "x"}):
        with pytest.raises(InvalidNodeParameter):
            svc.set_advanced_node_parameters(bad)
    assert svc.info() == {"connection_count": 0, "head_block_num": 0,
                          "head_block_id": "0" * 40, "blocks_applied": 0,
                          "blocks_from_peers": 0}


@pytest.mark.parametrize("params,message", [
    ({"sync_batch_size": float("nan")}, "^sync_batch_size must be a finite number, got nan$"),
    ({"sync_batch_size": "NaN"}, "^sync_batch_size must be a finite number, got 'NaN'$"),
    ({"sync_batch_size": True}, "^sync_batch_size must be a number, got True$"),
    ({"sync_batch_size": 10 ** 400}, "^sync_batch_size must be a number, got 1000"),
    ({"reconnect_initial_delay": float("nan")},
     "^reconnect_initial_delay must be a finite number, got nan$"),
    ({"reconnect_max_delay": float("inf")},
     "^reconnect_max_delay must be a finite number, got inf$"),
    ({"reconnect_jitter": "-inf"}, "^reconnect_jitter must be a finite number, got '-inf'$"),
    ({"reconnect_factor": False}, "^reconnect_factor must be a number, got False$"),
    ({"reconnect_factor": None}, "^reconnect_factor must be a number, got None$"),
    ({"reconnect_factor": [2]}, "^reconnect_factor must be a number, got \\[2\\]$"),
])
def test_node_parameters_refuse_non_finite_and_bool(follower, params, message):
    svc = PeerService(follower, reactor=reactor)
    before = svc.get_advanced_node_parameters()
    with pytest.raises(InvalidNodeParameter, match=message):
        svc.set_advanced_node_parameters({"sync_batch_size": 3, "reconnect_factor": 3,
                                          **params})
    assert svc.get_advanced_node_parameters() == before  # nothing changed, not even the
    # valid values given before the bad one
    with pytest.raises(InvalidNodeParameter, match=message):
        PeerService(follower, reactor=reactor, parameters=params)


@pytest.mark.parametrize("block_api", [True, False])
@pytest_twisted.inlineCallbacks
def test_follow_sync_live_and_relay(producer, follower, block_api):
    seen = {producer: [], follower: []}
    for c in seen:
        c.add_block_observer(lambda applied, c=c: seen[c].append(applied))
    producer.push_transaction(sign(producer, [claim_op()]))
    produce(producer, 25)
    factory = ChainRpcFactory(producer, block_api=block_api)
    port = yield listen(factory)
    svc = PeerService(follower, reactor=reactor, parameters=dict(FAST, sync_batch_size=10))
    svc.startService()
    yield svc.add_node(f"127.0.0.1:{port.getHost().port}")
    yield wait_for(lambda: follower.head_block_num == 25)
    assert follower.head_block_id == producer.head_block_id
    assert follower.state.balance("1.2.6", "1.3.0") == producer.state.balance("1.2.6", "1.3.0")
    used = [m for _a, m in factory.calls]
    if block_api:  # batches of 10
        assert used.count("get_blocks") == 3 and "get_block" not in used
    else:  # tried once, denied, then pipelined get_block
        assert used.count("get_blocks") == 1 and used.count("get_block") == 25
    # live: new producer blocks arrive through block-applied notices
    produce(producer, 3)
    yield wait_for(lambda: follower.head_block_num == 28)
    [peer] = svc.connected_peers()
    assert peer["state"] == "live" and peer["head_block_num"] == 28
    assert svc.info()["connection_count"] == 1 and svc.info()["blocks_applied"] == 28
    assert svc.info()["blocks_from_peers"] == 28
    # a transfer accepted by the follower is relayed and lands in a producer block
    trx = sign(follower, [transfer_op(4242)])
    follower.push_transaction(trx)
    accepted = yield svc.relay_transaction(trx)
    assert accepted == 1 and len(producer.pending_transactions) == 1
    produce(producer)
    yield wait_for(lambda: follower.head_block_num == 29)
    assert follower.state.balance("1.2.7", "1.3.0") == 4242 == producer.state.balance(
        "1.2.7", "1.3.0")
    assert follower.pending_transactions == []
    # the follower's plugins see the same blocks and operations as the producer's
    for n in range(1, 30):
        assert follower.get_block(n) == producer.get_block(n)
    assert len(seen[follower]) == 29
    assert seen[follower] == seen[producer]
    yield close(svc, port)


@pytest_twisted.inlineCallbacks
def test_login_at_connect(producer, follower):
    produce(producer, 5)
    factory = ChainRpcFactory(producer, block_api=False)
    port = yield listen(factory)
    svc = PeerService(follower, reactor=reactor, parameters=FAST)
    svc.startService()
    yield svc.add_node(f"peer:secret@127.0.0.1:{port.getHost().port}")
    yield wait_for(lambda: follower.head_block_num == 5)
    used = [m for _a, m in factory.calls]
    # login first: the peer's "*" entry may grant nothing before it
    assert used[:2] == ["login", "get_chain_id"] and "get_blocks" in used
    assert used.count("get_block") == 0
    assert svc.potential_peers()[0]["addr"] == f"127.0.0.1:{port.getHost().port}"
    yield close(svc, port)


@pytest.mark.parametrize("credentials,block_api", [
    ("bytemaster:wrongpw", False), ("bytemaster:supersecret", True)])
@pytest_twisted.inlineCallbacks
def test_real_site_login_refused_continues_anonymously(producer, follower, captured,
                                                       credentials, block_api):
    """A real RPC site with an api-access file (bytemaster may use
    block_api, "*" only database/network_broadcast/history): a refused
    login logs the connection out (docs/wire-contract.rst s. 2), so the follower
    logs in anonymously again and syncs through database get_block; the
    right password gets block_api.  No error, no traceback."""
    from nodeapi.rpc.access import ApiAccess

    produce(producer, 5)
    site = RunningSite(make_node(producer), ApiAccess.from_json(VECTORS))
    svc = PeerService(follower, seed_nodes=[f"{credentials}@127.0.0.1:{site.port}"],
                      reactor=reactor, parameters=FAST)
    svc.startService()
    yield wait_for(lambda: follower.head_block_num == 5)
    produce(producer, 2)  # live, through the block-applied notices
    yield wait_for(lambda: follower.head_block_num == 7)
    assert follower.head_block_id == producer.head_block_id
    [peer] = svc.peers.values()
    assert peer.state == "live" and peer.sync_failures == 0
    assert peer.follower.use_get_block is not block_api
    texts = [text for _level, text, _e in captured]
    refused = [t for t in texts if "refused the login" in t]
    if block_api:
        assert refused == []
    else:
        assert refused == [f"Peer 127.0.0.1:{site.port} refused the login as bytemaster; "
                           "continuing anonymously"]
        assert f"Peer 127.0.0.1:{site.port} denies block_api; using database get_block" \
            in texts
    assert [t for level, t, _e in captured if level in ("error", "critical")] == []
    assert not [e for _l, _t, e in captured if "log_failure" in e]
    yield close(svc)
    yield site.stop()


NO_STAR = {"permission_map": [["bytemaster", {
    "password_hash_b64": "9e9GF7ooXVb9k4BoSfNIPTelXeGOZ5DrgOYMj94elaY=",
    "password_salt_b64": "INDdM6iCi/8=", "allowed_apis": ["database_api", "block_api"]}]]}
STAR_WITHOUT_DATABASE = {"permission_map": NO_STAR["permission_map"] + [["*", {
    "password_hash_b64": "*", "password_salt_b64": "*",
    "allowed_apis": ["network_broadcast_api"]}]]}


@pytest.mark.parametrize("access,error", [
    (NO_STAR, "login as bytemaster refused, and anonymous logins too"),
    (STAR_WITHOUT_DATABASE, "Peer call get_chain_id failed: Execution error: Assert "
                            "Exception: is_allowed: Access denied (code 10)"),
])
@pytest_twisted.inlineCallbacks
def test_real_site_refusing_everything_backs_off(producer, follower, captured, access,
                                                 error):
    """Wrong password and nothing anonymous allowed: each attempt connects
    (TCP and WebSocket succeed), fails, logs ONE error line without a
    traceback, and the reconnect delay still grows (the injected clock's
    scheduled delays), although the ClientService counts from 1 again at
    every connect."""
    from nodeapi.rpc.access import ApiAccess

    produce(producer, 2)
    site = RunningSite(make_node(producer), ApiAccess.from_json(access))
    clock = task.Clock()
    svc = PeerService(follower, seed_nodes=[f"bytemaster:wrongpw@127.0.0.1:{site.port}"],
                      reactor=reactor, clock=clock,
                      parameters={"reconnect_initial_delay": 1, "reconnect_factor": 2,
                                  "reconnect_max_delay": 100, "reconnect_jitter": 0})
    svc.startService()
    delays = []
    for attempt in range(4):
        yield wait_for(lambda: clock.getDelayedCalls())  # failed, retry scheduled
        [call] = clock.getDelayedCalls()
        delays.append(call.getTime() - clock.seconds())
        clock.advance(delays[-1])
    assert delays == [1, 2, 4, 8]
    [peer] = svc.peers.values()
    assert peer.sync_failures == 4 and follower.head_block_num == 0
    errors = [t for level, t, _e in captured if level in ("error", "critical")]
    expected = error.format(port=site.port)
    assert errors == [f"Peer 127.0.0.1:{site.port} failed ({n} in a row): "
                      f"{expected}; reconnecting in {d:.1f} s"
                      for n, d in zip(range(1, 5), delays)]
    assert not [e for _l, _t, e in captured if "log_failure" in e]
    yield close(svc)
    yield site.stop()


@pytest_twisted.inlineCallbacks
def test_bad_signature_marks_peer_bad(producer, follower):
    produce(producer, 6)

    def tamper(block):
        if block["previous"].startswith("00000003"):
            sig = block["witness_signature"]
            block["witness_signature"] = sig[:-2] + ("00" if sig[-2:] != "00" else "01")
        return block

    factory = ChainRpcFactory(producer, tamper=tamper)
    port = yield listen(factory)
    clock = task.Clock()
    svc = PeerService(follower, reactor=reactor, clock=clock, parameters=FAST)
    svc.startService()
    yield svc.add_node(f"127.0.0.1:{port.getHost().port}")
    yield wait_for(lambda: svc.potential_peers()[0]["state"] == "bad")
    assert follower.head_block_num == 3
    yield wait_for(lambda: not factory.clients)
    [peer] = svc.potential_peers()
    assert "signed by" in peer["bad_reason"] or "signature" in peer["bad_reason"]
    assert svc.connected_peers() == []
    # not retried: its ClientService left the tree, no reconnect is scheduled
    assert list(svc) == [] and clock.getDelayedCalls() == []
    clock.advance(3600)
    assert follower.head_block_num == 3 and not factory.clients
    # the follower keeps its chain and keeps accepting transactions
    follower.push_transaction(sign(follower, [claim_op()]))
    assert len(follower.pending_transactions) == 1
    # add_node names it again: retried, rejected again at the same block
    yield svc.add_node(f"127.0.0.1:{port.getHost().port}")
    yield wait_for(lambda: svc.potential_peers()[0]["state"] == "bad")
    assert follower.head_block_num == 3
    yield close(svc, port)


@pytest_twisted.inlineCallbacks
def test_malformed_block_marks_peer_bad(producer, follower):
    produce(producer, 3)

    def tamper(block):
        if block["previous"].startswith("00000001"):
            del block["witness"]
        return block

    port = yield listen(ChainRpcFactory(producer, tamper=tamper))
    svc = PeerService(follower, reactor=reactor, parameters=FAST)
    svc.startService()
    yield svc.add_node(f"127.0.0.1:{port.getHost().port}")
    yield wait_for(lambda: svc.potential_peers()[0]["state"] == "bad")
    assert "Malformed block" in svc.potential_peers()[0]["bad_reason"]
    assert follower.head_block_num == 1
    yield close(svc, port)


@pytest_twisted.inlineCallbacks
def test_block_from_the_future_marks_peer_bad(producer, follower):
    """A peer block 5 s or more ahead of this service's reactor clock is
    refused (graphene handle_block "Rejecting block with timestamp in the
    future"); the follower keeps the blocks before it."""
    produce(producer, 2)
    when = int(reactor.seconds()) + 60
    producer.generate_block(when, producer.get_scheduled_witness(
        producer.get_slot_at_time(when)), DEV_WIF)
    from nodeapi.rpc.access import ApiAccess


    site = RunningSite(make_node(producer), ApiAccess.default())
    svc = PeerService(follower, reactor=reactor, parameters=FAST)
    svc.startService()
    yield svc.add_node(f"127.0.0.1:{site.port}")
    yield wait_for(lambda: svc.potential_peers()[0]["state"] == "bad")
    reason = svc.potential_peers()[0]["bad_reason"]
    assert reason.startswith("Rejecting block with timestamp in the future: "
                             f"{producer.get_block(3)['timestamp']} is ")
    assert follower.head_block_num == 2 and svc.info()["blocks_applied"] == 2
    assert follower.head_block_id == producer.get_block(3)["previous"]
    yield close(svc)
    yield site.stop()


@pytest_twisted.inlineCallbacks
def test_other_chain_is_rejected(producer, follower):
    produce(producer, 2)
    port = yield listen(ChainRpcFactory(producer, chain_id="11" * 32))
    svc = PeerService(follower, reactor=reactor, parameters=FAST)
    svc.startService()
    yield svc.add_node(f"127.0.0.1:{port.getHost().port}")
    yield wait_for(lambda: svc.potential_peers()[0]["state"] == "bad")
    assert "chain id" in svc.potential_peers()[0]["bad_reason"]
    assert follower.head_block_num == 0
    yield close(svc, port)


@pytest_twisted.inlineCallbacks
def test_reconnect_after_producer_restart(producer, follower):
    """The real RPC site goes away and comes back on the same port: the
    follower reconnects after the first reconnect delay (on the injected
    clock) and catches up."""
    from twisted.logger import formatEvent, globalLogPublisher

    from nodeapi.rpc.access import ApiAccess
    from nodeapi.rpc.site import rpc_site


    logged = []

    def observer(event):
        logged.append(formatEvent(event))

    globalLogPublisher.addObserver(observer)
    produce(producer, 4)
    site = rpc_site(make_node(producer), ApiAccess.default(), reactor=reactor)
    port = reactor.listenTCP(0, site, interface="127.0.0.1")
    portnum = port.getHost().port
    clock = task.Clock()
    svc = PeerService(follower, seed_nodes=[f"127.0.0.1:{portnum}"], reactor=reactor,
                      clock=clock,
                      parameters={"reconnect_initial_delay": 5, "reconnect_jitter": 0})
    svc.startService()
    yield wait_for(lambda: follower.head_block_num == 4)
    yield port.stopListening()
    for proto in list(site.ws_factory.connections):
        proto.dropConnection(abort=True)
    yield wait_for(lambda: svc.potential_peers()[0]["state"] == "disconnected")
    yield wait_for(lambda: clock.getDelayedCalls())
    [call] = clock.getDelayedCalls()
    assert call.getTime() - clock.seconds() == 5  # the first reconnect delay
    produce(producer, 5)
    port2 = reactor.listenTCP(portnum, site, interface="127.0.0.1")
    clock.advance(5)
    yield wait_for(lambda: follower.head_block_num == 9)
    assert follower.head_block_id == producer.head_block_id
    yield close(svc, port2)
    globalLogPublisher.removeObserver(observer)
    # the peer client factory is quiet at each (re)connection
    assert any(line.startswith("Peer 127.0.0.1:") and " connected (chain " in line
               for line in logged)
    assert not [line for line in logged if "RemoteFactory" in line], logged


@pytest_twisted.inlineCallbacks
def test_add_node_unreachable(follower):
    port = yield listen(ChainRpcFactory(follower))
    portnum = port.getHost().port
    yield port.stopListening()
    svc = PeerService(follower, reactor=reactor, parameters=FAST)
    svc.startService()
    with pytest.raises(PeerUnreachable):
        yield svc.add_node(f"127.0.0.1:{portnum}")
    with pytest.raises(InvalidPeerAddress):
        yield svc.add_node("localhost")
    assert [p["state"] for p in svc.potential_peers()] == ["connecting"]
    yield close(svc)


def test_reconnect_backoff_with_injected_clock(follower):
    """The reconnect delays grow on the injected clock; the reactor is a
    MemoryReactorClock (connections and HostnameEndpoint's own timers)."""
    from twisted.internet.error import ConnectionRefusedError
    from twisted.internet.testing import MemoryReactorClock
    from twisted.python.failure import Failure

    memory, clock = MemoryReactorClock(), task.Clock()
    svc = PeerService(follower, seed_nodes=["seed.example:8090"], reactor=memory,
                      clock=clock,
                      parameters={"reconnect_initial_delay": 2, "reconnect_factor": 3,
                                  "reconnect_max_delay": 10, "reconnect_jitter": 0})
    svc.startService()
    delays = []
    for attempt in range(4):
        assert len(memory.tcpClients) == attempt + 1
        host, port, factory, _timeout, _bind = memory.tcpClients[-1]
        # a HostnameEndpoint: the name resolved (MemoryReactor answers 127.0.0.1)
        assert (host, port) == ("127.0.0.1", 8090)
        factory.clientConnectionFailed(memory.connectors[-1],
                                       Failure(ConnectionRefusedError()))
        memory.advance(1)  # the endpoint gives up on its last address
        [call] = clock.getDelayedCalls()
        delays.append(call.getTime() - clock.seconds())
        clock.advance(delays[-1])
    assert delays == [2, 6, 10, 10]
    assert svc.potential_peers()[0]["state"] == "connecting"
    assert svc.connected_peers() == []
    svc.stopService()


@pytest_twisted.inlineCallbacks
def test_catch_up_asks_ahead_and_syncs_the_log_once(producer, follower, monkeypatch):
    """While a batch is applied the next ones are already asked for (the
    sync never waits a round trip per batch), and a catch-up shorter than
    a second syncs the block log once, when it reaches the peer's head
    (each block still on disk before the catch-up is called done)."""
    import nodeapi.chain.blocklog as blocklog
    from nodeapi.peers.follower import FETCH_AHEAD
    from nodeapi.rpc.access import DEFAULT_ALLOWED_APIS, ApiAccess

    access = ApiAccess.from_json({"permission_map": [["*", {
        "password_hash_b64": "*", "password_salt_b64": "*",
        "allowed_apis": sorted(DEFAULT_ALLOWED_APIS | {"block_api"})}]]})
    produce(producer, 120)
    server = RunningSite(make_node(producer), access)
    synced = []
    real = blocklog._sync
    monkeypatch.setattr(blocklog, "_sync", lambda fd: (synced.append(fd), real(fd)))
    follower.block_log.sync = True  # as a node's (test chains skip it)
    svc = PeerService(follower, reactor=reactor, parameters=dict(FAST, sync_batch_size=10))
    svc.startService()
    try:
        yield svc.add_node(f"127.0.0.1:{server.port}")
        [peer] = svc.peers.values()
        asked = []  # the get_blocks calls in flight as each batch is applied
        apply_slice = peer.follower._apply_slice

        def spy(blocks, proto):
            asked.append(list(peer.follower._in_flight))
            return apply_slice(blocks, proto)

        monkeypatch.setattr(peer.follower, "_apply_slice", spy)
        yield wait_for(lambda: follower.head_block_num == 120)
        assert follower.head_block_id == producer.head_block_id
        assert len(asked) == 12
        assert asked[0] == [10] * FETCH_AHEAD  # batches 2 and 3 asked for before 1 applies
        assert asked[-1] == []  # nothing beyond the peer's head
        assert len(synced) == 1
        yield wait_for(lambda: svc.connected_peers()[0]["state"] == "live")
        # the blocks that follow come one by one, each synced
        produce(producer, 1)
        yield wait_for(lambda: follower.head_block_num == 121)
        assert len(synced) == 2
    finally:
        yield svc.stopService()
        yield server.stop()


@pytest_twisted.inlineCallbacks
def test_batch_adapts_to_the_real_peers_get_blocks_limit(producer, follower):
    """A follower asking for batches of 1,000 from a real node whose
    api-limit-get-blocks is 100 (the default) learns the limit from the
    error and syncs in batches of 100 instead of failing forever."""
    from nodeapi.rpc.access import DEFAULT_ALLOWED_APIS, ApiAccess

    access = ApiAccess.from_json({"permission_map": [["*", {
        "password_hash_b64": "*", "password_salt_b64": "*",
        "allowed_apis": sorted(DEFAULT_ALLOWED_APIS | {"block_api"})}]]})
    produce(producer, 250)
    server = RunningSite(make_node(producer), access)
    svc = PeerService(follower, reactor=reactor, parameters=dict(FAST, sync_batch_size=1000))
    svc.startService()
    try:
        yield svc.add_node(f"127.0.0.1:{server.port}")
        yield wait_for(lambda: follower.head_block_num == 250)
        assert follower.head_block_id == producer.head_block_id
        [peer] = svc.peers.values()
        assert peer.follower.batch_limit == 100 and peer.sync_failures == 0
        yield wait_for(lambda: svc.connected_peers()[0]["state"] == "live")
    finally:
        yield svc.stopService()
        yield server.stop()


@pytest_twisted.inlineCallbacks
def test_full_disk_on_the_follower_is_one_line_per_attempt(producer, follower, captured):
    """The follower cannot store the peer's blocks (its block log's disk is
    full): each failed sync logs ONE error line naming the cause, without a
    traceback, the peer is not marked bad and the reconnect delay grows;
    once the disk has room the follower catches up."""
    produce(producer, 3)
    site = RunningSite(make_node(producer), ApiAccess.from_json(VECTORS))
    full = {"on": True}
    append = follower.block_log.append

    def no_space(block):
        if full["on"]:
            raise OSError(28, "No space left on device")
        return append(block)
    follower.block_log.append = no_space
    clock = task.Clock()
    svc = PeerService(follower, seed_nodes=[f"127.0.0.1:{site.port}"], reactor=reactor,
                      clock=clock, parameters={"reconnect_initial_delay": 1,
                                               "reconnect_factor": 2,
                                               "reconnect_max_delay": 100,
                                               "reconnect_jitter": 0})
    svc.startService()
    delays = []
    for _attempt in range(2):
        yield wait_for(lambda: clock.getDelayedCalls())
        [call] = clock.getDelayedCalls()
        delays.append(call.getTime() - clock.seconds())
        clock.advance(delays[-1])
    [peer] = svc.peers.values()
    assert peer.sync_failures >= 2 and peer.describe()["state"] != "bad"
    errors = [t for level, t, _e in captured if level in ("error", "critical")
              and t.startswith("Peer 127.0.0.1:")]
    assert len(errors) >= 2 and all("cannot store its blocks" in t and "No space left" in t
                                    for t in errors)
    assert not [e for _l, _t, e in captured if "log_failure" in e]
    assert delays == [1, 2]
    full["on"] = False
    yield wait_for(lambda: follower.head_block_num == 3, timeout=20)
    yield close(svc)
    yield site.stop()


@pytest_twisted.inlineCallbacks
def test_a_planned_restart_of_the_peer_is_one_info_line(producer, follower):
    """The peer stops cleanly (its RPC site closes the WebSocket with 1001
    going away) and is down for several reconnection attempts: the follower
    says so in one info line, logs none of the refused reconnections, and
    follows it again once it is back."""
    from twisted.logger import LogLevel, formatEvent, globalLogPublisher

    from nodeapi.rpc.site import rpc_site

    logged = []

    def observer(event):
        if event.get("log_namespace", "").startswith("nodeapi.peers"):
            logged.append((event["log_level"], formatEvent(event)))

    produce(producer, 3)
    site = rpc_site(make_node(producer), ApiAccess.default(), reactor=reactor)
    port = reactor.listenTCP(0, site, interface="127.0.0.1")
    portnum = port.getHost().port
    clock = task.Clock()
    svc = PeerService(follower, seed_nodes=[f"127.0.0.1:{portnum}"], reactor=reactor,
                      clock=clock,
                      parameters={"reconnect_initial_delay": 1, "reconnect_jitter": 0})
    svc.startService()
    yield wait_for(lambda: follower.head_block_num == 3)
    globalLogPublisher.addObserver(observer)
    try:
        yield port.stopListening()
        yield site.ws_factory.going_away()  # 1001 "node stopping" to every connection
        yield wait_for(lambda: svc.potential_peers()[0]["state"] == "disconnected")
        for attempt in range(4):  # the port is closed: each reconnection is refused
            yield wait_for(lambda: clock.getDelayedCalls())
            [call] = clock.getDelayedCalls()
            clock.advance(call.getTime() - clock.seconds())
        yield wait_for(lambda: clock.getDelayedCalls())  # the 4th refused too
        produce(producer, 2)
        port2 = reactor.listenTCP(portnum, site, interface="127.0.0.1")
        [call] = clock.getDelayedCalls()
        clock.advance(call.getTime() - clock.seconds())
        yield wait_for(lambda: follower.head_block_num == 5)
    finally:
        globalLogPublisher.removeObserver(observer)
    yield close(svc, port2)
    lines = [text for _level, text in logged]
    assert lines[0] == (f"Peer 127.0.0.1:{portnum} is stopping (1001 going away: node "
                        "stopping); following it again when it is back")
    assert not [line for line in lines if "unreachable" in line], lines
    assert [level for level, _text in logged if level != LogLevel.info] == [], lines
    assert [line for line in lines if line.startswith(f"Peer 127.0.0.1:{portnum} connected (")
            and line.endswith(", head 5)")], lines
    assert svc.peers[f"127.0.0.1:{portnum}"].stopping_since is None
    assert svc.potential_peers()[0]["reconnects"] == 1

