"""Transaction ids, signature digests, signing and signer recovery, checked
against transactions signed by python-bitshares' bitsharesbase for an
arbitrary chain id."""

import hashlib

import pytest
from bitsharesbase import operations
from bitsharesbase.signedtransactions import Signed_Transaction
from graphenebase.account import PublicKey as GPublicKey
from graphenebase.signedtransactions import Signature

from nodeapi.protocol import errors
from nodeapi.protocol.keys import PrivateKey, PublicKey, is_canonical
from nodeapi.protocol.transaction import (
    recover_signers, serialize_processed_transaction, serialize_signed_transaction,
    serialize_transaction, sign_transaction, signature_digest, transaction_id,
    unsigned_of_processed, verify_signature)

from kit.keys import CHAIN_ID, DEV_PUB, DEV_WIF, OTHER_WIF


ARBITRARY_CHAIN = hashlib.sha256(b"an arbitrary graphene chain").hexdigest()
CHAIN = {"chain_id": ARBITRARY_CHAIN, "core_symbol": "TEST", "prefix": "TEST"}


def _bitsharesbase_signed(wifs, chain=CHAIN, memo=False):
    data = {"fee": {"amount": 2000000, "asset_id": "1.3.0"}, "from": "1.2.6", "to": "1.2.7",
            "amount": {"amount": 123456789, "asset_id": "1.3.0"}, "extensions": [],
            "prefix": "TEST"}
    if memo:
        data["memo"] = {"from": DEV_PUB, "to": DEV_PUB, "nonce": "5862723643998573708",
                        "message": "fe5d1b1f6b4fd4e7d4bca2c9e2e7a4b8", "prefix": "TEST"}
    t = Signed_Transaction(ref_block_num=4660, ref_block_prefix=2271560481,
                           expiration="2030-05-06T07:08:09",
                           operations=[operations.Transfer(**data)])
    t.sign(list(wifs), chain)
    return t, t.json()


def test_bitsharesbase_signed_transaction_recovers_its_keys():
    t, trx = _bitsharesbase_signed([DEV_WIF, OTHER_WIF], memo=True)
    assert transaction_id(trx) == t.id
    signers = recover_signers(trx, ARBITRARY_CHAIN, "TEST")
    assert [k.to_str("TEST") for k in signers] == [
        DEV_PUB, PrivateKey.from_wif(OTHER_WIF).public_key.to_str("TEST")]
    assert verify_signature(trx, ARBITRARY_CHAIN, PublicKey.from_str(DEV_PUB))
    assert serialize_signed_transaction(trx) == bytes(t)


def test_flipped_byte_or_other_chain_does_not_verify():
    _, trx = _bitsharesbase_signed([DEV_WIF])
    dev = PublicKey.from_str(DEV_PUB)
    assert verify_signature(trx, ARBITRARY_CHAIN, dev)
    assert not verify_signature(trx, CHAIN_ID, dev)
    assert recover_signers(trx, CHAIN_ID) != [dev]
    tampered = dict(trx, ref_block_prefix=trx["ref_block_prefix"] ^ 1)
    assert not verify_signature(tampered, ARBITRARY_CHAIN, dev)
    op = [0, dict(trx["operations"][0][1],
                  amount={"amount": 123456788, "asset_id": "1.3.0"})]
    assert not verify_signature(dict(trx, operations=[op]), ARBITRARY_CHAIN, dev)
    sig = bytearray(bytes.fromhex(trx["signatures"][0]))
    sig[40] ^= 0x01
    bad_sig = dict(trx, signatures=[sig.hex()])
    assert not verify_signature(bad_sig, ARBITRARY_CHAIN, dev)


def test_digest_and_id_definitions():
    _, trx = _bitsharesbase_signed([DEV_WIF])
    packed = serialize_transaction(trx)
    assert transaction_id(trx) == hashlib.sha256(packed).hexdigest()[:40]
    assert signature_digest(trx, ARBITRARY_CHAIN) == hashlib.sha256(
        bytes.fromhex(ARBITRARY_CHAIN) + packed).digest()


def test_unsigned_bytes_cut_from_the_processed_bytes():
    """A pushed block's transaction is packed once, as graphene's
    ``processed_transaction`` (libraries/protocol/include/graphene/protocol/
    transaction.hpp: the ``transaction`` members, then ``signatures``, then
    ``operation_results``); the bytes its id and digest hash are that
    packing without the last two members."""
    _, trx = _bitsharesbase_signed([DEV_WIF, OTHER_WIF], memo=True)
    for results in (None, [[0, {}]], [[1, "1.2.30"]]):
        ptrx = dict(trx) if results is None else dict(trx, operation_results=results)
        processed = serialize_processed_transaction(ptrx, "TEST")
        assert unsigned_of_processed(processed, ptrx, "TEST") == serialize_transaction(
            ptrx, "TEST")
    unsigned = dict(trx, signatures=[])
    assert unsigned_of_processed(serialize_processed_transaction(unsigned), unsigned) == \
        serialize_transaction(unsigned)


def test_our_signatures_verify_in_bitsharesbase():
    t, trx = _bitsharesbase_signed([DEV_WIF])
    unsigned = dict(trx, signatures=[])
    ours = sign_transaction(unsigned, ARBITRARY_CHAIN, [PrivateKey.from_wif(OTHER_WIF), DEV_WIF])
    assert len(ours["signatures"]) == 2
    assert all(is_canonical(bytes.fromhex(s)) for s in ours["signatures"])
    assert sign_transaction(unsigned, ARBITRARY_CHAIN, [DEV_WIF]) == sign_transaction(
        unsigned, ARBITRARY_CHAIN, [DEV_WIF])  # deterministic
    t.data["signatures"].data = [Signature(bytes.fromhex(s)) for s in ours["signatures"]]
    # raises MissingSignatureForKey unless both keys signed
    t.verify([GPublicKey(DEV_PUB, prefix="TEST"),
              GPublicKey(PrivateKey.from_wif(OTHER_WIF).public_key.to_str("TEST"),
                         prefix="TEST")], CHAIN)


def test_signature_errors():
    _, trx = _bitsharesbase_signed([DEV_WIF])
    with pytest.raises(errors.InvalidSignature, match="Duplicate"):
        recover_signers(dict(trx, signatures=trx["signatures"] * 2), ARBITRARY_CHAIN)
    with pytest.raises(errors.InvalidHex):
        recover_signers(dict(trx, signatures=["zz"]), ARBITRARY_CHAIN)
    with pytest.raises(errors.InvalidSignature):
        recover_signers(dict(trx, signatures=[trx["signatures"][0][:-2]]), ARBITRARY_CHAIN)
    sig = bytearray(bytes.fromhex(trx["signatures"][0]))
    sig[33] |= 0x80
    with pytest.raises(errors.NonCanonicalSignature):
        recover_signers(dict(trx, signatures=[sig.hex()]), ARBITRARY_CHAIN)
    with pytest.raises(errors.InvalidHex):
        signature_digest(trx, "1234")
    with pytest.raises(errors.WrongKeyPrefix):
        _, memo_trx = _bitsharesbase_signed([DEV_WIF], memo=True)
        transaction_id(memo_trx, "BTS")
