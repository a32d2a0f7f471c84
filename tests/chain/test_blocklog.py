"""The block log: round trip, reopen, torn tails, corruption in the middle,
a real kill -9 of a producing node, and a Chain replay over a reopened log."""

import os
import signal
import struct
import subprocess
import sys
import textwrap
import time

import pytest
import pytest_twisted
from twisted.logger import Logger

from nodeapi.chain.blocklog import BlockLog, BlockLogCorrupt, BlockLogError
from nodeapi.chain.blockindex import index_path
from nodeapi.chain.blockrecord import MAGIC
from nodeapi.chain.chain import Chain
from nodeapi.chain.errors import DuplicateTransaction
from nodeapi.protocol.times import format_time
from nodeapi.errors import ConfigError, StorageError

from kit.chain import FAKE_BLOCK_SHAPE, fake_blocks, scripted_block, transfer_wire
from kit.daemon import ROOT
from kit.keys import DEV_WIF
from kit.signing import sign_wire


TESTS = os.path.join(ROOT, "tests")

CORE = "1.3.0"




def open_log(path, events=None):
    log = BlockLog(str(path))
    if events is not None:
        log.log = Logger(observer=events.append)
    return log.open()


@pytest.fixture
def written(tmp_path):
    """A closed log of 5 fake blocks: (path, blocks, record end offsets),
    without the offset index its close wrote: opening it walks every record
    (the index has tests of its own below)."""
    path = tmp_path / "blocks.log"
    log = open_log(path)
    blocks = fake_blocks(5)
    ends = []
    for b in blocks:
        log.append(b)
        ends.append(os.path.getsize(path))
    log.close()
    os.unlink(index_path(str(path)))
    return path, blocks, ends


def test_round_trip_and_reopen(written):
    path, blocks, ends = written
    log = open_log(path)
    assert log.head_num == 5 and log.truncated == 0
    assert [log.read(n) for n in range(1, 6)] == blocks
    assert log.read(0) is None and log.read(6) is None
    assert list(log.blocks()) == list(enumerate(blocks, 1))
    assert [n for n, _ in log.blocks(4)] == [4, 5]
    assert list(log.blocks(9)) == []
    extra = fake_blocks(6)[5]
    assert log.append(extra) == 6
    assert log.read(6) == extra
    log.close()
    log = open_log(path)
    assert log.head_num == 6 and log.read(6) == extra
    log.close()
    assert repr(log).endswith("closed head=6>")


def test_empty_log_and_big_integers(tmp_path):
    log = open_log(tmp_path / "sub" / "dir" / "blocks")
    assert log.head_num == 0 and list(log.blocks()) == [] and log.read(1) is None
    block = dict(FAKE_BLOCK_SHAPE, previous="0" * 40, timestamp=format_time(0), big=2 ** 70,
                 neg=-(2 ** 65))
    log.append(block)
    log.close()
    again = open_log(tmp_path / "sub" / "dir" / "blocks")
    assert again.read(1) == block and type(again.read(1)["big"]) is int
    again.close()


def test_blocks_sees_appends_while_iterating(tmp_path):
    log = open_log(tmp_path / "b")
    blocks = fake_blocks(4)
    log.append(blocks[0])
    seen = []
    for num, block in log.blocks():
        seen.append(num)
        if num < 4:
            log.append(blocks[num])
    assert seen == [1, 2, 3, 4]
    log.close()


def test_batched_appends_share_one_sync(tmp_path, monkeypatch):
    """Outside ``batched()`` every append is fdatasync'ed; inside it none
    is, and its end syncs once (also when the block raises); nesting is
    refused; the blocks read back in order either way."""
    import nodeapi.chain.blocklog as blocklog

    synced = []
    real = blocklog._sync
    monkeypatch.setattr(blocklog, "_sync", lambda fd: (synced.append(fd), real(fd)))
    log = open_log(tmp_path / "b")
    opened = len(synced)  # creating the file syncs its header
    blocks = fake_blocks(7)
    log.append(blocks[0])
    assert len(synced) == opened + 1
    with log.batched():
        for block in blocks[1:4]:
            log.append(block)
        assert len(synced) == opened + 1
        with pytest.raises(BlockLogError, match="not re-entrant"):
            with log.batched():
                pass
    assert len(synced) == opened + 2
    with pytest.raises(ValueError, match="cannot be block 6"):
        with log.batched():
            log.append(blocks[4])
            log.append(blocks[6])
    assert len(synced) == opened + 3
    with log.batched():  # nothing appended: nothing to sync
        pass
    log.append(blocks[5])
    assert len(synced) == opened + 4
    assert [num for num, _b in log.blocks()] == [1, 2, 3, 4, 5, 6]
    log.close()


