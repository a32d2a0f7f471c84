"""The routing of upstream notices to the gateway's clients
(nodeapi.gateway.notice_routing) on bitshares-core-shaped payloads: the
rules of libraries/app/database_api.cpp ``handle_object_changed`` (a
subscribed id; a subscribed account among the batch's accounts, which
sends the whole batch; ``notify_remove_create`` for created and removed
objects) with the accounts of libraries/chain/db_notify.cpp
``get_relevant_accounts``."""

import orjson
import pytest
from twisted.internet import task

from nodeapi.api.budget import SubscriptionLimitExceeded
from nodeapi.gateway.notice_routing import Digests, Encoded, Interest, Interests
from nodeapi.rpc.limits import ClientLimits, LimitBook

from kit.api import RecordingSession

ORDER = {"id": "1.7.0", "seller": "1.2.7", "for_sale": 100,
         "sell_price": {"base": {"amount": 100, "asset_id": "1.3.1"},
                        "quote": {"amount": 5, "asset_id": "1.3.0"}},
         "expiration": "2030-01-01T00:00:00"}
BALANCE = {"id": "2.5.3", "owner": "1.2.7", "asset_type": "1.3.1", "balance": 900}
ASSET_DATA = {"id": "2.3.1", "current_supply": 1000}


def clients():
    interests = Interests()
    made = {}
    for name in ("ids", "account", "everything", "nothing"):
        made[name] = Interest(RecordingSession())
    interests.set_subscribe(made["ids"], 1, False)
    interests.subscribe_ids(made["ids"], ["2.3.1"])
    interests.set_subscribe(made["account"], 2, False)
    interests.subscribe_account(made["account"], "1.2.7")
    interests.set_subscribe(made["everything"], 3, True)
    interests.set_subscribe(made["nothing"], 4, False)
    return interests, made


def test_created_and_changed_batches():
    interests, c = clients()
    batch = [ORDER, BALANCE, ASSET_DATA]
    routes = interests.route_objects(batch, created=True)
    # the seller's account is among the batch's: whole; notify_remove_create
    # (created): whole; a subscribed id: that object only
    assert routes == {c["account"]: None, c["everything"]: None, c["ids"]: [2]}
    routes = interests.route_objects(batch, created=False)
    assert routes == {c["account"]: None, c["ids"]: [2]}
    routes = interests.route_objects([{"id": "2.1.0"}, ASSET_DATA], created=False)
    assert routes == {c["ids"]: [1]}  # no account of the batch is subscribed


def test_removed_ids_routed_by_the_accounts_of_what_was_seen():
    interests, c = clients()
    interests.learn([ORDER])  # the order was seen (a notice or an answer)
    routes = interests.route_removed(["1.7.0"])
    assert routes == {c["account"]: None, c["everything"]: None}
    # an object never seen: by subscription and notify_remove_create only
    interests.subscribe_ids(c["ids"], ["1.7.9"])
    assert interests.route_removed(["1.7.9"]) == {c["everything"]: None, c["ids"]: None}
    assert "1.7.9" not in c["ids"].ids and "1.7.9" not in interests.by_id


def test_no_callback_no_notice():
    interests, c = clients()
    interests.cancel_objects(c["account"])
    interests.cancel_objects(c["ids"])
    assert interests.route_objects([ORDER, ASSET_DATA], created=False) == {}
    interests.remove(c["everything"])
    assert interests.route_removed(["1.7.0"]) == {}


def test_encoded_once_per_selection():
    batch = [ORDER, BALANCE, ASSET_DATA]
    encoded = Encoded(batch)
    whole, part = encoded.payload(None), encoded.payload([0, 2])
    assert encoded.payload(None) is whole and encoded.payload([0, 2]) is part
    assert orjson.loads(orjson.dumps(whole)) == batch
    assert orjson.loads(orjson.dumps(part)) == [ORDER, ASSET_DATA]


def test_digests_tell_what_changed_unseen():
    digests = Digests()
    digests.remember([ASSET_DATA])
    newer = dict(ASSET_DATA, current_supply=1001)
    assert digests.changed([ASSET_DATA, newer, ORDER]) == [newer]  # ORDER never seen
    assert digests.changed([newer]) == []
    assert digests.changed([ORDER], unseen=True) == []  # remembered above
    assert digests.changed([BALANCE], unseen=True) == [BALANCE]  # an account's new object


def test_a_shards_notices_reach_its_clients_only():
    """Each client is carried by one subscription connection: the same
    batch from two connections reaches each client once, from its own."""
    interests, c = clients()
    one, two = object(), object()
    c["account"].shard = c["everything"].shard = one
    c["ids"].shard = c["nothing"].shard = two
    batch = [ORDER, BALANCE, ASSET_DATA]
    assert set(interests.route_objects(batch, True, one)) == {c["account"], c["everything"]}
    assert set(interests.route_objects(batch, True, two)) == {c["ids"]}
    interests.subscribe_ids(c["account"], ["1.7.0"])
    interests.subscribe_ids(c["ids"], ["1.7.0"])
    interests.learn([ORDER])
    assert set(interests.route_removed(["1.7.0"], one)) == {c["account"], c["everything"]}
    assert "1.7.0" in c["ids"].ids  # the other connection's removal notice ends it there
    assert set(interests.route_removed(["1.7.0"], two)) == {c["ids"]}
    assert "1.7.0" not in interests.by_id



def test_every_subscribed_item_is_charged_to_the_sessions_budget():
    """Each subscribed id, market and callback holds one item of the
    session's budget (nodeapi.api.budget, here a real
    nodeapi.rpc.limits.SessionLimits of an address allowed 4): taken before
    it is added, given back when it ends, as the node's own database set
    does; a removed object's item goes back with it."""
    book = LimitBook(task.Clock(), ClientLimits(subscriptions=4))
    session = RecordingSession()
    session.budget = book.session("10.0.0.1", True)
    interests, client = Interests(), Interest(session)
    interests.set_subscribe(client, 1, False)
    interests.subscribe_ids(client, ["1.7.0", "2.5.3"])
    assert session.budget.held == 3
    with pytest.raises(SubscriptionLimitExceeded):
        interests.subscribe_ids(client, ["2.3.1", "2.3.2"])  # one fits, then refused
    assert client.ids == {"1.7.0", "2.5.3", "2.3.1"} and session.budget.held == 4
    with pytest.raises(SubscriptionLimitExceeded):
        interests.set_block(client, 9)
    assert client.block_cb is None and not interests.block
    interests.route_removed(["1.7.0"])
    assert session.budget.held == 3 and "1.7.0" not in client.ids
    interests.set_block(client, 9)
    interests.set_block(client, 10)  # replacing a callback takes nothing more
    assert session.budget.held == 4
    interests.cancel_objects(client)  # the callback and two ids
    assert session.budget.held == 1
    interests.subscribe_market(client, ("1.3.0", "1.3.1"), 5)
    interests.subscribe_market(client, ("1.3.0", "1.3.1"), 6)
    interests.set_pending(client, 7)
    assert session.budget.held == 3
    interests.unsubscribe_market(client, ("1.3.0", "1.3.1"))
    interests.unsubscribe_market(client, ("1.3.0", "1.3.1"))  # gone: nothing more
    assert session.budget.held == 2
    interests.remove(client)
    assert session.budget.held == 0
