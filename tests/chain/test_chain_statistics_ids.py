"""Account statistics ids: ``2.7.N`` (the specification, the default) or
graphene's ``2.6.N`` with ``account-statistics-type 6`` (README "Account
statistics ids"): the account's ``statistics`` field, get_objects,
get_full_accounts, account_create, replay with the other type, object
notices over the real RPC site, and python-bitshares ``Notify`` against a
daemon."""

import threading

import pytest
import pytest_twisted

from nodeapi.chain.chain import Chain
from nodeapi.rpc.access import ApiAccess

from kit.api import make_api
from kit.authority import K1, auth, create
from kit.chain import fund, open_chain, produce, transfer_op
from kit.daemon import Daemon
from kit.keys import DEV_WIF
from kit.rpc import ws_connect
from kit.signing import sign
from kit.site import RunningSite, make_node

OTHER = {7: "2.6", 6: "2.7"}


def stats_ids(chain, space):
    return sorted(oid for oid in chain.state.objects if oid.startswith(space + "."))


@pytest.mark.parametrize("statistics_type", [7, 6])
def test_statistics_numbering(genesis, tmp_path, statistics_type):
    space, other = f"2.{statistics_type}", OTHER[statistics_type]
    chain = fund(open_chain(genesis, tmp_path / "blocks", statistics_type=statistics_type),
                 init1=12345)
    db, _ = make_api(chain)
    acc, = db.call("get_objects", [["1.2.7"]])
    assert acc["statistics"] == f"{space}.7"
    stats, missing = db.call("get_objects", [[f"{space}.7", f"{other}.7"]])
    assert stats["id"] == f"{space}.7" and stats["owner"] == "1.2.7" and missing is None
    # the transfer; core_in_balance waits for the next maintenance (block
    # 1's was before it: db_maint.cpp perform_account_maintenance)
    assert stats["total_ops"] == 1 and stats["core_in_balance"] == 0
    full = dict(db.call("get_full_accounts", [["init0", "init1"], False]))
    assert full["init1"]["statistics"] == stats
    assert full["init0"]["statistics"]["id"] == f"{space}.6"
    assert full["init0"]["statistics"]["pending_vested_fees"] > 0  # fees booked there
    # account_create gives the new account its statistics in the same space
    aid = create(chain, "stat-acct", auth(1, [(K1[1], 1)]))
    produce(chain)
    n = aid.split(".")[2]
    assert chain.state.get(aid)["statistics"] == f"{space}.{n}"
    assert db.call("get_objects", [[f"{space}.{n}"]])[0]["owner"] == aid
    # one statistics object per account, and nothing in the other space
    accounts = [oid for oid in chain.state.objects if oid.startswith("1.2.")]
    assert len(stats_ids(chain, space)) == len(accounts)
    assert stats_ids(chain, other) == []


def test_unknown_statistics_type(genesis, block_log):
    with pytest.raises(ValueError, match="account statistics type 5 is not one of 7, 6"):
        Chain(genesis, block_log, statistics_type=5)


@pytest_twisted.inlineCallbacks
def test_replay_with_the_other_type_renumbers(genesis, tmp_path):
    """Nothing of the numbering is in the block log: the same blocks replayed
    with type 6 give the same statistics as 2.6.N."""
    chain = fund(open_chain(genesis, tmp_path / "blocks"), init1=500)
    create(chain, "stat-acct", auth(1, [(K1[1], 1)]))
    produce(chain)
    chain.block_log.close()
    replayed = open_chain(genesis, tmp_path / "blocks", statistics_type=6)
    try:
        assert (yield replayed.replay()) == chain.head_block_num
        assert replayed.head_block_id == chain.head_block_id
        before, after = stats_ids(chain, "2.7"), stats_ids(replayed, "2.6")
        assert [oid[4:] for oid in before] == [oid[4:] for oid in after] and len(after) == 19
        for old, new in zip(before, after):
            assert dict(chain.state.objects[old], id=new) == replayed.state.objects[new]
            owner = chain.state.objects[old]["owner"]
            assert replayed.state.objects[owner]["statistics"] == new
        assert stats_ids(replayed, "2.7") == []
    finally:
        replayed.block_log.close()


@pytest.fixture
def graphene_numbered(genesis, tmp_path):
    """A funded chain numbering statistics 2.6.N (init1 got 12345)."""
    chain = fund(open_chain(genesis, tmp_path / "g6", statistics_type=6), init1=12345)
    yield chain
    chain.block_log.close()


