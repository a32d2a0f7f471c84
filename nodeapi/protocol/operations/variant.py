"""The ``operation`` static_variant: tag parsing and (de)serialization.

An operation on the wire is ``[type, {fields}]``; in binary it is the
static_variant tag (varint type number) followed by the struct
(bitshares-core ``libraries/protocol/include/graphene/protocol/operations.hpp``,
bitshares-fc ``fc/static_variant.hpp``).  The structs by type number are
:data:`nodeapi.protocol.operations.table.OPERATIONS`: the type is
recursive (proposal_create carries operations), so the families use
:data:`OPERATION` before the table exists, and the table gives it its
structs (:meth:`OperationType.define`) once it has joined them; importing
the package does both.
"""

from nodeapi.protocol.errors import InvalidField, ProtocolError, UnknownOperation
from nodeapi.protocol.serialize import pack_varint, to_int, unpack, unpack_varint

def operation_type(raw) -> int:
    """The type number of an operation's tag, read like bitshares-fc's
    static_variant ``from_variant`` (``ar[0].as_uint64()``): a JSON
    integer, an integral float (``0.0``) or a decimal string (``"0"``).
    A name (``"transfer"``) is refused: fc has no name lookup and
    bitshares-core answers a bad cast for it.

    :raises UnknownOperation: the tag is of another kind, or names no
        operation of bitshares-core 7.x (0..77); the message names the value.
    """
    if type(raw) is not int:
        try:
            raw = to_int(raw, "operation type")
        except ProtocolError:
            raise UnknownOperation(
                f"Operation type {raw!r} is not an integer (graphene static_variant tag: "
                "a number or a decimal string)") from None
    structs = OPERATION.structs
    if raw not in structs:
        raise UnknownOperation(f"Operation type {raw!r} is not supported "
                               f"(bitshares-core 7.x has 0..{len(structs) - 1})")
    return raw


def operation_name(number: int) -> str:
    """``transfer`` for 0 ...; raises :class:`UnknownOperation`."""
    number = operation_type(number)
    return OPERATION.names[number]


class OperationType:
    """The ``operation`` static_variant as a wire type (vectors of
    operations in transactions, proposal_create's ``op_wrapper``).

    :ivar structs: type number -> struct; :ivar names: type number -> name
        (``transfer``): both empty until the table calls :meth:`define`
        (module docstring)."""

    name = "operation"

    def __init__(self) -> None:
        self.structs: dict = {}
        self.names: dict = {}

    def define(self, operations: dict) -> None:
        """Give the variant its alternatives, ``{type number: (name,
        struct)}`` (once).

        :raises RuntimeError: the alternatives were given already."""
        if self.structs:
            raise RuntimeError("operation: alternatives already defined")
        self.names = {number: name for number, (name, _struct) in operations.items()}
        self.structs = {number: struct for number, (_name, struct) in operations.items()}

    @property
    def default(self) -> bytes:
        """A default-constructed ``operation``: alternative 0 (a transfer)
        with its default fields."""
        return b"\x00" + self.structs[0].default

    def pack(self, value, out, prefix=None) -> None:
        """Append the operation ``[type, {fields}]``: the varint type, then its
        struct.

        :raises InvalidField: not a two-element array.
        :raises UnknownOperation: the type is not an operation
            (:func:`operation_type`).
        :raises ProtocolError: the struct's error (the field path in its
            message)."""
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise InvalidField(f"operation: expected [type, {{...}}], got {str(value)[:80]}")
        number = operation_type(value[0])
        pack_varint(number, out)
        self.structs[number].pack(value[1], out, prefix)

    def unpack(self, data, pos, prefix=None):
        """``([type, {fields}], new pos)``.

        :raises UnknownOperation: a type number with no operation; the struct's
            errors."""
        number, pos = unpack_varint(data, pos)
        struct = self.structs.get(number)
        if struct is None:
            raise UnknownOperation(f"Operation type {number} is not supported")
        body, pos = struct.unpack(data, pos, prefix)
        return [number, body], pos


OPERATION = OperationType()


def serialize_operation(op, prefix: str | None = None) -> bytes:
    """fc bytes of ``[type, {...}]`` (varint type + struct).  ``prefix``
    enforces the key prefix of public keys and addresses.  Raises a
    :class:`~nodeapi.errors.ProtocolError` subclass (UnknownOperation,
    InvalidField, IntegerOutOfRange, InvalidObjectId, WrongKeyPrefix, ...)
    whose message names the field path."""
    out = bytearray()
    OPERATION.pack(op, out, prefix)
    return bytes(out)


def serialize_operation_body(op, prefix: str | None = None) -> bytes:
    """The operation's struct bytes without the type tag (graphene's
    ``fc::raw::pack_size(op)`` for fees charges these)."""
    if not isinstance(op, (list, tuple)) or len(op) != 2:
        raise InvalidField(f"operation: expected [type, {{...}}], got {str(op)[:80]}")
    out = bytearray()
    number = operation_type(op[0])
    OPERATION.structs[number].pack(op[1], out, prefix)
    return bytes(out)


def deserialize_operation(data: bytes, prefix: str) -> list:
    """Inverse of :func:`serialize_operation`: ``[type, {...}]`` with keys
    written with ``prefix``; raises :class:`TruncatedData` when bytes are
    missing or left over."""
    return unpack(OPERATION, data, prefix)


def canonical_operation(op, prefix: str) -> list:
    """The operation as graphene holds it after ``from_variant``: the JSON
    read back from its bytes (integer tag and integers, sorted flat sets,
    extensions as objects, absent optionals dropped).  Rules that look at
    the JSON (fees, authorities, evaluators) must see this form, never a
    numeric-string tag.  ``prefix`` is the chain's key prefix (enforced on
    the keys given, written on those read back).  Raises what
    :func:`serialize_operation` raises."""
    return deserialize_operation(serialize_operation(op, prefix), prefix)
