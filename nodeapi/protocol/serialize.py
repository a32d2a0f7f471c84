"""fc binary serialization (``fc::raw::pack``) of wire-JSON values: the
wire-type protocol and the primitive types.

Each wire type is an object with

- ``pack(value, out: bytearray, prefix)``: append the bytes of the wire-JSON
  ``value``; ``prefix`` is the chain's key prefix (``"TEST"``) that public
  keys and addresses must carry, or ``None`` to accept any;
- ``unpack(data: bytes, pos: int, prefix) -> (value, new_pos)``: the inverse,
  giving the wire JSON (integers as Python ints, keys with ``prefix``);
- ``default``: the bytes of the type's default-constructed value, which a
  struct field absent or null from the JSON takes (bitshares-fc's reflected
  ``from_variant``, fc/reflect/variant.hpp, sets only the members present:
  zero integers, empty strings and containers, the epoch, instance 0 ids,
  the all-zero key);
- ``sort_key(value)``: the order of graphene's ``operator<`` for types used
  in ``flat_set``/``flat_map`` keys.

This module holds fc's primitives (integers, varint, bool, string, bytes,
hashes, time, void) and :func:`pack` / :func:`unpack`; graphene's own
scalar types (object ids, public keys, addresses, vote ids) are in
:mod:`nodeapi.protocol.graphene_types`, the composite types (optional,
vector, flat_set, flat_map, struct, extension, static_variant) in
:mod:`nodeapi.protocol.composite`.

Encodings (bitshares-fc ``fc/io/raw.hpp``, ``varint.hpp``): fixed-width
little-endian integers; ``unsigned_int`` as LEB128 varint; bool one byte;
string and ``vector<char>`` as varint length + bytes; ``time_point_sec`` as
uint32.  JSON integers may be numbers or decimal strings (docs/wire-contract.rst
section 3); ``vector<char>`` and hashes are hex strings.
"""

import struct

from nodeapi.protocol.errors import IntegerOutOfRange, InvalidField, InvalidHex, TruncatedData
from nodeapi.protocol.times import format_time, parse_time


def to_int(value, what: str = "value") -> int:
    """A JSON value read as an integer the way bitshares-fc's
    ``variant::as_int64`` / ``as_uint64`` read it (fc/src/variant.cpp): an
    integer, a decimal string (``fc::to_int64``), a double truncated toward
    zero (``1000.0`` and ``1000.7`` are 1000), a boolean as 0 or 1.  The
    caller checks the range of its type.

    :raises InvalidField: any other value (an object, an array, a
        non-decimal string, NaN or infinity)."""
    t = type(value)
    if t is int:
        return value
    if t is str:
        body = value[1:] if value[:1] == "-" else value
        if body.isascii() and body.isdigit():
            return int(value)
    elif t is float:
        if value == value and value not in (float("inf"), float("-inf")):
            return int(value)
    elif t is bool:
        return int(value)
    raise InvalidField(f"{what}: expected an integer, got {value!r}")


def from_hex(text, what: str = "value") -> bytes:
    """Bytes of a hex string; raises :class:`InvalidHex`."""
    try:
        return bytes.fromhex(text)
    except (ValueError, TypeError):
        raise InvalidHex(f"{what}: invalid hex string {str(text)[:40]!r}") from None


