"""The network_node API set (login accessor ``network_node``, access name
``network_node_api``): this node's peers.

Graphene reference: bitshares-core libraries/app/api.cpp
``network_node_api`` (``get_info``, ``add_node``, ``get_connected_peers``,
``get_potential_peers``, ``get_advanced_node_parameters``,
``set_advanced_node_parameters``).  Everything is delegated to
``node.peers`` (:class:`nodeapi.peers.service.PeerService`).  Without a peer network
(``node.peers`` is None) ``get_info`` still reports the local head with no
connections, the peer lists are empty, and the functions that need the
network fail with "No P2P network" like graphene.
"""

import re

from nodeapi.api.base import ApiSet, api_function
from nodeapi.errors import ApiError


class NetworkNodeApi(ApiSet):
    """graphene ``network_node_api`` over :class:`nodeapi.peers.service.PeerService`."""

    name = "network_node"

    def _peers(self):
        peers = self.node.peers
        if peers is None:
            raise ApiError("No P2P network: this node runs without a peer service "
                           "(start it with --seed-node or add peers in its configuration)")
        return peers

    @api_function
    def get_info(self):
        """graphene's ``{listening_on, node_public_key, node_id,
        connection_count}`` plus this node's ``head_block_num``,
        ``head_block_id``, ``blocks_applied`` and ``blocks_from_peers``
        (:meth:`nodeapi.peers.service.PeerService.info`; ``blocks_applied``
        counts every block the chain applied since start: produced, pushed,
        replayed).  ``listening_on`` is the RPC endpoint, where other nodes
        follow this one; the two keys are ``node.node_identity``.  With a
        P2P node (``--p2p-endpoint`` or a P2P seed) ``listening_on`` is its
        P2P endpoint, the keys are its node key, and
        ``p2p_connection_count`` counts the P2P peers (also in
        ``connection_count``).  Without a
        peer network nothing counts blocks, so both counters are null there
        rather than a wrong 0."""
        peers = self.node.peers
        chain = self.node.chain
        info = {"listening_on": _listening_on(self.node.options.get("rpc-endpoint")),
                **self.node.node_identity}
        if peers is not None:
            info.update(peers.info())
        else:
            info.update({"connection_count": 0, "head_block_num": chain.head_block_num,
                         "head_block_id": chain.head_block_id, "blocks_applied": None,
                         "blocks_from_peers": None})
        return info

    @api_function
    def add_node(self, endpoint):
        """Follow the node at ``"host:port"`` (``"[v6]:port"``,
        ``"user:password@host:port"`` to log in at connect, or a ``ws://``
        URL: :mod:`nodeapi.protocol.node_address`); on a node with a P2P
        node a plain ``"host:port"`` is dialled over graphene's peer
        protocol, as bitshares-core does.  Answers null once
        connected; fails with ``InvalidPeerAddress`` if the address is
        malformed, ``PeerUnreachable`` if the first attempt fails
        (reconnects continue in the background)."""
        if not isinstance(endpoint, str):
            raise ApiError(f"endpoint must be a \"host:port\" string, got {endpoint!r}")
        return self._peers().add_node(endpoint).addCallback(lambda _: None)

    @api_function
    def get_connected_peers(self):
        """Connected peers: followed nodes ``[{addr, state, head_block_num,
        head_block_id, last_seen, bad_reason}]``, then active P2P peers as
        graphene's ``peer_status`` ``{version, host, info}`` (``info``:
        addr, direction, state, conntime, bytessent, bytesrecv,
        user_agent, core_protocol_version, node_id, platform,
        current_head_block_number, syncing, on_fork); [] without a peer
        network."""
        peers = self.node.peers
        return peers.connected_peers() if peers is not None else []

    @api_function
    def get_potential_peers(self):
        """Every followed node in any state, same shape, then the P2P
        peers heard of in ``address`` messages ``{endpoint, node_id,
        last_seen_time}`` ([] without a peer network)."""
        peers = self.node.peers
        return peers.potential_peers() if peers is not None else []

    @api_function
    def get_advanced_node_parameters(self):
        """The peer service tunables (``sync_batch_size``, reconnect delays,
        ...)."""
        return self._peers().get_advanced_node_parameters()

    @api_function
    def set_advanced_node_parameters(self, params):
        """Change some tunables (an object of name -> value); returns null.
        Unknown names and bad values are errors."""
        if not isinstance(params, dict):
            raise ApiError(f"params must be an object, got {type(params).__name__}")
        self._peers().set_advanced_node_parameters(params)
        return None


def _listening_on(endpoint) -> str:
    """``host:port`` (``[v6]:port``) of a ``tcp:PORT:interface=HOST``
    endpoint string (the form the configuration gives), else the string
    itself ("" when unknown)."""
    if not isinstance(endpoint, str):
        return ""
    m = re.match(r"^tcp6?:(\d+)(?::interface=(.*))?$", endpoint)
    if m is None:
        return endpoint
    host = (m.group(2) or "0.0.0.0").replace("\\", "")
    return f"[{host}]:{m.group(1)}" if ":" in host else f"{host}:{m.group(1)}"
