"""The debug API set (login accessor ``debug``, access name ``debug_api``):
produce blocks on demand.

Graphene reference: bitshares-core libraries/plugins/debug_witness/debug_api.cpp
``debug_generate_blocks(debug_key, count)``: for each block, the witness
scheduled for the next slot produces it at that slot's time, signed with
``debug_key``.  Graphene rewrites the witness' signing key when it differs;
this node does not change chain state behind the chain's back, so the key
must be the scheduled witness' signing key, else the call fails (after the
blocks it could produce).  Blocks are produced in batches of
:data:`BATCH` with a return to the node's reactor (``node.reactor``) in
between.
"""

from twisted.internet import defer, task
from twisted.logger import Logger

from nodeapi.api.base import ApiSet, api_function
from nodeapi.chain import authority as auth
from nodeapi.errors import ApiError

BATCH = 50


class DebugApi(ApiSet):
    """graphene ``debug_api`` (block production only)."""

    name = "debug"
    log = Logger()

    @api_function
    def debug_generate_blocks(self, debug_key, count: int):
        """Produce ``count`` blocks at the next slots, each by the scheduled
        witness and signed with ``debug_key`` (a WIF private key) which must
        be that witness' signing key.  Answers (a Deferred) with the number
        of blocks produced (``count``).

        :raises ApiError: negative count, a malformed key, or a scheduled
            witness that ``debug_key`` does not sign for (the message says
            how many blocks were produced before).
        """
        if count < 0:
            raise ApiError(f"count must not be negative, got {count}")
        chain = self.node.chain
        if not isinstance(debug_key, str):
            raise ApiError("debug_key must be a WIF private key string")
        try:
            public = auth.public_key_of(debug_key, chain.address_prefix)
        except Exception:  # graphenelib/base58 raise assorted errors for bad WIF
            raise ApiError("debug_key is not a valid WIF private key") from None
        return defer.Deferred.fromCoroutine(self._generate(debug_key, public, count))

    async def _generate(self, wif: str, public: str, count: int) -> int:
        chain = self.node.chain
        produced = 0
        while produced < count:
            for _ in range(min(BATCH, count - produced)):
                witness = chain.get_scheduled_witness(1)
                signing = chain.state.objects[witness]["signing_key"]
                if signing != public:
                    raise ApiError(
                        f"debug_key is {public}, but witness {witness}, scheduled for the next "
                        f"slot, signs with {signing}; {produced} block(s) produced")
                chain.generate_block(chain.get_slot_time(1), witness, wif)
                produced += 1
            if produced < count:
                await task.deferLater(self.node.reactor, 0, lambda: None)
        self.log.info("debug_generate_blocks produced {count} block(s), head {head}",
                      count=produced, head=chain.head_block_num)
        return produced
