"""A take-profit order placed over RPC by python-bitshares: its
``Limit_order_create`` has no ``on_fill`` (it writes an empty extension),
so the operation is built from python-bitshares' own serializable types
(graphenebase) in bitshares-core's layout (protocol/market.hpp:
``limit_order_create_operation::options_type``, an ``extension`` of one
``vector<limit_order_auto_action>``) and sent through its
TransactionBuilder, signed and broadcast like any operation.  Amounts by
hand from db_market.cpp ``process_limit_order_on_fill``."""

from collections import OrderedDict

import pytest
import pytest_twisted
from twisted.internet import threads

from kit.clients import bitshares_client, live_node

INIT0, INIT1 = "1.2.6", "1.2.7"


@pytest.fixture
def live(genesis, new_chain):
    """init0 funded; USD (1.3.1, no market fee) issued to init1, which
    holds core for its fees."""
    from kit.chain import asset_options, claim_wire, produce
    from kit.chain import push_wire as push

    chain = new_chain()
    push(chain, claim_wire())
    produce(chain)
    push(chain, [10, {"issuer": INIT0, "symbol": "USD", "precision": 4,
                      "common_options": asset_options(), "is_prediction_market": False,
                      "extensions": []}])
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": {"amount": 10 ** 6, "asset_id": "1.3.1"},
                      "issue_to_account": INIT1, "extensions": []}],
         [0, {"from": INIT0, "to": INIT1, "amount": {"amount": 10 ** 8, "asset_id": "1.3.0"},
              "extensions": []}])
    produce(chain)
    node = live_node(chain)
    yield node
    pytest_twisted.blockon(node.stop())


def _limit_order_with_take_profit(data, action):
    """A ``Limit_order_create`` (the class name names operation 1) whose
    extensions hold ``on_fill`` = [``action``]."""
    from bitsharesbase.objects import AssetId, ObjectId
    from graphenebase.objects import GrapheneObject
    from graphenebase.types import (
        Array, Bool, PointInTime, Set, Static_variant, Uint16, Uint32, Varint32)
    from bitsharesbase.objects import Asset

    class TakeProfitAction(GrapheneObject):
        def __init__(self, d):
            super().__init__(OrderedDict([
                ("fee_asset_id", AssetId(d["fee_asset_id"])),
                ("spread_percent", Uint16(d["spread_percent"])),
                ("size_percent", Uint16(d["size_percent"])),
                ("expiration_seconds", Uint32(d["expiration_seconds"])),
                ("repeat", Bool(d["repeat"])),
                ("extensions", Set([])),
            ]))

    class OnFillExtension:
        """``extension<options_type>`` with its one field (index 0)."""

        def __init__(self, actions):
            self.actions = Array([Static_variant(TakeProfitAction(a), 0) for a in actions])

        def __bytes__(self):
            return bytes(Varint32(1)) + bytes(Varint32(0)) + bytes(self.actions)

        def __str__(self):
            return '{"on_fill": %s}' % str(self.actions)

    class Limit_order_create(GrapheneObject):  # noqa: N801 (python-bitshares' naming)
        def __init__(self, d):
            super().__init__(OrderedDict([
                ("fee", Asset(d["fee"])),
                ("seller", ObjectId(d["seller"], "account")),
                ("amount_to_sell", Asset(d["amount_to_sell"])),
                ("min_to_receive", Asset(d["min_to_receive"])),
                ("expiration", PointInTime(d["expiration"])),
                ("fill_or_kill", Bool(d["fill_or_kill"])),
                ("extensions", OnFillExtension([action])),
            ]))

    return Limit_order_create(data)


def _place(url, fee):
    bts = bitshares_client(url)
    bts.blocking = "head"
    op = _limit_order_with_take_profit(
        {"fee": {"amount": fee, "asset_id": "1.3.0"}, "seller": INIT0,
         "amount_to_sell": {"amount": 10000, "asset_id": "1.3.0"},
         "min_to_receive": {"amount": 12345, "asset_id": "1.3.1"},
         "expiration": "2030-01-01T00:00:00", "fill_or_kill": False},
        {"fee_asset_id": "1.3.0", "spread_percent": 100, "size_percent": 10000,
         "expiration_seconds": 3600, "repeat": True})
    tx = bts.new_tx()
    tx.appendOps(op)
    tx.appendSigner("init0", "active")
    tx.sign()
    return tx.broadcast()["operation_results"][0][1]


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_python_bitshares_places_an_order_with_a_take_profit_action(live):
    from kit.chain import push_wire as push

    chain = live.chain
    state = chain.state
    fee = chain.required_fee([1, {"fee": {"amount": 0, "asset_id": "1.3.0"}, "seller": INIT0,
                                  "amount_to_sell": {"amount": 1, "asset_id": "1.3.0"},
                                  "min_to_receive": {"amount": 1, "asset_id": "1.3.1"},
                                  "expiration": "2030-01-01T00:00:00",
                                  "fill_or_kill": False, "extensions": {}}])["amount"]
    oid = yield threads.deferToThread(_place, live.ws_url, fee)
    action = [0, {"fee_asset_id": "1.3.0", "spread_percent": 100, "size_percent": 10000,
                  "expiration_seconds": 3600, "repeat": True, "extensions": []}]
    assert state.objects[oid]["on_fill"] == [action]
    # init1 buys 1000 core with 1235 USD: init0's order gets 1235 USD (no
    # market fee), all of it offered at 12345 / 10100:
    # round_up(1235 * 10100 / 12345) = 1011 core
    push(chain, [1, {"seller": INIT1, "amount_to_sell": {"amount": 1235, "asset_id": "1.3.1"},
                     "min_to_receive": {"amount": 1000, "asset_id": "1.3.0"},
                     "expiration": "2030-01-01T00:00:00", "fill_or_kill": False,
                     "extensions": {}}])
    tp = state.objects[oid]["take_profit_order_id"]
    assert state.objects[tp]["sell_price"] == {"base": {"amount": 1235, "asset_id": "1.3.1"},
                                               "quote": {"amount": 1011, "asset_id": "1.3.0"}}
    assert state.objects[tp]["on_fill"] == [action]  # repeat carries it over
