"""Field-by-field comparison of two nodes' objects: the reference
(bitshares-core's witness_node, kit.reference) and nodeapi (kit.daemon),
both at the same head block.

:func:`compare_objects` reads every object of every type of the protocol
space (1.x) and the implementation space (2.x) with ``get_objects`` on
both nodes (for each type, instances from 0 in batches, until a batch is
null on both), plus the answers of the database API calls that show
objects assembled (global, chain and dynamic global properties, the
config, full accounts and accounts by name), and lists every difference
as a :class:`Difference` (object id or call, field path, the two values).
Types of the JSON values count: ``5`` and ``"5"`` differ, as a client
parsing the reply sees them.

Deliberate differences, documented in docs/reference-differences.rst, are
in ``reference_differences.json`` beside this module; :func:`compare_objects`
leaves out exactly those (:func:`load_allowed`) and nothing else.

Either node is anything with ``call(method, *params)`` answering the
database API (``ReferenceNode.call``, ``Daemon.call``)."""

import fnmatch
import json
import os

import attr

#: 1.1 .. 1.22 (bitshares-core protocol/types.hpp ``protocol_ids``; 1.0 is
#: the null type, never an object)
PROTOCOL_TYPES = tuple(range(1, 23))
#: 2.0 .. 2.18 (bitshares-core chain/types.hpp ``implementation_ids``)
IMPLEMENTATION_TYPES = tuple(range(0, 19))
#: ids per get_objects call (both nodes' default api-limit-get-objects)
BATCH = 100
#: the accounts whose assembled views are compared
ACCOUNTS = ("init0", "init1", "committee-account")

ALLOWED_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "reference_differences.json")


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


class _Missing:
    def __repr__(self):
        return "<missing>"


#: the value of a side that lacks a field or list element
MISSING = _Missing()


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


def diff_values(where: str, ref, node, path: str = "") -> list:
    """The :class:`Difference` list between two JSON values: dicts field by
    field (a field on one side only is a difference), lists element by
    element, scalars by type and value."""
    if isinstance(ref, dict) and isinstance(node, dict):
        out = []
        for key in list(ref) + [k for k in node if k not in ref]:
            sub = f"{path}.{key}" if path else str(key)
            out += diff_values(where, ref.get(key, MISSING), node.get(key, MISSING), sub)
        return out
    if isinstance(ref, list) and isinstance(node, list):
        out = []
        for i in range(max(len(ref), len(node))):
            out += diff_values(where, ref[i] if i < len(ref) else MISSING,
                               node[i] if i < len(node) else MISSING, f"{path}[{i}]")
        return out
    return [] if _same(ref, node) else [Difference(where, path, ref, node)]


def object_ids(space: int, type_: int, start: int, count: int) -> list:
    return [f"{space}.{type_}.{i}" for i in range(start, start + count)]


def _get_objects(side, ids):
    """``get_objects(ids)``, or an :class:`Refused` for the error it raises
    (the reference refuses a type whose index it never made: 1.1, 2.2)."""
    try:
        return side.call("get_objects", ids)
    except Exception as exc:  # both kits' JSON-RPC errors
        return Refused(str(exc).split(":")[-1].strip())


@attr.s(frozen=True, auto_attribs=True)
class Refused:
    """A get_objects call a node refused; ``text`` the end of its message."""

    text: str


def read_type(ref, node, space: int, type_: int, *, batch: int = BATCH):
    """``(id, reference object, nodeapi object)`` for every instance of
    ``space.type_`` from 0, a batch of ids at a time, until a batch is null
    on both nodes (so a removed object between live ones is still read).
    A type either node refuses gives one triple with the :class:`Refused`
    answers (compared as whole values: a refusal on one side only is a
    difference) and ends."""
    start = 0
    while True:
        ids = object_ids(space, type_, start, batch)
        a = _get_objects(ref, ids)
        b = _get_objects(node, ids)
        if isinstance(a, Refused) or isinstance(b, Refused):
            both = isinstance(a, Refused) and isinstance(b, Refused)
            yield f"{space}.{type_}.*", True if both else a, True if both else b
            return
        if all(x is None for x in a) and all(x is None for x in b):
            return
        yield from zip(ids, a, b)
        start += batch


def compare_all_objects(ref, node, *, spaces=((1, PROTOCOL_TYPES), (2, IMPLEMENTATION_TYPES)),
                        skip_types=()) -> list:
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
    ``accounts`` and get_account_by_name of each."""
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
        where = method if not params else f"{method}({json.dumps(params[0])})"
        out += diff_values(where, a, b)
    return out


def load_allowed(path: str = ALLOWED_PATH) -> list:
    """The documented deliberate differences: a list of ``{"where": glob of
    object ids or calls, "path": glob of field paths, "node": the value
    nodeapi answers (omitted: any), "ref": the reference's (omitted: any;
    ``"<missing>"``: no such field), "reason": text, "doc": its section of
    docs/reference-differences.rst}``.  Raises ValueError for an entry
    without where, path, reason or doc."""
    with open(path) as f:
        entries = json.load(f)["differences"]
    for e in entries:
        missing = {"where", "path", "reason", "doc"} - set(e)
        if missing:
            raise ValueError(f"{path}: an entry lacks {sorted(missing)}: {e}")
    return entries


def _value_is(actual, expected) -> bool:
    if expected == "<missing>":
        return actual is MISSING
    return _same(actual, expected)


def _path_glob(path: str) -> str:
    """A field path glob whose brackets are list indexes (``[*][1].name``),
    as :func:`fnmatch.fnmatchcase` reads them: only ``*`` and ``?`` match."""
    return path.replace("[", "\0").replace("]", "[]]").replace("\0", "[[]")


def is_allowed(diff: Difference, allowed: list) -> bool:
    """True when ``diff`` is one of the ``allowed`` entries (its object id
    or call matches the entry's ``where`` glob, its field path the
    ``path`` glob (brackets there are list indexes), and the two values are
    the entry's ``node`` and ``ref`` when it names them)."""
    for e in allowed:
        if (fnmatch.fnmatchcase(diff.where, e["where"])
                and fnmatch.fnmatchcase(diff.path, _path_glob(e["path"]))
                and ("node" not in e or _value_is(diff.node, e["node"]))
                and ("ref" not in e or _value_is(diff.ref, e["ref"]))):
            return True
    return False


def compare_objects(ref, node, *, allowed=None, accounts=ACCOUNTS, clock_fields=(),
                    **kwargs) -> list:
    """Every difference between the two nodes' objects and assembled
    answers (:func:`compare_all_objects` with ``kwargs``,
    :func:`compare_calls` with ``accounts`` and ``clock_fields``), ordered
    by object id, less the documented deliberate ones (``allowed``: the
    entries of :func:`load_allowed` unless given; ``[]`` keeps every
    difference).  Both nodes must stand at the same head block."""
    allowed = load_allowed() if allowed is None else allowed
    found = (compare_all_objects(ref, node, **kwargs)
             + compare_calls(ref, node, accounts=accounts, clock_fields=clock_fields))
    return [d for d in found if not is_allowed(d, allowed)]


def report(diffs: list, limit: int = 60) -> str:
    """The differences one a line (at most ``limit``, then a count)."""
    lines = [str(d) for d in diffs[:limit]]
    if len(diffs) > limit:
        lines.append(f"... and {len(diffs) - limit} more")
    return "\n".join(lines)
