"""Checkpoints (nodeapi.checkpoints, nodeapi.chain.checkpoint): a restart
from a checkpoint reaches the same state and the same plugin answers as a
full replay, replaying only the blocks after it; damaged or foreign
checkpoints are skipped with one log line; ``--replay-blockchain`` and a
plugin without checkpoints mean a full replay; a kill -9 of a real daemon,
during checkpoint writes included, restarts to the same head, balances and
history."""

import os
import shutil
import signal
import time

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.logger import globalLogPublisher

from nodeapi.chain.checkpoint import FORMAT
from nodeapi.checkpoints import CheckpointService
from nodeapi.plugins.account_history.history import AccountHistory
from nodeapi.plugins.custom_operations.storage import AccountStorage
from nodeapi.plugins.grouped_orders.orders import GroupedOrders
from nodeapi.plugins.market_history.history import MarketHistory
from nodeapi.plugins.market_history.pools import LiquidityPoolHistory

from kit.chain import CORE, amt, asset_options, produce, push_wire
from kit.daemon import Daemon
from kit.wait import wait_for

INIT0, INIT1 = "1.2.6", "1.2.7"


def plugins_of(chain):
    """The default plugins as makeService registers them (account history,
    market history, pool history, grouped orders, custom operations)."""
    out = {"history": AccountHistory(), "market": MarketHistory(),
           "pools": LiquidityPoolHistory(), "groups": GroupedOrders(chain, [10, 100]),
           "storage": AccountStorage(0)}
    for plugin in out.values():
        chain.add_consumer(plugin)
    return out


def busy_blocks(chain, rounds):
    """Transfers, a UIA market with fills and resting orders, a smartcoin
    position, custom storage: ``rounds`` blocks of it."""
    [[_t, gold]] = push_wire(chain, [10, {
        "issuer": INIT0, "symbol": "GOLD", "precision": 3,
        "common_options": asset_options(flags=1, perms=1, percent=50),
        "is_prediction_market": False, "extensions": []}])
    push_wire(chain, [14, {"issuer": INIT0, "asset_to_issue": amt(10 ** 9, gold),
                           "issue_to_account": INIT1, "extensions": []}])
    produce(chain)
    for k in range(rounds):
        push_wire(chain, [0, {"from": INIT0, "to": INIT1, "amount": amt(1000 + k),
                              "extensions": []}])
        push_wire(chain, [1, {"seller": INIT1, "amount_to_sell": amt(100 + k, gold),
                              "min_to_receive": amt(2000), "fill_or_kill": False,
                              "expiration": "2030-01-01T00:00:00", "extensions": {}}])
        push_wire(chain, [1, {"seller": INIT0, "amount_to_sell": amt(1500 + k),
                              "min_to_receive": amt(50, gold), "fill_or_kill": False,
                              "expiration": "2030-01-01T00:00:00", "extensions": {}}])
        # account_storage_map: not remove, catalog "app", {"k<k>": "<k>"}
        key, value = f"k{k}".encode(), str(k).encode()
        data = ("00" + "00" + "03" + b"app".hex() + "01" + f"{len(key):02x}" + key.hex()
                + "01" + f"{len(value):02x}" + value.hex())
        push_wire(chain, [35, {"payer": INIT0, "required_auths": [], "id": 0,
                               "data": data}])
        produce(chain)
    return gold


def answers(chain, plugins):
    """What the plugins answer, for comparing two nodes."""
    h, m = plugins["history"], plugins["market"]
    out = {"objects": dict(chain.state.objects),
           "next": dict(chain.state.next_instance),
           "numbering": (chain._numbering.next_op, chain._numbering.next_ath)}
    for account in ("1.2.6", "1.2.7"):
        out[account] = (h.get_account_history(account, 0, 100, 0),
                        h.get_relative_account_history(account, 0, 100, 0),
                        h.account_total_ops(account))
    out["blockops"] = [h.get_block_operation_history(n) for n in range(chain.head_block_num + 1)]
    out["ath"] = h.get_history_objects([f"2.9.{n}" for n in range(h.entry_count)])
    out["fills"] = m.fills("1.3.0", "1.3.1", 100)
    out["ticker"] = m.ticker("1.3.0", "1.3.1")
    out["buckets"] = m.buckets("1.3.0", "1.3.1", 60, 0, 2 ** 31, 100)
    out["groups"] = [plugins["groups"].groups(g, a, b, None, 100) for g in (10, 100)
                     for a, b in (("1.3.0", "1.3.1"), ("1.3.1", "1.3.0"))]
    out["storage"] = plugins["storage"].find()
    return out


