"""Restriction predicates of custom active authorities (BSIP 40).

Reference: bitshares-core libraries/protocol/restriction.cpp
(``restriction_count``) and custom_authorities/restriction_predicate.hxx
(``get_restriction_predicate``): a ``restriction`` is
``{member_index, restriction_type, argument, extensions}``; it names a
member of an object by its index in ``FC_REFLECT`` order (the field order of
the operation's :class:`~nodeapi.protocol.composite.Struct`), a function and
an argument ``[tag, value]`` of the 42-way argument variant.

:func:`restriction_predicate` builds, from the restrictions and an
operation type, a function ``op_data -> bool`` (all restrictions hold) and
raises :class:`~nodeapi.protocol.errors.InvalidOperation` with
bitshares-core's texts for what the reference refuses to build: a member
index past the object's members, a function on types it does not accept
("Invalid types for predicate"), an attribute assertion on a non-object,
an empty attribute list or logical-or branch, a logical or of fewer than
two branches, a variant assertion on a non-variant field.

Types, as the reference's templates decide them:

* integral fields (every ``intN``/``uintN`` and ``share_type``) compare with
  an ``int64`` argument numerically; ``bool``, ``string``,
  ``time_point_sec``, ``public_key_type``, ``sha256`` and each typed object
  id (``account_id_type`` ...) only with an argument of the same type
  (``unsigned_int`` and other types compare with nothing);
* ``eq``/``ne``: same type; an integer against a container's size; a set
  against a set of the same element type; an optional against ``void``
  (``eq`` means absent); an absent optional fails ``eq`` (and passes ``ne``);
* ``lt``/``le``/``gt``/``ge``: comparable types, an absent optional fails;
* ``in``/``not_in`` with a set argument: a comparable field is (not) in it;
  a container field has all (none) of its elements in it; an absent
  optional fails ``in`` and passes ``not_in``;
* ``has_all``/``has_none``: a container field holds all / none of the
  set's elements (on an optional container ``has_none`` tests what
  ``has_all`` does, as the reference's template does);
* ``attr``: restrictions on the members of a struct field (optional or
  extension too); ``logical_or``: one of at least two branches holds;
  ``variant_assert`` ``[which, restrictions]``: the static_variant field
  holds alternative ``which`` and its value satisfies the restrictions.
"""

from typing import Callable

from nodeapi.protocol.composite import (
    Extension, FlatMap, FlatSet, Optional, StaticVariant, Struct, Vector)
from nodeapi.protocol.errors import InvalidOperation
from nodeapi.protocol.ids import instance_number
from nodeapi.protocol.keys import public_key_bytes
from nodeapi.protocol.serialize import Bool, FixedBytes, Int, String, TimePointSec
from nodeapi.protocol.graphene_types import Base58Bytes, ObjectIdType
from nodeapi.protocol.times import parse_time

#: restriction_type numbers (restriction::function_type)
FUNCTIONS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "has_all", "has_none", "attr",
             "logical_or", "variant_assert")
#: argument tag -> scalar type of the argument (or of a set's elements, tag - 19)
_SCALAR_TAGS = {1: "bool", 2: "int", 3: "string", 4: "time", 5: "pubkey", 6: "sha256",
                7: "1.2", 8: "1.3", 9: "1.4", 10: "1.5", 11: "1.6", 12: "1.7", 13: "1.8",
                14: "1.9", 15: "1.10", 16: "1.12", 17: "1.13", 18: "1.14", 19: "1.15"}
_COMPARABLE_TAGS = frozenset((2, 3, 4) + tuple(range(7, 20)))
_SET_TAGS = range(20, 39)
_TAG_RESTRICTIONS, _TAG_OR, _TAG_VARIANT = 39, 40, 41

Predicate = Callable[[object], bool]


def _invalid(message: str):
    raise InvalidOperation(message)


def restriction_count(restrictions: list) -> int:
    """The number of restrictions, nested ones included
    (``restriction::restriction_count``)."""
    total = 0
    for r in restrictions:
        tag, value = _argument(r)
        total += 1
        if tag == _TAG_RESTRICTIONS:
            total += restriction_count(value)
        elif tag == _TAG_OR:
            total += sum(restriction_count(branch) for branch in value)
        elif tag == _TAG_VARIANT:
            total += restriction_count(value[1])
    return total


def _argument(r) -> tuple:
    arg = r.get("argument") if isinstance(r, dict) else None
    if not isinstance(arg, (list, tuple)) or len(arg) != 2:
        _invalid("Restriction argument must be a [tag, value] pair")
    tag = arg[0]
    if not isinstance(tag, int) or isinstance(tag, bool) or not 0 <= tag <= _TAG_VARIANT:
        _invalid(f"Invalid restriction argument type {tag!r}")
    return tag, arg[1]


