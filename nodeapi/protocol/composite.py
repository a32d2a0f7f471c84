"""fc composite types over the primitives of :mod:`nodeapi.protocol.serialize`.

``optional<T>``, ``vector<T>``, ``flat_set<T>``, ``flat_map<K, V>``,
reflected structs (``FC_REFLECT``), ``extension<T>`` and
``static_variant<...>``: each is built from inner wire types and follows the
same protocol as the primitives (``pack``/``unpack``/``default``/
``sort_key``, see :mod:`nodeapi.protocol.serialize`).

Encodings (bitshares-fc ``fc/io/raw.hpp``, ``fc/static_variant.hpp``,
``graphene/protocol/ext.hpp``): vector as varint count + items;
``flat_set``/``flat_map`` the same, sorted by the key type's
``operator<`` order and without duplicates (graphene sorts them when it
reads JSON, so the digest a client signs is of the sorted form); optional as
0/1 + value; static_variant as varint tag + value; extension as varint count
of present fields, each as varint index + value.
"""

import copy

from nodeapi.protocol.errors import BadCast, InvalidField, ProtocolError
from nodeapi.protocol.serialize import VOID, need_bytes, pack_varint, to_int, unpack_varint


class Optional:
    """``optional<T>``: 0, or 1 + value; JSON null / absent field."""

    default = b"\x00"

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = f"optional<{inner.name}>"

    def pack(self, value, out, prefix=None) -> None:
        """Append 0 for None, else 1 and ``value`` as the inner type
        (fc/io/raw.hpp ``pack`` of an ``optional``); the inner type's
        errors."""
        if value is None:
            out.append(0)
        else:
            out.append(1)
            self.inner.pack(value, out, prefix)

    def unpack(self, data, pos, prefix=None):
        """``(None, pos + 1)`` after a 0 flag; after a 1 flag the inner value
        and its end.

        :raises TruncatedData: no flag byte (or the inner value is cut).
        :raises InvalidField: a flag other than 0 and 1."""
        need_bytes(data, pos, 1)
        if data[pos] == 0:
            return None, pos + 1
        if data[pos] != 1:
            raise InvalidField(f"{self.name}: flag byte {data[pos]} is neither 0 nor 1")
        return self.inner.unpack(data, pos + 1, prefix)


def located(exc: ProtocolError, where: str) -> ProtocolError:
    """``exc`` with its text prefixed by the field path ``where``
    (``transfer_operation.amount: ...``), so a client learns which field
    does not serialize; fc's own exceptions (:class:`BadCast`) pass
    unchanged, as bitshares-core sends them."""
    if isinstance(exc, BadCast):
        return exc
    return type(exc)(f"{where}: {exc.message}")


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
        """Append the varint count of the array ``value``, then each item as
        the inner type.

        :raises InvalidField: not an array; the items' errors."""
        items = _as_list(value, self.name)
        pack_varint(len(items), out)
        inner = self.inner
        for item in items:
            inner.pack(item, out, prefix)

    def unpack(self, data, pos, prefix=None):
        """``(list, new pos)``: a varint count, then that many items of the
        inner type; the varint's and the items' errors (:class:`TruncatedData`
        when the data ends first)."""
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
        """Append the array ``value`` sorted by the inner type's ``sort_key``,
        an item whose key equals an earlier one's dropped (the first kept, as
        inserting into graphene's ``flat_set`` keeps it), as
        :meth:`Vector.pack`.

        :raises InvalidField: not an array; the items' errors."""
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
        """Append the ``[key, value]`` pairs of ``value`` sorted by the key
        type's ``sort_key``, a repeated key's later pairs dropped: a varint
        count, then each key and value.

        :raises InvalidField: not an array of two-element pairs; the keys' and
            values' errors."""
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
        """``([[key, value], ...], new pos)`` in the order stored; the
        varint's, keys' and values' errors."""
        n, pos = unpack_varint(data, pos)
        pairs = []
        for _ in range(n):
            k, pos = self.key.unpack(data, pos, prefix)
            v, pos = self.value.unpack(data, pos, prefix)
            pairs.append([k, v])
        return pairs, pos


