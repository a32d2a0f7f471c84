"""Blocks as graphene makes them: processed transactions whose
operation_results the producer cleared (bitshares-core 7.x db_block.cpp
``_generate_block``) and signed_block::calculate_merkle_root over them;
push_block's merkle check, results a peer states, replay from the log."""

import pytest
import pytest_twisted
from bitsharesbase import operations
from twisted.logger import globalLogPublisher

from nodeapi.chain import authority as auth
from nodeapi.chain.chain import Chain
from nodeapi.chain.errors import MerkleRootMismatch
from nodeapi.protocol.block import block_id, block_signing_digest, merkle_root

from kit.chain import account_options, claim_op, key_auth, produce, transfer_op, with_fee
from kit.keys import DEV_WIF, OTHER_WIF
from kit.signing import sign


def _create_account(chain, name):
    pub = chain.state.get("1.2.6")["active"]["key_auths"][0][0]
    op, _fee = with_fee(chain, operations.Account_create, registrar="1.2.6",
                        referrer="1.2.6", referrer_percent=0, name=name, owner=key_auth(pub),
                        active=key_auth(pub), options=account_options(pub), extensions={})
    return chain.push_transaction(sign(chain, [op]))


@pytest.fixture
def producer(chain):
    """Block 1: the balance claim; block 2: a transfer and an account
    creation (results ``[0, {}]`` and ``[1, "1.2.N"]``)."""
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    chain.push_transaction(sign(chain, [transfer_op(5)]))
    _create_account(chain, "merkle-1")
    produce(chain)
    return chain


def _reforge(chain_block, transactions, root=None):
    """``chain_block`` with other ``transactions``; the header keeps its
    merkle root unless ``root`` is given, then it is re-signed by the
    (dev key) witness."""
    block = dict(chain_block, transactions=transactions)
    if root is not None:
        block["transaction_merkle_root"] = root
        block["witness_signature"] = auth.sign_digest(block_signing_digest(block), DEV_WIF)
    return block


def test_produced_block_clears_results_and_has_graphene_merkle_root(producer):
    block = producer.get_block(2)
    trxs = block["transactions"]
    assert [t["operation_results"] for t in trxs] == [[], []]
    assert producer.state.get("1.2.18")["name"] == "merkle-1"
    assert block["transaction_merkle_root"] == merkle_root(trxs, "TEST")
    assert block["transaction_merkle_root"] != "00" * 20
    # the root covers the results: with the applied ones stated it differs
    stated = [dict(t, operation_results=r)
              for t, r in zip(trxs, ([[0, {}]], [[1, "1.2.18"]]))]
    assert merkle_root(stated, "TEST") != block["transaction_merkle_root"]
    assert producer.get_block(1)["transactions"][0]["operation_results"] == []


def test_follower_accepts_produced_blocks(producer, genesis, new_chain):
    follower = new_chain()
    events = []
    globalLogPublisher.addObserver(events.append)
    try:
        for num in (1, 2):
            follower.push_block(producer.get_block(num))
    finally:
        globalLogPublisher.removeObserver(events.append)
    # cleared results are not results that differ
    assert [e for e in events if e.get("log_event") == "block_results_differ"] == []
    assert follower.head_block_id == producer.head_block_id
    assert follower.get_block(2) == producer.get_block(2)
    assert follower.state.get("1.2.18")["name"] == "merkle-1"


@pytest.mark.parametrize("tamper", ["signature", "result", "stated_results"])
def test_tampered_transaction_fails_merkle_check(producer, genesis, tamper, new_chain):
    follower = new_chain()
    follower.push_block(producer.get_block(1))
    head = follower.head_block_id
    block = producer.get_block(2)
    trx = dict(block["transactions"][1])
    if tamper == "signature":  # a valid signature, by another key
        other = sign(follower, [transfer_op(1)], wifs=(OTHER_WIF,))
        trx["signatures"] = other["signatures"]
    elif tamper == "result":
        trx["operation_results"] = [[1, "1.2.19"]]
    else:  # the results applying gives, where the producer signed none
        trx["operation_results"] = [[1, "1.2.18"]]
    bad = _reforge(block, [block["transactions"][0], trx])
    with pytest.raises(MerkleRootMismatch, match="^Transaction merkle root mismatch: block "
                                                 f"has {block['transaction_merkle_root']}, "
                                                 "its transactions give [0-9a-f]{40}$"):
        follower.push_block(bad)
    assert follower.head_block_id == head and follower.head_block_num == 1
    assert follower.block_log.head_num == 1
    follower.push_block(block)  # the genuine block still applies
    assert follower.head_block_id == producer.head_block_id


