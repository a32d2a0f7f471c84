"""graphene's peer protocol between nodeapi nodes and against hostile
peers, over real loopback sockets and real chains (nodeapi.peers.stcp,
core_messages, p2p_connection, p2p_node).  The same code against
bitshares-core's witness_node is tests/reference/test_p2p_reference.py."""

import hashlib
import json
import socket
import struct

import coincurve
import pytest
import pytest_twisted
from cryptography.hazmat.primitives.asymmetric import ec
from twisted.internet import protocol, reactor, task, threads
from twisted.logger import formatEvent, globalLogPublisher
from zope.interface import implementer
from zope.interface.exceptions import Invalid
from zope.interface.verify import verifyObject

from nodeapi.metrics_health import key_figures
from nodeapi.peers import core_messages as cm
from nodeapi.peers import stcp
from nodeapi.peers.errors import InvalidNodeParameter, PeerDropped
from nodeapi.peers.p2p_peer import P2PPeer
from nodeapi.peers.p2p_peerdb import MAX_POTENTIAL_PEERS, PeerDatabase
from nodeapi.peers.remote import IRemoteOwner, RemoteHead
from nodeapi.peers.service import PeerService, split_seed_nodes
from nodeapi.protocol.block import block_id, deserialize_block, serialize_block
from nodeapi.protocol.node_address import parse_node_address

from kit.chain import claim_op, produce
from kit.keys import CHAIN_ID, DEV_WIF
from kit.p2p_raw import RawPeer, accepted_peer, closed, firewall_probe, raw_hello
from kit.peers import FAST, listen
from kit.signing import sign
from kit.wait import wait_for

#: city_hash_crc_128(bytes(range(64))) as (hi, lo)
PINNED_CITY_HASH = (8041723999619817225, 537220359260197852)


# -- the secure stream (stcp_socket) ---------------------------------------------

def test_shared_secret_is_sha512_of_the_ecdh_x_coordinate():
    """fc get_shared_secret: SHA-512 of the x coordinate of the ECDH
    point; both sides get the same 64 bytes, and the x coordinate is what
    an independent ECDH (the cryptography package's) computes."""
    a, b = stcp.new_private_key(), stcp.new_private_key()
    a_pub = a.public_key.format(compressed=True)
    b_pub = b.public_key.format(compressed=True)
    secret = stcp.shared_secret(a, b_pub)
    assert secret == stcp.shared_secret(b, a_pub) and len(secret) == 64
    a_ec = ec.derive_private_key(int.from_bytes(a.secret, "big"), ec.SECP256K1())
    b_ec = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256K1(), b_pub)
    assert secret == hashlib.sha512(a_ec.exchange(ec.ECDH(), b_ec)).digest()
    with pytest.raises(ValueError):
        stcp.shared_secret(a, b_pub[:32])


def test_city_hash_and_the_stream_key():
    """fc city_hash_crc_128 of a 64-byte secret (city_hash128: seed from the
    first 16 bytes, CityMurmur of the other 48).  The value was checked
    against bitshares-core 7.0.2: with this IV the reference's stream
    decrypts (tests/reference); here it is pinned, with the key
    (SHA-256 of the secret) and the IV layout (high word first, each
    little-endian)."""
    secret = bytes(range(64))
    hi, lo = stcp.city_hash_crc_128(secret)
    key, iv = stcp.stream_key_iv(secret)
    assert key == hashlib.sha256(secret).digest()
    assert iv == struct.pack("<QQ", hi, lo)
    assert (hi, lo) == PINNED_CITY_HASH
    with pytest.raises(ValueError):
        stcp.city_hash_crc_128(bytes(32))


def test_stream_cipher_is_one_cbc_stream_per_direction():
    secret = hashlib.sha512(b"s").digest()
    sender, receiver = stcp.StreamCipher(secret), stcp.StreamCipher(secret)
    plain = bytes(range(256)) * 4
    chunks = [sender.encrypt(plain[i:i + 64]) for i in range(0, len(plain), 64)]
    assert b"".join(chunks) == stcp.StreamCipher(secret).encrypt(plain)  # continuous CBC
    assert receiver.decrypt(b"".join(chunks)[:512]) + receiver.decrypt(
        b"".join(chunks)[512:]) == plain
    with pytest.raises(ValueError):
        sender.encrypt(b"x" * 15)


# -- messages (message.hpp, core_messages.hpp) -------------------------------------

def test_framing_pads_header_and_data_to_16_bytes():
    data = cm.encode(cm.ADDRESS_REQUEST, {})
    assert data == b"" and cm.frame(cm.ADDRESS_REQUEST, data) == struct.pack(
        "<II", 0, 5009) + bytes(8)
    framed = cm.frame(cm.CURRENT_TIME_REQUEST, cm.encode(cm.CURRENT_TIME_REQUEST,
                                                         {"request_sent_time": 7}))
    assert len(framed) == 16 and framed[:8] == struct.pack("<II", 8, 5012)
    assert cm.framed_size(9) == 32 and cm.framed_size(8) == 16
    with pytest.raises(cm.BadMessage):
        cm.frame(cm.BLOCK, bytes(cm.MAX_MESSAGE_SIZE + 1))


