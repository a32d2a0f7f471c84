"""Transactions: bytes, id, signature digest, signing and signer recovery.

Reference: bitshares-core ``libraries/protocol/transaction.cpp`` and
docs/wire-contract.rst section 7:

- ``transaction`` = ref_block_num (uint16), ref_block_prefix (uint32),
  expiration (time_point_sec), operations (vector<operation>), extensions;
  ``signed_transaction`` adds signatures (vector of 65-byte compact
  signatures); ``processed_transaction`` adds operation_results;
- transaction id = first 20 bytes of sha256(transaction bytes), hex;
- signature digest = sha256(chain id bytes + transaction bytes);
- signatures: fc ``sign_compact`` with canonical signatures only; signers
  are recovered from each signature, and a repeated signer is an error
  (``get_signature_keys``: "Duplicate Signature detected").
"""

import hashlib

from nodeapi.protocol.composite import FUTURE_EXTENSIONS, Struct, Vector
from nodeapi.protocol.errors import InvalidHex, InvalidSignature
from nodeapi.protocol.keys import PrivateKey, PublicKey, is_canonical  # noqa: F401
from nodeapi.protocol.operations import OPERATION
from nodeapi.protocol.serialize import SIGNATURE, TIME, UINT16, UINT32, from_hex, unpack
from nodeapi.protocol.types import OPERATION_RESULT

_BASE_FIELDS = [
    ("ref_block_num", UINT16),
    ("ref_block_prefix", UINT32),
    ("expiration", TIME),
    ("operations", Vector(OPERATION)),
    ("extensions", FUTURE_EXTENSIONS),
]
TRANSACTION = Struct("transaction", _BASE_FIELDS)
SIGNED_TRANSACTION = Struct("signed_transaction", _BASE_FIELDS + [
    ("signatures", Vector(SIGNATURE))])
PROCESSED_TRANSACTION = Struct("processed_transaction", _BASE_FIELDS + [
    ("signatures", Vector(SIGNATURE)), ("operation_results", Vector(OPERATION_RESULT))])
_PROCESSED_TAIL = PROCESSED_TRANSACTION.fields[len(_BASE_FIELDS):]


def serialize_transaction(trx: dict, prefix: str | None = None) -> bytes:
    """fc bytes of the transaction without signatures (what ids and
    signatures are computed over).  ``prefix`` enforces the key prefix.
    Raises a :class:`~nodeapi.errors.ProtocolError` subclass naming the
    bad field."""
    out = bytearray()
    TRANSACTION.pack(trx, out, prefix)
    return bytes(out)


def unsigned_of_processed(processed: bytes, trx: dict, prefix: str | None = None) -> bytes:
    """:func:`serialize_transaction` of ``trx`` cut from its
    :func:`serialize_processed_transaction` bytes ``processed`` (the
    transaction's fields come first, then ``signatures`` and
    ``operation_results``): only those two are packed again.  ``processed``
    must be what that function returned for ``trx``."""
    tail = bytearray()
    for fname, ftype in _PROCESSED_TAIL:
        value = trx.get(fname)
        if value is None:
            tail += ftype.default
        else:
            ftype.pack(value, tail, prefix)
    return processed[:len(processed) - len(tail)]


def serialize_signed_transaction(trx: dict, prefix: str | None = None) -> bytes:
    """fc bytes of a ``signed_transaction`` (with its signatures)."""
    out = bytearray()
    SIGNED_TRANSACTION.pack(trx, out, prefix)
    return bytes(out)


def serialize_processed_transaction(trx: dict, prefix: str | None = None) -> bytes:
    """fc bytes of a ``processed_transaction`` (signatures and
    operation_results; a missing operation_results is packed empty)."""
    out = bytearray()
    PROCESSED_TRANSACTION.pack(trx, out, prefix)
    return bytes(out)


def deserialize_transaction(data: bytes, prefix: str, signed: bool = False) -> dict:
    """Inverse of :func:`serialize_transaction` (or of
    :func:`serialize_signed_transaction` when ``signed``)."""
    return unpack(SIGNED_TRANSACTION if signed else TRANSACTION, data, prefix)


