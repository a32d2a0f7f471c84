"""The core messages of graphene's peer protocol and their fc bytes
(bitshares-core ``libraries/net/include/graphene/net/core_messages.hpp``,
``message.hpp``; bitshares-fc ``io/raw.hpp``, ``io/raw_variant.hpp``,
``network/ip.hpp``).

A message travels as ``message_header`` (little-endian uint32 ``size`` of
the data, uint32 ``msg_type``), the data, and zero bytes up to a multiple of
16 (:func:`frame`).  Each message is a dict of its fields in wire JSON form
(hashes, keys and signatures as hex, blocks and transactions as the chain
holds them); :func:`encode` and :func:`decode` turn it into and out of the
data bytes, raising a :class:`~nodeapi.errors.ProtocolError` subclass (or
:class:`BadMessage`) for what does not read.
"""

import struct

from nodeapi.protocol.block import SIGNED_BLOCK
from nodeapi.protocol.composite import Struct, Vector
from nodeapi.protocol.errors import InvalidField, TruncatedData
from nodeapi.protocol.serialize import (
    BOOL, INT64, RIPEMD160, SHA256, SIGNATURE, STRING, UINT8, UINT16, UINT32, UINT64,
    FixedBytes, need_bytes, pack_varint, unpack, unpack_varint)
from nodeapi.protocol.transaction import SIGNED_TRANSACTION

#: graphene ``MAX_MESSAGE_SIZE`` (libraries/net/include/graphene/net/config.hpp):
#: the largest ``size`` a header may carry (bytes)
MAX_MESSAGE_SIZE = 2 * 1024 * 1024
#: graphene ``GRAPHENE_NET_PROTOCOL_VERSION``
CORE_PROTOCOL_VERSION = 106
#: bytes of ``message_header``
HEADER_SIZE = 8
#: the deepest ``fc::variant`` read from a peer (``GRAPHENE_NET_MAX_NESTED_OBJECTS``)
MAX_VARIANT_DEPTH = 250

TRX = 1000
BLOCK = 1001
ITEM_IDS_INVENTORY = 5001
BLOCKCHAIN_ITEM_IDS_INVENTORY = 5002
FETCH_BLOCKCHAIN_ITEM_IDS = 5003
FETCH_ITEMS = 5004
ITEM_NOT_AVAILABLE = 5005
HELLO = 5006
CONNECTION_ACCEPTED = 5007
CONNECTION_REJECTED = 5008
ADDRESS_REQUEST = 5009
ADDRESS = 5010
CLOSING_CONNECTION = 5011
CURRENT_TIME_REQUEST = 5012
CURRENT_TIME_REPLY = 5013
CHECK_FIREWALL = 5014
CHECK_FIREWALL_REPLY = 5015
GET_CURRENT_CONNECTIONS_REQUEST = 5016
GET_CURRENT_CONNECTIONS_REPLY = 5017
#: the range of core message types (a type inside it this node does not
#: know is ignored, as the reference does)
CORE_FIRST, CORE_LAST = 5000, 5099

# rejection_reason_code
REJECT_UNSPECIFIED = 0
REJECT_DIFFERENT_CHAIN = 1
REJECT_ALREADY_CONNECTED = 2
REJECT_CONNECTED_TO_SELF = 3
REJECT_NOT_ACCEPTING = 4
REJECT_BLOCKED = 5
REJECT_INVALID_HELLO = 6
REJECT_CLIENT_TOO_OLD = 7

# firewall_check_result
FIREWALL_UNABLE_TO_CHECK = 0

# peer_connection_direction / firewalled_state
DIRECTION_UNKNOWN, DIRECTION_INBOUND, DIRECTION_OUTBOUND = 0, 1, 2
FIREWALLED_UNKNOWN, FIREWALLED, NOT_FIREWALLED = 0, 1, 2

NODE_ID = FixedBytes(33, "node_id")


class BadMessage(InvalidField):
    """A peer's message that does not read (unknown type, wrong block id,
    a variant nested too deeply, ...)."""


class _IpAddress:
    """``fc::ip::address``: uint32 (little-endian); JSON dotted quad."""

    name = "ip_address"
    default = bytes(4)

    def pack(self, value, out, prefix=None) -> None:
        parts = [int(p) for p in str(value).split(".")]
        if len(parts) != 4 or not all(0 <= p <= 255 for p in parts):
            raise InvalidField(f"ip_address: not an IPv4 address: {value!r}")
        out += struct.pack("<I", (parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3])

    def unpack(self, data, pos, prefix=None):
        end = need_bytes(data, pos, 4)
        v = struct.unpack_from("<I", data, pos)[0]
        return f"{v >> 24}.{(v >> 16) & 255}.{(v >> 8) & 255}.{v & 255}", end


IP_ADDRESS = _IpAddress()
#: ``fc::ip::endpoint``: address then uint16 port
ENDPOINT = Struct("ip_endpoint", [("address", IP_ADDRESS), ("port", UINT16)])