class Struct:
    """A reflected struct: its fields in ``FC_REFLECT`` order; JSON object.
    An absent or null field keeps its type's default-constructed value
    (``ftype.default``): bitshares-fc's reflected ``from_variant``
    (fc/reflect/variant.hpp ``from_variant_visitor``) sets only the members
    the object has, so a ``committee_member_update_global_parameters``
    carrying only ``current_fees`` is read, and so is a transfer without
    ``extensions``; what the defaults break (a zero amount, a null
    account) is refused by the operation's checks.  Unknown keys are
    ignored (graphene does the same)."""

    def __init__(self, name: str, fields: list) -> None:
        self.name = name
        self.fields = tuple(fields)
        self._default = None

    @property
    def default(self) -> bytes:
        """The bytes of the default-constructed struct: its fields'
        defaults in order (computed on first use: operation structs refer
        to each other)."""
        if self._default is None:
            self._default = b"".join(ftype.default for _f, ftype in self.fields)
        return self._default

    @default.setter
    def default(self, value: bytes) -> None:
        """Replace the default bytes (:func:`Initialized` gives a copied struct
        member the bytes of its C++ initializer)."""
        self._default = value

    def pack(self, value, out, prefix=None) -> None:
        """Append the fields of the object ``value`` in ``FC_REFLECT`` order,
        an absent or null field as its type's default (class docstring).

        :raises InvalidField: ``value`` not an object.
        :raises ProtocolError: a field's error, its message prefixed with
            ``<struct>.<field>`` (:func:`located`)."""
        if type(value) is not dict and not isinstance(value, dict):
            raise InvalidField(f"{self.name}: expected an object, got {type(value).__name__}")
        for fname, ftype in self.fields:
            v = value.get(fname)
            try:
                if v is None:
                    out += ftype.default
                else:
                    ftype.pack(v, out, prefix)
            except ProtocolError as exc:
                raise located(exc, f"{self.name}.{fname}") from None

    def unpack(self, data, pos, prefix=None):
        """``(dict, new pos)`` of the fields in order; an unset optional field
        is left out, as fc's reflected ``to_variant`` (fc/reflect/variant.hpp)
        leaves it out.  The fields' errors."""
        obj = {}
        for fname, ftype in self.fields:
            v, pos = ftype.unpack(data, pos, prefix)
            if v is not None or not isinstance(ftype, Optional):
                obj[fname] = v
        return obj, pos


def Initialized(inner, value):  # noqa: N802 (used like the wire type classes)
    """A struct member with a C++ default member initializer
    (``uint8_t block_interval = GRAPHENE_DEFAULT_BLOCK_INTERVAL;``): a copy
    of the wire type ``inner`` whose ``default`` is the bytes of ``value``,
    the value a member absent from the JSON keeps (fc/reflect/variant.hpp
    sets only the members present).  It is of ``inner``'s class, so what
    dispatches on the type (custom authority restrictions) sees ``inner``."""
    out = bytearray()
    inner.pack(value, out)
    member = copy.copy(inner)
    member.default = bytes(out)
    return member


class Extension:
    """``extension<T>``: varint count of present fields, then per present
    field its varint index (reflection order) and value; JSON object of the
    present fields.  As graphene's ``from_variant`` (graphene/protocol/ext.hpp):
    ``[]`` and null read as empty, a null member as absent, and an unknown
    member or a non-empty array is an error (:class:`InvalidField`)."""

    default = b"\x00"

    def __init__(self, name: str, fields: list) -> None:
        self.name = f"extension<{name}>"
        self.fields = tuple(fields)
        self._names = tuple(f for f, _t in self.fields)

    def pack(self, value, out, prefix=None) -> None:
        """Append the present (non-null) fields of ``value`` as the class
        docstring says; an empty array is the empty extension.

        :raises InvalidField: not an object (or a non-empty array), or an
            unknown member.
        :raises ProtocolError: a field's error, its message prefixed with
            ``extension<T>.<field>`` (:func:`located`)."""
        if isinstance(value, (list, tuple)) and not value:
            out.append(0)
            return
        if type(value) is not dict and not isinstance(value, dict):
            raise InvalidField(f"{self.name}: expected an object, got {str(value)[:80]}")
        unknown = value.keys() - self._names
        if unknown:
            raise InvalidField(f"{self.name}: unknown extension {sorted(unknown)[0]!r} "
                               f"(known: {', '.join(self._names)})")
        present = [(i, f, t) for i, (f, t) in enumerate(self.fields) if value.get(f) is not None]
        pack_varint(len(present), out)
        for index, fname, ftype in present:
            pack_varint(index, out)
            try:
                ftype.pack(value[fname], out, prefix)
            except ProtocolError as exc:
                raise located(exc, f"{self.name}.{fname}") from None

    def unpack(self, data, pos, prefix=None):
        """``(dict of the present fields, new pos)``.

        :raises InvalidField: a field index out of range, or not greater than
            the one before (graphene/protocol/ext.hpp reads the fields in
            reflection order, each once)."""
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
    ``[tag, value]``.  The tag is read like bitshares-fc's ``from_variant``
    (fc/static_variant.hpp: ``ar[0].as_uint64()``): an integer, an integral
    float or a decimal string; a type name is refused (fc has no name
    lookup).  ``names`` only label error messages.  The default is
    alternative 0 default-constructed (``fc::static_variant()``)."""

    def __init__(self, name: str, types: list, names: list | None = None) -> None:
        self.name = name
        self.types = tuple(types)
        self.names = tuple(names or ())

    @property
    def default(self) -> bytes:
        """Tag 0 and the default of alternative 0."""
        return b"\x00" + self.types[0].default

    def tag(self, raw) -> int:
        """The alternative number of the JSON tag ``raw``, read as the class
        docstring says.

        :raises InvalidField: not an integer, or no such alternative."""
        tag = raw if type(raw) is int else to_int(raw, self.name + " tag")
        if not 0 <= tag < len(self.types):
            raise InvalidField(f"{self.name}: unknown tag {raw!r} (0..{len(self.types) - 1})")
        return tag

    def pack(self, value, out, prefix=None) -> None:
        """Append ``[tag, value]``: the varint tag, then ``value`` as that
        alternative.

        :raises InvalidField: not a two-element array, or a bad tag
            (:meth:`tag`).
        :raises ProtocolError: the alternative's error, its message prefixed
            with the alternative's name (:func:`located`)."""
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise InvalidField(f"{self.name}: expected [tag, value], got {str(value)[:80]}")
        tag = self.tag(value[0])
        pack_varint(tag, out)
        try:
            self.types[tag].pack(value[1], out, prefix)
        except ProtocolError as exc:
            label = self.names[tag] if tag < len(self.names) else str(tag)
            raise located(exc, label) from None

    def unpack(self, data, pos, prefix=None):
        """``([tag, value], new pos)``.

        :raises InvalidField: a tag with no alternative; the alternative's
            errors."""
        tag, pos = unpack_varint(data, pos)
        if tag >= len(self.types):
            raise InvalidField(f"{self.name}: unknown tag {tag}")
        value, pos = self.types[tag].unpack(data, pos, prefix)
        return [tag, value], pos

    def sort_key(self, value):
        """The tag alone: fc's ``static_variant`` ``operator<`` compares
        ``which()`` only (fc/static_variant.hpp), so a ``flat_set`` of them
        keeps one value per tag.

        :raises InvalidField: not ``[tag, value]``, or a bad tag."""
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise InvalidField(f"{self.name}: expected [tag, value], got {str(value)[:80]}")
        return self.tag(value[0])


