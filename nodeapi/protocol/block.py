"""Blocks: header bytes, block id, witness signature, transaction merkle root.

Reference: bitshares-core ``libraries/protocol/block.cpp`` /
``block.hpp`` and docs/wire-contract.rst section 7:

- ``block_header`` = previous (20-byte block id), timestamp
  (time_point_sec), witness (witness id, varint instance),
  transaction_merkle_root (20 bytes), extensions; ``signed_block_header``
  adds witness_signature (65 bytes);
- block id = sha224 of the signed header bytes, the first 4 bytes replaced
  by the block number big-endian, cut to 20 bytes; the block number is the
  previous block's number + 1 (from the first 4 bytes of ``previous``);
- the witness signs sha256 of the unsigned header (``block_header::digest``)
  and signer recovery enforces canonical signatures;
- merkle root (``signed_block::calculate_merkle_root``): the leaves are
  sha256 of each ``processed_transaction`` (with signatures and
  operation_results); pairs are hashed with sha256 of their concatenation,
  an odd last digest moves up unchanged, and the root is ripemd160 of the
  last digest; no transactions give 20 zero bytes.
"""

import hashlib
import struct

from nodeapi.protocol.composite import FUTURE_EXTENSIONS, Struct, Vector
from nodeapi.protocol.errors import ProtocolError
from nodeapi.protocol.keys import PrivateKey, PublicKey, ripemd160
from nodeapi.protocol.serialize import (
    RIPEMD160, SIGNATURE, TIME, from_hex, pack_varint, unpack)
from nodeapi.protocol.times import parse_time
from nodeapi.protocol.transaction import PROCESSED_TRANSACTION, serialize_processed_transaction
from nodeapi.protocol.types import WITNESS_ID

_HEADER_FIELDS = [
    ("previous", RIPEMD160),
    ("timestamp", TIME),
    ("witness", WITNESS_ID),
    ("transaction_merkle_root", RIPEMD160),
    ("extensions", FUTURE_EXTENSIONS),
]
BLOCK_HEADER = Struct("block_header", _HEADER_FIELDS)
_pack_u32 = struct.Struct("<I").pack
_ONE_BYTE = [bytes((i,)) for i in range(0x80)]
SIGNED_BLOCK_HEADER = Struct("signed_block_header", _HEADER_FIELDS + [
    ("witness_signature", SIGNATURE)])
#: ``signed_block``: the signed header, then ``vector<processed_transaction>``
#: (graphene ``FC_REFLECT_DERIVED(signed_block, (signed_block_header),
#: (transactions))``): the bytes a block travels in over the peer protocol.
SIGNED_BLOCK = Struct("signed_block", SIGNED_BLOCK_HEADER.fields + (
    ("transactions", Vector(PROCESSED_TRANSACTION)),))


def _plain_header(block: dict) -> bytes | None:
    """The unsigned header bytes of the usual header (hex ids of 20 bytes,
    a time, a witness id, no extensions) written directly, or None for any
    other (:func:`block_header_bytes` then packs it field by field and
    raises what the failing field's packer raises)."""
    try:
        extensions = block["extensions"]
        if type(extensions) is not list or extensions:
            return None
        previous = bytes.fromhex(block["previous"])
        root = bytes.fromhex(block["transaction_merkle_root"])
        if len(previous) != 20 or len(root) != 20:
            return None
        ts = _pack_u32(parse_time(block["timestamp"]) & 0xFFFFFFFF)
        witness = WITNESS_ID.instance(block["witness"])
    except (KeyError, TypeError, ValueError, ProtocolError):
        return None
    if witness < 0x80:  # a one-byte varint, every witness of a real chain
        return b"".join((previous, ts, _ONE_BYTE[witness], root, b"\0"))
    out = bytearray(previous)
    out += ts
    pack_varint(witness, out)
    out += root
    out.append(0)  # the empty extensions
    return bytes(out)


def block_header_bytes(block: dict, signed: bool = True) -> bytes:
    """fc bytes of the (signed, when ``signed``) block header of ``block``;
    other keys of ``block`` (transactions, block_id, ...) are ignored.

    :raises ProtocolError: a header field fc cannot serialize."""
    plain = _plain_header(block)
    if plain is not None:
        if not signed:
            return plain
        try:
            signature = bytes.fromhex(block["witness_signature"])
        except (KeyError, TypeError, ValueError):
            signature = b""
        if len(signature) == 65:
            return plain + signature
    out = bytearray()
    (SIGNED_BLOCK_HEADER if signed else BLOCK_HEADER).pack(block, out)
    return bytes(out)


