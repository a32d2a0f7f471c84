"""Speed of the protocol core on one core (target: >= 5,000
signature recoveries/s).

Builds ``--count`` signed transactions (default 1,000; a mix of transfers
with and without memo, limit orders and account creations, one to three
signatures each) for an arbitrary chain id: every tenth is signed by
python-bitshares' ``bitsharesbase`` (an independent implementation), the
others by ``nodeapi.protocol.sign_transaction``.  Before timing, every
transaction's recovered signers are checked against the signing keys and the
bitsharesbase ones' bytes against ``bytes(Signed_Transaction)``.

Then, in this single thread, times (best of ``--repeat`` passes):

* ``PublicKey.recover`` of every signature against its precomputed digest,
  next to raw ``coincurve.PublicKey.from_signature_and_message`` of the same
  signatures (the baseline; ratio = nodeapi / raw);
* ``recover_signers`` of whole transactions (serialize + digest + recover:
  what the chain does per transaction), as signatures/s;
* ``serialize_signed_transaction`` of every transaction, next to
  ``orjson.dumps`` of the same dicts (the baseline) and, for reference,
  ``bytes()`` of the prebuilt bitsharesbase objects.

Then the mainnet sample mix (tests/fixtures, 202 operations of 38 types):
``serialize_operation`` of every sample (operations/s), and per sample that
python-bitshares can serialize (171) the ratio of nodeapi's rate to
``bytes(bitsharesbase.objects.Operation(json))`` (from the same JSON, bytes
checked equal first), measured in the same run; the line shows the
geometric mean and the lowest per-operation ratio (target >= 0.5).

Prints one line.  Run: PYTHONPATH=. python bench/protocol.py
[--count N] [--repeat N]
"""

import copy
import hashlib
import json
import math
import os
import sys
import time

import common  # puts the repository and tests/ on sys.path

import coincurve  # noqa: E402
import graphenebase.ecdsa  # noqa: E402
import orjson  # noqa: E402
from bitsharesbase import operations  # noqa: E402
from bitsharesbase.objects import Operation  # noqa: E402
from bitsharesbase.signedtransactions import Signed_Transaction  # noqa: E402

from nodeapi.protocol import (  # noqa: E402
    PrivateKey, PublicKey, recover_signers, serialize_operation, serialize_signed_transaction,
    sign_transaction, signature_digest)

# python-bitshares' "cryptography" signer is broken with the installed ecdsa
# package; its pure "ecdsa" path works (as in tests/conftest.py).
graphenebase.ecdsa.SECP256K1_MODULE = "ecdsa"

CHAIN_ID = hashlib.sha256(b"nodeapi protocol bench chain").hexdigest()
CHAIN = {"chain_id": CHAIN_ID, "core_symbol": "TEST", "prefix": "TEST"}
KEYS = [PrivateKey.from_seed(f"bench key {i}") for i in range(3)]
PUBS = [k.public_key.to_str("TEST") for k in KEYS]
FEE = {"amount": 2000000, "asset_id": "1.3.0"}


def _authority(pub):
    return {"weight_threshold": 1, "account_auths": [], "key_auths": [[pub, 1]],
            "address_auths": []}


def make_op(i):
    """One bitsharesbase operation object, of a kind chosen by ``i``."""
    kind = i % 4
    if kind == 0:
        return operations.Transfer(fee=FEE, prefix="TEST", extensions=[],
                                   amount={"amount": 1000 + i, "asset_id": "1.3.0"},
                                   to="1.2.7", **{"from": "1.2.6"})
    if kind == 1:
        memo = {"from": PUBS[0], "to": PUBS[1], "nonce": str(5862723643998573708 + i),
                "message": os.urandom(32).hex(), "prefix": "TEST"}
        return operations.Transfer(fee=FEE, prefix="TEST", extensions=[], memo=memo,
                                   amount={"amount": 7 + i, "asset_id": "1.3.0"},
                                   to="1.2.8", **{"from": "1.2.6"})
    if kind == 2:
        return operations.Limit_order_create(
            fee=FEE, seller="1.2.6", amount_to_sell={"amount": 100 + i, "asset_id": "1.3.0"},
            min_to_receive={"amount": 3 + i, "asset_id": "1.3.1"},
            expiration="2030-01-01T00:00:00", fill_or_kill=False, extensions=[])
    pub = PUBS[i % 3]
    return operations.Account_create(
        fee=FEE, registrar="1.2.6", referrer="1.2.6", referrer_percent=0,
        name=f"bench-{i}", owner=_authority(pub), active=_authority(pub),
        options={"memo_key": pub, "voting_account": "1.2.5", "num_witness": 0,
                 "num_committee": 0, "votes": [], "extensions": []},
        extensions={}, prefix="TEST")


def build(count):
    """``(trxs, signers, bitsharesbase objects)``: JSON dicts, the expected
    signer keys of each, and the Signed_Transaction of each tenth."""
    trxs, signers, objects = [], [], []
    for i in range(count):
        keys = KEYS[:1 + i % 3]
        t = Signed_Transaction(ref_block_num=i & 0xFFFF, ref_block_prefix=2271560481 + i,
                               expiration="2030-05-06T07:08:09",
                               operations=[make_op(i), make_op(i + 1)][:1 + i % 2])
        if i % 10 == 0:
            t.sign([k.to_wif() for k in keys], CHAIN)
            trx = t.json()
            assert serialize_signed_transaction(trx) == bytes(t), "bytes differ"
            objects.append(t)
        else:
            trx = sign_transaction(dict(t.json(), signatures=[]), CHAIN_ID, keys)
        trxs.append(trx)
        signers.append([k.public_key for k in keys])
    return trxs, signers, objects


