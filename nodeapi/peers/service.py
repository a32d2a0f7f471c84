"""The peers service: this node follows other nodes.

A :class:`PeerService` (a Twisted ``MultiService``, put in ``node.peers``)
keeps one :class:`~nodeapi.peers.peer.Peer` per address given by
``--seed-node`` or the network_node API's ``add_node`` (forms:
:mod:`nodeapi.protocol.node_address`).  Each peer's
:class:`~nodeapi.peers.remote.RemoteNode` (reconnecting with the backoff
of :mod:`nodeapi.peers.parameters` on the injected clock) is a child of
this service, so starting and stopping the service tree starts and stops
them.  On connect a peer's remote node logs in and checks the chain id, the peer registers
``database.set_block_applied_callback`` and its
:class:`~nodeapi.peers.follower.Follower` fetches the blocks after this
node's head and pushes each through ``chain.push_block`` (previous id,
scheduled witness, signature, merkle root, transactions); afterwards every
block-applied notice triggers another fetch.

A block that does not validate marks the peer ``bad``: its
remote node leaves the tree (disconnected, not retried until
``add_node`` names it again); this node keeps its chain.  Blocks that do not
extend the head are rejected (fork choice is out of scope).  Transactions
accepted locally are relayed with :meth:`PeerService.relay_transaction`; a
follower (a node without a witness) passes its clients' broadcasts on to
the node it follows with :meth:`PeerService.forward` instead.
Graphene reference: libraries/net/node.cpp (sync then follow),
libraries/app/api.cpp (network_node_api).
"""

from twisted.application import service
from twisted.internet import defer
from twisted.logger import Logger

from nodeapi.peers.errors import NoUpstream, PeerRpcError, PeerUnreachable, UpstreamError
from nodeapi.peers.parameters import DEFAULT_PARAMETERS, reconnect_delay, updated_parameters
from nodeapi.peers.p2p_node import DEFAULT_MAX_CONNECTIONS, P2PNode
from nodeapi.peers.peer import Peer
from nodeapi.protocol.errors import InvalidPeerAddress
from nodeapi.protocol.node_address import parse_node_address

log = Logger()

#: bytes; the default of the node's ``max-message-size`` option.
DEFAULT_MAX_MESSAGE_SIZE = 4 * 1024 * 1024


