"""The in-memory account_history plugin, the chain's ohi/ath numbering and
the history API set, on a real chain (python-bitshares-signed transfers,
account creation, asset issue, order fills)."""

import pytest
import pytest_twisted

from nodeapi.api.base import Session
from nodeapi.api.history import HistoryApi, parse_operation_history_id
from nodeapi.applied import AppliedOperation
from nodeapi.chain.chain import Chain
from nodeapi.chain.numbering import history_accounts
from nodeapi.errors import ApiError
from nodeapi.plugins.account_history.history import AccountHistory
from nodeapi.node import ApiLimits, Node

from kit.chain import INIT
from kit.history import SyntheticNumbering


def reference_entries(blocks):
    """All ath entries computed independently: [(n, account, M, seq, next)]."""
    out, last, count = [], {}, {}
    n = 0
    for b in blocks:
        for op in b.operations:
            accts = set(op.impacted)
            if op.op[0] == 5:
                accts.add(op.result[1])
            for a in sorted(accts, key=lambda x: int(x.split(".")[2])):
                count[a] = count.get(a, 0) + 1
                out.append((n, a, op.id_num, count[a], last.get(a, 0)))
                last[a] = n
                n += 1
    return out


def ref_account_history(entries, account, stop, limit, start):
    """graphene history_api::get_account_history over the by_op index
    (account asc, operation id desc)."""
    if start == 0:
        start = 2 ** 63
    if start < stop:
        return []
    keys = sorted((e[1], -e[2]) for e in entries)

    def lower_bound(key):
        for i, k in enumerate(keys):
            if k >= key:
                return i
        return len(keys)
    itr = lower_bound((account, -start))
    end = lower_bound((account, -stop))
    res = []
    while itr != end and len(res) < limit:
        res.append(-keys[itr][1])
        itr += 1
    if stop == 0 and len(res) < limit and itr != len(keys) and keys[itr][0] == account:
        res.append(-keys[itr][1])
    return res


def ref_relative(entries, account, stop, limit, start):
    seqs = [(e[3], e[2]) for e in entries if e[1] == account]
    total = len(seqs)
    start = total if start == 0 else min(total, start)
    res = []
    if start >= stop and start > 0 and limit > 0:
        for seq, m in sorted(seqs, reverse=True):
            if seq <= start and seq >= max(stop, 1) and len(res) < limit:
                res.append(m)
    return res


def ref_operations(entries, optype, account, op_type, start, stop, limit):
    """graphene get_account_history_operations: walk `next` links."""
    by_n = {e[0]: e for e in entries}
    mine = [e for e in entries if e[1] == account]
    if not mine or mine[-1][0] == 0:
        return []
    node = mine[-1]
    if start == 0:
        start = node[2]
    res = []
    while node is not None and node[2] > stop and len(res) < limit:
        if node[2] <= start and optype[node[2]] == op_type:
            res.append(node[2])
        node = None if node[4] == 0 else by_n[node[4]]
    if stop == 0 and len(res) < limit:
        head = by_n.get(0)
        if head and head[1] == account and optype[head[2]] == op_type:
            res.append(head[2])
    return res


def ids(entries_list):
    return [int(e["id"].split(".")[2]) for e in entries_list]


def test_numbering_matches_reference(built):
    chain, rec, hist, info = built
    got = []
    for b in rec.blocks:
        for op in b.operations:
            for n, a, seq, nxt in op.account_history:
                got.append((n, a, op.id_num, seq, nxt))
    ref = reference_entries(rec.blocks)
    assert got == ref
    assert chain._numbering.next_ath == len(ref)
    # account_create: the new account gets an entry (result), fee payer too
    creates = [e for e in ref if e[2] in (1, 2)]
    assert [(e[0], e[1], e[3], e[4]) for e in creates] == [
        (1, "1.2.6", 2, 0), (2, info["accounts"][0], 1, 0),
        (3, "1.2.6", 3, 1), (4, info["accounts"][1], 1, 0)]
    # next links point to the account's previous entry
    last = {}
    for n, a, _m, seq, nxt in ref:
        assert nxt == last.get(a, 0)
        last[a] = n
    totals = {}
    for e in ref:
        totals[e[1]] = e[3]
    assert {a: hist.account_total_ops(a) for a in totals} == totals


def test_impacted_account_create_sorted():
    assert history_accounts([5, {}], [1, "1.2.10"], ("1.2.6", "1.2.100")) == (
        "1.2.6", "1.2.10", "1.2.100")