def test_hello_and_block_messages_round_trip(producer):
    hello = {"user_agent": "nodeapi", "core_protocol_version": 106,
             "inbound_address": "127.0.0.1", "inbound_port": 1776, "outbound_port": 5,
             "node_public_key": "02" + "11" * 32, "signed_shared_secret": "1f" + "22" * 64,
             "chain_id": CHAIN_ID,
             "user_data": {"platform": "linux", "bitness": 64, "n": -3, "ok": True,
                           "list": [1, "a", None], "obj": {"k": "v"}}}
    data = cm.encode(cm.HELLO, hello)
    assert cm.decode(cm.HELLO, data, "TEST") == hello
    produce(producer, 2)
    block = producer.get_block(2)
    data = cm.encode(cm.BLOCK, {"block": block, "block_id": block_id(block)}, "TEST")
    assert data == serialize_block(block, "TEST") + bytes.fromhex(block_id(block))
    back = cm.decode(cm.BLOCK, data, "TEST")
    assert back["block_id"] == block_id(back["block"]) == producer.head_block_id
    assert deserialize_block(serialize_block(block, "TEST"), "TEST") == back["block"]


def test_variants_nested_too_deeply_are_refused():
    deep = b"\x06\x01" * 300 + b"\x00"
    with pytest.raises(cm.BadMessage):
        cm.VARIANT.unpack(deep, 0)


def test_seed_nodes_split_into_p2p_and_rpc():
    rpc, p2p = split_seed_nodes([parse_node_address(t) for t in (
        "127.0.0.1:1776", "ws://127.0.0.1:8090", "u:p@127.0.0.1:8091", "127.0.0.1:1776")])
    assert p2p == ["127.0.0.1:1776"]
    assert [a.address for a in rpc] == ["127.0.0.1:8090", "127.0.0.1:8091"]


# -- nodeapi <-> nodeapi over loopback ------------------------------------------------

def _service(chain, **kwargs):
    return PeerService(chain, reactor=reactor, parameters=FAST, **kwargs)


@pytest_twisted.inlineCallbacks
def _listening(chain, **kwargs):
    svc = _service(chain, p2p_endpoint="127.0.0.1:0", **kwargs)
    svc.startService()
    yield wait_for(lambda: svc.p2p.listening_port is not None)
    return svc, f"127.0.0.1:{svc.p2p.listening_port.getHost().port}"


@pytest_twisted.inlineCallbacks
def _stop(*services):
    for svc in services:
        yield svc.stopService()
    yield task.deferLater(reactor, 0.05, lambda: None)


@pytest_twisted.inlineCallbacks
def test_a_node_syncs_relays_and_serves_over_p2p(producer, follower):
    """A follower dials a producer: the handshake completes both ways, the
    follower syncs (more than one fetch batch of 200), then blocks and
    transactions relay: a block produced afterwards arrives by inventory
    and fetch, a transaction pushed at the follower reaches the producer's
    pending queue, and nothing is echoed back."""
    produce(producer, 450)
    a, address = yield _listening(producer)
    b = _service(follower, p2p_seeds=[address])
    b.startService()
    try:
        yield wait_for(lambda: follower.head_block_num == 450, timeout=60)
        assert follower.head_block_id == producer.head_block_id
        assert b.blocks_from_peers == 450
        yield wait_for(lambda: a.p2p.connected_peers() and b.p2p.connected_peers())
        [seen_by_a] = a.p2p.connected_peers()
        [seen_by_b] = b.p2p.connected_peers()
        assert seen_by_a["info"]["direction"] == "inbound"
        assert seen_by_b["info"]["user_agent"] == "nodeapi"
        assert seen_by_b["info"]["node_id"] == a.p2p.node_public_key
        produce(producer, 1)
        yield wait_for(lambda: follower.head_block_num == 451, timeout=5)
        assert b.p2p.blocks_received == 451
        trx = sign(follower, [claim_op()])
        follower.push_transaction(trx)
        count = yield b.relay_transaction(
            {k: v for k, v in follower.pending_transactions[0].items()
             if k != "operation_results"})
        assert count == 1
        yield wait_for(lambda: len(producer.pending_transactions) == 1, timeout=5)
        assert a.p2p.transactions_received == 1 and b.p2p.transactions_received == 0
        info = b.info()
        assert info["connection_count"] == 1 and info["node_id"] == b.p2p.node_public_key
    finally:
        yield _stop(b, a)


@pytest_twisted.inlineCallbacks
def test_a_peer_on_another_chain_is_rejected(producer):
    a, address = yield _listening(producer)
    try:
        # a raw peer completes the key exchange and says hello on another chain
        peer = yield _raw_hello(address, chain_id="11" * 32)
        msg_type, data = yield _blocking(peer.recv_message)
        assert msg_type == cm.CONNECTION_REJECTED
        rejected = cm.decode(cm.CONNECTION_REJECTED, data, "TEST")
        assert rejected["reason_code"] == cm.REJECT_DIFFERENT_CHAIN
        assert (yield _blocking(peer.closed))
        assert a.p2p.connected_peers() == []
    finally:
        yield _stop(a)


