"""What the in-memory account_history plugin keeps under bitshares-core's
options (max-ops-per-account, extended limits by account and registrar,
min-blocks-to-keep, max-ops-per-acc-by-min-blocks, track-account,
partial-operations), checked against a transliteration of
account_history_plugin.cpp, one test per option, and over the history API
(libraries/app/api.cpp history_api over trimmed history)."""

import random

import pytest

from nodeapi.api.base import Session
from nodeapi.api.history import HistoryApi
from nodeapi.applied import AppliedBlock, AppliedOperation
from nodeapi.plugins.account_history.history import AccountHistory
from nodeapi.plugins.account_history.plugin import history_limits
from nodeapi.plugins.account_history.retention import UNLIMITED, HistoryLimits
from nodeapi.node import ApiLimits, Node

from kit.history import SyntheticNumbering

T0 = 1_451_606_400


def _instance(account: str) -> int:
    return int(account.rsplit(".", 1)[1])


class Feed:
    """Applies synthetic blocks to a plugin: ``feed.block([accounts, ...])``
    makes one transfer-like operation per list (type ``optype`` when given
    as ``(optype, accounts)``), numbered 1.11.M from 0 like the chain."""

    def __init__(self, hist):
        self.hist, self.m, self.num, self.ops = hist, 0, 0, []
        self.numbering = SyntheticNumbering()  # the chain's 2.9 rule

    def block(self, *op_accounts, skip=0):
        self.num += 1 + skip
        ops = []
        for i, spec in enumerate(op_accounts):
            optype, accounts = spec if isinstance(spec, tuple) else (0, spec)
            accounts = tuple(sorted(set(accounts), key=_instance))
            payer = accounts[0] if accounts else "1.2.0"
            op = AppliedOperation(self.m, [optype, {"fee": {"amount": self.m, "asset_id": "1.3.0"},
                                                    "from": payer}],
                                  [0, {}], self.num, i, 0, 0, False, "ab" * 20, payer, accounts)
            op = self.numbering.numbered(op)
            ops.append(op)
            self.ops.append((op, self.num))
            self.m += 1
        self.hist.block_applied(AppliedBlock(self.num, "%040x" % self.num, {}, T0 + 3 * self.num,
                                             tuple(ops), False))
        return [op.id_num for op in ops]


def kept(hist, account):
    """The account's kept 1.11 instances, oldest first."""
    return [int(e["id"].split(".")[2])
            for e in reversed(hist.get_relative_account_history(account, 0, 10 ** 6, 0))]


def ids(entries):
    return [int(e["id"].split(".")[2]) for e in entries]


class Reference:
    """account_history_plugin.cpp (update_account_histories,
    add_account_history, get_max_ops_to_keep,
    remove_old_histories_by_account, remove_old_histories,
    check_and_remove_op_history_obj), transliterated without indexes."""

    def __init__(self, lim: HistoryLimits, registrar_of):
        self.lim, self.registrar_of = lim, registrar_of
        self.max_ops = lim.max_ops_per_account
        self.ext_max = max(lim.extended_max_ops_per_account, self.max_ops)
        self.by_blocks = max(lim.max_ops_per_acc_by_min_blocks, self.max_ops)
        self.aho = {}  # account -> [m] oldest first
        self.stats = {}  # account -> [total_ops, removed_ops]
        self.oho = {}  # m -> block_num
        self.exa = {}  # account -> block_num
        self.latest = 0

    def block(self, num, ops):
        lim = self.lim
        keep = lim.min_blocks_to_keep
        self.latest = num - keep if num > keep else 0
        for m, impacted in ops:
            if self.max_ops == 0 and lim.partial_operations:
                continue
            made = not lim.partial_operations
            if made:
                self.oho[m] = num
            if not lim.track_accounts:
                if impacted and not made:
                    self.oho[m], made = num, True
                if self.max_ops > 0:
                    for a in impacted:
                        self.add(a, m)
            elif self.max_ops > 0:
                for a in sorted(lim.track_accounts, key=_instance):
                    if a in impacted:
                        if not made:
                            self.oho[m], made = num, True
                        self.add(a, m)
        while self.latest:
            due = sorted((b, a) for a, b in self.exa.items() if b <= self.latest)
            if not due:
                break
            self.trim(due[0][1])

    def add(self, a, m):
        self.aho.setdefault(a, []).append(m)
        self.stats.setdefault(a, [0, 0])[0] += 1
        self.trim(a)

    def keep(self, a):
        ext = a in self.lim.extended_history_accounts or (
            bool(self.lim.extended_history_registrars)
            and self.registrar_of(a) in self.lim.extended_history_registrars)
        keep = self.ext_max if ext and self.ext_max > self.max_ops else self.max_ops
        return keep or 1

    def trim(self, a):
        total, removed = self.stats[a]
        n_remove = max(total - self.keep(a), 0)
        n_by_blocks = max(total - self.by_blocks, 0)
        lst = self.aho[a]
        oldest = self.latest
        while removed < n_remove and len(lst) > 1:
            oldest = self.oho[lst[0]]
            if oldest > self.latest and removed >= n_by_blocks:
                break
            m = lst.pop(0)
            removed += 1
            if self.lim.partial_operations and not any(m in v for v in self.aho.values()):
                del self.oho[m]
        self.stats[a][1] = removed
        if removed < n_remove:
            self.exa[a] = oldest
        else:
            self.exa.pop(a, None)


