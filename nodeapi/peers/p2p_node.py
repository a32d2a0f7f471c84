"""graphene's peer-to-peer node: this node joins a network of
bitshares-core nodes over their binary peer protocol (bitshares-core
``libraries/net/node.cpp``, ``peer_connection.cpp``;
``libraries/app/application.cpp`` for ``get_block_ids``,
``get_blockchain_synopsis`` and ``get_item``).

:class:`P2PNode` (a ``MultiService``, child of the
:class:`~nodeapi.peers.service.PeerService`) listens on ``--p2p-endpoint``
and dials each P2P ``--seed-node`` (a ``ClientService`` reconnecting with
the peers' backoff).  Each connection (:class:`~nodeapi.peers.p2p_connection.P2PConnection`)
goes through the reference's handshake: both sides send ``hello`` (user
agent, protocol version, ports, node public key, the SHA-256 of the shared
secret signed with the node key, chain id, user data); each answers
``connection_accepted`` (or ``connection_rejected``: another chain, itself,
already connected, too many peers, a bad signature); the accepted side asks
``address_request`` and gets ``address``; the connection is then active.

Sync: this node sends ``fetch_blockchain_item_ids`` with a synopsis of its
chain (block ids from the last irreversible block to the head at halving
distances, ``get_blockchain_synopsis``), the peer answers the ids after the
last block of the synopsis it knows (``blockchain_item_ids_inventory``,
checked: consecutive numbers, starting at a synopsis block), this node
fetches those it lacks with ``fetch_items`` in batches of
``GRAPHENE_NET_MAX_BLOCKS_PER_PEER_DURING_SYNCING`` and pushes each block
the fork-aware way (``PeerService.push_network_block``: the chain's own
rules and its fork database), then asks again with a synopsis ending at
the last id the peer listed (on a fork: this node's blocks up to the fork
point, then the fork's), until the peer's list ends with the synopsis'
last block.  Ids that differ from this node's blocks of the same numbers
(the number is in the id) are a peer on another fork: its blocks are
fetched too; a longer fork is switched to (the chain pops its own blocks
back to the fork point, db_block.cpp ``push_block``), a shorter one is
kept in the fork database and not switched to.  A block building on none
this node knows (a relayed block of a fork not fetched yet) starts a sync
with its peer.

Relay: a block this node applies outside a sync (produced here, or
received) is advertised to every active peer that does not have it
(``item_ids_inventory`` with the block message's hash, as the reference's
``broadcast``), never back to the peer it came from; peers fetch it with
``fetch_items``.  Transactions accepted here (broadcast by a client or
received from a peer) are advertised the same way; advertised items this
node lacks are fetched, blocks pushed, transactions pushed into the pending
queue as a broadcast is.  Serving: ``fetch_blockchain_item_ids`` is answered
as ``get_block_ids`` (at most 2000 ids and the count left),
``fetch_items`` with the blocks (built when their turn to be written comes)
or ``item_not_available``.  ``current_time_request`` is answered;
``check_firewall``, its reply and ``get_current_connections_request`` are
ignored, as bitshares-core 7.x ignores them (node.cpp ``on_message``; it no
longer asks peers to check its firewall, so ``firewalled`` stays
``"unknown"``).

Addresses: ``--p2p-endpoint`` and seeds take ``host:port`` or
``[v6]:port``; peers are named so.  graphene's ``address_info`` and
``hello`` carry an ``fc::ip::endpoint`` (an IPv4 address and a port), so
IPv6 peers are left out of ``address`` messages and this node's hello over
IPv6 gives ``0.0.0.0`` as its inbound address; bitshares-core itself
listens and dials over IPv4 only.

Limits: the peers' count (``max_connections``), message size
(``MAX_MESSAGE_SIZE``), messages per second per peer, the outgoing queue
(see p2p_connection), the handshake (5 s) and request timeouts, and
inactivity (a ``current_time_request`` after ``inactivity_timeout / 2`` of
silence, the peer dropped after ``inactivity_timeout``).  A peer whose
message does not read, who sends what it was not asked for, or whose block
the chain refuses, is dropped.
"""

import collections
import hashlib
import os

from twisted.application import internet, service
from twisted.internet import defer
from twisted.internet.endpoints import HostnameEndpoint, TCP4ServerEndpoint, TCP6ServerEndpoint
from twisted.logger import Logger
from zope.interface import implementer

from nodeapi.chain.errors import UnlinkableBlock
from nodeapi.errors import ChainError, ProtocolError
from nodeapi.peers import core_messages as cm
from nodeapi.peers.errors import PeerDropped, PeerRejected
from nodeapi.peers.p2p_connection import P2PFactory
from nodeapi.peers.p2p_peer import KNOWN_ITEMS_SIZE, BoundedSet, P2PPeer
from nodeapi.peers.p2p_peerdb import (
    MAX_POTENTIAL_PEERS, PeerDatabase, endpoint_text, is_ipv4)
from nodeapi.peers.reconnect import Reconnection
from nodeapi.peers.remote import IRemoteOwner
from nodeapi.protocol.block import block_id as compute_block_id
from nodeapi.protocol.keys import PrivateKey, PublicKey, ripemd160
from nodeapi.protocol.times import format_time

log = Logger()

USER_AGENT = "nodeapi"
#: graphene ``GRAPHENE_NET_PEER_HANDSHAKE_INACTIVITY_TIMEOUT`` (s)
HANDSHAKE_TIMEOUT = 5
#: s of silence after which a peer is dropped (the reference's default
#: peer inactivity timeout); a keep-alive goes out after half of it
INACTIVITY_TIMEOUT = 45
#: s a peer has to answer a fetch
REQUEST_TIMEOUT = 30
#: s a closing connection has to flush before it is cut
CLOSE_TIMEOUT = 5
#: graphene ``GRAPHENE_NET_MAX_BLOCKS_PER_PEER_DURING_SYNCING``
SYNC_BATCH = 200
#: ids answered to one ``fetch_blockchain_item_ids`` (application.cpp limit)
MAX_BLOCK_IDS = 2000
#: graphene ``GRAPHENE_NET_DEFAULT_MAX_CONNECTIONS``
DEFAULT_MAX_CONNECTIONS = 200
#: connections beyond ``max_connections`` still taken in to be told
#: ``connection_rejected`` (not accepting); more are closed at once
HANDSHAKE_SLOTS = 10
#: recent items (blocks, transactions) kept to serve by message hash
MESSAGE_CACHE_SIZE = 500
#: ids asked in one ``fetch_items`` during normal operation
MAX_INVENTORY_ITEMS = 100
#: graphene ``GRAPHENE_NET_DEFAULT_DESIRED_CONNECTIONS``: below it, known
#: peers are dialled (``connect_to_new_peers``)
DESIRED_CONNECTIONS = 20
#: graphene ``GRAPHENE_NET_DEFAULT_PEER_CONNECTION_RETRY_TIME`` (s) between
#: attempts at one potential peer
PEER_RETRY_TIME = 30
#: s between saves of a changed peer database
PEER_DB_SAVE_INTERVAL = 30


