"""The client address behind trusted proxies (``--trusted-proxies``).

Everything keyed by a client's address (the connection limit per address,
the call rate and subscriptions per address, the ``*`` entry's limits per
address, the failed-login lines fail2ban reads) uses one address: the
connection's peer, unless that peer is one of the trusted proxies, which
can tell the client's address in two ways:

* a PROXY protocol header (version 1 or 2, HAProxy's ``send-proxy`` /
  ``send-proxy-v2``) in front of the connection's first request: the
  connection is then the client's from its first byte (connection limit
  per address included).  Only a connection from a trusted proxy is read
  for one; from any other peer those bytes are not HTTP and the
  connection is answered 400 like any garbage.  A trusted proxy may also
  connect without one (its health checks, or X-Forwarded-For mode): the
  first bytes tell, since no HTTP request starts with a PROXY signature.
  The header parsers are Twisted's (``twisted.protocols.haproxy``, which
  ``proxyEndpoint`` uses for a listening port where every connection has
  one); here the header is optional and read from trusted peers only;
* an ``X-Forwarded-For`` header (HAProxy's ``option forwardfor``) on each
  HTTP request and on the WebSocket upgrade: its addresses are walked from
  the right while the hop is trusted; the first untrusted one is the
  client (what a client wrote to the left of it is never believed).  The
  connection limit per address cannot be kept for these clients (one
  proxy connection may carry several clients' requests): connections from
  a trusted proxy are not counted per address; the proxy's own limits hold.

A peer address that is not trusted is the client, whatever it sends.
"""

import ipaddress
from typing import Iterable, Optional

import attr
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.protocol import Protocol
from twisted.logger import Logger
from twisted.protocols.haproxy._exceptions import InvalidProxyHeader
from twisted.protocols.haproxy._v1parser import V1Parser
from twisted.protocols.haproxy._v2parser import V2Parser

from nodeapi.rpc.guard import provide_as_transport

#: The longest PROXY header read: a version 1 line is at most 107 bytes, a
#: version 2 header 16 bytes plus its addresses (216 for unix sockets) and
#: its TLVs; a longer announced header closes the connection.
MAX_HEADER_BYTES = 4096


class TrustedProxyError(ValueError):
    """A ``--trusted-proxies`` entry that is no address or network."""


def _ip(text: str):
    """The ``ipaddress`` object of ``text`` (an address, ``[v6]`` allowed),
    or None."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = getattr(ip, "ipv4_mapped", None)
    return mapped or ip


def parse_trusted_proxy(entry: str):
    """One ``--trusted-proxies`` entry (an IPv4 or IPv6 address or network
    in CIDR form: ``10.0.0.5``, ``10.0.0.0/8``, ``::1``) -> ``ip_network``.

    :raises TrustedProxyError: anything else, or a network with host bits."""
    try:
        return ipaddress.ip_network(entry.strip(), strict=True)
    except ValueError as exc:
        raise TrustedProxyError(f"{entry!r} is not an IP address or "
                                f"network (CIDR, e.g. 10.0.0.0/8): {exc}") from None


@attr.s(frozen=True, auto_attribs=True)
class TrustedProxies:
    """The proxies whose word on a client's address is taken (module text).

    :ivar networks: ``ipaddress`` networks; empty: no proxy is trusted and
        every connection's peer is its client.
    """

    networks: tuple = ()

    @classmethod
    def from_entries(cls, entries: Iterable[str]) -> "TrustedProxies":
        """From the option's entries (:func:`parse_trusted_proxy` each)."""
        return cls(tuple(parse_trusted_proxy(e) for e in entries))

    def __bool__(self) -> bool:
        return bool(self.networks)

    def trusts(self, host: Optional[str]) -> bool:
        """Whether the address text ``host`` is a trusted proxy's."""
        if not self.networks or not host:
            return False
        ip = _ip(host)
        return ip is not None and any(ip in net for net in self.networks)

    def client_host(self, peer_host: str, forwarded_for: Iterable[str] = ()) -> str:
        """The client's address text for a request from ``peer_host``
        carrying the ``X-Forwarded-For`` header values ``forwarded_for``
        (each a comma list, in the order received): walking from the right,
        each hop that is trusted vouches for the address to its left; the
        first untrusted address (or one that is no address: then the hop
        that wrote it) is the client."""
        client = peer_host
        if not self.trusts(peer_host):
            return client
        hops = [h for value in forwarded_for for h in value.split(",") if h.strip()]
        for hop in reversed(hops):
            ip = _ip(hop)
            if ip is None:
                break
            client = str(ip)
            if not self.trusts(client):
                break
        return client

    def client_address(self, peer, forwarded_for: Iterable[str] = ()):
        """:meth:`client_host` as a Twisted address: ``peer`` itself when it
        is the client, else an ``IPv4Address``/``IPv6Address`` (port 0: a
        forwarded client's port is not told)."""
        host = getattr(peer, "host", None)
        if host is None:
            return peer
        client = self.client_host(host, forwarded_for)
        if client == host:
            return peer
        kind = IPv6Address if ":" in client else IPv4Address
        return kind("TCP", client, 0)


def _prefix_of(buffer: bytes, signature: bytes) -> bool:
    """``buffer`` starts with ``signature`` or is a start of it."""
    size = min(len(buffer), len(signature))
    return buffer[:size] == signature[:size]


