"""Node-wide protection of the RPC port against hostile clients.

Every connection accepted by the RPC site (:class:`nodeapi.rpc.site.RpcSite`)
is wrapped in a :class:`GuardedConnection`, which sits between the transport
(TCP, or the TLS layer of ``ssl:`` endpoints) and the HTTP channel / WebSocket
protocol for the whole life of the connection (Autobahn's upgrade keeps the
wrapper and replaces only what it wraps).  The :class:`ConnectionGuard`
shared by all of them enforces (docs/rpc-access.rst "Errors and limits", README
"Limits against hostile clients"):

* a total connection limit and a per-source-address limit: an accept over
  either is closed at once, before a byte is read;
* a node-wide budget of unsent reply bytes: what was written to a
  connection whose transport asked its producer to pause (its buffer is past
  the transport's own 64 KiB), over HTTP and WebSocket alike.  Past the
  budget, the connection holding the most is aborted, which frees its
  buffers at once;
* freeing a closed connection's buffers at once: the wrapper lets go of the
  transport when the connection is lost, so the socket's unsent bytes are
  released by reference counting even when the protocols above form
  reference cycles that only a full garbage collection would break.

Limit events are logged through a
:class:`~nodeapi.rpc.throttled_log.ThrottledLog`.
"""

import resource
from collections import Counter
from typing import Optional

import attr
from twisted.internet.interfaces import IPushProducer, ISSLTransport
from twisted.internet.protocol import Protocol
from twisted.logger import Logger
from twisted.protocols.policies import ProtocolWrapper
from zope.interface import directlyProvides, implementer, providedBy

from nodeapi.rpc.limits import ClientLimits
from nodeapi.rpc.throttled_log import ThrottledLog

#: File descriptors kept free of RPC connections (block log, peers, metrics,
#: search database, listening sockets).
FD_RESERVE = 64


@attr.s(frozen=True, auto_attribs=True)
class RpcLimits:
    """Node-wide limits of the RPC port against hostile clients (options of
    the same names, README "Limits against hostile clients"; 0 switches one off).

    :ivar max_connections: open connections in total.
    :ivar max_connections_per_ip: open connections from one source address.
    :ivar handshake_timeout: seconds for a request head or WebSocket
        handshake to arrive, from its first byte (see :class:`nodeapi.rpc.http.RpcChannel`).
    :ivar max_unsent_bytes: unsent reply bytes over all connections.
    :ivar max_calls_per_second_per_ip: calls per second from one source
        address, a token bucket (:mod:`nodeapi.rpc.limits`).
    :ivar max_call_burst_per_ip: that bucket's size in calls (0: two
        seconds' worth).
    :ivar max_subscriptions_per_ip: subscribed items held by the
        connections of one source address together.
    """

    max_connections: int = 4000
    max_connections_per_ip: int = 200
    handshake_timeout: float = 10.0
    max_unsent_bytes: int = 64 * 1024 * 1024
    max_calls_per_second_per_ip: float = 0.0
    max_call_burst_per_ip: int = 0
    max_subscriptions_per_ip: int = 0

    @property
    def per_ip(self) -> ClientLimits:
        """The limits per source address that :class:`nodeapi.rpc.limits.LimitBook`
        enforces (calls, subscriptions)."""
        return ClientLimits(calls_per_second=self.max_calls_per_second_per_ip,
                            burst=self.max_call_burst_per_ip,
                            subscriptions=self.max_subscriptions_per_ip)


#: (wrapper class, id of the transport's declaration) -> (that declaration,
#: the ``Provides`` declaration of such a wrapper); see
#: :func:`provide_as_transport`
_WRAPPER_PROVIDES: dict = {}
#: entries kept at most (declarations are per class, or shared by the
#: instances declaring the same interfaces: a handful in a node)
WRAPPER_PROVIDES_MAX = 64


