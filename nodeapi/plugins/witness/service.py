"""The witness plugin's service: produce a block at every slot of the
clock for the witnesses this node holds keys for.

Graphene reference: libraries/plugins/witness/witness.cpp
(``schedule_production_loop``: :meth:`WitnessService._schedule`;
``maybe_produce_block``: :meth:`WitnessService.maybe_produce_block`).  Not
modelled: ``required-participation`` (graphene refuses below 33 %
participation; a single development node after a long gap would never
produce again, so this node has no such check).  A produced block's way
on: docs/DESIGN.rst, "A block applied by the chain".
"""

from collections import Counter
from typing import Optional

from twisted.application.service import Service
from twisted.internet import defer
from twisted.logger import Logger

from nodeapi.chain import authority as auth
from nodeapi.protocol.times import format_time
from nodeapi.errors import ConfigError, StorageError

#: graphene ``block_production_condition`` values, in its order.
CONDITIONS = ("produced", "not_synced", "not_my_turn", "not_time_yet",
              "no_private_key", "low_participation", "lag", "consecutive",
              "exception")
#: The loop never sleeps less than this (graphene: 50 ms).
MIN_SLEEP = 0.05
#: Largest distance between the slot time and now that still produces (s).
MAX_LAG = 2.5


class WitnessService(Service):
    """Produce blocks on ``chain`` for the witnesses in ``witnesses``.

    :param chain: the :class:`nodeapi.chain.chain.Chain`.
    :param witnesses: ``{witness_id: private key}``; a key is a WIF string
        (or anything :func:`nodeapi.chain.authority.secret_of` takes).
        A malformed key raises :class:`~nodeapi.errors.ConfigError`.
    :param enable_stale_production: produce even when the head block is far
        behind the clock (a new chain, or a lone development node).
    :param clock: the ``IReactorTime`` the loop sleeps on (the node's
        reactor; a ``task.Clock`` in tests).

    :ivar produced: number of blocks produced since start.
    :ivar conditions: ``Counter`` of :data:`CONDITIONS` outcomes.
    :ivar last_condition: the outcome of the last wake-up (or None).
    :ivar last_block: ``(num, id)`` of the last block produced (or None).

    A block that cannot be stored (disk full, I/O error: a
    :class:`~nodeapi.errors.StorageError` from the block log) is rolled
    back by the chain, which stays at its head while the node keeps
    serving; the service logs one line when this starts and one when a
    block is stored again, not a traceback per slot.
    """

    log = Logger()

    def __init__(self, chain, witnesses: dict, enable_stale_production: bool = False, *,
                 clock) -> None:
        self.chain = chain
        self.enable_stale_production = enable_stale_production
        self._production_enabled = enable_stale_production
        self.clock = clock
        self._keys = {}
        for witness_id, key in dict(witnesses).items():
            try:
                public = auth.public_key_of(key, chain.address_prefix)
            except Exception as exc:
                raise ConfigError(f"Bad private key for witness {witness_id}: {exc}") from None
            self._keys[str(witness_id)] = (key, public)
        self.produced = 0
        self.conditions: Counter = Counter()
        self.last_condition: Optional[str] = None
        self.last_block: Optional[tuple] = None
        self._call = None
        self._warned: set = set()
        self._storage_failure: Optional[str] = None  # set while blocks cannot be stored

    @property
    def witness_ids(self) -> list:
        """The witness ids this service produces for, in id order (1.6.2
        before 1.6.10)."""
        return sorted(self._keys, key=lambda witness_id: int(witness_id.rsplit(".", 1)[1]))

    # -- service -----------------------------------------------------------------

    def startService(self) -> None:
        """Start the production loop: the first wake is at the next whole
        second of the clock.  Returns nothing (``IService``)."""
        super().startService()
        self.log.info("Witness plugin: producing for {count} witness(es) {witnesses}, "
                      "stale production {stale}", count=len(self._keys),
                      witnesses=self.witness_ids,
                      stale="enabled" if self.enable_stale_production else "disabled")
        self._schedule()

    def stopService(self) -> defer.Deferred:
        """Stop the loop: cancel the next wake.  Returns an already fired
        Deferred: nothing is waited for, since production is synchronous
        (``chain.generate_block`` runs to its end inside one reactor
        callback) and no block can be in progress when the reactor runs
        this.  Called from inside production (a block consumer stopping the
        service), the block in hand still finishes after the consumer
        returns, and no further wake is scheduled."""
        super().stopService()
        if self._call is not None and self._call.active():
            self._call.cancel()
        self._call = None
        return defer.succeed(None)

    def _schedule(self) -> None:
        """Sleep until the next whole second, at least :data:`MIN_SLEEP`
        ahead, else one second later (graphene
        ``schedule_production_loop``), so the loop sees every slot boundary
        of any ``block_interval``."""
        now = self.clock.seconds()
        delay = 1.0 - (now % 1.0)
        if delay < MIN_SLEEP:
            delay += 1.0
        self._call = self.clock.callLater(delay, self._wake)

    def _wake(self) -> None:
        self._call = None
        try:
            condition = self.maybe_produce_block()
        except StorageError as exc:
            # disk full, I/O error: the chain rolled the block back and stays
            # at its head; one line when it starts, one when it recovers
            condition = "exception"
            if self._storage_failure is None:
                self.log.error("Witness plugin: production paused, blocks cannot be stored: "
                               "{error}", error=str(exc), log_event="storage_failed")
            self._storage_failure = str(exc)
        except Exception:
            condition = "exception"
            self.log.failure("Witness plugin: block production failed")
        if condition == "produced" and self._storage_failure is not None:
            self._storage_failure = None
            self.log.info("Witness plugin: blocks are stored again, production resumed at "
                          "block #{block_num}", block_num=self.chain.head_block_num,
                          log_event="storage_recovered")
        self.conditions[condition] += 1
        self.last_condition = condition
        if self.running:
            self._schedule()

    # -- production ---------------------------------------------------------------

    def maybe_produce_block(self, now: Optional[int] = None) -> str:
        """One production attempt at ``now`` (whole seconds; default: the
        clock plus 0.5 s, truncated, so a wake a little late or early
        still lands on the boundary), as graphene's ``maybe_produce_block``:
        disabled while the chain is stale (the next slot after the head is
        already past: catch up from peers first) unless
        ``enable_stale_production``, on for good once in sync; the slot is
        ``chain.get_slot_at_time(now)`` (after a long gap the *current*
        slot, the slots in between missed); produced only if the scheduled
        witness is ours, its on-chain signing key is our key's public key
        and the slot time is within :data:`MAX_LAG` of now.  Returns the
        condition name (:data:`CONDITIONS`); a produced block is logged and
        counted.  Exceptions of ``chain.generate_block`` propagate (the loop
        logs them)."""
        chain = self.chain
        if now is None:
            now = int(self.clock.seconds() + 0.5)
        if not self._production_enabled:
            if chain.get_slot_time(1) >= now:
                self._production_enabled = True
                self.log.info("Witness plugin: chain is in sync, production enabled")
            else:
                if "not_synced" not in self._warned:
                    self._warned.add("not_synced")
                    self.log.info(
                        "Not producing block because production is disabled until we "
                        "receive a recent block (head block time {head_time}, now {now}; "
                        "see --enable-stale-production)",
                        head_time=format_time(chain.head_block_time), now=format_time(now))
                return "not_synced"
        slot = chain.get_slot_at_time(now)
        if slot == 0:
            return "not_time_yet"
        witness = chain.get_scheduled_witness(slot)
        held = self._keys.get(witness)
        if held is None:
            return "not_my_turn"
        key, public = held
        signing = chain.state.objects[witness]["signing_key"]
        if public != signing:
            if ("key", witness, signing) not in self._warned:
                self._warned.add(("key", witness, signing))
                self.log.warn("Witness plugin: no private key for {witness}'s signing key "
                              "{signing_key}; not producing its blocks",
                              witness=witness, signing_key=signing)
            return "no_private_key"
        scheduled = chain.get_slot_time(slot)
        if abs(scheduled - now) > MAX_LAG:
            self.log.warn("Witness plugin: not producing, slot time {scheduled} is more "
                          "than {lag} s from now {now}", scheduled=format_time(scheduled),
                          lag=MAX_LAG, now=format_time(now))
            return "lag"
        block = chain.generate_block(scheduled, witness, key)
        self.produced += 1
        self.last_block = (chain.head_block_num, chain.head_block_id)
        self.log.info(
            "Generated block #{block_num} with timestamp {timestamp} at time {now} by "
            "{witness} ({trx_count} transactions, {missed} missed slots)",
            block_num=chain.head_block_num, block_id=chain.head_block_id,
            timestamp=block["timestamp"], now=format_time(now), witness=witness,
            trx_count=len(block["transactions"]), missed=slot - 1)
        return "produced"
