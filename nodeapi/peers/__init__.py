"""The network node: this node follows other nodes over their RPC
WebSocket, and speaks graphene's peer-to-peer protocol with bitshares-core
nodes (graphene reference: libraries/net/node.cpp, sync then follow;
libraries/app/api.cpp, network_node_api).

Modules, by role:

``service.py``    :class:`~nodeapi.peers.service.PeerService`, the
                  ``MultiService`` in ``node.peers``: the known peers, the
                  network_node API answers, block application, relaying
``peer.py``       :class:`~nodeapi.peers.peer.Peer`: one followed node, its
                  ``ClientService`` (a child of the PeerService), login,
                  chain-id check, subscription, failure accounting
``follower.py``   :class:`~nodeapi.peers.follower.Follower`: the sync loop
                  of one peer (batches, the peer's limits, get_block fallback)
``client.py``     the Autobahn WebSocket client protocol and factory
``parameters.py`` the advanced node parameters and the reconnect policy
``errors.py``     the errors of this package
``stcp.py``       the P2P stream's key agreement and AES-256-CBC (stcp_socket)
``core_messages.py`` the P2P core messages' bytes and framing
``p2p_connection.py`` :class:`~nodeapi.peers.p2p_connection.P2PConnection`:
                  one P2P stream (Twisted protocol, bounded, producer)
``p2p_node.py``   :class:`~nodeapi.peers.p2p_node.P2PNode`: the P2P node
                  (handshake, sync, relay, serving, limits), a child of the
                  PeerService
``p2p_peer.py``   :class:`~nodeapi.peers.p2p_peer.P2PPeer`: one P2P
                  connection's state and its get_connected_peers entry
``p2p_peerdb.py`` :class:`~nodeapi.peers.p2p_peerdb.PeerDatabase`: the peers
                  heard of, kept in ``<data-dir>/p2p/peers.json``
"""