def canonical_transaction(trx: dict, prefix: str) -> dict:
    """The transaction as graphene holds it after ``from_variant``: ``trx``
    (wire JSON) without its signatures read back from its fc bytes, so
    operation tags given as numeric strings (``"0"``) are integers and
    every operation is in the form
    :func:`nodeapi.protocol.operations.canonical_operation` gives (fields
    outside ``signed_transaction`` are dropped); ``signatures``, when
    present, are kept as given (whoever recovers them checks them).  The
    bytes, hence the id and the signature digests, are unchanged.  Raises
    what :func:`serialize_transaction` raises."""
    out = deserialize_transaction(serialize_transaction(trx, prefix), prefix)
    if "signatures" in trx:
        out["signatures"] = trx["signatures"]
    return out


def transaction_id_of(packed: bytes) -> str:
    """Hex id (40 digits) of already serialized transaction bytes."""
    return hashlib.sha256(packed).digest()[:20].hex()


def transaction_id(trx: dict, prefix: str | None = None) -> str:
    """Hex transaction id: first 20 bytes of sha256 of the transaction
    without signatures."""
    return transaction_id_of(serialize_transaction(trx, prefix))


def _chain_id_bytes(chain_id_hex: str) -> bytes:
    raw = from_hex(chain_id_hex, "chain id")
    if len(raw) != 32:
        raise InvalidHex(f"chain id: expected 64 hex digits, got {len(raw) * 2}")
    return raw


def signature_digest_of(packed: bytes, chain_id_hex: str) -> bytes:
    """sha256(chain id bytes + transaction bytes) of already serialized bytes."""
    return hashlib.sha256(_chain_id_bytes(chain_id_hex) + packed).digest()


def signature_digest(trx: dict, chain_id_hex: str, prefix: str | None = None) -> bytes:
    """The 32-byte digest signatures of ``trx`` sign on chain ``chain_id_hex``."""
    return signature_digest_of(serialize_transaction(trx, prefix), chain_id_hex)


def sign_transaction(trx: dict, chain_id_hex: str, keys: list,
                     prefix: str | None = None) -> dict:
    """A copy of ``trx`` with one signature per key in ``keys``
    (:class:`PrivateKey` or WIF strings) appended to its ``signatures``
    (graphene ``signed_transaction::sign``); signatures are hex."""
    digest = signature_digest(trx, chain_id_hex, prefix)
    sigs = list(trx.get("signatures") or [])
    for key in keys:
        if isinstance(key, str):
            key = PrivateKey.from_wif(key)
        sigs.append(key.sign_digest(digest).hex())
    return dict(trx, signatures=sigs)


def recover_signers_of(signatures: list, digest: bytes) -> list:
    """Public keys recovered from hex ``signatures`` of ``digest``, in
    order.  Raises :class:`InvalidHex`, :class:`InvalidSignature` (also for
    a signer that signed twice) or :class:`NonCanonicalSignature`."""
    keys, seen = [], set()
    for index, sig in enumerate(signatures):
        raw = from_hex(sig, "signature")
        key = PublicKey.recover(raw, digest)
        if key in seen:
            raise InvalidSignature(
                f"Duplicate signature detected: signature {index} repeats an earlier signer")
        seen.add(key)
        keys.append(key)
    return keys


def recover_signers(trx: dict, chain_id_hex: str, prefix: str | None = None) -> list:
    """The :class:`PublicKey` of every signature of ``trx`` on chain
    ``chain_id_hex`` (graphene ``get_signature_keys``).  A signature made
    for another chain id or over other bytes recovers to some other key;
    checking that key against the required authorities is the chain's job."""
    return recover_signers_of(trx.get("signatures") or [],
                              signature_digest(trx, chain_id_hex, prefix))


def verify_signature(trx: dict, chain_id_hex: str, key: PublicKey,
                     prefix: str | None = None) -> bool:
    """True when one of the signatures of ``trx`` was made by ``key`` on
    chain ``chain_id_hex``; False for malformed signatures too."""
    try:
        return key in recover_signers(trx, chain_id_hex, prefix)
    except (InvalidSignature, InvalidHex):
        return False
