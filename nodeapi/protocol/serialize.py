"""fc binary serialization (``fc::raw::pack``) of wire-JSON values.

Each wire type is an object with

- ``pack(value, out: bytearray, prefix)``: append the bytes of the wire-JSON
  ``value``; ``prefix`` is the chain's key prefix (``"TEST"``) that public
  keys and addresses must carry, or ``None`` to accept any;
- ``unpack(data: bytes, pos: int, prefix) -> (value, new_pos)``: the inverse,
  giving the wire JSON (integers as Python ints, keys with ``prefix``);
- ``default``: the bytes of the type's default value when a struct field is
  absent or null (optional, containers, extensions), else ``None`` (the
  field is required);
- ``sort_key(value)``: the order of graphene's ``operator<`` for types used
  in ``flat_set``/``flat_map`` keys.

Encodings (bitshares-fc ``fc/io/raw.hpp``, ``varint.hpp``): fixed-width
little-endian integers; ``unsigned_int`` as LEB128 varint; bool one byte;
string and ``vector<char>`` as varint length + bytes; vector as varint count
+ items; ``flat_set``/``flat_map`` the same, sorted and without duplicates
(graphene sorts them when it reads JSON, so the digest a client signs is of
the sorted form); optional as 0/1 + value; static_variant as varint tag +
value; ``time_point_sec`` as uint32.  JSON integers may be numbers or
decimal strings (wire-contract.md section 3); ``vector<char>`` and hashes are
hex strings.
"""

import struct

from nodeapi.protocol.errors import (
    IntegerOutOfRange, InvalidField, InvalidHex, InvalidObjectId, ProtocolError, TruncatedData)
from nodeapi.protocol.ids import MAX_INSTANCE, ObjectId
from nodeapi.protocol.keys import address_bytes, public_key_bytes, public_key_str, ripemd160
from nodeapi.protocol.keys import b58encode
from nodeapi.protocol.times import format_time, parse_time

_MISSING = object()


def to_int(value, what: str = "value") -> int:
    """A JSON integer (number, integral float or decimal string) as int;
    raises :class:`InvalidField`."""
    if type(value) is int:
        return value
    if isinstance(value, str):
        body = value[1:] if value[:1] == "-" else value
        if body.isascii() and body.isdigit():
            return int(value)
    elif isinstance(value, float) and value.is_integer():
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


def _need(data: bytes, pos: int, n: int) -> int:
    end = pos + n
    if end > len(data):
        raise TruncatedData(f"Binary data ends at byte {len(data)}, needed {end}")
    return end


class Int:
    """Fixed-width integer (``int8``..``uint64``, ``share_type`` = int64)."""

    default = None

    def __init__(self, bits: int, signed: bool) -> None:
        self.name = ("int" if signed else "uint") + str(bits)
        code = {8: "b", 16: "h", 32: "i", 64: "q"}[bits]
        self._struct = struct.Struct("<" + (code if signed else code.upper()))
        self.lo = -(1 << (bits - 1)) if signed else 0
        self.hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1

    def pack(self, value, out, prefix=None) -> None:
        v = value if type(value) is int else to_int(value, self.name)
        if not self.lo <= v <= self.hi:
            raise IntegerOutOfRange(f"{v} is out of range for {self.name}")
        out += self._struct.pack(v)

    def unpack(self, data, pos, prefix=None):
        end = _need(data, pos, self._struct.size)
        return self._struct.unpack_from(data, pos)[0], end

    def sort_key(self, value):
        return to_int(value, self.name)


class VarInt:
    """``unsigned_int``: 32-bit value as LEB128 varint."""

    name = "unsigned_int"
    default = None

    def pack(self, value, out, prefix=None) -> None:
        v = value if type(value) is int else to_int(value, self.name)
        if not 0 <= v <= 0xFFFFFFFF:
            raise IntegerOutOfRange(f"{v} is out of range for unsigned_int")
        pack_varint(v, out)

    def unpack(self, data, pos, prefix=None):
        return unpack_varint(data, pos)

    def sort_key(self, value):
        return to_int(value, self.name)


