"""The RPC client side of a peer link: an Autobahn WebSocket client that
speaks graphene's JSON-RPC (docs/wire-contract.rst sections 3-5) to another
node.

:class:`PeerRpcProtocol` sends ``{"id", "method": "call", "params": [api,
function, args]}`` requests (``api`` given by name, wire-contract section 3),
matches replies by id and hands ``notice`` messages to its peer
(:class:`~nodeapi.peers.peer.Peer`, which owns the factory and drives it).
Anything that is not graphene JSON-RPC is reported to the peer as a bad
message (:meth:`~nodeapi.peers.peer.Peer.bad_message`), never raised into
Autobahn.
"""

import orjson
import txaio
from autobahn.twisted.websocket import WebSocketClientFactory, WebSocketClientProtocol
from twisted.internet import defer

from nodeapi.peers.errors import PeerDisconnected, PeerRpcError

#: Seconds between WebSocket pings, and the wait for the pong: a peer silent
#: for that long is dropped (then the ClientService reconnects).
PING_INTERVAL = 20


def _errors_only():
    """Autobahn's logger for peer connections: errors only (a failed
    opening handshake is an info and a warning line of Autobahn's at every
    retry; the peer logs one line of its own)."""
    logger = txaio.make_logger()
    logger.set_log_level("error")
    return logger


class PeerRpcProtocol(WebSocketClientProtocol):
    """One WebSocket connection to a peer's RPC endpoint.

    The owners' ``ClientService`` counts a TCP connection as made (no
    ``prepareConnection``: Twisted's ClientService has no transition for a
    connection lost after a failed preparation, and logged a critical
    ``NoTransition`` traceback at every retry against a server that is no
    WebSocket server).  A failed opening handshake is reported to the peer
    (``factory.peer.handshake_failed(proto, reason)``) before
    ``disconnected``; :attr:`handshake_error` keeps its reason.

    ``self.opened`` fires (with the protocol) when the WebSocket handshake is
    done, or fails with ``PeerDisconnected`` when it fails (only when
    someone waits on it); :meth:`call` returns a Deferred firing with the call's ``result``
    or failing with :class:`~nodeapi.peers.errors.PeerRpcError` /
    :class:`~nodeapi.peers.errors.PeerDisconnected`.  Notices
    ``[callback_id, [payload...]]`` go to ``factory.peer.notice``.
    """

    log = _errors_only()

    def __init__(self) -> None:
        super().__init__()
        self.opened = defer.Deferred()
        self.handshake_error = None
        self._next_id = 1
        self._calls: dict = {}
        self._closed = False

    def onOpen(self) -> None:
        """Autobahn calls this once the WebSocket opening handshake is done:
        fire :attr:`opened` with this protocol (the ``ClientService``'s
        ``prepareConnection`` waits for it, so ``whenConnected`` fires only
        after the handshake, for those who wait on it), then tell the peer
        (:meth:`~nodeapi.peers.peer.Peer.connected`)."""
        self.opened.callback(self)
        self.factory.peer.connected(self)

    def call(self, api, method: str, args: list) -> defer.Deferred:
        """Call ``method`` of API set ``api`` (a set name such as
        ``"database"`` or a numeric id) with positional ``args``: sends
        ``{"id": n, "method": "call", "params": [api, method, args]}`` (ids
        from 1, per connection; docs/wire-contract.rst section 3).

        :returns: a Deferred firing with the reply's ``result`` (any JSON
            value); it fails with ``PeerRpcError`` when the reply carries
            ``error`` (wire-contract section 4) and with
            ``PeerDisconnected`` when the connection is (or gets) closed
            before the reply.  There is no timeout here: WebSocket pings
            (:class:`PeerRpcFactory`) drop a silent peer, which fails every
            pending call."""
        if self._closed:
            return defer.fail(PeerDisconnected(f"Peer connection closed before {method}"))
        call_id = self._next_id
        self._next_id += 1
        d = defer.Deferred()
        self._calls[call_id] = (method, d)
        self.sendMessage(orjson.dumps({"id": call_id, "method": "call",
                                       "params": [api, method, args]}))
        return d

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        """Autobahn calls this for each complete message (``payload`` is the
        UTF-8 JSON text, at most the factory's ``max_message_size`` bytes;
        ``isBinary`` is not looked at).

        * ``{"method": "notice", "params": [callback_id, [payload...]]}``
          goes to :meth:`~nodeapi.peers.peer.Peer.notice`
          (docs/wire-contract.rst section 5);
        * ``{"id": n, "result": ...}`` / ``{"id": n, "error": {...}}``
          fires / fails (``PeerRpcError``) the Deferred of call ``n``; a
          reply that answers no pending call is ignored;
        * invalid JSON (nesting deeper than the parser allows included), a
          message that is not an object, or a notice of another shape goes
          to :meth:`~nodeapi.peers.peer.Peer.bad_message`, which drops the
          connection."""
        try:
            msg = orjson.loads(payload)
        except (ValueError, RecursionError) as exc:
            self.factory.peer.bad_message(self, f"invalid JSON ({exc})")
            return
        if not isinstance(msg, dict):
            self.factory.peer.bad_message(self, f"a JSON {type(msg).__name__}, not an object")
            return
        if msg.get("method") == "notice":
            params = msg.get("params")
            if not (isinstance(params, list) and len(params) == 2
                    and isinstance(params[1], list)):
                self.factory.peer.bad_message(
                    self, "a notice whose params are not [callback, [payload...]]")
                return
            self.factory.peer.notice(self, params[0], params[1])
            return
        call_id = msg.get("id")
        if not isinstance(call_id, int) or isinstance(call_id, bool):
            return
        entry = self._calls.pop(call_id, None)
        if entry is None:
            return
        method, d = entry
        if "error" in msg:
            d.errback(PeerRpcError(method, msg["error"]))
        else:
            d.callback(msg.get("result"))

    def onClose(self, wasClean: bool, code, reason) -> None:
        """Autobahn calls this when the connection is gone, cleanly or not,
        including a failed opening handshake.  A message over the size limit
        (Autobahn closed with 1009) is reported first
        (:meth:`~nodeapi.peers.peer.Peer.message_too_large`).  Every pending call fails with
        ``PeerDisconnected`` and later calls fail at once; if the handshake
        never completed, the peer is told
        (``handshake_failed(proto, reason)``, which lengthens its reconnect
        delay) and :attr:`opened` fails with ``PeerDisconnected`` if someone
        waits on it; then the peer is told
        (:meth:`~nodeapi.peers.peer.Peer.disconnected`)."""
        self._closed = True
        if self.localCloseCode == self.CLOSE_STATUS_CODE_MESSAGE_TOO_BIG:
            self.factory.peer.message_too_large(self, self.maxMessagePayloadSize)
        calls, self._calls = self._calls, {}
        for method, d in calls.values():
            d.errback(PeerDisconnected(f"Peer connection closed during {method}"))
        if not self.opened.called:
            self.handshake_error = str(reason or f"closed with {code}")
            self.factory.peer.handshake_failed(self, self.handshake_error)
            error = PeerDisconnected(f"WebSocket handshake failed: {self.handshake_error}")
            self.opened.addErrback(lambda _failure: None)  # nobody waiting: no log
            self.opened.errback(error)
        self.factory.peer.disconnected(self, code, reason)


