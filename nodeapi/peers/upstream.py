"""Indexer mode: follow another node's WebSocket API and hand its blocks to
the history plugins, numbered as this node would have numbered them.

``twistd nodeapi --upstream ws://[user:pass@]host:port --plugins searchdb``
keeps no chain of its own.  :class:`UpstreamService` connects to a
bitshares-core-compatible node (any server speaking its API: bitshares-core
7.x, or another nodeapi), logs in when the URL carries credentials,
subscribes with ``database.set_block_applied_callback`` (a notice wakes the
loop; otherwise it polls), and fetches the blocks up to the upstream's last
irreversible block (its head with ``irreversible=False``) in pipelined
batches: ``database.get_block`` and ``history.get_block_operation_history``
for each, numbered by :class:`~nodeapi.peers.upstream_numbering.UpstreamNumbering`
(from block 1, as the upstream's own ``searchdb`` plugin would number them;
saved with ``state_path``), and each block goes to the consumers as an
:class:`~nodeapi.applied.AppliedBlock`.

Back-pressure: no new batch is fetched while the consumers hold more than
``max_pending`` documents unshipped.  The connection (login, chain id,
reconnection with a growing delay, failure lines) is a
:class:`~nodeapi.peers.remote.RemoteNode` this service owns; a reply that
is not what the API promises drops the connection like a lost one.  The upstream's operation
history must keep every operation (bitshares-core's defaults).

The visitor of the search database (``searchdb-visitor``) names the assets
of fees, transfers and fills with their symbols and precisions, which an
indexer has no chain state to read: before a batch is handed over, the
assets its operations carry that were not seen before are fetched with one
``database.get_assets`` call, and :meth:`UpstreamService.asset` answers
from that cache (symbols never change; a precision changes only for an
asset without supply).  Likewise the history API of an indexer takes
account names: :meth:`UpstreamService.account_id` asks the upstream
(``database.lookup_account_names``) and keeps what it found (account names
never change).
"""

from typing import Any, Optional

from twisted.application import service
from twisted.application.internet import backoffPolicy
from twisted.internet import defer, task
from twisted.logger import Logger
from zope.interface import implementer

from nodeapi.applied import AppliedBlock
from nodeapi.peers.alarm import Alarm
from nodeapi.peers.errors import MessageTooLarge, PeerDisconnected, PeerRpcError
from nodeapi.peers.progress import CatchUpProgress
from nodeapi.peers.remote import MAX_IN_FLIGHT, IRemoteOwner, RemoteNode, read_head
from nodeapi.peers.replies import BadReply
from nodeapi.peers.upstream_numbering import UpstreamNumbering

#: the callback id of ``set_block_applied_callback``
BLOCK_APPLIED_CB = 1