class Bool:
    """bool: one byte, 0 or 1 (JSON true/false; 0/1 and "true"/"false"
    accepted like fc's ``variant::as_bool``).  ``default`` makes the field
    optional in JSON (for fields added to graphene later)."""

    name = "bool"

    def __init__(self, default: bool | None = None) -> None:
        self.default = None if default is None else bytes([default])

    def pack(self, value, out, prefix=None) -> None:
        if value is True or value is False:
            out.append(1 if value else 0)
        elif value in (0, 1, "true", "false") and type(value) in (int, str):
            out.append(1 if value in (1, "true") else 0)
        else:
            raise InvalidField(f"bool: expected true or false, got {value!r}")

    def unpack(self, data, pos, prefix=None):
        _need(data, pos, 1)
        if data[pos] > 1:
            raise InvalidField(f"bool byte {data[pos]} is neither 0 nor 1")
        return data[pos] == 1, pos + 1


class String:
    """string: varint length + UTF-8 bytes (invalid UTF-8 read back with
    replacement characters)."""

    name = "string"
    default = None

    def pack(self, value, out, prefix=None) -> None:
        if not isinstance(value, str):
            raise InvalidField(f"string: expected a string, got {value!r}")
        raw = value.encode("utf-8")
        pack_varint(len(raw), out)
        out += raw

    def unpack(self, data, pos, prefix=None):
        n, pos = unpack_varint(data, pos)
        end = _need(data, pos, n)
        return bytes(data[pos:end]).decode("utf-8", "replace"), end


class Bytes:
    """``vector<char>``: varint length + bytes; JSON hex."""

    name = "bytes"
    default = b"\x00"

    def pack(self, value, out, prefix=None) -> None:
        raw = from_hex(value, self.name)
        pack_varint(len(raw), out)
        out += raw

    def unpack(self, data, pos, prefix=None):
        n, pos = unpack_varint(data, pos)
        end = _need(data, pos, n)
        return bytes(data[pos:end]).hex(), end


class FixedBytes:
    """Fixed-size bytes (ripemd160 = 20, sha256 = 32, signature = 65); JSON hex."""

    default = None

    def __init__(self, size: int, name: str) -> None:
        self.size = size
        self.name = name

    def pack(self, value, out, prefix=None) -> None:
        raw = from_hex(value, self.name)
        if len(raw) != self.size:
            raise InvalidHex(f"{self.name}: expected {self.size} bytes of hex, got {len(raw)}")
        out += raw

    def unpack(self, data, pos, prefix=None):
        end = _need(data, pos, self.size)
        return bytes(data[pos:end]).hex(), end

    def sort_key(self, value):
        return from_hex(value, self.name)


class TimePointSec:
    """``time_point_sec``: uint32 seconds; JSON ``YYYY-MM-DDTHH:MM:SS``.
    Times outside 1970..2106 wrap modulo 2**32 like fc's
    ``time_point_sec(uint32_t)`` conversion."""

    name = "time_point_sec"
    default = None

    def pack(self, value, out, prefix=None) -> None:
        out += struct.pack("<I", parse_time(value) & 0xFFFFFFFF)

    def unpack(self, data, pos, prefix=None):
        end = _need(data, pos, 4)
        return format_time(struct.unpack_from("<I", data, pos)[0]), end


class ObjectIdType:
    """A typed id (``account_id_type`` = 1.2.x, ...): varint instance."""

    default = None

    def __init__(self, space: int, type_: int) -> None:
        self.name = f"{space}.{type_}.x"
        self._prefix = f"{space}.{type_}."
        self._plen = len(self._prefix)

    def instance(self, value) -> int:
        """Instance number of an id string of this type; raises
        :class:`InvalidObjectId`."""
        if isinstance(value, str) and value.startswith(self._prefix):
            rest = value[self._plen:]
            if rest.isascii() and rest.isdigit():
                n = int(rest)
                if n <= MAX_INSTANCE:
                    return n
        raise InvalidObjectId(f"Invalid object id {value!r}: expected an id of type {self.name}")

    def pack(self, value, out, prefix=None) -> None:
        pack_varint(self.instance(value), out)

    def unpack(self, data, pos, prefix=None):
        n, pos = unpack_varint(data, pos)
        return self._prefix + str(n), pos

    sort_key = instance


