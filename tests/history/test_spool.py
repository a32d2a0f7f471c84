"""The searchdb spool (nodeapi.plugins.searchdb.spool.BulkQueue): disk use stays
bounded by what is still waiting during a long outage followed by a slow
catch-up, and every bulk comes back in order with its exact content."""

import os
import random
import resource
import signal
import subprocess
import sys
from array import array

from nodeapi.plugins.searchdb.spool import _HEAD, Bulk, BulkQueue

from kit.paths import ROOT, TESTS


def make_bulk(n: int, count: int, body_len: int) -> Bulk:
    """Bulk number ``n``: ``count`` items (ids ``n*100 + i``, ops
    ``n*1000 + i``) whose body is exactly ``body_len`` bytes; block ``n``."""
    ids = array("q", (n * 100 + i for i in range(count)))
    ops = array("q", (n * 1000 + i for i in range(count)))
    per = body_len // count
    offsets = array("I", (i * per for i in range(count)))
    rng = random.Random(n)
    body = bytes(rng.randrange(256) for _ in range(body_len))
    return Bulk(ids, ops, offsets, body, n)


def record_size(bulk: Bulk) -> int:
    """Bytes of the bulk's spool record."""
    return _HEAD.size + 20 * len(bulk) + len(bulk.body)


def shape(bulk: Bulk) -> tuple:
    """Everything a bulk carries, comparable."""
    return (bulk.ids.tolist(), bulk.ops.tolist(), bulk.offsets.tolist(), bulk.body, bulk.block)


def on_disk(queue: BulkQueue) -> int:
    """Sum of the sizes of the spool files that exist (all of them, not only
    the ones the queue knows)."""
    d = os.path.dirname(queue.spool_path)
    base = os.path.basename(queue.spool_path)
    return sum(os.path.getsize(os.path.join(d, n)) for n in os.listdir(d) if n.startswith(base))


def pop_one(queue: BulkQueue) -> Bulk:
    """Peek and pop the oldest bulk."""
    assert queue.peek() is not None
    return queue.pop()


def test_outage_and_slow_catch_up_exact_sizes(tmp_path):
    """Fixed-size records (380 bytes, 11 per 4096-byte segment): during the
    outage the disk holds exactly what was spooled; during a catch-up that
    pops two bulks per pushed one, read segments are deleted, so the disk
    never holds more than the unread bytes plus one segment, although far
    more than that went through the spool."""
    path = str(tmp_path / "spool")
    queue = BulkQueue(path, max_memory=1000, segment_bytes=4096)
    pushed, popped = [], []
    total_spooled = 0

    def push(n):
        nonlocal total_spooled
        bulk = make_bulk(n, 3, 300)
        assert record_size(bulk) == 380 and bulk.size == 456
        before = queue.spooled
        queue.push(bulk)
        pushed.append(shape(bulk))
        total_spooled += 380 * (queue.spooled - before)

    # outage: 2 bulks fit in memory (912 bytes), the next 220 are spooled
    for n in range(222):
        push(n)
    assert len(queue.segment_paths) == 20  # 220 / 11
    assert queue.spooled == 220 and queue.spooled_bytes == 220 * 380
    assert queue.disk_bytes == on_disk(queue) == 220 * 380
    assert queue.memory_bytes == 912 and queue.items == 222 * 3
    # slow catch-up: the database takes 2 bulks while the chain adds 1
    n = 222
    while len(queue):
        popped.append(shape(pop_one(queue)))
        if len(queue):
            popped.append(shape(pop_one(queue)))
        if n < 600:
            push(n)
            n += 1
        assert queue.disk_bytes == on_disk(queue)
        # what was read stays on disk only in the head segment (< 11 records)
        assert queue.disk_bytes - queue.spooled_bytes <= 10 * 380
        assert on_disk(queue) <= queue.spooled_bytes + 4180
    # 440 records (40 segments) went through the spool; the old single file
    # would have grown to 167200 bytes before shrinking
    assert total_spooled == 440 * 380 == 40 * 4180
    assert popped == pushed and len(popped) == 600
    assert queue.items == 0 and queue.memory_bytes == 0
    assert queue.segment_paths == [] and os.listdir(str(tmp_path)) == []