def provide_as_transport(wrapper, transport) -> None:
    """Declare that ``wrapper`` (a protocol standing between ``transport``
    and the protocol above it) provides what ``transport`` provides, but
    ISSLTransport: the wrapper is not the TLS layer, and Autobahn asks an
    ISSLTransport for the TLS channel id, which only the TLS layer itself
    can give.

    Subtracting from a declaration builds a new one and computes its
    resolution order (about 0.25 ms, half of the CPU an HTTP request on a
    connection of its own took), so the wrapper's declaration is made once
    per wrapper class and transport declaration (a transport class's, or
    the one zope.interface shares among the instances declaring the same
    interfaces, ``Provides``: a trusted proxy's connection is a wrapper
    of a wrapper) and shared the same way; past
    :data:`WRAPPER_PROVIDES_MAX` of them, a new one is made each time."""
    spec = providedBy(transport)
    key = (type(wrapper), id(spec))
    entry = _WRAPPER_PROVIDES.get(key)
    if entry is not None and entry[0] is spec:
        wrapper.__provides__ = entry[1]
        return
    directlyProvides(wrapper, spec - ISSLTransport)
    if len(_WRAPPER_PROVIDES) < WRAPPER_PROVIDES_MAX:
        # the declaration is held with its id, so the id is not reused
        _WRAPPER_PROVIDES[key] = (spec, wrapper.__provides__)


def open_files_limit() -> Optional[int]:
    """The soft RLIMIT_NOFILE of this process, or None when unlimited."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def fitting_connections(wanted: int) -> int:
    """``wanted`` (0: no limit) lowered so that RPC connections leave
    :data:`FD_RESERVE` descriptors of RLIMIT_NOFILE free: past the
    descriptor limit accepts would fail for every client instead of being
    refused one by one."""
    files = open_files_limit()
    if files is None:
        return wanted
    room = max(files - FD_RESERVE, 1)
    return room if not wanted or wanted > room else wanted


class PausedWriteMeter:
    """Bytes written to a consumer while it has asked its producer to pause.

    A streaming transport pauses its producer when its buffer passes its own
    size (64 KiB for TCP) and resumes it once the buffer is empty, so the
    bytes written in between are, within one buffer size, what the consumer
    still holds unsent.  No transport internals are read.

    :ivar paused: the consumer asked to pause and has not resumed yet.
    :ivar unsent: bytes written since the pause (0 while not paused).
    """

    __slots__ = ("paused", "unsent")

    def __init__(self) -> None:
        self.paused = False
        self.unsent = 0

    def pause(self) -> None:
        """The transport's buffer is full (its producer was paused)."""
        self.paused = True

    def resume(self) -> int:
        """The buffer is empty again; returns the bytes no longer held."""
        freed, self.unsent, self.paused = self.unsent, 0, False
        return freed

    def clear(self) -> int:
        """The bytes held are dropped (the connection is aborted); returns
        how many."""
        freed, self.unsent = self.unsent, 0
        return freed

    def wrote(self, size: int) -> int:
        """``size`` bytes were written; returns how many of them count as
        unsent (``size`` while paused, else 0)."""
        if not self.paused:
            return 0
        self.unsent += size
        return size


@implementer(IPushProducer)
class _TransportPacer:
    """The producer a :class:`GuardedConnection` registers with its
    transport: pause/resume reach the meter and the protocol's own producer
    (the HTTP channel, the WebSocket protocol)."""

    __slots__ = ("_connection",)

    def __init__(self, connection: "GuardedConnection") -> None:
        self._connection = connection

    def pauseProducing(self) -> None:
        self._connection._paused()

    def resumeProducing(self) -> None:
        self._connection._resumed()

    def stopProducing(self) -> None:
        self._connection._stopped()


class _Closed:
    """The transport of a :class:`GuardedConnection` once its connection is
    lost: writes and flow control do nothing, the addresses stay known."""

    disconnecting = True
    connected = False

    def __init__(self, peer, host) -> None:
        self._peer, self._host = peer, host

    def getPeer(self):
        return self._peer

    def getHost(self):
        return self._host

    def write(self, data) -> None:
        """Dropped: the connection is gone."""

    def writeSequence(self, data) -> None:
        """Dropped: the connection is gone."""

    def _nothing(self, *args) -> None:
        """The connection is gone: nothing to do."""

    loseConnection = abortConnection = pauseProducing = resumeProducing = _nothing
    stopProducing = registerProducer = unregisterProducer = setTcpNoDelay = _nothing