@implementer(IRemoteOwner)
class _RecordingOwner:
    """An owner of a P2P node's connections that writes down each report
    (name, the peer's address, the arguments, what the node answered) and
    hands it on to the node."""

    def __init__(self, node):
        self.node = node
        self.reports = []

    def _report(self, name, remote, *args):
        answer = getattr(self.node, name)(remote, *args)
        self.reports.append((name, remote.address, args, answer))
        return answer

    def claim_chain(self, remote, chain_id):
        return self._report("claim_chain", remote, chain_id)

    def connected(self, remote, head):
        return self._report("connected", remote, head)

    def notice(self, remote, callback_id, payload):
        return self._report("notice", remote, callback_id, payload)

    def call_timed_out(self, remote, method):
        return self._report("call_timed_out", remote, method)

    def failed(self, remote, error):
        return self._report("failed", remote, error)

    def lost(self, remote):
        return self._report("lost", remote)


def test_a_p2p_connection_needs_an_iremoteowner():
    with pytest.raises(Invalid):
        P2PPeer(None, "127.0.0.1:1776", "inbound", 0.0, owner=object())


@pytest_twisted.inlineCallbacks
def test_a_p2p_peer_reports_to_its_owner_as_a_remote_node_does(producer, follower):
    """The node provides IRemoteOwner; a peer that dials it reports its
    hello's chain (claimed), its activation with the head its hello told
    (the dialling producer's head: number, id, time) and, when it stops,
    its loss; nothing failed."""
    produce(producer, 3)
    a, address = yield _listening(follower)
    assert verifyObject(IRemoteOwner, a.p2p)
    owner = a.p2p.owner = _RecordingOwner(a.p2p)
    b = _service(producer, p2p_seeds=[address])
    b.startService()
    try:
        yield wait_for(lambda: follower.head_block_num == 3, timeout=10)
        [(peer, p)] = [(p.address, p) for p in a.p2p.peers.values()]
        assert p.owner is owner and p.reconnection is None  # inbound: nothing to redial
        head = RemoteHead(chain_id=CHAIN_ID, head_block_num=3, last_irreversible_block_num=None,
                          head_block_id=producer.head_block_id, time=producer.head_block_time)
        assert owner.reports == [("claim_chain", peer, (CHAIN_ID,), True),
                                 ("connected", peer, (head,), None)]
        yield b.stopService()
        yield wait_for(lambda: len(owner.reports) == 3, timeout=5)
        assert owner.reports[2] == ("lost", peer, (), None)
    finally:
        yield _stop(a)


@pytest_twisted.inlineCallbacks
def test_a_p2p_peer_on_another_chain_is_reported_failed(producer):
    """A hello on another chain: the owner refuses the claim, then hears
    the failure (PeerDropped; True: not a seed, the node logged it), then
    the loss."""
    a, address = yield _listening(producer)
    owner = a.p2p.owner = _RecordingOwner(a.p2p)
    try:
        peer = yield _raw_hello(address, chain_id="11" * 32)
        assert (yield _blocking(peer.closed))
        yield wait_for(lambda: len(owner.reports) == 3, timeout=5)
        (claim, failed, lost) = owner.reports
        assert claim[0] == "claim_chain" and claim[2:] == (("11" * 32,), False)
        assert failed[0] == "failed" and failed[3] is True
        [error] = failed[2]
        assert isinstance(error, PeerDropped)
        assert str(error) == "You are on a different chain from me"
        assert lost == ("lost", claim[1], (), None) and failed[1] == claim[1]
    finally:
        yield _stop(a)


def _blocking(fn, *args):
    """Run a blocking call of the raw peer in a thread (the reactor keeps
    serving the node under test)."""
    return threads.deferToThread(fn, *args)


def _raw_hello(address, chain_id=CHAIN_ID, rcvbuf=None):
    return _blocking(raw_hello, address, chain_id, rcvbuf)


