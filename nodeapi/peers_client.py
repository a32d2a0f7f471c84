"""The RPC client side of a peer link: an Autobahn WebSocket client that
speaks graphene's JSON-RPC (wire-contract.md sections 3-5) to another
nodeapi node.

:class:`PeerRpcProtocol` sends ``{"id", "method": "call", "params": [api,
function, args]}`` requests (``api`` given by name, wire-contract section 3),
matches replies by id and hands ``notice`` messages to its peer.  The
:class:`~nodeapi.peers.Peer` that owns the factory drives it.
:func:`strip_block_info` turns a block read over the wire back into the
in-memory form.
"""

import json

from autobahn.twisted.websocket import WebSocketClientFactory, WebSocketClientProtocol
from twisted.internet import defer
from twisted.logger import Logger

from nodeapi.errors import ApiError

log = Logger()

# Fields graphene's database get_block adds to a signed block (signed_block_with_info).
_INFO_FIELDS = ("block_id", "signing_key", "transaction_ids")
# 64-bit (or uint32) integer fields of the supported operations and of a
# transaction that the RPC layer writes as strings when outside int32
# (wire-contract section 3); the in-memory form is int (DESIGN.rst).
_WIRE_INT_FIELDS = frozenset(("amount", "max_supply", "max_market_fee", "ref_block_prefix"))


