"""The sync loop of one peer: fetch the blocks after this node's head in
batches and push them through the chain, then follow the peer's
block-applied notices.  Graphene reference: libraries/net/node.cpp (fetch
the blocks after our head in batches, then follow).
"""

from twisted.internet import defer, task
from twisted.logger import Logger

from nodeapi.chain.errors import MalformedBlock
from nodeapi.errors import ChainError, StorageError
from nodeapi.peers.errors import PeerRpcError
from nodeapi.peers.progress import CatchUpProgress
from nodeapi.protocol.wire import strip_block_info

log = Logger()

APPLY_SLICE = 50  # blocks applied between returns to the reactor
#: get_block calls pipelined at once on the fallback path (below the default
#: ``max-calls-in-flight`` of 100 of a nodeapi peer).
GET_BLOCK_WINDOW = 50
#: what a block from a peer may raise when it is not even well formed.
_MALFORMED = (AttributeError, KeyError, TypeError, ValueError, IndexError, RecursionError)


class Follower:
    """Brings this node's chain up to ``peer``'s head (a
    :class:`~nodeapi.peers.peer.Peer`, whose ``protocol``, ``state``,
    ``head_block_num`` and ``network`` it reads, and which it tells of
    each step, ``synced_step``, and of the catch-up, ``caught_up``; a
    failure goes to the peer's ``remote.fail``).

    :ivar use_get_block: True once the peer denied ``block_api``: blocks
        come from pipelined ``database.get_block`` calls.
    :ivar batch_limit: the peer's ``get_blocks`` limit once it told it
        (int), else None.
    :ivar progress: the :class:`~nodeapi.peers.progress.CatchUpProgress`
        of a long sync (a line every few seconds with blocks/s and ETA).
    """

    def __init__(self, peer) -> None:
        self.peer = peer
        self.progress = CatchUpProgress(peer.network.clock, log,
                                        f"Sync from peer {peer.address}")
        self.use_get_block = False
        self.batch_limit = None
        self._in_flight = 0  # blocks asked for by the get_blocks call in flight
        self._syncing = False
        self._again = False

    def sync(self) -> None:
        """Fetch and apply the peer's blocks after this node's head, in
        batches of ``sync_batch_size`` (``block.get_blocks``, or pipelined
        ``database.get_block`` when the peer denies ``block_api``), yielding
        to the reactor every :data:`APPLY_SLICE` blocks; the peer's state
        becomes ``live`` once caught up.  Returns at once; a call while a
        sync runs makes it go around once more; no-op without a connection
        or for a ``bad`` peer.  Failures go to the peer's remote node
        (:meth:`~nodeapi.peers.remote.RemoteNode.fail`: a block the chain
        rejects, :class:`~nodeapi.errors.ChainError` or
        :class:`~nodeapi.chain.errors.MalformedBlock`, marks it bad)."""
        peer = self.peer
        if peer.protocol is None or peer.state == "bad":
            return
        if self._syncing:
            self._again = True
            return
        self._syncing = True
        proto = peer.protocol
        d = self._sync_loop(proto)
        d.addErrback(peer.remote.fail, proto)

        def done(_):
            self._syncing = False
            if peer.protocol is not None and peer.protocol is not proto:
                self.sync()  # reconnected while the old loop was winding down

        d.addBoth(done)

    @defer.inlineCallbacks
    def _sync_loop(self, proto):
        peer = self.peer
        network = peer.network
        chain = network.chain
        while True:
            self._again = False
            while chain.head_block_num < peer.head_block_num and proto is peer.protocol:
                first = chain.head_block_num + 1
                batch = network.parameters["sync_batch_size"]
                if self.batch_limit is not None:
                    batch = min(batch, self.batch_limit)
                last = min(peer.head_block_num, first + batch - 1)
                blocks = yield self._fetch(proto, first, last)
                for start in range(0, len(blocks), APPLY_SLICE):
                    if not self._apply_slice(blocks[start:start + APPLY_SLICE], proto):
                        break
                    if start + APPLY_SLICE < len(blocks):  # let the reactor serve
                        yield task.deferLater(network.reactor, 0, lambda: None)
                if blocks and blocks[0] is not None and proto is peer.protocol:
                    peer.synced_step()
                if not blocks or blocks[-1] is None:
                    break
            if not self._again or proto is not peer.protocol:
                break
        if proto is peer.protocol:
            peer.caught_up()

    def _apply_slice(self, blocks: list, proto) -> bool:
        """Apply ``blocks`` in order with one block log sync for all of them
        (:meth:`~nodeapi.chain.blocklog.BlockLog.batched`: blocks the peer
        can serve again); False when a missing block (None) or a changed
        connection stopped it."""
        peer = self.peer
        chain = peer.network.chain
        with chain.block_log.batched():
            for block in blocks:
                if block is None or proto is not peer.protocol:
                    return False
                self._apply(block)
                self.progress.step(chain.head_block_num, peer.head_block_num)
        return True

    def _apply(self, block) -> None:
        """Apply one fetched block; a block that is not even well formed
        (nested too deeply included) is :class:`MalformedBlock`; a block
        this node cannot store is :class:`~nodeapi.errors.StorageError`
        saying so."""
        peer = self.peer
        try:
            peer.network.apply_block(strip_block_info(block), peer)
        except ChainError:
            raise
        except StorageError as exc:
            raise StorageError(f"cannot store its blocks: {exc}") from exc
        except _MALFORMED as exc:
            raise MalformedBlock(f"Malformed block from peer {peer.address}: "
                                 f"{type(exc).__name__}: {exc}") from exc

    @defer.inlineCallbacks
    def _fetch(self, proto, first: int, last: int):
        """Blocks ``first..last`` from the peer (list, None for missing).

        ``block.get_blocks`` first; a refusal that names the peer's limit
        (:attr:`PeerRpcError.configured_limit
        <nodeapi.peers.errors.PeerRpcError.configured_limit>`) sets
        :attr:`batch_limit` and asks again within it; an access denial
        (:attr:`~nodeapi.peers.errors.PeerRpcError.access_denied`) switches
        to pipelined ``database.get_block`` for good."""
        if not self.use_get_block:
            self._in_flight = last - first + 1
            try:
                blocks = yield proto.call("block", "get_blocks", [first, last])
                return blocks
            except PeerRpcError as exc:
                limit = exc.configured_limit
                if limit is not None and limit <= last - first:
                    # the peer's api-limit-get-blocks is below our batch size
                    self.batch_limit = limit
                    log.info("Peer {peer} serves at most {limit} blocks per get_blocks; "
                             "fetching batches of that size", peer=self.peer.address,
                             limit=limit)
                    blocks = yield self._fetch(proto, first, first + limit - 1)
                    return blocks
                if not exc.access_denied:
                    raise
                log.info("Peer {peer} denies block_api; using database get_block",
                         peer=self.peer.address)
                self.use_get_block = True
            finally:
                self._in_flight = 0
        # pipelined get_block calls stay below the peer's calls-in-flight cap
        last = min(last, first + GET_BLOCK_WINDOW - 1)
        calls = [proto.call("database", "get_block", [n]) for n in range(first, last + 1)]
        blocks = yield defer.gatherResults(calls, consumeErrors=True)
        return blocks

    def reply_too_large(self) -> None:
        """The connection closed on a message over this node's
        ``max-message-size``: if a ``get_blocks`` call of more than one
        block was in flight, its reply was probably the one, so later
        batches ask for half as many blocks (:attr:`batch_limit`).  A single
        block over the limit cannot be fetched: ``max-message-size`` must be
        above the chain's largest block."""
        if self._in_flight > 1:
            self.batch_limit = self._in_flight // 2
            log.info("Peer {peer}: {count} blocks exceed max-message-size; fetching "
                     "batches of {limit}", peer=self.peer.address, count=self._in_flight,
                     limit=self.batch_limit)
