"""Replies framed by the WebSocket connection itself
(:meth:`nodeapi.rpc.websocket.RpcWebSocketProtocol._send`): the bytes on the
wire are those Autobahn's ``sendMessage`` writes for the same text (RFC 6455
section 5.2: one final unmasked text frame, 7-, 16- or 64-bit length), and a
client that negotiated permessage-deflate (RFC 7692) still gets compressed
replies from Autobahn."""

import re
import zlib

import pytest
import pytest_twisted
from autobahn.websocket.compress import PerMessageDeflateOfferAccept
from autobahn.websocket.protocol import PreparedMessage
from twisted.internet.address import IPv4Address
from twisted.internet.error import ConnectionDone
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.python.failure import Failure

from nodeapi.api.registry import default_registry
from nodeapi.rpc.access import ApiAccess
from nodeapi.rpc.websocket import RpcWebSocketFactory

from kit.rpc import ws_connect
from kit.site import RunningSite, make_node

UPGRADE = (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
           b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
           b"Sec-WebSocket-Version: 13\r\n")
DEFLATE = b"Sec-WebSocket-Extensions: permessage-deflate\r\n"


class _UpgradeChannel:
    """Stands for the HTTP channel that carried the upgrade: the producer a
    connection's transport has when the WebSocket protocol takes over."""

    def pauseProducing(self):
        pass

    def resumeProducing(self):
        pass

    def stopProducing(self):
        pass


def _accept_deflate(offers):
    for offer in offers:
        return PerMessageDeflateOfferAccept(offer)
    return None


def _open(chain, *, deflate=False, **options):
    """A connection of a real factory over a StringTransport, past the
    opening handshake (its reply cleared from the transport)."""
    factory = RpcWebSocketFactory(make_node(chain), ApiAccess.default(), default_registry(),
                                  auto_ping_interval=0, reactor=Clock(), **options)
    if deflate:
        factory.setProtocolOptions(perMessageCompressionAccept=_accept_deflate)
    protocol = factory.buildProtocol(IPv4Address("TCP", "127.0.0.1", 5000))
    transport = StringTransport(peerAddress=IPv4Address("TCP", "127.0.0.1", 5000))
    transport.registerProducer(_UpgradeChannel(), True)
    protocol.makeConnection(transport)
    protocol.dataReceived(UPGRADE + (DEFLATE if deflate else b"") + b"\r\n")
    assert transport.value().startswith(b"HTTP/1.1 101 ")
    assert protocol.state == protocol.STATE_OPEN
    transport.clear()
    return protocol, transport


def _close(protocol):
    protocol.dropConnection(abort=True)
    protocol.connectionLost(Failure(ConnectionDone()))


def _reply(size: int) -> bytes:
    head = b'{"id":1,"jsonrpc":"2.0","result":"'
    return head + b"x" * (size - len(head) - 2) + b'"}'


@pytest.mark.parametrize("size", [40, 125, 126, 65535, 65536, 70000, 300000])
def test_reply_bytes_are_autobahns(chain, size):
    """7-bit, 16-bit (126..65535) and 64-bit (over 65535) lengths: the
    frame written equals ``sendMessage``'s and ``PreparedMessage``'s, and
    Autobahn's traffic counters move as ``sendMessage`` moves them."""
    data = _reply(size)
    protocol, transport = _open(chain)
    try:
        assert protocol._raw_limit >= size  # framed by the connection
        before = protocol.trafficStats.__json__()
        protocol._send(data)
        ours = transport.value()
        middle = protocol.trafficStats.__json__()
        transport.clear()
        protocol.sendMessage(data, isBinary=False)
        assert ours == transport.value()
        assert ours == PreparedMessage(data, False, False, True).payloadHybi
        after = protocol.trafficStats.__json__()
        for key in ("outgoingWebSocketMessages", "outgoingWebSocketFrames",
                    "outgoingOctetsAppLevel", "outgoingOctetsWebSocketLevel",
                    "outgoingOctetsWireLevel"):
            assert middle[key] - before[key] == after[key] - middle[key] > 0, key
        assert protocol.meter.unsent == 0
    finally:
        _close(protocol)


def test_a_deflate_client_gets_compressed_replies(chain):
    """With permessage-deflate negotiated the reply goes through Autobahn:
    RSV1 is set and the payload inflates (RFC 7692 section 7.2.2) back to
    the reply."""
    data = _reply(5000)
    protocol, transport = _open(chain, deflate=True)
    try:
        assert protocol._perMessageCompress is not None and protocol._raw_limit == 0
        protocol._send(data)
        frame = transport.value()
        assert frame[0] == 0xC1  # FIN, RSV1 (compressed), text
        length = frame[1] & 0x7F
        body = frame[2:] if length < 126 else frame[4:]
        assert len(body) < len(data)
        assert zlib.decompressobj(-15).decompress(body + b"\x00\x00\xff\xff") == data
    finally:
        _close(protocol)


def test_a_reply_over_the_message_limit_is_left_to_autobahn(chain):
    """A reply larger than ``max_message_size`` is refused by Autobahn as
    before (nothing is written)."""
    protocol, transport = _open(chain, max_message_size=1000)
    try:
        with pytest.raises(Exception, match="exceeding payload limit"):
            protocol._send(_reply(2000))
        assert transport.value() == b""
        protocol._send(_reply(900))
        assert transport.value() == PreparedMessage(_reply(900), False, False, True).payloadHybi
    finally:
        _close(protocol)


def test_no_reply_after_the_close_handshake_began(chain):
    """Once a close frame was sent the connection is no longer open: a late
    reply is not framed here (Autobahn refuses it, as before)."""
    protocol, transport = _open(chain)
    try:
        protocol.sendClose(1000)
        transport.clear()
        with pytest.raises(Exception):
            protocol._send(_reply(100))
        assert transport.value() == b""
    finally:
        _close(protocol)


@pytest_twisted.inlineCallbacks
def test_a_reply_over_the_message_limit_is_an_error_reply(chain):
    """Over a real socket: a result larger than ``--max-message-size`` is
    answered with a JSON-RPC error naming the limit (not lost), and the
    connection goes on answering."""
    running = RunningSite(make_node(chain), ApiAccess.default(), max_message_size=2000)
    ws = yield ws_connect(running.port)
    try:
        reply = yield ws.request(0, "get_objects", [["2.0.0"]])  # the fee schedule: > 2000 bytes
        assert reply["id"] is not None and "result" not in reply
        assert reply["error"]["code"] == -32000
        assert re.match(r"^The reply of \d+ bytes is over this node's message size limit "
                        r"of 2000 bytes \(max-message-size\): ask for less$",
                        reply["error"]["message"])
        assert (yield ws.call(0, "get_chain_id")) == chain.chain_id
    finally:
        ws.dropConnection()
        yield running.stop()
