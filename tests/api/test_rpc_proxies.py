"""The client's address behind trusted proxies (nodeapi.rpc.proxies): the
X-Forwarded-For walk, and the PROXY header read on a real loopback RPC site
(the connection limit per address counts the header's client, a header
arriving in pieces, v1 and v2, LOCAL health checks, malformed and
oversized headers, the header deadline on the site's clock).  The daemon
behind a real HAProxy: tests/daemon/test_trusted_proxies.py."""

import socket

import orjson
import pytest
import pytest_twisted
from twisted.internet import defer, protocol, reactor, task
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol

from nodeapi.rpc.access import ApiAccess
from nodeapi.rpc.guard import RpcLimits
from nodeapi.rpc.proxies import TrustedProxies, TrustedProxyError, parse_trusted_proxy

from kit.site import RunningSite, make_node

BODY = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "get_chain_id", "params": []})
POST = (b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(BODY), BODY))
CHAIN_ID = b"569cba9a00ee6e807a62389ea67de7c6954835390be62371709ec804c6bfe1f2"


# -- X-Forwarded-For ------------------------------------------------------------

def test_forwarded_for_is_walked_from_the_right_past_trusted_hops():
    proxies = TrustedProxies.from_entries(["10.0.0.0/8", "192.0.2.7", "::1"])
    walk = proxies.client_host
    # an untrusted peer is its client, whatever it claims
    assert walk("198.51.100.1", ["10.0.0.1"]) == "198.51.100.1"
    # a trusted peer without the header: the proxy itself
    assert walk("10.0.0.1") == "10.0.0.1"
    # the right-most address is the trusted peer's word; left of the first
    # untrusted one nothing is believed
    assert walk("10.0.0.1", ["6.6.6.6, 203.0.113.9"]) == "203.0.113.9"
    # past a chain of trusted proxies (repeated headers count in order)
    assert walk("10.0.0.1", ["6.6.6.6, 203.0.113.9", "192.0.2.7", "10.2.3.4"]) == "203.0.113.9"
    # an entry that is no address: the hop that wrote it
    assert walk("10.0.0.1", ["203.0.113.9, unknown"]) == "10.0.0.1"
    assert walk("10.0.0.1", ["203.0.113.9, garbage, 192.0.2.7"]) == "192.0.2.7"
    # IPv6, bracketed and IPv4-mapped forms
    assert walk("::1", ["[2001:db8::5]"]) == "2001:db8::5"
    assert walk("::ffff:10.0.0.1", ["203.0.113.9"]) == "203.0.113.9"
    # all hops trusted: the left-most
    assert walk("10.0.0.1", ["10.9.9.9"]) == "10.9.9.9"
    assert TrustedProxies().client_host("10.0.0.1", ["203.0.113.9"]) == "10.0.0.1"


@pytest.mark.parametrize("entry", ["10.0.0.1/8", "localhost", "10.0.0.300", "*", ""])
def test_entries_are_addresses_or_networks(entry):
    with pytest.raises(TrustedProxyError, match="not an IP address or network"):
        parse_trusted_proxy(entry)


def test_option_names_the_bad_entry():
    from twisted.python import usage

    from nodeapi.config import Options

    options = Options()
    with pytest.raises(usage.UsageError, match="--trusted-proxies.*'10.1.2.3/8'"):
        options.parseOptions(["--trusted-proxies", "127.0.0.1, 10.1.2.3/8"])
    options = Options()
    options.parseOptions(["--trusted-proxies", "127.0.0.1, 10.0.0.0/8"])
    assert options.trusted_proxies().trusts("10.4.5.6")
    options = Options()
    options.parseOptions([])
    assert not options.trusted_proxies()


# -- PROXY headers on a real site ------------------------------------------------

class Raw(protocol.Protocol):
    """A bare TCP client: what it receives and when it is lost."""

    def __init__(self):
        self.chunks = []
        self.lost = defer.Deferred()

    @property
    def received(self):
        return b"".join(self.chunks)

    def dataReceived(self, data):
        self.chunks.append(data)

    def connectionLost(self, reason):
        self.lost.callback(None)


def raw_connect(port):
    return connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port), Raw())


def turns(seconds=0.05):
    return task.deferLater(reactor, seconds, lambda: None)