def test_entries_shape(built):
    chain, rec, hist, info = built
    entry = hist.get_operation(4)
    assert list(entry) == ["id", "op", "result", "block_num", "trx_in_block", "op_in_trx",
                           "virtual_op", "is_virtual", "block_time"]
    assert entry["id"] == "1.11.4" and entry["op"][0] == 0
    fills = [hist.get_operation(m) for m in range(hist.operation_count)
             if hist.get_operation(m)["op"][0] == 4]
    assert fills and all(f["is_virtual"] and f["virtual_op"] >= 1 for f in fills)
    assert {f["block_time"][:7] for f in fills} == {"2016-01", "2016-02"}


def test_records_answer_the_applied_operations(built):
    """The compact records give back exactly what the chain applied."""
    chain, rec, hist, info = built
    for b in rec.blocks:
        for op in b.operations:
            assert hist.get_operation(op.id_num) == {
                "id": op.id, "op": op.op, "result": op.result, "block_num": op.block_num,
                "trx_in_block": op.trx_in_block, "op_in_trx": op.op_in_trx,
                "virtual_op": op.virtual_op, "is_virtual": op.is_virtual,
                "block_time": b.time_iso}
    assert hist.operation_count == sum(len(b.operations) for b in rec.blocks)


def test_get_account_history_matches_graphene(built):
    chain, rec, hist, info = built
    entries = reference_entries(rec.blocks)
    top = hist.operation_count
    accounts = ["1.2.6", INIT[1], INIT[2], info["accounts"][0], "1.2.3"]
    checked = 0
    for account in accounts:
        for stop in (0, 1, 4, 9, 17, top):
            for start in (0, 1, 5, 10, 17, 25, top + 5):
                for limit in (0, 1, 3, 100):
                    got = ids(hist.get_account_history(account, stop, limit, start))
                    assert got == ref_account_history(entries, account, stop, limit, start), (
                        account, stop, limit, start)
                    checked += 1
    assert checked > 500
    # python-bitshares' first call: everything, newest first, op 0 included
    allops = ids(hist.get_account_history("1.2.6", 0, 100, 0))
    assert allops == sorted(allops, reverse=True) and allops[-1] == 0


def test_relative_and_operations_match_graphene(built):
    chain, rec, hist, info = built
    entries = reference_entries(rec.blocks)
    optype = {op.id_num: op.op[0] for b in rec.blocks for op in b.operations}
    top = hist.operation_count
    for account in ["1.2.6", INIT[1], INIT[3], info["accounts"][1], "1.2.3"]:
        for stop in (0, 1, 2, 5, 40):
            for start in (0, 1, 3, 6, 100):
                for limit in (0, 2, 100):
                    assert ids(hist.get_relative_account_history(account, stop, limit, start)) \
                        == ref_relative(entries, account, stop, limit, start)
        for op_type in (0, 1, 4, 5, 14, 37):
            for start in (0, 3, 12, top):
                for stop in (0, 2, 9):
                    for limit in (1, 100):
                        got = ids(hist.get_account_history_operations(
                            account, op_type, start, stop, limit))
                        assert got == ref_operations(entries, optype, account, op_type,
                                                     start, stop, limit)


def test_ath0_quirk():
    """An account whose only entry is 2.9.0 reads as having none in
    get_account_history_operations (graphene most_recent_op check)."""
    numbering = SyntheticNumbering()

    def Op(m, accts):
        return numbering.numbered(AppliedOperation(m, [0, {}], [0, {}], 0, 0, 0, 0, False,
                                                   "00" * 20, accts[0], accts))

    class Block:
        block_num, timestamp = 1, 1451606400

        def __init__(self, ops):
            self.operations = ops
            self.block_num = ops[0].id_num + 1
    hist = AccountHistory()
    hist.block_applied(Block([Op(0, ("1.2.5", "1.2.6")), Op(1, ("1.2.6",))]))
    assert hist.get_account_history_operations("1.2.5", 0, 0, 0, 10) == []
    assert ids(hist.get_account_history("1.2.5", 0, 10, 0)) == [0]
    # graphene walks `next` links and its stop-0 special case only covers
    # 2.9.0 itself: op 0 reached through 2.9.1 stays out
    assert ids(hist.get_account_history_operations("1.2.6", 0, 0, 0, 10)) == [1]
    assert ids(hist.get_account_history("1.2.6", 0, 10, 0)) == [1, 0]
    hist.block_applied(Block([Op(2, ("1.2.5",))]))
    assert ids(hist.get_account_history_operations("1.2.5", 0, 0, 0, 10)) == [2, 0]
    assert ids(hist.get_account_history_operations("1.2.5", 0, 0, 1, 10)) == [2]