def wire_ints(value, key=None):
    """``value`` with the numeric strings of :data:`_WIRE_INT_FIELDS` made
    ints again, so a follower stores (and its plugins see) exactly the
    producer's in-memory block.  Other strings (memos, ids) are untouched."""
    if isinstance(value, dict):
        return {k: wire_ints(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [wire_ints(v) for v in value]
    if key in _WIRE_INT_FIELDS and isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return value


def strip_block_info(block: dict) -> dict:
    """A signed block without the ``block_id``/``signing_key``/
    ``transaction_ids`` fields that ``get_block`` adds, with wire integers
    converted back (:func:`wire_ints`)."""
    return wire_ints({k: v for k, v in block.items() if k not in _INFO_FIELDS})


class PeerRpcError(ApiError):
    """The peer answered a call with a JSON-RPC error.

    :ivar remote_code: the peer's ``error.code`` (10 for a failed function,
        wire-contract.md section 4), or None.
    :ivar remote_message: the peer's ``error.message`` (str).
    """

    name = "peer_rpc_error"

    def __init__(self, method: str, error: dict) -> None:
        self.remote_code = error.get("code")
        self.remote_message = str(error.get("message", ""))
        super().__init__(f"Peer call {method} failed: {self.remote_message} "
                         f"(code {self.remote_code})")

    @property
    def access_denied(self) -> bool:
        """True when the peer refused the API set (wire-contract section 2)."""
        return "Access denied" in self.remote_message


class PeerDisconnected(ApiError):
    """The connection to the peer closed before the call was answered."""

    name = "peer_disconnected"


class PeerRpcProtocol(WebSocketClientProtocol):
    """One WebSocket connection to a peer's RPC endpoint.

    ``self.opened`` fires (with the protocol) when the WebSocket handshake is
    done; :meth:`call` returns a Deferred firing with the call's ``result``
    or failing with :class:`PeerRpcError` / :class:`PeerDisconnected`.
    Notices ``[callback_id, [payload...]]`` go to ``factory.peer.notice``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.opened = defer.Deferred()
        self._next_id = 1
        self._calls: dict = {}
        self._closed = False

    def onOpen(self) -> None:
        """Autobahn calls this once the WebSocket opening handshake is done:
        fire :attr:`opened` with this protocol (the ``ClientService``'s
        ``prepareConnection`` waits for it, so ``whenConnected`` fires only
        after the handshake), then tell the peer
        (:meth:`~nodeapi.peers_peer.Peer.connected`)."""
        self.opened.callback(self)
        self.factory.peer.connected(self)

    def call(self, api, method: str, args: list) -> defer.Deferred:
        """Call ``method`` of API set ``api`` (a set name such as
        ``"database"`` or a numeric id) with positional ``args``: sends
        ``{"id": n, "method": "call", "params": [api, method, args]}`` (ids
        from 1, per connection; wire-contract.md section 3).

        :returns: a Deferred firing with the reply's ``result`` (any JSON
            value); it fails with :class:`PeerRpcError` when the reply
            carries ``error`` (wire-contract section 4) and with
            :class:`PeerDisconnected` when the connection is (or gets)
            closed before the reply.  There is no timeout here: WebSocket
            pings (:class:`PeerRpcFactory`) drop a silent peer, which fails
            every pending call."""
        if self._closed:
            return defer.fail(PeerDisconnected(f"Peer connection closed before {method}"))
        call_id = self._next_id
        self._next_id += 1
        d = defer.Deferred()
        self._calls[call_id] = (method, d)
        msg = {"id": call_id, "method": "call", "params": [api, method, args]}
        self.sendMessage(json.dumps(msg, separators=(",", ":")).encode("utf-8"))
        return d

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        """Autobahn calls this for each complete message (``payload`` is the
        UTF-8 JSON text; ``isBinary`` is not looked at).

        * ``{"method": "notice", "params": [callback_id, [payload...]]}``
          goes to :meth:`~nodeapi.peers_peer.Peer.notice` (wire-contract.md
          section 5);
        * ``{"id": n, "result": ...}`` / ``{"id": n, "error": {...}}``
          fires / fails (:class:`PeerRpcError`) the Deferred of call ``n``;
        * invalid JSON closes the connection with code 1002 (protocol
          error); a message that is not an object, or answers no pending
          call, is ignored."""
        try:
            msg = json.loads(payload)
        except ValueError:
            log.warn("Peer {peer} sent invalid JSON; closing", peer=self.factory.peer.address)
            self.sendClose(1002)
            return
        if not isinstance(msg, dict):
            return
        if msg.get("method") == "notice":
            params = msg.get("params") or [None, []]
            self.factory.peer.notice(self, params[0], params[1] if len(params) > 1 else [])
            return
        entry = self._calls.pop(msg.get("id"), None)
        if entry is None:
            return
        method, d = entry
        if "error" in msg:
            d.errback(PeerRpcError(method, msg["error"] or {}))
        else:
            d.callback(msg.get("result"))

    def onClose(self, wasClean: bool, code, reason) -> None:
        """Autobahn calls this when the connection is gone, cleanly or not,
        including a failed opening handshake (``code``/``reason`` from the
        close frame, or None).  Every pending call fails with
        :class:`PeerDisconnected` and later calls fail at once; if the
        handshake never completed, :attr:`opened` fails with
        :class:`PeerDisconnected` (the ``ClientService`` counts a failed
        attempt and retries); then the peer is told
        (:meth:`~nodeapi.peers_peer.Peer.disconnected`)."""
        self._closed = True
        calls, self._calls = self._calls, {}
        for method, d in calls.values():
            d.errback(PeerDisconnected(f"Peer connection closed during {method}"))
        if not self.opened.called:
            self.opened.errback(PeerDisconnected(f"WebSocket handshake failed: {reason}"))
        self.factory.peer.disconnected(self)


class PeerRpcFactory(WebSocketClientFactory):
    """Builds :class:`PeerRpcProtocol` for ``peer`` (ws://host:port/path),
    with WebSocket pings every 20 s (a peer silent for 20 s more is dropped).
    Not ``noisy``: the ``ClientService`` starts and stops the factory at each
    (re)connection, and Twisted would log "Starting factory"/"Stopping
    factory" each time; :class:`~nodeapi.peers_peer.Peer` logs the
    connection events that matter."""

    protocol = PeerRpcProtocol
    noisy = False

    def __init__(self, peer, path: str = "/") -> None:
        url = f"ws://{peer.host}:{peer.port}{path}"
        super().__init__(url, reactor=peer.network.reactor)
        self.peer = peer
        # Pings detect a peer that vanished without closing (then reconnect).
        self.setProtocolOptions(maxMessagePayloadSize=0, maxFramePayloadSize=0,
                                autoPingInterval=20, autoPingTimeout=20)