ACCOUNTS = [f"1.2.{i}" for i in range(6, 26)]
REGISTRAR = {a: ACCOUNTS[_instance(a) % 3] for a in ACCOUNTS}


def random_limits(rng) -> HistoryLimits:
    some = lambda k: set(rng.sample(ACCOUNTS, k))  # noqa: E731
    return HistoryLimits(
        max_ops_per_account=rng.choice([0, 1, 2, 5, 12, UNLIMITED]),
        extended_max_ops_per_account=rng.choice([0, 3, 20, UNLIMITED]),
        min_blocks_to_keep=rng.choice([0, 1, 4, 25, 30000]),
        max_ops_per_acc_by_min_blocks=rng.choice([0, 3, 8, 1000]),
        partial_operations=rng.random() < 0.6,
        track_accounts=rng.choice([set(), set(), some(3), some(8)]),
        extended_history_accounts=rng.choice([set(), some(2)]),
        extended_history_registrars=rng.choice([set(), {ACCOUNTS[1]}]))


@pytest.mark.parametrize("seed", range(60))
def test_matches_the_reference_plugin(seed):
    rng = random.Random(seed)
    lim = random_limits(rng)
    hist = AccountHistory(lim, registrar_of=REGISTRAR.__getitem__)
    ref = Reference(lim, REGISTRAR.__getitem__)
    feed = Feed(hist)
    hot = ACCOUNTS[:4]
    for _ in range(rng.randrange(40, 120)):
        specs = [rng.sample(hot if rng.random() < 0.5 else ACCOUNTS, rng.choice([1, 2, 2, 3]))
                 for _ in range(rng.randrange(0, 6))]
        if rng.random() < 0.05:
            specs.append([])  # an operation impacting no account
        skip = rng.choice([0, 0, 0, 3, 30])
        first = feed.m
        feed.block(*specs, skip=skip)
        ref.block(feed.num, [(first + i, {a for a in spec}) for i, spec in enumerate(specs)])
    for a in ACCOUNTS:
        total, removed = ref.stats.get(a, (0, 0))
        assert (hist.account_total_ops(a), hist.account_removed_ops(a)) == (total, removed), a
        assert kept(hist, a) == ref.aho.get(a, []), a
        newest_first = ids(hist.get_account_history(a, 0, 10 ** 6, 0))
        assert newest_first == ref.aho.get(a, [])[::-1]
    assert {m for m in range(feed.m) if hist.get_operation(m) is not None} == set(ref.oho)
    assert hist.operation_count == len(ref.oho)
    assert hist.retention.exceeded_count == len(ref.exa)


