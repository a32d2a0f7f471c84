"""A stand-in peer for the peers tests: a small graphene JSON-RPC WebSocket
server over a real Chain that can serve tampered blocks and misbehave on
purpose (serves exactly what a follower calls: database get_chain_id,
get_dynamic_global_properties, get_block, set_block_applied_callback; block
get_blocks; network_broadcast broadcast_transaction); kit.peers has the
loopback listen / close helpers.  Replies follow docs/wire-contract.rst
sections 3-5, including 64-bit integers outside int32 as strings and the access-denied error
for a set not granted; errors carry no ``data`` (a server without structured
error names, so the follower falls back to the texts).  The tests use the
real RPC site (kit.site) wherever they need no tampering."""

import json

from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol

from nodeapi.errors import NodeAPIError
from nodeapi.protocol.wire import wire_dict

DENIED = "Assert Exception: is_allowed: Access denied"
#: what ``raw`` returns for a call never answered (the WebSocket stays
#: open and answers pings: a node that accepts calls and goes silent)
SILENT = "silent"


def wire(value):
    """Write ints outside int32 as strings (wire-contract section 3)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if -2**31 <= value < 2**31 else str(value)
    if isinstance(value, dict):
        return {k: wire(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [wire(v) for v in value]
    return value


class ChainRpcProtocol(WebSocketServerProtocol):

    def onOpen(self):
        self.factory.clients.append(self)
        self.block_cb = None
        self.logged_in = False
        if self.factory.on_open is not None:
            self.sendMessage(self.factory.on_open)

    def onClose(self, wasClean, code, reason):
        if self in self.factory.clients:
            self.factory.clients.remove(self)

    def onMessage(self, payload, isBinary):
        msg = json.loads(payload)
        api, method, args = msg["params"]
        raw = self.factory.raw(method, msg["id"])
        if raw is not None:  # misbehave: send these bytes instead of the reply
            self.factory.calls.append((api, method))
            if raw is not SILENT:
                for message in ([raw] if isinstance(raw, bytes) else raw):
                    self.sendMessage(message)
            return
        try:
            result = self.factory.dispatch(self, api, method, args)
            reply = {"id": msg["id"], "result": wire(result)}
        except NodeAPIError as exc:
            reply = {"id": msg["id"], "error": {"code": exc.code,
                                                "message": "Execution error: " + str(exc)}}
        self.sendMessage(json.dumps(reply).encode())


class ChainRpcFactory(WebSocketServerFactory):
    protocol = ChainRpcProtocol

    def __init__(self, chain, block_api=True, tamper=None, chain_id=None, raw=None,
                 on_open=None):
        """``tamper(block) -> block`` changes served blocks; ``raw(method,
        call_id)`` returns bytes (or a list of messages) to send instead of
        the reply, :data:`SILENT` to send nothing, or None (the reply); it
        may be replaced while the factory serves (``factory.raw = ...``);
        ``on_open``: bytes sent to each client when its WebSocket opens."""
        super().__init__()
        self.raw = raw or (lambda method, call_id: None)
        self.on_open = on_open
        self.chain_id = chain_id or chain.chain_id
        self.chain = chain
        self.block_api = block_api
        self.tamper = tamper or (lambda block: block)
        self.clients = []
        self.calls = []
        chain.add_block_observer(self._applied)

    def _applied(self, applied):
        for proto in list(self.clients):
            if proto.block_cb is not None:
                proto.sendMessage(json.dumps({"method": "notice", "params": [
                    proto.block_cb, [applied.block_id]]}).encode())

    def dispatch(self, proto, api, method, args):
        self.calls.append((api, method))
        chain = self.chain
        if api == 1 and method == "login":
            proto.logged_in = args == ["peer", "secret"]
            return proto.logged_in
        if api == "block":
            if not (self.block_api or proto.logged_in):
                raise NodeAPIError(DENIED)
            return [self._block(n) for n in range(args[0], args[1] + 1)]
        if api == "network_broadcast":
            return chain.push_transaction(args[0]) and None
        if method == "get_chain_id":
            return self.chain_id
        if method == "get_dynamic_global_properties":
            return wire_dict(chain.state.get("2.1.0"))  # the chain keeps integer times
        if method == "set_block_applied_callback":
            proto.block_cb = args[0]
            return None
        if method == "get_block":
            block = self._block(args[0])
            if block is not None:
                block = dict(block, block_id="00" * 20, signing_key="TEST1",
                             transaction_ids=[])
            return block
        raise NodeAPIError(f"No method {method}")

    def _block(self, num):
        block = self.chain.get_block(num)
        return None if block is None else self.tamper(dict(block))