@pytest_twisted.inlineCallbacks
def test_ipv6_listen_dial_and_address_messages(producer, follower, new_chain):
    """A listens on ``[::1]:0`` and on nothing else; B dials ``[::1]:port``
    and syncs.  Peers are named ``[v6]:port`` (network_node answers, the
    peer database).  A raw peer asks A for addresses: B, connected over
    IPv6, is not in them (graphene's ``address_info`` holds an
    ``fc::ip::endpoint``, an IPv4 address and a port: core_messages.hpp),
    as A's hello to an IPv6 peer gives ``0.0.0.0`` as its inbound address.
    bitshares-core 7.0.2 itself listens and dials over IPv4 only."""
    produce(producer, 5)
    a = _service(producer, p2p_endpoint="[::1]:0")
    a.startService()
    try:
        yield wait_for(lambda: a.p2p.listening_port is not None)
        port = a.p2p.listening_port.getHost().port
        assert a.p2p.info()["listening_on"] == f"[::1]:{port}"
        b, address_b = yield _listening(follower, p2p_seeds=[f"[::1]:{port}"])
        yield wait_for(lambda: follower.head_block_num == 5, timeout=10)
        [seen_by_b] = b.p2p.connected_peers()
        assert seen_by_b["host"] == f"[::1]:{port}"
        assert seen_by_b["info"]["addrlocal"].startswith("[::1]:")
        [seen_by_a] = a.p2p.connected_peers()
        assert seen_by_a["host"].startswith("[::1]:")
        # B's inbound port is in A's peer database in the IPv6 form
        assert f"[::1]:{address_b.rsplit(':', 1)[1]}" in a.p2p.potential_peers
        # A's address message leaves the IPv6 peer out
        peer = yield _blocking(accepted_peer, f"[::1]:{port}")
        peer.send_message(cm.ADDRESS_REQUEST, {})
        msg_type, data = yield _blocking(peer.recv_skipping, cm.FETCH_BLOCKCHAIN_ITEM_IDS,
                                         cm.CURRENT_TIME_REQUEST)
        assert msg_type == cm.ADDRESS
        assert cm.decode(cm.ADDRESS, data, "TEST")["addresses"] == []
        peer.close()
    finally:
        yield _stop(b, a)


def test_p2p_endpoint_takes_ipv6_in_brackets():
    from nodeapi.config_parse import parse_p2p_endpoint

    assert parse_p2p_endpoint("[::1]:1776") == "[::1]:1776"
    assert parse_p2p_endpoint("[0:0::1]:1776") == "[::1]:1776"
    assert parse_p2p_endpoint("127.0.0.1:1776") == "127.0.0.1:1776"
    assert parse_p2p_endpoint(":1776") == "0.0.0.0:1776"
    for bad in ("[::g]:1", "::1:1776", "[::1]:99999", "example.org:1"):
        with pytest.raises(ValueError):
            parse_p2p_endpoint(bad)


def _offer_blocks(address, blocks) -> bool:
    """A raw peer through the handshake advertises each block by its
    message hash, sends it when fetched, and then waits: True when the
    node closed the connection."""
    peer = accepted_peer(address)
    empty = {"total_remaining_item_count": 0, "item_type": cm.BLOCK, "item_hashes_available": []}
    # the node's sync request after the handshake: nothing to give (in sync)
    peer.recv_skipping(cm.CURRENT_TIME_REQUEST, cm.ADDRESS)
    peer.send_message(cm.BLOCKCHAIN_ITEM_IDS_INVENTORY, empty)
    for block in blocks:
        data = cm.encode(cm.BLOCK, {"block": block, "block_id": block_id(block)}, "TEST")
        item = hashlib.new("ripemd160", data).hexdigest()
        peer.send_message(cm.ITEM_IDS_INVENTORY, {"item_type": cm.BLOCK,
                                                  "item_hashes_available": [item]})
        while True:
            msg_type, _ = peer.recv_message()
            if msg_type == cm.FETCH_ITEMS:
                break
            if msg_type == cm.FETCH_BLOCKCHAIN_ITEM_IDS:
                peer.send_message(cm.BLOCKCHAIN_ITEM_IDS_INVENTORY, empty)
        peer.send(cm.BLOCK, data)
    try:
        return peer.closed()
    finally:
        peer.close()


@pytest_twisted.inlineCallbacks
def test_a_longer_fork_with_a_bad_block_is_given_up(producer, new_chain):
    """A peer offers a fork longer than the node's chain whose second
    block is not what its witness signed: the first is kept (a shorter
    fork, not checked yet, as graphene's fork database keeps it), the
    second makes the node switch, the bad block is refused, the node pops
    the fork's first block and applies its own again (db_block.cpp
    ``_push_block``: "restore all blocks from the good fork"), and drops
    the peer; its head and state are as before."""
    produce(producer, 3)
    other = new_chain()
    for num in (1, 2):
        other.push_block(producer.get_block(num), now=producer.head_block_time + 60)
    good = other.generate_block(other.get_slot_time(2), other.get_scheduled_witness(2), DEV_WIF)
    nxt = other.generate_block(other.get_slot_time(1), other.get_scheduled_witness(1), DEV_WIF)
    bad = dict(nxt, transaction_merkle_root="11" * 20)
    head, state = producer.head_block_id, producer.state.committed()[0]
    a, address = yield _listening(producer)
    try:
        assert (yield _blocking(_offer_blocks, address, [good, bad]))
        assert producer.head_block_id == head and producer.state.committed()[0] == state
        assert block_id(good) in producer.forks and block_id(bad) not in producer.forks
        assert producer.block_log.head_num == 3
        yield wait_for(lambda: not a.p2p.peers, timeout=5)
    finally:
        yield _stop(a)


