"""Graphene object ids ``space.type.instance`` (``1.2.17``, ``2.9.0``).

Reference: bitshares-core ``graphene::db::object_id_type``: space and type
are 8-bit, the instance 48-bit; the 64-bit packed form is
``space << 56 | type << 48 | instance`` (used by ``object_id_type`` on the
wire); typed ids (``account_id_type`` ...) serialize only the instance as a
varint (see :mod:`nodeapi.protocol.serialize`).  Ids order by
(space, type, instance), like graphene.
"""

import attr

from nodeapi.protocol.errors import InvalidObjectId

MAX_INSTANCE = (1 << 48) - 1


def _part(text: str, whole: str) -> int:
    if not text or len(text) > 20 or not text.isascii() or not text.isdigit():
        raise InvalidObjectId(f"Invalid object id {whole!r}: expected space.type.instance, "
                              "e.g. 1.2.17")
    return int(text)


@attr.s(frozen=True, slots=True, order=True, auto_attribs=True, repr=False)
class ObjectId:
    """An object id; ``str(oid)`` gives the wire form ``"1.2.17"``.

    :ivar space: 0..255 (1 = protocol objects, 2 = implementation objects).
    :ivar type: 0..255 (e.g. 2 = account in space 1).
    :ivar instance: 0..2**48-1.
    """

    space: int
    type: int
    instance: int

    def __attrs_post_init__(self) -> None:
        if not (0 <= self.space <= 255 and 0 <= self.type <= 255
                and 0 <= self.instance <= MAX_INSTANCE):
            raise InvalidObjectId(
                f"Invalid object id {self.space}.{self.type}.{self.instance}: space and "
                "type must be 0..255 and instance 0..2^48-1")

    @classmethod
    def parse(cls, text) -> "ObjectId":
        """Parse ``"1.2.17"``; raises :class:`InvalidObjectId` for anything
        else (not a string, not three decimal parts, parts out of range)."""
        if isinstance(text, ObjectId):
            return text
        if not isinstance(text, str):
            raise InvalidObjectId(f"Invalid object id {text!r}: expected a string like 1.2.17")
        parts = text.split(".")
        if len(parts) != 3:
            raise InvalidObjectId(f"Invalid object id {text!r}: expected space.type.instance, "
                                  "e.g. 1.2.17")
        return cls(_part(parts[0], text), _part(parts[1], text), _part(parts[2], text))

    @classmethod
    def from_int(cls, value: int) -> "ObjectId":
        """The id packed in a 64-bit ``object_id_type`` number."""
        if not 0 <= value < 1 << 64:
            raise InvalidObjectId(f"Invalid packed object id {value}")
        return cls(value >> 56, (value >> 48) & 0xFF, value & MAX_INSTANCE)

    def to_int(self) -> int:
        """64-bit ``object_id_type`` number: space << 56 | type << 48 | instance."""
        return self.space << 56 | self.type << 48 | self.instance

    def is_type(self, space: int, type_: int) -> bool:
        """True when this id is of ``space.type_``."""
        return self.space == space and self.type == type_

    def __str__(self) -> str:
        return f"{self.space}.{self.type}.{self.instance}"

    def __repr__(self) -> str:
        return f"ObjectId('{self}')"


def instance_of(text: str, space: int, type_: int) -> int:
    """Instance number of id string ``text`` that must be of type
    ``space.type_`` (e.g. ``instance_of("1.2.17", 1, 2) == 17``); raises
    :class:`InvalidObjectId` otherwise."""
    oid = ObjectId.parse(text)
    if oid.space != space or oid.type != type_:
        raise InvalidObjectId(f"Invalid object id {text!r}: expected an id of type "
                              f"{space}.{type_}.x")
    return oid.instance


def instance_number(object_id: str) -> int:
    """The instance of an object id string the chain wrote itself (``"1.2.17"``
    -> 17), without validation: ids from clients go through
    :meth:`ObjectId.parse`."""
    return int(object_id.rsplit(".", 1)[1])


def kind_and_instance(object_id: str) -> tuple[str, int]:
    """``"1.2.17"`` -> ``("1.2", 17)`` for an id the chain wrote itself,
    without validation (as :func:`instance_number`)."""
    kind, _, instance = object_id.rpartition(".")
    return kind, int(instance)
