"""A small real WebSocket JSON-RPC client for the tests (Autobahn client
protocol over loopback), with notices collected per connection."""

import base64
import itertools

import orjson
from autobahn.twisted.websocket import (WebSocketClientFactory, WebSocketClientProtocol,
                                        connectWS)
from twisted.internet import defer


class RpcClientProtocol(WebSocketClientProtocol):
    def __init__(self):
        super().__init__()
        self._ids = itertools.count(1)
        self._waiting = {}
        self.notices = []
        self.notice_waiters = []
        self.raw_replies = []
        self.raw_payloads = []  # every message's bytes, as received
        self.closed = defer.Deferred()

    def onOpen(self):
        self.factory.opened.callback(self)

    def onMessage(self, payload, isBinary):
        self.raw_payloads.append(payload)
        msg = orjson.loads(payload)
        self.raw_replies.append(msg)
        if msg.get("method") == "notice":
            self.notices.append(msg["params"])
            waiters, self.notice_waiters = self.notice_waiters, []
            for d in waiters:
                d.callback(msg["params"])
            return
        d = self._waiting.pop(msg.get("id"), None)
        if d is not None:
            d.callback(msg)

    def onClose(self, wasClean, code, reason):
        self.close_code = code
        if not self.factory.opened.called:
            self.factory.opened.errback(ConnectionError(f"refused: {code} {reason}"))
        for d in self._waiting.values():
            d.errback(ConnectionError(f"closed: {code} {reason}"))
        self._waiting = {}
        if not self.closed.called:
            self.closed.callback(code)

    def send_raw(self, data: bytes, request_id=None):
        d = defer.Deferred()
        if request_id is not None:
            self._waiting[request_id] = d
        self.sendMessage(data, isBinary=False)
        return d

    def request(self, api, function, args=(), jsonrpc=False):
        """The whole reply object of a ``call``."""
        rid = next(self._ids)
        msg = {"id": rid, "method": "call", "params": [api, function, list(args)]}
        if jsonrpc:
            msg["jsonrpc"] = "2.0"
        return self.send_raw(orjson.dumps(msg), rid)

    @defer.inlineCallbacks
    def call(self, api, function, *args):
        """The result, or raise RuntimeError(error) for an error reply."""
        reply = yield self.request(api, function, args)
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply["result"]

    def next_notice(self):
        d = defer.Deferred()
        self.notice_waiters.append(d)
        return d


def ws_connect(port: int, user=None, password=None, reactor=None):
    """Connect to ws://127.0.0.1:port/, with Basic credentials if given;
    fires with the open protocol."""
    headers = {}
    if user is not None:
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        headers["Authorization"] = "Basic " + token
    factory = WebSocketClientFactory(f"ws://127.0.0.1:{port}/", headers=headers)
    factory.protocol = RpcClientProtocol
    factory.setProtocolOptions(autoPingInterval=0)
    factory.opened = defer.Deferred()
    connectWS(factory)
    return factory.opened


def error_of(reply):
    """The ``error`` member of a JSON-RPC reply (failing when it has none)."""
    assert "error" in reply, reply
    return reply["error"]


def limit_refusals(metrics, limit, scope):
    """How many calls, connections or subscriptions ``metrics``
    (:class:`nodeapi.metrics.Metrics`) counted as refused by ``limit``
    (``calls``, ``connections``, ``subscriptions``) for ``scope``
    (``user``, ``source``, ``node``)."""
    return metrics.registry.get_sample_value("nodeapi_rpc_limit_refusals_total",
                                             {"limit": limit, "scope": scope}) or 0