def _answer_sync_requests(address, ids_of) -> list:
    """A raw peer through the handshake answers each of the node's sync
    requests with ``ids_of(round)`` (known block ids); returns the
    synopses it was sent, until the node asks nothing for 2 s."""
    peer = accepted_peer(address)
    synopses = []
    try:
        while True:
            peer.sock.settimeout(2)
            try:
                msg_type, data = peer.recv_message()
            except OSError:
                return synopses
            if msg_type != cm.FETCH_BLOCKCHAIN_ITEM_IDS:
                continue
            synopses.append(cm.decode(msg_type, data, "TEST")["blockchain_synopsis"])
            peer.send_message(cm.BLOCKCHAIN_ITEM_IDS_INVENTORY, {
                "total_remaining_item_count": 0, "item_type": cm.BLOCK,
                "item_hashes_available": ids_of(len(synopses))})
    finally:
        peer.close()


@pytest_twisted.inlineCallbacks
def test_a_peer_listing_known_blocks_round_after_round_is_left(producer):
    """Sync rounds go on while the peer's list does not end with the
    synopsis' last block (node.cpp asks again from the last id listed),
    but a peer whose lists bring nothing new three times in a row is no
    longer asked: the node counts itself in sync with it."""
    produce(producer, 3)
    ids = [block_id(producer.get_block(n)) for n in (1, 2, 3)]
    a, address = yield _listening(producer)
    try:
        # block 1, then 1-2, alternately: never ending where the synopsis does
        synopses = yield _blocking(_answer_sync_requests, address,
                                   lambda n: ids[:1] if n % 2 else ids[:2])
        assert synopses[0] == [ids[0], ids[2]]  # from block 1 to the head
        assert synopses[1] == [ids[0]]          # up to the last id listed: block 1
        assert synopses[2] == [ids[0], ids[1]]  # then block 2
        assert len(synopses) == 3
        assert producer.head_block_num == 3
    finally:
        yield _stop(a)


@pytest_twisted.inlineCallbacks
def test_check_firewall_is_ignored_as_the_reference_does(producer):
    """bitshares-core 7.x answers neither check_firewall nor its reply
    (node.cpp ``on_message``: both cases ``break``; the remote firewall
    check is no longer performed, node.cpp ``connect_to_task``): the
    connection stays, the next answer is the time reply."""
    produce(producer, 2)
    a, address = yield _listening(producer)
    try:
        peer = yield _blocking(accepted_peer, address)
        assert (yield _blocking(firewall_probe, peer)) == [cm.CURRENT_TIME_REPLY]
        assert len(a.p2p.connected_peers()) == 1
        peer.close()
    finally:
        yield _stop(a)


@pytest_twisted.inlineCallbacks
def test_garbage_and_oversized_messages_drop_the_peer(producer):
    a, address = yield _listening(producer)
    try:
        # an invalid key in the key exchange
        host, port = address.rsplit(":", 1)
        sock = yield _blocking(socket.create_connection, (host, int(port)), 5)
        sock.sendall(b"\x05" + b"\xff" * 32)
        assert (yield _blocking(closed, sock))
        # a header announcing more than MAX_MESSAGE_SIZE
        peer = yield _blocking(RawPeer, address)
        peer.send_raw_plain(struct.pack("<II", cm.MAX_MESSAGE_SIZE + 1, cm.HELLO) + bytes(8))
        assert (yield _blocking(peer.closed))
        # a hello that does not read
        peer = yield _blocking(RawPeer, address)
        peer.send(cm.HELLO, b"\x05garbage")
        assert (yield _blocking(peer.closed))
        # an unknown message type outside the core range
        peer = yield _blocking(RawPeer, address)
        peer.send(4242, b"")
        assert (yield _blocking(peer.closed))
        yield wait_for(lambda: not a.p2p.peers, timeout=5)
    finally:
        yield _stop(a)


