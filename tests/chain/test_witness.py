"""WitnessService over a real Chain, driven by twisted.internet.task.Clock."""

import pytest
from twisted.internet.task import Clock
from twisted.logger import Logger

from nodeapi.chain.blocklog import BlockLog
from nodeapi.protocol.times import format_time
from nodeapi.errors import ConfigError
from nodeapi.plugins.witness.service import WitnessService

from kit.chain import claim_wire, transfer_wire
from kit.keys import DEV_WIF, OTHER_WIF, WITNESS_KEYS
from kit.signing import sign_wire


def make(chain, witnesses=WITNESS_KEYS, stale=True, start=None, events=None):
    """A service on a Clock set to ``start`` (default: 10 s after genesis)."""
    clock = Clock()
    clock.advance(chain.genesis.initial_timestamp + 10 if start is None else start)
    svc = WitnessService(chain, witnesses, enable_stale_production=stale, clock=clock)
    if events is not None:
        svc.log = Logger(observer=events.append)
    return svc, clock


def run(clock, seconds):
    for _ in range(seconds):
        clock.advance(1)


def blocks(chain):
    return [chain.get_block(n) for n in range(1, chain.head_block_num + 1)]


def test_one_block_per_second_tracking_the_clock(chain):
    events = []
    svc, clock = make(chain, events=events)
    svc.startService()
    t0 = int(clock.seconds())
    run(clock, 9)
    # block 1 runs the chain's first maintenance (next_maintenance_time is
    # the epoch at genesis), after which maintenance_skip_slots (3) slots
    # are skipped (db_witness_schedule.cpp get_slot_time): t0+2..t0+4 are
    # not slots; then one block a second
    assert chain.head_block_num == 6 and svc.produced == 6
    assert [b["timestamp"] for b in blocks(chain)] == [format_time(t0 + i)
                                                       for i in (1, 5, 6, 7, 8, 9)]
    assert chain.head_block_time == int(clock.seconds())
    assert svc.last_block == (6, chain.head_block_id)
    assert svc.conditions == {"produced": 6, "not_time_yet": 3}
    produced = [e for e in events if e["log_format"].startswith("Generated block")]
    assert [e["block_num"] for e in produced] == [1, 2, 3, 4, 5, 6]
    assert produced[0]["missed"] == 10 and produced[1]["missed"] == 0
    assert produced[5]["block_id"] == chain.head_block_id
    assert produced[5]["timestamp"] == format_time(t0 + 9)
    svc.stopService()
    run(clock, 3)
    assert chain.head_block_num == 6 and not clock.getDelayedCalls()


@pytest.mark.parametrize("offset,wake", [(0.3, 1.0), (0.97, 2.0), (0.0, 1.0)])
def test_wakes_at_whole_seconds(chain, offset, wake):
    base = chain.genesis.initial_timestamp + 10
    svc, clock = make(chain, start=base + offset)
    svc.startService()
    assert [c.getTime() for c in clock.getDelayedCalls()] == [base + wake]
    svc.stopService()


def test_synced_new_chain_needs_no_stale_production(chain):
    svc, clock = make(chain, stale=False, start=chain.genesis.initial_timestamp - 2)
    svc.startService()
    run(clock, 8)
    # Wakes at genesis-1 and genesis (not after head: not_time_yet), block 1
    # (the first maintenance), three skipped slots (not_time_yet), 2 blocks.
    assert svc.conditions == {"not_time_yet": 5, "produced": 3}
    assert chain.head_block_time == chain.genesis.initial_timestamp + 6
    svc.stopService()


def test_pending_transactions_in_arrival_order_and_expired_dropped(chain):
    svc, clock = make(chain)
    svc.startService()
    chain.push_transaction(sign_wire(chain, [claim_wire()]))
    run(clock, 1)
    svc.stopService()
    amounts = [5, 3, 9]
    for amount in amounts:
        chain.push_transaction(sign_wire(chain, [transfer_wire(amount)]))
    chain.push_transaction(sign_wire(chain, [transfer_wire(77)], expire_in=2))
    clock.advance(5)  # the short-lived one expires while nobody produces
    svc.startService()
    run(clock, 1)
    block = chain.get_block(2)
    assert [t["operations"][0][1]["amount"]["amount"] for t in block["transactions"]] == [
        5, 3, 9]
    assert chain.pending_transactions == []
    assert chain.state.balance("1.2.7", "1.3.0") == 17
    svc.stopService()


def test_only_our_witness_slots(chain):
    svc, clock = make(chain, witnesses={"1.6.3": DEV_WIF})
    svc.startService()
    run(clock, 25)
    assert svc.produced == 2 and chain.head_block_num == 2
    assert {b["witness"] for b in blocks(chain)} == {"1.6.3"}
    # the 3 slots after block 1 (the first maintenance) are skipped
    assert svc.conditions == {"produced": 2, "not_my_turn": 20, "not_time_yet": 3}
    svc.stopService()


def test_no_witnesses_or_unknown_witness_produce_nothing(chain):
    for witnesses in ({}, {"1.6.99": DEV_WIF}):
        svc, clock = make(chain, witnesses=witnesses)
        svc.startService()
        run(clock, 12)
        assert chain.head_block_num == 0 and svc.conditions == {"not_my_turn": 12}
        svc.stopService()


