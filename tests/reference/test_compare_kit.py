"""The one comparison of the reference's and nodeapi's answers
(tools/differential/compare.py, re-exported as kit.compare) on hand-made
values: which differences it finds and which deliberate ones it leaves out
(no node needed)."""

import json

import pytest

from kit.compare import (
    DELIBERATE_PATH, MISSING, Deliberate, Difference, diff_values, field_differences,
    general_path, is_allowed, report)
from kit.paths import ROOT


def test_differences_by_field_path_and_json_type():
    ref = {"id": "1.3.1", "options": {"max_market_fee": 1000000, "flags": 0,
                                      "whitelist_authorities": ["1.2.6"]}, "precision": 3}
    node = {"id": "1.3.1", "options": {"max_market_fee": "1000000", "flags": 0,
                                       "whitelist_authorities": []}, "extra": True,
            "precision": 3}
    assert diff_values("1.3.1", ref, node) == [
        Difference("1.3.1", "options.max_market_fee", 1000000, "1000000"),
        Difference("1.3.1", "options.whitelist_authorities", ["1.2.6"], []),
        Difference("1.3.1", "extra", MISSING, True),
    ]
    assert diff_values("2.5.0", None, {"id": "2.5.0"}) == [
        Difference("2.5.0", "", None, {"id": "2.5.0"})]
    assert diff_values("x", True, 1) and diff_values("x", 0, False)  # types count
    assert diff_values("x", [1, [2]], [1, [2]]) == []


def test_field_differences_walk_both_sides():
    ref = {"a": 1, "b": {"c": [1, 2], "d": "x"}, "e": [1]}
    node = {"a": "1", "b": {"c": [1, 3], "d": "x"}, "e": [1, 2], "f": None}
    assert field_differences(ref, node) == [
        ("a", 1, "1"), ("b.c[1]", 2, 3), ("e", [1], [1, 2]), ("f", MISSING, None)]
    assert general_path("balances[3].votes[12]") == "balances[].votes[]"
    # lists of objects with ids are matched by id: one missing entry, no shift
    history_ref = [{"id": "1.11.3", "op": 0}, {"id": "1.11.2", "op": 68},
                   {"id": "1.11.1", "op": 0}]
    history_node = [{"id": "1.11.3", "op": 0}, {"id": "1.11.1", "op": 0}]
    assert field_differences(history_ref, history_node) == [
        ("[1.11.2]", {"id": "1.11.2", "op": 68}, MISSING)]


def test_only_the_documented_differences_are_left_out():
    allowed = Deliberate.load()
    quirk = Difference("1.2.0", "num_committee_voted", 7360, 0)
    assert is_allowed(quirk, allowed)
    assert not is_allowed(Difference("1.2.6", "num_committee_voted", 1, 0), allowed)
    assert not is_allowed(Difference("1.2.0", "num_committee_voted", 0, 5), allowed)
    full = "get_full_accounts"
    assert is_allowed(Difference(full, "[0][1].account.annotations", MISSING, []), allowed)
    assert not is_allowed(Difference(full, "[0][1].account.annotations", [], []), allowed)
    assert not is_allowed(Difference(full, "[0][1].balances[0]", {}, MISSING), allowed)
    assert not is_allowed(Difference("2.5.0", "maintenance_flag", True, False), allowed)
    assert is_allowed(Difference("2.7.3", "", {"id": "2.7.3"}, None), allowed)
    assert not is_allowed(Difference("2.7.3", "", {"id": "2.7.3"}, {"id": "2.7.3"}), allowed)
    assert "1.2.0 num_committee_voted: reference 7360, nodeapi 0" in report([quirk])


def test_deliberate_list_matches_by_kind_object_field_and_values():
    entries = [{"kind": "object", "where": "1.2.[0-5]", "field": "num_committee_voted",
                "node": 0, "reason": "uninitialized in the reference", "doc": "x"}]
    d = Deliberate(entries)
    assert d.match("object", "1.2.3", "num_committee_voted") is entries[0]
    assert d.match("object", "1.2.6", "num_committee_voted") is None
    assert d.match("read", "1.2.3", "num_committee_voted") is None
    assert d.match("object", "1.2.3", "num_committee_voted", 7, 0, values=True) is entries[0]
    assert d.match("object", "1.2.3", "num_committee_voted", 7, 1, values=True) is None
    assert d.used == [2]
    with pytest.raises(ValueError):
        Deliberate([{"kind": "object", "where": "*"}])


def test_every_entry_names_its_section_of_the_document():
    with open(f"{ROOT}/docs/reference-differences.rst") as f:
        doc = f.read()
    with open(DELIBERATE_PATH) as f:
        entries = json.load(f)
    assert entries and all(f".. _{e['doc']}:" in doc for e in entries)
    assert Deliberate(entries).entries == entries
