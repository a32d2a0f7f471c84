"""The devnet: blocks on demand, time travel, snapshots, a faucet - what
anvil and the hardhat network give Ethereum developers, on a graphene chain.

:class:`Devnet` is the service of ``twistd nodeapi --devnet`` (in place of
the witness plugin) and the object the ``devnet`` API set drives
(``node.devnet``): automine and interval mining, each block produced by
the witness scheduled for its slot and signed with the development key
(:meth:`Devnet.produce_block`, as bitshares-core's
``debug_generate_blocks``); the devnet's clock, the wall clock plus
:attr:`Devnet.offset`, and the block-time rule
(:meth:`Devnet.next_block_time`, :data:`MAX_LEAD`); snapshots and dumps
(:mod:`nodeapi.devnet.snapshots`); the ready accounts
(:mod:`nodeapi.devnet.accounts`) and the faucet
(:meth:`Devnet.create_account`).  What a user can rely on (a transaction
the devnet accepted is in the next block; the head never far ahead of the
clock): README "Devnet"; the chain's hooks it uses: docs/DESIGN.rst,
``nodeapi/devnet/``.
"""

import attr
from twisted.application import service
from twisted.internet import defer, task
from twisted.logger import Logger

from nodeapi.chain import authority as auth
from nodeapi.chain.balances import adjust_balance
from nodeapi.chain.remote import NotHereYet, call_loading
from nodeapi.devnet import accounts as acc
from nodeapi.devnet import snapshots
from nodeapi.errors import ApiError, ChainError
from nodeapi.protocol.asset import asset
from nodeapi.protocol.config import MAX_SHARE_SUPPLY
from nodeapi.chain.errors import TransactionExpired
from nodeapi.protocol.keys import PrivateKey
from nodeapi.protocol.operations import operation_name
from nodeapi.protocol.times import format_time, parse_time

#: blocks produced between two returns to the reactor
BATCH = 50
#: seconds the head may be ahead of the time asked for (the wall clock plus
#: :attr:`Devnet.asked`) before automine waits for the clock, the pending
#: transactions then sharing the next block, and the block timer skips its
#: turn (bitshares-core's witness plugin never produces before its slot,
#: witness.cpp ``not_time_yet``).  A burst of transactions in one second
#: takes one block each until then, well inside python-bitshares' 30 s
#: expirations stamped from the wall clock, which a head far ahead would
#: expire; :meth:`Devnet.produce_blocks` and :meth:`Devnet.advance_time`
#: are asked for: they go ahead regardless and move the clock with them.
MAX_LEAD = 10
#: transfers funding the ready accounts per transaction (one of about 40
#: bytes each: well within maximum_transaction_size, 2048 in the genesis)
TRANSFERS_PER_TRX = 20


@attr.s(slots=True, frozen=True, auto_attribs=True)
class DevnetOptions:
    """``--devnet-accounts``, ``--devnet-seed``, ``--block-interval``
    (seconds, 0 = only on demand), ``--load-state`` (a path or None), the
    producing key (WIF; the bundled genesis' development key), the
    balance of each ready account (core satoshis),
    ``--devnet-max-snapshots`` (snapshots held at once), ``--fork-url`` (a
    ``NodeAddress`` or None), ``--fork-block``, ``--max-message-size``
    (the fork's replies) and the seconds the live node has to answer a
    fork's call."""

    accounts: int = 10
    seed: str = acc.DEFAULT_SEED
    block_interval: int = 0
    load_state: str | None = None
    key: str = ""
    balance: int = acc.DEFAULT_BALANCE
    max_snapshots: int = 1000
    fork_url: object = None
    fork_block: int = 0
    max_message_size: int = 4 * 1024 * 1024
    fork_timeout: float = 30.0


