"""Identical subscribing reads of many clients within one block share one
upstream call (nodeapi.gateway.read_share): a real upstream site whose metrics count
the ``get_full_accounts`` calls it answers, the gateway (kit.gateway)
with 20 real WebSocket wallets opening at once, each then notified of its
account's change as if it had read alone; the share's rules on a test
clock (in flight, same head and age, a new head, a failure, the bound)."""

import orjson
import pytest
import pytest_twisted
from twisted.internet import defer, reactor, task

from nodeapi.gateway.read_share import ReadShare
from nodeapi.metrics import Metrics
from nodeapi.rpc.access import ApiAccess

from kit.access import VECTORS
from kit.chain import produce, transfer_op
from kit.gateway import GatewaySite
from kit.rpc import ws_connect
from kit.signing import sign
from kit.site import RunningSite, make_node
from kit.wait import wait_for


@pytest.fixture
def upstream(funded):
    """An upstream site whose metrics count the calls it answers."""
    site = RunningSite(make_node(funded), ApiAccess.from_json(VECTORS),
                       metrics=Metrics(None, clock=reactor))
    yield site
    site.stop_blocking()


def full_accounts_calls(site) -> float:
    return site.site.ws_factory.metrics.registry.get_sample_value(
        "nodeapi_rpc_calls_total",
        {"api": "database", "function": "get_full_accounts", "outcome": "ok"}) or 0


@pytest_twisted.inlineCallbacks
def test_wallets_opening_at_once_cost_one_upstream_read(funded, upstream):
    gw = GatewaySite([f"ws://127.0.0.1:{upstream.port}"], ApiAccess.from_json(VECTORS))
    yield gw.start()
    try:
        wallets = []
        for _ in range(20):
            wallets.append((yield ws_connect(gw.port)))
        for i, wallet in enumerate(wallets):
            yield wallet.call("database", "set_subscribe_callback", i, False)
        before = full_accounts_calls(upstream)
        answers = yield defer.gatherResults(
            [w.call("database", "get_full_accounts", ["init1"], True) for w in wallets])
        assert full_accounts_calls(upstream) - before == 1
        assert len({orjson.dumps(a) for a in answers}) == 1
        assert answers[0][0][1]["account"]["id"] == "1.2.7"
        shares = [s.read_share.shared for s in gw.hub.shards]
        assert sum(shares) == 19
        # each wallet holds its own subscription: all are told of a payment
        funded.push_transaction(sign(funded, [transfer_op(700)]))  # init0 -> init1
        produce(funded)
        yield wait_for(lambda: all(w.notices for w in wallets), timeout=10.0)
        assert sorted(w.notices[0][0] for w in wallets) == list(range(20))
        for wallet in wallets:
            wallet.dropConnection()
    finally:
        yield gw.stop()


# -- the rules --------------------------------------------------------------------------

class Sender:
    """``send()`` Deferreds the test fires by hand."""

    def __init__(self):
        self.sent = []

    def __call__(self):
        d = defer.Deferred()
        self.sent.append(d)
        return d


def _results(ds):
    out = []
    for d in ds:
        d.addBoth(out.append)
    return out


def test_a_read_in_flight_is_shared_then_its_answer_within_the_block():
    clock, send = task.Clock(), Sender()
    share = ReadShare(clock, max_age=1.0)
    link = object()
    got = _results([share.ask("get_accounts", [["a"], True], link, 1, 10, send)
                    for _ in range(3)])
    assert len(send.sent) == 1 and got == []
    send.sent[0].callback(b"[1]")
    assert got == [b"[1]"] * 3 and share.shared == 2
    # answered: shared while link, generation and head are the same, for max_age
    clock.advance(1.0)
    assert _results([share.ask("get_accounts", [["a"], True], link, 1, 10, send)]) == [b"[1]"]
    assert len(send.sent) == 1
    clock.advance(0.5)  # too old
    share.ask("get_accounts", [["a"], True], link, 1, 10, send)
    assert len(send.sent) == 2
    send.sent[1].callback(b"[2]")
    # another head, generation, link or argument: sent again
    for head, generation, other, args in ((11, 1, link, [["a"], True]),
                                          (10, 2, link, [["a"], True]),
                                          (10, 1, object(), [["a"], True]),
                                          (10, 1, link, [["b"], True])):
        share.ask("get_accounts", args, other, generation, head, send)
    assert len(send.sent) == 6


def test_new_head_ends_answered_reads_not_those_in_flight():
    clock, send = task.Clock(), Sender()
    share = ReadShare(clock)
    link = object()
    share.ask("get_objects", [["1.2.7"], True], link, 0, None, send)
    share.ask("get_assets", [["TEST"], True], link, 0, 5, send)
    send.sent[1].callback(b"[]")
    share.new_head()
    assert len(share) == 1  # the read in flight
    got = _results([share.ask("get_objects", [["1.2.7"], True], link, 0, None, send)])
    send.sent[0].callback(b"[7]")
    assert got == [b"[7]"] and len(send.sent) == 2
    # an unknown head: an answered read is not shared
    share.ask("get_objects", [["1.2.7"], True], link, 0, None, send)
    assert len(send.sent) == 3


def test_a_failure_reaches_every_waiter_and_is_not_kept():
    clock, send = task.Clock(), Sender()
    share = ReadShare(clock)
    link = object()
    got = _results([share.ask("get_accounts", [["a"], True], link, 0, 1, send)
                    for _ in range(2)])
    send.sent[0].errback(ConnectionError("lost"))
    assert len(got) == 2 and all(g.check(ConnectionError) for g in got)
    assert len(share) == 0
    share.ask("get_accounts", [["a"], True], link, 0, 1, send)
    assert len(send.sent) == 2
    for d in send.sent[1:]:
        d.callback(b"[]")


def test_bounded():
    clock, send = task.Clock(), Sender()
    share = ReadShare(clock, max_entries=2)
    link = object()
    for name in "abc":
        share.ask("get_accounts", [[name], True], link, 0, 1, send)
    assert len(share) == 2 and len(send.sent) == 3
    share.ask("get_accounts", [["c"], True], link, 0, 1, send)  # not held: sent again
    assert len(send.sent) == 4
    for d in send.sent:
        d.callback(b"[]")
    clock.advance(2)
    share.ask("get_accounts", [["d"], True], link, 0, 1, send)  # old answers pruned
    assert len(share) == 1
    send.sent[-1].callback(b"[]")