@implementer(IRemoteOwner)
class UpstreamService(service.MultiService):
    """Follows ``address`` and feeds ``consumers`` (module docstring); the
    owner of a :class:`~nodeapi.peers.remote.RemoteNode` (:attr:`remote`).

    :param address: a :class:`~nodeapi.protocol.node_address.NodeAddress`.
    :param consumers: ``IBlockConsumer`` objects, called in order per block.
    :param reactor: the reactor (connections, timers).
    :param pending: zero-argument callable: documents the consumers hold
        unshipped (back-pressure), or None.
    :param irreversible: follow the last irreversible block (default), or
        the head.
    :param batch: blocks fetched per step (two calls each, all in flight
        at once: the upstream's ``max-calls-in-flight`` must allow them).
    :param poll: seconds between checks of the upstream's head when no
        notice arrives.
    :ivar numbering: the :class:`UpstreamNumbering` of the blocks handed over.
    :ivar upstream_head: the upstream's head block number (last seen).
    :ivar last_block_time: time (s) of the last block handed over, or None.
    :ivar reconnects: (property) connections opened after the first one.
    :ivar assets: ``{asset id: (symbol, precision)}`` of the assets seen
        in the operations handed over (see :meth:`asset`).
    :param asset_names: learn the assets' names (the visitor needs them;
        without it no ``get_assets`` call is made).
    :param state_path: file of the saved numbering
        (:mod:`nodeapi.peers.upstream_numbering`), or None.
    :param confirmed_block: zero-argument callable: the last block whose
        documents the consumers' database confirmed (needed with
        ``state_path``).
    :param choose: zero-argument callable giving the
        :class:`~nodeapi.protocol.node_address.NodeAddress` to follow,
        asked at each connection attempt (a gateway's healthy upstream,
        :meth:`nodeapi.gateway.pool.UpstreamPool.choose_address`; every
        address must serve the same chain); None: always ``address``.
    """

    log = Logger()

    def __init__(self, address, consumers: list, reactor: Any, pending=None,
                 irreversible: bool = True, batch: int = 50, poll: float = 1.0,
                 max_pending: int = 20000, max_message_size: int = 4194304,
                 clock: Optional[Any] = None, state_path: Optional[str] = None,
                 confirmed_block=None, save_every: int = 1000,
                 asset_names: bool = True, choose=None) -> None:
        super().__init__()
        self.consumers = list(consumers)
        self.reactor = reactor
        self.clock = clock if clock is not None else reactor
        self.pending = pending
        self.irreversible = irreversible
        self.batch = batch
        self.poll = poll
        self.max_pending = max_pending
        self.upstream_head = 0
        self.last_block_time = None
        self.assets: dict = {}
        self.asset_names = asset_names
        self._account_ids: dict = {}
        self.numbering = UpstreamNumbering(self.log, state_path, confirmed_block, save_every)
        self.progress = CatchUpProgress(self.clock, self.log,
                                        f"Indexer following {address.url}")
        self.alarm = Alarm(self.clock)
        self.remote = RemoteNode(address, self, reactor=reactor, clock=self.clock,
                                 backoff=backoffPolicy(0.5, 30.0),
                                 what=f"Upstream {address.url}" if choose is None
                                 else "The indexer's upstream",
                                 max_message_size=max_message_size, choose=choose,
                                 max_in_flight=max(MAX_IN_FLIGHT, 2 * batch))
        self.remote.setServiceParent(self)

    @property
    def address(self):
        """The :class:`~nodeapi.protocol.node_address.NodeAddress` followed
        (the last one chosen)."""
        return self.remote.address

    @property
    def protocol(self):
        """The open connection, or None."""
        return self.remote.protocol

    @property
    def reconnects(self) -> int:
        """Connections opened after the first one."""
        return max(self.remote.connections - 1, 0)

    @property
    def next_block(self) -> int:
        """The next block to hand over."""
        return self.numbering.next_block

    @property
    def next_ath(self) -> int:
        """The instance of the next ``2.9`` entry."""
        return self.numbering.next_ath

    def stopService(self) -> defer.Deferred:
        """Stop following; the newest confirmed copy of the numbering is
        written first (a copy confirmed since the last block is not lost)."""
        self.numbering.write_confirmed()
        return super().stopService()

    # -- figures ---------------------------------------------------------------------

    @property
    def lag_blocks(self) -> int:
        """Blocks of the upstream's head not handed over yet."""
        return max(self.upstream_head - (self.next_block - 1), 0)

    @property
    def lag_seconds(self) -> float:
        """Seconds between now and the last block handed over (0 before one)."""
        if self.last_block_time is None:
            return 0.0
        return max(self.clock.seconds() - self.last_block_time, 0.0)

    # -- IRemoteOwner ------------------------------------------------------------------

    def claim_chain(self, remote, chain_id: str) -> bool:
        """The chain of the saved numbering, or any chain for a new one."""
        if self.numbering.chain_id is None:
            self.numbering.chain_id = chain_id
        return chain_id == self.numbering.chain_id

    def connected(self, remote, head) -> defer.Deferred:
        """The connection is ready: follow the upstream on it."""
        return defer.Deferred.fromCoroutine(self._follow(remote.protocol))

    def notice(self, remote, callback_id, payload) -> None:
        """A block-applied notice wakes the loop."""
        if callback_id == BLOCK_APPLIED_CB:
            self.alarm.ring()

    def call_timed_out(self, remote, method: str) -> None:
        """Nothing: the step that made the call fails with it."""

    def failed(self, remote, error) -> bool:
        """A message over the size limit halves the batches."""
        if isinstance(error, MessageTooLarge):
            self.batch = max(self.batch // 2, 1)
            self.log.warn("Upstream {upstream} sent a message over the size limit; batches "
                          "of {batch} blocks now", upstream=self.address.address,
                          batch=self.batch)
        return False

    def lost(self, remote) -> None:
        """The loop wakes and ends (its connection is gone)."""
        self.alarm.ring()

    # -- the loop ----------------------------------------------------------------------

    async def _follow(self, proto) -> None:
        await proto.call("database", "set_block_applied_callback", [BLOCK_APPLIED_CB])
        self.log.info("Following upstream {upstream} (chain {chain}) from block {num}",
                      upstream=self.address.address, chain=self.numbering.chain_id,
                      num=self.next_block)
        while proto is self.protocol and self.running:
            head = read_head(await proto.call("database", "get_dynamic_global_properties",
                                              []), self.numbering.chain_id)
            self.upstream_head = head.head_block_num
            self.remote.succeeded()  # it serves: the backoff starts afresh
            target = head.last_irreversible_block_num if self.irreversible \
                else self.upstream_head
            if self.next_block > target:
                for consumer in self.consumers:  # nothing more for now: ship what is built
                    caught_up = getattr(consumer, "caught_up", None)
                    if caught_up is not None:
                        caught_up()
                await self.alarm.sleep(self.poll)
                self.numbering.keep(self.next_block - 1)
                continue
            last = min(target, self.next_block + self.batch - 1)
            fetched = await defer.gatherResults(
                [self._fetch(proto, n) for n in range(self.next_block, last + 1)],
                consumeErrors=True)
            if proto is not self.protocol:
                return
            if self.asset_names:
                await self._learn_assets(proto, fetched)
            if proto is not self.protocol:
                return
            for num, (block, operations) in zip(range(self.next_block, last + 1), fetched):
                self._hand_over(self.numbering.block(num, block, operations,
                                                     live=num >= target))
                self.progress.step(num, target)
                self.numbering.keep(num)
                await task.deferLater(self.clock, 0, lambda: None)  # let the reactor serve
            while self.pending is not None and self.pending() > self.max_pending \
                    and self.running:
                await self.alarm.sleep(0.1)

    def _fetch(self, proto, num: int) -> defer.Deferred:
        return defer.gatherResults([
            proto.call("database", "get_block", [num]),
            proto.call("history", "get_block_operation_history", [num]),
        ], consumeErrors=True)

    def asset(self, asset_id: str) -> Optional[tuple]:
        """``(symbol, precision)`` of an asset the handed-over operations
        carry, or None (the search database visitor's asset lookup)."""
        return self.assets.get(asset_id)

    def account_id(self, name: str) -> defer.Deferred:
        """``Deferred[account id | None]`` of the account named ``name``,
        asked of the upstream (``database.lookup_account_names``) unless
        known; fails with :class:`~nodeapi.peers.errors.PeerDisconnected`
        while the upstream is not connected, with
        :class:`~nodeapi.peers.errors.PeerRpcError` if it answers with an
        error or the wrong shape."""
        known = self._account_ids.get(name)
        if known is not None:
            return defer.succeed(known)
        if self.protocol is None:
            return defer.fail(PeerDisconnected(
                f"the upstream {self.address.address} is not connected: account names "
                "cannot be looked up now (account ids can)"))

        def found(answer):
            if not isinstance(answer, list) or len(answer) != 1:
                raise PeerRpcError("lookup_account_names",
                                   {"message": "an answer of the wrong shape"})
            obj = answer[0]
            if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
                return None
            self._account_ids[name] = obj["id"]
            return obj["id"]

        return self.remote.call("database", "lookup_account_names",
                                [[name]]).addCallback(found)

    async def _learn_assets(self, proto, fetched: list) -> None:
        """Fetch (one ``get_assets`` call) the assets of ``fetched``'s
        operations not in :attr:`assets` yet: every ``{amount, asset_id}``
        at the top level of an operation (fees, amounts, fills' pays and
        receives)."""
        wanted = set()
        for _block, operations in fetched:
            for h in operations if isinstance(operations, list) else ():
                op = h.get("op") if isinstance(h, dict) else None
                data = op[1] if isinstance(op, list) and len(op) == 2 else None
                for value in data.values() if isinstance(data, dict) else ():
                    if isinstance(value, dict) and "amount" in value:
                        asset_id = value.get("asset_id")
                        if isinstance(asset_id, str) and asset_id not in self.assets:
                            wanted.add(asset_id)
        if not wanted:
            return
        ids = sorted(wanted)
        found = await proto.call("database", "get_assets", [ids])
        if not isinstance(found, list) or len(found) != len(ids):
            raise BadReply("get_assets answered with the wrong shape")
        for asset_id, obj in zip(ids, found):
            if isinstance(obj, dict) and "symbol" in obj and "precision" in obj:
                self.assets[asset_id] = (str(obj["symbol"]), int(obj["precision"]))

    def _hand_over(self, applied: AppliedBlock) -> None:
        """Give the consumers the numbered block."""
        for consumer in self.consumers:
            consumer.block_applied(applied)
        self.last_block_time = applied.timestamp