@pytest_twisted.inlineCallbacks
def test_replay_rebuilds_same_history(built, genesis):
    chain, rec, hist, info = built
    again = AccountHistory()
    replayed = Chain(genesis, chain.block_log)
    replayed.add_consumer(again)
    yield replayed.replay()
    for account in ["1.2.6", INIT[1], info["accounts"][0]]:
        assert again.get_account_history(account, 0, 100, 0) == \
            hist.get_account_history(account, 0, 100, 0)
        assert again.get_relative_account_history(account, 0, 100, 0) == \
            hist.get_relative_account_history(account, 0, 100, 0)


def _api(chain, history, limits=None):
    node = Node(chain=chain, plugins={"account_history": history}, limits=limits or ApiLimits())
    return HistoryApi(node, Session())


def test_history_api(built):
    chain, rec, hist, info = built
    api = _api(chain, hist)
    by_id = api.call("get_account_history", ["1.2.6", "1.11.0", 100, "1.11.0"])
    assert by_id == api.call("get_account_history", ["init0", "1.11.0", "100", "1.11.0"])
    assert by_id == hist.get_account_history("1.2.6", 0, 100, 0)
    assert ids(api.call("get_account_history", ["init0", "1.11.3", 2, "1.11.10"])) == [10, 9]
    assert api.call("get_account_history", ["init0", "1.11.10", 5, "1.11.3"]) == []
    # python-bitshares' asyncio Account.history() starts at "1.11.-1": the newest
    assert api.call("get_account_history", ["init0", "1.11.0", 100, "1.11.-1"]) == by_id
    assert ids(api.call("get_account_history_operations",
                        ["init0", 5, "1.11.-1", "1.11.0", 10])) == [2, 1]
    assert api.call("get_account_history", ["nobody-here", "1.11.0", 5, "1.11.0"]) == []
    assert api.call("get_account_history", ["1.2.999", "1.11.0", 5, "1.11.0"]) == []
    rel = api.call("get_relative_account_history", ["alice-1", 0, 100, 0])
    assert ids(rel) == ids(hist.get_relative_account_history(info["accounts"][0], 0, 100, 0))
    ops = api.call("get_account_history_operations", ["init0", 5, "1.11.0", "1.11.0", 10])
    assert ids(ops) == [2, 1]
    for fn, args in [("get_account_history", ["init0", "1.11.0", 101, "1.11.0"]),
                     ("get_relative_account_history", ["init0", 0, 101, 0]),
                     ("get_account_history_operations", ["init0", 0, "1.11.0", "1.11.0", 101])]:
        with pytest.raises(ApiError, match="limit can not be greater than 100"):
            api.call(fn, args)
    small = _api(chain, hist, ApiLimits(get_account_history=3))
    with pytest.raises(ApiError, match="limit can not be greater than 3"):
        small.call("get_account_history", ["init0", "1.11.0", 4, "1.11.0"])
    with pytest.raises(ApiError, match="1.11.N"):
        api.call("get_account_history", ["init0", "1.2.0", 10, "1.11.0"])
    with pytest.raises(ApiError, match="out of range"):
        api.call("get_relative_account_history", ["init0", -1, 10, 0])
    with pytest.raises(ApiError):
        api.call("get_account_history", ["init0", "1.11.0", 10])
    assert _api(chain, None).call("get_account_history", ["init0", "1.11.0", 10, "1.11.0"]) == []
    assert set(HistoryApi.function_names()) == {
        "get_account_history", "get_account_history_operations", "get_relative_account_history",
        "get_account_history_by_time", "get_account_history_by_operations",
        "get_block_operation_history", "get_block_operations_by_time",
        "get_fill_order_history", "get_market_history", "get_market_history_buckets",
        "get_liquidity_pool_history", "get_liquidity_pool_history_by_sequence"}


def test_parse_operation_history_id():
    assert parse_operation_history_id("1.11.42", "x") == 42
    assert parse_operation_history_id(7, "x") == 7
    # fc wraps a negative instance modulo 2^64 (boost lexical_cast<uint64_t>)
    assert parse_operation_history_id("1.11.-1", "x") == (1 << 64) - 1
    assert parse_operation_history_id("1.11.-5", "x") == (1 << 64) - 5
    for bad in ("1.11.", "1.11.-", "1.11.--1", "1.11.-x", "1.11.x", "2.9.1", True, None,
                "1.11.1e3", "1.11.-18446744073709551616"):
        with pytest.raises(ApiError):
            parse_operation_history_id(bad, "x")