@pytest.fixture
def started(new_chain):
    """A fresh chain with the default plugins from genesis on; init0 claimed
    the genesis balance and funded init1 in block 1."""
    from kit.chain import claim_wire

    chain = new_chain()
    plugins = plugins_of(chain)
    push_wire(chain, claim_wire())
    push_wire(chain, [0, {"from": INIT0, "to": INIT1, "amount": amt(10 ** 10),
                          "extensions": []}])
    produce(chain)
    return chain, plugins


@pytest.fixture
def events():
    seen = []
    globalLogPublisher.addObserver(seen.append)
    yield seen
    globalLogPublisher.removeObserver(seen.append)


def lines(events, start):
    """The formatted log lines beginning with ``start``."""
    from twisted.logger import formatEvent

    return [text for text in (formatEvent(e) for e in events if "log_format" in e)
            if text.startswith(start)]


@pytest_twisted.inlineCallbacks
def test_restart_from_checkpoint_equals_full_replay(started, new_chain, tmp_path, events):
    chain, plugins = started
    ckpt = CheckpointService(chain, str(tmp_path / "ckpt"), 0, reactor)
    busy_blocks(chain, 6)
    path = yield ckpt.write()
    assert os.path.basename(path) == f"checkpoint-{chain.head_block_num:010d}.ckpt"
    at = chain.head_block_num
    busy_blocks_more = 3
    for k in range(busy_blocks_more):  # blocks after the checkpoint
        push_wire(chain, [0, {"from": INIT1, "to": INIT0, "amount": amt(7 + k),
                              "extensions": []}])
        produce(chain)
    expected = answers(chain, plugins)

    restarted = new_chain(restart_of=chain)
    again = plugins_of(restarted)
    service = CheckpointService(restarted, str(tmp_path / "ckpt"), 0, reactor)
    restarted.add_consumer(service)
    yield service.restore()
    assert service.restored_block == at
    count = yield restarted.replay()
    assert count == busy_blocks_more  # only the blocks after the checkpoint
    assert answers(restarted, again) == expected
    assert expected["storage"] and expected["fills"] and any(expected["groups"])
    logged = lines(events, "Checkpoint at block")
    assert logged[0].startswith(f"Checkpoint at block {at} written")
    assert logged[1].startswith(f"Checkpoint at block {at} loaded")

    # and a full replay agrees
    full = new_chain(restart_of=chain)
    full_plugins = plugins_of(full)
    yield full.replay()
    assert answers(full, full_plugins) == expected
    # the restarted node goes on producing
    produce(restarted)
    assert restarted.head_block_num == chain.head_block_num + 1


@pytest_twisted.inlineCallbacks
def test_damaged_checkpoint_falls_back_to_the_older_one(started, new_chain, tmp_path, events):
    chain, _plugins = started
    ckpt = CheckpointService(chain, str(tmp_path / "ckpt"), 0, reactor)
    yield ckpt.write()
    older = chain.head_block_num
    busy_blocks(chain, 2)
    newest = yield ckpt.write()
    with open(newest, "r+b") as f:  # a torn write: the end record is gone
        f.truncate(os.path.getsize(newest) - 10)
    restarted = new_chain(restart_of=chain)
    plugins_of(restarted)
    service = CheckpointService(restarted, str(tmp_path / "ckpt"), 0, reactor)
    restarted.add_consumer(service)
    yield service.restore()
    assert service.restored_block == older
    [line] = lines(events, "Checkpoint not used")
    assert os.path.basename(newest) in line
    yield restarted.replay()
    assert restarted.head_block_id == chain.head_block_id
    assert restarted.state.balance(INIT1, CORE) == chain.state.balance(INIT1, CORE)