class _Variant:
    """``fc::variant`` in fc raw form: a type byte then the value (null 0,
    int64 1, uint64 2, bool 4, string 5, array 6, object 7, blob 8; double
    3 is refused as fc refuses it).  JSON: None, int, bool, str, list,
    dict, bytes (blob).  Reading stops at :data:`MAX_VARIANT_DEPTH`."""

    name = "variant"
    default = b"\x00"

    def pack(self, value, out, prefix=None, depth=MAX_VARIANT_DEPTH) -> None:
        if depth <= 0:
            raise BadMessage("variant: nested too deeply")
        if value is None:
            out += b"\x00"
        elif value is True or value is False:
            out += b"\x04" + (b"\x01" if value else b"\x00")
        elif isinstance(value, int):
            if value < 0:
                out += b"\x01"
                INT64.pack(value, out)
            else:
                out += b"\x02"
                UINT64.pack(value, out)
        elif isinstance(value, str):
            out += b"\x05"
            STRING.pack(value, out)
        elif isinstance(value, (bytes, bytearray)):
            out += b"\x08"
            pack_varint(len(value), out)
            out += value
        elif isinstance(value, (list, tuple)):
            out += b"\x06"
            pack_varint(len(value), out)
            for item in value:
                self.pack(item, out, prefix, depth - 1)
        elif isinstance(value, dict):
            out += b"\x07"
            self.pack_object(value, out, depth - 1)
        else:
            raise InvalidField(f"variant: cannot pack {type(value).__name__}")

    def pack_object(self, value: dict, out, depth=MAX_VARIANT_DEPTH) -> None:
        pack_varint(len(value), out)
        for key, item in value.items():
            STRING.pack(key, out)
            self.pack(item, out, None, depth)

    def unpack(self, data, pos, prefix=None, depth=MAX_VARIANT_DEPTH):
        if depth <= 0:
            raise BadMessage("variant: nested too deeply")
        end = need_bytes(data, pos, 1)
        kind = data[pos]
        pos = end
        if kind == 0:
            return None, pos
        if kind == 1:
            return INT64.unpack(data, pos)
        if kind == 2:
            return UINT64.unpack(data, pos)
        if kind == 4:
            return BOOL.unpack(data, pos)
        if kind == 5:
            return STRING.unpack(data, pos)
        if kind == 6:
            n, pos = unpack_varint(data, pos)
            items = []
            for _ in range(n):
                item, pos = self.unpack(data, pos, prefix, depth - 1)
                items.append(item)
            return items, pos
        if kind == 7:
            return self.unpack_object(data, pos, depth - 1)
        if kind == 8:
            n, pos = unpack_varint(data, pos)
            end = need_bytes(data, pos, n)
            return bytes(data[pos:end]), end
        raise BadMessage(f"variant: unknown type {kind}")

    def unpack_object(self, data, pos, depth=MAX_VARIANT_DEPTH):
        if depth <= 0:
            raise BadMessage("variant_object: nested too deeply")
        n, pos = unpack_varint(data, pos)
        obj = {}
        for _ in range(n):
            key, pos = STRING.unpack(data, pos)
            obj[key], pos = self.unpack(data, pos, None, depth)
        return obj, pos


VARIANT = _Variant()


class _VariantObject:
    """``fc::variant_object``: varint count, then (string key, variant)."""

    name = "variant_object"
    default = b"\x00"

    def pack(self, value, out, prefix=None) -> None:
        if not isinstance(value, dict):
            raise InvalidField("variant_object: expected an object")
        VARIANT.pack_object(value, out)

    def unpack(self, data, pos, prefix=None):
        return VARIANT.unpack_object(data, pos)


VARIANT_OBJECT = _VariantObject()


class _OptionalException:
    """``fc::oexception`` of closing_connection_message: a presence byte;
    a present exception (code, name, message, log stack) is kept as its
    bytes, since this node never needs its parts."""

    name = "oexception"
    default = b"\x00"

    def pack(self, value, out, prefix=None) -> None:
        if value:
            raise InvalidField("oexception: this node sends no exception objects")
        out += b"\x00"

    def unpack(self, data, pos, prefix=None):
        end = need_bytes(data, pos, 1)
        if data[pos] == 0:
            return None, end
        return bytes(data[end:]).hex(), len(data)


ITEM_HASHES = Vector(RIPEMD160)

