"""The block log's offset index file (nodeapi.chain.blockindex): written at
close and after checkpoints, used at open only when the log still holds
the bytes it covers (then only the records after it are walked), ignored
with one line when it is damaged, stale the other way or the log changed;
damage inside the covered bytes is still a startup error."""

import os

import pytest
import pytest_twisted
from twisted.logger import Logger

from nodeapi.chain.blockindex import index_path, read_index, write_index
from nodeapi.chain.blocklog import BlockLog, BlockLogCorrupt

from kit.chain import fake_blocks


def open_log(path, events=None):
    log = BlockLog(str(path))
    if events is not None:
        log.log = Logger(observer=events.append)
    return log.open()


def closed_log(path, n, start=1):
    """Append fake blocks ``start..n`` to the log at ``path`` and close it
    (the close writes the index)."""
    log = open_log(path)
    for block in fake_blocks(n)[start - 1:]:
        log.append(block)
    log.close()


def not_used(events):
    return [e["reason"] for e in events if "index" in e.get("log_format", "")
            and "not used" in e["log_format"]]


def test_close_writes_the_index_and_open_uses_it(tmp_path, monkeypatch):
    path = tmp_path / "blocks.log"
    closed_log(path, 6)
    ends, log_crc = read_index(index_path(str(path)))
    assert len(ends) == 7 and ends[-1] == os.path.getsize(path)
    walked = []
    real = BlockLog._check_records

    def spy(self, data, view, size, indexed=None):
        walked.append(None if indexed is None else len(indexed) - 1)
        return real(self, data, view, size, indexed)

    monkeypatch.setattr(BlockLog, "_check_records", spy)
    events = []
    log = open_log(path, events)
    assert walked == [6] and not not_used(events)  # nothing left to walk
    assert [b for _n, b in log.blocks()] == fake_blocks(6)
    log.close()


def test_blocks_after_the_index_are_walked(tmp_path):
    """A kill -9 after the index was written: the index covers the first
    blocks, the records after it are walked (a torn last one dropped)."""
    path = tmp_path / "blocks.log"
    closed_log(path, 4)
    saved = open(index_path(str(path)), "rb").read()
    closed_log(path, 9, start=5)
    with open(index_path(str(path)), "wb") as f:  # as if the process died
        f.write(saved)
    with open(path, "ab") as f:
        f.write(b"\x10\x00\x00\x00\x0a\x00")  # a torn record of block 10
    events = []
    log = open_log(path, events)
    assert not not_used(events)
    assert log.head_num == 9 and log.truncated == 6
    assert [b for _n, b in log.blocks()] == fake_blocks(9)
    log.append(fake_blocks(10)[-1])
    log.close()
    assert len(read_index(index_path(str(path)))[0]) == 11


@pytest.mark.parametrize("how", ["damaged index", "log shorter", "log rewritten"])
def test_an_index_that_does_not_fit_is_not_used(tmp_path, how):
    path = tmp_path / "blocks.log"
    closed_log(path, 6)
    ipath = index_path(str(path))
    if how == "damaged index":
        data = bytearray(open(ipath, "rb").read())
        data[30] ^= 1
        open(ipath, "wb").write(bytes(data))
        expected, head = "damaged", 6
    elif how == "log shorter":  # an operator cut the log back to 3 blocks
        ends, _crc = read_index(ipath)
        os.truncate(path, ends[3])
        expected, head = "it covers more than the log", 3
    else:  # another log of the same length behind the old index
        saved = open(ipath, "rb").read()
        os.unlink(path)
        log = open_log(path)
        for block in fake_blocks(6):
            block["transactions"][0]["pad"] = block["transactions"][0]["pad"].upper()
            log.append(block)
        log.close()
        open(ipath, "wb").write(saved)
        expected, head = "the log's bytes up to block 6 changed", 6
    events = []
    log = open_log(path, events)
    assert not_used(events) == [expected]
    assert log.head_num == head
    log.close()


def test_damage_inside_the_indexed_blocks_is_still_a_startup_error(tmp_path):
    path = tmp_path / "blocks.log"
    closed_log(path, 6)
    ends, _crc = read_index(index_path(str(path)))
    data = bytearray(path.read_bytes())
    data[ends[1] + 20] ^= 0xFF  # inside block 2
    path.write_bytes(bytes(data))
    events = []
    with pytest.raises(BlockLogCorrupt, match=f"byte offset {ends[1]} "):
        open_log(path, events)
    assert not_used(events) == ["the log's bytes up to block 6 changed"]


def test_index_writes_are_atomic_and_checked(tmp_path):
    from array import array

    ipath = str(tmp_path / "x.index")
    write_index(ipath, array("Q", [16, 40, 90]), 1234)
    assert read_index(ipath) == (array("Q", [16, 40, 90]), 1234)
    assert os.listdir(tmp_path) == ["x.index"]  # no temporary file left
    whole = open(ipath, "rb").read()
    for cut in (0, 10, 30, len(whole) - 1):
        open(ipath, "wb").write(whole[:cut])
        assert read_index(ipath) is None
    open(ipath, "wb").write(whole + b"\0")
    assert read_index(ipath) is None


@pytest_twisted.inlineCallbacks
def test_a_checkpoint_saves_the_index_of_its_block(new_chain, tmp_path):
    """After a checkpoint the index covers its block, so a start after a
    kill -9 walks only the blocks after it."""
    from twisted.internet import reactor

    from nodeapi.checkpoints import CheckpointService

    from kit.chain import produce

    chain = new_chain()
    produce(chain, 5)
    path = yield CheckpointService(chain, str(tmp_path / "ckpt"), 0, reactor).write()
    assert path
    produce(chain, 2)  # after the checkpoint: not in its index
    ends, log_crc = read_index(index_path(chain.block_log.path))
    assert len(ends) - 1 == 5 == chain.head_block_num - 2
    assert ends[-1] == chain.block_log.offset_of(6)


@pytest_twisted.inlineCallbacks
def test_checkpoints_rewrite_the_index_only_when_it_lags_by_a_tenth(new_chain, tmp_path):
    """Rewriting the whole index at every checkpoint would cost O(chain
    length) each time: it is rewritten once the log grew by a tenth."""
    from twisted.internet import reactor

    from nodeapi.checkpoints import CheckpointService

    from kit.chain import produce

    chain = new_chain()
    service = CheckpointService(chain, str(tmp_path / "ckpt"), 0, reactor)
    produce(chain, 40)
    yield service.write()
    assert len(read_index(index_path(chain.block_log.path))[0]) == 41
    produce(chain, 3)  # 3 < 41 // 10: not rewritten
    yield service.write()
    assert len(read_index(index_path(chain.block_log.path))[0]) == 41
    produce(chain, 1)  # 4 >= 4: rewritten
    yield service.write()
    assert len(read_index(index_path(chain.block_log.path))[0]) == 45
    # a start after a crash still opens the log, walking the 4 blocks after
    produce(chain, 2)
    log = BlockLog(chain.block_log.path + ".copy")
    import shutil

    shutil.copyfile(chain.block_log.path, log.path)
    shutil.copyfile(index_path(chain.block_log.path), index_path(log.path))
    assert log.open().head_num == chain.head_block_num
    log.close()
