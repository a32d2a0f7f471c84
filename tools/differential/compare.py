"""Comparing what bitshares-core's witness_node (the reference node) and
nodeapi answer, field by field, and the one list of deliberate differences
(``deliberate.json`` beside this module, each entry a section of
docs/reference-differences.rst).  The differential runner
(:mod:`tools.differential.runner`) and the test kit (``tests/kit/compare.py``
re-exports this module) compare with it.

- :func:`field_differences`: every leaf where two JSON values differ, as
  ``(path, reference value, nodeapi value)``; types count (``5`` is not
  ``"5"``: the wire form is part of the contract); a field or element one
  side lacks is :data:`MISSING` on that side.
- :class:`Deliberate`: the accepted differences; :meth:`Deliberate.match`
  answers the entry a difference falls under.
- :func:`compare_objects`: every object of spaces 1 and 2 and the
  assembled answers (properties, config, accounts) of two nodes standing at
  the same head block, less the deliberate differences, as
  :class:`Difference` values.

Either node is anything with ``call(method, *params)`` answering the
database API (``ReferenceNode.call``, ``Daemon.call``)."""

import fnmatch
import json
import os

import attr

#: the deliberate differences, one entry each: ``kind`` (object, read,
#: validation, validation_text), ``where`` (a glob on the object id or the
#: read's method), ``field`` (a glob on the field path with list indices
#: folded: ``[]`` stands for any index), ``reason``, ``doc`` (its section
#: of docs/reference-differences.rst) and, when given, the values nodeapi
#: (``node``) and the reference (``ref``) must answer
DELIBERATE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "deliberate.json")

#: the value of a side that lacks a field or list element
MISSING = "<missing>"

#: 1.1 .. 1.22 (bitshares-core protocol/types.hpp ``protocol_ids``; 1.0 is
#: the null type, never an object)
PROTOCOL_TYPES = tuple(range(1, 23))
#: 2.0 .. 2.18 (bitshares-core chain/types.hpp ``implementation_ids``)
IMPLEMENTATION_TYPES = tuple(range(0, 19))
#: (space, types) of a full sweep
SPACES = ((1, PROTOCOL_TYPES), (2, IMPLEMENTATION_TYPES))
#: ids per get_objects call (both nodes' default api-limit-get-objects)
BATCH = 100
#: the accounts whose assembled views :func:`compare_calls` compares
ACCOUNTS = ("init0", "init1", "committee-account")


def field_differences(ref, node, path=""):
    """``[(path, reference value, nodeapi value)]`` of every leaf where
    ``ref`` and ``node`` differ: dict keys are walked (a key only one side
    has is reported with :data:`MISSING` on the other), lists of objects
    that all carry an ``id`` by id (``history[1.11.7].op``: an entry one
    side lacks is one difference, not a shift of every later one), other
    lists of equal length element by element, and of different lengths as
    one difference at their path.  Values compare exactly (``1`` is not
    ``"1"``, ``True`` is not ``1``)."""
    out = []
    if isinstance(ref, dict) and isinstance(node, dict):
        for key in list(ref) + [k for k in node if k not in ref]:
            sub = f"{path}.{key}" if path else str(key)
            out += field_differences(ref.get(key, MISSING), node.get(key, MISSING), sub)
    elif isinstance(ref, list) and isinstance(node, list) and _by_id(ref) and _by_id(node):
        a, b = _by_id(ref), _by_id(node)
        for key in list(a) + [k for k in b if k not in a]:
            out += field_differences(a.get(key, MISSING), b.get(key, MISSING),
                                     f"{path}[{key}]")
    elif isinstance(ref, list) and isinstance(node, list) and len(ref) == len(node):
        for i, (a, b) in enumerate(zip(ref, node)):
            out += field_differences(a, b, f"{path}[{i}]")
    elif type(ref) is not type(node) or ref != node:
        out.append((path, ref, node))
    return out


