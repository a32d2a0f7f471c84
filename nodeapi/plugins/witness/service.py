"""The witness plugin: produce a block at every slot of the clock for the
witnesses this node holds keys for.

Graphene reference: libraries/plugins/witness/witness.cpp
(``schedule_production_loop`` and ``maybe_produce_block``):

- the loop wakes at each whole second of the clock (at least 50 ms ahead,
  else one second later), so it sees every slot boundary of any
  ``block_interval``;
- ``now`` is the wake time plus 0.5 s, truncated to whole seconds, so a wake
  that is a little late or early still lands on the boundary;
- production stays disabled while the chain is stale (the next slot after
  the head is already in the past: the node must first catch up from peers)
  unless ``enable_stale_production``; once the chain is in sync it stays on;
- the slot is ``chain.get_slot_at_time(now)`` - after a long gap (stale
  production over an old head) that is the *current* slot, whose time is
  ``chain.get_slot_time(slot)`` <= now, and the slots in between count as
  missed (``Chain`` semantics);
- the block is produced only if the scheduled witness is one of ours, its
  on-chain signing key is the public key of the key we hold, and the slot
  time is within 2.5 s of now (graphene's ``lag`` check);
- each outcome is one of graphene's ``block_production_condition`` names
  (:data:`CONDITIONS`), counted in :attr:`WitnessService.conditions`.

A block that cannot be stored (disk full, I/O error: a
:class:`~nodeapi.errors.StorageError` from the block log) is rolled back by
the chain, which stays at its head while the node keeps serving; the
witness logs one line when this starts and one when a block is stored
again, not a traceback per slot.

Not modelled: ``required-participation`` (graphene refuses below 33 %
participation; a single development node after a long gap would never
produce again, so this node has no such check).

Production is synchronous in the reactor thread (``chain.generate_block``
runs to its end inside one reactor callback), so a stop can never interrupt
a block: :meth:`stopService` cancels the next wake and returns a fired
Deferred.  Called from inside production (a block consumer stopping the
service), the block in hand still finishes after the consumer returns, and
no further wake is scheduled.
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
        Deferred: nothing is waited for, since production is synchronous and
        no block can be in progress when the reactor runs this (module doc)."""
        super().stopService()
        if self._call is not None and self._call.active():
            self._call.cancel()
        self._call = None
        return defer.succeed(None)

    def _schedule(self) -> None:
        """Sleep until the next whole second (graphene
        ``schedule_production_loop``)."""
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
        clock plus 0.5 s, truncated).  Returns the condition name
        (:data:`CONDITIONS`); a produced block is logged and counted.
        Exceptions of ``chain.generate_block`` propagate (the loop logs them)."""
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