def pack_varint(value: int, out: bytearray) -> None:
    """Append ``value`` (0 <= value < 2**64) as LEB128."""
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def unpack_varint(data: bytes, pos: int) -> tuple[int, int]:
    """Read a 32-bit ``unsigned_int``; raises :class:`TruncatedData` or
    :class:`IntegerOutOfRange`."""
    value = shift = 0
    try:
        while True:
            b = data[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
            if shift > 35:
                raise IntegerOutOfRange("varint longer than 5 bytes")
    except IndexError:
        raise TruncatedData("Binary data ends inside a varint") from None
    if value > 0xFFFFFFFF:
        raise IntegerOutOfRange(f"varint {value} exceeds 32 bits")
    return value, pos


def need_bytes(data: bytes, pos: int, n: int) -> int:
    """End offset ``pos + n`` of ``n`` bytes at ``pos``; raises
    :class:`TruncatedData` when ``data`` is shorter."""
    end = pos + n
    if end > len(data):
        raise TruncatedData(f"Binary data ends at byte {len(data)}, needed {end}")
    return end


class Int:
    """Fixed-width integer (``int8``..``uint64``, ``share_type`` = int64)."""

    def __init__(self, bits: int, signed: bool) -> None:
        self.name = ("int" if signed else "uint") + str(bits)
        code = {8: "b", 16: "h", 32: "i", 64: "q"}[bits]
        self._struct = struct.Struct("<" + (code if signed else code.upper()))
        self.default = bytes(bits // 8)
        self.lo = -(1 << (bits - 1)) if signed else 0
        self.hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1

    def pack(self, value, out, prefix=None) -> None:
        """Append ``value`` (an int, or what :func:`to_int` reads) as
        little-endian bytes, ``bits``/8 of them (fc/io/raw.hpp ``pack`` of the
        integer).

        :raises IntegerOutOfRange: outside ``lo``..``hi`` of the type.
        :raises InvalidField: not an integer (:func:`to_int`)."""
        v = value if type(value) is int else to_int(value, self.name)
        if not self.lo <= v <= self.hi:
            raise IntegerOutOfRange(f"{v} is out of range for {self.name}")
        out += self._struct.pack(v)

    def unpack(self, data, pos, prefix=None):
        """``(int, pos + bits/8)``: the little-endian integer at ``pos``.

        :raises TruncatedData: fewer bytes left."""
        end = need_bytes(data, pos, self._struct.size)
        return self._struct.unpack_from(data, pos)[0], end

    def sort_key(self, value):
        """The integer (C++ integer ``<``).

        :raises InvalidField: not an integer (:func:`to_int`)."""
        return to_int(value, self.name)


class VarInt:
    """``unsigned_int``: 32-bit value as LEB128 varint."""

    name = "unsigned_int"
    default = b"\x00"

    def pack(self, value, out, prefix=None) -> None:
        """Append ``value`` (0..2**32-1) as LEB128 (fc/io/varint.hpp
        ``unsigned_int``).

        :raises IntegerOutOfRange: outside 0..2**32-1.
        :raises InvalidField: not an integer (:func:`to_int`)."""
        v = value if type(value) is int else to_int(value, self.name)
        if not 0 <= v <= 0xFFFFFFFF:
            raise IntegerOutOfRange(f"{v} is out of range for unsigned_int")
        pack_varint(v, out)

    def unpack(self, data, pos, prefix=None):
        """``(int, new pos)``, :func:`unpack_varint`.

        :raises TruncatedData: the data ends inside the varint.
        :raises IntegerOutOfRange: longer than 5 bytes or over 32 bits."""
        return unpack_varint(data, pos)

    def sort_key(self, value):
        """The integer (``unsigned_int`` compares its value).

        :raises InvalidField: not an integer (:func:`to_int`)."""
        return to_int(value, self.name)


class Bool:
    """bool: one byte, 0 or 1; read like fc's ``variant::as_bool``
    (fc/src/variant.cpp): true/false, a number as ``!= 0``, the strings
    "true" and "false".  ``default`` is the value an absent field takes
    (false, as a default-constructed ``bool`` member; ``is_maker`` of
    fill_order is true)."""

    name = "bool"

    def __init__(self, default: bool = False) -> None:
        self.default = bytes([default])

    def pack(self, value, out, prefix=None) -> None:
        """Append 1 or 0 for ``value``, read as the class docstring says.

        :raises InvalidField: any other value (null, another string, an object
            or an array)."""
        t = type(value)
        if t is bool:
            out.append(1 if value else 0)
        elif t is int or t is float:
            out.append(1 if value != 0 else 0)
        elif t is str and value in ("true", "false"):
            out.append(1 if value == "true" else 0)
        else:
            raise InvalidField(f"bool: expected true or false, got {value!r}")

    def unpack(self, data, pos, prefix=None):
        """``(bool, pos + 1)``.

        :raises TruncatedData: no byte left.
        :raises InvalidField: a byte other than 0 and 1 (fc/io/raw.hpp's
            ``unpack`` of a bool asserts the same)."""
        need_bytes(data, pos, 1)
        if data[pos] > 1:
            raise InvalidField(f"bool byte {data[pos]} is neither 0 nor 1")
        return data[pos] == 1, pos + 1

    def sort_key(self, value):
        """0 or 1 (false sorts first); errors as :meth:`pack`."""
        out = bytearray()
        self.pack(value, out)
        return out[0]


class String:
    """string: varint length + UTF-8 bytes (invalid UTF-8 read back with
    replacement characters)."""

    name = "string"
    default = b"\x00"

    def pack(self, value, out, prefix=None) -> None:
        """Append the UTF-8 bytes of ``value`` after their varint length.

        :raises InvalidField: not a string."""
        if not isinstance(value, str):
            raise InvalidField(f"string: expected a string, got {value!r}")
        raw = value.encode("utf-8")
        pack_varint(len(raw), out)
        out += raw

    def unpack(self, data, pos, prefix=None):
        """``(str, new pos)``: a varint length and that many bytes, decoded as
        UTF-8 (invalid bytes replaced).

        :raises TruncatedData: the data ends first.
        :raises IntegerOutOfRange: a length varint over 32 bits."""
        n, pos = unpack_varint(data, pos)
        end = need_bytes(data, pos, n)
        return bytes(data[pos:end]).decode("utf-8", "replace"), end

    def sort_key(self, value):
        """The UTF-8 bytes: ``std::string`` ``<`` compares byte by byte,
        unsigned.

        :raises InvalidField: not a string."""
        if not isinstance(value, str):
            raise InvalidField(f"string: expected a string, got {value!r}")
        return value.encode("utf-8")


class Bytes:
    """``vector<char>``: varint length + bytes; JSON hex."""

    name = "bytes"
    default = b"\x00"

    def pack(self, value, out, prefix=None) -> None:
        """Append the bytes of the hex string ``value`` after their varint
        length.

        :raises InvalidHex: not a hex string."""
        raw = from_hex(value, self.name)
        pack_varint(len(raw), out)
        out += raw

    def unpack(self, data, pos, prefix=None):
        """``(hex str, new pos)``: a varint length and that many bytes.

        :raises TruncatedData: the data ends first.
        :raises IntegerOutOfRange: a length varint over 32 bits."""
        n, pos = unpack_varint(data, pos)
        end = need_bytes(data, pos, n)
        return bytes(data[pos:end]).hex(), end


class FixedBytes:
    """Fixed-size bytes (ripemd160 = 20, sha256 = 32, signature = 65); JSON hex."""

    def __init__(self, size: int, name: str) -> None:
        self.size = size
        self.name = name
        self.default = bytes(size)

    def pack(self, value, out, prefix=None) -> None:
        """Append the ``size`` bytes of the hex string ``value``.

        :raises InvalidHex: not a hex string, or not ``size`` bytes of one."""
        raw = from_hex(value, self.name)
        if len(raw) != self.size:
            raise InvalidHex(f"{self.name}: expected {self.size} bytes of hex, got {len(raw)}")
        out += raw

    def unpack(self, data, pos, prefix=None):
        """``(hex str, pos + size)``.

        :raises TruncatedData: fewer than ``size`` bytes left."""
        end = need_bytes(data, pos, self.size)
        return bytes(data[pos:end]).hex(), end

    def sort_key(self, value):
        """The bytes (fc's hashes compare with ``memcmp``).

        :raises InvalidHex: not a hex string."""
        return from_hex(value, self.name)


class TimePointSec:
    """``time_point_sec``: uint32 seconds; JSON ``YYYY-MM-DDTHH:MM:SS``.
    Times outside 1970..2106 wrap modulo 2**32 like fc's
    ``time_point_sec(uint32_t)`` conversion."""

    name = "time_point_sec"
    default = bytes(4)

    def pack(self, value, out, prefix=None) -> None:
        """Append ``value`` (``YYYY-MM-DDTHH:MM:SS``, read by
        :func:`~nodeapi.protocol.times.parse_time`) as uint32 seconds since the
        epoch, modulo 2**32.

        :raises InvalidTime: not a time."""
        out += struct.pack("<I", parse_time(value) & 0xFFFFFFFF)

    def unpack(self, data, pos, prefix=None):
        """``("YYYY-MM-DDTHH:MM:SS", pos + 4)`` of the uint32 seconds.

        :raises TruncatedData: fewer than 4 bytes left."""
        end = need_bytes(data, pos, 4)
        return format_time(struct.unpack_from("<I", data, pos)[0]), end

    def sort_key(self, value):
        """The uint32 seconds :meth:`pack` writes.

        :raises InvalidTime: not a time."""
        return parse_time(value) & 0xFFFFFFFF


class Void:
    """``void_t`` / ``void_result`` / empty structs: no bytes; JSON ``{}``."""

    name = "void"
    default = b""

    def pack(self, value, out, prefix=None) -> None:
        """Nothing: a ``void_t`` has no bytes (``value`` is not looked at)."""
        return None

    def unpack(self, data, pos, prefix=None):
        """``({}, pos)``: nothing read."""
        return {}, pos


def pack(type_, value, prefix: str | None = None) -> bytes:
    """Serialize ``value`` as ``type_``."""
    out = bytearray()
    type_.pack(value, out, prefix)
    return bytes(out)


def unpack(type_, data: bytes, prefix: str | None = None, pos: int = 0, exact: bool = True):
    """Read a ``type_`` value from ``data`` at ``pos``; with ``exact`` the
    data must end there (:class:`TruncatedData` otherwise).  ``prefix`` is
    the chain's key prefix public keys and addresses are written with (a
    type holding one needs it: :class:`TypeError` otherwise)."""
    value, end = type_.unpack(data, pos, prefix)
    if exact and end != len(data):
        raise TruncatedData(f"{len(data) - end} bytes left after the value")
    return value


# Commonly used instances.
UINT8, UINT16, UINT32, UINT64 = Int(8, False), Int(16, False), Int(32, False), Int(64, False)
INT64 = Int(64, True)
VARINT, BOOL, STRING, BYTES = VarInt(), Bool(), String(), Bytes()
TIME = TimePointSec()
VOID = Void()
RIPEMD160, SHA256 = FixedBytes(20, "ripemd160"), FixedBytes(32, "sha256")
SHA1, HASH160 = FixedBytes(20, "sha1"), FixedBytes(20, "hash160")
COMMITMENT = FixedBytes(33, "commitment")  # fc::ecc::commitment_type (Pedersen)
SIGNATURE = FixedBytes(65, "signature")
