"""A small graphene JSON-RPC WebSocket server over a real Chain, for the
peers tests (serves exactly what a follower calls: database get_chain_id,
get_dynamic_global_properties, get_block, set_block_applied_callback; block
get_blocks; network_broadcast broadcast_transaction).  Replies follow
wire-contract.md sections 3-5, including 64-bit integers outside int32 as
strings and the access-denied error for a set not granted."""

import json

from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol

from nodeapi.errors import NodeAPIError

DENIED = "Assert Exception: is_allowed: Access denied"


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

    def onClose(self, wasClean, code, reason):
        if self in self.factory.clients:
            self.factory.clients.remove(self)

    def onMessage(self, payload, isBinary):
        msg = json.loads(payload)
        api, method, args = msg["params"]
        try:
            result = self.factory.dispatch(self, api, method, args)
            reply = {"id": msg["id"], "result": wire(result)}
        except NodeAPIError as exc:
            reply = {"id": msg["id"], "error": {"code": exc.code,
                                                "message": "Execution error: " + str(exc)}}
        self.sendMessage(json.dumps(reply).encode())


class ChainRpcFactory(WebSocketServerFactory):
    protocol = ChainRpcProtocol

    def __init__(self, chain, block_api=True, tamper=None, chain_id=None):
        super().__init__()
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
            return chain.state.get("2.1.0")
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
