"""The lazy store of a devnet fork (nodeapi.chain.remote): what raises
NotHereYet and what does not, base state below the undo sessions, and
the retry of call_loading.  The loader here inserts objects it is given
(the node's side is tests/devnet/test_devnet_fork.py, against the
reference node)."""

import pytest
import pytest_twisted

from nodeapi.chain.remote import NotHereYet, RemoteState, call_loading
from nodeapi.chain.state import ObjectStore
from nodeapi.protocol.wire import object_from_wire, to_wire

KEY = "TEST6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV"


def _account(instance, name):
    auth = {"weight_threshold": 1, "account_auths": [], "key_auths": [[KEY, 1]],
            "address_auths": []}
    return {"id": f"1.2.{instance}", "name": name, "owner": auth, "active": auth,
            "options": {"memo_key": KEY}, "statistics": f"2.6.{instance}",
            "creation_time": 1_453_108_705}


def _balance(instance, owner, amount):
    return {"id": f"2.5.{instance}", "owner": owner, "asset_type": "1.3.0", "balance": amount}


#: the live chain's objects the loader serves, by want
LIVE = {("object", "1.2.3"): [_account(3, "alice")],
        ("object", "1.2.4"): [_account(4, "bob")],
        ("name", "alice"): [_account(3, "alice")],
        ("name", "carol"): [],
        ("account", "1.2.3"): [_account(3, "alice"), _balance(1, "1.2.3", 500)]}


@pytest.fixture
def lazy():
    loaded = []

    def loader(want):
        loaded.append(want)
        remote.insert(LIVE[want])
        remote.mark_done(want)

    remote = RemoteState({"1.2": 10, "2.5": 5, "1.3": 2}, loader)
    store = ObjectStore("2.6")
    store.next_instance = dict(remote.limits)
    remote.install(store)
    remote.loaded = loaded
    return store, remote


def test_a_missing_live_id_raises_and_a_local_one_does_not(lazy):
    store, remote = lazy
    with pytest.raises(NotHereYet) as info:
        store.objects.get("1.2.3")
    assert info.value.want == ("object", "1.2.3")
    with pytest.raises(NotHereYet):
        store.require("1.2.3")
    with pytest.raises(NotHereYet):
        "1.2.3" in store.objects  # noqa: B015
    assert store.objects.get("1.2.10") is None  # the devnet's own range
    assert store.objects.get("2.1.0") is None  # no limit known: not the live chain's
    assert store.objects.get("not an id") is None
    assert store.new_id("1.2") == "1.2.10"  # new objects above the live chain's


def test_index_entries_wait_for_their_load(lazy):
    store, remote = lazy
    with pytest.raises(NotHereYet) as info:
        store.account_by_name.get("alice")
    assert info.value.want == ("name", "alice")
    remote.load(("name", "alice"))
    assert store.account_by_name_or_id("alice")["id"] == "1.2.3"
    with pytest.raises(NotHereYet) as info:
        store.balance("1.2.3", "1.3.0")  # the account's balances: not complete yet
    assert info.value.want == ("account", "1.2.3")
    remote.load(("account", "1.2.3"))
    assert store.balance("1.2.3", "1.3.0") == 500
    assert store.balance("1.2.11", "1.3.0") == 0  # a devnet account: nothing to wait for
    with pytest.raises(NotHereYet) as info:
        store.key_references.get(KEY)  # the accounts of a key: the live chain's too
    assert info.value.want == ("key", KEY)
    remote.load(("name", "carol"))
    assert store.account_by_name.get("carol") is None  # looked up: not on the live chain


def test_base_state_is_below_the_undo_sessions_and_never_replaced(lazy):
    store, remote = lazy
    remote.load(("object", "1.2.3"))
    store.begin()
    store.modify("1.2.3")["name"] = "changed"
    remote.load(("object", "1.2.4"))  # fetched inside the session
    store.rollback()
    assert store.objects["1.2.3"]["name"] == "alice"
    assert store.objects["1.2.4"]["name"] == "bob"  # base state: kept by the rollback
    store.begin()
    store.remove("1.2.4")
    store.commit()
    assert remote.insert([_account(4, "bob")]) == []  # fetched once: the devnet's now
    assert "1.2.4" not in store.objects


def test_the_sinks_get_each_inserted_object(lazy):
    store, remote = lazy
    held = []
    remote.sinks.append(lambda oid, obj: held.append(oid))
    remote.load(("account", "1.2.3"))
    assert held == ["1.2.3", "2.5.1"]


@pytest_twisted.inlineCallbacks
def test_call_loading_fetches_then_runs_again(lazy):
    store, remote = lazy
    calls = []

    def both_names():
        calls.append(1)
        return store.objects["1.2.3"]["name"], store.objects["1.2.4"]["name"]

    assert (yield call_loading(both_names)) == ("alice", "bob")
    assert len(calls) == 3 and remote.loaded == [("object", "1.2.3"), ("object", "1.2.4")]


def test_an_object_read_back_from_the_wire_is_the_one_kept():
    """object_from_wire inverts to_wire for chain objects: times in
    seconds, 64-bit figures as ints, uint128 figures and text as strings."""
    kept = {"id": "1.7.4", "expiration": 1_800_000_000, "for_sale": 2 ** 40,
            "filled_amount": "12", "seller": "1.2.3", "deferred_fee": 7,
            "sell_price": {"base": {"amount": 2 ** 40, "asset_id": "1.3.1"},
                           "quote": {"amount": 3, "asset_id": "1.3.0"}}}
    wire = to_wire(kept)
    assert wire["expiration"] == "2027-01-15T08:00:00" and wire["for_sale"] == str(2 ** 40)
    assert object_from_wire(wire) == kept
    account = dict(_account(3, "alice"), name="a123", description="123")
    assert object_from_wire(to_wire(account)) == account
