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
- the WebSocket frame of the notice is that JSON spliced after the
  callback id behind a frame header (:func:`notice_frame`, what Autobahn's
  ``prepareMessage`` builds, without an object per frame), so connections
  with different callback ids cost a concatenation, not an encoding;
- the frame is kept per ``(payload, callback id)`` for the first
  :data:`FRAMES_PER_PAYLOAD` ids: clients making the same calls choose the
  same ids (bitsharesjs and python-bitshares number callbacks by call),
  and all of them are written the same bytes.

The cache is emptied on the next reactor turn (and when full), so a
payload object is never taken for another one that reuses its memory.
"""

from typing import Any

import orjson

from nodeapi.rpc.framing import text_frame_header
from nodeapi.rpc.jsonrpc import encode_value

#: Payloads kept within one reactor turn before the cache is emptied.
NOTICE_CACHE_SIZE = 4096
#: Frames kept per payload: those of the callback ids many clients share
#: (the first ones asked for); a connection with an id of its own gets a
#: frame made for it, not kept (keeping thousands of single-use frames
#: only feeds the garbage collector).
FRAMES_PER_PAYLOAD = 16

_HEAD = b'{"method":"notice","params":['


def notice_frame(callback_id: Any, encoded_params: bytes) -> bytes:
    """The WebSocket frame of a notice to ``callback_id``, from the JSON
    of its ``[payload]`` spliced after the id (callback ids are integers;
    any JSON value is encoded)."""
    cb = b"%d" % callback_id if type(callback_id) is int else orjson.dumps(callback_id)
    size = len(_HEAD) + len(cb) + len(encoded_params) + 3
    return b"".join((text_frame_header(size), _HEAD, cb, b",", encoded_params, b"]}"))


class NoticeFrames:
    """The notice frames of one reactor turn (module docstring).

    :param reactor: ``IReactorTime``, to empty the cache on the next turn.
    :param objects: the node's :class:`~nodeapi.api.answers.EncodedObjects`
        (the chain objects in a payload placed as their kept encodings), or
        None.
    """

    __slots__ = ("_reactor", "_objects", "_payloads", "_clearing")

    def __init__(self, reactor, objects=None) -> None:
        self._reactor = reactor
        self._objects = objects
        # id(payload) -> (payload, its encoded [payload], {callback id: frame})
        self._payloads: dict = {}
        self._clearing = None

    def frame(self, callback_id: Any, payload: Any) -> bytes:
        """The WebSocket text frame (header and text, as written on the
        wire) of the notice of ``payload`` to ``callback_id``."""
        entry = self._payloads.get(id(payload))
        if entry is None or entry[0] is not payload:
            entry = self._encode(payload)
        frames = entry[2]
        frame = frames.get(callback_id)
        if frame is None:
            frame = notice_frame(callback_id, entry[1])
            if len(frames) < FRAMES_PER_PAYLOAD:
                frames[callback_id] = frame
        return frame

    def _encode(self, payload: Any) -> tuple:
        payloads = self._payloads
        if len(payloads) >= NOTICE_CACHE_SIZE:
            payloads.clear()
        entry = payloads[id(payload)] = (payload, encode_value([payload], self._objects), {})
        if self._clearing is None:
            self._clearing = self._reactor.callLater(0, self.clear)
        return entry

    def clear(self) -> None:
        """Forget every cached encoding and frame."""
        self._clearing = None
        self._payloads.clear()