def test_random_sizes_order_and_bound(tmp_path):
    """Bulks of random sizes through waves of outage and catch-up: the disk
    never exceeds unread bytes + segment_bytes + the largest record, every
    bulk comes back in order, byte for byte."""
    rng = random.Random(7)
    path = str(tmp_path / "spool")
    segment = 16 << 10
    queue = BulkQueue(path, max_memory=8 << 10, segment_bytes=segment)
    pushed, popped, largest, n = [], [], 0, 0
    for wave in range(6):
        for _ in range(rng.randrange(50, 150)):  # outage: push only
            bulk = make_bulk(n, rng.randrange(1, 20), rng.randrange(20, 3000))
            n += 1
            largest = max(largest, record_size(bulk))
            queue.push(bulk)
            pushed.append(shape(bulk))
            assert on_disk(queue) == queue.disk_bytes
            assert queue.disk_bytes < queue.spooled_bytes + segment + largest
        for _ in range(rng.randrange(50, 200)):  # catch-up: pop more than pushed
            if rng.random() < 0.3:
                bulk = make_bulk(n, rng.randrange(1, 20), rng.randrange(20, 3000))
                n += 1
                largest = max(largest, record_size(bulk))
                queue.push(bulk)
                pushed.append(shape(bulk))
            if len(queue):
                popped.append(shape(pop_one(queue)))
            assert on_disk(queue) == queue.disk_bytes
            assert queue.disk_bytes < queue.spooled_bytes + segment + largest
    while len(queue):
        popped.append(shape(pop_one(queue)))
    assert popped == pushed and queue.items == 0 and os.listdir(str(tmp_path)) == []


def test_replace_head_and_split_keep_order(tmp_path):
    """A head bulk read back from a segment and then split (a refused body)
    is shipped in halves before the next spooled bulk."""
    queue = BulkQueue(str(tmp_path / "spool"), max_memory=1, segment_bytes=1000)
    bulks = [make_bulk(n, 4, 400) for n in range(5)]
    for b in bulks:
        queue.push(b)
    assert queue.spooled == 4 and len(queue.segment_paths) == 2  # 2 records per segment
    first = pop_one(queue)
    head = queue.peek()
    queue.replace_head(head.split())
    ids = list(first.ids)
    while len(queue):
        ids.extend(pop_one(queue).ids)
    assert ids == [i for b in bulks for i in b.ids]


def test_stale_files_removed_and_discard(tmp_path):
    """Spool files of an earlier run (the old single file and segments) are
    removed on start; discard removes the live segments."""
    path = str(tmp_path / "spool")
    for name in ("spool", "spool.1", "spool.17"):
        (tmp_path / name).write_bytes(b"old")
    (tmp_path / "other").write_bytes(b"keep")
    queue = BulkQueue(path, max_memory=1, segment_bytes=500)
    assert sorted(os.listdir(str(tmp_path))) == ["other"]
    for n in range(4):
        queue.push(make_bulk(n, 2, 200))
    assert queue.segment_paths == [path + ".1", path + ".2"]
    assert sorted(os.listdir(str(tmp_path))) == ["other", "spool.1", "spool.2"]
    queue.discard()
    assert sorted(os.listdir(str(tmp_path))) == ["other"] and len(queue) == 0


def _failed_write_scenario(directory: str) -> int:
    """Run in a child process (see the test below): RLIMIT_FSIZE applies to
    every file the process writes, pytest's own output included, so the
    limit must never be set in the test process itself.  Returns the number
    of bulks that came back."""
    resource.setrlimit(resource.RLIMIT_FSIZE,
                       (resource.RLIM_INFINITY, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails with EFBIG
    path = os.path.join(directory, "spool")
    queue = BulkQueue(path, max_memory=1, segment_bytes=1 << 20)
    bulks = [make_bulk(n, 2, 500) for n in range(6)]  # records of 560 bytes
    queue.push(bulks[0])  # memory
    resource.setrlimit(resource.RLIMIT_FSIZE,
                       (1500, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    queue.push(bulks[1])
    queue.push(bulks[2])  # 1120 bytes in spool.1
    try:
        queue.push(bulks[3])  # would end at 1680 > 1500: partial write
    except OSError:
        pass
    else:
        raise AssertionError("the write past RLIMIT_FSIZE did not fail")
    assert os.path.getsize(path + ".1") == 1500  # 380 bytes of junk past the records
    assert queue.spooled == 2 and queue.spooled_bytes == 1120 and queue.items == 6
    queue.push(bulks[4])  # a new segment
    queue.push(bulks[5])
    assert queue.segment_paths == [path + ".1", path + ".2"]
    assert queue.disk_bytes == 4 * 560
    out = []
    while len(queue):
        out.append(shape(pop_one(queue)))
    assert out == [shape(b) for i, b in enumerate(bulks) if i != 3]
    assert os.listdir(directory) == []
    return len(out)


def test_failed_write_leaves_queue_consistent(tmp_path):
    """A record that fails half-written (file too large: EFBIG) is not
    queued and not counted; the partial bytes are never read, later bulks
    go to a new segment and everything else comes back intact.  The file
    size limit is set in a child process only."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [here, TESTS, ROOT, os.environ.get("PYTHONPATH", "")]))
    code = ("import sys, test_spool; "
            "print('bulks back:', test_spool._failed_write_scenario(sys.argv[1]))")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "bulks back: 5"