class DeclaredStaticVariant(StaticVariant):
    """A :class:`StaticVariant` declared before its alternatives: the type of
    a recursive declaration (``fee_parameters``: every operation's fee
    parameters, inside the chain parameters an operation carries).  The
    module that joins the alternatives calls :meth:`define` once; until
    then the variant has no alternative and refuses every tag."""

    def __init__(self, name: str) -> None:
        super().__init__(name, [])

    def define(self, types: list, names: list) -> None:
        """Give the variant its alternatives (once).

        :raises RuntimeError: the alternatives were given already."""
        if self.types:
            raise RuntimeError(f"{self.name}: alternatives already defined")
        self.types, self.names = tuple(types), tuple(names)


class Pair:
    """``std::pair<A, B>``: A then B; JSON ``[a, b]`` (fc/variant.hpp)."""

    def __init__(self, first, second) -> None:
        self.first = first
        self.second = second
        self.name = f"pair<{first.name},{second.name}>"

    @property
    def default(self) -> bytes:
        """Both members default-constructed."""
        return self.first.default + self.second.default

    def pack(self, value, out, prefix=None) -> None:
        """Append ``value[0]`` as the first type, then ``value[1]`` as the
        second.

        :raises InvalidField: not a two-element array; the members' errors."""
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise InvalidField(f"{self.name}: expected [first, second], got {str(value)[:80]}")
        self.first.pack(value[0], out, prefix)
        self.second.pack(value[1], out, prefix)

    def unpack(self, data, pos, prefix=None):
        """``([a, b], new pos)``; the members' errors."""
        a, pos = self.first.unpack(data, pos, prefix)
        b, pos = self.second.unpack(data, pos, prefix)
        return [a, b], pos


class FutureExtensions(FlatSet):
    """``extensions_type`` (``flat_set<static_variant<void_t>>``): read
    only from an array, as fc's ``from_variant`` of a ``flat_set`` reads it
    (``variant::get_array``); an object, ``{}`` included, is refused with
    fc's :class:`~nodeapi.protocol.errors.BadCast` ("Invalid cast from
    object_type to Array"), as bitshares-core refuses it.  (The
    ``extension<T>`` fields, such as account_create's, are objects:
    :class:`Extension`.)"""

    def pack(self, value, out, prefix=None) -> None:
        """Append the ``flat_set`` ``value`` (``[]`` in the usual case) as
        :meth:`FlatSet.pack`.

        :raises BadCast: ``value`` is not an array (class docstring).
        :raises InvalidField: a bad element (:meth:`StaticVariant.pack`)."""
        if type(value) is list and not value:  # the usual, empty, extensions
            out.append(0)
            return
        if not isinstance(value, (list, tuple)):
            raise BadCast(value)
        FlatSet.pack(self, value, out, prefix)


#: ``future_extensions`` (``flat_set<static_variant<void_t>>``): the
#: ``extensions`` field of most operations, transactions and blocks.
FUTURE_EXTENSIONS = FutureExtensions(StaticVariant("future_extensions", [VOID], ["void_t"]))