def test_stated_results_are_not_enforced_as_in_graphene(producer, genesis, new_chain):
    """graphene's _apply_block discards what apply_transaction returns: a
    block (correct merkle root, signed by its witness) whose results differ
    from applying is accepted and stored as signed; consumers get the
    applied results and a warning is logged."""
    follower = new_chain()
    follower.push_block(producer.get_block(1))
    block = producer.get_block(2)
    trx = dict(block["transactions"][1], operation_results=[[1, "1.2.99"]])
    trxs = [block["transactions"][0], trx]
    forged = _reforge(block, trxs, root=merkle_root(trxs, "TEST"))
    seen, events = [], []
    follower.add_consumer(type("C", (), {"block_applied": lambda self, b: seen.append(b)})())
    globalLogPublisher.addObserver(events.append)
    try:
        follower.push_block(forged)
    finally:
        globalLogPublisher.removeObserver(events.append)
    assert follower.head_block_id == block_id(forged)
    assert follower.get_block(2) == forged
    assert [(op.trx_in_block, op.result) for op in seen[0].operations
            if not op.is_virtual] == [(0, [0, {}]), (1, [1, "1.2.18"])]
    warned = [e for e in events if e.get("log_event") == "block_results_differ"]
    assert len(warned) == 1
    assert (warned[0]["trx_num"], warned[0]["stated"], warned[0]["applied"]) == (
        1, [[1, "1.2.99"]], [[1, "1.2.18"]])


def test_a_transaction_stating_no_results_is_not_reported(producer, new_chain):
    """bitshares-core clears the results of the blocks it makes
    (db_block.cpp ``_generate_block``: ``ptx.operation_results.clear()``):
    a block whose transactions state none is applied without a
    ``block_results_differ`` warning; consumers get the applied results."""
    follower = new_chain()
    follower.push_block(producer.get_block(1))
    block = producer.get_block(2)
    trxs = [dict(t, operation_results=[]) for t in block["transactions"]]
    cleared = _reforge(block, trxs, root=merkle_root(trxs, "TEST"))
    seen, events = [], []
    follower.add_consumer(type("C", (), {"block_applied": lambda self, b: seen.append(b)})())
    globalLogPublisher.addObserver(events.append)
    try:
        follower.push_block(cleared)
    finally:
        globalLogPublisher.removeObserver(events.append)
    assert follower.get_block(2) == cleared
    assert [(op.trx_in_block, op.result) for op in seen[0].operations
            if not op.is_virtual] == [(0, [0, {}]), (1, [1, "1.2.18"])]
    assert not [e for e in events if e.get("log_event") == "block_results_differ"]


@pytest_twisted.inlineCallbacks
def test_blocks_survive_replay_from_block_log(producer, genesis, new_chain):
    produce(producer)
    replayed = Chain(genesis, producer.block_log)
    count = yield replayed.replay()
    assert count == 3
    assert replayed.head_block_id == producer.head_block_id
    for num in (1, 2, 3):
        block = replayed.get_block(num)
        assert block == producer.get_block(num)
        assert block["transaction_merkle_root"] == merkle_root(block["transactions"], "TEST")
    assert replayed.state.get("1.2.18")["name"] == "merkle-1"
    # and a follower of the replayed node accepts its next block
    replayed.push_transaction(sign(replayed, [transfer_op(9)]))
    produce(replayed)
    follower = new_chain()
    for num in range(1, 5):
        follower.push_block(replayed.get_block(num))
    assert follower.head_block_id == replayed.head_block_id
    assert follower.get_block(4)["transactions"][0]["operation_results"] == []


@pytest_twisted.inlineCallbacks
def test_numbering_survives_a_block_the_log_refused(genesis, tmp_path):
    """A block whose block log write fails (disk full) is rolled back with
    its 1.11/2.9 numbers and the statistics: the next block numbers from
    where the chain stood, and a replay of the log hands out the same ids
    (nodeapi.chain.numbering, BlockApplier._undo_block)."""
    from nodeapi.chain.blocklog import BlockLog, BlockLogError

    from kit.history import Recorder

    class FullDisk(BlockLog):
        full = False

        def append(self, block):
            if self.full:
                raise OSError(28, "No space left on device")
            return super().append(block)

    log = FullDisk(str(tmp_path / "blocks"), sync=False).open()
    chain = Chain(genesis, log)
    rec = Recorder()
    chain.add_consumer(rec)
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    chain.push_transaction(sign(chain, [transfer_op(5), transfer_op(6)]))
    before = dict(chain.state.get(chain.state.get("1.2.6")["statistics"]))
    log.full = True
    with pytest.raises(BlockLogError, match="No space left on device"):
        produce(chain)
    assert chain.state.get(chain.state.get("1.2.6")["statistics"]) == before
    log.full = False
    produce(chain)
    ops = [op for b in rec.blocks for op in b.operations]
    assert [op.id_num for op in ops] == list(range(len(ops))) and len(ops) == 3
    entries = [e for op in ops for e in op.account_history]
    assert [e.n for e in entries] == list(range(len(entries)))
    stats = chain.state.get(chain.state.get("1.2.6")["statistics"])
    mine = [e for e in entries if e.account == "1.2.6"]
    assert stats["total_ops"] == len(mine) and stats["most_recent_op"] == f"2.9.{mine[-1].n}"
    again, rec2 = Chain(genesis, log), Recorder()
    again.add_consumer(rec2)
    yield again.replay()
    assert [(op.id_num, op.account_history) for b in rec2.blocks for op in b.operations] == \
        [(op.id_num, op.account_history) for op in ops]
    log.close()
