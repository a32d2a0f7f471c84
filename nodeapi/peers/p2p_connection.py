"""One connection of graphene's peer protocol: the key exchange, the
encrypted stream and the message framing of bitshares-core
``libraries/net/stcp_socket.cpp`` and ``message_oriented_connection.cpp``,
as a Twisted protocol.

:class:`P2PConnection` sends its 33-byte key at connect, reads the peer's,
then encrypts and decrypts with :class:`~nodeapi.peers.stcp.StreamCipher`.
Incoming bytes are decrypted in whole 16-byte blocks and cut into messages
(header, data, padding); a header announcing more than
:data:`~nodeapi.peers.core_messages.MAX_MESSAGE_SIZE` drops the connection
before its data is read, so the receive buffer never holds more than one
message.  Outgoing messages go through a bounded queue behind the
transport's producer flow control: the connection registers itself as the
transport's push producer, stops writing while the transport is paused,
and drops a peer that lets more than ``max_queued_bytes`` pile up (a peer
that stops reading).  Messages may be queued as callables that build their
bytes only when they are written (blocks served in a batch).
"""

import struct

from twisted.internet import protocol
from twisted.logger import Logger
from zope.interface import implementer
from twisted.internet.interfaces import IPushProducer

from nodeapi.peers import stcp
from nodeapi.peers.core_messages import HEADER_SIZE, MAX_MESSAGE_SIZE, frame

log = Logger()

#: graphene ``GRAPHENE_NET_MAXIMUM_QUEUED_MESSAGES_IN_BYTES``: the most a
#: peer may leave unread in our outgoing queue (bytes)
MAX_QUEUED_BYTES = 1024 * 1024
#: messages (queued callables included) a connection may have waiting
MAX_QUEUED_MESSAGES = 10_000