class Devnet(service.Service):
    """The devnet of ``chain`` on ``clock``.

    :param announce: ``fn() -> str``: the WebSocket URL to print (the RPC
        port is known once bound), or None.
    :ivar offset: seconds the devnet's clock is ahead of the wall clock.
    :ivar asked: the part of :attr:`offset` asked for (advance_time,
        increase_time, set_next_block_time, blocks asked for, a loaded or
        reverted state); the rest (at most :data:`MAX_LEAD`) is automine's
        bursts.
    :ivar accounts: the ready accounts (:class:`~nodeapi.devnet.accounts.DevAccount`).
    """

    log = Logger()

    def __init__(self, chain, options: DevnetOptions, *, clock, announce=None) -> None:
        self.chain = chain
        self.options = options
        self.clock = clock
        self.announce = announce
        self.key = options.key
        self._signer = PrivateKey.from_wif(options.key)  # parsed once: it signs each block
        self.public = auth.public_key_of(self._signer, chain.address_prefix)
        self.accounts = acc.dev_accounts(options.seed, options.accounts, chain.address_prefix)
        self.offset = 0
        self.asked = 0
        self._snapshots: dict = {}
        self._next_snapshot = 1
        self._mine = None
        self._loop = None
        self._next_time = None  # set_next_block_time
        self._live = None  # a lazy fork: the live node (nodeapi.devnet.fork.LiveNode)
        self._loader = None  # ... and its loader
        self._fork_head = 0  # ... and the live chain's head it forked at
        self._fork_id = None
        #: automine on (anvil evm_setAutomine)
        self.automine = True
        #: automine follows each block it makes with an empty one
        #: (:meth:`set_confirming_blocks`)
        self.confirming = False

    # -- service -----------------------------------------------------------------

    def prepare(self):
        """``NodeService`` awaits this before starting its children: with
        ``fork_url``, the fork of that node (:mod:`nodeapi.devnet.fork`):
        lazy at its head (``fork_block`` 0 or the head; the ready accounts
        made at once), synced up to an earlier ``fork_block``; a Deferred,
        failing with :class:`~nodeapi.devnet.fork.ForkError` (the node
        stops with it)."""
        if self.options.fork_url is None:
            return None
        return defer.Deferred.fromCoroutine(self._fork())

    async def _fork(self) -> None:
        from nodeapi.devnet.fork import ForkError, LiveNode, fork_lazily, sync_from

        options = self.options
        node = LiveNode(options.fork_url, self.clock, max_message_size=options.max_message_size,
                        timeout=options.fork_timeout)
        await node.connect()
        props = await node.call("get_dynamic_global_properties")
        head = int(props["head_block_number"])
        if options.fork_block > head:
            node.close()
            raise ForkError(f"--fork-block {options.fork_block} is past the head {head} of "
                            f"{options.fork_url.url}")
        if options.fork_block and options.fork_block < head:
            node.close()
            await sync_from(self.chain, options.fork_url, options.fork_block, self.clock,
                            max_message_size=options.max_message_size, log=self.log)
            return
        started = self.clock.seconds()
        self.chain.irreversible_follows_head = True  # from the devnet's first block on
        self._live = node
        self._loader = await fork_lazily(
            self.chain, node, dev_key=self.public, dev_names=[a.name for a in self.accounts],
            registrar=acc.REGISTRAR, log=self.log)
        self._loader.remote.sinks.append(self._hold_in_snapshots)
        self._fork_head, self._fork_id = self.chain.head_block_num, self.chain.head_block_id
        await call_loading(self._accounts_on_lazy_fork)
        self.log.info("Devnet fork ready in {seconds:.2f} s: {calls} calls to {url}",
                      seconds=self.clock.seconds() - started, calls=node.calls,
                      url=options.fork_url.url)

    def _accounts_on_lazy_fork(self) -> None:
        """One attempt at the ready accounts of a lazy fork (what is
        missing is fetched between attempts, :func:`call_loading`): the
        first block moves the head to the devnet's clock, then the
        accounts (:meth:`_make_accounts_on_fork`); an attempt stopped by
        missing state leaves nothing pending."""
        chain = self.chain
        try:
            if chain.head_block_num == self._fork_head:
                self.produce_block()
            self._make_accounts_on_fork(first_block=False)
        except NotHereYet:
            for entry in list(chain.pending.entries):
                chain.drop_pending(entry[2])
            raise

    def _hold_in_snapshots(self, oid: str, obj: dict) -> None:
        """A lazy fork fetched ``oid``: the snapshots held get it too, so a
        revert to one taken before keeps it (base state)."""
        for snap in self._snapshots.values():
            snap.chain.append((oid, obj))

    def startService(self) -> None:
        """Load the state file, make the ready accounts on a fresh chain
        (funded and upgraded to lifetime members: they can register
        accounts, as anvil's accounts can deploy), start automining (and
        the block timer), log the account table."""
        super().startService()
        self.chain.irreversible_follows_head = True
        if self.options.load_state:
            extra = snapshots.load(self.chain, self.options.load_state)
            self.offset = self.asked = int(extra.get("offset", 0))
            self.log.info("Devnet state loaded from {path}: head block {num}",
                          path=self.options.load_state, num=self.chain.head_block_num)
        if self.chain.head_block_num == 0:  # a fresh chain (not a loaded state or a fork)
            self._make_accounts()
        elif self.options.fork_url is not None:
            self.log.info("Devnet forked from {url} at block {num} ({id})",
                          url=self.options.fork_url.url,
                          num=self._fork_head or self.chain.head_block_num,
                          id=self._fork_id or self.chain.head_block_id)
            if self._loader is None:  # a synced fork (a lazy one made them in prepare)
                self._make_accounts_on_fork()
        self.chain.add_pending_observer(self._pending)
        self.chain.pending.checks.append(self._admit)
        self.chain.pending.rejections.append(self._rejected)
        self.set_interval_mining(self.options.block_interval)
        url = self.announce() if self.announce is not None else ""
        self.log.info("{table}", table=acc.table(self.chain, self.accounts, self.options.seed,
                                                 self.key, url))
        self.log.info("Devnet ready on {url}", url=url)

    def stopService(self):
        """Stop automining and the block timer."""
        super().stopService()
        if self._pending in self.chain.pending.observers:
            self.chain.remove_pending_observer(self._pending)
        for hooks, fn in ((self.chain.pending.checks, self._admit),
                          (self.chain.pending.rejections, self._rejected)):
            if fn in hooks:
                hooks.remove(fn)
        if self._mine is not None and self._mine.active():
            self._mine.cancel()
        self._mine = None
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if self._live is not None:
            self._live.close()
        return defer.succeed(None)

    def _make_accounts_on_fork(self, first_block: bool = True) -> None:
        """The ready accounts on a fork, when the live chain lets them be
        made (the faucet ``init0`` can claim or pay, the names are free);
        else none, the reason logged, nothing left pending.
        ``first_block``: as :meth:`_make_accounts`."""
        chain = self.chain
        if acc.REGISTRAR not in chain.state.account_by_name:
            self.log.warn("Devnet fork: no ready accounts, the live chain has no {name}; use "
                          "impersonate_account and set_balance", name=acc.REGISTRAR)
            return
        taken = [a.name for a in self.accounts if a.name in chain.state.account_by_name]
        if taken:
            self.log.warn("Devnet fork: no ready accounts, {names} exist on the live chain",
                          names=taken)
            return
        try:
            self._make_accounts(first_block)
        except ChainError as exc:
            for entry in list(chain.pending.entries):
                chain.drop_pending(entry[2])
            self.log.warn("Devnet fork: no ready accounts ({error}); use impersonate_account "
                          "and set_balance", error=str(exc))

    def _make_accounts(self, first_block: bool = True) -> None:
        """Claim, register, fund and upgrade the ready accounts; with
        ``first_block``, a block first (the head moves from the genesis or
        fork time to now)."""
        chain = self.chain
        if first_block:
            self.produce_block()
        registrar = chain.state.account_by_name[acc.REGISTRAR]
        claims = acc.claim_ops(chain, registrar, self.key)
        if claims:
            chain.push_transaction(acc.signed(chain, claims, [self.key]))
        for a in self.accounts:
            chain.push_transaction(acc.signed(
                chain, acc.create_ops(registrar, a.name, a.public_key), [self.key]))
        # the new accounts are in the pending state: funded (their balance
        # and the lifetime membership fee) and upgraded in the same block
        ready = [(a, chain.state.account_by_name[a.name]) for a in self.accounts]
        fee = int(chain.required_fee(acc.upgrade_op(registrar))["amount"]) if ready else 0
        transfers = [acc.transfer_op(registrar, oid, self.options.balance + fee)
                     for _a, oid in ready]
        for start in range(0, len(transfers), TRANSFERS_PER_TRX):
            chain.push_transaction(acc.signed(chain, transfers[start:start + TRANSFERS_PER_TRX],
                                              [self.key]))
        for start in range(0, len(ready), TRANSFERS_PER_TRX):
            batch = ready[start:start + TRANSFERS_PER_TRX]
            chain.push_transaction(acc.signed(chain, [acc.upgrade_op(oid) for _a, oid in batch],
                                              [a.wif for a, _oid in batch]))
        self.produce_block()

    # -- blocks ------------------------------------------------------------------

    def now(self) -> int:
        """The devnet's clock in whole seconds (wall clock + offset)."""
        return int(self.clock.seconds()) + self.offset

    def _earliest_expiration(self) -> int | None:
        """The earliest expiration (seconds) of the pending transactions,
        None when none is pending."""
        pending = self.chain.pending_transactions
        return min((parse_time(trx["expiration"]) for trx in pending), default=None)

    def next_block_time(self) -> int:
        """The time of the next block the devnet produces on its own or on
        :meth:`produce_blocks`: the slot at :meth:`now` (or at
        the time :meth:`set_next_block_time` gave), the next slot when that
        is not after the head; moved back to the last slot before the
        earliest pending expiration when it is not before it, so every
        pending transaction is valid in that block, however long the
        devnet was idle (bitshares-core drops an expired one,
        database::_generate_block; bitsharesjs takes its expiration from
        the head block time plus 15 s once the head is 30 s old)."""
        chain = self.chain
        first = chain.get_slot_time(1)
        wanted = self._next_time if self._next_time is not None else self.now()
        target = chain.get_slot_time(max(chain.get_slot_at_time(wanted), 1))
        expiration = self._earliest_expiration()
        if self._next_time is None and expiration is not None and target >= expiration:
            target = chain.get_slot_time(max(chain.get_slot_at_time(expiration - 1), 1))
        return max(target, first)

    def produce_block(self, when: int | None = None) -> dict:
        """Produce one block at the slot of ``when`` (default
        :meth:`next_block_time`), or at the next slot when that is not
        after the head; the devnet's clock is moved to it when it is past
        the clock.  Returns the block."""
        chain = self.chain
        if when is None:
            when = self.next_block_time()
            self._next_time = None  # set_next_block_time is for one block
        target = max(when, chain.get_slot_time(1))
        slot = chain.get_slot_at_time(target)
        witness = chain.get_scheduled_witness(slot)
        if chain.state.objects[witness]["signing_key"] != self.public:
            chain.debug_update({"_action": "update", "id": witness, "signing_key": self.public})
        block = chain.generate_block(chain.get_slot_time(slot), witness, self._signer)
        self._follow_head()
        return block

    def _admit(self, trx: dict) -> None:
        """Refuse ``trx`` (a pushed transaction) when no block the devnet
        can produce next would include it: expired at or before the next
        slot.

        :raises TransactionExpired: naming the devnet's head time, its
            clock and the reason."""
        chain = self.chain
        expiration = parse_time(trx["expiration"])
        head = chain.head_block_time
        first = chain.get_slot_time(1)
        earliest = max(first, self._next_time or 0)
        if expiration > earliest:
            return
        ahead = self.offset
        why = (f"the devnet's head block time is {format_time(head)} and its clock "
               f"{format_time(self.now())}"
               + (f" ({ahead} s ahead of the wall clock: advance_time, increase_time or "
                  f"blocks asked for)"
                  if ahead > 0 else "")
               + f"; its next block is at {format_time(earliest)} at the earliest, so this "
               f"transaction could never be in a block: take the expiration from the head "
               f"block time (get_head) plus at least {earliest - head + 1} s")
        if expiration <= head:  # the chain's own rule, its text first
            raise TransactionExpired(f"Transaction expired: expiration {trx['expiration']} "
                                     f"is not after head block time {format_time(head)}; "
                                     + why)
        raise TransactionExpired(f"Transaction expiration {trx['expiration']} is not after "
                                 f"the devnet's next block time: " + why)

    def _rejected(self, trx: dict, error) -> None:
        """Log a transaction the devnet refused and why (as anvil prints
        them on its console); not one a lazy fork pushes again once what
        it needs is loaded."""
        if isinstance(error, NotHereYet):
            return
        names = []
        for op in (trx.get("operations") if isinstance(trx, dict) else None) or ():
            try:
                names.append(operation_name(op[0]))
            except Exception:  # a malformed one: its error says what
                names.append("?")
        details = getattr(error, "details", None)
        self.log.warn("Devnet refused a transaction ({operations}): {error}{more}",
                      operations=names, error=str(error),
                      more=f" {details}" if details else "", details=details,
                      log_event="devnet_rejected")

    def _pending(self, _trx) -> None:
        if self._mine is None and self.automine:
            self._mine = self.clock.callLater(0, self._automine)

    def _automine(self) -> None:
        self._mine = None
        if not self.automine or not self.chain.pending_transactions:
            return
        lead = self._lead()
        if lead >= MAX_LEAD:  # wait for the clock; what is pending shares the block
            self._mine = self.clock.callLater(lead - MAX_LEAD + 1, self._automine)
            return
        head = self.chain.head_block_num
        self._produce_logged()
        if self.confirming and self.chain.head_block_num > head \
                and self._lead() < MAX_LEAD:
            self._produce_logged()  # the confirming block: the one before is irreversible

    def _lead(self) -> int:
        """Seconds the next slot is past the time asked for (the wall clock
        plus :attr:`asked`)."""
        return self.chain.get_slot_time(1) - 1 - (int(self.clock.seconds()) + self.asked)

    def _timer(self) -> None:
        if self._lead() < MAX_LEAD:
            self._produce_logged()

    def _produce_logged(self) -> None:
        try:
            self.produce_block()
        except NotHereYet as missing:  # a lazy fork: fetch, then produce
            head = self.chain.head_block_num

            def again():  # unless another turn made the block meanwhile
                if self.chain.head_block_num == head:
                    self.produce_block()

            d = missing.fetch().addCallback(lambda _: call_loading(again))
            d.addErrback(lambda f: self.log.failure("Devnet: block production failed", f))
        except Exception:
            self.log.failure("Devnet: block production failed")

    def _follow_head(self) -> None:
        """Move the devnet's clock to the head when the head is past it
        (a burst's blocks at the next slots): the head is never ahead of
        the clock."""
        self.offset = max(self.offset, self.chain.head_block_time - int(self.clock.seconds()))

    def produce_blocks(self, count: int) -> defer.Deferred:
        """Produce ``count`` blocks (each at the devnet's clock or the next
        slot), returning to the reactor every :data:`BATCH` blocks; a
        Deferred firing with the head block number."""
        return defer.Deferred.fromCoroutine(self._produce(count))

    async def _produce(self, count: int) -> int:
        for i in range(count):
            await call_loading(self.produce_block)
            if (i + 1) % BATCH == 0 and i + 1 < count:
                await task.deferLater(self.clock, 0, lambda: None)
        # the devnet's clock follows the blocks asked for (anvil_mine moves
        # time too), so automine and the timer carry on from the head
        self._follow_head()
        self.asked = self.offset
        return self.chain.head_block_num

    def advance_time(self, seconds: int) -> dict:
        """Move the chain's time ``seconds`` (>= 1) past the head block: one
        block at that time (the slots in between are missed), and the
        devnet's clock at least there from now on, so everything due
        happens in that block as graphene would apply it: maintenance
        (votes, fees, budget), vesting, expirations of orders, proposals,
        HTLCs, credit deals, feeds.  Returns :meth:`head`."""
        return self._advance_to(self.chain.head_block_time + seconds)

    def advance_to_maintenance(self) -> dict:
        """Produce the block at the next maintenance time (the dynamic
        global properties' ``next_maintenance_time``): maintenance runs in
        it.  Returns :meth:`head`."""
        return self._advance_to(self.chain.dgp["next_maintenance_time"])

    def _advance_to(self, when: int) -> dict:
        self.offset = max(self.offset, when - int(self.clock.seconds()))
        self.asked = self.offset
        self.produce_block(when)
        return self.head()

    def increase_time(self, seconds: int) -> dict:
        """Move the devnet's clock ``seconds`` on without producing a block
        (anvil ``evm_increaseTime``): the next block is stamped that much
        later (within the pending expirations, :meth:`next_block_time`).
        Returns :meth:`head`."""
        self.offset += seconds
        self.asked = self.offset
        return self.head()

    def set_next_block_time(self, when: int) -> str:
        """Stamp the next block produced at ``when`` (seconds; anvil
        ``evm_setNextBlockTimestamp``), or the next slot when that is not
        after the head; the devnet's clock goes on from there.  Returns
        the time as text.

        :raises ApiError: ``when`` not after the head block time."""
        head = self.chain.head_block_time
        if when <= head:
            raise ApiError(f"The next block time must be after the head block time "
                           f"{format_time(head)}, got {format_time(when)}")
        self._next_time = when
        self.offset = max(self.offset, when - int(self.clock.seconds()))
        self.asked = self.offset
        return format_time(when)

    def set_automine(self, enabled: bool) -> bool:
        """Automine on or off (anvil ``evm_setAutomine``); off, accepted
        transactions wait for :meth:`produce_blocks` or the block timer.
        Turned on, what is pending is mined on the next turn.  Returns
        ``enabled``."""
        self.automine = bool(enabled)
        if self.automine and self.chain.pending_transactions:
            self._pending(None)
        return self.automine

    def set_confirming_blocks(self, enabled: bool) -> bool:
        """Automine follows each block it makes with an empty one at the
        next slot (``enabled``), or not (the default).  The last
        irreversible block of a devnet is the one before the head (python-
        bitshares takes its TaPoS from the header of the block after it,
        so the head itself cannot be): with confirming blocks the block
        holding a transaction is irreversible as soon as it is made, and
        an irreversible stream (python-bitshares ``Blockchain.stream()``)
        sees a bot's own transfer or fill without waiting for another
        transaction, at the cost of two blocks per mined block.  Returns
        ``enabled``."""
        self.confirming = bool(enabled)
        return self.confirming

    def set_interval_mining(self, seconds: int) -> int:
        """A block every ``seconds`` (0: no timer; anvil
        ``evm_setIntervalMining``), empty or not; automine is left as it
        is.  Returns ``seconds``."""
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self._loop = None
        if seconds:
            self._loop = task.LoopingCall(self._timer)
            self._loop.clock = self.clock
            self._loop.start(seconds, now=False)
        return seconds

    def pending_transactions(self) -> list:
        """The accepted transactions not yet in a block, in arrival order:
        ``[{"id", "transaction"}]`` (anvil ``txpool_content``)."""
        return [{"id": trx_id, "transaction": trx}
                for trx, _packed, trx_id in self.chain.pending.entries]

    def drop_transaction(self, trx_id: str) -> list:
        """Drop pending transaction ``trx_id`` (anvil
        ``anvil_dropTransaction``), and those that fail without it;
        returns the ids dropped.

        :raises ApiError: no such pending transaction."""
        dropped = self.chain.drop_pending(trx_id)
        if not dropped:
            raise ApiError(f"No pending transaction {trx_id}: pending are "
                           f"{[e[2] for e in self.chain.pending.entries] or 'none'}")
        return dropped

    def impersonate_account(self, account_id: str) -> list:
        """Accept transactions needing ``account_id``'s authority (active
        or owner) without its signatures (anvil
        ``anvil_impersonateAccount``): in the pending state and in the
        blocks this devnet produces (``Chain.impersonated``); other
        authorities a transaction needs must still sign.  Returns the
        impersonated account ids."""
        self.chain.impersonated.add(account_id)
        return sorted(self.chain.impersonated)

    def stop_impersonating_account(self, account_id: str) -> list:
        """Undo :meth:`impersonate_account` (anvil
        ``anvil_stopImpersonatingAccount``); the impersonated ids left."""
        self.chain.impersonated.discard(account_id)
        return sorted(self.chain.impersonated)

    def head(self) -> dict:
        """``{"head_block_number", "head_block_id", "time", "offset",
        "clock", "next_block_time", "automine"}`` (times as text)."""
        chain = self.chain
        return {"head_block_number": chain.head_block_num, "head_block_id": chain.head_block_id,
                "time": format_time(chain.head_block_time), "offset": self.offset,
                "clock": format_time(self.now()),
                "next_block_time": format_time(self.next_block_time()),
                "automine": self.automine}

    # -- state -------------------------------------------------------------------

    def snapshot(self) -> int:
        """Capture the node state (:func:`nodeapi.devnet.snapshots.capture`,
        with the clock offset); returns its id (1, 2, ...).

        :raises ApiError: ``max_snapshots`` are held already (each holds a
            copy of the object store's references: memory)."""
        limit = self.options.max_snapshots
        if len(self._snapshots) >= limit:
            raise ApiError(f"The devnet holds {limit} snapshots already "
                           f"(--devnet-max-snapshots): revert to one of them, which drops it "
                           f"and every later one, before taking more")
        sid = self._next_snapshot
        self._snapshots[sid] = snapshots.capture(self.chain, {"offset": self.offset})
        self._next_snapshot += 1
        return sid

    def revert(self, sid: int) -> bool:
        """Put the node back to snapshot ``sid``; it and every later one
        are dropped (anvil ``evm_revert``); subscribers are told of the
        objects it changed (``Chain.notify_state_changed``).  Returns True.

        :raises ApiError: no such snapshot."""
        snap = self._snapshots.get(sid)
        if snap is None:
            raise ApiError(f"No devnet snapshot {sid}: ids still held are "
                           f"{sorted(self._snapshots) or 'none'}")
        if self._mine is not None and self._mine.active():
            self._mine.cancel()
        self._mine = None
        before = dict(self.chain.state.objects)  # objects are never changed in place
        snapshots.restore(self.chain, snap)
        after = self.chain.state.objects
        self.chain.notify_state_changed(
            [oid for oid in before.keys() | after.keys() if before.get(oid) != after.get(oid)])
        self.offset = self.asked = snap.extra.get("offset", 0)
        for later in [k for k in self._snapshots if k >= sid]:
            del self._snapshots[later]
        return True

    def dump_state(self, path: str) -> int:
        """Write the node state and its blocks to ``path``
        (:func:`nodeapi.devnet.snapshots.dump`); returns the head number.
        ``path`` is the caller's (the devnet API confines it to
        ``--api-output-dir``).

        :raises ApiError: a lazy fork (:meth:`_not_on_lazy_fork`)."""
        self._not_on_lazy_fork()
        return snapshots.dump(self.chain, path, {"offset": self.offset})

    def dump_text(self) -> str:
        """The text :meth:`dump_state` would write (what ``--load-state``
        reads).

        :raises ApiError: a lazy fork (:meth:`_not_on_lazy_fork`)."""
        self._not_on_lazy_fork()
        return snapshots.dump_text(self.chain, {"offset": self.offset})[1]

    def _not_on_lazy_fork(self) -> None:
        """Refuse a state file of a lazy fork: it holds only what was
        touched and none of the live chain's blocks, so ``--load-state``
        could not start from it."""
        if self._loader is not None:
            raise ApiError("dump_state: a devnet forked lazily holds only the objects it "
                           "touched and none of the live chain's blocks; its state cannot be "
                           "written (take a snapshot, or fork again)")

    # -- accounts ----------------------------------------------------------------

    def create_account(self, name: str, public_key: str, amount: int, *,
                       active_key: str | None = None, memo_key: str | None = None,
                       referrer: str | None = None) -> dict:
        """Register ``name`` (owner key ``public_key``; active and memo keys
        the same unless given) by the faucet ``init0`` (the referrer too
        unless ``referrer``, an account id, is given) and send it
        ``amount`` core satoshis, in one transaction put in a block
        produced now: the transfer names the id the account gets (the next
        ``1.2`` instance of the pending state), so a transfer the chain
        refuses (more than the faucet holds) refuses the registration with
        it (graphene applies a transaction whole or not at all).  Returns
        ``{"name", "id", "public_key"}``.

        :raises ApiError: ``amount`` not an integer 0..MAX_SHARE_SUPPLY.
        :raises ChainError: a taken or invalid name, a bad key, a transfer
            the faucet cannot pay; nothing registered."""
        if isinstance(amount, bool) or not isinstance(amount, int) \
                or not 0 <= amount <= MAX_SHARE_SUPPLY:
            raise ApiError(f"amount must be an integer 0..{MAX_SHARE_SUPPLY} of core "
                           f"satoshis, got {amount!r}")
        chain = self.chain
        registrar = chain.state.account_by_name[acc.REGISTRAR]
        ops = acc.create_ops(registrar, name, public_key, active_key=active_key,
                             memo_key=memo_key, referrer=referrer)
        if amount:
            new_id = f"1.2.{chain.next_object_instance('1.2')}"
            ops.append(acc.transfer_op(registrar, new_id, amount))
        chain.push_transaction(acc.signed(chain, ops, [self.key]))
        try:
            self.produce_block()
        except NotHereYet:  # a lazy fork: automine makes the block once loaded
            self._produce_logged()
        oid = chain.state.account_by_name[name]
        return {"name": name, "id": oid, "public_key": public_key}

    def routes(self) -> dict:
        """``{path: resource}`` the devnet adds to the RPC port: the faucet
        (:mod:`nodeapi.devnet.faucet`)."""
        from nodeapi.devnet.faucet import FAUCET_PATH, FaucetResource

        return {FAUCET_PATH: FaucetResource(self)}

    def set_balance(self, account_id: str, asset_id: str, amount: int) -> dict:
        """Set the account's balance of the asset to ``amount`` satoshis by
        a debug change of the committed state (as the debug API's updates,
        not in the block log): the balance object and the asset's
        ``current_supply`` move by the difference.  Returns the balance
        ``{"amount", "asset_id"}``.

        :raises ApiError: the supply would leave 0..max_supply."""
        def change(state):
            delta = amount - state.balance(account_id, asset_id)
            asset_object = state.objects[asset_id]
            dyn_id = asset_object["dynamic_asset_data_id"]
            supply = int(state.objects[dyn_id]["current_supply"]) + delta
            if not 0 <= supply <= int(asset_object["options"]["max_supply"]):
                raise ApiError(f"set_balance: the supply of {asset_object['symbol']} would be "
                               f"{supply}, outside 0..{asset_object['options']['max_supply']}")
            if delta:
                adjust_balance(state, account_id, asset_id, delta)
                state.modify(dyn_id)["current_supply"] = supply

        self.chain.debug_apply(change)
        return asset(self.chain.state.balance(account_id, asset_id), asset_id)
