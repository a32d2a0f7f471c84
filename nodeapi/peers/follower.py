"""The sync loop of one peer: fetch the blocks after this node's head in
batches and push them through the chain, then follow the peer's
block-applied notices.  Graphene reference: libraries/net/node.cpp (fetch
the blocks after our head in batches, then follow).
"""

from collections import deque

from twisted.internet import defer, task
from twisted.logger import Logger

from nodeapi.chain.errors import MalformedBlock
from nodeapi.errors import ChainError, StorageError
from nodeapi.peers.errors import PeerRpcError
from nodeapi.peers.progress import CatchUpProgress
from nodeapi.protocol.wire import strip_block_info

log = Logger()

APPLY_SLICE = 50  # blocks applied between returns to the reactor
#: batches asked for ahead of the one being applied, so the peer's encoding
#: and the network overlap this node's applying and the sync never waits a
#: round trip per batch (memory: this many batches of decoded blocks).
FETCH_AHEAD = 2
#: seconds between two block log syncs while catching up: the blocks applied
#: since the last one are those a power cut can lose, which the peer serves
#: again (:meth:`~nodeapi.chain.blocklog.BlockLog.batched`).
SYNC_EVERY = 1.0
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
        self._in_flight: list = []  # blocks asked for by each get_blocks call in flight
        self._synced_at = None  # clock seconds of the last block log sync of a catch-up
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

    def _batch_size(self) -> int:
        batch = self.peer.network.parameters["sync_batch_size"]
        return batch if self.batch_limit is None else min(batch, self.batch_limit)

    @defer.inlineCallbacks
    def _sync_loop(self, proto):
        peer = self.peer
        network = peer.network
        chain = network.chain
        ahead = deque()  # (first, last, Deferred) of the batches asked for ahead
        try:
            while True:
                self._again = False
                while chain.head_block_num < peer.head_block_num and proto is peer.protocol:
                    first = chain.head_block_num + 1
                    while ahead and ahead[0][0] != first:  # a shorter batch came before
                        _drop(ahead.popleft()[2])
                    if ahead:
                        d = ahead.popleft()[2]
                    else:
                        d = self._fetch(proto, first,
                                        min(peer.head_block_num, first + self._batch_size() - 1))
                    blocks = yield d
                    if blocks and blocks[-1] is not None:
                        self._fetch_ahead(proto, ahead, first + len(blocks))
                    for start in range(0, len(blocks), APPLY_SLICE):
                        if not self._apply_slice(blocks[start:start + APPLY_SLICE], proto):
                            break
                        # let the reactor serve (and send the calls asked ahead)
                        yield task.deferLater(network.reactor, 0, lambda: None)
                    if blocks and blocks[0] is not None and proto is peer.protocol:
                        peer.synced_step()
                    if not blocks or blocks[-1] is None:
                        break
                if not self._again or proto is not peer.protocol:
                    break
        finally:
            while ahead:
                _drop(ahead.popleft()[2])
            self._synced_at = None
            chain.block_log.sync_now()  # what the last slices left unsynced
        if proto is peer.protocol:
            peer.caught_up()

    def _fetch_ahead(self, proto, ahead: deque, first: int) -> None:
        """Ask for up to :data:`FETCH_AHEAD` batches from block ``first``
        on (those not asked for yet, up to the peer's head), appended to
        ``ahead`` as ``(first, last, Deferred)``."""
        if self.use_get_block:  # its pipelined calls already fill the peer's window
            return
        head = self.peer.head_block_num
        if ahead:
            first = ahead[-1][1] + 1
        while len(ahead) < FETCH_AHEAD and first <= head:
            last = min(head, first + self._batch_size() - 1)
            ahead.append((first, last, self._fetch(proto, first, last)))
            first = last + 1

    def _apply_slice(self, blocks: list, proto) -> bool:
        """Apply ``blocks`` in order with at most one block log sync for all
        of them (:meth:`~nodeapi.chain.blocklog.BlockLog.batched`: blocks
        the peer can serve again), and none when the last sync of this
        catch-up is less than :data:`SYNC_EVERY` seconds old and the slice
        does not reach the peer's head; False when a missing block (None)
        or a changed connection stopped it."""
        peer = self.peer
        chain = peer.network.chain
        now = peer.network.reactor.seconds()
        if self._synced_at is None:
            self._synced_at = now
        due = (now - self._synced_at >= SYNC_EVERY
               or chain.head_block_num + len(blocks) >= peer.head_block_num)
        with chain.block_log.batched(sync=due):
            for block in blocks:
                if block is None or proto is not peer.protocol:
                    return False
                self._apply(block)
                self.progress.step(chain.head_block_num, peer.head_block_num)
        if due:
            self._synced_at = now
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
            size = last - first + 1
            self._in_flight.append(size)
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
                self._in_flight.remove(size)
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
        largest = max(self._in_flight, default=0)
        if largest > 1:
            self.batch_limit = largest // 2
            log.info("Peer {peer}: {count} blocks exceed max-message-size; fetching "
                     "batches of {limit}", peer=self.peer.address, count=largest,
                     limit=self.batch_limit)


def _drop(d: defer.Deferred) -> None:
    """A fetch asked for ahead that will not be used: its failure (the
    connection closed, a refusal) is nobody's error."""
    d.addErrback(lambda _failure: None)
