"""graphene's own scalar wire types: typed object ids (``account_id_type``
...), ``object_id_type``, ``public_key_type``, ``address`` and
``vote_id_type``, with the wire-type protocol of
:mod:`nodeapi.protocol.serialize` (``pack``/``unpack``/``default``/
``sort_key``).

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/``
``object_id.hpp`` (``object_id_type``, ``object_id<S,T,I>`` packed as the
varint instance), ``types.hpp`` (``public_key_type``), ``address.hpp``,
``vote.hpp`` (``vote_id_type``).
"""

import struct

from nodeapi.protocol.errors import IntegerOutOfRange, InvalidField, InvalidObjectId
from nodeapi.protocol.ids import MAX_INSTANCE, ObjectId
from nodeapi.protocol.keys import (
    address_bytes, checked_base58, public_key_bytes, public_key_str)
from nodeapi.protocol.serialize import need_bytes, pack_varint, unpack_varint


#: How many id strings :meth:`ObjectIdType.instance` remembers per type.
KNOWN_IDS = 4096


class ObjectIdType:
    """A typed id (``account_id_type`` = 1.2.x, ...): varint instance."""

    default = b"\x00"

    def __init__(self, space: int, type_: int) -> None:
        self.name = f"{space}.{type_}.x"
        self._prefix = f"{space}.{type_}."
        self._plen = len(self._prefix)
        self._known: dict = {}  # id string -> instance, of the ids already read

    def instance(self, value) -> int:
        """Instance number of an id string of this type; raises
        :class:`InvalidObjectId`.  The ids read are remembered (up to
        :data:`KNOWN_IDS` per type), as the same accounts and assets recur."""
        if type(value) is str:
            n = self._known.get(value)
            if n is not None:
                return n
        if isinstance(value, str) and value.startswith(self._prefix):
            rest = value[self._plen:]
            if rest.isascii() and rest.isdigit():
                n = int(rest)
                if n <= MAX_INSTANCE:
                    known = self._known
                    if len(known) >= KNOWN_IDS:
                        known.clear()
                    known[value] = n
                    return n
        raise InvalidObjectId(f"Invalid object id {value!r}: expected an id of type {self.name}")

    def pack(self, value, out, prefix=None) -> None:
        """Append the instance of the id string ``value`` as a varint
        (object_id.hpp: ``object_id<S,T>`` packs its instance only).

        :raises InvalidObjectId: not an id of this type (:meth:`instance`)."""
        pack_varint(self.instance(value), out)

    def unpack(self, data, pos, prefix=None):
        """``("S.T.N", new pos)`` of the varint instance N.

        :raises TruncatedData: the data ends inside the varint.
        :raises IntegerOutOfRange: a varint over 32 bits."""
        n, pos = unpack_varint(data, pos)
        return self._prefix + str(n), pos

    sort_key = instance


class AnyObjectId:
    """``object_id_type``: uint64 ``space << 56 | type << 48 | instance``."""

    name = "object_id_type"
    default = bytes(8)

    def pack(self, value, out, prefix=None) -> None:
        """Append the id string ``value`` as its uint64 (class docstring).

        :raises InvalidObjectId: not an object id
            (:meth:`~nodeapi.protocol.ids.ObjectId.parse`)."""
        out += struct.pack("<Q", ObjectId.parse(value).to_int())

    def unpack(self, data, pos, prefix=None):
        """``("S.T.N", pos + 8)`` of the uint64.

        :raises TruncatedData: fewer than 8 bytes left."""
        end = need_bytes(data, pos, 8)
        return str(ObjectId.from_int(struct.unpack_from("<Q", data, pos)[0])), end

    def sort_key(self, value):
        """The uint64 (object_id.hpp compares ``number``): space, then type,
        then instance.

        :raises InvalidObjectId: not an object id."""
        return ObjectId.parse(value).to_int()


class Base58Bytes:
    """A type of fixed ``size`` bytes on the wire and ``PREFIX`` + base58
    in JSON: ``public_key_type`` (33 bytes, :data:`PUBLIC_KEY`) and
    ``address`` (20 bytes with a ripemd160 checksum, :data:`ADDRESS`).
    ``to_bytes(text, prefix)`` reads the JSON form (raising
    :class:`~nodeapi.protocol.errors.InvalidKey` and the like),
    ``to_text(raw, prefix)`` writes it; values order by their bytes."""

    def __init__(self, name: str, size: int, to_bytes, to_text) -> None:
        self.name = name
        self.size = size
        self.default = bytes(size)
        self.to_bytes = to_bytes
        self.to_text = to_text

    def pack(self, value, out, prefix=None) -> None:
        """Append the ``size`` bytes of the JSON form ``value`` (``to_bytes``;
        with ``prefix`` the key must carry it).

        :raises WrongKeyPrefix: the text's prefix is not ``prefix``.
        :raises InvalidBase58: not base58.
        :raises InvalidChecksum: the checksum does not match.
        :raises InvalidKey: not a string, or a wrong size."""
        out += self.to_bytes(value, prefix)

    def unpack(self, data, pos, prefix=None):
        """``(prefix + base58 text, pos + size)``.

        :raises TypeError: ``prefix`` is None (the text needs it).
        :raises TruncatedData: fewer than ``size`` bytes left."""
        if prefix is None:
            raise TypeError(f"{self.name}: reading one needs the chain's key prefix")
        end = need_bytes(data, pos, self.size)
        return self.to_text(bytes(data[pos:end]), prefix), end

    def sort_key(self, value):
        """The bytes (graphene's ``public_key_type`` and ``address`` compare
        their bytes); any prefix is accepted, the other errors as
        :meth:`pack`."""
        return self.to_bytes(value, None)


class VoteId:
    """``vote_id_type``: uint32 ``instance << 8 | type``; JSON ``"type:instance"``."""

    name = "vote_id"
    default = bytes(4)

    def content(self, value) -> int:
        """The uint32 ``instance << 8 | type`` of ``"type:instance"`` (vote.hpp
        ``vote_id_type::content``).

        :raises IntegerOutOfRange: type over 255 or instance over 2**24-1.
        :raises InvalidField: not ``"type:instance"`` of decimal digits."""
        if isinstance(value, str) and value.count(":") == 1:
            kind, _, inst = value.partition(":")
            if kind.isascii() and kind.isdigit() and inst.isascii() and inst.isdigit():
                kind, inst = int(kind), int(inst)
                if kind <= 0xFF and inst <= 0xFFFFFF:
                    return inst << 8 | kind
                raise IntegerOutOfRange(f"vote id {value!r}: type or instance out of range")
        raise InvalidField(f"vote id: expected \"type:instance\", got {value!r}")

    def pack(self, value, out, prefix=None) -> None:
        """Append :meth:`content` of ``value`` as a little-endian uint32; its
        errors."""
        out += struct.pack("<I", self.content(value))

    def unpack(self, data, pos, prefix=None):
        """``("type:instance", pos + 4)``.

        :raises TruncatedData: fewer than 4 bytes left."""
        end = need_bytes(data, pos, 4)
        v = struct.unpack_from("<I", data, pos)[0]
        return f"{v & 0xFF}:{v >> 8}", end

    sort_key = content


PUBLIC_KEY = Base58Bytes("public_key", 33, public_key_bytes, public_key_str)
ADDRESS = Base58Bytes("address", 20, address_bytes, checked_base58)
VOTE_ID, OBJECT_ID = VoteId(), AnyObjectId()