@pytest_twisted.inlineCallbacks
def test_a_seed_reconnects_with_the_remote_nodes_backoff_and_failure_lines(follower):
    """A P2P seed has the reconnection policy and failure lines of every
    connection to another node (peers/reconnect.py ``Reconnection``): a
    seed that accepts TCP and never says a word is dropped after the
    handshake timeout (5 s, on the service's clock), each time one error
    line "P2P seed h:p failed (N in a row): handshake timed out;
    reconnecting in D s" with ``D = backoff(1 + N - 1)`` of the peers'
    parameters (``reconnect_delay``: 1 s doubling, 3 s at most, no
    jitter: 1, 2, 3 s); a closed port is one warning "unreachable" line
    per attempt."""
    silent = protocol.ServerFactory.forProtocol(protocol.Protocol)
    port = yield listen(silent)
    address = f"127.0.0.1:{port.getHost().port}"
    closed_port = yield listen(silent)
    unreachable = f"127.0.0.1:{closed_port.getHost().port}"
    yield closed_port.stopListening()
    lines = []

    def observer(event):
        if event.get("log_namespace", "").startswith("nodeapi.peers.p2p_node"):
            lines.append((event["log_level"].name, formatEvent(event)))

    clock = task.Clock()
    parameters = dict(FAST, reconnect_initial_delay=1.0, reconnect_factor=2.0,
                      reconnect_max_delay=3.0)
    b = PeerService(follower, reactor=reactor, clock=clock, parameters=parameters,
                    p2p_seeds=[address, unreachable])
    globalLogPublisher.addObserver(observer)
    b.startService()
    try:
        for n, delay in ((1, "1.0"), (2, "2.0"), (3, "3.0")):
            yield wait_for(lambda: len(b.p2p.peers) == 1, timeout=5)
            clock.advance(6.0)  # past HANDSHAKE_TIMEOUT, at the next 1 s check
            yield wait_for(lambda: [t for _l, t in lines if f"({n} in a row)" in t],
                           timeout=5)
            [(level, text)] = [(lv, t) for lv, t in lines if f"({n} in a row)" in t]
            assert level == "error"
            assert text == (f"P2P seed {address} failed ({n} in a row): handshake timed "
                            f"out; reconnecting in {delay} s")
            assert b.p2p.seed_reconnections[address].failures == n
            clock.advance(3.0)  # the reconnection delay
        assert not [t for _l, t in lines if t.startswith("Dropping P2P peer")]
        yield wait_for(lambda: [t for _l, t in lines if unreachable in t], timeout=15)
        refused = [(lv, t) for lv, t in lines if t.startswith(f"P2P seed {unreachable} ")]
        assert refused and all(lv == "warn" and " unreachable (" in t for lv, t in refused)
        assert b.p2p.seed_reconnections[unreachable].attempts >= 1
    finally:
        globalLogPublisher.removeObserver(observer)
        yield b.stopService()
        yield port.stopListening()


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_a_silent_peer_is_dropped_after_the_handshake_timeout(producer):
    a, address = yield _listening(producer)
    try:
        peer = yield _blocking(RawPeer, address)  # keys exchanged, then nothing
        yield wait_for(lambda: len(a.p2p.peers) == 1, timeout=5)
        assert (yield _blocking(peer.closed))  # within HANDSHAKE_TIMEOUT (+ 1 s checks)
        assert not a.p2p.peers
    finally:
        yield _stop(a)


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_a_peer_that_stops_reading_is_dropped(producer):
    """A peer that asks for blocks again and again and reads nothing: the
    transport pauses this node's writes, the outgoing queue fills to its
    bound, and the peer is dropped (the node's memory stays bounded)."""
    produce(producer, 200)
    ids = [block_id(producer.get_block(n)) for n in range(1, 201)]
    a, address = yield _listening(producer)
    try:
        peer = yield _raw_hello(address, rcvbuf=4096)
        request = cm.encode(cm.FETCH_ITEMS, {"item_type": cm.BLOCK, "items_to_fetch": ids})
        conn = next(iter(a.p2p.peers))
        sent = 0
        while conn in a.p2p.peers and sent < 400:
            try:
                yield _blocking(peer.send, cm.FETCH_ITEMS, request)
            except OSError:
                break
            sent += 1
            if sent % 50 == 0:
                yield task.deferLater(reactor, 0.2, lambda: None)
        yield wait_for(lambda: conn not in a.p2p.peers, timeout=10)
        assert conn.close_reason.startswith("peer is not reading")
        assert sent < 400
    finally:
        yield _stop(a)


@pytest_twisted.inlineCallbacks
def test_a_peer_over_the_message_rate_is_dropped(producer):
    """More than MAX_MESSAGES_PER_SECOND messages in one second (here
    keep-alive requests, each answered) drop the peer."""
    a, address = yield _listening(producer)
    try:
        peer = yield _raw_hello(address)
        request = cm.encode(cm.CURRENT_TIME_REQUEST, {"request_sent_time": 1})
        burst = cm.frame(cm.CURRENT_TIME_REQUEST, request) * 1500
        peer.sock.sendall(peer.cipher.encrypt(burst))
        assert (yield _blocking(peer.closed))
        yield wait_for(lambda: not a.p2p.peers, timeout=5)
    finally:
        yield _stop(a)


@pytest_twisted.inlineCallbacks
def test_peers_beyond_max_connections_are_rejected(producer, follower, new_chain):
    a, address = yield _listening(producer, p2p_max_connections=1)
    b = _service(follower, p2p_seeds=[address])
    b.startService()
    try:
        yield wait_for(lambda: a.p2p.connected_peers(), timeout=5)
        peer = yield _raw_hello(address)
        msg_type, data = yield _blocking(peer.recv_message)
        assert msg_type == cm.CONNECTION_REJECTED
        assert cm.decode(cm.CONNECTION_REJECTED, data, "TEST")["reason_code"] == \
            cm.REJECT_NOT_ACCEPTING
        assert len(a.p2p.connected_peers()) == 1
        peer.close()
    finally:
        yield _stop(b, a)