def test_max_ops_per_account_trims_by_count_and_never_renumbers():
    hist = AccountHistory(HistoryLimits(max_ops_per_account=3, min_blocks_to_keep=0))
    feed = Feed(hist)
    ms = [feed.block(["1.2.6", "1.2.7"] if i % 2 else ["1.2.6"])[0] for i in range(10)]
    assert kept(hist, "1.2.6") == ms[-3:]
    assert (hist.account_total_ops("1.2.6"), hist.account_removed_ops("1.2.6")) == (10, 7)
    assert kept(hist, "1.2.7") == [ms[5], ms[7], ms[9]]
    # sequence numbers go on: 10, 9, 8 are kept, 7 and below are gone
    rel = hist.get_relative_account_history
    assert ids(rel("1.2.6", 0, 100, 0)) == ms[:-4:-1]
    assert ids(rel("1.2.6", 9, 100, 10)) == [ms[9], ms[8]]
    assert ids(rel("1.2.6", 0, 2, 9)) == [ms[8], ms[7]]
    assert rel("1.2.6", 0, 100, 7) == []  # start is a removed entry
    assert ids(rel("1.2.6", 5, 100, 8)) == [ms[7]]
    assert ids(rel("1.2.6", 0, 100, 100)) == ms[:-4:-1]
    assert ids(hist.get_account_history("1.2.6", 0, 100, ms[8])) == [ms[8], ms[7]]
    # without partial-operations every operation object stays
    assert hist.operation_count == 10 and hist.get_operation(0)["id"] == "1.11.0"


def test_zero_max_ops_keeps_no_account_history():
    hist = AccountHistory(HistoryLimits(max_ops_per_account=0))
    Feed(hist).block(["1.2.6"], ["1.2.7"])
    assert hist.get_account_history("1.2.6", 0, 10, 0) == []
    assert hist.account_total_ops("1.2.6") == 0 and hist.operation_count == 2
    partial = AccountHistory(HistoryLimits(max_ops_per_account=0, partial_operations=True))
    Feed(partial).block(["1.2.6"])
    assert partial.operation_count == 0


def test_min_blocks_to_keep_protects_recent_operations():
    lim = HistoryLimits(max_ops_per_account=2, min_blocks_to_keep=5,
                        max_ops_per_acc_by_min_blocks=4)
    hist = AccountHistory(lim)
    feed = Feed(hist)
    ms = [feed.block(["1.2.6"])[0] for _ in range(6)]  # blocks 1..6
    # block 6: only block 1 is out of the window; entries beyond 4 go anyway
    assert kept(hist, "1.2.6") == ms[2:]
    assert hist.retention.exceeded_count == 1
    feed.block(["1.2.9"])  # block 7: blocks <= 2 may go
    assert kept(hist, "1.2.6") == ms[2:]
    feed.block(["1.2.9"])  # block 8: block 3 leaves the window
    assert kept(hist, "1.2.6") == ms[3:]
    feed.block(skip=10)  # much later: trimmed to max-ops-per-account without new ops
    assert kept(hist, "1.2.6") == ms[4:]
    assert hist.retention.exceeded_count == 0
    assert hist.account_removed_ops("1.2.6") == 4


def test_track_account_keeps_only_the_tracked():
    lim = HistoryLimits(track_accounts={"1.2.7", "1.2.9"}, partial_operations=True)
    hist = AccountHistory(lim)
    ms = Feed(hist).block(["1.2.6", "1.2.7"], ["1.2.6", "1.2.8"], ["1.2.9"])
    assert kept(hist, "1.2.7") == [ms[0]] and kept(hist, "1.2.9") == [ms[2]]
    assert hist.get_account_history("1.2.6", 0, 10, 0) == []
    assert hist.account_total_ops("1.2.6") == 0
    # the operation of untracked accounts only is not kept; the chain's numbers are
    assert hist.get_operation(ms[1]) is None and hist.operation_count == 2
    assert hist.get_operation(ms[2])["id"] == "1.11.2"


