"""Signatures of followed blocks: a node that does not produce pushes its
peers' blocks without recovering the transactions' signers, as
bitshares-core's non-producing nodes push them with
``skip_transaction_signatures`` (libraries/app/application.cpp
``handle_block``; db_block.cpp ``_apply_transaction`` then skips
``verify_authority``); ``force_validate`` (``--force-validate``) verifies
them.  The witness signature is checked in both modes."""

import pytest
import pytest_twisted
from twisted.internet import reactor

from nodeapi.peers.service import PeerService
from nodeapi.protocol.block import block_id, merkle_root, sign_block
from nodeapi.protocol.transaction import sign_transaction

from kit.chain import claim_op, produce, transfer_op
from kit.keys import CHAIN_ID, DEV_WIF, OTHER_WIF
from kit.peer_stub import ChainRpcFactory
from kit.peers import FAST, close, listen
from kit.signing import sign
from kit.wait import wait_for

CORE = "1.3.0"
#: the transfer of block 3 (init0 -> init1), in satoshis
AMOUNT = 123456


def _chain_with_transfer(producer):
    """Block 2 claims the genesis balance into init0, block 3 (the head: a
    block signed again gets another id, so no block may follow it) carries
    one transfer of :data:`AMOUNT` to init1."""
    produce(producer)
    producer.push_transaction(sign(producer, [claim_op()]))
    produce(producer)
    producer.push_transaction(sign(producer, [transfer_op(AMOUNT)]))
    produce(producer)


def _wrong_transaction_signature(block):
    """Block 3 as a witness would sign it whose transfer carries a well-formed
    signature by a key init0 does not hold (the merkle root and the witness
    signature made again over it)."""
    if block["previous"].startswith("00000002"):
        trx = dict(block["transactions"][0])
        unsigned = {k: v for k, v in trx.items()
                    if k not in ("signatures", "operation_results")}
        trx["signatures"] = sign_transaction(unsigned, CHAIN_ID, [OTHER_WIF])["signatures"]
        block = dict(block, transactions=[trx])
        block["transaction_merkle_root"] = merkle_root(block["transactions"], "TEST")
        block = sign_block(block, DEV_WIF)
    return block


def _wrong_witness_signature(block):
    """Block 3 signed by a key that is not its witness' signing key."""
    if block["previous"].startswith("00000002"):
        block = sign_block(block, OTHER_WIF)
    return block


@pytest_twisted.inlineCallbacks
def _follow(producer, follower, tamper, force_validate):
    _chain_with_transfer(producer)
    port = yield listen(ChainRpcFactory(producer, tamper=tamper))
    svc = PeerService(follower, reactor=reactor, parameters=FAST,
                      force_validate=force_validate)
    svc.startService()
    yield svc.add_node(f"127.0.0.1:{port.getHost().port}")
    return svc, port


@pytest_twisted.inlineCallbacks
def test_a_wrong_transaction_signature_is_skipped_without_force_validate(producer, follower):
    svc, port = yield _follow(producer, follower, _wrong_transaction_signature, False)
    yield wait_for(lambda: follower.head_block_num == 3
                   and svc.potential_peers()[0]["state"] == "live")
    assert follower.head_block_id == block_id(_wrong_transaction_signature(
        dict(producer.get_block(3))))
    assert follower.state.balance("1.2.7", CORE) == AMOUNT
    yield close(svc, port)


@pytest_twisted.inlineCallbacks
def test_force_validate_refuses_a_wrong_transaction_signature(producer, follower):
    svc, port = yield _follow(producer, follower, _wrong_transaction_signature, True)
    yield wait_for(lambda: svc.potential_peers()[0]["state"] == "bad")
    assert follower.head_block_num == 2
    assert follower.state.balance("1.2.7", CORE) == 0
    reason = svc.potential_peers()[0]["bad_reason"]
    assert "authority" in reason.lower() or "signature" in reason.lower(), reason
    yield close(svc, port)


@pytest.mark.parametrize("force_validate", [False, True])
@pytest_twisted.inlineCallbacks
def test_a_wrong_witness_signature_is_always_refused(producer, follower, force_validate):
    svc, port = yield _follow(producer, follower, _wrong_witness_signature, force_validate)
    yield wait_for(lambda: svc.potential_peers()[0]["state"] == "bad")
    assert follower.head_block_num == 2
    assert "signed by" in svc.potential_peers()[0]["bad_reason"]
    yield close(svc, port)


@pytest.mark.parametrize("args,expected", [
    (["--plugins", "account_history"], False),
    (["--plugins", "account_history", "--force-validate"], True),
    (["--plugins", "witness account_history"], True),  # a producer: application.cpp
])
def test_the_daemon_verifies_followed_signatures_only_when_told_or_producing(
        tmp_path, args, expected):
    """tap.py: ``--force-validate`` or the witness plugin make the peers
    service verify every signature (graphene ``_is_block_producer ||
    _force_validate``); a plain follower skips them."""
    from twisted.internet.testing import MemoryReactorClock

    from nodeapi.tap import Options, makeService

    options = Options()
    options.parseOptions(["--data-dir", str(tmp_path / "data"), "--seed-node",
                          "127.0.0.1:1", *args])
    top = makeService(options, MemoryReactorClock())
    try:
        assert top.node.peers.force_validate is expected
    finally:
        top.node.chain.block_log.close()