def proxy_v2(source="10.1.2.3", command=0x21, length=None) -> bytes:
    addresses = (socket.inet_aton(source) + socket.inet_aton("127.0.0.1")
                 + (40000).to_bytes(2, "big") + (8090).to_bytes(2, "big"))
    size = len(addresses) if length is None else length
    return (b"\r\n\r\n\x00\r\nQUIT\n" + bytes([command, 0x11]) + size.to_bytes(2, "big")
            + addresses)


@pytest.fixture
def clock():
    return task.Clock()


@pytest.fixture
def proxied_site(chain, clock):
    running = RunningSite(make_node(chain), ApiAccess.default(), clock=clock,
                          limits=RpcLimits(max_connections_per_ip=1, handshake_timeout=5),
                          trusted_proxies=TrustedProxies.from_entries(["127.0.0.1"]))
    yield running
    running.stop_blocking()


@pytest_twisted.inlineCallbacks
def test_proxy_header_gives_the_connections_address(proxied_site):
    guard = proxied_site.site.guard
    first = yield raw_connect(proxied_site.port)
    first.transport.write(proxy_v2("10.1.2.3"))
    yield turns()
    assert guard.connection_count("10.1.2.3") == 1
    assert guard.connection_count("127.0.0.1") == 0
    # --max-connections-per-ip 1 holds for the header's address...
    second = yield raw_connect(proxied_site.port)
    second.transport.write(proxy_v2("10.1.2.3") + POST)
    yield second.lost
    assert second.received == b""
    # ...not for another client behind the same proxy, whose request
    # follows its header in the same packet
    third = yield raw_connect(proxied_site.port)
    third.transport.write(proxy_v2("10.1.2.4") + POST)
    yield turns()
    assert CHAIN_ID in third.received
    assert guard.connection_count("10.1.2.4") == 1
    for client in (first, third):
        client.transport.loseConnection()
        yield client.lost


@pytest_twisted.inlineCallbacks
def test_v1_header_in_pieces_and_the_proxys_own_connections(proxied_site):
    guard = proxied_site.site.guard
    v1 = yield raw_connect(proxied_site.port)
    for byte in b"PROXY TCP4 10.9.9.9 127.0.0.1 5000 8090\r\n":
        v1.transport.write(bytes([byte]))
        yield turns(0.001)
    yield turns()
    assert guard.connection_count("10.9.9.9") == 1
    # LOCAL (a health check) and no header at all: the proxy's own
    # connections, answered, and not held to the limit per address
    own = []
    for prefix in (proxy_v2(command=0x20, length=0)[:16], b"", b""):
        client = yield raw_connect(proxied_site.port)
        client.transport.write(prefix + POST)
        own.append(client)
    yield turns()
    assert all(CHAIN_ID in client.received for client in own)
    assert guard.connection_count("127.0.0.1") == 0
    for client in [v1] + own:
        client.transport.loseConnection()
        yield client.lost


@pytest.mark.parametrize("data", [
    proxy_v2(command=0x31),                      # version 3
    proxy_v2(length=0xFFFF),                     # longer than MAX_HEADER_BYTES
    b"PROXY TCP4 10.9.9.9 " + b"9" * 100,        # a v1 line without its end
    b"PROXY TCP4 not-an-address 127.0.0.1 1 2\r\n",
], ids=["version", "oversized", "endless-v1", "bad-v1"])
@pytest_twisted.inlineCallbacks
def test_malformed_header_closes_the_connection(proxied_site, data):
    client = yield raw_connect(proxied_site.port)
    client.transport.write(data + POST)
    yield client.lost
    assert client.received == b""
    assert proxied_site.site.guard.connection_count() == 0


@pytest_twisted.inlineCallbacks
def test_header_deadline(proxied_site, clock):
    client = yield raw_connect(proxied_site.port)
    client.transport.write(b"\r\n\r\n\x00")
    yield turns()
    clock.advance(4.9)
    yield turns()
    assert not client.lost.called
    clock.advance(0.2)
    yield client.lost


@pytest_twisted.inlineCallbacks
def test_untrusted_peer_header_is_not_read(chain):
    """With 127.0.0.1 untrusted, its PROXY header is no HTTP: 400, and the
    address it claims is charged nothing."""
    running = RunningSite(make_node(chain), ApiAccess.default(),
                          trusted_proxies=TrustedProxies.from_entries(["10.0.0.0/8"]))
    try:
        client = yield raw_connect(running.port)
        client.transport.write(proxy_v2("10.1.2.3") + POST)
        yield client.lost
        assert client.received.startswith(b"HTTP/1.1 400"), client.received
        assert running.site.guard.connection_count("10.1.2.3") == 0
    finally:
        yield running.stop()
