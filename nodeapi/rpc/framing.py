"""WebSocket text frames written by the connection itself: the one place
that uses Autobahn's members outside its documented API.

A reply or a notice is written as one final unmasked text frame (RFC 6455
section 5.2), the bytes Autobahn's ``sendMessage`` writes, without its
per-message work.  :class:`FramingProtocol` decides once, when the
connection opens, whether it may (no option of Autobahn's changes or
watches the frames); both the reply path (:meth:`FramingProtocol.send_text`)
and the notice path (:meth:`FramingProtocol.send_frames`) follow that one
decision.

The Autobahn members used, checked against the releases in
:data:`CHECKED_AUTOBAHN` (tests/api/test_rpc_framing.py fails on another
release, so they are checked again before it is accepted):
``_perMessageCompress`` (the negotiated permessage-deflate, or None),
``send_queue`` (sync writes still queued), ``trafficStats`` (the counters
``sendMessage`` keeps), ``sendCloseFrame`` (a close with a code the public
``sendClose`` refuses: 1001, 1008), and the options ``maskServerFrames``,
``autoFragmentSize``, ``logFrames``, ``logOctets``, ``trackedTimings``,
``maxMessagePayloadSize``.
"""

import struct

from autobahn.twisted.websocket import WebSocketServerProtocol

#: Autobahn releases the private members above were checked against.
CHECKED_AUTOBAHN = ("26.11.1",)


def text_frame_header(size: int) -> bytes:
    """The header of a final, unmasked WebSocket text frame of ``size``
    bytes (RFC 6455 section 5.2: a server's frames are not masked; 7-bit,
    16-bit or 64-bit length)."""
    if size <= 125:
        return bytes((0x81, size))
    if size <= 0xFFFF:
        return struct.pack("!BBH", 0x81, 126, size)
    return struct.pack("!BBQ", 0x81, 127, size)


def header_size(frame: bytes) -> int:
    """The size of the header :func:`text_frame_header` put before a
    frame's text: 2, 4 or 10 bytes."""
    length = frame[1] & 0x7F
    return 2 if length < 126 else 4 if length == 126 else 10


class FramingProtocol(WebSocketServerProtocol):
    """An Autobahn server protocol that writes its text frames itself when
    Autobahn would write the same bytes (module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        # the largest text framed here; 0: every message goes to Autobahn
        self._frame_limit = 0

    def onOpen(self) -> None:
        """Decide the framing for the connection's life: here unless a
        negotiated permessage-deflate, masked or fragmented server frames,
        frame/octet logging or timing tracking change or watch each frame
        (all fixed once the connection is open)."""
        if (self._perMessageCompress is None and not self.maskServerFrames
                and not self.autoFragmentSize and not self.logFrames
                and not self.logOctets and not self.trackedTimings):
            # Autobahn refuses (PayloadExceededError) a larger message
            self._frame_limit = self.maxMessagePayloadSize or float("inf")

    @property
    def frames_here(self) -> bool:
        """Whether this connection writes its own frames (:meth:`onOpen`)."""
        return self._frame_limit > 0

    @property
    def websocket_open(self) -> bool:
        """The WebSocket is open (not yet closing)."""
        return self.state == self.STATE_OPEN

    def send_text(self, data: bytes) -> None:
        """Send one text message: framed here when decided so and the
        connection is open with nothing queued; else (compression, a
        closing connection, queued writes, a message over the size limit)
        through ``sendMessage``, which may raise as it does."""
        size = len(data)
        if size <= self._frame_limit and self.state == self.STATE_OPEN and not self.send_queue:
            frame = text_frame_header(size) + data
            self.transport.write(frame)
            stats = self.trafficStats  # as _count(1, size, len(frame)), inline
            stats.outgoingWebSocketMessages += 1
            stats.outgoingWebSocketFrames += 1
            stats.outgoingOctetsAppLevel += size
            stats.outgoingOctetsWebSocketLevel += size
            stats.outgoingOctetsWireLevel += len(frame)
        else:
            self.sendMessage(data, isBinary=False)

    def send_frame(self, frame: bytes) -> int:
        """:meth:`send_frames` of one frame (the common notice)."""
        if self._frame_limit:
            self.transport.write(frame)
            size = len(frame)
            length = frame[1] & 0x7F  # header_size and _count, inline: per notice
            stats = self.trafficStats
            stats.outgoingWebSocketMessages += 1
            stats.outgoingWebSocketFrames += 1
            octets = size - (2 if length < 126 else 4 if length == 126 else 10)
            stats.outgoingOctetsAppLevel += octets
            stats.outgoingOctetsWebSocketLevel += octets
            stats.outgoingOctetsWireLevel += size
            return size
        return self.send_frames([frame])

    def send_frames(self, frames: list) -> int:
        """Send complete text frames made by :func:`text_frame_header`
        (notices framed once for many connections) in one write when
        framed here, else each one's text through ``sendMessage``.  Returns
        the bytes written (text bytes when Autobahn framed them)."""
        if self._frame_limit:
            data = b"".join(frames)
            self.transport.write(data)
            self._count(len(frames), len(data) - sum(map(header_size, frames)), len(data))
            return len(data)
        size = 0
        for frame in frames:
            text = frame[header_size(frame):]
            self.sendMessage(text, isBinary=False)
            size += len(text)
        return size

    def _count(self, messages: int, octets: int, wire: int) -> None:
        """Keep Autobahn's traffic counters as ``sendMessage`` keeps them:
        ``messages`` single-frame messages of ``octets`` text bytes, ``wire``
        bytes written."""
        stats = self.trafficStats
        stats.outgoingWebSocketMessages += messages
        stats.outgoingWebSocketFrames += messages
        stats.outgoingOctetsAppLevel += octets
        stats.outgoingOctetsWebSocketLevel += octets
        stats.outgoingOctetsWireLevel += wire

    def close_with(self, code: int, reason: bytes) -> None:
        """Send a close frame with ``code`` (1001 going away, 1008 policy
        violation: codes Autobahn's public ``sendClose`` refuses) and the
        UTF-8 ``reason``; the peer then has ``closeHandshakeTimeout``
        seconds before a drop.  Nothing when the connection is not open."""
        if self.state == self.STATE_OPEN:
            self.sendCloseFrame(code=code, reasonUtf8=reason, isReply=False)
