"""Rules of market-issued assets beyond the main life (tests/
test_chain_smartcoin.py): asset_update_bitasset (permissions, backing
asset, an MCR change that margin-calls), the force settlement volume cap
per maintenance interval, force settlements cancelled by
``disable_force_settle``, and an expired feed.  Amounts by hand
(bitshares-core asset_evaluator.cpp, db_update.cpp, db_maint.cpp)."""

import pytest

from nodeapi.chain.errors import InsufficientFeeds, InvalidOperation

from kit.chain import CORE, amt, asset_options, jump, produce
from kit.chain import push_wire as push

INIT0, INIT1 = "1.2.6", "1.2.7"
GLOBAL_SETTLE, DISABLE_FORCE_SETTLE, DISABLE_MCR_UPDATE = 0x20, 0x10, 0x800


def options(**changes):
    opts = {"feed_lifetime_sec": 864000, "minimum_feeds": 1,
            "force_settlement_delay_sec": 3600, "force_settlement_offset_percent": 0,
            "maximum_force_settlement_volume": 2000, "short_backing_asset": CORE,
            "extensions": {}}
    opts.update(changes)
    return opts


@pytest.fixture
def chain(funded_pair):
    return funded_pair


def smartcoin(chain, symbol="USD", perms=GLOBAL_SETTLE | DISABLE_FORCE_SETTLE, **opts):
    [[_t, usd]] = push(chain, [10, {
        "issuer": INIT0, "symbol": symbol, "precision": 4,
        "common_options": asset_options(perms=perms), "bitasset_opts": options(**opts),
        "is_prediction_market": False, "extensions": []}])
    push(chain, [13, {"issuer": INIT0, "asset_to_update": usd, "new_feed_producers": [INIT0],
                      "extensions": []}])
    push(chain, [19, {"publisher": INIT0, "asset_id": usd, "extensions": {}, "feed": {
        "settlement_price": {"base": amt(1, usd), "quote": amt(100)},
        "maintenance_collateral_ratio": 1750, "maximum_short_squeeze_ratio": 1100,
        "core_exchange_rate": {"base": amt(1, usd), "quote": amt(100)}}}])
    return usd


def borrow(chain, account, collateral, debt, usd):
    return push(chain, [3, {"funding_account": account, "delta_collateral": amt(collateral),
                            "delta_debt": amt(debt, usd), "extensions": {}}])[0][1]


def bitasset(chain, usd):
    return chain.state.objects[chain.state.objects[usd]["bitasset_data_id"]]


def update_bitasset(chain, usd, issuer=INIT0, **changes):
    new = dict(bitasset(chain, usd)["options"], **changes)
    push(chain, [12, {"issuer": issuer, "asset_to_update": usd, "new_options": new,
                      "extensions": []}])


def test_update_bitasset_rules_and_an_mcr_change_that_margin_calls(chain):
    usd = smartcoin(chain)
    locked = smartcoin(chain, "LOCKED", perms=GLOBAL_SETTLE | DISABLE_MCR_UPDATE)
    with pytest.raises(InvalidOperation, match="Only asset issuer can update bitasset_data"):
        update_bitasset(chain, usd, issuer=INIT1)
    with pytest.raises(InvalidOperation, match="No permission to update MCR"):
        update_bitasset(chain, locked, extensions={"maintenance_collateral_ratio": 2000})
    with pytest.raises(InvalidOperation, match="Feed lifetime must exceed block interval"):
        update_bitasset(chain, usd, feed_lifetime_sec=1)
    call_id = borrow(chain, INIT0, 200000, 1000, usd)  # 200 TEST per USD
    with pytest.raises(InvalidOperation, match="already a current supply"):
        update_bitasset(chain, usd, short_backing_asset=locked)
    # init0 offers 500 USD at 100 TEST each; at MCR 1.75 (175 TEST per USD)
    # the position is safe
    [[_t, order]] = push(chain, [1, {"seller": INIT0, "amount_to_sell": amt(500, usd),
                                     "min_to_receive": amt(50000), "fill_or_kill": False,
                                     "expiration": "2030-01-01T00:00:00", "extensions": {}}])
    assert order in chain.state.objects
    # the issuer raises MCR to 2.1: 210 TEST per USD; the feed is recomputed
    # and the position (200) is margin-called against the order at its
    # price (100 <= ~MCOP 110), no fee: 500 USD for 50,000 TEST
    update_bitasset(chain, usd, extensions={"maintenance_collateral_ratio": 2100})
    b = bitasset(chain, usd)
    assert b["current_feed"]["maintenance_collateral_ratio"] == 2100
    assert b["current_maintenance_collateralization"] == {"base": amt(210), "quote": amt(1, usd)}
    call = chain.state.objects[call_id]
    assert (call["debt"], call["collateral"]) == (500, 150000)
    assert order not in chain.state.objects


