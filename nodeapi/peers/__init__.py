"""The network node: this node follows other nodes over their RPC
WebSocket, and speaks graphene's peer-to-peer protocol with bitshares-core
nodes (graphene reference: libraries/net/node.cpp, sync then follow;
libraries/app/api.cpp, network_node_api).

Modules, by role:

``service.py``    :class:`~nodeapi.peers.service.PeerService`, the
                  ``MultiService`` in ``node.peers``: the known peers, the
                  network_node API answers, block application, relaying
``remote.py``     :class:`~nodeapi.peers.remote.RemoteNode`: the one
                  connection to another node's RPC (login, chain id,
                  reconnection, failure lines), and
                  :class:`~nodeapi.peers.remote.IRemoteOwner`, what its
                  owner (a peer, the indexer, a gateway upstream, the
                  P2P node of its connections) is told
``peer.py``       :class:`~nodeapi.peers.peer.Peer`: one followed node, the
                  owner of its remote node (a child of the PeerService):
                  subscription, state, head
``follower.py``   :class:`~nodeapi.peers.follower.Follower`: the sync loop
                  of one peer (batches, the peer's limits, get_block fallback)
``client.py``     the Autobahn WebSocket client protocol and factory (calls
                  with timeouts and a bound in flight)
``replies.py``    what another node may send (checked messages)
``reconnect.py``  the quiet ``ClientService`` and its endpoints
``upstream.py``   :class:`~nodeapi.peers.upstream.UpstreamService`: indexer
                  mode, a remote node's owner
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