#: message type -> its struct (graphene FC_REFLECT order)
STRUCTS = {
    TRX: Struct("trx_message", [("trx", SIGNED_TRANSACTION)]),
    ITEM_IDS_INVENTORY: Struct("item_ids_inventory_message", [
        ("item_type", UINT32), ("item_hashes_available", ITEM_HASHES)]),
    BLOCKCHAIN_ITEM_IDS_INVENTORY: Struct("blockchain_item_ids_inventory_message", [
        ("total_remaining_item_count", UINT32), ("item_type", UINT32),
        ("item_hashes_available", ITEM_HASHES)]),
    FETCH_BLOCKCHAIN_ITEM_IDS: Struct("fetch_blockchain_item_ids_message", [
        ("item_type", UINT32), ("blockchain_synopsis", ITEM_HASHES)]),
    FETCH_ITEMS: Struct("fetch_items_message", [
        ("item_type", UINT32), ("items_to_fetch", ITEM_HASHES)]),
    ITEM_NOT_AVAILABLE: Struct("item_not_available_message", [
        ("requested_item", Struct("item_id", [("item_type", UINT32),
                                              ("item_hash", RIPEMD160)]))]),
    HELLO: Struct("hello_message", [
        ("user_agent", STRING), ("core_protocol_version", UINT32),
        ("inbound_address", IP_ADDRESS), ("inbound_port", UINT16),
        ("outbound_port", UINT16), ("node_public_key", NODE_ID),
        ("signed_shared_secret", SIGNATURE), ("chain_id", SHA256),
        ("user_data", VARIANT_OBJECT)]),
    CONNECTION_ACCEPTED: Struct("connection_accepted_message", []),
    CONNECTION_REJECTED: Struct("connection_rejected_message", [
        ("user_agent", STRING), ("core_protocol_version", UINT32),
        ("remote_endpoint", ENDPOINT), ("reason_code", UINT8), ("reason_string", STRING)]),
    ADDRESS_REQUEST: Struct("address_request_message", []),
    ADDRESS: Struct("address_message", [("addresses", Vector(Struct("address_info", [
        ("remote_endpoint", ENDPOINT), ("last_seen_time", UINT32), ("latency", INT64),
        ("node_id", NODE_ID), ("direction", UINT8), ("firewalled", UINT8)])))]),
    CLOSING_CONNECTION: Struct("closing_connection_message", [
        ("reason_for_closing", STRING), ("closing_due_to_error", BOOL),
        ("error", _OptionalException())]),
    CURRENT_TIME_REQUEST: Struct("current_time_request_message", [
        ("request_sent_time", INT64)]),
    CURRENT_TIME_REPLY: Struct("current_time_reply_message", [
        ("request_sent_time", INT64), ("request_received_time", INT64),
        ("reply_transmitted_time", INT64)]),
    CHECK_FIREWALL: Struct("check_firewall_message", [
        ("node_id", NODE_ID), ("endpoint_to_check", ENDPOINT)]),
    CHECK_FIREWALL_REPLY: Struct("check_firewall_reply_message", [
        ("node_id", NODE_ID), ("endpoint_checked", ENDPOINT), ("result", UINT8)]),
}

NAMES = {TRX: "trx", BLOCK: "block", **{k: v.name for k, v in STRUCTS.items() if k != TRX}}


def encode(msg_type: int, message: dict, prefix: str | None = None) -> bytes:
    """The data bytes of ``message`` (a dict of the type's fields; a block
    message is ``{"block": ..., "block_id": ...}``)."""
    out = bytearray()
    if msg_type == BLOCK:
        SIGNED_BLOCK.pack(message["block"], out, prefix)
        RIPEMD160.pack(message["block_id"], out)
        return bytes(out)
    struct_ = STRUCTS.get(msg_type)
    if struct_ is None:
        raise BadMessage(f"unknown message type {msg_type}")
    struct_.pack(message, out, prefix)
    return bytes(out)


def decode(msg_type: int, data: bytes, prefix: str):
    """The message of type ``msg_type`` read from ``data`` (see
    :func:`encode`).  Trailing bytes are refused, except after the
    structs' last field as fc tolerates for extension (not for blocks and
    transactions, whose bytes are hashed).

    :raises BadMessage: unknown type, or a ProtocolError subclass for
        bytes that do not read."""
    if msg_type == BLOCK:
        block, pos = SIGNED_BLOCK.unpack(data, 0, prefix)
        block_id, pos = RIPEMD160.unpack(data, pos)
        if pos != len(data):
            raise TruncatedData(f"block_message: {len(data) - pos} bytes left")
        return {"block": block, "block_id": block_id}
    struct_ = STRUCTS.get(msg_type)
    if struct_ is None:
        raise BadMessage(f"unknown message type {msg_type}")
    if msg_type == TRX:
        return unpack(struct_, data, prefix)
    value, _end = struct_.unpack(data, 0, prefix)
    return value


def frame(msg_type: int, data: bytes) -> bytes:
    """Header, data and zero padding to a multiple of 16 bytes
    (``message_oriented_connection::send_message``)."""
    if len(data) > MAX_MESSAGE_SIZE:
        raise BadMessage(f"message of {len(data)} bytes is over MAX_MESSAGE_SIZE")
    body = struct.pack("<II", len(data), msg_type) + data
    return body + bytes(-len(body) % 16)


def framed_size(data_size: int) -> int:
    """Bytes on the wire of a message with ``data_size`` bytes of data."""
    return (HEADER_SIZE + data_size + 15) // 16 * 16


def block_num_of_hash(item_hash: str) -> int:
    """Block number in the first 4 bytes of a block id (hex)
    (``block_header::num_from_id``)."""
    return int(item_hash[:8], 16)