def test_force_settlement_volume_cap_and_its_reset_at_maintenance(chain):
    usd = smartcoin(chain)
    call_id = borrow(chain, INIT1, 400000, 1000, usd)
    first = push(chain, [17, {"account": INIT1, "amount": amt(150, usd),
                              "extensions": []}])[0][1]["new_objects"][0]
    second = push(chain, [17, {"account": INIT1, "amount": amt(160, usd),
                               "extensions": []}])[0][1]["new_objects"][0]
    produce(chain)
    core1 = chain.state.balance(INIT1, CORE)
    jump(chain, 3601)
    # 20 % of the supply (1,000) may settle per maintenance interval: the
    # first order (150) entirely, the second (160) for 50; at the feed, no offset:
    # 100 TEST per USD
    assert first not in chain.state.objects
    assert chain.state.objects[second]["balance"] == amt(110, usd)
    assert bitasset(chain, usd)["force_settled_volume"] == 200
    assert chain.state.balance(INIT1, CORE) - core1 == 15000 + 5000
    call = chain.state.objects[call_id]
    assert (call["debt"], call["collateral"]) == (800, 380000)
    # the next maintenance resets the volume: the rest settles
    jump(chain, 86400)
    assert second not in chain.state.objects
    assert chain.state.balance(INIT1, CORE) - core1 == 31000
    assert bitasset(chain, usd)["force_settled_volume"] == 110


def test_disable_force_settle_cancels_waiting_settlements(chain):
    usd = smartcoin(chain)
    borrow(chain, INIT1, 400000, 1000, usd)
    settle = push(chain, [17, {"account": INIT1, "amount": amt(300, usd),
                               "extensions": []}])[0][1]["new_objects"][0]
    assert chain.state.balance(INIT1, usd) == 700
    opts = dict(chain.state.objects[usd]["options"], flags=DISABLE_FORCE_SETTLE)
    push(chain, [11, {"issuer": INIT0, "asset_to_update": usd, "new_options": opts,
                      "extensions": {}}])
    assert settle not in chain.state.objects and chain.state.balance(INIT1, usd) == 1000
    with pytest.raises(InvalidOperation, match="force_settle flag enabled"):
        push(chain, [17, {"account": INIT1, "amount": amt(1, usd), "extensions": []}])


def test_an_expired_feed_stops_borrowing_and_settling(chain):
    usd = smartcoin(chain, feed_lifetime_sec=7200)
    borrow(chain, INIT1, 400000, 1000, usd)
    produce(chain)
    jump(chain, 7201)
    b = bitasset(chain, usd)
    assert b["current_feed"]["settlement_price"] == {"base": amt(0), "quote": amt(0)}
    assert b["current_maintenance_collateralization"]["base"]["amount"] == 0
    with pytest.raises(InsufficientFeeds, match="no price feed"):
        borrow(chain, INIT1, 400000, 1000, usd)
    with pytest.raises(InsufficientFeeds, match="Cannot force settle with no price feed"):
        push(chain, [17, {"account": INIT1, "amount": amt(1, usd), "extensions": []}])
    # closing the position needs no feed
    borrow(chain, INIT1, -400000, -1000, usd)
