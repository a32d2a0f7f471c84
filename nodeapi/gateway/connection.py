"""One WebSocket connection of the gateway to an upstream node, with calls
whose results come back as the upstream's own JSON text.

:class:`UpstreamProtocol` is the peers package's
:class:`~nodeapi.peers.client.PeerRpcProtocol` (calls, notices, pings,
message size limit, the ``factory.peer`` callbacks) plus :meth:`call_raw`.
A forwarded answer is passed on to the client as it came: the reply is not
decoded when its text has the form a bitshares-core node writes,
``{"id":N,"jsonrpc":"2.0","result":...}`` (bitshares-fc
src/rpc/websocket_api.cpp ``fc::json::to_string(reply)`` of an
``fc::rpc::response``, whose members are reflected in the order
``(id)(jsonrpc)(result)(error)``, include/fc/rpc/state.hpp, an unset
``optional`` left out; nodeapi writes ``{"id":N,"result":...}``): the bytes
between ``"result":`` and the closing brace are the result.  Any other
form (spaces, other key order, an ``error`` member, a tail that names
``"error"``) is decoded and encoded again, so the fast path only ever
saves work.  Large integers and doubles are already strings in the
upstream's text (fc ``stringify_large_ints_and_doubles``), so the client
gets exactly what the upstream sent.
"""

import re

import orjson

from nodeapi.peers.client import PeerRpcFactory, PeerRpcProtocol

#: the head of a reply in the form module docstring: its id is group 1
_REPLY_HEAD = re.compile(rb'\{"id":(\d{1,18}),(?:"jsonrpc":"2\.0",)?"result":')


def raw_result(payload: bytes):
    """``(call id, result bytes)`` of a reply in the fast form (module
    docstring), else None.  The result bytes are not validated: the form
    guarantees they are one JSON value."""
    match = _REPLY_HEAD.match(payload)
    if match is None or payload[-1:] != b"}" or b'"error"' in payload[-24:]:
        return None
    return int(match.group(1)), payload[match.end():-1]


class UpstreamProtocol(PeerRpcProtocol):
    """A :class:`~nodeapi.peers.client.PeerRpcProtocol` whose
    :meth:`call_raw` results are bytes of JSON (module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._raw: set = set()

    @property
    def closed(self) -> bool:
        """True once the connection is closing or closed (its pending calls
        fail before the owner hears of the close)."""
        return self._closed

    def pending_methods(self) -> list:
        """The method names of the calls sent and not answered, oldest first."""
        return [method for method, _d in self._calls.values()]

    def call_raw(self, api, method: str, args: list):
        """Like :meth:`~nodeapi.peers.client.PeerRpcProtocol.call`, but the
        Deferred fires with the result as JSON bytes (the upstream's own
        text when the reply has the fast form, else encoded again)."""
        d = self.call(api, method, args)
        if self._closed:
            return d
        call_id = self._next_id - 1
        self._raw.add(call_id)

        def done(result):
            self._raw.discard(call_id)  # answered in another form
            return result

        return d.addBoth(done).addCallback(_as_json)

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        """A reply to a :meth:`call_raw` call in the fast form fires its
        Deferred with the result bytes; everything else goes the peer
        protocol's way (decoded)."""
        if self._raw:
            found = raw_result(payload)
            if found is not None and found[0] in self._raw:
                call_id, result = found
                self._raw.discard(call_id)
                entry = self._calls.pop(call_id, None)
                if entry is not None:
                    entry[1].callback(result)
                return
        super().onMessage(payload, isBinary)

    def onClose(self, wasClean: bool, code, reason) -> None:
        self._raw.clear()
        super().onClose(wasClean, code, reason)


def _as_json(result):
    """A raw call's result as JSON bytes (decoded ones encoded again)."""
    return result if type(result) is bytes else orjson.dumps(result)


class UpstreamFactory(PeerRpcFactory):
    """:class:`~nodeapi.peers.client.PeerRpcFactory` building
    :class:`UpstreamProtocol` connections for an
    :class:`~nodeapi.gateway.upstream.Upstream`."""

    protocol = UpstreamProtocol