def block_id_of_header(signed_header: bytes) -> str:
    """Hex block id (40 digits) of a block from its signed header bytes
    (:func:`block_header_bytes`): the number is the one in the first 4
    bytes of ``previous`` (the header's first field) plus 1."""
    num = int.from_bytes(signed_header[:4], "big") + 1
    return ((num & 0xFFFFFFFF).to_bytes(4, "big")
            + hashlib.sha224(signed_header).digest()[4:20]).hex()


def header_time(signed_header: bytes) -> int:
    """The ``timestamp`` (seconds) in header bytes (:func:`block_header_bytes`:
    a uint32 after the 20 bytes of ``previous``)."""
    return struct.unpack_from("<I", signed_header, 20)[0]


def signing_digest_of_header(signed_header: bytes) -> bytes:
    """What the witness signs (:func:`block_signing_digest`) from the signed
    header bytes: sha256 of the header without its 65-byte signature."""
    return hashlib.sha256(signed_header[:-65]).digest()


def deserialize_block_header(data: bytes, signed: bool = True) -> dict:
    """Inverse of :func:`block_header_bytes`."""
    return unpack(SIGNED_BLOCK_HEADER if signed else BLOCK_HEADER, data)


def serialize_block(block: dict, prefix: str | None = None) -> bytes:
    """fc bytes of a ``signed_block`` (wire JSON, with ``transactions``);
    raises a :class:`~nodeapi.errors.ProtocolError` subclass naming the bad
    field."""
    out = bytearray()
    SIGNED_BLOCK.pack(block, out, prefix)
    return bytes(out)


def deserialize_block(data: bytes, prefix: str, pos: int = 0, exact: bool = True):
    """Inverse of :func:`serialize_block`: the block in wire JSON (with
    ``exact`` the data must end with it; otherwise ``(block, end)``)."""
    if exact:
        return unpack(SIGNED_BLOCK, data, prefix, pos)
    return SIGNED_BLOCK.unpack(data, pos, prefix)


def block_num_of(block_id_hex: str) -> int:
    """Block number stored in the first 4 bytes of a block id."""
    return int.from_bytes(from_hex(block_id_hex, "block id")[:4], "big")


def block_id(block: dict) -> str:
    """Hex block id (40 digits) of a signed block."""
    block_num_of(block["previous"])  # a malformed previous raises InvalidHex
    return block_id_of_header(block_header_bytes(block, True))


def block_signing_digest(block: dict) -> bytes:
    """sha256 of the unsigned header: what the witness signs."""
    return hashlib.sha256(block_header_bytes(block, False)).digest()


def sign_block(block: dict, key: PrivateKey) -> dict:
    """A copy of ``block`` with ``witness_signature`` (hex) made by ``key``
    (a :class:`PrivateKey` or WIF string)."""
    if isinstance(key, str):
        key = PrivateKey.from_wif(key)
    return dict(block, witness_signature=key.sign_digest(block_signing_digest(block)).hex())


def recover_block_signer(block: dict) -> PublicKey:
    """The key that made ``witness_signature``; raises
    :class:`~nodeapi.protocol.errors.InvalidSignature` (or its
    NonCanonicalSignature subclass)."""
    return PublicKey.recover(from_hex(block["witness_signature"], "witness_signature"),
                             block_signing_digest(block))


def merkle_root_of_digests(digests: list) -> str:
    """graphene's merkle root (hex 40) over the leaf digests (sha256 of each
    processed transaction)."""
    if not digests:
        return "00" * 20
    ids = list(digests)
    while len(ids) > 1:
        paired = [hashlib.sha256(ids[i] + ids[i + 1]).digest() for i in range(0, len(ids) - 1, 2)]
        if len(ids) % 2:
            paired.append(ids[-1])
        ids = paired
    return ripemd160(ids[0]).hex()


def merkle_root(transactions: list, prefix: str | None = None) -> str:
    """Transaction merkle root (hex 40) of a block's ``transactions``: wire
    JSON processed transactions (with ``signatures`` and
    ``operation_results``, as graphene stores them in blocks)."""
    return merkle_root_of_digests([
        hashlib.sha256(serialize_processed_transaction(trx, prefix)).digest()
        for trx in transactions])
