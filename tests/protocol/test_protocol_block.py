"""Block ids, witness signatures and merkle roots (mainnet block 1), and the
impacted accounts / required authorities of every supported operation."""

import copy
import hashlib
import json
import os

import pytest

from nodeapi.protocol import errors
from nodeapi.protocol.block import (
    BLOCK_HEADER, SIGNED_BLOCK_HEADER, block_header_bytes, block_id, block_id_of_header,
    block_signing_digest, deserialize_block_header, header_time, merkle_root,
    recover_block_signer, sign_block, signing_digest_of_header)
from nodeapi.protocol.impacted import (
    fee_payer, impacted_accounts, other_authorities, required_authorities)
from nodeapi.protocol.keys import PrivateKey, ripemd160
from nodeapi.protocol.transaction import serialize_processed_transaction, sign_transaction

from kit.keys import DEV_PUB, DEV_WIF
from kit.paths import FIXTURES




@pytest.fixture
def block1():
    with open(os.path.join(FIXTURES, "mainnet_block_1_header.json")) as f:
        return json.load(f)


def test_mainnet_block_1_id_and_signer(block1):
    assert block_id(block1) == block1["block_id"]
    assert recover_block_signer(block1).to_str("BTS") == block1["signing_key"]
    header = deserialize_block_header(block_header_bytes(block1))
    assert header == {k: block1[k] for k in ("previous", "timestamp", "witness",
                                             "transaction_merkle_root", "extensions",
                                             "witness_signature")}
    assert merkle_root(block1["transactions"]) == block1["transaction_merkle_root"]


def test_block_id_carries_block_number(block1):
    later = dict(block1, previous="0001e23f" + "ab" * 16)
    assert block_id(later)[:8] == "0001e240"
    digest = hashlib.sha224(block_header_bytes(later)).digest()
    assert block_id(later)[8:] == digest[4:20].hex()


def test_sign_block_and_recover(block1):
    key = PrivateKey.from_wif(DEV_WIF)
    signed = sign_block(dict(block1, witness="1.6.1"), key)
    assert recover_block_signer(signed).to_str("TEST") == DEV_PUB
    assert sign_block(dict(block1, witness="1.6.1"), DEV_WIF) == signed
    assert recover_block_signer(dict(signed, timestamp="2015-10-13T14:12:27")).to_str(
        "TEST") != DEV_PUB
    assert block_signing_digest(signed) == hashlib.sha256(
        block_header_bytes(signed, signed=False)).digest()
    bad = bytearray(bytes.fromhex(signed["witness_signature"]))
    bad[1] |= 0x80
    with pytest.raises(errors.NonCanonicalSignature):
        recover_block_signer(dict(signed, witness_signature=bad.hex()))


def _packed_field_by_field(block, signed=True):
    out = bytearray()
    (SIGNED_BLOCK_HEADER if signed else BLOCK_HEADER).pack(block, out)
    return bytes(out)


def test_header_packed_once_gives_digest_id_and_time(block1):
    """block.cpp: the id is sha224 of the signed header with the number in
    its first 4 bytes, the witness signs sha256 of the unsigned header; one
    packing of the signed header gives both (and the timestamp, a uint32
    after the 20 bytes of ``previous``: 2015-10-13T14:12:24 is 1444745544)."""
    header = block_header_bytes(block1)
    assert header == _packed_field_by_field(block1)
    assert block_header_bytes(block1, signed=False) == _packed_field_by_field(block1, False)
    assert block_id_of_header(header) == block_id(block1) == block1["block_id"]
    assert signing_digest_of_header(header) == block_signing_digest(block1)
    assert header_time(header) == 1444745544 and block1["timestamp"] == "2015-10-13T14:12:24"