@pytest_twisted.inlineCallbacks
def test_replay_blockchain_and_plugins_without_checkpoints_replay_everything(
        started, new_chain, tmp_path, events):
    chain, _plugins = started
    yield CheckpointService(chain, str(tmp_path / "ckpt"), 0, reactor).write()
    restarted = new_chain(restart_of=chain)
    plugins_of(restarted)
    service = CheckpointService(restarted, str(tmp_path / "ckpt"), 0, reactor,
                                replay_blockchain=True)
    yield service.restore()
    assert service.restored_block is None
    assert lines(events, "Checkpoints: --replay-blockchain")

    class Plain:
        def block_applied(self, applied):
            pass

    other = new_chain(restart_of=chain)
    plugins_of(other)
    other.add_consumer(Plain())
    service = CheckpointService(other, str(tmp_path / "ckpt"), 0, reactor)
    yield service.restore()
    assert service.restored_block is None
    assert lines(events, "Checkpoints: not used, Plain keep no checkpoint")
    # a checkpoint numbering statistics the other way is skipped
    import shutil

    from kit.chain import open_chain

    path = tmp_path / "sixes"
    shutil.copyfile(chain.block_log.path, path)
    sixes = open_chain(chain.genesis, path, statistics_type=6)
    plugins_of(sixes)
    service = CheckpointService(sixes, str(tmp_path / "ckpt"), 0, reactor)
    yield service.restore()
    assert service.restored_block is None
    assert any("account-statistics-type" in line for line in lines(events, "Checkpoint not used"))
    sixes.block_log.close()
    # a checkpoint of another chain is skipped
    with open(os.path.join(str(tmp_path / "ckpt"), "checkpoint-0000009999.ckpt"), "wb") as f:
        f.write(b'["meta","nodeapi-checkpoint",{"format":%d,"chain_id":"ff"}]\n' % FORMAT)
    third = new_chain(restart_of=chain)
    plugins_of(third)
    yield CheckpointService(third, str(tmp_path / "ckpt"), 0, reactor).restore()
    assert any("checkpoint of chain ff" in line for line in lines(events, "Checkpoint not used"))


def _as_format(path, fmt):
    """Rewrite the checkpoint at ``path`` as one of format ``fmt`` (its meta
    record changed, the end record's digest made right again), as an older
    node version would have written it."""
    import hashlib

    import orjson

    with open(path, "rb") as f:
        records = [orjson.loads(line) for line in f]
    records[0][2]["format"] = fmt
    body = b"".join(orjson.dumps(r) + b"\n" for r in records[:-1])
    end = ["end", hashlib.sha256(body).hexdigest(), len(records) - 1]
    with open(path, "wb") as f:
        f.write(body + orjson.dumps(end) + b"\n")


@pytest_twisted.inlineCallbacks
def test_checkpoint_of_the_older_numbering_means_a_full_replay(started, new_chain, tmp_path,
                                                               events):
    """Format 3 checkpoints carry the 1.11/2.9 counters and history of the
    numbering before virtual operations followed the operation that raised
    them (nodeapi.chain.numbering): one is skipped, the start replays the
    whole block log and numbers everything anew."""
    chain, plugins = started
    busy_blocks(chain, 3)
    path = yield CheckpointService(chain, str(tmp_path / "ckpt"), 0, reactor).write()
    expected = answers(chain, plugins)
    _as_format(path, FORMAT - 1)
    restarted = new_chain(restart_of=chain)
    again = plugins_of(restarted)
    service = CheckpointService(restarted, str(tmp_path / "ckpt"), 0, reactor)
    restarted.add_consumer(service)
    yield service.restore()
    assert service.restored_block is None
    [line] = lines(events, "Checkpoint not used")
    assert f"not a format {FORMAT} checkpoint" in line
    count = yield restarted.replay()
    assert count == chain.head_block_num
    assert answers(restarted, again) == expected
    # the same file as format FORMAT is used (the rewrite itself is sound)
    _as_format(path, FORMAT)
    third = new_chain(restart_of=chain)
    plugins_of(third)
    service = CheckpointService(third, str(tmp_path / "ckpt"), 0, reactor)
    third.add_consumer(service)
    yield service.restore()
    assert service.restored_block == chain.head_block_num


