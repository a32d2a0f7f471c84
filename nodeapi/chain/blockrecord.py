"""The record format of the block log (:mod:`nodeapi.chain.blocklog`): the
file's magic, a record's header and checksum, and the payload codecs.

File layout (all integers little-endian)::

    file    := MAGIC (16 bytes) record*
    record  := length:u32  num:u32  crc:u32  payload[length]
    payload := codec:u8  body

``num`` is the block number (1, 2, ...; record k holds block k), ``crc`` is
zlib's crc32 of ``length || num || payload``, and ``codec`` says how ``body``
encodes the wire-JSON block: 1 = JSON written by orjson, 2 = JSON written by
the standard library (only for values orjson refuses, integers beyond 64
bits; read back with the standard library so such integers stay exact).
"""

import json
import struct
import zlib

import orjson

MAGIC = b"NODEAPI BLOCKS 1"
HEADER = struct.Struct("<III")
CODEC_ORJSON = 1
CODEC_JSON = 2
#: Largest payload accepted (graphene's maximum_block_size is 2 MiB by
#: default; this leaves room for any parameter change).
MAX_RECORD = 256 * 1024 * 1024


def record_intact(data, view, off: int, num: int, size: int) -> int:
    """The end offset of an intact record of block ``num`` (its length
    possible, inside ``size``, its checksum right) starting at ``off`` in
    ``data`` (an mmap or bytes; ``view`` its memoryview), or -1."""
    if size - off < HEADER.size:
        return -1
    length, rnum, crc = HEADER.unpack_from(data, off)
    end = off + HEADER.size + length
    if rnum != num or not 0 < length <= MAX_RECORD or end > size:
        return -1
    if zlib.crc32(view[off + 12:end], zlib.crc32(struct.pack("<II", length, rnum))) != crc:
        return -1
    return end


def encode_block(block: dict) -> bytes:
    """Payload bytes (codec byte + JSON) of a wire-JSON ``block``."""
    try:
        return bytes((CODEC_ORJSON,)) + orjson.dumps(block)
    except TypeError:
        return bytes((CODEC_JSON,)) + json.dumps(block, separators=(",", ":")).encode()


#: The fields every stored block has (graphene ``signed_block``).
BLOCK_FIELDS = ("previous", "timestamp", "witness", "transaction_merkle_root",
                "extensions", "witness_signature", "transactions")
_BLOCK_FIELD_SET = frozenset(BLOCK_FIELDS)


def decode_block(payload: bytes) -> dict:
    """Inverse of :func:`encode_block`.

    :raises ValueError: an unknown codec, bytes that are not JSON of that
        codec, or JSON that is not a signed block (an object with every
        field of :data:`BLOCK_FIELDS`, ``transactions`` a list); the message
        says which."""
    codec = payload[0] if payload else None
    try:
        if codec == CODEC_ORJSON:
            block = orjson.loads(payload[1:])
        elif codec == CODEC_JSON:
            block = json.loads(payload[1:])
        else:
            raise ValueError(f"unknown payload codec {codec}")
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"payload is not a block: {exc}") from None
    if type(block) is not dict:
        raise ValueError(f"payload is not a block: JSON {type(block).__name__}")
    if not block.keys() >= _BLOCK_FIELD_SET:
        missing = [f for f in BLOCK_FIELDS if f not in block]
        raise ValueError(f"payload is not a block: missing {', '.join(missing)}")
    if type(block["transactions"]) is not list:
        raise ValueError("payload is not a block: transactions is not a list")
    return block


def frame(num: int, payload: bytes) -> bytes:
    """One complete record for block ``num`` (header + payload)."""
    crc = zlib.crc32(payload, zlib.crc32(struct.pack("<II", len(payload), num)))
    return HEADER.pack(len(payload), num, crc) + payload


def valid_record_after(data, view, off: int, num: int) -> bool:
    """True if an intact record of block ``num`` or ``num + 1`` starts
    somewhere after ``off`` in ``data`` (an mmap; ``view`` its memoryview):
    then the damage at ``off`` is not a torn tail but a corrupt length or
    checksum in the middle of the file."""
    size = len(data)
    for n in (num, num + 1):
        tag = struct.pack("<I", n)
        pos = data.find(tag, off + 5)
        while pos != -1:
            if record_intact(data, view, pos - 4, n, size) != -1:
                return True
            pos = data.find(tag, pos + 1)
    return False
