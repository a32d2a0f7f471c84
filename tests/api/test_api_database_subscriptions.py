"""database API callbacks over a real Chain (docs/wire-contract.rst section 5):
block applied, pending transactions, object subscriptions through
get_objects / get_full_accounts, notify_remove_create, cancel and close."""

import pytest

from nodeapi.errors import ApiError

from kit.api import create_gold, make_api
from kit.chain import claim_op, fund, limit_order, produce, transfer_op
from kit.signing import sign


@pytest.fixture
def funded(chain):
    """init0 claimed the genesis balance; init1 got 12345 in block 2."""
    return fund(chain, init1=12345)


def ids(batch):
    return [o if isinstance(o, str) else o["id"] for o in batch]


def test_callbacks_need_websocket(funded):
    db, _ = make_api(funded, websocket=False)
    for fn, args in (("set_subscribe_callback", [1, False]),
                     ("set_block_applied_callback", [1]),
                     ("set_pending_transaction_callback", [1])):
        with pytest.raises(ApiError, match="WebSocket"):
            db.call(fn, args)
    assert funded._block_observers == [] and funded.pending.observers == []


def test_block_applied_and_pending(funded):
    db, session = make_api(funded)
    db.call("set_block_applied_callback", [7])
    db.call("set_pending_transaction_callback", ["8"])
    trx = sign(funded, [transfer_op(5)])
    funded.push_transaction(trx)
    assert session.notices == [(8, trx)]
    produce(funded)
    assert session.notices[1] == (7, funded.head_block_id)
    produce(funded)
    assert [n for n in session.notices if n[0] == 7] == [
        (7, funded.get_block(4)["previous"]), (7, funded.head_block_id)]
    db.call("cancel_all_subscriptions", [])  # keeps block and pending callbacks
    produce(funded)
    assert session.notices[-1] == (7, funded.head_block_id)
    session.close()
    produce(funded)
    funded.push_transaction(sign(funded, [transfer_op(6)]))
    assert len(session.notices) == 4
    assert funded._block_observers == [] and funded.pending.observers == []


def test_subscribed_objects(funded):
    db, session = make_api(funded)
    db.call("set_subscribe_callback", [3, False])
    db.call("get_objects", [["2.1.0", "1.2.9"]])
    db.call("get_accounts", [["init4"], False])  # explicitly not subscribed
    produce(funded)
    ((cb, batch),) = session.notices
    assert cb == 3 and ids(batch) == ["2.1.0"]
    assert batch[0]["head_block_number"] == funded.head_block_num
    # init3 (1.2.9) changes when it pays a fee: give it funds, then let it transfer
    session.notices.clear()
    funded.push_transaction(sign(funded, [transfer_op(10 ** 8, to="1.2.9")]))
    produce(funded)
    assert [ids(b) for _, b in session.notices] == [["2.1.0"]]  # 1.2.9 itself unchanged


def test_full_account_subscription(funded):
    db, session = make_api(funded)
    db.call("set_subscribe_callback", [5, False])
    db.call("get_full_accounts", [["init2"], True])
    funded.push_transaction(sign(funded, [transfer_op(777, to="1.2.8")]))
    produce(funded)
    # a new balance object of init2 (created), then the block's changed
    # batch: init2's account is among its accounts, so the whole batch comes
    # (bitshares-core database_api.cpp handle_object_changed: is_impacted_account
    # on the batch's get_relevant_accounts, db_notify.cpp notify_changed_objects)
    (cb, created), (cb2, changed) = session.notices
    assert cb == cb2 == 5 and len(created) == 1
    by_id = {o["id"]: o for o in changed}
    # its statistics count the operation (core_in_balance waits for the
    # next maintenance: db_maint.cpp perform_account_maintenance)
    assert by_id["2.7.8"]["total_ops"] == 1
    assert "2.1.0" in by_id and "2.7.6" in by_id  # the globals, the sender's statistics
    assert ids(changed) == sorted(by_id, key=lambda i: tuple(map(int, i.split("."))))
    assert created[0]["owner"] == "1.2.8" and created[0]["balance"] == 777
    balance_id = created[0]["id"]
    session.notices.clear()
    funded.push_transaction(sign(funded, [transfer_op(23, to="1.2.8")]))
    produce(funded)
    ((_, changed),) = session.notices
    assert {balance_id, "2.7.8", "2.1.0"} <= set(ids(changed))
    assert changed[ids(changed).index(balance_id)]["balance"] == 800
    session.notices.clear()
    db.call("cancel_all_subscriptions", [])
    funded.push_transaction(sign(funded, [transfer_op(1, to="1.2.8")]))
    produce(funded)
    assert session.notices == []


