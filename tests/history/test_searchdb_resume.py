"""The resume point against osmem (docs/searchdb-plugin.rst "Duplicate
rule": writing begins at the first record the database does not have yet,
never before it): a document missing below the highest stored one (a bulk
stored in part when the node died, no cursor file) is written on restart,
and nothing else is sent."""

import os

import pytest
import pytest_twisted
from twisted.internet import reactor

from nodeapi.plugins.searchdb.client import SearchDBClient
from nodeapi.plugins.searchdb.resume import CURSOR_FILE, Cursor, Resume
from nodeapi.plugins.searchdb.resume import find_resume

from kit.chain import open_chain
from kit.searchdb import FarClock, check_all_once, make_service, replay_through, stored_docs


pytestmark = pytest.mark.slow


@pytest_twisted.inlineCallbacks
def ship_all(genesis, path, url, data_dir):
    chain = open_chain(genesis, path)
    svc = make_service(url, chain, data_dir, bulk_replay=40, clock=FarClock())
    yield from replay_through(chain, svc)
    return svc


@pytest.mark.parametrize("cursor", ["removed", "behind"])
@pytest_twisted.inlineCallbacks
def test_gap_below_the_highest_document_is_filled(genesis, history_log, osmem_url,  # noqa: F811
                                                  tmp_path, cursor):
    path, expected = history_log
    data = str(tmp_path)
    yield ship_all(genesis, path, osmem_url, data)
    docs = yield stored_docs(osmem_url)
    top = max(expected)
    gaps = [top - 3, top - 6]  # below the highest document, other operations
    assert expected[gaps[0]][1] < expected[top][1]
    client = SearchDBClient(osmem_url, "", reactor)
    yield client.detect()
    for n in gaps:
        yield client.request("DELETE", f"/{docs[n]['_index']}/_doc/2.9.{n}")
    if cursor == "removed":
        os.remove(os.path.join(data, CURSOR_FILE))
    else:  # a cursor from before the gaps (the last bulk confirmed before the crash)
        n = gaps[1] - 2
        Cursor(n, expected[n][1], expected[n][2]).save(data, "chain-")
    saved = Cursor.load(data, "chain-")
    resume = yield find_resume(client, "chain-", saved.op + 1 if saved else None)
    assert resume.window_op == expected[top][1]
    assert not any(resume.holds(expected[n][1], n) for n in gaps)
    assert all(resume.holds(m, n) for n, (_a, m, _b) in expected.items() if n not in gaps)
    yield client.close()
    again = yield ship_all(genesis, path, osmem_url, data)
    assert again.documents_shipped == 2 and again.shipper.documents_existing == 0
    yield check_all_once(osmem_url, expected)


@pytest_twisted.inlineCallbacks
def test_window_smaller_than_the_database(genesis, history_log, osmem_url,  # noqa: F811
                                          tmp_path):
    """More documents than one window: without a gap only the highest
    operation's documents are looked at one by one; with a gap, the window
    of the lowest operations from the gap on decides, later ones are
    written again (409 for what is stored)."""
    path, expected = history_log
    yield ship_all(genesis, path, osmem_url, str(tmp_path))
    client = SearchDBClient(osmem_url, "", reactor)
    yield client.detect()
    top = max(expected[n][1] for n in expected)
    for hint in (None, 0, 1, top + 5):  # a hint only narrows the search
        resume = yield find_resume(client, "chain-", hint, window=6)
        assert resume.lo_op == top and resume.window_op == top
        assert resume.stored == {n for n in expected if expected[n][1] == top}
        assert all(resume.holds(m, n) for n, (_a, m, _b) in expected.items())
        assert not resume.lacks_below(max(expected) + 1)
    # a gap: everything below it is held, the window after it is checked one by one
    docs = yield stored_docs(osmem_url)
    gap = sorted(expected)[len(expected) // 2]
    yield client.request("DELETE", f"/{docs[gap]['_index']}/_doc/2.9.{gap}")
    resume = yield find_resume(client, "chain-", None, window=6)
    assert not resume.holds(expected[gap][1], gap) and resume.lacks_below(gap + 1)
    assert all(resume.holds(m, n) for n, (_a, m, _b) in expected.items()
               if m < expected[gap][1] or n in resume.stored)
    assert 0 < len(resume.stored) <= 6 and resume.window_op < top
    full = yield find_resume(client, "chain-", None)
    assert full.stored | {gap} >= {n for n in expected if expected[n][1] >= full.lo_op}
    assert all(full.holds(m, n) for n, (_a, m, _b) in expected.items() if n != gap)
    yield client.close()


def test_lacking_entries_of_an_operation():
    """Resume.lacking: what of one operation's documents is still to write."""
    resume = Resume(lo_op=5, upto_ath=10, stored={12, 14}, window_op=7)
    entries = [(11, "a"), (12, "b"), (13, "c")]
    assert resume.lacking(4, entries) == []  # below lo_op: stored completely
    assert resume.lacking(6, [(9, "x"), (10, "y")]) == []  # up to upto_ath
    assert resume.lacking(6, entries) == [(11, "a"), (13, "c")]  # 12 in the window
    assert resume.lacking(7, [(14, "d"), (15, "e")]) == [(15, "e")]
    assert resume.lacking(8, [(16, "f")]) == [(16, "f")]  # past the window: none held