class PeerService(service.MultiService):
    """The peers of this node (see the module docstring).

    :param chain: the :class:`~nodeapi.chain.chain.Chain` to extend.
    :param seed_nodes: addresses followed from :meth:`startService`:
        :class:`~nodeapi.protocol.node_address.NodeAddress` values (the
        parsed ``--seed-node``) or their text; a bad text raises
        :class:`InvalidPeerAddress` early.
    :param reactor: reactor for TCP, name resolution and block times
        (required: this package never picks the global reactor).
    :param clock: ``IReactorTime`` on which reconnect delays are scheduled
        (default ``reactor``; tests inject a ``task.Clock``).
    :param parameters: overrides of
        :data:`~nodeapi.peers.parameters.DEFAULT_PARAMETERS`.
    :param max_message_size: the largest WebSocket message and frame payload
        (bytes, >= 1) accepted from a peer: the node's ``max-message-size``.
    :param force_validate: verify the transactions' signatures and
        authorities in the peers' blocks too (``--force-validate``, or a
        node that produces blocks); by default they are skipped as
        bitshares-core's non-producing nodes do (libraries/app/application.cpp
        ``handle_block``: ``skip_transaction_signatures``), the witness
        signature and the chain's rules always checked
        (:meth:`~nodeapi.chain.chain.Chain.push_block`).
    :param p2p_endpoint: ``"host:port"`` where graphene's peer protocol
        listens (``--p2p-endpoint``), or None.
    :param p2p_seeds: ``"host:port"`` P2P peers to dial (a ``--seed-node``
        without ``ws://`` or credentials).  With either, :attr:`p2p` is a
        :class:`~nodeapi.peers.p2p_node.P2PNode` child of this service.
    :param node_key_path: the P2P node key's file (None: a fresh key).
    :param peer_db_path: the P2P peer database's file (None: in memory).
    :param p2p_connect_to_new_peers: dial the P2P peers heard of.
    :param p2p_max_connections: P2P peers at once.
    """

    def __init__(self, chain, seed_nodes=(), *, reactor, clock=None, parameters=None,
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
                 p2p_endpoint: str | None = None, p2p_seeds=(),
                 node_key_path: str | None = None, peer_db_path: str | None = None,
                 p2p_connect_to_new_peers: bool = True,
                 p2p_max_connections: int = DEFAULT_MAX_CONNECTIONS,
                 force_validate: bool = False) -> None:
        super().__init__()
        if not (isinstance(max_message_size, int) and max_message_size >= 1):
            raise ValueError(f"max_message_size must be a positive int, "
                             f"got {max_message_size!r}")
        self.chain = chain
        self.reactor = reactor
        self.clock = reactor if clock is None else clock
        self.max_message_size = max_message_size
        self.force_validate = bool(force_validate)
        #: graphene's peer node (:class:`~nodeapi.peers.p2p_node.P2PNode`),
        #: or None when this node has no P2P endpoint and no P2P seed.
        self.p2p = None
        self.parameters = dict(DEFAULT_PARAMETERS,
                               maximum_number_of_connections=p2p_max_connections)
        if parameters:
            self.set_advanced_node_parameters(parameters)
        #: address (``"host:port"``) -> :class:`Peer`, every known peer.
        self.peers: dict = {}
        for seed in seed_nodes:
            address = parse_node_address(seed) if isinstance(seed, str) else seed
            peer = self._follow(address)
            if not address.url_given:
                peer.hint_p2p()
        #: blocks the chain applied since this service was created: produced
        #: here, received from peers or other clients, replayed from the block
        #: log (the metrics' ``nodeapi_blocks_applied_total`` counts the same).
        self.blocks_applied = 0
        #: of those, the blocks this service fetched from peers and pushed.
        self.blocks_from_peers = 0
        chain.add_block_observer(self._count_block)
        if p2p_endpoint or p2p_seeds:
            self.p2p = P2PNode(self, listen=p2p_endpoint or None, seeds=p2p_seeds,
                               node_key_path=node_key_path, peer_db_path=peer_db_path,
                               connect_to_new_peers=p2p_connect_to_new_peers,
                               desired_connections=self.parameters[
                                   "desired_number_of_connections"],
                               max_connections=self.parameters[
                                   "maximum_number_of_connections"])
            self.p2p.setServiceParent(self)

    def _count_block(self, applied) -> None:
        """Block observer of the chain: one more applied block."""
        self.blocks_applied += 1

    def retry_policy(self, attempt: int) -> float:
        """Reconnect delay (s) after ``attempt`` failures (counting from 1)
        under the current parameters
        (:func:`~nodeapi.peers.parameters.reconnect_delay`)."""
        return reconnect_delay(self.parameters, attempt)

    def stopService(self) -> defer.Deferred:
        """Twisted calls this when the node stops: every peer's remote node
        stops (pending connection attempts and reconnect
        delays cancelled, open WebSockets closed); a sync failure not yet
        logged is logged.

        :returns: the ``MultiService``'s ``DeferredList``: it fires once
            every peer's connection has closed, and never fails; an
            in-flight sync stops at its next check.  It does not wait for
            blocks being applied (they are applied synchronously in
            slices), and nothing is written to disk here."""
        return super().stopService()

    def _follow(self, node_address) -> Peer:
        """The :class:`Peer` at ``node_address``, created if new; its
        remote node joins the tree (started when this service runs) unless
        it already follows it.  Credentials given again replace the known
        ones; a ``bad`` peer is followed again."""
        peer = self.peers.get(node_address.address)
        if peer is None:
            peer = self.peers[node_address.address] = Peer(self, node_address)
        elif node_address.credentials:
            peer.remote.address = node_address
        if peer.remote.parent is None:
            peer.bad_reason = None
            peer.state = "connecting"
            peer.remote.setServiceParent(self)
        return peer

    def add_node(self, host_port: str) -> defer.Deferred:
        """network_node ``add_node``: follow the node at ``host_port``
        (``"host:port"``, ``"[v6]:port"``, with ``"user:password@"`` to log
        in at connect, for example to be granted ``block_api``, or a
        ``ws://`` URL).  On a node with a P2P node (:attr:`p2p`) a plain
        ``"host:port"`` is a P2P peer, as in bitshares-core: it is dialled
        (and redialled) over graphene's peer protocol, and the Deferred
        fires once the TCP connection is up.

        Fires with None once the WebSocket is open; fails with
        :class:`InvalidPeerAddress` or :class:`PeerUnreachable` (reconnects
        continue in the background)."""
        try:
            address = parse_node_address(host_port)
        except InvalidPeerAddress:
            return defer.fail()
        if self.p2p is not None and not address.url_given and not address.credentials:
            # graphene's meaning: a P2P peer, dialled from now on
            client = self.p2p.add_seed(address.address)
            return self._reported(client.whenConnected(failAfterFailures=1),
                                  f"P2P peer {address.address}")
        peer = self._follow(address)
        return self._reported(peer.remote.when_open(), f"peer {peer.address}")

    def _reported(self, d: defer.Deferred, what: str) -> defer.Deferred:
        """``d`` (a connection's first attempt) as :meth:`add_node` answers
        it: None, or :class:`PeerUnreachable` naming ``what``; fired from a
        later reactor turn, outside the ClientService state machine (the
        caller may stop the service, which the machine refuses
        re-entrantly)."""

        def unreachable(failure):
            raise PeerUnreachable(f"Cannot connect to {what}: {failure.getErrorMessage()}; "
                                  f"retrying")

        d.addCallbacks(lambda _: None, unreachable)
        out = defer.Deferred()
        d.addBoth(lambda result: self.reactor.callLater(0, out.callback, result))
        return out

    def apply_block(self, block: dict, peer: Peer) -> bool:
        """Push ``block`` from ``peer`` if it extends the head; True if applied.
        A block at or below the head (already applied, for example from
        another peer) is skipped; raises the ChainError of push_block, which
        checks the block's time against this service's ``reactor.seconds()``
        (a block 2.5 s or more ahead of it is
        :class:`~nodeapi.chain.errors.BlockFromFuture`), and the
        transactions' signatures only with :attr:`force_validate`."""
        num = int(block["previous"][:8], 16) + 1
        if num <= self.chain.head_block_num:
            return False
        self.chain.push_block(block, now=self.reactor.seconds(),
                              check_signatures=self.force_validate)
        self.blocks_from_peers += 1
        return True

    def push_network_block(self, block: dict):
        """Push ``block`` from a P2P peer the fork-aware way
        (:meth:`~nodeapi.chain.chain.Chain.push_network_block`: on the head,
        kept on a fork, or a switch to a longer fork); returns its
        ``ForkResult``.  Checked as :meth:`apply_block` checks (this
        service's clock, signatures with :attr:`force_validate`); raises
        what the chain raises (``UnlinkableBlock`` for a block building on
        none this node knows)."""
        result = self.chain.push_network_block(block, now=self.reactor.seconds(),
                                               check_signatures=self.force_validate)
        self.blocks_from_peers += len(result.applied)
        return result

    def mark_bad(self, peer: Peer, reason: str) -> defer.Deferred:
        """Reject ``peer``: state ``bad``, ``bad_reason`` = ``reason``, its
        remote node out of the tree and stopped (disconnected, not
        retried until :meth:`add_node` names it again); logged with this
        node's head, which stays as it is.  Returns the Deferred of the
        stop.  Graphene reference: libraries/net/node.cpp disconnects a
        peer that offers an invalid block."""
        log.warn("Peer {peer} rejected: {reason}; head stays {head}", peer=peer.address,
                 reason=reason, head=self.chain.head_block_num)
        peer.state = "bad"
        peer.bad_reason = reason
        peer.remote.reconnection.report()
        if peer.remote.parent is None:
            return defer.succeed(None)
        return defer.maybeDeferred(peer.remote.disownServiceParent)

    def relay_transaction(self, trx: dict) -> defer.Deferred:
        """network_broadcast ``broadcast_transaction`` of ``trx`` on each
        connected peer; fires with the number of peers that accepted it
        (refusals, for example duplicates, are logged)."""
        calls = []
        if self.p2p is not None:
            calls.append(defer.succeed(self.p2p.broadcast_transaction(trx)))
        for peer in self.peers.values():
            if peer.protocol is not None and peer.state in ("syncing", "live"):
                d = peer.remote.call("network_broadcast", "broadcast_transaction", [trx])
                calls.append(d.addCallbacks(lambda _: 1, self._relay_failed,
                                            errbackArgs=(peer.address,)))
        return defer.gatherResults(calls).addCallback(sum)

    @property
    def follows_nodes(self) -> bool:
        """True when this node was told to follow at least one node
        (``--seed-node`` or ``add_node``), whatever the peers' states."""
        return bool(self.peers)

    def upstream(self):
        """The :class:`Peer` a forwarded call goes to: the first known peer
        with an open connection that is ``live`` (caught up), else the
        first that is ``syncing``; None when no peer is connected."""
        connected = [p for p in self.peers.values()
                     if p.protocol is not None and p.state in ("live", "syncing")]
        live = [p for p in connected if p.state == "live"]
        return (live or connected or [None])[0]

    def forward(self, api: str, method: str, args: list) -> defer.Deferred:
        """Call ``method`` of set ``api`` with ``args`` (sent as given) on
        the :meth:`upstream` peer, for a follower that passes its clients'
        calls on (a follower's ``network_broadcast``).

        :returns: a Deferred firing with the upstream's ``result``; it fails
            with :class:`NoUpstream` when no peer is connected (nothing
            sent), :class:`UpstreamError` carrying the upstream's error
            object unchanged when it answered with an error, or
            :class:`~nodeapi.peers.errors.PeerDisconnected` when the
            connection closed before the answer (the call may or may not
            have been carried out there)."""
        peer = self.upstream()
        if peer is None:
            return defer.fail(NoUpstream(
                f"No upstream node is connected to pass {method} on to (following "
                f"{', '.join(sorted(self.peers))}); retry once it is back"))

        def refused(failure):
            failure.trap(PeerRpcError)
            raise UpstreamError(failure.value)

        return peer.remote.call(api, method, args).addErrback(refused)

    def _relay_failed(self, failure, address: str) -> int:
        log.info("Peer {peer} refused relayed transaction: {error}", peer=address,
                 error=failure.getErrorMessage())
        return 0

    # -- network_node API ------------------------------------------------------

    def connected_peers(self) -> list:
        """Connected peers: ``[{"addr", "state", "head_block_num",
        "head_block_id", "last_seen", "bad_reason"}]`` (graphene
        get_connected_peers entries carry ``addr`` and ``info``)."""
        rpc = [p.describe() for p in self.peers.values() if p.protocol is not None]
        return rpc + (self.p2p.connected_peers() if self.p2p is not None else [])

    def potential_peers(self) -> list:
        """Every known peer (seed nodes, add_node), any state, same shape;
        then the P2P peers heard of in address messages
        (``{"endpoint", "node_id", "last_seen_time"}``)."""
        out = [p.describe() for p in self.peers.values()]
        if self.p2p is not None:
            out += list(self.p2p.potential_peers.values())
        return out

    def peer_states(self) -> list:
        """Every followed node and every connected P2P peer in one shape,
        for the status page and health figures: ``[{"addr", "state",
        "head_block_num", "reconnects"}]`` (a P2P peer's state is its
        connection state, ``handshaking``, ``active`` or ``closing``; each
        P2P connection is its own entry, so its ``reconnects`` is 0)."""
        out = [{key: d[key] for key in ("addr", "state", "head_block_num", "reconnects")}
               for d in (p.describe() for p in self.peers.values())]
        if self.p2p is not None:
            out += [{"addr": p.address, "state": p.state, "head_block_num": p.head_block_num,
                     "reconnects": 0} for p in self.p2p.peers.values()]
        return out

    def info(self) -> dict:
        """network_node ``get_info``: ``{"connection_count", "head_block_num",
        "head_block_id", "blocks_applied", "blocks_from_peers"}``.

        ``connection_count`` is graphene's field (peers with an open
        connection).  Graphene's other fields (``listening_on``,
        ``node_public_key``, ``node_id``, ``firewalled``) describe its
        binary P2P listener, which this node does not have, so they are
        left out; instead the head (number, id) and two counters since
        start: ``blocks_applied`` every block the chain applied (produced
        by this node's witness, pushed from peers or ``broadcast_block``,
        replayed from the block log), ``blocks_from_peers`` those this
        service fetched from peers.  Graphene reference:
        libraries/app/api.cpp ``network_node_api::get_info``."""
        info = {"connection_count": len(self.connected_peers()),
                "head_block_num": self.chain.head_block_num,
                "head_block_id": self.chain.head_block_id,
                "blocks_applied": self.blocks_applied,
                "blocks_from_peers": self.blocks_from_peers}
        if self.p2p is not None:
            p2p = self.p2p.info()
            if p2p["listening_on"] is None:
                del p2p["listening_on"]
            info.update(p2p)
        return info

    def get_advanced_node_parameters(self) -> dict:
        """The tunables (see
        :data:`~nodeapi.peers.parameters.DEFAULT_PARAMETERS`), a copy."""
        return dict(self.parameters)

    def set_advanced_node_parameters(self, params: dict) -> None:
        """Change some tunables; raises
        :class:`~nodeapi.peers.errors.InvalidNodeParameter` (see
        :func:`~nodeapi.peers.parameters.updated_parameters`); nothing
        changes when any value is refused."""
        self.parameters = updated_parameters(self.parameters, params)
        if self.p2p is not None:
            self.p2p.desired_connections = self.parameters["desired_number_of_connections"]
            self.p2p.max_connections = self.parameters["maximum_number_of_connections"]


def split_seed_nodes(addresses) -> tuple:
    """``(rpc, p2p)`` of the ``--seed-node``/``--seed-nodes`` addresses
    (:class:`~nodeapi.protocol.node_address.NodeAddress`): a ``ws://`` URL
    or an address with credentials is a node to follow over RPC (kept as
    given); a plain ``host:port`` names a P2P endpoint as in bitshares-core
    (its ``"host:port"`` text)."""
    rpc, p2p = [], []
    for address in addresses:
        if address.url_given or address.credentials:
            rpc.append(address)
        elif address.address not in p2p:
            p2p.append(address.address)
    return rpc, p2p