def test_extended_history_by_account_and_by_registrar():
    lim = HistoryLimits(max_ops_per_account=1, extended_max_ops_per_account=3,
                        min_blocks_to_keep=0, extended_history_accounts={"1.2.7"},
                        extended_history_registrars={"1.2.20"})
    registrars = {"1.2.6": "1.2.6", "1.2.7": "1.2.6", "1.2.8": "1.2.20"}
    hist = AccountHistory(lim, registrar_of=registrars.__getitem__)
    feed = Feed(hist)
    ms = [feed.block(["1.2.6", "1.2.7", "1.2.8"])[0] for _ in range(5)]
    assert kept(hist, "1.2.6") == ms[-1:]
    assert kept(hist, "1.2.7") == ms[-3:] and kept(hist, "1.2.8") == ms[-3:]
    # an extended limit below max-ops-per-account is raised to it
    low = AccountHistory(HistoryLimits(max_ops_per_account=2, extended_max_ops_per_account=1,
                                       min_blocks_to_keep=0, extended_history_accounts={"1.2.7"}))
    feed = Feed(low)
    ms = [feed.block(["1.2.7"])[0] for _ in range(4)]
    assert kept(low, "1.2.7") == ms[-2:]
    with pytest.raises(ValueError, match="registrar"):
        AccountHistory(HistoryLimits(extended_history_registrars={"1.2.6"}))


def test_partial_operations_drop_objects_nobody_keeps():
    lim = HistoryLimits(max_ops_per_account=1, extended_max_ops_per_account=2,
                        min_blocks_to_keep=0, partial_operations=True,
                        extended_history_accounts={"1.2.7"})
    hist = AccountHistory(lim)
    feed = Feed(hist)
    shared = feed.block(["1.2.6", "1.2.7"])[0]
    feed.block(["1.2.6"])
    # 1.2.6 dropped it, 1.2.7 still keeps it
    assert kept(hist, "1.2.6") == [1] and hist.get_operation(shared) is not None
    feed.block(["1.2.7"])
    assert hist.get_operation(shared) is not None
    feed.block(["1.2.7"])
    assert hist.get_operation(shared) is None and hist.operation_count == 3
    # the same history without partial-operations keeps the object
    full = AccountHistory(HistoryLimits(max_ops_per_account=1, min_blocks_to_keep=0))
    feed = Feed(full)
    for accounts in (["1.2.6", "1.2.7"], ["1.2.6"], ["1.2.7"], ["1.2.7"]):
        feed.block(accounts)
    assert full.get_operation(0)["id"] == "1.11.0" and full.operation_count == 4


def test_operations_walk_ends_at_the_oldest_kept_entry():
    hist = AccountHistory(HistoryLimits(max_ops_per_account=2, min_blocks_to_keep=0))
    feed = Feed(hist)
    feed.block((5, ["1.2.6"]))  # 2.9.0 belongs to 1.2.6
    ops = hist.get_account_history_operations
    assert ops("1.2.6", 5, 0, 0, 10) == []  # graphene: most_recent_op == 2.9.0
    feed.block((0, ["1.2.6"]))
    assert ids(ops("1.2.6", 5, 0, 0, 10)) == [0]  # 2.9.0 itself through the stop-0 case
    feed.block((5, ["1.2.6"]), (5, ["1.2.6"]))  # 2.9.0 and the next are trimmed
    assert kept(hist, "1.2.6") == [2, 3]
    assert ids(ops("1.2.6", 5, 0, 0, 10)) == [3, 2]
    assert ids(ops("1.2.6", 5, 0, 2, 10)) == [3]
    assert ids(ops("1.2.6", 0, 0, 0, 10)) == []


@pytest.fixture
def trimmed(chain):
    """init0 (1.2.6) and init1 (1.2.7) with trimmed histories, over the
    history API of a node on a real chain (names resolve there)."""
    lim = HistoryLimits(max_ops_per_account=3, min_blocks_to_keep=0, partial_operations=True,
                        extended_max_ops_per_account=5, extended_history_registrars={"1.2.7"})
    hist = AccountHistory(lim, registrar_of=lambda a: chain.state.get(a)["registrar"])
    feed = Feed(hist)
    for i in range(8):
        feed.block((i % 2, ["1.2.6", "1.2.7"]))
    api = HistoryApi(Node(chain=chain, plugins={"account_history": hist}, limits=ApiLimits()), Session())
    return api, hist