def test_append_checks_order_and_open_state(tmp_path):
    log = BlockLog(str(tmp_path / "b"))
    with pytest.raises(BlockLogError, match="is not open"):
        log.append(fake_blocks(1)[0])
    log.open()
    with pytest.raises(ValueError, match="cannot be block 1"):
        log.append(fake_blocks(2)[1])
    log.close()


def test_second_opener_is_refused(tmp_path):
    first = open_log(tmp_path / "b")
    with pytest.raises(BlockLogError, match="in use by another process"):
        open_log(tmp_path / "b")
    first.close()
    open_log(tmp_path / "b").close()


def test_unwritable_location(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(BlockLogError, match=r"Cannot open block log .*file/blocks"):
        open_log(tmp_path / "file" / "blocks")


def _damage_tail(path, ends, how):
    data = bytearray(path.read_bytes())
    last_start = ends[3]
    if how == "short header":
        data = data[:last_start + 5]
    elif how == "short payload":
        data = data[:ends[4] - 3]
    elif how == "bad checksum":
        data[ends[4] - 2] ^= 0x55
    elif how == "trailing zeros":  # filesystem extended the file, data never came
        data = data[:ends[4]] + bytes(300)
        return bytes(data), 5, ends[4]
    return bytes(data), 4, last_start


@pytest.mark.parametrize("how", ["short header", "short payload", "bad checksum",
                                 "trailing zeros"])
def test_torn_tail_is_truncated_with_warning(written, how):
    path, blocks, ends = written
    data, head, cut = _damage_tail(path, ends, how)
    path.write_bytes(data)
    events = []
    log = open_log(path, events)
    assert log.head_num == head
    assert log.truncated == len(data) - cut
    assert os.path.getsize(path) == cut
    assert [e["offset"] for e in events] == [cut]
    assert events[0]["log_level"].name == "warn" and events[0]["head"] == head
    assert list(log.blocks()) == list(enumerate(blocks[:head], 1))
    log.append(fake_blocks(head + 1)[head])
    log.close()
    log = open_log(path, events)
    assert log.head_num == head + 1 and len(events) == 1
    log.close()


def test_torn_file_header(tmp_path):
    path = tmp_path / "b"
    path.write_bytes(MAGIC[:7])
    events = []
    log = open_log(path, events)
    assert log.head_num == 0 and path.read_bytes() == MAGIC
    assert events[0]["size"] == 7
    log.close()


@pytest.mark.parametrize("how", ["checksum", "length past end", "length zero", "swap"])
def test_corruption_before_the_tail_names_file_and_offset(written, how):
    path, blocks, ends = written
    data = bytearray(path.read_bytes())
    at = ends[1]  # start of record 3
    if how == "checksum":
        data[at + 20] ^= 0x01
    elif how == "length past end":
        data[at:at + 4] = struct.pack("<I", 10 ** 6)
    elif how == "length zero":
        data[at:at + 4] = bytes(4)
    else:  # records 3 and 4 exchanged, each intact
        r3, r4 = data[ends[1]:ends[2]], data[ends[2]:ends[3]]
        data[ends[1]:ends[3]] = r4 + r3
    path.write_bytes(bytes(data))
    with pytest.raises(BlockLogCorrupt) as info:
        open_log(path)
    assert isinstance(info.value, StorageError)
    assert f"Block log {path} is corrupt at byte offset {at}" in str(info.value)
    assert os.path.getsize(path) == len(data)  # nothing truncated
    open_log(path.parent / "other").close()  # the lock was released


def test_bad_magic(tmp_path):
    path = tmp_path / "b"
    path.write_bytes(b"not a block log at all")
    with pytest.raises(BlockLogCorrupt, match=r"not a nodeapi block log \(bad magic at "
                                              r"offset 0\)"):
        open_log(path)


def test_read_detects_change_on_disk(written):
    path, blocks, ends = written
    log = open_log(path)
    with open(path, "r+b") as f:
        f.seek(ends[0] + 20)
        f.write(b"#")
    assert log.read(1) == blocks[0]
    with pytest.raises(BlockLogCorrupt, match=f"offset {ends[0]} \\(block 2\\)"):
        log.read(2)
    log.close()


@pytest_twisted.inlineCallbacks
def test_chain_replay_over_reopened_log(genesis, tmp_path):
    log = open_log(tmp_path / "blocks")
    chain = Chain(genesis, log)
    for k in range(6):
        last = scripted_block(chain, k)
    log.close()
    log = open_log(tmp_path / "blocks")
    replayed = Chain(genesis, log)
    count = yield replayed.replay()
    assert count == 6
    assert replayed.head_block_id == chain.head_block_id
    for acc in ("1.2.6", "1.2.7"):
        assert replayed.state.balance(acc, CORE) == chain.state.balance(acc, CORE)
    assert replayed.get_block(6) == last and last["transactions"]
    log.close()


class FlakyBlockLog(BlockLog):
    """The real block log with an injected fault: while ``failures`` is
    positive, ``append`` raises OSError (as a full disk would) and
    decrements it."""

    failures = 0

    def append(self, block):
        if self.failures > 0:
            self.failures -= 1
            raise OSError(28, "No space left on device")
        return super().append(block)


class Recorder:
    """An IBlockConsumer that keeps the numbers and ids it saw."""

    def __init__(self):
        self.seen = []

    def block_applied(self, applied):
        self.seen.append((applied.block_num, applied.block_id))


def test_failed_block_log_write_keeps_head_and_pending(genesis, tmp_path):
    log = FlakyBlockLog(str(tmp_path / "blocks")).open()
    chain = Chain(genesis, log)
    consumer = Recorder()
    chain.add_consumer(consumer)
    scripted_block(chain, 0)
    head = (chain.head_block_num, chain.head_block_id, chain.head_block_time)
    trx = sign_wire(chain, [transfer_wire(5)])
    chain.push_transaction(trx)
    pending_balance = chain.state.balance("1.2.7", CORE)
    log.failures = 1
    when = chain.get_slot_time(1)
    with pytest.raises(BlockLogError, match="Block 2 .* not applied: cannot write it "
                                            "to the block log: .*No space left") as info:
        chain.generate_block(when, chain.get_scheduled_witness(1), DEV_WIF)
    # a full disk is a storage failure, not a bad option
    assert isinstance(info.value, StorageError) and not isinstance(info.value, ConfigError)
    assert (chain.head_block_num, chain.head_block_id, chain.head_block_time) == head
    assert log.head_num == 1 and consumer.seen == [(1, head[1])]
    assert chain.pending_transactions == [trx]
    assert chain.state.balance("1.2.7", CORE) == pending_balance  # still applied as pending
    with pytest.raises(DuplicateTransaction):
        chain.push_transaction(trx)
    # the disk recovered: the same slot produces the block with the transaction
    block = chain.generate_block(when, chain.get_scheduled_witness(1), DEV_WIF)
    assert block["transactions"] == [dict(trx, operation_results=[])]  # cleared, as graphene
    assert chain.pending_transactions == []
    assert chain.head_block_num == 2 and log.read(2) == block
    assert consumer.seen == [(1, head[1]), (2, chain.head_block_id)]
    assert chain.state.balance("1.2.7", CORE) == pending_balance
    scripted_block(chain, 2)
    assert log.head_num == 3 and [n for n, _ in consumer.seen] == [1, 2, 3]
    log.close()


def test_failed_block_log_write_on_push_block(genesis, tmp_path):
    source = Chain(genesis, open_log(tmp_path / "source"))
    blocks = [scripted_block(source, k) for k in range(3)]
    log = FlakyBlockLog(str(tmp_path / "follower")).open()
    follower = Chain(genesis, log)
    consumer = Recorder()
    follower.add_consumer(consumer)
    follower.push_block(blocks[0], now=1e10)
    log.failures = 1
    with pytest.raises(BlockLogError, match="Block 2 "):
        follower.push_block(blocks[1], now=1e10)
    assert follower.head_block_num == 1 and log.head_num == 1 and len(consumer.seen) == 1
    for block in blocks[1:]:
        follower.push_block(block, now=1e10)
    assert follower.head_block_id == source.head_block_id
    assert [n for n, _ in consumer.seen] == [1, 2, 3] and log.read(3) == blocks[2]
    for acc in ("1.2.6", "1.2.7"):
        assert follower.state.balance(acc, CORE) == source.state.balance(acc, CORE)
    log.close()


PRODUCER = textwrap.dedent("""
    import sys
    sys.path[:0] = [{tests!r}, {root!r}]
    from kit.chain import scripted_block
    from nodeapi.chain.blocklog import BlockLog
    from nodeapi.chain.chain import Chain
    from nodeapi.chain.genesis import load_genesis
    log = BlockLog({path!r})
    log.open()
    chain = Chain(load_genesis(), log)
    k = 0
    while True:
        block = scripted_block(chain, k)
        k += 1
        print(chain.head_block_num, flush=True)
""")


@pytest_twisted.inlineCallbacks
def test_kill_9_while_producing_then_replay(genesis, tmp_path):
    path = str(tmp_path / "blocks")
    code = PRODUCER.format(tests=TESTS, root=ROOT, path=path)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT)
    try:
        deadline = time.monotonic() + 40
        printed = 0
        while printed < 12:
            line = proc.stdout.readline()
            assert line, proc.stderr.read().decode()[-2000:]
            printed = int(line)
            assert time.monotonic() < deadline
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    log = open_log(path)
    assert log.head_num >= 12
    replayed = Chain(genesis, log)
    count = yield replayed.replay()
    assert count == log.head_num
    reference = Chain(genesis, BlockLog(str(tmp_path / "reference"), sync=False).open())
    for k in range(count):
        scripted_block(reference, k)
    assert replayed.head_block_id == reference.head_block_id
    for acc in ("1.2.6", "1.2.7"):
        assert replayed.state.balance(acc, CORE) == reference.state.balance(acc, CORE)
    assert replayed.state.balance("1.2.7", CORE) == sum(range(count))
    # The node goes on producing on the recovered log.
    scripted_block(replayed, count)
    assert log.head_num == count + 1
    log.close()
    reference.block_log.close()