def test_wrong_key_is_no_private_key(chain):
    events = []
    svc, clock = make(chain, witnesses={"1.6.1": OTHER_WIF}, events=events)
    svc.startService()
    run(clock, 22)
    assert chain.head_block_num == 0
    assert svc.conditions["no_private_key"] == 2 and svc.conditions["not_my_turn"] == 20
    warnings = [e for e in events if e["log_level"].name == "warn"]
    assert len(warnings) == 1 and warnings[0]["witness"] == "1.6.1"
    svc.stopService()


def test_bad_key_is_a_config_error(chain):
    with pytest.raises(ConfigError, match="Bad private key for witness 1.6.1"):
        WitnessService(chain, {"1.6.1": "5notakey"}, clock=Clock())


def test_stale_chain_refused_without_stale_production(chain):
    events = []
    now = chain.genesis.initial_timestamp + 86400 * 365
    svc, clock = make(chain, stale=False, start=now, events=events)
    svc.startService()
    run(clock, 4)
    assert chain.head_block_num == 0 and svc.conditions == {"not_synced": 4}
    assert svc.last_condition == "not_synced"
    assert len([e for e in events if "production is disabled" in e["log_format"]]) == 1
    svc.stopService()


def test_stale_production_starts_at_the_current_slot(chain):
    now = chain.genesis.initial_timestamp + 86400 * 365 + 0.4
    svc, clock = make(chain, stale=True, start=now)
    svc.startService()
    run(clock, 6)
    assert chain.head_block_num == 3
    assert chain.get_block(1)["timestamp"] == format_time(int(now) + 1)
    # block 1 is past next_maintenance_time: a maintenance block, after which
    # maintenance_skip_slots (3) slots are skipped (db_witness_schedule.cpp)
    assert chain.get_block(2)["timestamp"] == format_time(int(now) + 5)
    assert chain.dgp["recently_missed_count"] == 0  # block 1 resets it; no missed slot since
    assert chain.head_block_time == int(clock.seconds() + 0.5)
    svc.stopService()


class Raiser:
    """A consumer that fails on chosen blocks (a buggy plugin)."""

    def __init__(self, fail_on):
        self.fail_on = fail_on

    def block_applied(self, applied):
        if applied.block_num in self.fail_on:
            raise RuntimeError(f"plugin broke on {applied.block_num}")


def test_errors_are_logged_and_the_loop_goes_on(chain):
    events = []
    chain.add_consumer(Raiser({2}))
    svc, clock = make(chain, events=events)
    svc.startService()
    run(clock, 7)
    # block 1, the 3 slots its maintenance skips, then blocks 2 (its
    # consumer raises, the block stands), 3, 4
    assert svc.conditions == {"produced": 3, "exception": 1, "not_time_yet": 3}
    assert chain.head_block_num == 4
    failures = [e for e in events if "log_failure" in e]
    assert len(failures) == 1
    assert "plugin broke on 2" in str(failures[0]["log_failure"].value)
    svc.stopService()


def test_stop_from_inside_production_finishes_the_block_and_stops(chain):
    """Production is synchronous: a stop from a block consumer returns a
    fired Deferred, the block in hand is still completed and logged, and no
    further wake is scheduled."""
    svc, clock = make(chain)
    seen = {}

    class Stopper:
        def block_applied(self, applied):
            if applied.block_num == 2:
                d = svc.stopService()
                seen["fired_inside"] = d.called
                seen["head_inside"] = chain.head_block_num

    chain.add_consumer(Stopper())
    svc.startService()
    run(clock, 5)
    assert seen == {"fired_inside": True, "head_inside": 2}
    assert chain.head_block_num == 2 and not svc.running
    assert svc.produced == 2 and svc.last_block == (2, chain.head_block_id)
    assert chain.block_log.read(2) is not None
    assert not clock.getDelayedCalls()


def test_stop_cancels_the_next_wake(chain):
    svc, clock = make(chain)
    svc.startService()
    run(clock, 5)  # block 1, 3 slots skipped after its maintenance, block 2
    assert len(clock.getDelayedCalls()) == 1
    d = svc.stopService()
    assert d.called and not clock.getDelayedCalls()
    run(clock, 3)
    assert chain.head_block_num == 2


class FullDiskLog(BlockLog):
    """The real block log whose appends fail while ``full``."""

    full = False

    def append(self, block):
        if self.full:
            raise OSError(28, "No space left on device")
        super().append(block)


def test_disk_full_logs_one_line_when_failing_and_one_when_recovered(genesis, tmp_path):
    """While blocks cannot be written the node stays at its head and the
    witness logs one line (no traceback per slot); one line when production
    resumes; the chain then goes on from where it stopped."""
    from nodeapi.chain.chain import Chain

    log = FullDiskLog(str(tmp_path / "blocks"), sync=False).open()
    chain = Chain(genesis, log)
    events = []
    svc, clock = make(chain, events=events)
    svc.startService()
    run(clock, 5)  # block 1, the 3 slots its maintenance skips, block 2
    assert chain.head_block_num == 2
    log.full = True
    run(clock, 6)
    assert chain.head_block_num == 2 and log.head_num == 2
    assert svc.conditions["exception"] == 6
    log.full = False
    run(clock, 2)
    assert chain.head_block_num == 4 and log.head_num == 4
    assert not [e for e in events if "log_failure" in e]
    failed = [e for e in events if e.get("log_event") == "storage_failed"]
    recovered = [e for e in events if e.get("log_event") == "storage_recovered"]
    assert len(failed) == 1 and "No space left on device" in failed[0]["error"]
    assert len(recovered) == 1 and recovered[0]["block_num"] == 3
    svc.stopService()