def restriction_predicate(restrictions: list, operation_struct: Struct) -> Predicate:
    """``op_data -> bool`` for ``restrictions`` on an operation whose wire
    struct is ``operation_struct`` (the reference's
    ``get_restriction_predicate``: an empty list always holds).  Raises
    :class:`InvalidOperation` for restrictions the reference refuses."""
    if not isinstance(restrictions, list):
        _invalid("restrictions must be a list")
    return _restrictions(restrictions, operation_struct, allow_empty=True)


def _restrictions(rs: list, obj_type, allow_empty: bool) -> Predicate:
    if not allow_empty and not rs:
        _invalid("Empty attribute assertions and logical OR branches are not permitted")
    predicates = []
    for r in rs:
        kind = r.get("restriction_type") if isinstance(r, dict) else None
        if kind == FUNCTIONS.index("logical_or"):
            tag, value = _argument(r)
            if tag != _TAG_OR:
                _invalid("Restriction argument for logical OR function type must be list of "
                         "restriction lists.")
            if len(value) <= 1:
                _invalid("Logical OR must have at least two branches")
            branches = [_restrictions(branch, obj_type, False) for branch in value]
            predicates.append(lambda obj, bs=branches: any(b(obj) for b in bs))
        else:
            predicates.append(_field_predicate(r, obj_type))
    return lambda obj: all(p(obj) for p in predicates)


def _members(obj_type) -> tuple:
    if isinstance(obj_type, (Struct, Extension)):
        return obj_type.fields
    _invalid("Invalid restriction references member of non-object type: "
             f"{getattr(obj_type, 'name', type(obj_type).__name__)}")


def _field_predicate(r: dict, obj_type) -> Predicate:
    members = _members(obj_type)
    index = r.get("member_index")
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(members):
        _invalid(f"Invalid member index {index} for object {obj_type.name}")
    name, field_type = members[index]
    function = r.get("restriction_type")
    if not isinstance(function, int) or not 0 <= function < len(FUNCTIONS):
        _invalid("Invalid function type on restriction")
    tag, value = _argument(r)
    check = _function(FUNCTIONS[function], tag, value, field_type)

    def field(obj):
        return check(obj.get(name) if isinstance(obj, dict) else None)
    return field


# -- types ----------------------------------------------------------------------------


def _scalar(t) -> str | None:
    """The comparison type of a scalar field type, None for other types."""
    if isinstance(t, Int):
        return "int"
    if isinstance(t, Bool):
        return "bool"
    if isinstance(t, String):
        return "string"
    if isinstance(t, TimePointSec):
        return "time"
    if isinstance(t, Base58Bytes) and t.name == "public_key":
        return "pubkey"
    if isinstance(t, FixedBytes) and t.name == "sha256":
        return "sha256"
    if isinstance(t, ObjectIdType):
        return t.name[:-2]
    return None


def _comparable(field: str | None, arg: str) -> bool:
    return field is not None and field == arg


def _container_element(t):
    """The element type of a vector or set field, None otherwise."""
    return t.inner if isinstance(t, Vector) else None


def _normal(kind: str, value):
    """A value of scalar type ``kind`` in a comparable form."""
    if kind == "int":
        return int(value)
    if kind == "bool":
        return bool(value)
    if kind == "time":
        return parse_time(value) if isinstance(value, str) else int(value)
    if kind == "pubkey":
        return public_key_bytes(value)
    if kind == "sha256":
        return str(value).lower()
    if kind == "string":
        return str(value)
    return instance_number(value)


def _argument_value(tag: int, value):
    try:
        if tag in _SCALAR_TAGS:
            return _normal(_SCALAR_TAGS[tag], value)
        if tag in _SET_TAGS:
            return frozenset(_normal(_SCALAR_TAGS[tag - 19], v) for v in value)
    except Exception as exc:
        raise InvalidOperation(f"Invalid restriction argument: {exc}") from None
    return value


def _function(name: str, tag: int, value, field_type) -> Predicate:
    if name == "attr":
        return _attr(tag, value, field_type)
    if name == "variant_assert":
        return _variant(tag, value, field_type)
    if name == "logical_or":
        _invalid("Invalid function type on restriction")
    arg = _argument_value(tag, value)
    if name in ("eq", "ne"):
        if tag > 38:
            _invalid("Invalid types for predicate")
        eq = _eq(tag, arg, field_type)
        if name == "eq":
            return lambda v: eq(v) is True
        return lambda v: eq(v) is not True
    if name in ("lt", "le", "gt", "ge"):
        if tag not in _COMPARABLE_TAGS:
            _invalid("Invalid types for predicate")
        return _compare(name, tag, arg, field_type)
    if tag not in _SET_TAGS:
        _invalid("Invalid types for predicate")
    element = _SCALAR_TAGS[tag - 19]
    if name in ("in", "not_in"):
        return _in(name == "in", element, arg, field_type)
    return _has(name == "has_all", element, arg, field_type)


