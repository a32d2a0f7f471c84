"""Fork mode: ``twistd nodeapi --devnet --fork-url ws://node [--fork-block N]``
starts the devnet from a live chain's state at block N (default: that
node's head when the devnet starts), local blocks on top.

The state is made by syncing: blocks 1..N are fetched from the node over a
:class:`~nodeapi.peers.remote.RemoteNode` (login, chain id check: the
node must serve the devnet's chain; ``database.get_block``, :data:`WINDOW`
calls in flight) and pushed through
the chain with every check (``Chain.push_block``), as a follower syncs
(:mod:`nodeapi.peers.follower`).  So the node must have the devnet's
genesis (the bundled one, or ``--genesis-json``), and the time is that of
the chain's length: fine for a test network, hours for the BitShares
mainnet.  Not done: fetching objects lazily as they are touched.

After the sync the devnet produces its own blocks on top (each slot's
witness signs with the development key after a debug update of its
signing key, as on any devnet) and every devnet function works:
impersonation of any account of the live chain, snapshots, set_balance.
Nothing is sent back to the node.
"""

from twisted.application.internet import backoffPolicy
from twisted.internet import defer, task
from twisted.logger import Logger
from zope.interface import implementer

from nodeapi.errors import NodeAPIError
from nodeapi.peers.remote import IRemoteOwner, RemoteNode
from nodeapi.protocol.wire import strip_block_info

#: get_block calls in flight at once
WINDOW = 50
#: blocks applied between returns to the reactor
APPLY_SLICE = 50


class ForkError(NodeAPIError):
    """The fork could not be made: the node unreachable or not answering,
    on another chain, a block it sent refused by the chain, or N past its
    head."""

    name = "devnet_fork"


@implementer(IRemoteOwner)
class _Source:
    """The owner of the connection to the forked node: :attr:`ready`
    fires with the node's :class:`~nodeapi.peers.remote.RemoteHead` once
    it is logged in and on the devnet's chain, or fails with the first
    problem (the fork then stops; nothing is retried)."""

    def __init__(self, chain) -> None:
        self.chain = chain
        self.ready = defer.Deferred()
        self.error = None

    def claim_chain(self, remote, chain_id: str) -> bool:
        return chain_id == self.chain.chain_id

    def connected(self, remote, head) -> None:
        if not self.ready.called:
            self.ready.callback(head)

    def notice(self, remote, callback_id, payload) -> None:
        pass

    def call_timed_out(self, remote, method: str) -> None:
        pass

    def failed(self, remote, error) -> bool:
        self.error = self.error or error
        if not self.ready.called:
            self.ready.errback(error)
        return True

    def lost(self, remote) -> None:
        pass


async def sync_from(chain, address, block: int, reactor, *, max_message_size: int,
                    timeout: float = 30.0, log: Logger | None = None) -> int:
    """Push blocks 1..``block`` (0: the node's head block now) of the node
    at ``address`` (a :class:`~nodeapi.protocol.node_address.NodeAddress`)
    into ``chain`` (at block 0); returns the head number.

    Every wait is bounded by ``timeout`` seconds (connecting, each call).

    :raises ForkError: the node unreachable, on another chain or failing a
        call, a block refused (the chain's error named), ``block`` past its
        head, or a chain already past block 0."""
    log = log or Logger()
    if chain.head_block_num != 0:
        raise ForkError(f"--fork-url needs a fresh chain, this one is at block "
                        f"{chain.head_block_num}")
    source = _Source(chain)
    remote = RemoteNode(address, source, reactor=reactor, backoff=backoffPolicy(0.5, 5.0),
                        what=f"--fork-url {address.url}", max_message_size=max_message_size,
                        timeout=timeout)
    opened = remote.when_open()  # fails at the first failed attempt: no retries
    remote.startService()
    try:
        try:
            await _bounded(opened, timeout, reactor)
            head = await _bounded(source.ready, timeout, reactor)
        except Exception as exc:
            raise ForkError(f"--fork-url {address.url}: cannot connect: "
                            f"{source.error or exc}") from None
        target = block or head.head_block_num
        if target > head.head_block_num:
            raise ForkError(f"--fork-block {target} is past the head {head.head_block_num} "
                            f"of {address.url}")
        log.info("Devnet fork: syncing blocks 1..{target} from {url}", target=target,
                 url=address.url)
        num = 1
        while num <= target:
            last = min(num + WINDOW - 1, target)
            try:
                blocks = await defer.gatherResults(
                    [remote.call("database", "get_block", [n]) for n in range(num, last + 1)],
                    consumeErrors=True)
            except Exception as exc:
                cause = getattr(exc, "subFailure", None)
                raise ForkError(f"--fork-url {address.url}: get_block {num}..{last} failed: "
                                f"{source.error or (cause.value if cause else exc)}") from None
            for offset, raw in enumerate(blocks):
                if not isinstance(raw, dict):
                    raise ForkError(f"--fork-url {address.url} has no block {num + offset}")
                try:
                    chain.push_block(strip_block_info(raw))
                except Exception as exc:
                    raise ForkError(f"--fork-url {address.url}: block {num + offset} "
                                    f"refused: {exc}") from None
                if (offset + 1) % APPLY_SLICE == 0:
                    await task.deferLater(reactor, 0, lambda: None)
            num = last + 1
        return chain.head_block_num
    finally:
        await remote.stopService()


def _bounded(d: defer.Deferred, timeout: float, reactor) -> defer.Deferred:
    """``d`` failing with ``TimeoutError`` after ``timeout`` seconds."""
    return d.addTimeout(timeout, reactor)