def message_hash(data: bytes) -> str:
    """``message::id()``: ripemd160 of a message's data (hex): the item
    hash of advertised blocks and transactions."""
    return ripemd160(data).hex()


def load_node_key(path: str | None) -> PrivateKey:
    """The node's key (its node id is the public key): read from ``path``
    (32 bytes) or created there (mode 0600); a fresh key each start
    without a path."""
    if path is None:
        return PrivateKey(os.urandom(32))
    if os.path.exists(path):
        with open(path, "rb") as f:
            secret = f.read()
        if len(secret) != 32:
            raise ValueError(f"{path}: a node key is 32 bytes, found {len(secret)}")
        return PrivateKey(secret)
    secret = os.urandom(32)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(secret)
    return PrivateKey(secret)


@implementer(IRemoteOwner)
class P2PNode(service.MultiService):
    """graphene's peer node for ``network`` (see the module docstring).
    Each connection's :class:`P2PPeer` reports to :attr:`owner` through
    :class:`~nodeapi.peers.remote.IRemoteOwner` (the chain claim of the
    hello, the connection active, failed, lost), as a
    :class:`~nodeapi.peers.remote.RemoteNode` reports to its owner.

    :param network: the :class:`~nodeapi.peers.service.PeerService`
        (``chain``, ``reactor``, ``clock``, ``apply_block``,
        ``retry_policy``).
    :param listen: ``"host:port"`` to accept peers on, or None.
    :param seeds: ``"host:port"`` addresses to dial and keep dialling.
    :param node_key_path: where the node key lives (None: a fresh key).
    :param peer_db_path: the peer database, a JSON file of the potential
        peers (read at start, written when changed, at most every
        :data:`PEER_DB_SAVE_INTERVAL` s, and at stop); None: kept in memory.
    :param connect_to_new_peers: dial known peers while fewer than
        ``desired_connections`` are connected (graphene
        ``p2p-connect-to-new-peers``), each at most every
        :data:`PEER_RETRY_TIME` s.
    :param max_connections: peers at once (further ones are rejected).
    :param user_agent: the hello's user agent.
    :param inactivity_timeout: s of silence before a peer is dropped.

    Its children: the listener (a ``StreamServerEndpointService``), one
    ``ClientService`` per seed, the 1 s timeout check.

    :ivar owner: the :class:`~nodeapi.peers.remote.IRemoteOwner` each new
        connection reports to: the node itself (its ``claim_chain``,
        ``connected``, ``failed``, ``lost``), or a provider put there that
        hands the reports on to it.
    :ivar listening_port: the bound ``IListeningPort`` once listening, or None.
    :ivar peers: ``P2PConnection`` -> :class:`P2PPeer`, every connection.
    :ivar seeds: ``"host:port"`` -> the seed's ``ClientService``;
        :attr:`seed_reconnections` the same to its
        :class:`~nodeapi.peers.reconnect.Reconnection`.
    :ivar peer_db: the :class:`~nodeapi.peers.p2p_peerdb.PeerDatabase`;
        :attr:`potential_peers` is its ``records`` (``"host:port"`` ->
        ``{"endpoint", "node_id", "last_seen_time"}``).
    """

    def __init__(self, network, *, listen: str | None = None, seeds=(),
                 node_key_path: str | None = None, peer_db_path: str | None = None,
                 connect_to_new_peers: bool = True,
                 desired_connections: int = DESIRED_CONNECTIONS,
                 max_connections: int = DEFAULT_MAX_CONNECTIONS,
                 user_agent: str = USER_AGENT,
                 inactivity_timeout: float = INACTIVITY_TIMEOUT) -> None:
        super().__init__()
        self.network = network
        self.chain = network.chain
        self.reactor = network.reactor
        self.clock = network.clock
        self.user_agent = user_agent
        self.max_connections = max_connections
        self.inactivity_timeout = inactivity_timeout
        self.node_key = load_node_key(node_key_path)
        self.node_public_key = self.node_key.public_key.compressed.hex()
        self.listen = listen
        self.listening_port = None
        self.owner = self
        self.peers: dict = {}               # P2PConnection -> P2PPeer
        self._cuts: dict = {}               # P2PConnection -> its CLOSE_TIMEOUT call
        self.peer_db = PeerDatabase(peer_db_path, self.node_public_key)
        self.potential_peers = self.peer_db.records
        self.connect_to_new_peers = connect_to_new_peers
        self.desired_connections = desired_connections
        self._peer_db_saved_at = 0.0
        self._attempts: dict = {}           # address -> reactor time of the last dial
        self._dialling: set = set()         # addresses with a one-shot dial in flight
        self.seeds: dict = {}               # "host:port" -> ClientService
        self.seed_reconnections: dict = {}  # "host:port" -> Reconnection
        self._cache: collections.OrderedDict = collections.OrderedDict()  # hash -> (type, data)
        self._seen = BoundedSet(KNOWN_ITEMS_SIZE)   # hashes and ids of items we have
        self._block_ids: collections.OrderedDict = collections.OrderedDict()  # num -> id
        self._syncing_from = None           # the peer whose blocks are being applied
        self._incoming = None               # (peer, hash) of the item being applied
        self.blocks_received = 0
        self.transactions_received = 0
        if listen is not None:
            host, port = _split(listen)
            server = TCP6ServerEndpoint if ":" in host else TCP4ServerEndpoint
            endpoint = _ReportingServerEndpoint(
                server(self.reactor, port, interface=host), self._listening)
            self._server = internet.StreamServerEndpointService(
                endpoint, P2PFactory(self, outbound=False))
            self._server.setServiceParent(self)
        for seed in seeds:
            self.add_seed(seed)
        self._timer = internet.TimerService(1.0, self._check_timeouts)
        self._timer.clock = self.clock
        self._timer.setServiceParent(self)
        self.chain.add_block_observer(self._block_applied)
        self.chain.add_pop_observer(self._block_popped)

    # -- services --------------------------------------------------------------

    def _listening(self, port):
        self.listening_port = port
        log.info("P2P listening on {address}", address=endpoint_text(port.getHost()))
        return port

    def stopService(self):
        """Say ``closing_connection`` to every peer, save the peer
        database, stop listening and dialling; connections that have not
        flushed their goodbye are cut.  Returns the ``MultiService``'s
        Deferred."""
        for peer in list(self.peers.values()):
            self._close(peer, "node shutting down")
        if self.peer_db.dirty:
            self.save_peer_db()
        d = super().stopService()
        for reconnection in self.seed_reconnections.values():
            reconnection.report()  # a seed's failure not logged with a delay yet
        for conn in list(self._cuts):  # what did not flush by now is cut
            self._cut(conn, "node shutting down")
        return d

    def add_seed(self, address: str):
        """Dial ``address`` (``"host:port"``) and keep dialling it while
        this node runs, with the reconnection policy and failure lines of
        every connection to another node
        (:class:`~nodeapi.peers.reconnect.Reconnection`, the peers'
        backoff: ``"P2P seed h:p unreachable (why); reconnecting in D s"``);
        A seed's connection dropped for an error (this node's or the seed's
        refusal of another chain or of itself) is one more failure in a
        row, logged once with the delay (``"P2P seed h:p failed (N in a
        row): why; reconnecting in D s"``); an active one starts the
        backoff afresh.  Returns its ``ClientService``."""
        if address in self.seeds:
            return self.seeds[address]
        host, port = _split(address)
        endpoint = HostnameEndpoint(self.reactor, host, port, timeout=10)
        reconnection = Reconnection(backoff=self.network.retry_policy, clock=self.clock,
                                    log=log, what=f"P2P seed {address}", remote=address)
        self.seed_reconnections[address] = reconnection
        client = reconnection.client(
            endpoint, P2PFactory(self, outbound=True, reconnection=reconnection))
        client.setName("p2p " + address)
        self.seeds[address] = client
        client.setServiceParent(self)
        return client

    # -- connection events (P2PConnection) ---------------------------------------

    def connection_made(self, conn) -> None:
        """A TCP connection is up (either direction): a new
        :class:`P2PPeer`, unless past ``max_connections`` +
        :data:`HANDSHAKE_SLOTS` (closed at once)."""
        address = endpoint_text(conn.transport.getPeer())
        if not conn.outbound and len(self.peers) >= self.max_connections + HANDSHAKE_SLOTS:
            conn.drop("too many connections")  # past the polite rejections' slots
            return
        self.peers[conn] = P2PPeer(conn, address, "outbound" if conn.outbound else "inbound",
                                   self.clock.seconds(), owner=self.owner)

    def connection_secured(self, conn) -> None:
        """Keys exchanged: send our hello."""
        peer = self.peers.get(conn)
        if peer is not None:
            self._send_hello(peer)

    def _cut(self, conn, reason: str) -> None:
        self._cuts.pop(conn, None)
        conn.drop(reason)

    def connection_closed(self, conn, reason: str) -> None:
        """The connection is gone: forget the peer, one info line, then its
        owner's :meth:`~nodeapi.peers.remote.IRemoteOwner.lost`."""
        call = self._cuts.pop(conn, None)
        if call is not None and call.active():
            call.cancel()
        peer = self.peers.pop(conn, None)
        if peer is None:
            return
        log.info("P2P peer {peer} disconnected: {reason}", peer=peer.address, reason=reason)
        peer.owner.lost(peer)

    def message_received(self, conn, msg_type: int, data: bytes) -> None:
        """One message from a peer: counted against the rate, decoded (a
        message that does not read, or of an unknown type outside the core
        range, drops the peer; an unknown core type is ignored) and
        handled."""
        peer = self.peers.get(conn)
        if peer is None:
            return
        now = self.clock.seconds()
        peer.last_message = now
        peer.keepalive_sent = False
        if not peer.count_message(now):
            self._close(peer, "too many messages per second", error=True)
            return
        if cm.CORE_FIRST < msg_type <= cm.CORE_LAST and msg_type not in cm.STRUCTS:
            return  # a core message of a later protocol: ignored, as the reference does
        if msg_type not in cm.STRUCTS and msg_type != cm.BLOCK:
            self._close(peer, f"unknown message type {msg_type}", error=True)
            return
        try:
            message = cm.decode(msg_type, data, self.chain.address_prefix)
        except (ProtocolError, ValueError, KeyError, TypeError, OverflowError,
                RecursionError) as exc:
            self._close(peer, f"malformed {cm.NAMES.get(msg_type, msg_type)} message: {exc}",
                        error=True)
            return
        handler = self._HANDLERS.get(msg_type)
        if handler is not None:
            if peer.state == "closing" and msg_type not in (cm.HELLO, cm.CLOSING_CONNECTION):
                return
            handler(self, peer, message, data)

    # -- sending ---------------------------------------------------------------

    def _send(self, peer, msg_type: int, message: dict) -> None:
        peer.conn.send(msg_type, cm.encode(msg_type, message, self.chain.address_prefix))

    def _close(self, peer, reason: str, error: bool = False) -> None:
        """Say ``closing_connection`` and close (graphene
        ``disconnect_from_peer``); an error is the peer's failure
        (:meth:`P2PPeer.fail`: the owner's warning, or the seed's line)."""
        if peer.state == "closing":
            return
        if error:
            peer.fail(PeerDropped(reason))
        peer.bad_reason = reason if error else None
        peer.state = "closing"
        if peer.conn.cipher is not None:  # before the key exchange nothing can be said
            try:
                self._send(peer, cm.CLOSING_CONNECTION, {
                    "reason_for_closing": reason[:200], "closing_due_to_error": error})
            except ProtocolError:
                pass
        peer.conn.close(reason)
        # a bounded wait for the flush, then the connection is cut
        call = self.clock.callLater(CLOSE_TIMEOUT, self._cut, peer.conn, reason)
        self._cuts[peer.conn] = call

    # -- IRemoteOwner (what each P2PPeer reports) --------------------------------

    def claim_chain(self, remote, chain_id) -> bool:
        """Only this node's chain (libraries/net/node.cpp
        ``node_impl::on_hello_message`` rejects a hello with another
        ``chain_id``)."""
        return chain_id == self.chain.chain_id

    def connected(self, remote, head) -> None:
        """``remote`` (a :class:`P2PPeer`) is active, ``head`` what its
        hello told (:meth:`P2PPeer.head`): the sync with it starts."""
        self._start_sync(remote)

    def notice(self, remote, callback_id, payload) -> None:
        """Nothing: graphene's peer protocol has no JSON-RPC notices (a
        peer's news arrive as ``item_ids_inventory`` messages)."""

    def call_timed_out(self, remote, method) -> None:
        """Nothing: a P2P request not answered in time drops the peer
        (:meth:`failed` with ``"request timed out"``), no call outlives it."""

    def failed(self, remote, error) -> bool:
        """``remote``'s connection is dropped because of ``error``
        (:class:`~nodeapi.peers.errors.PeerDropped`: this node's reason;
        :class:`~nodeapi.peers.errors.PeerRejected`: the peer refused
        this chain or this node).  A seed's: False, its
        :class:`~nodeapi.peers.reconnect.Reconnection` counts and logs it
        (:meth:`add_seed`); any other peer's: one warning, True (nothing
        reconnects to it)."""
        if remote.reconnection is not None:
            return False
        if isinstance(error, PeerRejected):
            log.warn("P2P peer {peer} {reason}", peer=remote.address, reason=str(error))
        else:
            log.warn("Dropping P2P peer {peer}: {reason}", peer=remote.address,
                     reason=str(error))
        return True

    def lost(self, remote) -> None:
        """``remote``'s connection closed: its sync is taken up by another
        peer that still needs syncing."""
        if self._syncing_from is remote:
            self._syncing_from = None
        if remote.we_need_sync:
            for other in self._active():
                if other.we_need_sync and other.synopsis is None and not other.sync_requested:
                    self._start_sync(other)
                    break

    # -- handshake ---------------------------------------------------------------

    def _user_data(self) -> dict:
        head = self.chain.head_block_num
        return {"platform": "linux", "bitness": 64, "node_id": self.node_public_key,
                "last_known_block_hash": self.chain.head_block_id,
                "last_known_block_number": head,
                "last_known_block_time": format_time(self.chain.head_block_time)}

    def _send_hello(self, peer) -> None:
        digest = hashlib.sha256(peer.conn.shared_secret).digest()
        inbound_port = 0
        inbound_address = "0.0.0.0"
        outbound_port = 0
        if self.listening_port is not None:
            local = peer.conn.transport.getHost()
            inbound_address = local.host if is_ipv4(local.host) else "0.0.0.0"
            inbound_port = self.listening_port.getHost().port
            outbound_port = local.port
        self._send(peer, cm.HELLO, {
            "user_agent": self.user_agent,
            "core_protocol_version": cm.CORE_PROTOCOL_VERSION,
            "inbound_address": inbound_address, "inbound_port": inbound_port,
            "outbound_port": outbound_port, "node_public_key": self.node_public_key,
            "signed_shared_secret": self.node_key.sign_digest(digest).hex(),
            "chain_id": self.chain.chain_id, "user_data": self._user_data()})

    def _reject(self, peer, code: int, reason: str) -> None:
        host, port = _split(peer.address)
        peer.their_state = "rejected"
        self._send(peer, cm.CONNECTION_REJECTED, {
            "user_agent": self.user_agent, "core_protocol_version": cm.CORE_PROTOCOL_VERSION,
            "remote_endpoint": {"address": host if is_ipv4(host) else "0.0.0.0",
                                "port": port},
            "reason_code": code, "reason_string": reason})
        log.info("Rejecting P2P peer {peer}: {reason}", peer=peer.address, reason=reason)

    def _on_hello(self, peer, msg, data) -> None:
        if peer.their_state is not None:
            self._close(peer, "Received an unexpected hello_message", error=True)
            return
        peer.hello = msg
        user_data = msg.get("user_data") or {}
        num = user_data.get("last_known_block_number")
        if isinstance(num, int):
            peer.head_block_num = num
        if not peer.owner.claim_chain(peer, msg["chain_id"]):
            self._reject(peer, cm.REJECT_DIFFERENT_CHAIN,
                         f"You're on a different chain than I am.  I'm on {self.chain.chain_id} "
                         f"and you're on {msg['chain_id']}")
            self._close(peer, "You are on a different chain from me", error=True)
            return
        digest = hashlib.sha256(peer.conn.shared_secret).digest()
        try:
            signer = PublicKey.recover(bytes.fromhex(msg["signed_shared_secret"]), digest,
                                       check_canonical=False)
            valid = signer.compressed.hex() == msg["node_public_key"]
        except (ProtocolError, ValueError):
            valid = False
        if not valid:
            self._reject(peer, cm.REJECT_INVALID_HELLO, "Invalid signature in hello message")
            self._close(peer, "Invalid signature in hello message", error=True)
            return
        node_id = msg["node_public_key"]
        if node_id == self.node_public_key:
            self._reject(peer, cm.REJECT_CONNECTED_TO_SELF, "I'm connecting to myself")
            self._close(peer, "I'm connecting to myself")
            return
        if any(p.node_id == node_id for p in self.peers.values() if p is not peer):
            self._reject(peer, cm.REJECT_ALREADY_CONNECTED, "I'm already connected to you")
            self._close(peer, "I'm already connected to you")
            return
        peer.node_id = node_id
        if msg.get("inbound_port") and peer.direction == "inbound":
            host = peer.address.rsplit(":", 1)[0]  # "[v6]" kept in brackets
            self._remember(f"{host}:{msg['inbound_port']}", node_id)
        if peer.direction == "inbound" and len(self._active()) >= self.max_connections:
            self._reject(peer, cm.REJECT_NOT_ACCEPTING,
                         "not accepting any more incoming connections")
            return
        peer.their_state = "accepted"
        self._send(peer, cm.CONNECTION_ACCEPTED, {})

    def _on_connection_accepted(self, peer, msg, data) -> None:
        if peer.our_state is not None:
            return
        peer.our_state = "accepted"
        peer.expecting_address = True
        self._send(peer, cm.ADDRESS_REQUEST, {})

    def _on_connection_rejected(self, peer, msg, data) -> None:
        if peer.our_state is not None:
            self._close(peer, "Received an unexpected connection_rejected_message", error=True)
            return
        peer.our_state = "rejected"
        code, reason = msg.get("reason_code"), msg.get("reason_string")
        if code in (cm.REJECT_CONNECTED_TO_SELF, cm.REJECT_DIFFERENT_CHAIN):
            peer.fail(PeerRejected(f"rejected us: {reason}"))
            peer.conn.drop(reason or "rejected")
            return
        level = (log.info if code == cm.REJECT_ALREADY_CONNECTED
                 else log.warn)  # the other direction's connection is up: benign
        level("P2P peer {peer} rejected us: {reason}", peer=peer.address, reason=reason)
        peer.expecting_address = True
        self._send(peer, cm.ADDRESS_REQUEST, {})

    def _on_address_request(self, peer, msg, data) -> None:
        if peer.their_state not in ("accepted", "rejected"):
            self._close(peer, "Received an unexpected address_request_message", error=True)
            return
        addresses = []
        for other in self._active():
            if other is peer or not other.hello or not other.hello.get("inbound_port"):
                continue
            host = other.address.rsplit(":", 1)[0]
            if not is_ipv4(host):
                # graphene's address_info holds an fc::ip::endpoint, an IPv4
                # address and a port: an IPv6 peer cannot be told of
                continue
            addresses.append({
                "remote_endpoint": {"address": host, "port": other.hello["inbound_port"]},
                "last_seen_time": int(other.last_message), "latency": 0,
                "node_id": other.node_id, "direction": cm.DIRECTION_INBOUND
                if other.direction == "inbound" else cm.DIRECTION_OUTBOUND,
                "firewalled": cm.FIREWALLED_UNKNOWN})
        self._send(peer, cm.ADDRESS, {"addresses": addresses})
        if peer.their_state == "rejected":
            self._close(peer, "I rejected your connection request (hello message) so I'm "
                              "disconnecting")

    def _on_address(self, peer, msg, data) -> None:
        if not peer.expecting_address:
            return
        peer.expecting_address = False
        for info in msg["addresses"][:MAX_POTENTIAL_PEERS]:
            endpoint = info["remote_endpoint"]
            if endpoint["port"]:
                self._remember(f"{endpoint['address']}:{endpoint['port']}", info["node_id"])
        if peer.state != "handshaking":
            return
        if peer.our_state == "rejected":
            self._close(peer, "You rejected my connection request (hello message) so I'm "
                              "disconnecting")
        elif peer.their_state == "rejected":
            self._close(peer, "I rejected your connection request (hello message) so I'm "
                              "disconnecting")
        else:
            self._activate(peer)

    def _remember(self, address: str, node_id: str) -> None:
        """Record a potential peer in the peer database."""
        self.peer_db.remember(address, node_id, self.clock.seconds())

    def save_peer_db(self) -> None:
        """Write the peer database now."""
        self._peer_db_saved_at = self.clock.seconds()
        self.peer_db.save()

    def _connect_to_new_peers(self, now: float) -> None:
        """Dial known peers (one attempt each per :data:`PEER_RETRY_TIME`)
        while fewer than ``desired_connections`` connections are up."""
        if not self.connect_to_new_peers or not self.running:
            return
        room = self.desired_connections - len(self.peers) - len(self._dialling)
        if room <= 0:
            return
        connected_ids = {p.node_id for p in self.peers.values()}
        connected = {p.address for p in self.peers.values()} | set(self.seeds)
        own = None
        if self.listening_port is not None:
            own = endpoint_text(self.listening_port.getHost())
        for address, record in list(self.potential_peers.items()):
            if room <= 0:
                break
            if (address in connected or address in self._dialling or address == own
                    or record["node_id"] in connected_ids
                    or now - self._attempts.get(address, -PEER_RETRY_TIME) < PEER_RETRY_TIME):
                continue
            room -= 1
            self._attempts[address] = now
            self._dial(address)

    def _dial(self, address: str) -> None:
        log.info("Dialling P2P peer {peer} (heard of from peers)", peer=address)
        host, port = _split(address)
        self._dialling.add(address)
        endpoint = HostnameEndpoint(self.reactor, host, port, timeout=10)
        d = endpoint.connect(P2PFactory(self, outbound=True))

        def failed(failure):
            log.debug("P2P peer {peer} unreachable: {error}", peer=address,
                      error=failure.getErrorMessage())

        d.addCallbacks(lambda _: None, failed)
        d.addBoth(lambda _: self._dialling.discard(address))

    def _activate(self, peer) -> None:
        """The handshake is complete: the peer is active (a seed's backoff
        starts afresh), one info line, then its owner's
        :meth:`~nodeapi.peers.remote.IRemoteOwner.connected` (whose failing
        Deferred, if it returns one, drops the peer)."""
        peer.state = "active"
        reconnection = peer.reconnection
        if reconnection is not None:
            reconnection.succeeded()
        log.info("P2P peer {peer} connected ({agent}, head {head})", peer=peer.address,
                 agent=(peer.hello or {}).get("user_agent"), head=peer.head_block_num)
        work = peer.owner.connected(peer, peer.head())
        if isinstance(work, defer.Deferred):
            work.addErrback(lambda f: self._close(peer, f.getErrorMessage(), error=True))

    def _active(self) -> list:
        return [p for p in self.peers.values() if p.state == "active"]

    # -- sync (this node fetching) ----------------------------------------------

    def _block_id_at(self, num: int) -> str | None:
        """This node's block id at ``num`` (None past the head)."""
        chain = self.chain
        if num > chain.head_block_num or num < 1:
            return None
        if num == chain.head_block_num:
            return chain.head_block_id
        cached = self._block_ids.get(num)
        if cached is not None:
            return cached
        block = chain.get_block(num)
        if block is None:
            return None
        return compute_block_id(block)

    def synopsis(self, reference: str | None = None) -> list:
        """application.cpp ``get_blockchain_synopsis``: ids from the last
        irreversible block (at least 1) up to the high block, each step
        halving the distance left.  The high block is the head without a
        ``reference``; a ``reference`` on this node's branch (the last id a
        peer listed) ends it there; one kept on a fork (:attr:`Chain.forks`)
        ends it there too, the ids after the fork point taken from that
        fork ("as if our blockchain was made up of the blocks up to the fork
        point and the blocks we've already pushed from their fork").  A
        fork older than the last irreversible block gives the head's
        synopsis."""
        head = self.chain.head_block_num
        low = max(1, int(self.chain.dgp.get("last_irreversible_block_num", 0)))
        high, non_fork_high, fork_ids = head, head, []
        if reference is not None:
            num = cm.block_num_of_hash(reference)
            if self._block_id_at(num) == reference:
                high = non_fork_high = num
                low = min(low, num)
            elif reference in self.chain.forks:
                try:
                    ancestor, fork_ids = self.chain.forks.branch_ids(reference, self._on_branch)
                except LookupError:
                    fork_ids = []
                else:
                    non_fork_high = cm.block_num_of_hash(ancestor)
                    high = non_fork_high + len(fork_ids)
                    if non_fork_high < low:
                        high, non_fork_high, fork_ids = head, head, []
        if high == 0:
            return []
        low = min(low, high)
        out = []
        while True:
            out.append(self._block_id_at(low) if low <= non_fork_high
                       else fork_ids[low - non_fork_high - 1])
            low += (high - low + 2) // 2
            if low > high:
                break
        return out

    def _on_branch(self, block_id: str) -> bool:
        return block_id == "0" * 40 or \
            self._block_id_at(cm.block_num_of_hash(block_id)) == block_id

    def _start_sync(self, peer) -> None:
        """Start syncing from ``peer`` (node.cpp ``start_synchronizing_with_peer``):
        ask for the ids after this node's synopsis of its head, unless a
        sync request to it is in flight (that round goes on: the peer
        answers from its chain as it is then)."""
        if peer.state != "active":
            return
        peer.we_need_sync = True
        if peer.synopsis is not None or peer.sync_requested:
            return
        peer.sync_reference = None
        peer.idle_rounds = 0
        self._request_ids(peer)

    def _request_ids(self, peer) -> None:
        """The next ``fetch_blockchain_item_ids`` of a sync: the synopsis up
        to the last id the peer listed (``peer.sync_reference``; node.cpp
        ``fetch_next_batch_of_item_ids_from_peer`` with
        ``last_block_delegate_has_seen``)."""
        peer.ids_to_fetch.clear()
        peer.synopsis = self.synopsis(peer.sync_reference)
        peer.synopsis_time = self.clock.seconds()
        self._send(peer, cm.FETCH_BLOCKCHAIN_ITEM_IDS,
                   {"item_type": cm.BLOCK, "blockchain_synopsis": peer.synopsis})

    def _on_blockchain_item_ids_inventory(self, peer, msg, data) -> None:
        if peer.synopsis is None:
            return  # not asked for (the reference logs and ignores it)
        ids = msg["item_hashes_available"]
        synopsis, peer.synopsis = peer.synopsis, None
        if ids:
            first = cm.block_num_of_hash(ids[0])
            for i, item in enumerate(ids):
                if cm.block_num_of_hash(item) != first + i:
                    self._close(peer, "You gave an invalid response to my request for sync "
                                      "blocks (not sequential)", error=True)
                    return
            if (not synopsis and first != 1) or (synopsis and ids[0] not in synopsis):
                self._close(peer, "You gave an invalid response to my request for sync "
                                  "blocks (not after my synopsis)", error=True)
                return
            peer.head_block_num = max(peer.head_block_num, cm.block_num_of_hash(ids[-1])
                                      + msg["total_remaining_item_count"])
        peer.remaining = msg["total_remaining_item_count"]
        fresh = collections.deque()
        forks = self.chain.forks
        for item in ids:
            peer.known.add(item)
            num = cm.block_num_of_hash(item)
            if self._block_id_at(num) == item or item in forks:
                continue  # on our branch, or kept on a fork already
            fresh.append(item)  # past our head, or on the peer's fork
        if fresh and self._block_id_at(cm.block_num_of_hash(fresh[0])) is not None:
            log.info("P2P peer {peer} is on another fork from block {num}; fetching its "
                     "blocks (switching if its branch is longer)", peer=peer.address,
                     num=cm.block_num_of_hash(fresh[0]))
        if ids:
            peer.sync_reference = ids[-1]
        peer.idle_rounds = 0 if fresh else peer.idle_rounds + 1
        if not fresh and peer.remaining == 0 and (not ids or not synopsis
                                                  or ids[-1] == synopsis[-1]
                                                  or peer.idle_rounds > 2):
            # (a peer listing known blocks round after round is not followed
            # further: its lists bring nothing)
            # node.cpp: the peer's list ends with the last block of our
            # synopsis - in sync (and the peer, answering one id we had,
            # counts us in sync with it: it advertises its blocks to us)
            if peer.we_need_sync:
                peer.we_need_sync = False
                log.info("P2P peer {peer}: in sync at block {head}", peer=peer.address,
                         head=self.chain.head_block_num)
            return
        if not fresh:
            self._request_ids(peer)  # all known: ask again from the last one listed
            return
        peer.ids_to_fetch = fresh
        self._fetch_sync_batch(peer)

    def _fetch_sync_batch(self, peer) -> None:
        if peer.sync_requested:
            return
        if not peer.ids_to_fetch:
            if peer.state == "active" and peer.synopsis is None and peer.we_need_sync:
                self._request_ids(peer)  # ask for the next ids
            return
        batch = []
        while peer.ids_to_fetch and len(batch) < SYNC_BATCH:
            batch.append(peer.ids_to_fetch.popleft())
        now = self.clock.seconds()
        for item in batch:
            peer.sync_requested[item] = now
        self._send(peer, cm.FETCH_ITEMS, {"item_type": cm.BLOCK, "items_to_fetch": batch})

    def _on_block(self, peer, msg, data) -> None:
        block_id = msg["block_id"]
        hash_ = message_hash(data)
        if block_id in peer.sync_requested:
            del peer.sync_requested[block_id]
            syncing = True
        elif hash_ in peer.requested:
            del peer.requested[hash_]
            syncing = False
        else:
            self._close(peer, f"You sent me a block that I didn't ask for, block_id: {block_id}",
                        error=True)
            return
        block = msg["block"]
        try:
            actual = compute_block_id(block)
        except (ProtocolError, ValueError, KeyError, TypeError) as exc:
            self._close(peer, f"malformed block {block_id}: {exc}", error=True)
            return
        if actual != block_id:
            self._close(peer, f"block_message id {block_id} is not its block's id {actual}",
                        error=True)
            return
        peer.known.add(block_id)
        peer.known.add(hash_)
        num = cm.block_num_of_hash(block_id)
        peer.head_block_num = max(peer.head_block_num, num)
        if self._block_id_at(num) != block_id and block_id not in self.chain.forks:
            if not self._push_block(peer, block, block_id, hash_, data, syncing):
                return
        if syncing and not peer.sync_requested:
            self._fetch_sync_batch(peer)

    def _push_block(self, peer, block: dict, block_id: str, hash_: str, data: bytes,
                    syncing: bool) -> bool:
        """Push a block this node lacks the fork-aware way (graphene
        node.cpp ``process_block_during_sync`` / ``process_block_during_normal_operation``
        into db_block.cpp ``push_block``): applied on the head, kept on a
        shorter fork, or a switch to the peer's longer fork.  A block
        building on none this node knows starts a sync with the peer (its
        branch is fetched from the common block); a refused one drops the
        peer.  Returns False when the peer was dropped."""
        num = cm.block_num_of_hash(block_id)
        self._syncing_from = peer if syncing else None
        self._incoming = (peer, hash_)
        try:
            result = self.network.push_network_block(block)
        except UnlinkableBlock:
            peer.ids_to_fetch.clear()
            if syncing:
                # its sync list led here: a fork from before what this node
                # can undo (its last irreversible block), never switched to
                peer.on_fork = peer.unswitchable = True
                peer.we_need_sync = False
                log.warn("P2P peer {peer} is on a fork this node cannot switch to (block "
                         "{num} {block_id} builds on a block it cannot undo to); not syncing "
                         "from it", peer=peer.address, num=num, block_id=block_id)
                return True
            if peer.unswitchable and not peer.we_need_sync:
                return True  # that fork again: not synced from
            log.info("P2P peer {peer} sent block {num} {block_id} that builds on a block this "
                     "node lacks; syncing from it", peer=peer.address, num=num,
                     block_id=block_id)
            if not peer.sync_requested:
                self._start_sync(peer)
            return True
        except ChainError as exc:
            self._close(peer, f"block {num} {block_id} refused: {exc}", error=True)
            return False
        finally:
            self._syncing_from = None
            self._incoming = None
        self._seen.add(hash_)
        self._cache_item(hash_, cm.BLOCK, data)
        if result.kept:
            peer.on_fork = True
            log.info("P2P peer {peer}: block {num} {block_id} kept on a fork no longer than "
                     "this node's head {head}", peer=peer.address, num=num, block_id=block_id,
                     head=self.chain.head_block_num)
            return True
        peer.on_fork = peer.unswitchable = False
        self.blocks_received += len(result.applied)
        if result.switched:
            log.warn("P2P peer {peer}: switched to its fork: {popped} blocks popped, "
                     "{applied} applied, head {head}", peer=peer.address,
                     popped=len(result.popped), applied=len(result.applied),
                     head=self.chain.head_block_num)
        return True

        if syncing and not peer.sync_requested:
            self._fetch_sync_batch(peer)

    # -- normal operation (inventory, relay) --------------------------------------

    def _on_item_ids_inventory(self, peer, msg, data) -> None:
        if peer.their_state != "accepted":
            self._close(peer, "Received an unexpected item_ids_inventory_message", error=True)
            return
        item_type = msg["item_type"]
        wanted = []
        for item in msg["item_hashes_available"][:MAX_INVENTORY_ITEMS]:
            peer.known.add(item)
            if item in self._seen or item in peer.requested:
                continue
            if item_type not in (cm.BLOCK, cm.TRX):
                continue
            if any(item in other.requested for other in self.peers.values()):
                continue
            wanted.append(item)
        if wanted and not (item_type == cm.BLOCK and peer.we_need_sync):
            now = self.clock.seconds()
            for item in wanted:
                peer.requested[item] = now
            self._send(peer, cm.FETCH_ITEMS, {"item_type": item_type, "items_to_fetch": wanted})

    def _on_trx(self, peer, msg, data) -> None:
        hash_ = message_hash(data)
        if peer.requested.pop(hash_, None) is None:
            self._close(peer, "You sent me a transaction that I didn't ask for", error=True)
            return
        peer.known.add(hash_)
        self._seen.add(hash_)
        trx = msg["trx"]
        self._incoming = (peer, hash_)
        try:
            self.chain.push_transaction(trx)
        except (ChainError, ProtocolError) as exc:
            log.debug("P2P transaction from {peer} refused: {error}", peer=peer.address,
                      error=exc)
            return
        finally:
            self._incoming = None
        self.transactions_received += 1
        self._advertise(cm.TRX, hash_, data, origin=peer)

    def broadcast_transaction(self, trx: dict) -> int:
        """Advertise ``trx`` (accepted by the chain; wire JSON without
        ``operation_results``) to the active peers; returns how many."""
        data = cm.encode(cm.TRX, {"trx": trx}, self.chain.address_prefix)
        hash_ = message_hash(data)
        if hash_ in self._seen:
            return 0
        self._seen.add(hash_)
        return self._advertise(cm.TRX, hash_, data)

    def _block_applied(self, applied) -> None:
        """Chain block observer: remember the id; advertise a block applied
        outside a sync (and not replayed) to peers that lack it."""
        self._block_ids[applied.block_num] = applied.block_id
        while len(self._block_ids) > MESSAGE_CACHE_SIZE:
            self._block_ids.popitem(last=False)
        if applied.replay or not self.peers:
            return
        if self._syncing_from is not None:
            return
        origin = None
        if self._incoming is not None:
            origin = self._incoming[0]
        data = cm.encode(cm.BLOCK, {"block": applied.block, "block_id": applied.block_id},
                         self.chain.address_prefix)
        hash_ = message_hash(data)
        self._seen.add(hash_)
        self._seen.add(applied.block_id)
        self._advertise(cm.BLOCK, hash_, data, origin=origin, block_id=applied.block_id)

    def _block_popped(self, applied) -> None:
        """Chain pop observer (a fork switch): forget the ids from the
        popped block's number on."""
        for num in [n for n in self._block_ids if n >= applied.block_num]:
            del self._block_ids[num]

    def _cache_item(self, hash_: str, msg_type: int, data: bytes) -> None:
        self._cache[hash_] = (msg_type, data)
        while len(self._cache) > MESSAGE_CACHE_SIZE:
            self._cache.popitem(last=False)

    def _advertise(self, msg_type: int, hash_: str, data: bytes, origin=None,
                   block_id: str | None = None) -> int:
        self._cache_item(hash_, msg_type, data)
        count = 0
        for peer in self._active():
            if peer is origin or hash_ in peer.known or (block_id and block_id in peer.known):
                continue
            peer.known.add(hash_)
            self._send(peer, cm.ITEM_IDS_INVENTORY,
                       {"item_type": msg_type, "item_hashes_available": [hash_]})
            count += 1
        return count

    # -- serving ---------------------------------------------------------------

    def get_block_ids(self, synopsis: list, limit: int = MAX_BLOCK_IDS) -> tuple:
        """application.cpp ``get_block_ids``: ``(ids, remaining)``: this
        node's ids from the last synopsis block it has (inclusive; from
        block 1 for an empty synopsis), at most ``limit``, and how many
        follow.  Raises LookupError when no synopsis block is ours (a fork
        this node cannot serve)."""
        head = self.chain.head_block_num
        if head == 0:
            return [], 0
        start = 0
        if synopsis and not (len(synopsis) == 1 and synopsis[0] == "0" * 40):
            for item in reversed(synopsis):
                num = cm.block_num_of_hash(item)
                if item == "0" * 40 or self._block_id_at(num) == item:
                    start = num
                    break
            else:
                raise LookupError("Unable to provide a list of blocks starting at any of the "
                                  "blocks in peer's synopsis")
        ids = []
        num = max(start, 1)
        while num <= head and len(ids) < limit:
            ids.append(self._block_id_at(num))
            num += 1
        remaining = head - cm.block_num_of_hash(ids[-1]) if ids else 0
        return ids, remaining

    def _on_fetch_blockchain_item_ids(self, peer, msg, data) -> None:
        if peer.their_state != "accepted":
            self._close(peer, "Received an unexpected fetch_blockchain_item_ids_message",
                        error=True)
            return
        synopsis = msg["blockchain_synopsis"]
        try:
            ids, remaining = self.get_block_ids(synopsis)
        except LookupError:
            ids, remaining = [], 0
        if synopsis:
            last = synopsis[-1]
            num = cm.block_num_of_hash(last)
            peer.head_block_num = max(peer.head_block_num, num)
            if (num > self.chain.head_block_num and last not in self.chain.forks
                    and not peer.we_need_sync and peer.state == "active"):
                self._start_sync(peer)  # the peer has blocks this node lacks
        for item in ids:
            peer.known.add(item)
        self._send(peer, cm.BLOCKCHAIN_ITEM_IDS_INVENTORY, {
            "total_remaining_item_count": remaining, "item_type": msg["item_type"],
            "item_hashes_available": ids})
        if peer.direction == "inbound" and peer.state == "handshaking":
            self._activate(peer)

    def _on_fetch_items(self, peer, msg, data) -> None:
        if peer.their_state != "accepted":
            self._close(peer, "Received an unexpected fetch_items_message", error=True)
            return
        item_type = msg["item_type"]
        for item in msg["items_to_fetch"][:MAX_BLOCK_IDS]:
            peer.known.add(item)
            cached = self._cache.get(item)
            if cached is not None and cached[0] == item_type:
                peer.conn.send(*cached)
                continue
            if item_type == cm.BLOCK and self._block_id_at(cm.block_num_of_hash(item)) == item:
                peer.conn.send_later(self._block_message_builder(peer, item))
                continue
            self._send(peer, cm.ITEM_NOT_AVAILABLE,
                       {"requested_item": {"item_type": item_type, "item_hash": item}})

    def _block_message_builder(self, peer, block_id: str):
        def build():
            block = self.chain.get_block(cm.block_num_of_hash(block_id))
            if block is None:
                return (cm.ITEM_NOT_AVAILABLE, cm.encode(cm.ITEM_NOT_AVAILABLE, {
                    "requested_item": {"item_type": cm.BLOCK, "item_hash": block_id}}))
            return (cm.BLOCK, cm.encode(cm.BLOCK, {"block": block, "block_id": block_id},
                                        self.chain.address_prefix))
        return build

    def _on_item_not_available(self, peer, msg, data) -> None:
        item = msg["requested_item"]["item_hash"]
        if item in peer.sync_requested:
            self._close(peer, "You are missing a sync item you claim to have", error=True)
            return
        peer.requested.pop(item, None)

    # -- the rest ----------------------------------------------------------------

    def _on_closing_connection(self, peer, msg, data) -> None:
        log.info("P2P peer {peer} is closing: {reason}", peer=peer.address,
                 reason=msg.get("reason_for_closing"))
        peer.state = "closing"
        peer.conn.close(msg.get("reason_for_closing") or "peer closed")

    def _on_current_time_request(self, peer, msg, data) -> None:
        now = int(self.clock.seconds() * 1_000_000)
        self._send(peer, cm.CURRENT_TIME_REPLY, {
            "request_sent_time": msg["request_sent_time"], "request_received_time": now,
            "reply_transmitted_time": now})

    def _on_ignored(self, peer, msg, data) -> None:
        """check_firewall (and its reply), current_time_reply: the
        reference does nothing with them (node.cpp ``on_message``)."""

    def _check_timeouts(self) -> None:
        """Every second: handshakes past :data:`HANDSHAKE_TIMEOUT`, fetches
        past :data:`REQUEST_TIMEOUT`, silence past half the inactivity
        timeout (a keep-alive) and past all of it (dropped)."""
        now = self.clock.seconds()
        self._connect_to_new_peers(now)
        if self.peer_db.dirty and now - self._peer_db_saved_at >= PEER_DB_SAVE_INTERVAL:
            self.save_peer_db()
        for peer in list(self.peers.values()):
            if peer.state == "closing":
                continue
            if peer.state == "handshaking" and now - peer.connected_at > HANDSHAKE_TIMEOUT:
                self._close(peer, "handshake timed out", error=True)
                continue
            oldest = min(list(peer.sync_requested.values()) + list(peer.requested.values())
                         + ([peer.synopsis_time] if peer.synopsis is not None else []),
                         default=None)
            if oldest is not None and now - oldest > REQUEST_TIMEOUT:
                self._close(peer, "request timed out", error=True)
                continue
            silent = now - peer.last_message
            if silent > self.inactivity_timeout:
                self._close(peer, "Disconnecting due to inactivity", error=True)
            elif silent > self.inactivity_timeout / 2 and not peer.keepalive_sent:
                peer.keepalive_sent = True
                self._send(peer, cm.CURRENT_TIME_REQUEST,
                           {"request_sent_time": int(now * 1_000_000)})

    _HANDLERS = {
        cm.HELLO: _on_hello,
        cm.CONNECTION_ACCEPTED: _on_connection_accepted,
        cm.CONNECTION_REJECTED: _on_connection_rejected,
        cm.ADDRESS_REQUEST: _on_address_request,
        cm.ADDRESS: _on_address,
        cm.FETCH_BLOCKCHAIN_ITEM_IDS: _on_fetch_blockchain_item_ids,
        cm.BLOCKCHAIN_ITEM_IDS_INVENTORY: _on_blockchain_item_ids_inventory,
        cm.FETCH_ITEMS: _on_fetch_items,
        cm.ITEM_NOT_AVAILABLE: _on_item_not_available,
        cm.ITEM_IDS_INVENTORY: _on_item_ids_inventory,
        cm.BLOCK: _on_block,
        cm.TRX: _on_trx,
        cm.CLOSING_CONNECTION: _on_closing_connection,
        cm.CURRENT_TIME_REQUEST: _on_current_time_request,
        cm.CURRENT_TIME_REPLY: _on_ignored,
        cm.CHECK_FIREWALL: _on_ignored,
        cm.CHECK_FIREWALL_REPLY: _on_ignored,
    }

    # -- network_node API -------------------------------------------------------

    def connected_peers(self) -> list:
        """Active peers, graphene ``get_connected_peers`` entries."""
        return [p.describe() for p in self._active()]

    def info(self) -> dict:
        """graphene ``get_info`` fields of the P2P node (``listening_on``,
        ``node_public_key``, ``node_id``, ``firewalled``: never checked,
        ``"unknown"``), the active P2P peers' count, and the blocks and
        transactions received from P2P peers and accepted since start."""
        port = self.listening_port.getHost() if self.listening_port is not None else None
        return {"listening_on": endpoint_text(port) if port else None,
                "node_public_key": self.node_public_key,
                "node_id": self.node_public_key,
                "firewalled": "unknown",
                "p2p_connection_count": len(self._active()),
                "p2p_blocks_received": self.blocks_received,
                "p2p_transactions_received": self.transactions_received}


class _ReportingServerEndpoint:
    """A server endpoint that hands the listening port to ``on_listening``
    (the ``StreamServerEndpointService`` keeps it to itself)."""

    def __init__(self, inner, on_listening) -> None:
        self.inner = inner
        self.on_listening = on_listening

    def listen(self, factory):
        """Listen with ``factory``; the port goes to ``on_listening``."""
        return self.inner.listen(factory).addCallback(self.on_listening)


def _split(address: str) -> tuple:
    """``"host:port"`` / ``"[v6]:port"`` -> ``(host, port)`` (IPv6 without
    brackets; an empty host is every IPv4 interface)."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port)