@pytest.mark.parametrize("payload, reason", [
    (b"\x01{}", "missing previous, timestamp"),
    (b"\x01[]", "JSON list"),
    (b"\x01{not json", "payload is not a block: "),
    (b"\x07{}", "unknown payload codec 7"),
])
def test_record_that_is_no_block_names_file_and_offset(tmp_path, payload, reason):
    """The checksum holds but the payload is no block: BlockLogCorrupt
    naming the file, offset and block, from read() and blocks()."""
    from nodeapi.chain.blockrecord import frame

    path = tmp_path / "blocks.log"
    path.write_bytes(MAGIC + frame(1, payload))
    log = open_log(path)
    for read in (lambda: log.read(1), lambda: list(log.blocks())):
        with pytest.raises(BlockLogCorrupt, match=f"^Block log {path} is corrupt at byte "
                                                  f"offset {len(MAGIC)} \\(block 1\\): ") as info:
            read()
        assert reason in str(info.value)
    log.close()


def test_truncate_drops_the_blocks_after_and_survives_a_reopen(tmp_path):
    """truncate(n) (the devnet's revert) cuts the file after block n: the
    head, reads and the next append follow, the offset index and its
    crc32 match the shorter file at the next open."""
    path = str(tmp_path / "blocks.log")
    blocks = fake_blocks(6)
    log = BlockLog(path, sync=False).open()
    for block in blocks:
        log.append(block)
    log.save_index()
    log.truncate(3)
    assert log.head_num == 3 and log.read(4) is None and log.read(3) == blocks[2]
    with pytest.raises(ValueError, match="head is 3"):
        log.truncate(4)
    assert log.append(blocks[3]) == 4
    log.truncate(0)
    assert log.head_num == 0 and os.path.getsize(path) == len(MAGIC)
    for block in blocks[:2]:
        log.append(block)
    log.close()
    reopened = BlockLog(path, sync=False).open()
    assert reopened.head_num == 2 and reopened.truncated == 0
    assert [b for _n, b in reopened.blocks()] == blocks[:2]
    reopened.close()