def _by_id(items):
    """``{id: item}`` of a non-empty list of objects with distinct ids, else None."""
    if not items or not all(isinstance(i, dict) and isinstance(i.get("id"), str)
                            for i in items):
        return None
    out = {i["id"]: i for i in items}
    return out if len(out) == len(items) else None


def general_path(path: str) -> str:
    """A field path with list indices folded (``votes[3]`` -> ``votes[]``),
    for grouping and matching."""
    out, skip = [], False
    for ch in path:
        if ch == "[":
            out.append("[]")
            skip = True
        elif ch == "]":
            skip = False
        elif not skip:
            out.append(ch)
    return "".join(out)


def object_kind(object_id: str) -> str:
    """``1.2.17`` -> ``1.2``; other keys unchanged."""
    parts = str(object_id).split(".")
    if len(parts) == 3 and all(p.isdigit() for p in parts):
        return f"{parts[0]}.{parts[1]}"
    return str(object_id)


def kind_of(where: str) -> str:
    """``object`` for an object id or an id glob (``1.2.17``, ``1.1.*``),
    ``read`` for a call's name."""
    return "object" if str(where)[:1].isdigit() else "read"


def _path_glob(glob: str) -> str:
    """A field glob whose brackets are literal (``[][].account.x``), as
    :func:`fnmatch.fnmatchcase` reads it: only ``*`` and ``?`` match."""
    return glob.replace("[", "\0").replace("]", "[]]").replace("\0", "[[]")


class Deliberate:
    """The accepted differences: :meth:`match` answers the entry a
    difference falls under (or None); :attr:`used` counts matches per entry,
    so entries that matched nothing can be reported.  Raises ValueError for
    an entry without kind, where, field, reason or doc."""

    def __init__(self, entries):
        for e in entries:
            missing = {"kind", "where", "field", "reason", "doc"} - set(e)
            if missing:
                raise ValueError(f"deliberate difference {e!r} lacks {sorted(missing)}")
        self.entries = list(entries)
        self.used = [0] * len(self.entries)

    @classmethod
    def load(cls, path=None):
        """The list in ``path`` (default :data:`DELIBERATE_PATH`)."""
        with open(path or DELIBERATE_PATH) as f:
            return cls(json.load(f))

    def match(self, kind, where, field, ref=None, node=None, values=False):
        """The entry covering a difference of ``kind`` at ``where`` (object
        id or method), field path ``field``; with ``values`` true, an entry
        naming ``node``/``ref`` values covers it only when the two values
        are those."""
        folded = general_path(field)
        for i, e in enumerate(self.entries):
            if (e["kind"] == kind and fnmatch.fnmatchcase(str(where), e["where"])
                    and fnmatch.fnmatchcase(folded, _path_glob(e["field"]))
                    and (not values or (_value_is(node, e, "node")
                                        and _value_is(ref, e, "ref")))):
                self.used[i] += 1
                return e
        return None


def _value_is(actual, entry, side) -> bool:
    if side not in entry:
        return True
    expected = entry[side]
    return type(actual) is type(expected) and actual == expected


@attr.s(frozen=True, auto_attribs=True)
class Difference:
    """One field that differs: ``where`` is an object id (``"2.5.0"``) or
    a call (``"get_config"``), ``path`` the field path inside it
    (``"options.votes[0]"``; ``""`` for the whole value), ``ref`` and
    ``node`` the two JSON values (:data:`MISSING` where a side has no such
    field or element)."""

    where: str
    path: str
    ref: object
    node: object

    def __str__(self):
        return f"{self.where} {self.path or '<whole>'}: reference {self.ref!r}, nodeapi {self.node!r}"


def diff_values(where: str, ref, node) -> list:
    """The :class:`Difference` list between two JSON values
    (:func:`field_differences`)."""
    return [Difference(where, path, a, b) for path, a, b in field_differences(ref, node)]


def is_allowed(diff: Difference, deliberate: Deliberate) -> bool:
    """True when ``diff`` is one of the deliberate differences (its kind
    from its ``where``, its values checked where the entry names them)."""
    return deliberate.match(kind_of(diff.where), diff.where, diff.path, diff.ref, diff.node,
                            values=True) is not None