@pytest_twisted.inlineCallbacks
def test_a_node_switches_to_a_peers_longer_fork(producer, follower):
    """Two chains with the same block 1 that fork at block 2 (the
    follower's block 2 holds the claim), the producer's branch longer:
    the follower sends its synopsis, the producer lists its ids from block
    1, the follower fetches blocks 2 and 3 of the producer's fork and
    switches to it (db_block.cpp ``push_block``: the longer fork; its own
    block 2 popped, the claim back in its pending transactions).  The
    producer fetches the follower's block 2 and keeps it on its fork
    database without switching (a shorter fork, node.cpp / fork_database)."""
    produce(producer, 1)
    produce(follower, 1)
    assert producer.head_block_id == follower.head_block_id
    produce(producer, 2)
    follower.push_transaction(sign(follower, [claim_op()]))
    produce(follower, 1)
    own_block_2 = block_id(follower.get_block(2))
    producer_head = producer.head_block_id
    a, address = yield _listening(producer)
    b = _service(follower, p2p_seeds=[address])
    b.startService()
    try:
        yield wait_for(lambda: follower.head_block_id == producer_head, timeout=10)
        assert follower.get_block(2) == producer.get_block(2)
        assert b.blocks_from_peers == 2
        assert [t["operations"][0][0] for t in follower.pending_transactions] == [37]
        assert own_block_2 in follower.forks
        yield wait_for(lambda: own_block_2 in producer.forks, timeout=5)
        assert producer.head_block_id == producer_head and a.blocks_from_peers == 0
        [peer] = a.p2p.connected_peers()
        assert peer["info"]["on_fork"]
    finally:
        yield _stop(b, a)


@pytest_twisted.inlineCallbacks
def test_partitioned_nodes_rejoin_on_the_longer_fork(producer, follower):
    """A and B in step, then partitioned (B stopped): A produces one block,
    B two, at other slots (the witnesses split by slot).  Rejoined, A
    switches to B's longer branch (A's block popped, its transfer pending
    again), B keeps A's block on a fork, and the next block A produces
    reaches B by relay on the one chain."""
    produce(producer, 3)
    a, address = yield _listening(producer)
    b = _service(follower, p2p_seeds=[address])
    b.startService()
    try:
        yield wait_for(lambda: follower.head_block_id == producer.head_block_id, timeout=10)
    finally:
        yield _stop(b)
    producer.push_transaction(sign(producer, [claim_op()]))
    producer.generate_block(producer.get_slot_time(1), producer.get_scheduled_witness(1),
                            DEV_WIF)
    for slot in (2, 1):
        follower.generate_block(follower.get_slot_time(slot),
                                follower.get_scheduled_witness(slot), DEV_WIF)
    lost = block_id(producer.get_block(4))
    b = _service(follower, p2p_seeds=[address])
    b.startService()
    try:
        yield wait_for(lambda: producer.head_block_id == follower.head_block_id, timeout=10)
        assert producer.head_block_num == 5 and lost in producer.forks
        assert [t["operations"][0][0] for t in producer.pending_transactions] == [37]
        yield wait_for(lambda: lost in follower.forks, timeout=5)
        produce(producer, 1)  # the claim in block 6, relayed
        yield wait_for(lambda: follower.head_block_id == producer.head_block_id, timeout=5)
        assert follower.head_block_num == 6
        assert follower.state.balance("1.2.6", "1.3.0") == \
            producer.state.balance("1.2.6", "1.3.0") > 0
    finally:
        yield _stop(b, a)


@pytest_twisted.inlineCallbacks
def test_nodes_forked_from_block_1_sync_nothing(producer, follower):
    """Forked from block 1 on: neither finds a block of its synopsis in
    the other's chain, so each answers an empty id list (application.cpp
    ``peer_is_on_an_unreachable_fork``) and each is done syncing with
    nothing fetched."""
    produce(producer, 3)
    follower.push_transaction(sign(follower, [claim_op()]))
    produce(follower, 2)
    a, address = yield _listening(producer)
    b = _service(follower, p2p_seeds=[address])
    b.startService()
    try:
        def settled(svc):
            peers = svc.p2p.connected_peers()
            return peers and not peers[0]["info"]["syncing"]

        yield wait_for(lambda: settled(a) and settled(b), timeout=5)
        assert (producer.head_block_num, follower.head_block_num) == (3, 2)
        assert b.blocks_from_peers == 0 and a.blocks_from_peers == 0
    finally:
        yield _stop(b, a)


