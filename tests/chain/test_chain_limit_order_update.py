"""limit_order_update (77): new price, amount and expiration of an open
order, the deferred fee refunded minus the proportional cancel fee, the
updated order matching the book, and bitshares-core's refusals; amounts by
hand from market_evaluator.cpp."""

import pytest

from nodeapi.chain.errors import InvalidOperation

from kit.chain import CORE, amt, asset_options, claim_wire, open_chain, produce
from kit.chain import push_wire as push

INIT0, INIT1 = "1.2.6", "1.2.7"
FEE0 = {"amount": 0, "asset_id": CORE}


@pytest.fixture
def market(genesis, tmp_path):
    chain = open_chain(genesis, tmp_path / "lou")
    push(chain, claim_wire())
    push(chain, [0, {"from": INIT0, "to": INIT1, "amount": amt(10 ** 10, CORE),
                     "extensions": []}])
    [[_t, gold]] = push(chain, [10, {"issuer": INIT0, "symbol": "GOLD", "precision": 3,
                                     "common_options": asset_options(),
                                     "is_prediction_market": False, "extensions": []}])
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amt(100000, gold),
                      "issue_to_account": INIT0, "extensions": []}])
    # init0 sells 1,000 GOLD sat for 3,000 core sat (3 core per GOLD)
    [[_t, oid]] = push(chain, [1, {"seller": INIT0, "amount_to_sell": amt(1000, gold),
                                   "min_to_receive": amt(3000, CORE),
                                   "expiration": "2030-01-01T00:00:00", "fill_or_kill": False,
                                   "extensions": {}}])
    produce(chain)
    yield chain, gold, oid
    chain.block_log.close()


def update(chain, oid, **fields):
    return push(chain, [77, dict({"seller": INIT0, "order": oid, "extensions": []}, **fields)])


def fee(chain, op_type, body):
    return chain.required_fee([op_type, dict(body, fee=FEE0)])["amount"]


def test_amount_price_and_the_deferred_fee(market):
    chain, gold, oid = market
    state = chain.state
    old_deferred = state.objects[oid]["deferred_fee"]
    assert old_deferred == fee(chain, 1, {"seller": INIT0, "amount_to_sell": amt(1, CORE),
                                          "min_to_receive": amt(1, gold),
                                          "expiration": "2030-01-01T00:00:00",
                                          "fill_or_kill": False, "extensions": {}})
    update_fee = fee(chain, 77, {"seller": INIT0, "order": oid, "extensions": []})
    cancel = fee(chain, 2, {"fee_paying_account": INIT0, "order": oid, "extensions": []})
    kept = min(cancel * update_fee // old_deferred, old_deferred)
    gold_before, core_before = state.balance(INIT0, gold), state.balance(INIT0, CORE)
    update(chain, oid, delta_amount_to_sell=amt(500, gold),
           new_price={"base": amt(1500, gold), "quote": amt(3000, CORE)})
    obj = state.objects[oid]
    assert obj["for_sale"] == 1500
    assert obj["sell_price"] == {"base": amt(1500, gold), "quote": amt(3000, CORE)}
    assert obj["deferred_fee"] == update_fee
    assert gold_before - state.balance(INIT0, gold) == 500
    # paid the update fee, got the old deferred fee back minus the share kept
    assert state.balance(INIT0, CORE) - core_before == old_deferred - kept - update_fee


def test_an_update_that_crosses_the_book_matches(market):
    chain, gold, oid = market
    state = chain.state
    # init1 bids 2 core per GOLD for 500 GOLD sat: no match at 3 core per GOLD
    [[_t, bid]] = push(chain, [1, {"seller": INIT1, "amount_to_sell": amt(1000, CORE),
                                   "min_to_receive": amt(500, gold),
                                   "expiration": "2030-01-01T00:00:00", "fill_or_kill": False,
                                   "extensions": {}}])
    assert state.find(bid) is not None
    # init0 lowers its price to 2 core per GOLD: the bid (the maker) fills
    update(chain, oid, new_price={"base": amt(1000, gold), "quote": amt(2000, CORE)})
    assert state.find(bid) is None
    assert state.balance(INIT1, gold) == 500
    assert state.objects[oid]["for_sale"] == 500


@pytest.mark.parametrize("fields, message", [
    ({"delta_amount_to_sell": {"amount": -1000, "asset_id": "1.3.1"}},
     "Cannot deduct all or more"),
    ({"new_price": {"base": {"amount": 1, "asset_id": "1.3.0"},
                    "quote": {"amount": 1, "asset_id": "1.3.1"}}}, "incompatible price"),
    ({"new_price": {"base": {"amount": 5000, "asset_id": "1.3.1"},
                    "quote": {"amount": 1, "asset_id": "1.3.0"}}},
     "cannot be greater than the estimated maximum amount for sale"),
    ({"new_expiration": "2016-01-01T00:00:00"}, "expire in the past"),
    # market_evaluator.cpp limit_order_update_evaluator::do_evaluate
    ({"on_fill": [[0, {"fee_asset_id": "1.3.0", "spread_percent": 100,
                       "size_percent": 10000, "expiration_seconds": 3600,
                       "repeat": False, "extensions": []}]] * 2},
     "must contain zero or one action"),
    ({"on_fill": [[0, {"fee_asset_id": "1.3.9", "spread_percent": 100,
                       "size_percent": 10000, "expiration_seconds": 3600,
                       "repeat": False, "extensions": []}]]}, "Fee asset does not exist"),
])
def test_refusals(market, fields, message):
    chain, _gold, oid = market
    with pytest.raises(InvalidOperation, match=message):
        update(chain, oid, **fields)


def test_someone_elses_order(market):
    chain, gold, oid = market
    with pytest.raises(InvalidOperation, match="owned by someone else"):
        push(chain, [77, {"seller": INIT1, "order": oid,
                          "new_expiration": "2029-01-01T00:00:00", "extensions": []}])