class AnyObjectId:
    """``object_id_type``: uint64 ``space << 56 | type << 48 | instance``."""

    name = "object_id_type"
    default = None

    def pack(self, value, out, prefix=None) -> None:
        out += struct.pack("<Q", ObjectId.parse(value).to_int())

    def unpack(self, data, pos, prefix=None):
        end = _need(data, pos, 8)
        return str(ObjectId.from_int(struct.unpack_from("<Q", data, pos)[0])), end

    def sort_key(self, value):
        return ObjectId.parse(value).to_int()


class PublicKeyType:
    """``public_key_type``: 33 bytes; JSON ``PREFIX`` + base58."""

    name = "public_key"
    default = None

    def pack(self, value, out, prefix=None) -> None:
        out += public_key_bytes(value, prefix)

    def unpack(self, data, pos, prefix=None):
        end = _need(data, pos, 33)
        return public_key_str(bytes(data[pos:end]), prefix or "BTS"), end

    def sort_key(self, value):
        return public_key_bytes(value, None)


class AddressType:
    """``address``: 20 bytes; JSON ``PREFIX`` + base58 with checksum."""

    name = "address"
    default = None

    def pack(self, value, out, prefix=None) -> None:
        out += address_bytes(value, prefix)

    def unpack(self, data, pos, prefix=None):
        end = _need(data, pos, 20)
        raw = bytes(data[pos:end])
        return (prefix or "BTS") + b58encode(raw + ripemd160(raw)[:4]), end

    def sort_key(self, value):
        return address_bytes(value, None)


class VoteId:
    """``vote_id_type``: uint32 ``instance << 8 | type``; JSON ``"type:instance"``."""

    name = "vote_id"
    default = None

    def content(self, value) -> int:
        if isinstance(value, str) and value.count(":") == 1:
            kind, _, inst = value.partition(":")
            if kind.isascii() and kind.isdigit() and inst.isascii() and inst.isdigit():
                kind, inst = int(kind), int(inst)
                if kind <= 0xFF and inst <= 0xFFFFFF:
                    return inst << 8 | kind
                raise IntegerOutOfRange(f"vote id {value!r}: type or instance out of range")
        raise InvalidField(f"vote id: expected \"type:instance\", got {value!r}")

    def pack(self, value, out, prefix=None) -> None:
        out += struct.pack("<I", self.content(value))

    def unpack(self, data, pos, prefix=None):
        end = _need(data, pos, 4)
        v = struct.unpack_from("<I", data, pos)[0]
        return f"{v & 0xFF}:{v >> 8}", end

    sort_key = content


class Optional:
    """``optional<T>``: 0, or 1 + value; JSON null / absent field."""

    default = b"\x00"

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = f"optional<{inner.name}>"

    def pack(self, value, out, prefix=None) -> None:
        if value is None:
            out.append(0)
        else:
            out.append(1)
            self.inner.pack(value, out, prefix)

    def unpack(self, data, pos, prefix=None):
        _need(data, pos, 1)
        if data[pos] == 0:
            return None, pos + 1
        if data[pos] != 1:
            raise InvalidField(f"{self.name}: flag byte {data[pos]} is neither 0 nor 1")
        return self.inner.unpack(data, pos + 1, prefix)


def _as_list(value, name: str) -> list:
    if not isinstance(value, (list, tuple)):
        raise InvalidField(f"{name}: expected an array, got {type(value).__name__}")
    return value


