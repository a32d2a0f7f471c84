"""Answers the API sets keep for reuse, owned by the node
(:attr:`nodeapi.node.Node.api_answers`), shared by every connection.

Some answers are costly to build and asked for again and again by polling
clients (graphene ``get_full_accounts``, ``get_order_book``).  Each is kept
with its *stamp*: the objects it was made from (the chain state and its
``version``, the order lists of a market and its two asset objects).  The
chain's objects are never changed in place once stored (a change stores a
new object), so an answer is still right while its stamp compares equal
to the stamp of the objects now (tuple comparison: identity first).  The
answers are :class:`~nodeapi.chain.state.StateObject` values, so the RPC
layer also keeps their wire form.

Two more caches serve the RPC layer's encoding, on the same grounds:

* :class:`EncodedObjects`: the wire form and the encoded JSON of each
  stored chain object, by identity (an object is walked and encoded once
  per version, whichever answer or notice carries it);
* :attr:`ApiAnswers.replies`: the encoded result of a call whose answer
  depends on nothing but the chain state and its arguments (the functions
  marked ``shared``, :func:`nodeapi.api.base.api_function`), stamped with
  the state and its ``version``, so identical calls between two changes of
  the state (within one block, polling wallets) share one encoded reply.

One policy for every such cache: at most a given number of entries
(:data:`ANSWER_CACHE_SIZE` answers, :data:`OBJECT_CACHE_SIZE` objects),
all dropped at once when it is full (polling clients ask for the same few
keys, so it fills again with those).
"""

from typing import Any, Hashable

import orjson

from nodeapi.protocol.wire import json_default, wire_dict

#: Answers kept per cache.
ANSWER_CACHE_SIZE = 1024
#: Chain objects whose wire form and encoding are kept.
OBJECT_CACHE_SIZE = 8192
#: Largest encoded result kept in :attr:`ApiAnswers.replies`, bytes: the
#: cache holds at most ``size`` times this (larger results are encoded for
#: each call; their chain objects' encodings are still kept).
SHARED_REPLY_MAX = 64 * 1024


class StateAnswerCache:
    """A bounded map ``key -> (stamp, answer)`` (module docstring).

    :ivar size: the most answers kept."""

    __slots__ = ("size", "_entries")

    def __init__(self, size: int = ANSWER_CACHE_SIZE) -> None:
        self.size = size
        self._entries: dict = {}

    def get(self, key: Hashable, stamp: tuple) -> Any:
        """The answer kept for ``key`` if it was made from ``stamp``, else None."""
        cached = self._entries.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        return None

    def put(self, key: Hashable, stamp: tuple, answer: Any) -> Any:
        """Keep ``answer`` for ``key``, made from ``stamp``; returns it."""
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[key] = (stamp, answer)
        return answer

    def __len__(self) -> int:
        return len(self._entries)


class EncodedObjects:
    """The wire form (:func:`~nodeapi.protocol.wire.wire_dict`) and the
    encoded JSON (an ``orjson.Fragment``) of chain objects
    (:class:`~nodeapi.chain.state.StateObject`, never changed once stored),
    kept by identity: the objects wallets poll (``2.1.0`` every block,
    accounts, assets, the answers of :class:`ApiAnswers`) are walked and
    encoded once per version.

    :ivar size: the most objects kept (all dropped when full).
    :ivar check: recompute every hit and raise ``AssertionError`` when the
        object was changed in place after it was stored (a debugging aid:
        the test kit's nodes turn it on; it costs a full walk per hit)."""

    __slots__ = ("size", "check", "_entries")

    def __init__(self, size: int = OBJECT_CACHE_SIZE, check: bool = False) -> None:
        self.size = size
        self.check = check
        self._entries: dict = {}

    def _entry(self, value: dict) -> list:
        entry = self._entries.get(id(value))
        if entry is not None and entry[0] is value:
            if self.check and entry[1] != wire_dict(value, self.wire):
                raise AssertionError(f"object {value.get('id')} changed after it was stored")
            return entry
        entry = [value, wire_dict(value, self.wire), None]
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[id(value)] = entry  # the reference keeps id() unique
        return entry

    def wire(self, value: dict) -> dict:
        """The wire form of ``value`` (the ``frozen`` function of
        :func:`~nodeapi.protocol.wire.to_wire`)."""
        return self._entry(value)[1]

    def fragment(self, value: dict) -> orjson.Fragment:
        """The encoded JSON of ``value``'s wire form, to place in a reply
        as is."""
        entry = self._entry(value)
        if entry[2] is None:
            entry[2] = orjson.Fragment(orjson.dumps(entry[1], default=json_default))
        return entry[2]

    def __len__(self) -> int:
        return len(self._entries)


class ApiAnswers:
    """The node's answer caches, one per kind of answer.

    :ivar full_accounts: graphene ``full_account`` by ``(account id, list
        limit)``, stamped ``(state, state.version)``
        (:mod:`nodeapi.api.database.full_accounts`).
    :ivar order_books: ``get_order_book`` by ``(base, quote, limit)`` as
        given, stamped with the market's two order lists and asset objects
        (:mod:`nodeapi.api.database.markets.orders`).
    :ivar replies: the encoded results of ``shared`` calls by ``(set name,
        function, encoded arguments)``, stamped ``(state, state.version)``
        (module docstring; used by :mod:`nodeapi.rpc.answer`).
    :ivar objects: the :class:`EncodedObjects` of the chain's objects.
    :ivar changes: the :class:`~nodeapi.api.database.changes.BlockChanges`
        of the block being notified, shared by every subscriber
        (:func:`~nodeapi.api.database.changes.block_changes`), or None.

    :param size: answers kept per answer cache; :param object_size:
        objects kept by :attr:`objects`; :param check: its check mode."""

    __slots__ = ("full_accounts", "order_books", "replies", "objects", "changes")

    def __init__(self, size: int = ANSWER_CACHE_SIZE, object_size: int = OBJECT_CACHE_SIZE,
                 check: bool = False) -> None:
        self.full_accounts = StateAnswerCache(size)
        self.order_books = StateAnswerCache(size)
        self.replies = StateAnswerCache(size)
        self.objects = EncodedObjects(object_size, check)
        self.changes = None