def _node_answers(node):
    """The head and what the API answers about the witnesses' accounts:
    objects, balances, statistics, vesting balances and history."""
    head = node.head()
    accounts = [f"1.2.{i}" for i in range(6, 17)]
    full = node.call("get_full_accounts", accounts, False)
    objects = node.call("get_objects", ["2.1.0", *[f"1.6.{i}" for i in range(1, 12)],
                                        *[f"1.13.{i}" for i in range(0, 30)]])
    history = [node.call("get_account_history", a, "1.11.0", 100, "1.11.0", api="history")
               for a in accounts]
    return head, full, objects, history


@pytest.mark.slow
def test_kill_9_restarts_to_the_state_of_a_full_replay(tmp_path):
    """A producing daemon writing a checkpoint every 2 blocks is killed
    with SIGKILL three times at different moments; each restart (without
    producing) answers exactly what a ``--replay-blockchain`` restart of a
    copy of the same data directory answers (the two start side by side),
    and loaded a checkpoint to get there."""
    data = tmp_path / "node"
    quiet = ("--plugins", "account_history market_history grouped_orders custom_operations")
    for round_ in range(3):
        node = Daemon(data, "--checkpoint-interval", "2")
        node.start()
        node.wait_head(node.head()[0] + 3 + round_)
        time.sleep(0.3 * round_)
        os.kill(node.proc.pid, signal.SIGKILL)
        node.proc.wait()
        node.log_file.close()
        copy = tmp_path / f"replay{round_}"
        shutil.copytree(data, copy)
        restarted = Daemon(data, *quiet).start(wait=False)
        replayed = Daemon(copy, "--replay-blockchain", *quiet).start(wait=False)
        try:
            restarted.wait_rpc()
            from_checkpoint = _node_answers(restarted)
            restarted.stop(signal.SIGKILL)  # no final checkpoint
            log = restarted.log()
            assert "Checkpoint at block" in log and "loaded" in log, log[-3000:]
            replayed.wait_rpc()
            assert _node_answers(replayed) == from_checkpoint
        finally:
            restarted.stop(signal.SIGKILL)
            replayed.stop()
    assert not [n for n in os.listdir(data / "checkpoints") if n.endswith(".tmp")]


KILLED_WRITER = """
import os, signal, sys
sys.path[:0] = [{tests!r}, {root!r}]
from twisted.internet import task
from kit.chain import claim_wire, produce, push_wire
from nodeapi.chain.blocklog import BlockLog
from nodeapi.chain.chain import Chain
from nodeapi.chain.genesis import load_genesis
from nodeapi.checkpoints import CheckpointService
from nodeapi.plugins.account_history.history import AccountHistory

def main(reactor):
    chain = Chain(load_genesis(), BlockLog({path!r}).open(), clock=reactor)
    chain.add_consumer(AccountHistory())
    push_wire(chain, claim_wire())
    produce(chain)
    service = CheckpointService(chain, {ckpt!r}, 0, reactor)
    chain.add_consumer(service)

    def second(_):
        for k in range(5):
            push_wire(chain, [0, {{"from": "1.2.6", "to": "1.2.7",
                                  "amount": {{"amount": 10 + k, "asset_id": "1.3.0"}},
                                  "extensions": []}}])
            produce(chain)
        emit = service._emit
        def dying(*args):
            emit(*args)
            os.kill(os.getpid(), signal.SIGKILL)  # in the middle of the write
        service._emit = dying
        return service.write()

    return service.write().addCallback(second)

task.react(main)
"""


