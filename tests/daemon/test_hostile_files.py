"""Files an operator names that are not what they should be - a FIFO with
no writer, /dev/zero, a directory, a file over its cap - are one clear
line each (nodeapi.files), never a hang or a MemoryError."""

import os

import pytest
from twisted.python import usage

from nodeapi.chain.checkpoint import CheckpointError, read_checkpoint
from nodeapi.config import Options
from nodeapi.files import CONFIG_LIMIT, FileRefused, read_bounded


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _message(*args):
    with pytest.raises(usage.UsageError) as info:
        Options().parseOptions(list(args))
    return str(info.value)


def test_read_bounded_refuses_what_is_not_a_small_regular_file(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(FileRefused, match="^a FIFO, not a regular file$"):
        read_bounded(str(tmp_path / "fifo"), 100)  # no writer: would block a plain open
    with pytest.raises(FileRefused, match="^a character device, not a regular file$"):
        read_bounded("/dev/zero", 100)
    with pytest.raises(FileRefused, match="^a directory, not a regular file$"):
        read_bounded(str(tmp_path), 100)
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(FileRefused, match="^101 bytes, over the limit of 100$"):
        read_bounded(str(tmp_path / "big"), 100)
    (tmp_path / "fits").write_bytes(b"x" * 100)
    assert read_bounded(str(tmp_path / "fits"), 100) == b"x" * 100
    with pytest.raises(FileNotFoundError):
        read_bounded(str(tmp_path / "missing"), 100)


def test_the_options_files_are_one_line_each(cwd):
    os.mkfifo(cwd / "fifo")
    assert _message("--config", "fifo") == f"--config: {cwd / 'fifo'}: a FIFO, not a regular file"
    assert _message("--config", "/dev/zero") == (
        "--config: /dev/zero: a character device, not a regular file")
    with open(cwd / "huge.ini", "wb") as f:
        f.truncate(CONFIG_LIMIT + 1)  # sparse
    assert _message("--config", "huge.ini") == (
        f"--config: {cwd / 'huge.ini'}: {CONFIG_LIMIT + 1:,} bytes, over the limit of "
        f"{CONFIG_LIMIT:,}")
    assert _message("--genesis-json", "/dev/zero") == (
        "--genesis-json: cannot read /dev/zero: a character device, not a regular file")
    assert _message("--genesis-json", "fifo") == (
        f"--genesis-json: cannot read {cwd / 'fifo'}: a FIFO, not a regular file")
    assert _message("--api-access", "fifo") == (
        f"--api-access: api-access file {cwd / 'fifo'}: cannot read: a FIFO, not a regular "
        "file")
    (cwd / "d").mkdir()
    os.mkfifo(cwd / "d" / "config.ini")  # the data dir's own
    assert _message("--data-dir", "d") == (
        f"--data-dir: {cwd / 'd' / 'config.ini'}: a FIFO, not a regular file")


def test_a_state_file_that_is_no_regular_file_is_a_checkpoint_error(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    for path in (str(tmp_path / "fifo"), "/dev/zero"):
        with pytest.raises(CheckpointError, match="not a regular file"):
            read_checkpoint(path, "00" * 32)