class GuardedConnection(ProtocolWrapper):
    """One accepted connection: counts unsent bytes for the node-wide
    budget and lets go of its transport when the connection is lost.

    :param guard: the :class:`ConnectionGuard` (ProtocolWrapper's factory).
    :param wrapped: the HTTP channel built by the site.
    :param host: the peer's address text (per-address accounting).
    :param counted: whether the connection counts toward its address'
        limit (not a trusted proxy's own: :mod:`nodeapi.rpc.proxies`).
    :ivar meter: :class:`PausedWriteMeter` of this connection's transport.
    """

    def __init__(self, guard: "ConnectionGuard", wrapped, host: str,
                 counted: bool = True) -> None:
        super().__init__(guard, wrapped)
        self.host, self.counted = host, counted
        self.meter = PausedWriteMeter()
        self._producer = None  # (producer, streaming) registered by the protocol above

    @property
    def unsent(self) -> int:
        """Bytes written while the transport was paused (see the meter)."""
        return self.meter.unsent

    def makeConnection(self, transport) -> None:
        """As ProtocolWrapper's, but without claiming ISSLTransport
        (:func:`provide_as_transport`)."""
        provide_as_transport(self, transport)
        Protocol.makeConnection(self, transport)
        self.factory.registerProtocol(self)
        self.wrappedProtocol.makeConnection(self)

    def connectionMade(self) -> None:
        """``IProtocol.connectionMade``: keep the two addresses and register
        the pacer that meters the transport's buffer (a streaming producer)."""
        self._addresses = (self.transport.getPeer(), self.transport.getHost())
        self.transport.registerProducer(_TransportPacer(self), True)

    # -- addresses: read once at connect (a TCP transport makes a new
    # address object, and asks the kernel for its own, at every call; each
    # HTTP request asks for both)
    def getPeer(self):
        """``ITransport.getPeer``: the peer's address as the transport gave
        it at connect (also once the connection is lost)."""
        return self._addresses[0]

    def getHost(self):
        """``ITransport.getHost``: this end's address as the transport gave
        it at connect (also once the connection is lost)."""
        return self._addresses[1]

    # -- writes ------------------------------------------------------------
    def write(self, data: bytes) -> None:
        """``ITransport.write``: to the transport, the bytes counted against
        the connection's and the site's unsent-byte bounds."""
        self.transport.write(data)
        counted = self.meter.wrote(len(data))
        if counted:
            self.factory.charged(self, counted)

    def writeSequence(self, data) -> None:
        """``ITransport.writeSequence``: one :meth:`write` of the joined bytes."""
        self.write(b"".join(data))

    # -- producers of the protocol above ----------------------------------
    def registerProducer(self, producer, streaming: bool) -> None:
        """The protocol above registers its producer here (the transport's
        slot holds this wrapper's pacer); a pull producer is asked for data
        at once and after each drain, as a transport would."""
        if self._producer is not None:
            raise RuntimeError(f"Cannot register producer {producer}, because producer "
                               f"{self._producer[0]} was never unregistered.")
        self._producer = (producer, streaming)
        if not streaming:
            producer.resumeProducing()
        elif self.meter.paused:  # registered while the transport is full
            producer.pauseProducing()

    def unregisterProducer(self) -> None:
        """``IConsumer.unregisterProducer``: the protocol above's producer is gone."""
        self._producer = None

    def _paused(self) -> None:
        self.meter.pause()
        if self._producer is not None and self._producer[1]:
            self._producer[0].pauseProducing()

    def _resumed(self) -> None:
        self.factory.released(self, self.meter.resume())
        if self._producer is not None:
            self._producer[0].resumeProducing()

    def _stopped(self) -> None:
        if self._producer is not None:
            producer, self._producer = self._producer[0], None
            producer.stopProducing()

    # -- reading (the protocol above pauses its own reads) -----------------
    def pauseProducing(self) -> None:
        """``IPushProducer.pauseProducing``: stop reading the transport."""
        self.transport.pauseProducing()

    def resumeProducing(self) -> None:
        """``IPushProducer.resumeProducing``: read the transport again."""
        self.transport.resumeProducing()

    def stopProducing(self) -> None:
        """``IPushProducer.stopProducing``: the transport stops (closes)."""
        self.transport.stopProducing()

    def abortConnection(self) -> None:
        """``ITCPTransport.abortConnection``: drop the connection, unsent bytes
        discarded."""
        self.transport.abortConnection()

    def connectionLost(self, reason) -> None:
        """``IProtocol.connectionLost``: the transport is replaced by a
        closed one keeping the addresses (late writes are dropped), the
        producer forgotten, the protocol above told."""
        self.transport = _Closed(*self._addresses)
        self._producer = None
        super().connectionLost(reason)


class _Refused(Protocol):
    """An accept over a connection limit: aborted before anything is read."""

    def connectionMade(self) -> None:
        self.transport.abortConnection()