def test_history_api_answers_what_is_kept(trimmed):
    api, hist = trimmed
    assert ids(api.call("get_account_history", ["init0", "1.11.0", 100, "1.11.0"])) == [7, 6, 5]
    # init1 registered itself: the extended limit by registrar
    assert ids(api.call("get_account_history", ["init1", "1.11.0", 100, "1.11.0"])) == \
        [7, 6, 5, 4, 3]
    assert ids(api.call("get_relative_account_history", ["init0", 0, 100, 0])) == [7, 6, 5]
    assert ids(api.call("get_relative_account_history", ["init0", 7, 100, 8])) == [7, 6]
    assert api.call("get_relative_account_history", ["init0", 0, 100, 5]) == []
    assert ids(api.call("get_relative_account_history", ["init1", 1, 2, 5])) == [4, 3]
    assert ids(api.call("get_account_history_operations",
                        ["init0", 1, "1.11.0", "1.11.0", 100])) == [7, 5]
    assert ids(api.call("get_account_history_operations",
                        ["init1", 0, "1.11.0", "1.11.0", 100])) == [6, 4]
    assert api.call("get_account_history", ["init2", "1.11.0", 100, "1.11.0"]) == []
    # 1.11.0 .. 1.11.2 are gone for everyone (partial-operations)
    assert [hist.get_operation(m) is None for m in range(8)] == [True] * 3 + [False] * 5


def test_the_daemon_builds_the_plugin_from_its_options(tmp_path):
    from twisted.internet.testing import MemoryReactorClock

    from nodeapi.config import Options
    from nodeapi.tap import makeService

    options = Options()
    options.parseOptions(["--data-dir", str(tmp_path / "data"), "--max-ops-per-account", "2",
                          "--extended-max-ops-per-account", "9", "--min-blocks-to-keep", "0",
                          "--extended-history-by-registrar", "1.2.7",
                          "--partial-operations", "true"])
    top = makeService(options, MemoryReactorClock())
    hist = top.node.plugins["account_history"]
    assert hist.retention.limits == history_limits(options)
    # the registrar comes from the chain state: init1 (1.2.7) registered itself
    assert hist.retention.new_log("1.2.7").keep == 9
    assert hist.retention.new_log("1.2.6").keep == 2


def test_entries_by_id_and_bounded_lookups_under_trimming():
    """get_objects("2.9.N") answers exactly the kept entries (their
    sequence, and ``next`` reset to 2.9.0 on an account's oldest kept one)
    after heavy trimming with partial-operations, and the lookup rows stay
    in proportion to what is kept (dropped operations are compacted away)."""
    from nodeapi.plugins.account_history.lookups import MIN_DEAD_ROWS

    hist = AccountHistory(HistoryLimits(max_ops_per_account=5, partial_operations=True,
                                        min_blocks_to_keep=0))
    feed = Feed(hist)
    rng = random.Random(3)
    accounts = [f"1.2.{i}" for i in range(17, 57)]
    for _ in range(1500):
        feed.block(*[rng.sample(accounts, 2) for _ in range(4)])
    held = {a: set(kept(hist, a)) for a in accounts}
    op_of = {e.n: op.id_num for op, _num in feed.ops for e in op.account_history}
    assert len(op_of) == hist.entry_count == 1500 * 4 * 2
    answers = hist.get_history_objects([f"2.9.{n}" for n in range(hist.entry_count + 2)])
    expected = {}
    for op, _num in feed.ops:
        for e in op.account_history:
            if op.id_num not in held[e.account]:
                continue
            prev_held = e.sequence > 1 and op_of[e.next_n] in held[e.account]
            next_n = e.next_n if prev_held else 0
            expected[f"2.9.{e.n}"] = {"id": f"2.9.{e.n}", "account": e.account,
                                      "operation_id": f"1.11.{op.id_num}",
                                      "sequence": e.sequence, "next": f"2.9.{next_n}"}
    assert answers == expected
    assert len(expected) == 5 * len(accounts)
    # 6,000 operations applied, at most 200 kept: the rows were compacted
    assert hist.operation_count <= 5 * len(accounts)
    assert hist.lookups.row_count <= 2 * hist.operation_count + MIN_DEAD_ROWS
