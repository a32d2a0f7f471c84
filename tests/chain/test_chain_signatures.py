"""A transaction's signatures cost a bounded number of key recoveries:
the size limit counts the signatures, duplicates are refused before any
recovery, and a transaction never gets more keys recovered than the
authorities it requires hold (+1).  Checked by counting recoveries, on the
chain and through the API functions an anonymous client can call
(graphene libraries/protocol/transaction.cpp ``get_signature_keys``:
tx_duplicate_sig; ``verify_authority``: tx_irrelevant_sig; db_block.cpp
``_apply_transaction``: maximum_transaction_size of the packed signed
transaction)."""

import hashlib
import struct

import pytest

from nodeapi.api.base import Session
from nodeapi.api.broadcast import NetworkBroadcastApi
from nodeapi.api.database import DatabaseApi
from nodeapi.chain import errors
from nodeapi.protocol.times import format_time
from nodeapi.node import Node
from nodeapi.protocol.keys import PrivateKey, PublicKey
from nodeapi.protocol.transaction import sign_transaction

from kit.keys import CHAIN_ID, DEV_WIF

HOSTILE_SIGNATURES = 30000


@pytest.fixture
def recoveries(monkeypatch):
    """Counts every public key recovery (``PublicKey.recover``)."""
    count = [0]
    real = PublicKey.recover.__func__

    def counting(cls, signature, digest):
        count[0] += 1
        return real(cls, signature, digest)

    monkeypatch.setattr(PublicKey, "recover", classmethod(counting))
    return count


def _transfer(chain) -> dict:
    """A transfer of init0's (1.2.6) unsigned; init0 owns no balance, which
    does not matter: every check here comes before evaluation."""
    bid = chain.head_block_id
    return {
        "ref_block_num": chain.head_block_num & 0xFFFF,
        "ref_block_prefix": struct.unpack_from("<I", bytes.fromhex(bid), 4)[0],
        "expiration": format_time(chain.head_block_time + 60),
        "operations": [[0, {"fee": {"amount": 2000000, "asset_id": "1.3.0"},
                            "from": "1.2.6", "to": "1.2.7",
                            "amount": {"amount": 1, "asset_id": "1.3.0"},
                            "extensions": []}]],
        "extensions": [],
    }


def _foreign_signatures(n: int) -> list:
    """``n`` distinct canonical signatures that recover to keys no
    authority holds (signatures of other digests by another key)."""
    key = PrivateKey(hashlib.sha256(b"stranger").digest())
    return [key.sign_digest(hashlib.sha256(struct.pack("<I", i)).digest()).hex()
            for i in range(n)]


def _fake_signatures(n: int) -> list:
    """``n`` distinct well-formed canonical 65-byte signatures (cheap to
    make: r and s have their high bit clear and are not zero-padded)."""
    out = []
    for i in range(n):
        half = bytearray(hashlib.sha256(struct.pack("<I", i)).digest())
        half[0] = 0x40 | (half[0] & 0x3F)
        out.append((bytes([0x1f]) + bytes(half) * 2).hex())
    return out


def _signed(chain, extra: list) -> dict:
    trx = sign_transaction(_transfer(chain), CHAIN_ID, [PrivateKey.from_wif(DEV_WIF)])
    return dict(trx, signatures=trx["signatures"] + extra)


def _calls(chain):
    node = Node(chain=chain)
    database = DatabaseApi(node, Session())
    broadcast = NetworkBroadcastApi(node, Session())
    return [
        chain.push_transaction,
        lambda trx: database.call("get_potential_signatures", [trx]),
        lambda trx: database.call("verify_authority", [trx]),
        lambda trx: broadcast.call("broadcast_transaction", [trx]),
    ]


def test_hostile_signature_count_is_refused_by_size_without_recovery(chain, recoveries):
    """30,000 distinct signatures (about 2 MB): the size limit counts them,
    so the transaction is refused before one key is recovered."""
    trx = _signed(chain, _fake_signatures(HOSTILE_SIGNATURES))
    limit = chain.state.objects["2.0.0"]["parameters"]["maximum_transaction_size"]
    for call in _calls(chain):
        with pytest.raises(errors.TransactionTooLarge,
                           match=f"with its {HOSTILE_SIGNATURES + 1} signatures\\) exceeds "
                                 f"maximum_transaction_size {limit}$"):
            call(trx)
    assert recoveries[0] == 0
    assert chain.pending_transactions == []


def test_signatures_beyond_the_required_keys_are_not_all_recovered(chain, recoveries):
    """As many foreign signatures as fit in maximum_transaction_size: the
    transfer needs one key, so at most two are recovered before the
    transaction is refused as carrying unnecessary signatures."""
    limit = chain.state.objects["2.0.0"]["parameters"]["maximum_transaction_size"]
    base = _signed(chain, [])
    fits = (limit - 200) // 65  # well inside the limit with the transfer itself
    trx = dict(base, signatures=base["signatures"] + _foreign_signatures(fits))
    assert fits >= 20
    for call in _calls(chain):
        before = recoveries[0]
        with pytest.raises(errors.InvalidSignature, match="^Unnecessary signature\\(s\\) by "):
            call(trx)
        assert recoveries[0] - before <= 2
    assert chain.pending_transactions == []


def test_duplicate_signatures_are_refused_before_recovery(chain, recoveries):
    trx = _signed(chain, [])
    sig = trx["signatures"][0]
    for dup in (sig, sig.upper()):
        for call in _calls(chain):
            with pytest.raises(errors.InvalidSignature, match="^Duplicate signature "):
                call(dict(trx, signatures=[sig, dup]))
    assert recoveries[0] == 0


@pytest.fixture
def packed_operations(monkeypatch):
    """Counts every operation packed (``OperationType.pack``)."""
    from nodeapi.protocol.operations.variant import OperationType

    count = [0]
    real = OperationType.pack

    def counting(self, value, out, prefix=None):
        count[0] += 1
        return real(self, value, out, prefix)

    monkeypatch.setattr(OperationType, "pack", counting)
    return count


def test_hostile_operation_count_is_refused_before_packing(chain, recoveries,
                                                           packed_operations):
    """100,000 operations cannot fit maximum_transaction_size (each packs to
    10 bytes at least): refused before one is packed or a key recovered
    (packing them takes about a second)."""
    trx = _signed(chain, [])
    trx["operations"] = trx["operations"] * 100000
    packed_operations[0] = 0  # signing packed the one operation
    limit = chain.state.objects["2.0.0"]["parameters"]["maximum_transaction_size"]
    for call in _calls(chain):
        with pytest.raises(errors.TransactionTooLarge,
                           match="100000 operations, with its 1 signatures\\) exceeds "
                                 f"maximum_transaction_size {limit}$"):
            call(trx)
    assert packed_operations[0] == 0 and recoveries[0] == 0
    assert chain.pending_transactions == []
