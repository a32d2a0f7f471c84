"""Notice frames shared by the WebSocket connections of one factory
(:class:`NoticeFrames`): a notice sent to many subscribers is encoded once
and framed once.

A notice is ``{"method":"notice","params":[callback_id,[payload]]}``
(docs/wire-contract.rst section 5).  After a block, the API sets hand every
subscriber of the same change the same payload object
(:meth:`nodeapi.api.base.Session.send_notice`,
:mod:`nodeapi.api.database.changes`), so within one reactor turn:

- the payload's JSON (``[payload]``, the chain objects in it as their
  cached encodings, :func:`nodeapi.rpc.jsonrpc.encode_value`) is made once
  per payload object, kept by identity with a reference to it;
- the text of the notice is that JSON spliced after the callback id, so
  connections with different callback ids cost a concatenation, not an
  encoding;
- the WebSocket frame (Autobahn's ``PreparedMessage``: header and payload
  built once) is made once per ``(callback id, payload)``: clients making
  the same calls choose the same ids (bitsharesjs and python-bitshares
  number callbacks by call), and all of them are written the same bytes.

Both caches are emptied on the next reactor turn (and when full), so a
payload object is never taken for another one that reuses its memory.
"""

from typing import Any

import orjson
from autobahn.websocket.protocol import PreparedMessage

from nodeapi.rpc.jsonrpc import encode_value

#: Entries kept per cache within one reactor turn before it is emptied.
NOTICE_CACHE_SIZE = 4096

_HEAD = b'{"method":"notice","params":['


def notice_text(callback_id: Any, encoded_params: bytes) -> bytes:
    """The text of a notice to ``callback_id``, from the JSON of its
    ``[payload]`` (callback ids are integers; any JSON value is encoded)."""
    cb = b"%d" % callback_id if type(callback_id) is int else orjson.dumps(callback_id)
    return b"".join((_HEAD, cb, b",", encoded_params, b"]}"))


class NoticeFrames:
    """The notice frames of one reactor turn (module docstring).

    :param reactor: ``IReactorTime``, to empty the caches on the next turn.
    """

    __slots__ = ("_reactor", "_params", "_frames", "_clearing")

    def __init__(self, reactor) -> None:
        self._reactor = reactor
        self._params: dict = {}  # id(payload) -> (payload, encoded [payload])
        self._frames: dict = {}  # (callback id, id(payload)) -> (payload, PreparedMessage)
        self._clearing = None

    def frame(self, callback_id: Any, payload: Any) -> PreparedMessage:
        """The WebSocket text frame of the notice of ``payload`` to
        ``callback_id``."""
        key = (callback_id, id(payload))
        frames = self._frames
        entry = frames.get(key)
        if entry is not None and entry[0] is payload:
            return entry[1]
        params = self._params
        found = params.get(key[1])
        if found is not None and found[0] is payload:
            encoded = found[1]
        else:
            encoded = encode_value([payload])
            self._keep(params, key[1], (payload, encoded))
        prepared = PreparedMessage(notice_text(callback_id, encoded), False, False, True)
        self._keep(frames, key, (payload, prepared))
        return prepared

    def _keep(self, cache: dict, key, entry) -> None:
        if len(cache) >= NOTICE_CACHE_SIZE:
            cache.clear()
        cache[key] = entry
        if self._clearing is None:
            self._clearing = self._reactor.callLater(0, self.clear)

    def clear(self) -> None:
        """Forget every cached encoding and frame."""
        self._clearing = None
        self._params.clear()
        self._frames.clear()
