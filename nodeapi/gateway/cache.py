"""The gateway's memory cache of answers that cannot change.

Only answers a later call would get unchanged are kept, as the
upstream's JSON bytes:

* ``database.get_chain_id`` and ``database.get_config`` (the chain's
  compile-time constants, bitshares-core libraries/app/database_api.cpp
  ``get_config`` returns ``graphene::protocol::get_config()``);
* blocks, block headers and transactions at or below the last
  irreversible block of the upstream that answered: ``database.get_block``,
  ``get_block_header``, ``get_block_header_batch``, ``get_transaction``
  and ``block.get_blocks`` (an irreversible block is never undone,
  bitshares-core libraries/chain/db_block.cpp).  A ``null`` answer (no such
  block) is not kept.

The cache is bounded by the bytes it holds (least recently used answers
go first); :attr:`ForwardedAnswerCache.hits` and :attr:`ForwardedAnswerCache.misses` count
the lookups of cacheable calls.
"""

from collections import OrderedDict
from typing import Any, Optional

#: (set, function) -> how the call's arguments bound its blocks
_CONSTANT = {("database", "get_chain_id"), ("database", "get_config")}
_ONE_BLOCK = {("database", "get_block"), ("database", "get_block_header")}


def _block_num(value: Any) -> Optional[int]:
    """A block number argument as fc reads one (an integer or a string of
    decimal digits), or None for anything else (then nothing is cached)."""
    if type(value) is int:
        return value if value >= 0 else None
    if type(value) is str and value.isascii() and value.isdigit() and len(value) <= 10:
        return int(value)
    return None


def cache_key(api: str, method: str, args: list):
    """``(key, highest block)`` of a cacheable call (highest block None:
    the answer never changes), or None when the call is not cacheable."""
    what = (api, method)
    if what in _CONSTANT:
        return what, None
    nums: list = []
    if what in _ONE_BLOCK and args:
        nums = [_block_num(args[0])]
    elif what == ("database", "get_transaction") and len(args) >= 2:
        num, position = _block_num(args[0]), _block_num(args[1])
        if num is None or position is None:
            return None
        return (api, method, num, position), num
    elif what == ("database", "get_block_header_batch") and args and type(args[0]) is list:
        nums = [_block_num(n) for n in args[0]] or [None]
    elif what == ("block", "get_blocks") and len(args) >= 2:
        nums = [_block_num(args[0]), _block_num(args[1])]
    else:
        return None
    if any(n is None for n in nums):
        return None
    return (api, method, *nums), max(nums)


class ForwardedAnswerCache:
    """Answers (JSON bytes) by :func:`cache_key`, at most ``max_bytes``
    of them (0: keep nothing); ``clock`` (``IReactorTime``) times the
    answers kept for a number of seconds (a route's ``ttl``,
    :mod:`nodeapi.gateway.routes`).

    :ivar hits, misses: lookups of cacheable calls answered / not."""

    def __init__(self, max_bytes: int = 64 * 1024 * 1024, clock=None) -> None:
        self.max_bytes = max_bytes
        self.clock = clock
        self._expiry: dict = {}  # key -> clock time after which it is not served
        self.size = 0
        self.hits = self.misses = 0
        self._answers: OrderedDict = OrderedDict()

    def __len__(self) -> int:
        return len(self._answers)

    def get(self, key) -> Optional[bytes]:
        """The kept answer of ``key`` (counted as a hit), or None (a miss)."""
        answer = self._answers.get(key)
        if answer is not None and key in self._expiry \
                and self.clock.seconds() >= self._expiry[key]:
            self._drop(key)
            answer = None
        if answer is None:
            self.misses += 1
            return None
        self._answers.move_to_end(key)
        self.hits += 1
        return answer

    def put(self, key, answer: bytes, block: Optional[int], lib: int,
            seconds: Optional[float] = None) -> bool:
        """Keep ``answer`` when it cannot change: ``block`` (its highest
        block, None for a constant) at or below ``lib`` and the answer not
        ``null``; with ``seconds`` (needs the clock), for that long only,
        whatever its block.  The least recently used answers make room.
        True when kept."""
        if (block is not None and block > lib and seconds is None) or answer == b"null" \
                or len(answer) > self.max_bytes:
            return False
        self._drop(key)
        self._answers[key] = answer
        self.size += len(answer)
        if seconds is not None:
            self._expiry[key] = self.clock.seconds() + seconds
        while self.size > self.max_bytes:
            self._drop(next(iter(self._answers)))
        return True

    def _drop(self, key) -> None:
        old = self._answers.pop(key, None)
        if old is not None:
            self.size -= len(old)
        self._expiry.pop(key, None)