@pytest.mark.parametrize("change, error", [
    ({"extensions": [[0, {}]]}, None),  # not the usual header: packed field by field
    ({"witness_signature": "00" * 64}, errors.InvalidHex),
    ({"previous": "zz" * 20}, errors.InvalidHex),
    ({"witness": "1.2.0"}, errors.InvalidObjectId),
    ({"timestamp": "2015-13-13T14:12:24"}, errors.InvalidTime),
])
def test_unusual_headers_pack_as_fc_does(block1, change, error):
    block = dict(block1, **change)
    if error is None:
        assert block_header_bytes(block) == _packed_field_by_field(block)
    else:
        with pytest.raises(error):
            block_header_bytes(block)


def _trx(n):
    trx = {"ref_block_num": n, "ref_block_prefix": 7, "expiration": "2030-01-01T00:00:00",
           "operations": [[0, {"fee": {"amount": 1, "asset_id": "1.3.0"}, "from": "1.2.6",
                               "to": "1.2.7", "amount": {"amount": n, "asset_id": "1.3.0"},
                               "extensions": []}]], "extensions": []}
    trx = sign_transaction(trx, "00" * 32, [DEV_WIF])
    trx["operation_results"] = [[0, {}]]
    return trx


def test_merkle_root_definition():
    trxs = [_trx(n) for n in range(1, 6)]
    leaves = [hashlib.sha256(serialize_processed_transaction(t)).digest() for t in trxs]

    def h(a, b):
        return hashlib.sha256(a + b).digest()

    assert merkle_root([]) == "00" * 20
    assert merkle_root(trxs[:1]) == ripemd160(leaves[0]).hex()
    assert merkle_root(trxs[:2]) == ripemd160(h(leaves[0], leaves[1])).hex()
    assert merkle_root(trxs[:3]) == ripemd160(h(h(leaves[0], leaves[1]), leaves[2])).hex()
    five = h(h(h(leaves[0], leaves[1]), h(leaves[2], leaves[3])), leaves[4])
    assert merkle_root(trxs) == ripemd160(five).hex()
    # signatures and results are part of the leaves
    changed = copy.deepcopy(trxs[:2])
    changed[1]["operation_results"] = [[1, "1.7.0"]]
    assert merkle_root(changed) != merkle_root(trxs[:2])


FEE = {"amount": 0, "asset_id": "1.3.0"}


def _auth(accounts=(), keys=()):
    return {"weight_threshold": 1, "account_auths": [[a, 1] for a in accounts],
            "key_auths": [[k, 1] for k in keys], "address_auths": []}


OPTIONS = {"memo_key": DEV_PUB, "voting_account": "1.2.5", "num_witness": 0,
           "num_committee": 0, "votes": [], "extensions": []}

