"""Per-block sharing of identical head-dependent reads (:class:`HeadShare`).

Within one head block of the upstreams, identical read calls (same set,
function and arguments) get one upstream answer: clients polling
``get_dynamic_global_properties``, ``get_order_book``, ``get_ticker`` or
the same ``get_objects`` cost the upstream one call per block.  An answer
is shared only while nothing the gateway has learned since could make it
different, and never after ``max_age`` seconds:

* a *generation* is the highest head block number the gateway knows of
  (:attr:`~nodeapi.gateway.upstream.Upstream.head`: each upstream's health
  check; the block notices and the dynamic global properties in the object
  notices of the subscription hub's links; the head in each
  ``get_dynamic_global_properties`` answer that passes through) together
  with a count of the transactions broadcast through the gateway
  (bitshares-core applies a pending transaction to the state its reads
  see at once, libraries/chain/db_block.cpp ``_push_transaction``): an
  answer is kept for the generation of the moment its call was sent, and
  shared only while the generation is unchanged, so no shared answer is
  older than the head the gateway has seen;
* only the answer of an upstream whose own known head is the generation's
  is kept (a lagging upstream's answer reaches its caller only);
* only getters of the sets :data:`SETS` (functions named ``get_*``,
  ``lookup_*``, ``list_*``: bitshares-core libraries/app/include/graphene/
  app/database_api.hpp, api.hpp): never a broadcast, never a subscription
  function, and the reads that subscribe for their caller go to the hub
  instead (:mod:`nodeapi.gateway.client_subscriptions`); those forwarded
  with ``subscribe`` false are plain reads;
* ``max_age`` bounds what the gateway cannot see: a block applied by the
  upstreams since the last reading (health checks every few seconds when
  no client subscribes), or a transaction that reached them otherwise.

:attr:`HeadShare.hits` and :attr:`HeadShare.misses` count the lookups of
shareable calls (:mod:`nodeapi.gateway.figures`).
"""

from typing import Optional

import orjson

from nodeapi.protocol.block import block_num_of

#: The sets whose getters are shared (bitshares-core login_api accessors).
SETS = frozenset(("database", "history", "orders", "asset", "block"))
#: How a getter's name starts.
GETTERS = ("get_", "lookup_", "list_")
#: The dynamic global properties, which hold the head block number.
HEAD_OBJECT = "2.1.0"


def shareable(api: str, method: str) -> bool:
    """Whether calls of ``method`` of set ``api`` are shared per block."""
    return api in SETS and method.startswith(GETTERS)


def notice_head(payload) -> Optional[int]:
    """The head block number a notice of a subscription link shows:
    a block id (its first 8 hex digits, graphene ``num_from_id``), or a
    batch of objects holding the dynamic global properties; else None."""
    if type(payload) is str and len(payload) == 40:
        try:
            return block_num_of(payload)
        except ValueError:  # not hex
            return None
    if type(payload) is list:
        for obj in payload:
            if type(obj) is dict and obj.get("id") == HEAD_OBJECT:
                return _head_number(obj)
    return None


def _head_number(dgp) -> Optional[int]:
    num = dgp.get("head_block_number") if type(dgp) is dict else None
    return num if type(num) is int and num >= 0 else None


def dgp_head(answer: bytes) -> Optional[int]:
    """The head block number in a ``get_dynamic_global_properties``
    answer (JSON bytes, already checked by :mod:`nodeapi.peers.replies`),
    or None."""
    try:
        return _head_number(orjson.loads(answer))
    except orjson.JSONDecodeError:
        return None


class HeadShare:
    """Answers of shareable calls for the current generation (module
    docstring).

    :param pool: the :class:`~nodeapi.gateway.pool.UpstreamPool` (its
        upstreams' heads are read).
    :param clock: ``IReactorTime`` of the ages.
    :param max_age: seconds an answer is shared at most (> 0).
    :param max_bytes: bytes of answers kept per generation; past it, new
        answers are not kept.
    :ivar hits, misses: lookups of shareable calls answered / not."""

    def __init__(self, pool, clock, max_age: float = 1.0,
                 max_bytes: int = 16 * 1024 * 1024) -> None:
        self.pool, self.clock = pool, clock
        self.max_age, self.max_bytes = max_age, max_bytes
        self.hits = self.misses = 0
        self.size = 0
        self._answers: dict = {}  # (api, method, args JSON) -> (answer, fetched at)
        self._of = None  # the generation of the answers kept
        self._broadcasts = 0

    def __len__(self) -> int:
        return len(self._answers)

    # -- what the gateway learns -------------------------------------------------------

    def head_of(self, upstream) -> int:
        """The highest head block number known of ``upstream``."""
        return upstream.head

    def saw_head(self, upstream, num: int) -> None:
        """A notice or an answer of ``upstream`` showed head block ``num``
        (:meth:`~nodeapi.gateway.upstream.Upstream.saw_head`)."""
        upstream.saw_head(num)

    def broadcast(self) -> None:
        """A transaction was broadcast through the gateway: the upstream's
        state changed."""
        self._broadcasts += 1

    def generation(self) -> tuple:
        """``(head block number, broadcasts)`` now."""
        head = max((self.head_of(u) for u in self.pool.upstreams if u.usable), default=0)
        return head, self._broadcasts

    # -- answers -------------------------------------------------------------------------

    def _current(self) -> tuple:
        generation = self.generation()
        if generation != self._of:
            self._of = generation
            self._answers, self.size = {}, 0
        return generation

    def get(self, key) -> Optional[bytes]:
        """The answer kept for ``key`` in this generation and younger than
        ``max_age`` (a hit), or None (a miss)."""
        self._current()
        kept = self._answers.get(key)
        if kept is not None and self.clock.seconds() - kept[1] <= self.max_age:
            self.hits += 1
            return kept[0]
        self.misses += 1
        return None

    def sent(self) -> tuple:
        """The generation a call sent now belongs to (for :meth:`put`)."""
        return self._current()

    def put(self, key, answer: bytes, upstream, generation: tuple, sent_at: float) -> bool:
        """Keep ``upstream``'s ``answer`` of ``key``, whose call was sent at
        ``sent_at`` in ``generation``, when that is still the generation and
        ``upstream`` was at its head; True when kept (the head in a
        ``get_dynamic_global_properties`` answer is learned by the
        :class:`~nodeapi.gateway.apis.Gateway` before)."""
        if (self._current() != generation or self.head_of(upstream) < generation[0]
                or self.size + len(answer) > self.max_bytes):
            return False
        old = self._answers.get(key)
        if old is not None:
            self.size -= len(old[0])
        self._answers[key] = (answer, sent_at)
        self.size += len(answer)
        return True