@pytest_twisted.inlineCallbacks
def test_kill_9_inside_a_checkpoint_write(genesis, tmp_path):
    """A process killed (SIGKILL) in the middle of writing a checkpoint
    leaves the previous checkpoint and a .tmp file; the restart removes the
    .tmp, loads the previous checkpoint and replays the rest."""
    import subprocess
    import sys

    from kit.daemon import ROOT

    path, ckpt = str(tmp_path / "blocks"), str(tmp_path / "ckpt")
    code = KILLED_WRITER.format(tests=os.path.join(ROOT, "tests"), root=ROOT, path=path,
                                ckpt=ckpt)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=ROOT,
                          timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    names = sorted(os.listdir(ckpt))
    assert names == ["checkpoint-0000000001.ckpt", "checkpoint-0000000006.ckpt.tmp"]
    from nodeapi.chain.blocklog import BlockLog
    from nodeapi.chain.chain import Chain

    reference = Chain(genesis, BlockLog(path, sync=False).open())
    history = AccountHistory()
    reference.add_consumer(history)
    yield reference.replay()
    expected = (reference.head_block_id, reference.state.balance(INIT1, CORE),
                history.get_account_history(INIT1, 0, 100, 0))
    reference.block_log.close()

    restarted = Chain(genesis, BlockLog(path, sync=False).open(), clock=reactor)
    again = AccountHistory()
    restarted.add_consumer(again)
    service = CheckpointService(restarted, ckpt, 0, reactor)
    restarted.add_consumer(service)
    yield defer_restore(service)
    assert service.restored_block == 1
    assert os.listdir(ckpt) == ["checkpoint-0000000001.ckpt"]
    replayed = yield restarted.replay()
    assert replayed == 5
    assert (restarted.head_block_id, restarted.state.balance(INIT1, CORE),
            again.get_account_history(INIT1, 0, 100, 0)) == expected
    restarted.block_log.close()


def defer_restore(service):
    from twisted.internet import defer

    return defer.Deferred.fromCoroutine(service.restore())


@pytest_twisted.inlineCallbacks
def test_replay_writes_no_checkpoints_but_one_after_a_long_replay(started, new_chain, tmp_path):
    """Blocks of a start's replay write no checkpoint (it would slow the
    replay down); once the replay applied ``interval`` blocks past the
    newest checkpoint, startService writes one of the head."""
    chain, _plugins = started
    for _ in range(4):
        produce(chain)
    restarted = new_chain(restart_of=chain)
    plugins_of(restarted)
    service = CheckpointService(restarted, str(tmp_path / "ckpt"), 2, reactor)
    restarted.add_consumer(service)
    yield service.restore()
    yield restarted.replay()
    assert service.written == [] and not os.path.exists(str(tmp_path / "ckpt"))
    service.startService()
    yield wait_for(lambda: service.written == [restarted.head_block_num], timeout=10)
    yield service.stopService()  # nothing new: no second file
    assert os.listdir(str(tmp_path / "ckpt")) == [f"checkpoint-{chain.head_block_num:010d}.ckpt"]


class _ClockedReactor:
    """The real reactor (its timers and thread pool) with a clock the test
    sets: ``seconds()`` returns :attr:`now`."""

    def __init__(self, now: float) -> None:
        self.now = now

    def seconds(self) -> float:
        return self.now

    def __getattr__(self, name):
        return getattr(reactor, name)


@pytest_twisted.inlineCallbacks
def test_catch_up_writes_a_checkpoint_per_minute_of_work_not_per_interval(started, tmp_path):
    """While catching up (blocks more than a minute behind the clock) a
    checkpoint is written once 60 s of work have passed since the last
    one, whatever the block numbers; in sync, every ``interval``-th block."""
    chain, _plugins = started
    clock = _ClockedReactor(chain.head_block_time + 3600)  # an hour behind: catching up
    service = CheckpointService(chain, str(tmp_path / "ckpt"), 4, clock)
    chain.add_consumer(service)
    service.startService()
    for _ in range(6):  # blocks 2..7, block 4 among them: no checkpoint in 0 s of work
        produce(chain)
        clock.now += 10
    yield wait_for(lambda: service._writing is None, timeout=10)
    assert service.written == [] and chain.head_block_num == 7
    clock.now += 1  # 61 s since the start
    produce(chain)  # block 8
    yield wait_for(lambda: service.written == [8], timeout=10)
    clock.now += 59
    produce(chain)  # block 9: 59 s after the last one
    yield wait_for(lambda: service._writing is None, timeout=10)
    assert service.written == [8]
    assert service.newest() == (8, clock.now - 59)
    # in sync: every 4th block again
    for _ in range(3):  # blocks 10..12
        clock.now = chain.head_block_time + 5
        produce(chain)
        clock.now = chain.head_block_time + 1
    yield wait_for(lambda: service.written == [8, 12], timeout=10)
    yield service.stopService()