@pytest_twisted.inlineCallbacks
def test_peers_are_exchanged_kept_and_dialled(producer, follower, new_chain, tmp_path):
    """B and C dial A; A's address message tells C about B (B's listening
    port, from B's hello); C dials B by itself; the peers heard of are in
    C's peer database after it stops, and a restarted C reads them back."""
    produce(producer, 2)
    a, address_a = yield _listening(producer)
    b, address_b = yield _listening(follower, p2p_seeds=[address_a])
    yield wait_for(lambda: a.p2p.connected_peers() and b.p2p.connected_peers(), timeout=5)
    db = str(tmp_path / "c-peers.json")
    third = new_chain()
    c = _service(third, p2p_seeds=[address_a], peer_db_path=db)
    c.startService()
    try:
        yield wait_for(lambda: len(c.p2p.connected_peers()) == 2, timeout=10)
        assert {p["info"]["node_id"] for p in c.p2p.connected_peers()} == {
            a.p2p.node_public_key, b.p2p.node_public_key}
        assert address_b in c.p2p.potential_peers
        assert third.head_block_num == 2
    finally:
        yield _stop(c)
    with open(db, encoding="utf-8") as f:
        saved = json.load(f)
    assert {r["endpoint"]: r["node_id"] for r in saved}[address_b] == b.p2p.node_public_key
    again = _service(third, peer_db_path=db, p2p_endpoint="127.0.0.1:0")
    assert address_b in again.p2p.potential_peers
    yield _stop(b, a)


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_a_silent_active_peer_gets_a_keepalive_then_is_dropped(producer):
    """After the handshake (hello both ways, accepted, address request and
    reply, the peer's first fetch_blockchain_item_ids) a peer that says
    nothing more gets a current_time_request after half the inactivity
    timeout, and is dropped after all of it."""
    a, address = yield _listening(producer)
    a.p2p.inactivity_timeout = 3
    try:
        peer = yield _raw_hello(address)
        msg_type, _ = yield _blocking(peer.recv_message)
        assert msg_type == cm.CONNECTION_ACCEPTED
        peer.send(cm.CONNECTION_ACCEPTED, b"")
        msg_type, _ = yield _blocking(peer.recv_message)
        assert msg_type == cm.ADDRESS_REQUEST
        peer.send(cm.ADDRESS, cm.encode(cm.ADDRESS, {"addresses": []}))
        peer.send(cm.FETCH_BLOCKCHAIN_ITEM_IDS, cm.encode(
            cm.FETCH_BLOCKCHAIN_ITEM_IDS, {"item_type": cm.BLOCK, "blockchain_synopsis": []}))
        seen = []
        while True:
            try:
                msg_type, data = yield _blocking(peer.recv_message)
            except (EOFError, ConnectionResetError):
                break
            seen.append(msg_type)
        assert cm.CURRENT_TIME_REQUEST in seen and seen[-1] == cm.CLOSING_CONNECTION
        assert cm.decode(cm.CLOSING_CONNECTION, data, "TEST")["reason_for_closing"] == \
            "Disconnecting due to inactivity"
    finally:
        yield _stop(a)


def test_advanced_parameters_tune_the_p2p_node(producer):
    """graphene's desired_number_of_connections and
    maximum_number_of_connections reach the P2P node (the latter starts at
    the node's --p2p-max-connections); counts are integers 1..100000."""
    svc = _service(producer, p2p_endpoint="127.0.0.1:0", p2p_max_connections=7)
    params = svc.get_advanced_node_parameters()
    assert (params["maximum_number_of_connections"], svc.p2p.max_connections) == (7, 7)
    assert (params["desired_number_of_connections"], svc.p2p.desired_connections) == (20, 20)
    svc.set_advanced_node_parameters({"desired_number_of_connections": 3,
                                      "maximum_number_of_connections": "50"})
    assert (svc.p2p.desired_connections, svc.p2p.max_connections) == (3, 50)
    for bad in (0, 2.5, 100001):
        with pytest.raises(InvalidNodeParameter):
            svc.set_advanced_node_parameters({"maximum_number_of_connections": bad})
    assert svc.p2p.max_connections == 50


@pytest_twisted.inlineCallbacks
def test_p2p_peers_in_the_health_figures(producer, follower):
    """The status page's peers list (nodeapi.metrics_health) shows P2P
    peers as it shows followed nodes: address, state, head."""
    produce(producer, 2)
    a, address = yield _listening(producer)
    b = _service(follower, p2p_seeds=[address])
    b.startService()
    try:
        yield wait_for(lambda: b.p2p.connected_peers() and follower.head_block_num == 2)
        figures = key_figures(now=reactor.seconds(), chain=follower, peers=b)
        assert figures["peers"] == [{"addr": address, "state": "active",
                                     "head_block_num": 2, "lag": 0, "reconnects": 0}]
    finally:
        yield _stop(b, a)


def test_the_peer_database_is_bounded_and_survives_a_bad_file(tmp_path):
    """At most 1000 records (the oldest go), none of this node or of a
    non-IPv4 address; a file that does not read starts an empty database
    that the next save replaces."""
    path = str(tmp_path / "peers.json")
    with open(path, "w") as f:
        f.write("{not json")
    db = PeerDatabase(path, own_node_id="02" + "aa" * 32)
    assert not db.records
    for i in range(MAX_POTENTIAL_PEERS + 5):
        db.remember(f"10.0.{i // 250}.{i % 250}:1776", "03" + "bb" * 32, 1_700_000_000)
    db.remember("127.0.0.1:1776", "02" + "aa" * 32, 1_700_000_000)   # this node
    db.remember("node.example:1776", "03" + "cc" * 32, 1_700_000_000)  # not IPv4
    assert len(db.records) == MAX_POTENTIAL_PEERS and "10.0.0.0:1776" not in db.records
    db.save()
    again = PeerDatabase(path, own_node_id="02" + "aa" * 32)
    assert list(again.records) == list(db.records)
    assert again.records["10.0.4.4:1776"]["last_seen_time"] == "2023-11-14T22:13:20"