class ProxyHeaderReader(Protocol):
    """A connection from a trusted proxy before its first bytes told
    whether a PROXY header comes (module text).  Once told, the connection's
    protocol is built for the client's address (``build(address)``, the
    site's guarded channel) and this object stays between it and the
    transport, answering ``getPeer`` with that address.

    :param build: ``address -> protocol`` for the connection.
    :param clock: ``IReactorTime`` of the header deadline.
    :param timeout: seconds for the header (or the first byte of a
        request) to arrive; 0: none.
    """

    log = Logger()

    def __init__(self, build, clock, timeout: float) -> None:
        self._build, self._clock, self._timeout = build, clock, timeout
        self._buffer = b""
        self._deadline = None
        self._peer = None
        self.wrappedProtocol = None

    # -- protocol to the transport -----------------------------------------
    def makeConnection(self, transport) -> None:
        """``IProtocol.makeConnection``: this object provides the transport's
        interfaces but ``ISSLTransport`` (it is not the TLS layer:
        :func:`~nodeapi.rpc.guard.provide_as_transport`)."""
        provide_as_transport(self, transport)
        super().makeConnection(transport)

    def connectionMade(self) -> None:
        """``IProtocol.connectionMade``: note the proxy's address and start the
        header deadline (``timeout`` seconds; none for 0)."""
        self._peer = self.transport.getPeer()
        if self._timeout:
            self._deadline = self._clock.callLater(self._timeout, self._expired)

    def _expired(self) -> None:
        self._deadline = None
        self.log.info("RPC connection from proxy {proxy} aborted: no request or PROXY header "
                      "within {timeout} s (--handshake-timeout)",
                      proxy=getattr(self._peer, "host", "?"), timeout=self._timeout)
        self.transport.abortConnection()

    def dataReceived(self, data: bytes) -> None:
        """``IProtocol.dataReceived``: until the first bytes tell whether a
        PROXY header comes, buffer and read them (a header of at most
        :data:`MAX_HEADER_BYTES`); an invalid header aborts the connection.
        Once told, the deadline is cancelled and the protocol is built for the
        client's address (the proxy's own without a header) and given the
        bytes after any header; from then on bytes go to that protocol."""
        if self.wrappedProtocol is not None:
            self.wrappedProtocol.dataReceived(data)
            return
        buffer = self._buffer = self._buffer + data
        try:
            told = self._read_header(buffer)
        except InvalidProxyHeader:
            self.log.info("RPC connection from proxy {proxy} closed: invalid PROXY header",
                          proxy=getattr(self._peer, "host", "?"))
            self._buffer = b""
            self.transport.abortConnection()
            return
        if told is None:
            return
        address, rest = told
        self._buffer = b""
        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()
        self._deadline = None
        self._peer = address
        self.wrappedProtocol = self._build(address)
        self.wrappedProtocol.makeConnection(self)
        if rest and self.connected:
            self.wrappedProtocol.dataReceived(rest)

    def _read_header(self, buffer: bytes):
        """``(client address, bytes after the header)`` once the buffer
        tells, None while it may still be a header's start.

        :raises InvalidProxyHeader: a malformed or oversized header."""
        if _prefix_of(buffer, V2Parser.PREFIX):
            if len(buffer) < 16:
                return None
            size = int.from_bytes(buffer[14:16], "big") + 16
            if size > MAX_HEADER_BYTES:
                raise InvalidProxyHeader()
            if len(buffer) < size:
                return None
            info = V2Parser.parse(buffer[:size])
            return self._source(info), buffer[size:]
        if _prefix_of(buffer, V1Parser.PROXYSTR + b" "):
            if len(buffer) < len(V1Parser.PROXYSTR) + 1:
                return None
            line, newline, rest = buffer.partition(V1Parser.NEWLINE)
            if not newline:
                if len(buffer) > 107:
                    raise InvalidProxyHeader()
                return None
            return self._source(V1Parser.parse(line)), rest
        return self._peer, buffer  # no header: the proxy's own request

    def _source(self, info):
        """The client's address of a parsed header: its source for a
        proxied TCP connection, else (``LOCAL``, ``UNKNOWN``: the proxy's
        own health check) the proxy's."""
        source = info.source
        if not isinstance(source, (IPv4Address, IPv6Address)):
            return self._peer
        ip = _ip(source.host)
        if ip is None:  # Twisted's v1 parser takes any word for an address
            raise InvalidProxyHeader()
        kind = IPv6Address if ip.version == 6 else IPv4Address
        return kind("TCP", str(ip), source.port)

    def connectionLost(self, reason) -> None:
        """``IProtocol.connectionLost``: cancel the deadline and tell the
        protocol above, if it was built."""
        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()
        self._deadline = None
        if self.wrappedProtocol is not None:
            self.wrappedProtocol.connectionLost(reason)

    # -- transport to the protocol above -------------------------------------
    def getPeer(self):
        """The client's address (the PROXY header's source)."""
        return self._peer

    def getHost(self):
        """``ITransport.getHost``: the transport's (this node's) address."""
        return self.transport.getHost()

    def write(self, data: bytes) -> None:
        """``ITransport.write``: to the transport."""
        self.transport.write(data)

    def writeSequence(self, data) -> None:
        """``ITransport.writeSequence``: to the transport."""
        self.transport.writeSequence(data)

    def loseConnection(self) -> None:
        """``ITransport.loseConnection``: the transport's."""
        self.transport.loseConnection()

    def __getattr__(self, name):
        # the rest of the transport's interface (producers, abortConnection,
        # TCP options) is the transport's own
        if name.startswith("__") or name in ("transport", "wrappedProtocol"):
            raise AttributeError(name)
        return getattr(self.transport, name)
