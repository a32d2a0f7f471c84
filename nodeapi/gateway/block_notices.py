"""The block-applied notices the gateway relays, in order and without
gaps across a change of upstream (:class:`BlockNotices`).

bitshares-core notifies ``set_block_applied_callback`` with the id of every
block it applies (libraries/app/database_api.cpp ``on_applied_block``).
When the gateway's subscription link moves to another upstream, the blocks
applied in between were noticed by nobody: the first notice of the new
link then shows a gap, and the ids of the missing blocks are read from the
new link before it is relayed (a block's id is the ``previous`` of the
next block's header, ``get_block_header``), so a client sees every block
once, in order.  A block id already relayed (the new upstream was a block
behind) is not relayed twice.  Block ids start with the block number (4
bytes, big-endian hex: graphene ``block_header::num_from_id``).
"""

from collections import deque

from twisted.internet import defer
from twisted.logger import Logger

from nodeapi.protocol.block import block_num_of

#: The largest gap filled (blocks); a longer one is relayed as it is.
MAX_GAP = 100
#: How many relayed ids are remembered (to relay none twice).
REMEMBERED = 200


class BlockNotices:
    """Relays block ids through ``send(block_id)`` (module docstring)."""

    log = Logger()

    def __init__(self, send) -> None:
        self.send = send
        self.last = None  # the number of the last block relayed
        self._sent: deque = deque(maxlen=REMEMBERED)
        self._filling = None  # Deferred of a gap being filled: later ids wait for it

    def notice(self, link, block_id) -> None:
        """The block ``block_id`` (hex) was applied, says ``link``."""
        if type(block_id) is not str or len(block_id) != 40:
            self.log.warn("A block notice without a block id: {value!r}", value=block_id)
            return
        if self._filling is not None:
            self._filling.addBoth(lambda _: self._relay(block_id))
            return
        num = block_num_of(block_id)
        if self.last is not None and 1 < num - self.last <= MAX_GAP:
            filling = self._filling = defer.Deferred.fromCoroutine(
                self._fill(link, self.last + 1, num))
            filling.addErrback(lambda f: self.log.failure(
                "Reading the ids of blocks noticed by no upstream failed", f))
            filling.addBoth(self._filled)
            filling.addBoth(lambda _: self._relay(block_id))
            return
        self._relay(block_id)

    def _filled(self, _result) -> None:
        self._filling = None

    async def _fill(self, link, first: int, upto: int) -> None:
        for num in range(first, upto):
            header = await link.call("database", "get_block_header", [num + 1])
            if not (header and type(header.get("previous")) is str):
                return
            self._relay(header["previous"])

    def _relay(self, block_id: str) -> None:
        if block_id in self._sent:
            return
        self._sent.append(block_id)
        self.last = block_num_of(block_id)
        self.send(block_id)
