"""The network node: this node follows other nodeapi nodes (issue 6).

A :class:`PeerService` (a Twisted ``MultiService``, put in ``node.peers``)
keeps one :class:`Peer` per ``host:port`` given by ``--seed-node`` or the
network_node API's ``add_node``.  Each peer is a ``ClientService`` (endpoint
``tcp:host:port``, reconnect with ``backoffPolicy``, injected clock) over a
:class:`~nodeapi.peers_client.PeerRpcProtocol` WebSocket to the peer's RPC
site.  On connect it checks the chain id, registers
``database.set_block_applied_callback``, fetches the blocks after this node's
head in batches (``block.get_blocks``; when the peer denies ``block_api``,
pipelined ``database.get_block`` calls) and pushes each through
``chain.push_block`` (previous id, scheduled witness, signature, merkle root,
transactions).  Afterwards every block-applied notice triggers another fetch.

A block that does not validate marks the peer ``bad``: it is disconnected
and not retried until ``add_node`` names it again; this node keeps its chain.
Blocks that do not extend the head are rejected (fork choice is out of
scope).  Transactions accepted locally are relayed with
:meth:`PeerService.relay_transaction`.  Graphene reference:
libraries/net/node.cpp (sync then follow), libraries/app/api.cpp
(network_node_api).
"""

import math
import random

from twisted.application import service
from twisted.application.internet import backoffPolicy
from twisted.internet import defer
from twisted.logger import Logger

from nodeapi.peers_peer import (  # noqa: F401  (re-exported for API sets and tap)
    DEFAULT_PARAMETERS, InvalidNodeParameter, InvalidPeerAddress, LoginRefused, Peer,
    PeerUnreachable,
    MalformedBlock, WrongChain, parse_address, split_credentials, strip_block_info,
    wire_ints)

log = Logger()


