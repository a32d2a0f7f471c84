"""A search database filled with another operation numbering
(nodeapi.plugins.searchdb.numbering), against osmem.

Older versions of the node numbered the virtual operations of a
transaction after all its operations, with ``op_in_trx`` = the number of
operations and ``virtual_op`` counted per block; bitshares-core numbers
each right after the operation that raised it (db_block.cpp
``apply_operation``), as the chain now does.  A database the old
numbering filled is found at start and the node says in one line what to
do instead of writing the new numbering after the old."""

from collections import defaultdict

import attr
import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.task import deferLater
from twisted.logger import formatEvent, globalLogPublisher

from nodeapi.chain.numbering import OperationNumbering
from nodeapi.plugins.searchdb.numbering import NumberingMismatch
from nodeapi.service import NodeService

from kit.chain import open_chain, produce, transfer_op
from kit.history import Recorder
from kit.searchdb import FarClock, expected_of, make_service, replay_through, stored_docs
from kit.signing import sign


pytestmark = pytest.mark.slow


def old_numbering(blocks, first_op=0):
    """``blocks`` (AppliedBlocks) numbered as the node did before (from
    ``1.11.first_op``): per
    transaction its operations, then its virtual operations with
    ``op_in_trx`` = its number of operations; ``virtual_op`` 1, 2, ... over
    the whole block, the block's own virtual operations going on from there."""
    stats = defaultdict(lambda: {"total_ops": 0, "most_recent_op": "2.9.0"})
    numbering = OperationNumbering(stats.__getitem__, first_op)
    out = []
    for b in blocks:
        ops, virtual = [], 0
        count = len(b.block["transactions"])
        for t in range(count + 1):
            mine = [o for o in b.operations if o.trx_in_block == t]
            real = [o for o in mine if not o.is_virtual] if t < count else []
            for o in real:
                ops.append(numbering.applied(o.op, o.result, b.block_num, t, o.op_in_trx, 0,
                                             False, o.trx_id))
            for o in mine:
                if o.is_virtual:
                    virtual += 1
                    ops.append(numbering.applied(o.op, o.result, b.block_num, t,
                                                 len(real) if t < count else 0, virtual,
                                                 True, o.trx_id))
        out.append(attr.evolve(b, operations=tuple(ops)))
    return out


@pytest.fixture
def logs():
    events = []
    globalLogPublisher.addObserver(events.append)
    yield events
    globalLogPublisher.removeObserver(events.append)


@pytest_twisted.inlineCallbacks
def test_database_of_the_older_numbering_is_refused_in_one_line(genesis, history_log, osmem_url,
                                                                tmp_path, logs):
    path, expected = history_log
    # the database as an older node filled it
    chain = open_chain(genesis, path)
    rec = Recorder()
    chain.add_consumer(rec)
    yield chain.replay()
    blocks = rec.blocks
    old = old_numbering(blocks)
    # the log's fills come from one-operation transactions: the same ids,
    # but other op_in_trx and virtual_op
    def facts(bs):
        return [(o.id_num, o.op_in_trx, o.virtual_op) for b in bs for o in b.operations]

    assert [f[0] for f in facts(old)] == [f[0] for f in facts(blocks)]
    assert facts(old) != facts(blocks)
    older = make_service(osmem_url, chain, str(tmp_path / "older"), bulk_replay=40,
                         clock=FarClock())
    yield older.prepare()
    for b in old:
        older.block_applied(attr.evolve(b, replay=True))
    older.startService()
    yield older.stopService()
    chain.block_log.close()
    held = yield stored_docs(osmem_url)
    assert sorted(held) == sorted(expected_of(old))
    newest_virtual = max(o.id_num for b in old for o in b.operations if o.is_virtual)

    # this node starts over the same block log: prepare, replay, start
    chain = open_chain(genesis, path)
    svc = make_service(osmem_url, chain, str(tmp_path / "node"), bulk_replay=40,
                       clock=FarClock())
    chain.add_consumer(svc)
    node = NodeService(chain, chain.block_log)
    svc.setServiceParent(node)
    node.startService()
    with pytest.raises(NumberingMismatch) as refused:
        yield node.whenStarted()
    message = str(refused.value)
    assert "\n" not in message
    assert f"its 1.11.{newest_virtual} is " in message
    assert "delete the indices chain-* and restart the node to re-create them" in message
    # whenStarted fires from inside the node's failure handling: stop it
    # once that is done (a reactor turn later), as twistd does
    yield deferLater(reactor, 0, lambda: None)
    yield node.stopService()
    errors = [formatEvent(e) for e in logs if e.get("log_level") is not None
              and e["log_level"].name == "error"]
    # the plugin's line when found, the node's start failing with it
    assert errors == [message, f"Node startup failed: {message}"]
    # nothing was written: the database holds the older documents only
    after = yield stored_docs(osmem_url)
    assert {n: h["_source"] for n, h in after.items()} == \
        {n: h["_source"] for n, h in held.items()}
    assert svc.documents_shipped == 0 and svc.queue.items == 0


