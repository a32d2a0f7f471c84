"""Field-by-field comparison of two JSON values (what the reference and
nodeapi answer for the same object or read), and the list of deliberate
differences the runner accepts (``deliberate.json`` beside this module,
documented in docs/differential.rst)."""

import fnmatch
import json
import os

#: the deliberate differences, one entry each: ``kind`` (object, read,
#: validation, validation_text), ``where`` (a glob on the object id or the
#: read's method), ``field`` (a glob on the field path), ``reason``
DELIBERATE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "deliberate.json")

_MISSING = "<missing>"


def field_differences(ref, node, path=""):
    """``[(path, reference value, nodeapi value)]`` of every leaf where
    ``ref`` and ``node`` differ: dict keys are walked (a key only one side
    has is reported with ``"<missing>"`` on the other), lists of objects
    that all carry an ``id`` by id (``history[1.11.7].op``: an entry one
    side lacks is one difference, not a shift of every later one), other
    lists of equal length element by element, and of different lengths as
    one difference at their path.  Values compare exactly (``1`` is not
    ``"1"``: the wire form is part of the contract)."""
    out = []
    if isinstance(ref, dict) and isinstance(node, dict):
        for key in list(ref) + [k for k in node if k not in ref]:
            sub = f"{path}.{key}" if path else str(key)
            out += field_differences(ref.get(key, _MISSING), node.get(key, _MISSING), sub)
    elif isinstance(ref, list) and isinstance(node, list) and _by_id(ref) and _by_id(node):
        a, b = _by_id(ref), _by_id(node)
        for key in list(a) + [k for k in b if k not in a]:
            out += field_differences(a.get(key, _MISSING), b.get(key, _MISSING),
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


class Deliberate:
    """The accepted differences: :meth:`match` answers the entry a
    difference falls under (or None); :attr:`used` counts matches per entry,
    so entries that matched nothing can be reported."""

    def __init__(self, entries):
        for e in entries:
            missing = {"kind", "where", "field", "reason"} - set(e)
            if missing:
                raise ValueError(f"deliberate difference {e!r} lacks {sorted(missing)}")
        self.entries = list(entries)
        self.used = [0] * len(self.entries)

    @classmethod
    def load(cls, path=DELIBERATE_PATH):
        with open(path) as f:
            return cls(json.load(f))

    def match(self, kind, where, field):
        for i, e in enumerate(self.entries):
            if (e["kind"] == kind and fnmatch.fnmatchcase(str(where), e["where"])
                    and fnmatch.fnmatchcase(general_path(field), e["field"])):
                self.used[i] += 1
                return e
        return None
