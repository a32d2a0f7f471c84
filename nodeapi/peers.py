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

import random

from twisted.application import service
from twisted.application.internet import ClientService, backoffPolicy
from twisted.internet import defer
from twisted.internet.endpoints import clientFromString
from twisted.logger import Logger

from nodeapi.errors import ApiError, ChainError
from nodeapi.peers_client import PeerDisconnected, PeerRpcError, PeerRpcFactory

log = Logger()

BLOCK_APPLIED_CB = 1
# Fields graphene's database get_block adds to a signed block (signed_block_with_info).
_INFO_FIELDS = ("block_id", "signing_key", "transaction_ids")
DEFAULT_PARAMETERS = {
    "sync_batch_size": 100,
    "reconnect_initial_delay": 1.0,
    "reconnect_max_delay": 60.0,
    "reconnect_factor": 1.5,
    "reconnect_jitter": 1.0,
}


class InvalidPeerAddress(ApiError):
    """A peer address must be "host:port" with a port number from 1 to 65535."""

    name = "invalid_peer_address"


class InvalidNodeParameter(ApiError):
    """An advanced node parameter is unknown or has a bad value."""

    name = "invalid_node_parameter"


class PeerUnreachable(ApiError):
    """The first connection attempt to the peer failed; retries continue."""

    name = "peer_unreachable"


class WrongChain(ChainError):
    """The peer serves a different chain (its chain id differs)."""

    name = "wrong_chain"


def parse_address(host_port: str) -> tuple:
    """``"host:port"`` -> ``(host, port)``; raises :class:`InvalidPeerAddress`."""
    if not isinstance(host_port, str) or ":" not in host_port:
        raise InvalidPeerAddress(f"Peer address {host_port!r} is not host:port")
    host, _, port = host_port.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidPeerAddress(f"Peer address {host_port!r} is not host:port "
                                 "with a port from 1 to 65535")
    return host, int(port)


# 64-bit (or uint32) integer fields of the supported operations and of a
# transaction that the RPC layer writes as strings when outside int32
# (wire-contract section 3); the in-memory form is int (DESIGN.rst).
_WIRE_INT_FIELDS = frozenset(("amount", "max_supply", "max_market_fee", "ref_block_prefix"))