class Vector:
    """``vector<T>``: varint count + items; JSON array."""

    default = b"\x00"

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = f"vector<{inner.name}>"

    def pack(self, value, out, prefix=None) -> None:
        items = _as_list(value, self.name)
        pack_varint(len(items), out)
        inner = self.inner
        for item in items:
            inner.pack(item, out, prefix)

    def unpack(self, data, pos, prefix=None):
        n, pos = unpack_varint(data, pos)
        items = []
        inner = self.inner
        for _ in range(n):
            item, pos = inner.unpack(data, pos, prefix)
            items.append(item)
        return items, pos


class FlatSet(Vector):
    """``flat_set<T>``: a vector sorted by T's order, duplicates dropped."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.name = f"flat_set<{inner.name}>"

    def pack(self, value, out, prefix=None) -> None:
        items = _as_list(value, self.name)
        if len(items) > 1:
            seen, ordered = set(), []
            for key, item in sorted(((self.inner.sort_key(i), i) for i in items),
                                    key=lambda p: p[0]):
                if key not in seen:
                    seen.add(key)
                    ordered.append(item)
            items = ordered
        Vector.pack(self, items, out, prefix)


class FlatMap:
    """``flat_map<K, V>``: JSON array of ``[key, value]`` pairs, sorted by
    key, later duplicates dropped (graphene keeps the first)."""

    default = b"\x00"

    def __init__(self, key, value) -> None:
        self.key = key
        self.value = value
        self.name = f"flat_map<{key.name},{value.name}>"

    def pack(self, value, out, prefix=None) -> None:
        pairs = _as_list(value, self.name)
        keyed, seen = [], set()
        for pair in pairs:
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise InvalidField(f"{self.name}: expected [key, value] pairs, got {pair!r}")
            k = self.key.sort_key(pair[0])
            if k not in seen:
                seen.add(k)
                keyed.append((k, pair))
        keyed.sort(key=lambda p: p[0])
        pack_varint(len(keyed), out)
        for _, pair in keyed:
            self.key.pack(pair[0], out, prefix)
            self.value.pack(pair[1], out, prefix)

    def unpack(self, data, pos, prefix=None):
        n, pos = unpack_varint(data, pos)
        pairs = []
        for _ in range(n):
            k, pos = self.key.unpack(data, pos, prefix)
            v, pos = self.value.unpack(data, pos, prefix)
            pairs.append([k, v])
        return pairs, pos


class Struct:
    """A reflected struct: its fields in ``FC_REFLECT`` order; JSON object.
    Absent/null fields take the type's default (optional, containers,
    extensions) or raise :class:`InvalidField`; unknown keys are ignored
    (graphene does the same)."""

    default = None

    def __init__(self, name: str, fields: list) -> None:
        self.name = name
        self.fields = tuple(fields)

    def pack(self, value, out, prefix=None) -> None:
        if type(value) is not dict:
            raise InvalidField(f"{self.name}: expected an object, got {type(value).__name__}")
        for fname, ftype in self.fields:
            v = value.get(fname)
            try:
                if v is None:
                    if ftype.default is None:
                        raise InvalidField(f"missing field {fname!r}")
                    out += ftype.default
                else:
                    ftype.pack(v, out, prefix)
            except ProtocolError as exc:
                raise type(exc)(f"{self.name}.{fname}: {exc.message}") from None

    def unpack(self, data, pos, prefix=None):
        obj = {}
        for fname, ftype in self.fields:
            v, pos = ftype.unpack(data, pos, prefix)
            if v is not None or not isinstance(ftype, Optional):
                obj[fname] = v
        return obj, pos


class Extension:
    """``extension<T>``: varint count of present fields, then per present
    field its varint index (reflection order) and value; JSON object of the
    present fields (``[]`` read as empty, like fc)."""

    default = b"\x00"

    def __init__(self, name: str, fields: list) -> None:
        self.name = f"extension<{name}>"
        self.fields = tuple(fields)

    def pack(self, value, out, prefix=None) -> None:
        if isinstance(value, (list, tuple)) and not value:
            out.append(0)
            return
        if type(value) is not dict:
            raise InvalidField(f"{self.name}: expected an object, got {type(value).__name__}")
        present = [(i, f, t) for i, (f, t) in enumerate(self.fields) if value.get(f) is not None]
        pack_varint(len(present), out)
        for index, fname, ftype in present:
            pack_varint(index, out)
            try:
                ftype.pack(value[fname], out, prefix)
            except ProtocolError as exc:
                raise type(exc)(f"{self.name}.{fname}: {exc.message}") from None

    def unpack(self, data, pos, prefix=None):
        count, pos = unpack_varint(data, pos)
        obj, last = {}, -1
        for _ in range(count):
            index, pos = unpack_varint(data, pos)
            if not last < index < len(self.fields):
                raise InvalidField(f"{self.name}: unknown or unordered extension index {index}")
            last = index
            fname, ftype = self.fields[index]
            obj[fname], pos = ftype.unpack(data, pos, prefix)
        return obj, pos


class StaticVariant:
    """``static_variant<T0, T1, ...>``: varint tag + value; JSON
    ``[tag, value]`` (a type name is accepted as tag, as by fc)."""

    default = None

    def __init__(self, name: str, types: list, names: list | None = None) -> None:
        self.name = name
        self.types = tuple(types)
        self.by_name = {n: i for i, n in enumerate(names or ())}

    def tag(self, raw) -> int:
        if isinstance(raw, str) and raw in self.by_name:
            return self.by_name[raw]
        tag = to_int(raw, self.name + " tag")
        if not 0 <= tag < len(self.types):
            raise InvalidField(f"{self.name}: unknown tag {raw!r}")
        return tag

    def pack(self, value, out, prefix=None) -> None:
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise InvalidField(f"{self.name}: expected [tag, value], got {value!r}")
        tag = self.tag(value[0])
        pack_varint(tag, out)
        self.types[tag].pack(value[1], out, prefix)

    def unpack(self, data, pos, prefix=None):
        tag, pos = unpack_varint(data, pos)
        if tag >= len(self.types):
            raise InvalidField(f"{self.name}: unknown tag {tag}")
        value, pos = self.types[tag].unpack(data, pos, prefix)
        return [tag, value], pos

    def sort_key(self, value):
        return self.tag(value[0])


class Void:
    """``void_t`` / ``void_result`` / empty structs: no bytes; JSON ``{}``."""

    name = "void"
    default = b""

    def pack(self, value, out, prefix=None) -> None:
        return None

    def unpack(self, data, pos, prefix=None):
        return {}, pos


def pack(type_, value, prefix: str | None = None) -> bytes:
    """Serialize ``value`` as ``type_``."""
    out = bytearray()
    type_.pack(value, out, prefix)
    return bytes(out)


def unpack(type_, data: bytes, prefix: str = "BTS", pos: int = 0, exact: bool = True):
    """Read a ``type_`` value from ``data`` at ``pos``; with ``exact`` the
    data must end there (:class:`TruncatedData` otherwise)."""
    value, end = type_.unpack(data, pos, prefix)
    if exact and end != len(data):
        raise TruncatedData(f"{len(data) - end} bytes left after the value")
    return value


# Commonly used instances.
UINT8, UINT16, UINT32, UINT64 = Int(8, False), Int(16, False), Int(32, False), Int(64, False)
INT64 = Int(64, True)
VARINT, BOOL, STRING, BYTES = VarInt(), Bool(), String(), Bytes()
TIME = TimePointSec()
PUBLIC_KEY, ADDRESS, VOTE_ID, OBJECT_ID = PublicKeyType(), AddressType(), VoteId(), AnyObjectId()
VOID = Void()
RIPEMD160, SHA256 = FixedBytes(20, "ripemd160"), FixedBytes(32, "sha256")
SIGNATURE = FixedBytes(65, "signature")
FUTURE_EXTENSIONS = FlatSet(StaticVariant("future_extensions", [VOID], ["void_t"]))