@attr.s(frozen=True, auto_attribs=True)
class Refused:
    """A get_objects call a node refused; ``text`` the end of its message."""

    text: str


def _get_objects(side, ids):
    """``get_objects(ids)``, or a :class:`Refused` for the error it raises
    (the reference refuses a type whose index it never made: 1.1, 2.2)."""
    try:
        return side.call("get_objects", ids)
    except Exception as exc:  # both kits' JSON-RPC errors
        return Refused(str(exc).split(":")[-1].strip())


def read_type(ref, node, space: int, type_: int, *, batch: int = BATCH):
    """``(id, reference object, nodeapi object)`` for every instance of
    ``space.type_`` from 0, a batch of ids at a time, until a batch is null
    on both nodes (so a removed object between live ones is still read).
    A type either node refuses gives one triple with the :class:`Refused`
    answers (compared as whole values: a refusal on one side only is a
    difference) and ends."""
    start = 0
    while True:
        ids = [f"{space}.{type_}.{i}" for i in range(start, start + batch)]
        a = _get_objects(ref, ids)
        b = _get_objects(node, ids)
        if isinstance(a, Refused) or isinstance(b, Refused):
            both = isinstance(a, Refused) and isinstance(b, Refused)
            yield f"{space}.{type_}.*", True if both else str(a), True if both else str(b)
            return
        if all(x is None for x in a) and all(x is None for x in b):
            return
        yield from zip(ids, a, b)
        start += batch


def compare_all_objects(ref, node, *, spaces=SPACES, skip_types=()) -> list:
    """Differences between every object of ``spaces`` on the two nodes
    (``skip_types``: ``"2.8"``-style types not read)."""
    out = []
    for space, types in spaces:
        for type_ in types:
            if f"{space}.{type_}" in skip_types:
                continue
            for oid, a, b in read_type(ref, node, space, type_):
                out += diff_values(oid, a, b)
    return out


def compare_calls(ref, node, *, accounts=ACCOUNTS, clock_fields=()) -> list:
    """Differences between the answers of the database calls that show
    assembled objects: global/chain/dynamic global properties (without
    ``clock_fields``: the fields that follow the wall clock when the nodes
    do not stand at the same block), the config, get_full_accounts of
    ``accounts`` and get_account_by_name of each; ``where`` is the call's
    name."""
    calls = [("get_global_properties",), ("get_chain_properties",), ("get_config",),
             ("get_dynamic_global_properties",), ("get_full_accounts", list(accounts), False)]
    calls += [("get_account_by_name", name) for name in accounts]
    out = []
    for method, *params in calls:
        a = ref.call(method, *params)
        b = node.call(method, *params)
        if method == "get_dynamic_global_properties":
            a = {k: v for k, v in a.items() if k not in clock_fields}
            b = {k: v for k, v in b.items() if k not in clock_fields}
        out += diff_values(method, a, b)
    return out


def compare_objects(ref, node, *, deliberate=None, accounts=ACCOUNTS, clock_fields=(),
                    **kwargs) -> list:
    """Every difference between the two nodes' objects and assembled
    answers (:func:`compare_all_objects` with ``kwargs``,
    :func:`compare_calls` with ``accounts`` and ``clock_fields``), less
    the deliberate ones (``deliberate``: :meth:`Deliberate.load` unless
    given; ``Deliberate([])`` keeps every difference).  Both nodes must
    stand at the same head block."""
    deliberate = Deliberate.load() if deliberate is None else deliberate
    found = (compare_all_objects(ref, node, **kwargs)
             + compare_calls(ref, node, accounts=accounts, clock_fields=clock_fields))
    return [d for d in found if not is_allowed(d, deliberate)]


def report(diffs: list, limit: int = 60) -> str:
    """The differences one a line (at most ``limit``, then a count)."""
    lines = [str(d) for d in diffs[:limit]]
    if len(diffs) > limit:
        lines.append(f"... and {len(diffs) - limit} more")
    return "\n".join(lines)
