"""The state of one P2P connection (graphene ``peer_connection``,
bitshares-core ``libraries/net/peer_connection.cpp``): the handshake
states, the sync and fetch bookkeeping, what the peer is known to have, its
message rate, and its ``get_connected_peers`` entry.  The
:class:`~nodeapi.peers.p2p_node.P2PNode` keeps one per connection; the
connection's owner (an :class:`~nodeapi.peers.remote.IRemoteOwner`, the
P2P node) is told its chain claim, its activation, its failures and its
loss as a :class:`~nodeapi.peers.remote.RemoteNode`'s owner is.
"""

import collections
import re

from zope.interface.verify import verifyObject

from nodeapi.peers.p2p_connection import P2PFactory
from nodeapi.peers.p2p_peerdb import endpoint_text
from nodeapi.peers.remote import IRemoteOwner, RemoteHead
from nodeapi.protocol.errors import InvalidTime
from nodeapi.protocol.times import format_time, parse_time

#: messages a peer may send per second (graphene's transaction rate cap,
#: ``GRAPHENE_NET_MAX_TRX_PER_SECOND``, applied to every message)
MAX_MESSAGES_PER_SECOND = 1000
#: item hashes remembered per peer (what it has), so nothing is echoed back
KNOWN_ITEMS_SIZE = 2000
#: a block id: 40 lowercase hex digits
_BLOCK_ID = re.compile(r"[0-9a-f]{40}")


class BoundedSet:
    """A set that forgets its oldest members past ``size``."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: collections.OrderedDict = collections.OrderedDict()

    def add(self, item) -> None:
        """Add ``item`` (the newest); the oldest go past ``size``."""
        self._items[item] = None
        self._items.move_to_end(item)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def __contains__(self, item) -> bool:
        return item in self._items


class P2PPeer:
    """The state of one connection (graphene ``peer_connection``).

    :ivar address: ``"host:port"`` of the remote end.
    :ivar direction: ``"outbound"`` or ``"inbound"``.
    :ivar state: ``"handshaking"``, ``"active"``, ``"closing"``.
    :ivar their_state: what we answered their hello: None,
        ``"accepted"``, ``"rejected"``.
    :ivar our_state: what they answered ours: None, ``"accepted"``,
        ``"rejected"``.
    :ivar hello: their hello message (dict) once received.
    :ivar head_block_num: the highest block number the peer showed.

    :param owner: the :class:`~nodeapi.peers.remote.IRemoteOwner` of the
        connection (checked with ``zope.interface.verify.verifyObject``;
        ``zope.interface.exceptions.Invalid`` when it does not provide it).
    """

    def __init__(self, conn, address: str, direction: str, now: float, owner) -> None:
        verifyObject(IRemoteOwner, owner)
        self.owner = owner
        self.conn = conn
        self.address = address
        self.direction = direction
        self.state = "handshaking"
        self.their_state = None
        self.our_state = None
        self.hello = None
        self.node_id = None
        self.connected_at = now
        self.last_message = now
        self.keepalive_sent = False
        self.expecting_address = False
        self.known = BoundedSet(KNOWN_ITEMS_SIZE)       # item hashes the peer has
        self.requested: dict = {}                         # normal fetches: hash -> time
        self.synopsis = None                              # last synopsis sent, or None
        self.synopsis_time = 0.0
        self.ids_to_fetch: collections.deque = collections.deque()
        self.sync_requested: dict = {}                    # block id -> time
        self.remaining = 0
        self.we_need_sync = False
        self.sync_reference = None                        # last id the peer listed
        self.idle_rounds = 0                              # id lists in a row with nothing new
        self.on_fork = False
        self.unswitchable = False                         # its sync led to an unreachable fork
        self.head_block_num = 0
        self._rate_second = 0
        self._rate_count = 0
        self.bad_reason = None

    @property
    def reconnection(self):
        """The :class:`~nodeapi.peers.reconnect.Reconnection` of the seed
        this connection was dialled for
        (:meth:`~nodeapi.peers.p2p_node.P2PNode.add_seed`), or None (an
        inbound peer, one dialled once)."""
        factory = getattr(self.conn, "factory", None)
        return factory.reconnection if isinstance(factory, P2PFactory) else None

    def head(self) -> RemoteHead:
        """What the peer's hello told of its chain, as a
        :class:`~nodeapi.peers.remote.RemoteHead`: ``chain_id``, the head
        block number (:attr:`head_block_num`), the ``user_data``'s
        ``last_known_block_hash`` (None unless a block id) and
        ``last_known_block_time`` (seconds since the epoch, None unless a
        time).  A hello tells no last irreversible block: None."""
        hello = self.hello or {}
        user_data = hello.get("user_data") or {}
        block_id = user_data.get("last_known_block_hash")
        try:
            time = parse_time(user_data.get("last_known_block_time"))
        except (InvalidTime, TypeError, ValueError):
            time = None
        return RemoteHead(chain_id=hello.get("chain_id"), head_block_num=self.head_block_num,
                          last_irreversible_block_num=None,
                          head_block_id=block_id if isinstance(block_id, str)
                          and _BLOCK_ID.fullmatch(block_id) else None,
                          time=time)

    def fail(self, error: Exception) -> None:
        """The connection fails because of ``error``
        (:class:`~nodeapi.peers.errors.PeerDropped` or
        :class:`~nodeapi.peers.errors.PeerRejected`): the owner is asked
        (:meth:`~nodeapi.peers.remote.IRemoteOwner.failed`); unless it
        logged the failure and stops there (True), a seed's
        :attr:`reconnection` counts it and logs it with the reconnection
        delay."""
        if self.owner.failed(self, error):
            return
        reconnection = self.reconnection
        if reconnection is not None:
            reconnection.failed(str(error))

    def count_message(self, now: float) -> bool:
        """Count one message; False when the peer is over the rate."""
        second = int(now)
        if second != self._rate_second:
            self._rate_second, self._rate_count = second, 0
        self._rate_count += 1
        return self._rate_count <= MAX_MESSAGES_PER_SECOND

    def describe(self) -> dict:
        """network_node ``get_connected_peers`` entry: ``{"version",
        "host", "info"}`` as graphene's ``peer_status`` (``info`` with
        graphene's ``addr``, ``addrlocal``, ``inbound``, ``subver``,
        ``lastrecv``, ``bytessent``, ``bytesrecv``, ``conntime``,
        ``platform``, ``current_head_block_number``, ``firewall_status``,
        and this node's ``direction``, ``state``, ``user_agent``,
        ``core_protocol_version``, ``node_id``, ``syncing``, ``on_fork``)."""
        hello = self.hello or {}
        user_data = hello.get("user_data") or {}
        local = self.conn.transport.getHost() if self.conn.transport is not None else None
        info = {
            "addr": self.address,
            "addrlocal": endpoint_text(local) if local is not None else None,
            "inbound": self.direction == "inbound",
            "subver": hello.get("user_agent"),
            "lastrecv": int(self.last_message),
            "firewall_status": "unknown",
            "direction": self.direction,
            "state": self.state,
            "conntime": format_time(int(self.connected_at)),
            "bytessent": self.conn.bytes_sent,
            "bytesrecv": self.conn.bytes_received,
            "user_agent": hello.get("user_agent"),
            "core_protocol_version": hello.get("core_protocol_version"),
            "node_id": self.node_id,
            "platform": user_data.get("platform"),
            "current_head_block_number": self.head_block_num,
            "syncing": self.we_need_sync,
            "on_fork": self.on_fork,
        }
        return {"version": 0, "host": self.address, "info": info}