def wire_ints(value, key=None):
    """``value`` with the numeric strings of :data:`_WIRE_INT_FIELDS` made
    ints again, so a follower stores (and its plugins see) exactly the
    producer's in-memory block.  Other strings (memos, ids) are untouched."""
    if isinstance(value, dict):
        return {k: wire_ints(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [wire_ints(v) for v in value]
    if key in _WIRE_INT_FIELDS and isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return value


def strip_block_info(block: dict) -> dict:
    """A signed block without the ``block_id``/``signing_key``/
    ``transaction_ids`` fields that ``get_block`` adds, with wire integers
    converted back (:func:`wire_ints`)."""
    return wire_ints({k: v for k, v in block.items() if k not in _INFO_FIELDS})


class Peer:
    """One followed node.

    :ivar address: ``"host:port"``.
    :ivar state: ``connecting`` | ``syncing`` | ``live`` | ``disconnected`` | ``bad``.
    :ivar head_block_num: the peer's last known head block number (0 unknown).
    :ivar last_seen: reactor time (s) of the last message from the peer, or None.
    :ivar bad_reason: why the peer was marked bad, or None.
    """

    def __init__(self, network, host: str, port: int, path: str = "/") -> None:
        self.network = network
        self.host, self.port = host, port
        self.address = f"{host}:{port}"
        self.state = "connecting"
        self.head_block_num = 0
        self.head_block_id = None
        self.last_seen = None
        self.bad_reason = None
        self.use_get_block = False
        self.protocol = None
        self._syncing = False
        self._again = False
        self.synced = defer.Deferred()  # fires the first time the peer goes live
        reactor = network.reactor
        endpoint = clientFromString(reactor, f"tcp:host={host}:port={port}")
        self.client = ClientService(endpoint, PeerRpcFactory(self, path),
                                    retryPolicy=network.retry_policy, clock=reactor,
                                    prepareConnection=lambda proto: proto.opened)

    # -- connection events (from PeerRpcProtocol) --------------------------------

    def start(self) -> None:
        self.bad_reason = None
        self.state = "connecting"
        self.client.startService()

    def stop(self) -> defer.Deferred:
        return self.client.stopService()

    def connected(self, proto) -> None:
        self.protocol = proto
        self.state = "syncing"
        self.last_seen = self.network.reactor.seconds()
        self._subscribe(proto).addErrback(self._failed, proto)

    def disconnected(self, proto) -> None:
        if proto is self.protocol:
            self.protocol = None
            if self.state != "bad":
                self.state = "disconnected"
                log.info("Peer {peer} disconnected", peer=self.address)

    def notice(self, proto, callback_id, payload: list) -> None:
        self.last_seen = self.network.reactor.seconds()
        if callback_id == BLOCK_APPLIED_CB and payload and isinstance(payload[0], str):
            self.head_block_id = payload[0]
            self.head_block_num = max(self.head_block_num, int(payload[0][:8], 16))
            self.sync()

    # -- sync ----------------------------------------------------------------------

    @defer.inlineCallbacks
    def _subscribe(self, proto):
        chain = self.network.chain
        chain_id = yield proto.call("database", "get_chain_id", [])
        if chain_id != chain.chain_id:
            raise WrongChain(f"Peer chain id {chain_id} differs from {chain.chain_id}")
        yield proto.call("database", "set_block_applied_callback", [BLOCK_APPLIED_CB])
        dgp = yield proto.call("database", "get_dynamic_global_properties", [])
        self.head_block_num = max(self.head_block_num, int(dgp["head_block_number"]))
        self.head_block_id = dgp["head_block_id"]
        log.info("Connected to peer {peer}, head {head}", peer=self.address,
                 head=self.head_block_num)
        self.sync()

    def sync(self) -> None:
        """Fetch and apply the peer's blocks after this node's head; a call
        while a sync runs makes it go around once more."""
        if self.protocol is None or self.state == "bad":
            return
        if self._syncing:
            self._again = True
            return
        self._syncing = True
        proto = self.protocol
        d = self._sync_loop(proto)
        d.addErrback(self._failed, proto)

        def done(_):
            self._syncing = False

        d.addBoth(done)

    @defer.inlineCallbacks
    def _sync_loop(self, proto):
        chain = self.network.chain
        while True:
            self._again = False
            while chain.head_block_num < self.head_block_num and proto is self.protocol:
                first = chain.head_block_num + 1
                last = min(self.head_block_num,
                           first + self.network.parameters["sync_batch_size"] - 1)
                blocks = yield self._fetch(proto, first, last)
                self.last_seen = self.network.reactor.seconds()
                for block in blocks:
                    if block is None or proto is not self.protocol:
                        break
                    self.network.apply_block(strip_block_info(block), self)
                if not blocks or blocks[-1] is None:
                    break
            if not self._again or proto is not self.protocol:
                break
        if proto is self.protocol and self.state == "syncing":
            self.state = "live"
            log.info("Peer {peer} in sync at block {head}", peer=self.address,
                     head=chain.head_block_num)
        if not self.synced.called and self.state == "live":
            self.synced.callback(chain.head_block_num)

    @defer.inlineCallbacks
    def _fetch(self, proto, first: int, last: int):
        """Blocks ``first..last`` from the peer (list, None for missing)."""
        if not self.use_get_block:
            try:
                blocks = yield proto.call("block", "get_blocks", [first, last])
                return blocks
            except PeerRpcError as exc:
                if not exc.access_denied:
                    raise
                log.info("Peer {peer} denies block_api; using database get_block",
                         peer=self.address)
                self.use_get_block = True
        calls = [proto.call("database", "get_block", [n]) for n in range(first, last + 1)]
        blocks = yield defer.gatherResults(calls, consumeErrors=True)
        return blocks

    def _failed(self, failure, proto) -> None:
        if isinstance(failure.value, defer.FirstError):
            failure = failure.value.subFailure
        if failure.check(PeerDisconnected):
            return
        if failure.check(ChainError):
            self.network.mark_bad(self, str(failure.value))
            return
        log.failure("Sync with peer {peer} failed; reconnecting", failure,
                    peer=self.address)
        if proto is self.protocol:
            proto.dropConnection(abort=True)

    def describe(self) -> dict:
        """``{"addr", "state", "head_block_num", "head_block_id", "last_seen",
        "bad_reason"}`` (last_seen in reactor seconds, or None)."""
        return {"addr": self.address, "state": self.state,
                "head_block_num": self.head_block_num, "head_block_id": self.head_block_id,
                "last_seen": self.last_seen, "bad_reason": self.bad_reason}


class PeerService(service.MultiService):
    """The peers of this node (see module docstring).

    :param chain: the :class:`~nodeapi.chain.chain.Chain` to extend.
    :param seed_nodes: ``"host:port"`` strings (``--seed-node``), followed
        from :meth:`startService`; raises :class:`InvalidPeerAddress` early.
    :param reactor: reactor for TCP and the reconnect clock (the global one
        when None).
    :param parameters: overrides of :data:`DEFAULT_PARAMETERS`.
    :param ws_path: the path of the peers' WebSocket RPC endpoint.
    """

    def __init__(self, chain, seed_nodes=(), reactor=None, parameters=None,
                 ws_path: str = "/") -> None:
        super().__init__()
        if reactor is None:
            from twisted.internet import reactor
        self.chain = chain
        self.reactor = reactor
        self.ws_path = ws_path
        self.parameters = dict(DEFAULT_PARAMETERS)
        if parameters:
            self.set_advanced_node_parameters(parameters)
        self.peers: dict = {}
        self.seed_nodes = [parse_address(s) for s in seed_nodes]
        self.blocks_applied = 0

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
        super().startService()
        for host, port in self.seed_nodes:
            self._follow(host, port)

    def stopService(self) -> defer.Deferred:
        """Close every peer connection; the Deferred fires when all are closed."""
        super().stopService()
        return defer.DeferredList([p.stop() for p in self.peers.values()])

    def _follow(self, host: str, port: int) -> Peer:
        peer = self.peers.get(f"{host}:{port}")
        if peer is None:
            peer = self.peers[f"{host}:{port}"] = Peer(self, host, port, self.ws_path)
            peer.start()
        elif peer.state == "bad":
            peer.start()
        return peer

    def add_node(self, host_port: str) -> defer.Deferred:
        """network_node ``add_node``: follow the node at ``host_port``.

        Fires with None once the WebSocket is open; fails with
        :class:`InvalidPeerAddress` or :class:`PeerUnreachable` (reconnects
        continue in the background)."""
        try:
            host, port = parse_address(host_port)
        except InvalidPeerAddress:
            return defer.fail()
        peer = self._follow(host, port)
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
        another peer) is skipped; raises the ChainError of push_block."""
        num = int(block["previous"][:8], 16) + 1
        if num <= self.chain.head_block_num:
            return False
        self.chain.push_block(block)
        self.blocks_applied += 1
        return True

    def mark_bad(self, peer: Peer, reason: str) -> None:
        """Reject ``peer``: state ``bad``, disconnected, not retried."""
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
        """``{"connection_count", "head_block_num", "head_block_id",
        "blocks_applied"}`` (graphene network_node get_info)."""
        return {"connection_count": len(self.connected_peers()),
                "head_block_num": self.chain.head_block_num,
                "head_block_id": self.chain.head_block_id,
                "blocks_applied": self.blocks_applied}

    def get_advanced_node_parameters(self) -> dict:
        """The tunables: ``sync_batch_size`` (blocks per fetch),
        ``reconnect_initial_delay``/``reconnect_max_delay`` (s),
        ``reconnect_factor``, ``reconnect_jitter`` (s, random extra delay
        up to this; 0 allowed)."""
        return dict(self.parameters)

    def set_advanced_node_parameters(self, params: dict) -> None:
        """Change some tunables; raises :class:`InvalidNodeParameter` for an
        unknown name or a value that is not a positive number (batch size:
        an integer from 1 to 1000)."""
        if not isinstance(params, dict):
            raise InvalidNodeParameter("Parameters must be an object")
        new = dict(self.parameters)
        for name, value in params.items():
            if name not in DEFAULT_PARAMETERS:
                raise InvalidNodeParameter(f"Unknown node parameter {name!r}; known: "
                                           f"{', '.join(sorted(DEFAULT_PARAMETERS))}")
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise InvalidNodeParameter(f"{name} must be a number") from None
            if value < 0 or (value == 0 and name != "reconnect_jitter"):
                raise InvalidNodeParameter(f"{name} must be positive")
            if name == "sync_batch_size":
                if value != int(value) or value > 1000:
                    raise InvalidNodeParameter("sync_batch_size must be an integer 1..1000")
                value = int(value)
            new[name] = value
        self.parameters = new