class PeerRpcFactory(WebSocketClientFactory):
    """Builds :class:`PeerRpcProtocol` for ``peer`` (``url``
    ``ws://host:port/path``; IPv6 hosts go in brackets, also in the
    ``Host`` header).

    :param max_message_size: the largest message (and frame payload) in
        bytes accepted from the peer; a larger one closes the connection
        with 1009 (the node's ``max-message-size`` option).
    :param reactor: the reactor Autobahn schedules its pings on.

    WebSocket pings every :data:`PING_INTERVAL` s (a peer silent for as
    long again is dropped).  Not ``noisy``: the ``ClientService`` starts
    and stops the factory at each (re)connection, and Twisted would log
    "Starting factory"/"Stopping factory" each time; the peer logs the
    connection events that matter."""

    protocol = PeerRpcProtocol
    noisy = False

    def __init__(self, peer, url: str, max_message_size: int, reactor) -> None:
        super().__init__(url, reactor=reactor)
        if ":" in self.host:  # Autobahn writes "Host: ::1:8090" otherwise
            self.host = f"[{self.host}]"
        self.peer = peer
        # failByDrop off: a refused message is answered with a close frame,
        # whose code (1009 for one too large) the protocol reads back.
        self.setProtocolOptions(maxMessagePayloadSize=max_message_size,
                                maxFramePayloadSize=max_message_size, failByDrop=False,
                                autoPingInterval=PING_INTERVAL,
                                autoPingTimeout=PING_INTERVAL)
