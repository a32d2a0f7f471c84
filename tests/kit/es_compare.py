"""Search documents of bitshares-core's ``elasticsearch`` / ``es_objects``
plugins (captured by :mod:`kit.es_capture`) against nodeapi's (read back
from its search database), document by document
(docs/searchdb-plugin.rst "Against bitshares-core").

:func:`final_documents` applies a captured action stream as a database
would (``index`` / ``create`` store, ``delete`` removes);
:func:`stored_documents` reads every document of ``<prefix>*`` back;
:func:`differences` lists each field that differs, as
``(path, reference value, nodeapi value)``.
"""

import json
import urllib.request

#: a field missing on one side
MISSING = "<missing>"


def final_documents(actions, index_prefix: str) -> dict:
    """``{(index, _id): document}`` left by ``actions`` (:func:`kit.es_capture.bulk_actions`)
    in the indexes named ``index_prefix...``."""
    docs = {}
    for kind, meta, doc in actions:
        index = meta.get("_index", "")
        if not index.startswith(index_prefix):
            continue
        key = (index, meta.get("_id"))
        if kind == "delete":
            docs.pop(key, None)
        else:
            docs[key] = doc
    return docs


def stored_documents(url: str, index_prefix: str, timeout: float = 30) -> dict:
    """``{(index, _id): _source}`` of every document of ``<index_prefix>*``
    (after a refresh), from a typeless server at ``url``."""
    def call(method, path, body=None):
        req = urllib.request.Request(url.rstrip("/") + path, method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read() or b"{}")

    call("POST", f"/{index_prefix}*/_refresh")
    answer = call("POST", f"/{index_prefix}*/_search",
                  {"size": 10000, "query": {"match_all": {}}})
    hits = answer["hits"]["hits"]
    assert len(hits) < 10000, "more documents than one search answers"
    return {(h["_index"], h["_id"]): h["_source"] for h in hits}


def differences(theirs, ours, path: str = "") -> list:
    """Every leaf where ``theirs`` and ``ours`` (JSON values) differ:
    ``[(path, theirs, ours)]``, paths like ``operation_history.op_object.fee.amount``
    (list items by index); a key only one side has appears with
    :data:`MISSING` on the other."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        out = []
        for key in sorted(set(theirs) | set(ours)):
            sub = f"{path}.{key}" if path else key
            if key not in ours:
                out.append((sub, theirs[key], MISSING))
            elif key not in theirs:
                out.append((sub, MISSING, ours[key]))
            else:
                out.extend(differences(theirs[key], ours[key], sub))
        return out
    if isinstance(theirs, list) and isinstance(ours, list) and len(theirs) == len(ours):
        out = []
        for i, (a, b) in enumerate(zip(theirs, ours)):
            out.extend(differences(a, b, f"{path}.{i}" if path else str(i)))
        return out
    if theirs == ours and type(theirs) is type(ours):
        return []
    if isinstance(theirs, (int, float)) and isinstance(ours, (int, float)) \
            and not isinstance(theirs, bool) and not isinstance(ours, bool) and theirs == ours:
        return []  # 1.0 and 1: the same JSON number
    return [(path, theirs, ours)]


def _non_fill(doc) -> bool:
    return doc.get("operation_type") != 4


#: The deliberate differences of docs/searchdb-plugin.rst "Against
#: bitshares-core", the only ones the comparison accepts: ``(section, kind,
#: path, accepts(theirs, ours, their document))`` with kind ``history`` (an
#: operation document) or ``objects`` (an object document); the section is
#: the label of its part of the docs.
DOCUMENTED = (
    ("searchdb-visitor-non-fills", "history", "additional_data.fill_data.is_maker",
     lambda theirs, ours, doc: _non_fill(doc) and ours is False),
    ("searchdb-visitor-non-fills", "history", "additional_data.fill_data.fill_price",
     lambda theirs, ours, doc: _non_fill(doc) and ours == 0.0),
    ("searchdb-visitor-non-fills", "history", "additional_data.fill_data.fill_price_units",
     lambda theirs, ours, doc: _non_fill(doc) and ours == 0.0),
    ("searchdb-statistics-ids", "objects", "statistics",
     lambda theirs, ours, doc: (theirs.startswith("2.6.") and ours.startswith("2.7.")
                                and theirs[4:] == ours[4:])),
    ("searchdb-annotations", "objects", "annotations",
     lambda theirs, ours, doc: theirs == MISSING and ours == []),
    ("searchdb-num-committee-voted", "objects", "num_committee_voted",
     lambda theirs, ours, doc: doc["object_id"] in {f"1.2.{i}" for i in range(6)}
     and ours == 0),
)


def undocumented(kind: str, theirs: dict, ours: dict) -> list:
    """:func:`differences` of two documents of ``kind`` less the
    :data:`DOCUMENTED` ones."""
    rules = [(path, accepts) for _s, k, path, accepts in DOCUMENTED if k == kind]
    return [(path, a, b) for path, a, b in differences(theirs, ours)
            if not any(path == p and accepts(a, b, theirs) for p, accepts in rules)]