class ConnectionGuard:
    """Connection limits and the unsent-bytes budget of one RPC site.

    :param clock: ``IReactorTime`` (log throttling).
    :param limits: :class:`RpcLimits` (``max_connections``,
        ``max_connections_per_ip``, ``max_unsent_bytes``; 0: no limit).
    :param metrics: :class:`nodeapi.metrics.Metrics` counting the refused
        connections (``limit_refused``), or None.
    :ivar connections: the open :class:`GuardedConnection` objects.
    :ivar unsent: their unsent bytes in total.
    :ivar events: :class:`ThrottledLog` shared with the site (deadlines).
    """

    log = Logger()

    def __init__(self, clock, limits: RpcLimits = RpcLimits(), metrics=None) -> None:
        self.metrics = metrics
        self.max_connections = fitting_connections(limits.max_connections)
        if self.max_connections != limits.max_connections:
            self.log.info("RPC --max-connections {wanted} lowered to {limit}: the process may "
                          "open {files} files (RLIMIT_NOFILE) and keeps {reserve} for the rest "
                          "of the node", wanted=limits.max_connections,
                          limit=self.max_connections, files=open_files_limit(),
                          reserve=FD_RESERVE)
        self.max_connections_per_ip = limits.max_connections_per_ip
        self.max_unsent_bytes = limits.max_unsent_bytes
        self.connections: set = set()
        self.per_host: Counter = Counter()
        self.unsent = 0
        self.events = ThrottledLog(self.log, clock)

    def protocol_for(self, addr, build, per_address: bool = True) -> Protocol:
        """The protocol for a connection accepted from ``addr``:
        ``GuardedConnection(build())`` within the limits, else one that
        closes the connection at once (and the refusal is logged).
        ``per_address`` False: the connection is a trusted proxy's own
        (its clients' addresses come with each request), not held to
        ``--max-connections-per-ip``."""
        host = str(getattr(addr, "host", addr))
        if self.max_connections and len(self.connections) >= self.max_connections:
            if self.metrics is not None:
                self.metrics.limit_refused("connections", "node")
            self.events.event("max_connections",
                              "RPC connection from {peer} refused: {limit} connections open "
                              "(--max-connections)", peer=host, limit=self.max_connections)
            return _Refused()
        if (per_address and self.max_connections_per_ip
                and self.per_host[host] >= self.max_connections_per_ip):
            if self.metrics is not None:
                self.metrics.limit_refused("connections", "source")
            self.events.event("max_connections_per_ip",
                              "RPC connection from {peer} refused: {limit} connections open "
                              "from that address (--max-connections-per-ip)", peer=host,
                              limit=self.max_connections_per_ip)
            return _Refused()
        return GuardedConnection(self, build(), host, per_address)

    # ProtocolWrapper's factory interface
    def registerProtocol(self, connection: GuardedConnection) -> None:
        """A connection starts: counted per address when it counts."""
        self.connections.add(connection)
        if connection.counted:
            self.per_host[connection.host] += 1

    def unregisterProtocol(self, connection: GuardedConnection) -> None:
        """A connection ended: uncounted, and its unsent bytes given back
        to the site's bound."""
        self.connections.discard(connection)
        if connection.counted:
            self.per_host[connection.host] -= 1
            if self.per_host[connection.host] <= 0:
                del self.per_host[connection.host]
        self.released(connection, connection.meter.resume())

    # the budget
    def charged(self, connection: GuardedConnection, size: int) -> None:
        """``size`` more unsent bytes on ``connection``; past the budget the
        connection holding the most is aborted."""
        self.unsent += size
        if not self.max_unsent_bytes or self.unsent <= self.max_unsent_bytes:
            return
        largest = max(self.connections, key=lambda c: c.meter.unsent, default=connection)
        self.events.event("max_unsent_bytes",
                          "RPC connection from {peer} aborted: {unsent} unsent reply bytes "
                          "on it, {total} on all connections (--max-unsent-bytes {limit})",
                          peer=largest.host, unsent=largest.meter.unsent, total=self.unsent,
                          limit=self.max_unsent_bytes)
        # its bytes stop counting now: the abort drops them on the next turn
        self.released(largest, largest.meter.clear())
        largest.abortConnection()

    def released(self, connection: GuardedConnection, size: int) -> None:
        """``size`` unsent bytes of ``connection`` were sent or dropped."""
        self.unsent -= size

    def connection_count(self, host: Optional[str] = None) -> int:
        """Open connections, in total or from ``host``."""
        return len(self.connections) if host is None else self.per_host.get(host, 0)