def test_batched_without_sync_leaves_it_to_the_next(tmp_path, monkeypatch):
    """``batched(sync=False)`` does not sync at its end; the next
    ``batched()``, :meth:`sync_now`, an append outside a batch or
    ``close()`` syncs what it left (once), and nothing is synced twice."""
    import nodeapi.chain.blocklog as blocklog

    synced = []
    real = blocklog._sync
    monkeypatch.setattr(blocklog, "_sync", lambda fd: (synced.append(fd), real(fd)))
    log = open_log(tmp_path / "b")
    opened = len(synced)
    blocks = fake_blocks(6)
    with log.batched(sync=False):
        log.append(blocks[0])
    with log.batched(sync=False):
        log.append(blocks[1])
    assert len(synced) == opened
    with log.batched():  # nothing appended in it: it syncs the two before
        pass
    assert len(synced) == opened + 1
    log.sync_now()  # nothing left
    assert len(synced) == opened + 1
    with log.batched(sync=False):
        log.append(blocks[2])
    log.sync_now()
    log.sync_now()
    assert len(synced) == opened + 2
    with log.batched(sync=False):
        log.append(blocks[3])
    log.append(blocks[4])  # one sync covers both
    assert len(synced) == opened + 3
    log.sync_now()
    assert len(synced) == opened + 3
    with log.batched(sync=False):
        log.append(blocks[5])
    log.close()  # syncs what was left
    assert len(synced) == opened + 4
    reopened = open_log(tmp_path / "b")
    assert [num for num, _b in reopened.blocks()] == [1, 2, 3, 4, 5, 6]
    reopened.close()
