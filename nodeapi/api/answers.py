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

One policy for every such cache: at most :data:`ANSWER_CACHE_SIZE` answers
each, all dropped at once when it is full (polling clients ask for the same
few keys, so it fills again with those).
"""

from typing import Any, Hashable

#: Answers kept per cache.
ANSWER_CACHE_SIZE = 1024


class AnswerCache:
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


class ApiAnswers:
    """The node's answer caches, one per kind of answer.

    :ivar full_accounts: graphene ``full_account`` by ``(account id, list
        limit)``, stamped ``(state, state.version)``
        (:mod:`nodeapi.api.database.full_accounts`).
    :ivar order_books: ``get_order_book`` by ``(base, quote, limit)`` as
        given, stamped with the market's two order lists and asset objects
        (:mod:`nodeapi.api.database.markets.orders`)."""

    __slots__ = ("full_accounts", "order_books")

    def __init__(self, size: int = ANSWER_CACHE_SIZE) -> None:
        self.full_accounts = AnswerCache(size)
        self.order_books = AnswerCache(size)