@implementer(IPushProducer)
class P2PConnection(protocol.Protocol):
    """The stream of one peer (see the module docstring).

    :param node: what gets the events: ``connection_secured(conn)`` after
        the key exchange, ``message_received(conn, msg_type, data)``,
        ``connection_closed(conn, reason)``.
    :param outbound: True when this node dialled.
    :param max_message_size: the largest message data accepted (bytes).
    :param max_queued_bytes: the outgoing queue's bound (bytes).

    :ivar shared_secret: the 64-byte secret once keys were exchanged.
    :ivar bytes_received, bytes_sent: counters of raw stream bytes.
    """

    def __init__(self, node, outbound: bool, *, max_message_size: int = MAX_MESSAGE_SIZE,
                 max_queued_bytes: int = MAX_QUEUED_BYTES) -> None:
        self.node = node
        self.outbound = outbound
        self.max_message_size = max_message_size
        self.max_queued_bytes = max_queued_bytes
        self.shared_secret = None
        self.cipher = None
        self._key = stcp.new_private_key()
        self._raw = bytearray()      # encrypted bytes not yet decrypted
        self._plain = bytearray()    # decrypted bytes not yet a whole message
        self._queue: list = []       # bytes or callables returning (type, data)
        self._queued_bytes = 0
        self._paused = False
        self.closed = False
        self.close_reason = None
        self.bytes_received = 0
        self.bytes_sent = 0

    # -- Twisted ---------------------------------------------------------------

    def connectionMade(self) -> None:
        """Register as the transport's producer and send our key."""
        self.transport.registerProducer(self, True)
        self.transport.write(self._key.public_key.format(compressed=True))
        self.node.connection_made(self)

    def dataReceived(self, data: bytes) -> None:
        """The peer's key first, then whole 16-byte blocks decrypted and
        cut into messages."""
        if self.closed:
            return
        self.bytes_received += len(data)
        self._raw += data
        if self.cipher is None:
            if len(self._raw) < stcp.PUBLIC_KEY_SIZE:
                return
            remote = bytes(self._raw[:stcp.PUBLIC_KEY_SIZE])
            del self._raw[:stcp.PUBLIC_KEY_SIZE]
            try:
                self.shared_secret = stcp.shared_secret(self._key, remote)
            except ValueError as exc:
                self.drop(f"bad key in the key exchange: {exc}")
                return
            self.cipher = stcp.StreamCipher(self.shared_secret)
            self.node.connection_secured(self)
            if self.closed:
                return
        whole = len(self._raw) // stcp.BLOCK_SIZE * stcp.BLOCK_SIZE
        if whole:
            self._plain += self.cipher.decrypt(bytes(self._raw[:whole]))
            del self._raw[:whole]
        self._read_messages()

    def _read_messages(self) -> None:
        while not self.closed and len(self._plain) >= 16:
            size, msg_type = struct.unpack_from("<II", self._plain)
            if size > self.max_message_size:
                self.drop(f"message of {size} bytes announced, over the limit of "
                          f"{self.max_message_size}")
                return
            total = (HEADER_SIZE + size + 15) // 16 * 16
            if len(self._plain) < total:
                return
            data = bytes(self._plain[HEADER_SIZE:HEADER_SIZE + size])
            del self._plain[:total]
            self.node.message_received(self, msg_type, data)

    def connectionLost(self, reason) -> None:
        """Drop the queue and tell the node (with the reason we closed for,
        if we did)."""
        self.closed = True
        self._queue.clear()
        self._queued_bytes = 0
        self.node.connection_closed(self, self.close_reason or reason.getErrorMessage())

    # -- IPushProducer (the transport pauses us when its buffer is full) --------

    def pauseProducing(self) -> None:
        """The transport's buffer is full: hold our writes."""
        self._paused = True

    def resumeProducing(self) -> None:
        """The transport drained: write what is queued."""
        self._paused = False
        self._flush()

    def stopProducing(self) -> None:
        """The transport is closing: write nothing more."""
        self._paused = True

    # -- sending ---------------------------------------------------------------

    def send(self, msg_type: int, data: bytes) -> None:
        """Queue one message (its data bytes) and write what the transport
        takes; a queue over ``max_queued_bytes`` drops the peer."""
        if self.closed:
            return
        self._enqueue(frame(msg_type, data))

    def send_later(self, build) -> None:
        """Queue ``build()`` -> ``(msg_type, data)`` (or None to skip),
        called when the message's turn to be written comes."""
        if self.closed:
            return
        self._enqueue(build)

    def _enqueue(self, item) -> None:
        if len(self._queue) >= MAX_QUEUED_MESSAGES:
            self.drop("peer is not reading (outgoing queue full)")
            return
        self._queue.append(item)
        if isinstance(item, bytes):
            self._queued_bytes += len(item)
            if self._queued_bytes > self.max_queued_bytes and self._paused:
                self.drop(f"peer is not reading ({self._queued_bytes} bytes queued)")
                return
        self._flush()

    def _flush(self) -> None:
        while self._queue and not self._paused and not self.closed:
            item = self._queue.pop(0)
            if isinstance(item, bytes):
                self._queued_bytes -= len(item)
                payload = item
            else:
                built = item()
                if built is None:
                    continue
                payload = frame(*built)
            encrypted = self.cipher.encrypt(payload)
            self.bytes_sent += len(encrypted)
            self.transport.write(encrypted)

    def drop(self, reason: str) -> None:
        """Close the connection at once (nothing more is read or written)."""
        if self.closed:
            return
        self.closed = True
        self.close_reason = reason
        self._queue.clear()
        self._queued_bytes = 0
        if self.transport is not None:
            self.transport.abortConnection()

    def close(self, reason: str) -> None:
        """Close after what is queued has been written."""
        if self.closed:
            return
        self.close_reason = reason
        self._flush()
        self.closed = True
        self.transport.loseConnection()


class P2PFactory(protocol.Factory):
    """Builds :class:`P2PConnection` for ``node`` (inbound when used as a
    server factory, outbound as a client factory).

    :param reconnection: the
        :class:`~nodeapi.peers.reconnect.Reconnection` of the seed this
        factory dials (told of the connections' failures), or None.
    """

    def __init__(self, node, outbound: bool, reconnection=None, **settings) -> None:
        self.node = node
        self.outbound = outbound
        self.reconnection = reconnection
        self.settings = settings

    def buildProtocol(self, addr):
        """A :class:`P2PConnection` of this factory's direction."""
        conn = P2PConnection(self.node, self.outbound, **self.settings)
        conn.factory = self
        return conn
