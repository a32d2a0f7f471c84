"""Replies and notices framed by the WebSocket connection itself
(:class:`nodeapi.rpc.framing.FramingProtocol`): the bytes on the wire are
those Autobahn's ``sendMessage`` writes for the same text (RFC 6455
section 5.2: one final unmasked text frame, 7-, 16- or 64-bit length), and a
client that negotiated permessage-deflate (RFC 7692) still gets compressed
replies and notices from Autobahn.  The Autobahn release is pinned: the
private members the framing uses are checked again before another one is
accepted."""

import re
import zlib

import autobahn
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
from nodeapi.rpc.framing import CHECKED_AUTOBAHN, FramingProtocol, header_size
from nodeapi.rpc.notices import notice_frame
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


def _inflate(frame: bytes) -> bytes:
    """The text of one compressed frame (RFC 7692 section 7.2.2)."""
    assert frame[0] == 0xC1  # FIN, RSV1 (compressed), text
    length = frame[1] & 0x7F
    body = frame[2:] if length < 126 else frame[4:]
    return zlib.decompressobj(-15).decompress(body + b"\x00\x00\xff\xff")


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
        assert protocol.frames_here and protocol._frame_limit >= size
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
        assert protocol._perMessageCompress is not None and not protocol.frames_here
        protocol._send(data)
        frame = transport.value()
        assert len(frame) < len(data)
        assert _inflate(frame) == data
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


def test_the_autobahn_release_is_one_the_framing_was_checked_against(chain):
    """FramingProtocol uses Autobahn members outside its documented API
    (nodeapi.rpc.framing): another release must be checked (and added to
    CHECKED_AUTOBAHN) before it is used."""
    assert autobahn.__version__ in CHECKED_AUTOBAHN, (
        f"Autobahn {autobahn.__version__}: check the members nodeapi.rpc.framing "
        f"names, then add the release to CHECKED_AUTOBAHN")
    assert issubclass(RpcWebSocketFactory.protocol, FramingProtocol)
    protocol, _ = _open(chain)
    try:
        for member in ("_perMessageCompress", "send_queue", "trafficStats", "sendCloseFrame",
                       "maskServerFrames", "autoFragmentSize", "logFrames", "logOctets",
                       "trackedTimings", "maxMessagePayloadSize"):
            assert hasattr(protocol, member), member
    finally:
        _close(protocol)


@pytest.mark.parametrize("sizes", [[40], [40, 200, 70000]])
def test_notice_frames_are_written_as_made_and_counted(chain, sizes):
    """The notice path follows the same decision: frames made once for
    many connections are written as they are, and Autobahn's counters move
    as they would for the same messages sent by ``sendMessage``."""
    frames = [notice_frame(i, b"[" + b"1," * (n // 2) + b"1]") for i, n in enumerate(sizes)]
    protocol, transport = _open(chain)
    try:
        before = protocol.trafficStats.__json__()
        assert protocol.send_frames(frames) == sum(map(len, frames))
        assert transport.value() == b"".join(frames)
        middle = protocol.trafficStats.__json__()
        transport.clear()
        for frame in frames:
            protocol.sendMessage(frame[header_size(frame):], isBinary=False)
        assert transport.value() == b"".join(frames)
        after = protocol.trafficStats.__json__()
        for key in ("outgoingWebSocketMessages", "outgoingWebSocketFrames",
                    "outgoingOctetsAppLevel", "outgoingOctetsWebSocketLevel",
                    "outgoingOctetsWireLevel"):
            assert middle[key] - before[key] == after[key] - middle[key] > 0, key
    finally:
        _close(protocol)


def test_a_deflate_client_gets_compressed_notices(chain):
    """With permessage-deflate negotiated, shared notice frames are not
    written as they are: their text goes through Autobahn, compressed."""
    frames = [notice_frame(3, b"[" + b"7," * 500 + b"7]"), notice_frame(4, b"[[1]]")]
    protocol, transport = _open(chain, deflate=True)
    try:
        protocol.send_frames(frames)
        written = transport.value()
        assert written != b"".join(frames)
        first_size = written[1] & 0x7F
        assert first_size < 126
        first, second = written[:2 + first_size], written[2 + first_size:]
        # the second message reuses the first's deflate window (no context
        # takeover was not negotiated): inflate both with one decompressor
        inflater = zlib.decompressobj(-15)
        texts = [inflater.decompress(f[2:] + b"\x00\x00\xff\xff") for f in (first, second)]
        assert texts == [f[header_size(f):] for f in frames]
    finally:
        _close(protocol)


def test_close_with_a_code_the_public_close_refuses(chain):
    """1008 and 1001 go out as close frames (RFC 6455 section 5.5.1: the
    code, then the reason); once closing, nothing more is sent."""
    protocol, transport = _open(chain)
    try:
        protocol.close_with(1008, b"too slow")
        assert transport.value() == b"\x88\x0a\x03\xf0too slow"
        assert not protocol.websocket_open
        transport.clear()
        protocol.close_with(1001, b"node stopping")
        assert transport.value() == b""
    finally:
        _close(protocol)


def test_one_notice_frame_is_written_and_counted_as_a_list_of_one(chain):
    """``send_frame`` (the common notice) writes and counts as
    ``send_frames([frame])`` does, for 7-, 16- and 64-bit lengths."""
    frames = [notice_frame(1, b"[" + b"1," * (n // 2) + b"1]") for n in (40, 300, 70000)]
    protocol, transport = _open(chain)
    other, other_transport = _open(chain)
    try:
        for frame in frames:
            assert protocol.send_frame(frame) == other.send_frames([frame]) == len(frame)
        assert transport.value() == other_transport.value() == b"".join(frames)
        assert protocol.trafficStats.__json__() == other.trafficStats.__json__()
    finally:
        _close(protocol)
        _close(other)