@pytest_twisted.inlineCallbacks
def fill(url, chain, data_dir, blocks):
    """A database filled from ``blocks`` (AppliedBlocks) as a node would."""
    svc = make_service(url, chain, data_dir, bulk_replay=40, clock=FarClock())
    yield svc.prepare()
    for b in blocks:
        svc.block_applied(attr.evolve(b, replay=True))
    svc.startService()
    yield svc.stopService()


@pytest_twisted.inlineCallbacks
def recorded(genesis, path):
    """The AppliedBlocks of the block log at ``path``, and its chain."""
    chain = open_chain(genesis, path)
    rec = Recorder()
    chain.add_consumer(rec)
    yield chain.replay()
    return chain, rec.blocks


@pytest_twisted.inlineCallbacks
def test_block_ending_before_the_newest_document(genesis, history_log, osmem_url, tmp_path,
                                                 logs):
    """Documents numbered five operations further (another chain's): the
    chain's last block ends before the database's newest operation, which
    is found when that block is done."""
    path, _expected = history_log
    chain, blocks = yield recorded(genesis, path)
    yield fill(osmem_url, chain, str(tmp_path / "other"), old_numbering(blocks, 5))
    last = blocks[-1]
    top = last.operations[-1].id_num
    svc = make_service(osmem_url, chain, str(tmp_path / "node"), bulk_replay=40,
                       clock=FarClock())
    yield svc.prepare()
    assert svc.shipper.held and max(svc.numbering.check.pending) == top + 5
    for b in blocks:
        svc.block_applied(b)
    assert svc.numbering.error is not None
    assert f"this node's block {last.block_num} ends with 1.11.{top};" in svc.numbering.error
    with pytest.raises(NumberingMismatch):
        svc.startService()
    yield svc.stopService()
    chain.block_log.close()


@pytest_twisted.inlineCallbacks
def test_documents_before_the_first_block_handed_over_are_not_waited_for(
        genesis, history_log, osmem_url, tmp_path):
    """Blocks handed over from a later block on (a checkpoint, the
    indexer's saved position): documents of earlier blocks cannot be
    compared and do not hold shipping; the newest is compared."""
    path, _expected = history_log
    chain, blocks = yield recorded(genesis, path)
    rec = Recorder()
    chain.add_consumer(rec)
    chain.push_transaction(sign(chain, [transfer_op(77)]))  # a block without fills
    produce(chain)
    blocks = blocks + rec.blocks
    yield fill(osmem_url, chain, str(tmp_path / "a"), blocks)
    svc = make_service(osmem_url, chain, str(tmp_path / "b"), bulk_replay=40,
                       clock=FarClock())
    yield svc.prepare()
    pending = dict(svc.numbering.check.pending)
    assert len(pending) == 2 and svc.shipper.held  # the newest, the newest virtual
    newest = max(pending)
    start = pending[newest][0]
    assert min(f[0] for f in pending.values()) < start  # the virtual one is older
    svc._live_op = min(o.id_num for o in blocks[start - 1].operations) - 1
    for b in blocks[start - 1:]:
        svc.block_applied(b)
    assert svc.numbering.check.settled and not svc.shipper.held and svc.numbering.error is None
    svc.startService()
    yield svc.stopService()
    chain.block_log.close()


@pytest_twisted.inlineCallbacks
def test_database_of_this_numbering_goes_on(genesis, history_log, osmem_url, tmp_path, logs):
    """The same check passes for a database this numbering filled: a
    restart with the documents of the last blocks lost writes them again."""
    path, expected = history_log
    chain = open_chain(genesis, path)
    first = make_service(osmem_url, chain, str(tmp_path / "a"), bulk_replay=40,
                         clock=FarClock())
    yield from replay_through(chain, first)
    docs = yield stored_docs(osmem_url)
    assert sorted(docs) == sorted(expected)
    chain = open_chain(genesis, path)
    second = make_service(osmem_url, chain, str(tmp_path / "b"), bulk_replay=40,
                          clock=FarClock())
    yield from replay_through(chain, second)
    assert second.numbering.error is None and second.numbering.check.settled
    assert second.documents_shipped == 0  # everything was there
    assert any("shipping waits until this node has numbered" in formatEvent(e) for e in logs)