def test_removed_orders_of_subscribed_account(funded):
    create_gold(funded)
    db, session = make_api(funded)
    db.call("set_subscribe_callback", [9, False])
    db.call("get_full_accounts", [["init1"]])  # auto-subscription
    order = limit_order(funded, "1.2.7", {"amount": 50, "asset_id": "1.3.1"},
                        {"amount": 1000, "asset_id": "1.3.0"})
    produce(funded)
    notified = [oid for _, batch in session.notices for oid in ids(batch)]
    assert order in notified and "2.7.7" in notified
    session.notices.clear()
    # init0 takes the whole order: it is removed, init1's balances change
    limit_order(funded, "1.2.6", {"amount": 1000, "asset_id": "1.3.0"},
                {"amount": 50, "asset_id": "1.3.1"})
    produce(funded)
    batches = [batch for _, batch in session.notices]
    assert [order] in batches
    changed = [o["id"] for b in batches for o in b if isinstance(o, dict)]
    assert funded.state.balance_by_owner["1.2.7"]["1.3.0"] in changed


def test_notify_remove_create(chain):
    db, _ = make_api(chain)
    with pytest.raises(ApiError, match="disallowed in this server"):
        db.call("set_subscribe_callback", [1, True])
    db, session = make_api(chain, enable_subscribe_to_all=True)
    db.call("set_subscribe_callback", [1, True])
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    batches = [batch for _, batch in session.notices]
    created = [o["id"] for b in batches for o in b if isinstance(o, dict)]
    assert "2.5.1" in created          # init0's new balance (2.5.0: the committee's)
    assert ["1.15.0"] in batches       # the claimed genesis balance, removed
    assert "2.1.0" not in created      # changed, not subscribed


def test_auto_subscription_off(funded):
    db, session = make_api(funded)
    db.call("set_subscribe_callback", [2, False])
    db.call("set_auto_subscription", [False])
    db.call("get_objects", [["2.1.0"]])
    produce(funded)
    assert session.notices == []
    db.call("get_objects", [["2.1.0"], True])
    produce(funded)
    assert [ids(b) for _, b in session.notices] == [["2.1.0"]]
    with pytest.raises(ApiError, match="true or false"):
        db.call("set_auto_subscription", ["no"])


def test_close_is_idempotent_and_replaces_callbacks(funded):
    db, session = make_api(funded)
    db.call("set_subscribe_callback", [1, False])
    db.call("set_subscribe_callback", [2, False])  # replaces, forgets subscriptions
    db.call("get_objects", [["2.1.0"]])
    produce(funded)
    assert [cb for cb, _ in session.notices] == [2]
    db.close()
    session.close()
    assert funded._block_observers == []
    with pytest.raises(ApiError, match="closed"):
        db.call("set_block_applied_callback", [1])


def test_budget_items_follow_subscriptions(funded):
    """Each subscribed object and each callback holds one item of the
    session's budget (nodeapi.api.budget; here the RPC layer's real one, a
    source address allowed 4 items): taken when added, given back when the
    object is removed from the chain, by cancel_all_subscriptions, and all
    at close; past the limit the call fails and subscribes nothing more."""
    from twisted.internet.task import Clock

    from nodeapi.api.budget import SubscriptionLimitExceeded
    from nodeapi.rpc.limits import ClientLimits, LimitBook

    create_gold(funded)
    db, session = make_api(funded)
    session.budget = LimitBook(Clock(), ClientLimits(subscriptions=4)).session("10.0.0.1", True)
    db.call("set_subscribe_callback", [9, False])
    order = limit_order(funded, "1.2.7", {"amount": 50, "asset_id": "1.3.1"},
                        {"amount": 1000, "asset_id": "1.3.0"})
    produce(funded)
    db.call("get_objects", [[order, "2.1.0"]])
    assert session.budget.held == 3
    with pytest.raises(SubscriptionLimitExceeded, match="4 subscribed items for source "
                                                        "address 10.0.0.1"):
        db.call("get_objects", [["1.2.0", "1.2.1"]])
    assert session.budget.held == 4  # 1.2.0 subscribed, 1.2.1 refused
    # init0 takes the whole order: removed from the chain, its item given back
    limit_order(funded, "1.2.6", {"amount": 1000, "asset_id": "1.3.0"},
                {"amount": 50, "asset_id": "1.3.1"})
    produce(funded)
    assert [order] in [batch for _, batch in session.notices]
    assert session.budget.held == 3
    db.call("cancel_all_subscriptions", [])
    assert session.budget.held == 0
    db.call("set_block_applied_callback", [1])
    db.call("set_block_applied_callback", [2])  # replaces: still one item
    db.call("set_pending_transaction_callback", [3])
    assert session.budget.held == 2
    db.close()
    assert session.budget.held == 0 and session.budget.source.subscriptions == 0
