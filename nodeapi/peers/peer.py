"""One followed node: the owner of a
:class:`~nodeapi.peers.remote.RemoteNode` (connection, login, chain-id
check, reconnection, failure lines) that subscribes to its blocks, keeps
its state and head, and runs its :class:`~nodeapi.peers.follower.Follower`.
Graphene reference: libraries/net/node.cpp (connect, hello with the chain
id, sync then follow).
"""

from twisted.internet import defer
from twisted.logger import Logger
from zope.interface import implementer

from nodeapi.errors import ChainError
from nodeapi.peers.errors import MessageTooLarge
from nodeapi.peers.follower import Follower
from nodeapi.peers.remote import IRemoteOwner, RemoteNode

log = Logger()

#: the callback id this node registers with ``set_block_applied_callback``.
BLOCK_APPLIED_CB = 1
#: said once when a bare ``host:port`` seed is no WebSocket server
P2P_HINT = ("; this node has no P2P node (no --p2p-endpoint, no P2P seed-node), so an "
            "address without ws:// is followed over its WebSocket RPC: if it is "
            "witness_node's p2p-endpoint, start this node with --p2p-endpoint or give it as "
            "--seed-node host:port; else give ws://host:port of its rpc-endpoint")


@implementer(IRemoteOwner)
class Peer:
    """One followed node: the owner of its
    :class:`~nodeapi.peers.remote.RemoteNode` (:attr:`remote`).

    :param network: the owning :class:`~nodeapi.peers.service.PeerService`
        (``chain``, ``reactor``, ``clock``, ``max_message_size``,
        ``apply_block``, ``mark_bad``, ``retry_policy``).
    :param node_address: a :class:`~nodeapi.protocol.node_address.NodeAddress`.

    :ivar address: ``"host:port"`` (``"[v6]:port"``).
    :ivar remote: the :class:`~nodeapi.peers.remote.RemoteNode` (service
        ``name`` = :attr:`address`), a child of the PeerService while the
        peer is followed.
    :ivar state: ``connecting`` | ``syncing`` | ``live`` | ``disconnected`` | ``bad``.
    :ivar head_block_num: the peer's last known head block number (0 unknown).
    :ivar head_block_id: its id, or None.
    :ivar last_seen: reactor time (s) of the last message from the peer, or None.
    :ivar bad_reason: why the peer was marked bad, or None.
    :ivar follower: the :class:`~nodeapi.peers.follower.Follower`.
    """

    def __init__(self, network, node_address) -> None:
        self.network = network
        self.address = node_address.address
        self.state = "connecting"
        self.head_block_num = 0
        self.head_block_id = None
        self.last_seen = None
        self.bad_reason = None
        self.follower = Follower(self)
        self.remote = RemoteNode(node_address, self, reactor=network.reactor,
                                 clock=network.clock, backoff=network.retry_policy,
                                 what=f"Peer {self.address}",
                                 max_message_size=network.max_message_size)
        self.remote.setName(self.address)

    def hint_p2p(self) -> None:
        """The address was written without ``ws://`` on a node without a
        P2P node: bitshares' addresses name P2P endpoints, so the first
        line saying it is no WebSocket server says, once, how to use P2P."""
        self.remote.handshake_hint = P2P_HINT

    @property
    def protocol(self):
        """The open connection (:class:`~nodeapi.peers.client.RemoteProtocol`),
        or None."""
        return self.remote.protocol

    @property
    def sync_failures(self) -> int:
        """Connections in a row that failed before a sync step."""
        return self.remote.failures

    @property
    def bad_messages(self) -> int:
        """Messages of the peer refused since start."""
        return self.remote.bad_messages

    @property
    def stopping_since(self):
        """Clock time of the peer's planned stop, until it is back; else None."""
        return self.remote.stopping_since

    # -- IRemoteOwner ------------------------------------------------------------------

    def claim_chain(self, remote, chain_id: str) -> bool:
        """Only this node's chain (graphene libraries/net/node.cpp
        ``node_impl::on_hello_message`` rejects a peer on another one)."""
        return chain_id == self.network.chain.chain_id

    @defer.inlineCallbacks
    def connected(self, remote, head):
        """Logged in, on this chain: state ``syncing``, subscribe
        (``database.set_block_applied_callback``, wire-contract section 5)
        and start the follower's sync to ``head``."""
        self.state = "syncing"
        self.last_seen = self.network.reactor.seconds()
        self.head_block_num = max(self.head_block_num, head.head_block_num)
        self.head_block_id = head.head_block_id
        yield remote.call("database", "set_block_applied_callback", [BLOCK_APPLIED_CB])
        self.follower.sync()

    def notice(self, remote, callback_id, payload: list) -> None:
        """A notice: :attr:`last_seen` now.  For :data:`BLOCK_APPLIED_CB`
        the payload is ``[block_id]`` (40 hex chars): :attr:`head_block_id`
        becomes it, :attr:`head_block_num` the larger of the known head and
        the number in the id's first 8 hex digits (graphene
        ``block_header::num_from_id``), and the follower fetches what this
        node lacks; a block id that is not 40 hex digits is a bad message.
        Other callbacks are ignored.  Graphene reference:
        libraries/net/node.cpp (a peer's block inventory triggers a fetch)."""
        self.last_seen = self.network.reactor.seconds()
        if callback_id != BLOCK_APPLIED_CB or isinstance(callback_id, bool):
            return
        block_id = payload[0] if payload else None
        if not (isinstance(block_id, str) and len(block_id) == 40
                and all(c in "0123456789abcdef" for c in block_id)):
            remote.bad_message(remote.protocol, f"a block-applied notice with {block_id!r}, "
                                                "not a block id")
            return
        self.head_block_id = block_id
        self.head_block_num = max(self.head_block_num, int(block_id[:8], 16))
        self.follower.sync()

    def call_timed_out(self, remote, method: str) -> None:
        """Nothing: the sync step that made the call fails with it."""

    def failed(self, remote, error) -> bool:
        """A :class:`~nodeapi.errors.ChainError` (an invalid block, another
        chain) marks the peer bad (True: not followed any more); a message
        over ``max-message-size`` shrinks the follower's batches."""
        if isinstance(error, ChainError):
            self.network.mark_bad(self, str(error))
            return True
        if isinstance(error, MessageTooLarge):
            self.follower.reply_too_large()
        return False

    def lost(self, remote) -> None:
        """State ``disconnected`` (a ``bad`` peer stays ``bad``); a running
        sync ends at its next check."""
        if self.state != "bad":
            self.state = "disconnected"

    # -- the follower's reports --------------------------------------------------------

    def synced_step(self) -> None:
        """The follower applied a fetched batch: the peer delivers."""
        self.last_seen = self.network.reactor.seconds()
        self.remote.succeeded()

    def caught_up(self) -> None:
        """The follower reached the peer's head: state ``live``."""
        self.remote.succeeded()
        if self.state == "syncing":
            self.state = "live"
            log.info("Peer {peer} in sync at block {head}", peer=self.address,
                     head=self.network.chain.head_block_num)

    def describe(self) -> dict:
        """``{"addr", "state", "head_block_num", "head_block_id", "last_seen",
        "bad_reason", "reconnects"}`` (last_seen in reactor seconds, or None;
        reconnects: connections opened after the first)."""
        return {"addr": self.address, "state": self.state,
                "head_block_num": self.head_block_num, "head_block_id": self.head_block_id,
                "last_seen": self.last_seen, "bad_reason": self.bad_reason,
                "reconnects": max(self.remote.connections - 1, 0)}