def best_rate(fn, items, repeat):
    """Items per second of ``fn(items)`` (which returns how many it did),
    best of ``repeat`` passes."""
    best = 0.0
    for _ in range(repeat):
        started = time.perf_counter()
        n = fn(items)
        best = max(best, n / (time.perf_counter() - started))
    return best


def nodeapi_recover(pairs):
    recover = PublicKey.recover
    for sig, digest in pairs:
        recover(sig, digest)
    return len(pairs)


def coincurve_recover(pairs):
    recover = coincurve.PublicKey.from_signature_and_message
    for sig, digest in pairs:
        recover(sig[1:] + bytes(((sig[0] - 27) & 3,)), digest, hasher=None).format(True)
    return len(pairs)


def trx_recover(trxs):
    n = 0
    for trx in trxs:
        n += len(recover_signers(trx, CHAIN_ID, "TEST"))
    return n


def serialize_all(trxs):
    for trx in trxs:
        serialize_signed_transaction(trx)
    return len(trxs)


def orjson_all(trxs):
    dumps = orjson.dumps
    for trx in trxs:
        dumps(trx)
    return len(trxs)


def bitsharesbase_all(objects):
    for t in objects:
        bytes(t)
    return len(objects)


SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                       "mainnet_operation_samples.go-bitshares.json")
TRUNCATED = "gen/samples/proposalcreateoperation_5.go"  # go-bitshares dropped its fields


def mainnet_ops():
    with open(SAMPLES) as f:
        groups = json.load(f)["operations"].values()
    return [[s["op_id"], s["data"]] for g in groups for s in g if s["source_file"] != TRUNCATED]


def bitsharesbase_bytes(op):
    return bytes(Operation([op[0], dict(copy.deepcopy(op[1]), prefix="BTS")]))


def mix_rates(ops, repeat):
    """(nodeapi operations/s over ``ops``, per-op ratios to bitsharesbase)."""
    def mine(items):
        for op in items:
            serialize_operation(op, "BTS")
        return len(items)

    rate = best_rate(mine, ops, repeat)
    ratios = []
    for op in ops:
        try:
            expected = bitsharesbase_bytes(op)
        except Exception:  # python-bitshares lacks the type or this form
            continue
        assert serialize_operation(op, "BTS") == expected, "bytes differ from bitsharesbase"
        batch = [op] * 20
        ours = best_rate(mine, batch, repeat)
        theirs = best_rate(lambda items: sum(1 for o in items if bitsharesbase_bytes(o)),
                           batch, repeat)
        ratios.append(ours / theirs)
    return rate, ratios


def main(argv):
    parser = common.parser(__doc__)
    parser.add_argument("--count", type=int, default=1000, help="signed transactions")
    parser.add_argument("--repeat", type=int, default=5, help="timed passes (best kept)")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    trxs, signers, objects = build(args.count)
    pairs = []
    for trx, keys in zip(trxs, signers):
        assert recover_signers(trx, CHAIN_ID, "TEST") == keys, "wrong signers recovered"
        digest = signature_digest(trx, CHAIN_ID)
        pairs.extend((bytes.fromhex(s), digest) for s in trx["signatures"])
    for sig, digest in pairs[:50]:
        raw = sig[1:] + bytes(((sig[0] - 27) & 3,))
        assert coincurve.PublicKey.from_signature_and_message(raw, digest, hasher=None).format(
            True) == PublicKey.recover(sig, digest).compressed
    build_s = time.perf_counter() - started

    rec = best_rate(nodeapi_recover, pairs, args.repeat)
    raw_rec = best_rate(coincurve_recover, pairs, args.repeat)
    trx_rec = best_rate(trx_recover, trxs, args.repeat)
    ser = best_rate(serialize_all, trxs, args.repeat)
    raw_ser = best_rate(orjson_all, trxs, args.repeat)
    gph_ser = best_rate(bitsharesbase_all, objects, args.repeat)
    ops = mainnet_ops()
    mix, ratios = mix_rates(ops, args.repeat)
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
    verdict = "met" if rec >= 5000 and trx_rec >= 5000 else "NOT met"
    print(f"protocol (1 thread, {len(trxs)} trx, {len(pairs)} signatures, "
          f"{len(objects)} signed by bitsharesbase): recover {rec:,.0f} sig/s "
          f"(raw coincurve {raw_rec:,.0f}/s, ratio {rec / raw_rec:.2f}), "
          f"recover_signers of whole trx {trx_rec:,.0f} sig/s; "
          f"serialize {ser:,.0f} trx/s (orjson.dumps {raw_ser:,.0f}/s, ratio "
          f"{ser / raw_ser:.3f}; bitsharesbase bytes() {gph_ser:,.0f}/s); "
          f"mainnet mix ({len(ops)} ops) serialize_operation {mix:,.0f} ops/s, vs bitsharesbase "
          f"on {len(ratios)} ops: ratio geomean {geo:.1f}, lowest {min(ratios):.1f} "
          f"(target >= 0.5: {'met' if min(ratios) >= 0.5 else 'NOT met'}); "
          f"build {build_s:.1f} s; target >= 5,000 recoveries/s: {verdict}")


if __name__ == "__main__":
    main(sys.argv[1:])