@pytest_twisted.inlineCallbacks
def test_subscribed_account_notices_graphene_ids(graphene_numbered):
    """set_subscribe_callback + get_full_accounts(subscribe) over a real
    WebSocket: after a transfer to init2 the changed statistics come as 2.6.8."""
    chain = graphene_numbered
    server = RunningSite(make_node(chain), ApiAccess.default())
    ws = yield ws_connect(server.port)
    try:
        assert (yield ws.call(0, "set_subscribe_callback", 5, False)) is None
        (name, full), = yield ws.call(0, "get_full_accounts", ["init2"], True)
        assert name == "init2" and full["statistics"]["id"] == "2.6.8"
        assert full["account"]["statistics"] == "2.6.8"
        chain.push_transaction(sign(chain, [transfer_op(777, to="1.2.8")]))
        produce(chain)
        yield ws.call(0, "get_chain_id")  # the notices precede this reply
        (cb, created), (cb2, changed) = ws.notices
        assert cb == cb2 == 5
        assert created[0][0]["owner"] == "1.2.8" and created[0][0]["balance"] == 777
        # the whole changed batch: init2 is among its accounts (bitshares-core
        # database_api.cpp handle_object_changed, is_impacted_account)
        by_id = {o["id"]: o for o in changed[0]}
        assert "2.1.0" in by_id and "2.6.6" in by_id  # the globals, the sender's statistics
        assert by_id["2.6.8"]["owner"] == "1.2.8" and by_id["2.6.8"]["total_ops"] == 1
    finally:
        ws.dropConnection()
        yield server.stop()


def _notify_sees_transfer(url, timeout=30.0):
    """python-bitshares ``Notify(accounts=["init1"])`` in a thread; once its
    subscriptions are set (the first block notice: graphene's clients set the
    block callback last) init0 claims the genesis balance and sends init1
    12.5 TEST.  Returns the account updates seen within ``timeout`` s."""
    from bitshares import BitShares
    from bitshares.notify import Notify
    from kit.chain import claim_op

    bts = BitShares(node=url, keys=[DEV_WIF], num_retries=0)
    subscribed, updated = threading.Event(), threading.Event()
    updates = []

    def on_account(update):
        updates.append(dict(update))
        if update["id"] == "2.6.7":  # init1's own (its batch may bring others)
            updated.set()

    notify = Notify(accounts=["init1"], markets=[], on_account=on_account,
                    on_block=lambda _block_id: subscribed.set(), blockchain_instance=bts)
    listener = threading.Thread(target=notify.listen, daemon=True)
    listener.start()
    try:
        assert subscribed.wait(timeout), "Notify never subscribed"
        claim = claim_op()  # the genesis balance 1.15.0 into init0
        bts.finalizeOp(claim, "init0", "active")
        bts.transfer("init1", 12.5, "TEST", account="init0")
        updated.wait(timeout)
    finally:
        notify.close()
        listener.join(10)
    return updates


@pytest.mark.slow
def test_python_bitshares_notify_sees_account_updates(tmp_path):
    node = Daemon(tmp_path / "data", "--account-statistics-type", "6").start()
    try:
        node.wait_head(1)
        updates = _notify_sees_transfer(f"ws://127.0.0.1:{node.port}")
        assert updates, "no account update reached Notify"
        # Notify hands on every 2.6 object of a batch that concerns init1
        # (bitshares-core sends the whole batch: database_api.cpp
        # handle_object_changed), the sender's statistics (2.6.6) included
        mine = [u for u in updates if u["id"] == "2.6.7"]
        assert mine and mine[0]["owner"] == "1.2.7"
        # the transfer counted (core_in_balance waits for the next maintenance)
        assert mine[-1]["total_ops"] == 1
        assert {u["id"] for u in updates} <= {"2.6.6", "2.6.7"}
    finally:
        node.stop()


@pytest.mark.slow
def test_bitsharesjs_chainstore_sees_statistics_updates(tmp_path, js_client):
    """With ``--account-statistics-type 6`` bitsharesjs' ChainStore keeps an
    account's statistics (2.6.N) current: a transfer to init1 reaches it."""
    import json
    import os
    import subprocess
    import time

    from kit.js import JS_DIR
    from kit.signing import signed_over_head
    from kit.chain import claim_op

    node = Daemon(tmp_path / "data", "--account-statistics-type", "6").start()
    try:
        node.wait_head(1)
        node.call("broadcast_transaction_synchronous", signed_over_head(node, [claim_op()]),
                  api="network_broadcast")
        proc = subprocess.Popen([js_client, os.path.join(JS_DIR, "statistics.js"),
                                 f"ws://127.0.0.1:{node.port}", "init1"], cwd=JS_DIR,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 60
        while proc.poll() is None and time.time() < deadline:
            node.call("broadcast_transaction", signed_over_head(node, [transfer_op(100)]),
                      api="network_broadcast")
            time.sleep(1.5)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err.decode()
        result = json.loads(out.decode().strip().splitlines()[-1])
        assert result["statistics_id"] == "2.6.7"
        assert result["after"]["owner"] == "1.2.7"
        assert result["after"]["total_ops"] > result["before"]
    finally:
        node.stop()