CASES = [
    ([0, {"fee": FEE, "from": "1.2.6", "to": "1.2.7", "amount": FEE}],
     "1.2.6", ({"1.2.6"}, set()), {"1.2.6", "1.2.7"}),
    ([1, {"fee": FEE, "seller": "1.2.8", "amount_to_sell": FEE, "min_to_receive": FEE,
          "expiration": "2030-01-01T00:00:00", "fill_or_kill": False}],
     "1.2.8", ({"1.2.8"}, set()), {"1.2.8"}),
    ([2, {"fee": FEE, "fee_paying_account": "1.2.8", "order": "1.7.3"}],
     "1.2.8", ({"1.2.8"}, set()), {"1.2.8"}),
    ([4, {"fee": FEE, "order_id": "1.7.3", "account_id": "1.2.8", "pays": FEE, "receives": FEE,
          "fill_price": {"base": FEE, "quote": FEE}, "is_maker": True}],
     "1.2.8", ({"1.2.8"}, set()), {"1.2.8"}),
    ([5, {"fee": FEE, "registrar": "1.2.6", "referrer": "1.2.9", "referrer_percent": 0,
          "name": "alice", "owner": _auth(["1.2.20"]), "active": _auth(["1.2.21"], [DEV_PUB]),
          "options": OPTIONS,
          "extensions": {"buyback_options": {"asset_to_buy": "1.3.5",
                                             "asset_to_buy_issuer": "1.2.30",
                                             "markets": ["1.3.0"]}}}],
     "1.2.6", ({"1.2.6", "1.2.30"}, set()), {"1.2.6", "1.2.9", "1.2.20", "1.2.21", "1.2.30"}),
    ([6, {"fee": FEE, "account": "1.2.10", "active": _auth(["1.2.22"])}],
     "1.2.10", ({"1.2.10"}, set()), {"1.2.10", "1.2.22"}),
    ([6, {"fee": FEE, "account": "1.2.10", "owner": _auth(["1.2.23"])}],
     "1.2.10", ({"1.2.10"}, {"1.2.10"}), {"1.2.10", "1.2.23"}),
    ([6, {"fee": FEE, "account": "1.2.10",
          "extensions": {"owner_special_authority": [1, {"asset": "1.3.4",
                                                         "num_top_holders": 5}]}}],
     "1.2.10", ({"1.2.10"}, {"1.2.10"}), {"1.2.10"}),
    ([7, {"fee": FEE, "authorizing_account": "1.2.11", "account_to_list": "1.2.12",
          "new_listing": 1}], "1.2.11", ({"1.2.11"}, set()), {"1.2.11", "1.2.12"}),
    ([8, {"fee": FEE, "account_to_upgrade": "1.2.13", "upgrade_to_lifetime_member": True}],
     "1.2.13", ({"1.2.13"}, set()), {"1.2.13"}),
    ([10, {"fee": FEE, "issuer": "1.2.14"}], "1.2.14", ({"1.2.14"}, set()), {"1.2.14"}),
    ([11, {"fee": FEE, "issuer": "1.2.14", "asset_to_update": "1.3.2",
           "new_issuer": "1.2.15"}], "1.2.14", ({"1.2.14"}, set()), {"1.2.14", "1.2.15"}),
    ([14, {"fee": FEE, "issuer": "1.2.14", "asset_to_issue": FEE,
           "issue_to_account": "1.2.16"}], "1.2.14", ({"1.2.14"}, set()), {"1.2.14", "1.2.16"}),
    ([15, {"fee": FEE, "payer": "1.2.17", "amount_to_reserve": FEE}],
     "1.2.17", ({"1.2.17"}, set()), {"1.2.17"}),
    ([16, {"fee": FEE, "from_account": "1.2.18", "asset_id": "1.3.2", "amount": 5}],
     "1.2.18", ({"1.2.18"}, set()), {"1.2.18"}),
    ([35, {"fee": FEE, "payer": "1.2.19", "required_auths": ["1.2.40", "1.2.41"], "id": 1,
           "data": ""}], "1.2.19", ({"1.2.19", "1.2.40", "1.2.41"}, set()),
     {"1.2.19", "1.2.40", "1.2.41"}),
    ([37, {"fee": FEE, "deposit_to_account": "1.2.6", "balance_to_claim": "1.15.0",
           "balance_owner_key": DEV_PUB, "total_claimed": FEE}],
     "1.2.6", ({"1.2.6"}, set()), {"1.2.6"}),
]


@pytest.mark.parametrize("op, payer, required, impacted", CASES,
                         ids=[f"{c[0][0]}-{i}" for i, c in enumerate(CASES)])
def test_impacted_and_required(op, payer, required, impacted):
    assert fee_payer(op) == payer
    assert required_authorities(op) == required
    assert impacted_accounts(op) == impacted


def test_other_authorities_and_new_account():
    claim = CASES[-1][0]
    assert other_authorities(claim) == [{"weight_threshold": 1, "account_auths": [],
                                         "key_auths": [[DEV_PUB, 1]], "address_auths": []}]
    assert other_authorities(CASES[0][0]) == []
    create = CASES[4][0]
    assert "1.2.99" in impacted_accounts(create, [1, "1.2.99"])
    assert "1.2.99" not in impacted_accounts(create)
    with pytest.raises(errors.UnknownOperation):
        impacted_accounts([78, {}])
    with pytest.raises(errors.UnknownOperation):
        required_authorities(["bogus", {}])
