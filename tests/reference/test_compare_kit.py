"""The object comparison of the test kit (kit.compare) on hand-made
values: which differences it finds and which documented ones it leaves
out (no node needed)."""

import json

from kit.compare import (
    MISSING, Difference, diff_values, is_allowed, load_allowed, report)


def test_differences_by_field_path_and_json_type():
    ref = {"id": "1.3.1", "options": {"max_market_fee": 1000000, "flags": 0,
                                      "whitelist_authorities": ["1.2.6"]}, "precision": 3}
    node = {"id": "1.3.1", "options": {"max_market_fee": "1000000", "flags": 0,
                                       "whitelist_authorities": []}, "extra": True,
            "precision": 3}
    assert diff_values("1.3.1", ref, node) == [
        Difference("1.3.1", "options.max_market_fee", 1000000, "1000000"),
        Difference("1.3.1", "options.whitelist_authorities[0]", "1.2.6", MISSING),
        Difference("1.3.1", "extra", MISSING, True),
    ]
    assert diff_values("2.5.0", None, {"id": "2.5.0"}) == [
        Difference("2.5.0", "", None, {"id": "2.5.0"})]
    assert diff_values("x", True, 1) and diff_values("x", 0, False)  # types count
    assert diff_values("x", [1, [2]], [1, [2]]) == []


def test_only_the_documented_differences_are_left_out():
    allowed = load_allowed()
    quirk = Difference("1.2.0", "num_committee_voted", 7360, 0)
    assert is_allowed(quirk, allowed)
    assert not is_allowed(Difference("1.2.6", "num_committee_voted", 1, 0), allowed)
    assert not is_allowed(Difference("1.2.0", "num_committee_voted", 0, 5), allowed)
    full = 'get_full_accounts(["init0", "committee-account"])'
    assert is_allowed(Difference(full, "[0][1].account.annotations", MISSING, []), allowed)
    assert not is_allowed(Difference(full, "[0][1].account.annotations", [], []), allowed)
    assert not is_allowed(Difference(full, "[0][1].balances[0]", {}, MISSING), allowed)
    assert not is_allowed(Difference("2.5.0", "maintenance_flag", True, False), allowed)
    assert is_allowed(Difference("2.7.3", "", {"id": "2.7.3"}, None), allowed)
    assert "1.2.0 num_committee_voted: reference 7360, nodeapi 0" in report([quirk])


def test_every_entry_names_its_section_of_the_document():
    from kit.compare import ALLOWED_PATH
    from kit.paths import ROOT

    with open(f"{ROOT}/docs/reference-differences.rst") as f:
        doc = f.read()
    with open(ALLOWED_PATH) as f:
        entries = json.load(f)["differences"]
    assert entries and all(f".. _{e['doc']}:" in doc for e in entries)
