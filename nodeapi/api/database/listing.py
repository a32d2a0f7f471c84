"""Paged lookups over one kind of chain object, shared by the database API
sections that list objects by a key and an id (liquidity pools, SameT funds,
credit offers and deals, tickets, HTLCs, withdraw permissions, ...).

Graphene reference: bitshares-core libraries/app/database_api_helper.hxx
``get_objects_by_x`` (an ``optional<uint32_t>`` limit defaulting to the
configured ``api-limit-*``, "limit can not be greater than N", an optional
start id, then the objects of an index ordered by ``(key..., id)`` from
``(key..., start)`` while the key matches) and the hand-written loops of the
same form in libraries/app/database_api.cpp.

The objects are read from the chain state by kind (``space.type``) in id
order, so a kind no operation of this chain creates yet answers ``[]`` from
the same lookup that will find its objects once they exist.
"""

from nodeapi.api.arguments import check_limit, id_key, typed_id
from nodeapi.api.base import fc_int
from nodeapi.errors import ApiError

#: The first id of any kind (graphene's default-constructed ``object_id``).
FIRST = (0, 0, 0)


def uint_argument(value, what: str) -> int:
    """``value`` as a non-negative integer (a numeric string is accepted,
    like fc's ``uint32_t`` from a variant, and so are a double and a
    boolean: :func:`nodeapi.api.base.fc_int`); raises :class:`ApiError`."""
    value = fc_int(value, what)
    if value < 0:
        raise ApiError(f"{what} must be a non-negative integer, got {value!r}")
    return value


def optional_limit(value, configured: int) -> int:
    """graphene's ``optional<uint32_t> limit``: ``configured`` (the
    function's ``api-limit-*``, a field of :class:`~nodeapi.node.ApiLimits`)
    when ``value`` is null, else ``value`` checked against it
    (:func:`~nodeapi.api.arguments.check_limit`)."""
    if value is None:
        return configured
    return check_limit(uint_argument(value, "limit"), configured)


def start_key(start_id, space_type: str, what: str = "start_id") -> tuple:
    """The sort key of an optional start id of kind ``space_type``
    (:data:`FIRST` when null)."""
    return FIRST if start_id is None else id_key(typed_id(start_id, space_type, what))


def field(obj: dict, path: str):
    """``obj``'s value at a dotted ``path`` (``"transfer.from"``), or None."""
    for part in path.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def objects_of_kind(state, space_type: str) -> list:
    """Every object of kind ``space_type`` (``"1.19"``) in id order."""
    objects = state.objects
    return [objects[oid] for oid in state.ids_of_type(space_type + ".")]


def matching(state, space_type: str, **keys) -> list:
    """Objects of ``space_type`` whose fields (dotted paths, ``__`` for
    ``.`` in the keyword) equal the given values, in id order (graphene's
    ``equal_range`` over an index ``(key..., id)``)."""
    wanted = [(name.replace("__", "."), value) for name, value in keys.items()]
    return [obj for obj in objects_of_kind(state, space_type)
            if all(field(obj, path) == value for path, value in wanted)]


def page(objects: list, start: tuple, limit: int) -> list:
    """At most ``limit`` of ``objects`` (id order) whose id is >= ``start``."""
    out = []
    for obj in objects:
        if len(out) >= limit:
            break
        if id_key(obj["id"]) >= start:
            out.append(obj)
    return out