class PeerService(service.MultiService):
    """The peers of this node (see module docstring).

    :param chain: the :class:`~nodeapi.chain.chain.Chain` to extend.
    :param seed_nodes: ``"[user:password@]host:port"`` strings (``--seed-node``), followed
        from :meth:`startService`; raises :class:`InvalidPeerAddress` early.
    :param reactor: reactor for TCP, block times and the reconnect clock
        (the global one when None).
    :param clock: ``IReactorTime`` on which reconnect delays are scheduled
        (default ``reactor``; tests inject a ``task.Clock``).
    :param parameters: overrides of :data:`DEFAULT_PARAMETERS`.
    :param ws_path: the path of the peers' WebSocket RPC endpoint.
    """

    def __init__(self, chain, seed_nodes=(), reactor=None, parameters=None,
                 ws_path: str = "/", clock=None) -> None:
        super().__init__()
        if reactor is None:
            from twisted.internet import reactor
        self.chain = chain
        self.reactor = reactor
        self.clock = reactor if clock is None else clock
        self.ws_path = ws_path
        self.parameters = dict(DEFAULT_PARAMETERS)
        if parameters:
            self.set_advanced_node_parameters(parameters)
        self.peers: dict = {}
        self.seed_nodes = [self._parse(s) for s in seed_nodes]
        #: blocks the chain applied since this service was created: produced
        #: here, received from peers or other clients, replayed from the block
        #: log (the metrics' ``nodeapi_blocks_applied_total`` counts the same).
        self.blocks_applied = 0
        #: of those, the blocks this service fetched from peers and pushed.
        self.blocks_from_peers = 0
        chain.add_block_observer(self._count_block)

    def _count_block(self, applied) -> None:
        """Block observer of the chain: one more applied block."""
        self.blocks_applied += 1

    def retry_policy(self, attempt: int) -> float:
        """Reconnect delay (s) after ``attempt`` failures (ClientService
        counts from 1): ``reconnect_initial_delay`` after the first, times
        ``reconnect_factor`` per further failure, capped at
        ``reconnect_max_delay``, plus up to ``reconnect_jitter``."""
        p = self.parameters
        return backoffPolicy(initialDelay=p["reconnect_initial_delay"],
                             maxDelay=p["reconnect_max_delay"],
                             factor=p["reconnect_factor"],
                             jitter=lambda: random.uniform(0, p["reconnect_jitter"]))(
                                 max(attempt - 1, 0))

    def startService(self) -> None:
        """Twisted calls this when the node starts: mark the service running
        and follow every ``--seed-node`` (one :class:`Peer` each, whose
        ``ClientService`` connects and reconnects in the background).
        Returns at once; an unreachable seed is retried with
        :meth:`retry_policy` (via :meth:`Peer.retry_delay`), never an error
        here (addresses were checked in ``__init__``).  Graphene reference:
        libraries/net/node.cpp (``add_node`` then ``connect_to_endpoint`` for each seed node)."""
        super().startService()
        for host, port, credentials in self.seed_nodes:
            self._follow(host, port, credentials)

    def stopService(self) -> defer.Deferred:
        """Twisted calls this when the node stops: stop every peer's
        ``ClientService`` (pending connection attempts and reconnect delays
        cancelled, open WebSockets closed).

        :returns: a ``DeferredList`` over :meth:`Peer.stop` of every known
            peer (any state): it fires once every peer's connection has
            closed (``connectionLost``), with ``[(True, None), ...]``, and
            never fails; an in-flight sync stops at its next check.  It does
            not wait for blocks being applied (they are applied synchronously
            in slices), and nothing is written to disk here."""
        super().stopService()
        return defer.DeferredList([p.stop() for p in self.peers.values()])

    @staticmethod
    def _parse(address: str) -> tuple:
        """``[user:password@]host:port`` -> ``(host, port, credentials)``."""
        credentials, host_port = split_credentials(address)
        return parse_address(host_port) + (credentials,)

    def _follow(self, host: str, port: int, credentials=None) -> Peer:
        peer = self.peers.get(f"{host}:{port}")
        if peer is None:
            peer = self.peers[f"{host}:{port}"] = Peer(self, host, port, self.ws_path,
                                                       credentials)
            peer.start()
        else:
            if credentials:
                peer.credentials = credentials
            if peer.state == "bad":
                peer.start()
        return peer

    def add_node(self, host_port: str) -> defer.Deferred:
        """network_node ``add_node``: follow the node at ``host_port``
        (``"host:port"``, or ``"user:password@host:port"`` to log in at
        connect, for example to be granted ``block_api``).

        Fires with None once the WebSocket is open; fails with
        :class:`InvalidPeerAddress` or :class:`PeerUnreachable` (reconnects
        continue in the background)."""
        try:
            host, port, credentials = self._parse(host_port)
        except InvalidPeerAddress:
            return defer.fail()
        peer = self._follow(host, port, credentials)
        d = peer.client.whenConnected(failAfterFailures=1)

        def unreachable(failure):
            raise PeerUnreachable(f"Cannot connect to peer {peer.address}: "
                                  f"{failure.getErrorMessage()}; retrying")

        d.addCallbacks(lambda _: None, unreachable)
        # Leave the ClientService state machine before the caller continues
        # (it may stop the service, which the machine refuses re-entrantly).
        out = defer.Deferred()
        d.addBoth(lambda result: self.reactor.callLater(0, out.callback, result))
        return out

    def apply_block(self, block: dict, peer: Peer) -> bool:
        """Push ``block`` from ``peer`` if it extends the head; True if applied.
        A block at or below the head (already applied, for example from
        another peer) is skipped; raises the ChainError of push_block, which
        checks the block's time against this service's ``reactor.seconds()``
        (a block 5 s or more in the future is
        :class:`~nodeapi.chain.errors.BlockFromFuture`)."""
        num = int(block["previous"][:8], 16) + 1
        if num <= self.chain.head_block_num:
            return False
        self.chain.push_block(block, now=self.reactor.seconds())
        self.blocks_from_peers += 1
        return True

    def mark_bad(self, peer: Peer, reason: str) -> None:
        """Reject ``peer``: state ``bad``, :attr:`Peer.bad_reason` = ``reason``,
        its ``ClientService`` stopped (disconnected, not retried until
        :meth:`add_node` names it again); logged with this node's head,
        which stays as it is.  Graphene reference: libraries/net/node.cpp
        disconnects a peer that offers an invalid block."""
        log.warn("Peer {peer} rejected: {reason}; head stays {head}", peer=peer.address,
                 reason=reason, head=self.chain.head_block_num)
        peer.state = "bad"
        peer.bad_reason = reason
        peer.stop()

    def relay_transaction(self, trx: dict) -> defer.Deferred:
        """network_broadcast ``broadcast_transaction`` of ``trx`` on each
        connected peer; fires with the number of peers that accepted it
        (refusals, for example duplicates, are logged)."""
        calls = []
        for peer in self.peers.values():
            if peer.protocol is not None and peer.state in ("syncing", "live"):
                d = peer.protocol.call("network_broadcast", "broadcast_transaction", [trx])
                calls.append(d.addCallbacks(lambda _: 1, self._relay_failed,
                                            errbackArgs=(peer.address,)))
        return defer.gatherResults(calls).addCallback(sum)

    def _relay_failed(self, failure, address: str) -> int:
        log.info("Peer {peer} refused relayed transaction: {error}", peer=address,
                 error=failure.getErrorMessage())
        return 0

    # -- network_node API ------------------------------------------------------

    def connected_peers(self) -> list:
        """Connected peers: ``[{"addr", "state", "head_block_num",
        "head_block_id", "last_seen", "bad_reason"}]`` (graphene
        get_connected_peers entries carry ``addr`` and ``info``)."""
        return [p.describe() for p in self.peers.values() if p.protocol is not None]

    def potential_peers(self) -> list:
        """Every known peer (seed nodes, add_node), any state, same shape."""
        return [p.describe() for p in self.peers.values()]

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
        return {"connection_count": len(self.connected_peers()),
                "head_block_num": self.chain.head_block_num,
                "head_block_id": self.chain.head_block_id,
                "blocks_applied": self.blocks_applied,
                "blocks_from_peers": self.blocks_from_peers}

    def get_advanced_node_parameters(self) -> dict:
        """The tunables: ``sync_batch_size`` (blocks per fetch),
        ``reconnect_initial_delay``/``reconnect_max_delay`` (s),
        ``reconnect_factor``, ``reconnect_jitter`` (s, random extra delay
        up to this; 0 allowed)."""
        return dict(self.parameters)

    def set_advanced_node_parameters(self, params: dict) -> None:
        """Change some tunables; raises :class:`InvalidNodeParameter` for an
        unknown name or a value that is not a positive finite number (a JSON
        number or numeric string, wire-contract section 3; booleans, NaN and
        infinities are refused; batch size: an integer from 1 to 1000).
        Nothing changes when any value is refused."""
        if not isinstance(params, dict):
            raise InvalidNodeParameter("Parameters must be an object")
        new = dict(self.parameters)
        for name, value in params.items():
            if name not in DEFAULT_PARAMETERS:
                raise InvalidNodeParameter(f"Unknown node parameter {name!r}; known: "
                                           f"{', '.join(sorted(DEFAULT_PARAMETERS))}")
            value = _finite_number(name, value)
            if value < 0 or (value == 0 and name != "reconnect_jitter"):
                raise InvalidNodeParameter(f"{name} must be positive")
            if name == "sync_batch_size":
                if value != int(value) or value > 1000:
                    raise InvalidNodeParameter("sync_batch_size must be an integer 1..1000")
                value = int(value)
            new[name] = value
        self.parameters = new


def _finite_number(name: str, value) -> float:
    """``value`` (int, float or numeric string) as a finite float; raises
    :class:`InvalidNodeParameter` naming ``name`` for anything else (bools,
    NaN, infinities, other strings, null)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InvalidNodeParameter(f"{name} must be a number, got {value!r}")
    try:
        number = float(value)
    except (ValueError, OverflowError):
        raise InvalidNodeParameter(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise InvalidNodeParameter(f"{name} must be a finite number, got {value!r}")
    return number
