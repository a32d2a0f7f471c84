"""How the database and history sets are assembled from section objects
(nodeapi.api.base: ``ApiSet.sections``) and the answers the node keeps for
reuse (nodeapi.api.answers), over a real Chain."""

import pytest

from nodeapi.api.answers import StateAnswerCache
from nodeapi.api.base import ApiSet, Section, api_function, api_functions, section
from nodeapi.api.database import DatabaseApi
from nodeapi.api.history import HistoryApi
from nodeapi.node import Node

from kit.api import RecordingSession, create_gold, make_api
from kit.chain import limit_order, produce


def _gold(amount):
    return {"amount": amount, "asset_id": "1.3.1"}


def _core(amount):
    return {"amount": amount, "asset_id": "1.3.0"}


@pytest.mark.parametrize("cls", [DatabaseApi, HistoryApi])
def test_the_set_serves_the_functions_of_its_sections(funded, cls):
    """Every function of the set is a function of exactly one section, and
    is called on that section's instance."""
    api, _ = make_api(funded, cls)
    owner = {}
    for attr, section in cls.sections.items():
        for name in api_functions(section):
            assert name not in owner
            owner[name] = attr
    assert sorted(owner) == cls.function_names()
    for name, attr in owner.items():
        assert getattr(api, name).__self__ is getattr(api, attr)
        assert isinstance(getattr(api, attr), Section)


def test_sections_are_made_on_first_use_and_kept(funded):
    api, _ = make_api(funded)
    assert "blocks" not in vars(api) and "subscriptions" not in vars(api)
    assert api.call("get_block", [1]) == funded.get_block(1)
    blocks = vars(api)["blocks"]
    assert api.call("get_block", [2]) == funded.get_block(2)
    assert vars(api)["blocks"] is blocks and "accounts" not in vars(api)
    api.close()  # no subscriptions were made: nothing to end


def test_sections_share_the_connection_subscriptions(funded):
    """get_accounts (Accounts) and get_objects (Objects) subscribe through
    the one Subscriptions object of the connection; cancel_all_subscriptions
    (Subscriptions) also ends the market subscriptions (MarketSubscriptions),
    which it was given at construction."""
    create_gold(funded)
    api, session = make_api(funded)
    assert api.accounts.subscriptions is api.subscriptions is api.objects.subscriptions
    assert api.market_subscriptions.subscriptions is api.subscriptions
    api.call("set_subscribe_callback", [7, False])
    api.call("get_accounts", [["init1"]])
    api.call("get_objects", [["2.1.0"]])
    api.call("subscribe_to_market", [9, "TEST", "GOLD"])
    limit_order(funded, "1.2.7", _gold(1000), _core(600))
    produce(funded)
    callbacks = {cb for cb, _ in session.notices}
    assert callbacks == {7, 9}  # 2.1.0 and init1's objects changed; a new order
    api.call("cancel_all_subscriptions", [])
    assert not api.subscriptions.whether_to_subscribe(True)
    session.notices.clear()
    limit_order(funded, "1.2.7", _gold(1000), _core(700))
    produce(funded)
    assert session.notices == []


def test_two_sections_serving_one_name_are_refused():
    class One(Section):
        @api_function
        def same(self):
            return 1

    class Two(Section):
        @api_function
        def same(self):
            return 2

    with pytest.raises(TypeError, match="function same of section two"):
        type("Clash", (ApiSet,), {"one": section(One), "two": section(Two)})

    def same(self):
        return 3

    with pytest.raises(TypeError, match="function same of section one"):
        type("Own", (ApiSet,), {"one": section(One), "same": api_function(same)})


def test_a_subclass_adds_functions_to_the_sections_ones(funded):
    class Extended(DatabaseApi):
        @api_function
        def extra(self, n: int):
            return n + 1

    assert set(Extended.function_names()) == set(DatabaseApi.function_names()) | {"extra"}
    api, _ = make_api(funded, Extended)
    assert api.call("extra", ["41"]) == 42
    assert api.call("get_chain_id", []) == funded.chain_id


def test_full_accounts_are_kept_by_the_node_until_the_state_changes(funded):
    """The same answer object while the state stays; a new one after a
    block; each node keeps its own."""
    session = RecordingSession()
    node, other = Node(chain=funded), Node(chain=funded)
    api, api2 = DatabaseApi(node, session), DatabaseApi(other, session)
    [[_, first]] = api.call("get_full_accounts", [["init1"], False])
    [[_, again]] = DatabaseApi(node, session).call("get_full_accounts", [["init1"], False])
    assert again is first and len(node.api_answers.full_accounts) == 1
    assert len(other.api_answers.full_accounts) == 0
    [[_, elsewhere]] = api2.call("get_full_accounts", [["init1"], False])
    assert elsewhere is not first and elsewhere == first
    produce(funded)
    [[_, after]] = api.call("get_full_accounts", [["init1"], False])
    assert after is not first and after["account"]["id"] == "1.2.7"


def test_order_books_are_kept_by_the_node_until_the_market_changes(funded):
    create_gold(funded)
    limit_order(funded, "1.2.7", _gold(1000), _core(600))
    produce(funded)
    api, _ = make_api(funded)
    book = api.call("get_order_book", ["TEST", "GOLD", 10])
    assert len(book["asks"]) == 1
    assert api.call("get_order_book", ["TEST", "GOLD", 10]) is book
    assert api.node.api_answers.order_books.get(("TEST", "GOLD", 10), ()) is None
    limit_order(funded, "1.2.7", _gold(1000), _core(700))
    produce(funded)
    changed = api.call("get_order_book", ["TEST", "GOLD", 10])
    assert changed is not book and len(changed["asks"]) == 2


def test_answer_cache_policy():
    """One policy: an answer is reused while its stamp compares equal; all
    are dropped at once when the cache is full."""
    cache = StateAnswerCache(size=2)
    state = object()
    answer = {"a": 1}
    assert cache.put("k", (state, 5), answer) is answer
    assert cache.get("k", (state, 5)) is answer
    assert cache.get("k", (state, 6)) is None and cache.get("k", (object(), 5)) is None
    cache.put("j", (state, 5), {})
    assert len(cache) == 2
    cache.put("i", (state, 5), {})
    assert len(cache) == 1 and cache.get("k", (state, 5)) is None


def test_sections_are_declared_once_and_derived(funded):
    """``ApiSet.sections`` is derived from the ``section`` declarations, a
    subclass' included; a section is built with the node then what it
    names, in order."""

    class Needs(Section):
        def __init__(self, node, session, subscriptions):
            super().__init__(node)
            self.got = (session, subscriptions)

        @api_function
        def needs(self):
            return 1

    class WithNeeds(DatabaseApi):
        needy = section(Needs, "session", "subscriptions")

    assert WithNeeds.sections == {**DatabaseApi.sections, "needy": Needs}
    assert DatabaseApi.sections["objects"] is type(make_api(funded)[0].objects)
    api, session = make_api(funded, WithNeeds)
    assert api.call("needs", []) == 1
    assert api.needy.got == (session, api.subscriptions) and api.needy.node is api.node