def _optional(field_type, inner: Callable[[object], object], absent) -> Predicate:
    return lambda v: absent if v is None else inner(v)


def _eq(tag: int, arg, field_type) -> Callable[[object], object]:
    """``value -> True/False``, or ``None`` for an absent optional (which
    fails ``eq`` and passes ``ne``)."""
    if isinstance(field_type, Optional):
        if tag == 0:
            return lambda v: v is None
        inner = _scalar(field_type.inner)
        if tag in _SCALAR_TAGS and _comparable(inner, _SCALAR_TAGS[tag]):
            return _optional(field_type, lambda v: _normal(inner, v) == arg, None)
        _invalid("Invalid types for predicate")
    scalar = _scalar(field_type)
    if tag in _SCALAR_TAGS:
        kind = _SCALAR_TAGS[tag]
        if _comparable(scalar, kind):
            return lambda v: _normal(kind, v) == arg
        if kind == "int" and isinstance(field_type, (Vector, FlatMap)):
            return lambda v: len(v or ()) == arg
    if tag in _SET_TAGS and isinstance(field_type, FlatSet):
        element = _scalar(field_type.inner)
        kind = _SCALAR_TAGS[tag - 19]
        # flat_set<X> == flat_set<Y> needs the very same element type: an
        # int64 set equals only a set of int64 (share_type) fields
        same = element == kind and (kind != "int" or field_type.inner.name == "int64")
        if same:
            return lambda v: frozenset(_normal(kind, x) for x in v or ()) == arg
    _invalid("Invalid types for predicate")


def _compare(name: str, tag: int, arg, field_type) -> Predicate:
    optional = isinstance(field_type, Optional)
    inner = field_type.inner if optional else field_type
    kind = _SCALAR_TAGS[tag]
    if not _comparable(_scalar(inner), kind):
        _invalid("Invalid types for predicate")
    test = {"lt": lambda a: a < arg, "le": lambda a: a <= arg, "gt": lambda a: a > arg,
            "ge": lambda a: a >= arg}[name]
    return lambda v: False if v is None else test(_normal(kind, v))


def _in(inside: bool, element: str, arg, field_type) -> Predicate:
    if isinstance(field_type, Optional):
        if not _comparable(_scalar(field_type.inner), element):
            _invalid("Invalid types for predicate")
        return lambda v: (not inside) if v is None else ((_normal(element, v) in arg) == inside)
    if _comparable(_scalar(field_type), element):
        return lambda v: (_normal(element, v) in arg) == inside
    inner = _container_element(field_type)
    if inner is not None and _comparable(_scalar(inner), element):
        if inside:
            return lambda v: all(_normal(element, x) in arg for x in v or ())
        return lambda v: not any(_normal(element, x) in arg for x in v or ())
    _invalid("Invalid types for predicate")


def _has(has_all: bool, element: str, arg, field_type) -> Predicate:
    optional = isinstance(field_type, Optional)
    container = field_type.inner if optional else field_type
    inner = _container_element(container)
    if inner is None or not _comparable(_scalar(inner), element):
        _invalid("Invalid types for predicate")

    def holds_all(v):
        return arg <= {_normal(element, x) for x in v or ()}

    def holds_none(v):
        return not any(_normal(element, x) in arg for x in v or ())
    # the reference's optional has_none derives from has_all and tests it
    test = holds_all if (has_all or optional) else holds_none
    return lambda v: False if v is None else test(v)


def _attr(tag: int, value, field_type) -> Predicate:
    if tag != _TAG_RESTRICTIONS:
        _invalid("Argument type for attribute assertion must be restriction list")
    optional = isinstance(field_type, Optional)
    target = field_type.inner if optional else field_type
    inner = _restrictions(value, target, allow_empty=False)
    if optional:
        return lambda v: False if v is None else inner(v)
    if isinstance(target, Extension):
        return lambda v: inner(v if isinstance(v, dict) else {})
    return inner


def _variant(tag: int, value, field_type) -> Predicate:
    if tag != _TAG_VARIANT:
        _invalid("Argument type for attribute assertion must be pair of variant tag and "
                 "restriction list")
    optional = isinstance(field_type, Optional)
    variant = field_type.inner if optional else field_type
    if not isinstance(variant, StaticVariant):
        _invalid("Invalid variant assertion on non-variant field")
    which, rs = value
    if not isinstance(which, int) or not 0 <= which < len(variant.types):
        _invalid(f"Invalid variant tag {which}")
    if rs:
        inner = _restrictions(rs, variant.types[which], allow_empty=True)
    else:
        def inner(_v):
            return True

    def holds(v):
        if v is None:
            return False
        return v[0] == which and inner(v[1])
    return holds
