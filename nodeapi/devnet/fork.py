"""Fork mode: ``twistd nodeapi --devnet --fork-url ws://node [--fork-block N]``
starts the devnet from a live chain's state at block N (default: that
node's head when the devnet starts), local blocks on top.

The state is made by syncing: blocks 1..N are fetched from the node
(``database.get_block``, :data:`WINDOW` calls in flight) and pushed through
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

from twisted.internet import defer, task
from twisted.internet.endpoints import HostnameEndpoint
from twisted.logger import Logger

from nodeapi.errors import NodeAPIError
from nodeapi.peers.client import PeerRpcFactory
from nodeapi.protocol.wire import strip_block_info

#: get_block calls in flight at once
WINDOW = 50
#: blocks applied between returns to the reactor
APPLY_SLICE = 50


class ForkError(NodeAPIError):
    """The fork could not be made: the node unreachable or not answering,
    a block it sent refused by the chain, or N past its head."""

    name = "devnet_fork"


class _Link:
    """What :class:`~nodeapi.peers.client.PeerRpcFactory` reports to (its
    ``peer``): the first problem is kept in :attr:`error`; notices are not
    asked for."""

    def __init__(self) -> None:
        self.error = None

    def connected(self, proto) -> None:
        pass

    def notice(self, proto, callback, payload) -> None:
        pass

    def bad_message(self, proto, why: str) -> None:
        self.error = self.error or f"a bad message ({why})"
        proto.dropConnection(abort=True)

    def message_too_large(self, proto, limit: int) -> None:
        self.error = self.error or f"a reply over {limit} bytes (--max-message-size)"

    def handshake_failed(self, proto, reason) -> None:
        self.error = self.error or f"WebSocket handshake failed: {reason}"

    def disconnected(self, proto, code, reason) -> None:
        pass


async def sync_from(chain, address, block: int, reactor, *, max_message_size: int,
                    timeout: float = 30.0, log: Logger | None = None) -> int:
    """Push blocks 1..``block`` (0: the node's head block now) of the node
    at ``address`` (a :class:`~nodeapi.protocol.node_address.NodeAddress`)
    into ``chain`` (at block 0); returns the head number.

    Every wait is bounded by ``timeout`` seconds (connecting, each window
    of calls).

    :raises ForkError: the node unreachable or failing a call, a block
        refused (the chain's error named), ``block`` past its head, or a
        chain already past block 0."""
    log = log or Logger()
    if chain.head_block_num != 0:
        raise ForkError(f"--fork-url needs a fresh chain, this one is at block "
                        f"{chain.head_block_num}")
    link = _Link()
    factory = PeerRpcFactory(link, address.url, max_message_size, reactor)
    endpoint = HostnameEndpoint(reactor, address.host, address.port, timeout=timeout)
    try:
        proto = await _bounded(endpoint.connect(factory), timeout, reactor)
        await _bounded(proto.opened, timeout, reactor)
    except Exception as exc:
        raise ForkError(f"--fork-url {address.url}: cannot connect: "
                        f"{link.error or exc}") from None
    try:
        if address.credentials:
            await _call(proto, link, address, timeout, reactor, "login", "login",
                        list(address.credentials))
        props = await _call(proto, link, address, timeout, reactor, "database",
                            "get_dynamic_global_properties", [])
        head = int(props["head_block_number"])
        target = block or head
        if target > head:
            raise ForkError(f"--fork-block {target} is past the head {head} of "
                            f"{address.url}")
        log.info("Devnet fork: syncing blocks 1..{target} from {url}", target=target,
                 url=address.url)
        num = 1
        while num <= target:
            last = min(num + WINDOW - 1, target)
            try:
                blocks = await _bounded(defer.gatherResults(
                    [proto.call("database", "get_block", [n]) for n in range(num, last + 1)],
                    consumeErrors=True), timeout, reactor)
            except Exception as exc:
                cause = getattr(exc, "subFailure", None)
                raise ForkError(f"--fork-url {address.url}: get_block {num}..{last} failed: "
                                f"{link.error or (cause.value if cause else exc)}") from None
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
        proto.sendClose()


async def _call(proto, link, address, timeout, reactor, api, method, args):
    try:
        return await _bounded(proto.call(api, method, args), timeout, reactor)
    except Exception as exc:
        raise ForkError(f"--fork-url {address.url}: {api}.{method} failed: "
                        f"{link.error or exc}") from None


def _bounded(d: defer.Deferred, timeout: float, reactor) -> defer.Deferred:
    """``d`` failing with ``TimeoutError`` after ``timeout`` seconds."""
    return d.addTimeout(timeout, reactor)
