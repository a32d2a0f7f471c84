"""A peer of graphene's P2P protocol by hand, over a blocking socket: the
hostile peer of the P2P tests and a probe of bitshares-core's answers
(nodeapi.peers.stcp, core_messages; bitshares-core libraries/net).

Run its blocking calls in a thread when the node under test shares the
test's reactor (``threads.deferToThread``)."""

import hashlib
import socket
import struct

import coincurve

from nodeapi.peers import core_messages as cm
from nodeapi.peers import stcp

from kit.keys import CHAIN_ID


def split_address(address: str) -> tuple:
    """``"host:port"`` or ``"[v6]:port"`` -> ``(host, port)``."""
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


class RawPeer:
    """A socket speaking the stream by hand: the key exchange at
    construction, then :meth:`send` / :meth:`recv_message` of framed
    messages.  ``rcvbuf``: a small receive buffer (bytes) for a peer that
    stops reading.  Every read times out after 5 s."""

    def __init__(self, address: str, rcvbuf: int | None = None) -> None:
        host, port = split_address(address)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(5)
        self.sock.connect((host, port))
        self.key = coincurve.PrivateKey()
        self.sock.sendall(self.key.public_key.format(compressed=True))
        remote = self._read(33)
        self.secret = stcp.shared_secret(self.key, remote)
        self.cipher = stcp.StreamCipher(self.secret)
        self.plain = b""

    def _read(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise EOFError("closed")
            out += chunk
        return out

    def send(self, msg_type: int, data: bytes) -> None:
        """One framed message of ``msg_type`` with ``data``."""
        self.sock.sendall(self.cipher.encrypt(cm.frame(msg_type, data)))

    def send_message(self, msg_type: int, message: dict) -> None:
        """``message`` encoded as ``msg_type`` and sent."""
        self.send(msg_type, cm.encode(msg_type, message))

    def send_raw_plain(self, plain: bytes) -> None:
        """Bytes (a multiple of 16) encrypted as they are."""
        self.sock.sendall(self.cipher.encrypt(plain))

    def recv_message(self) -> tuple:
        """The next ``(type, data)``; raises ``socket.timeout`` or EOFError."""
        while True:
            if len(self.plain) >= 16:
                size, msg_type = struct.unpack_from("<II", self.plain)
                total = cm.framed_size(size)
                if len(self.plain) >= total:
                    data = self.plain[8:8 + size]
                    self.plain = self.plain[total:]
                    return msg_type, data
            self.plain += self.cipher.decrypt(self._read(16))

    def recv_skipping(self, *skipped) -> tuple:
        """The next message whose type is not in ``skipped``."""
        while True:
            msg_type, data = self.recv_message()
            if msg_type not in skipped:
                return msg_type, data

    def closed(self) -> bool:
        """:func:`closed` of the socket."""
        return closed(self.sock)

    def close(self) -> None:
        self.sock.close()


def closed(sock) -> bool:
    """True once the other side closed ``sock`` (read until EOF or reset);
    False when it stays silent and open for 10 s."""
    sock.settimeout(10)
    try:
        while sock.recv(4096):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def _hello(peer: RawPeer, chain_id: str, inbound_port: int = 0) -> dict:
    key = coincurve.PrivateKey()
    digest = hashlib.sha256(peer.secret).digest()
    sig = key.sign_recoverable(digest, hasher=None)
    compact = bytes([sig[64] + 31]) + sig[:64]
    return {"user_agent": "raw", "core_protocol_version": 106,
            "inbound_address": "0.0.0.0", "inbound_port": inbound_port, "outbound_port": 0,
            "node_public_key": key.public_key.format(compressed=True).hex(),
            "signed_shared_secret": compact.hex(), "chain_id": chain_id, "user_data": {}}


def raw_hello(address: str, chain_id: str = CHAIN_ID, rcvbuf: int | None = None) -> RawPeer:
    """A :class:`RawPeer` to a nodeapi node that completed the key exchange
    and sent a hello (signed shared secret of a fresh node key,
    ``chain_id``), having read the node's own hello (nodeapi says hello
    on both sides of a connection)."""
    peer = RawPeer(address, rcvbuf)
    peer.send_message(cm.HELLO, _hello(peer, chain_id))
    msg_type, _data = peer.recv_message()
    if msg_type != cm.HELLO:
        raise AssertionError(f"expected the node's hello, got message type {msg_type}")
    return peer


def accepted_peer(address: str, chain_id: str = CHAIN_ID, max_messages: int = 20) -> RawPeer:
    """A :class:`RawPeer` through the whole handshake with a node (nodeapi
    or bitshares-core): hello sent; a hello answered with
    ``connection_accepted``; our acceptance followed by an
    ``address_request``; address requests answered with an empty
    ``address``, sync requests with an empty inventory; done once the
    node's ``address`` came.  Raises AssertionError on a rejection or after
    ``max_messages``."""
    peer = RawPeer(address)
    peer.send_message(cm.HELLO, _hello(peer, chain_id))
    for _ in range(max_messages):
        msg_type, _data = peer.recv_message()
        if msg_type == cm.HELLO:
            peer.send_message(cm.CONNECTION_ACCEPTED, {})
        elif msg_type == cm.CONNECTION_ACCEPTED:
            peer.send_message(cm.ADDRESS_REQUEST, {})
        elif msg_type == cm.CONNECTION_REJECTED:
            raise AssertionError("the node rejected the connection")
        elif msg_type == cm.ADDRESS_REQUEST:
            peer.send_message(cm.ADDRESS, {"addresses": []})
        elif msg_type == cm.FETCH_BLOCKCHAIN_ITEM_IDS:
            peer.send_message(cm.BLOCKCHAIN_ITEM_IDS_INVENTORY, {
                "total_remaining_item_count": 0, "item_type": cm.BLOCK,
                "item_hashes_available": []})
        elif msg_type == cm.ADDRESS:
            return peer
    raise AssertionError(f"no address message in {max_messages} messages")


def firewall_probe(peer) -> list:
    """Send check_firewall and check_firewall_reply, then a
    current_time_request; the types of what comes back up to the time
    reply (sync traffic, inventories, keep-alives and the accepting side's
    late hello, acceptance and address request skipped: what is left is
    what the check messages brought)."""
    endpoint = {"address": "127.0.0.1", "port": 1776}
    peer.send_message(cm.CHECK_FIREWALL, {"node_id": "02" + "11" * 32,
                                          "endpoint_to_check": endpoint})
    peer.send_message(cm.CHECK_FIREWALL_REPLY, {
        "node_id": "02" + "11" * 32, "endpoint_checked": endpoint, "result": 0})
    peer.send_message(cm.CURRENT_TIME_REQUEST, {"request_sent_time": 1})
    seen = []
    while not seen or seen[-1] != cm.CURRENT_TIME_REPLY:
        seen.append(peer.recv_skipping(cm.FETCH_BLOCKCHAIN_ITEM_IDS, cm.ADDRESS,
                                       cm.CURRENT_TIME_REQUEST, cm.ITEM_IDS_INVENTORY,
                                       cm.HELLO, cm.CONNECTION_ACCEPTED,
                                       cm.ADDRESS_REQUEST)[0])
    return seen
