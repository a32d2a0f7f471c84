"""A smartcoin's whole life over RPC with real clients, on a devnet with a
10 s maintenance interval: python-bitshares ``create_asset`` (bitasset
options), ``Asset.update_feed_producers``, ``publish_price_feed``,
``Dex.borrow``, ``Market.sell``, ``asset_settle`` and ``bid_collateral``
(margin call at the expected price, force settlement, black swan and
global settlement, a collateral bid reviving the asset at maintenance);
uptick ``feeds``, ``calls``, ``settle`` and ``settlements`` (uptick's
``newfeed`` and ``borrow`` fail on any node with python-bitshares 0.7's
asset cache, see ``_client``).  Amounts in satoshis, by hand:
USDX has precision 4, TEST 5, so 1 TEST per USDX is 10 TEST sat per USDX
sat."""

import pytest
import pytest_twisted
from twisted.internet import threads

from kit.clients import bitshares_client, forget_cached_objects, live_node, run_uptick

INIT0 = "1.2.6"
OPTIONS = {"feed_lifetime_sec": 86400, "minimum_feeds": 1, "force_settlement_delay_sec": 3,
           "force_settlement_offset_percent": 0, "maximum_force_settlement_volume": 10000,
           "short_backing_asset": "1.3.0", "extensions": {}}


@pytest.fixture
def live(genesis, new_chain):
    from kit.chain import claim_wire, genesis_with, produce
    from kit.signing import sign_wire

    from nodeapi.plugins.market_history.history import MarketHistory

    chain = new_chain(genesis_with(genesis, maintenance_interval=10, maintenance_skip_slots=0))
    plugin = MarketHistory()
    chain.add_consumer(plugin)  # uptick ``calls`` asks for the ticker
    chain.push_transaction(sign_wire(chain, [claim_wire()]))
    produce(chain)
    node = live_node(chain, market_history=plugin)
    yield node
    pytest_twisted.blockon(node.stop())


def _client(url, symbol=None):
    """A python-bitshares instance with a fresh object cache holding
    ``symbol`` fully loaded: python-bitshares caches the first Asset it
    builds (a ``Price`` builds a plain one) and ``publish_price_feed`` and
    ``Dex`` would then read a cached asset without ``bitasset_data`` (and
    an account without ``call_orders``)."""
    from bitshares.asset import Asset
    from bitshares.instance import set_shared_blockchain_instance

    forget_cached_objects()
    bts = bitshares_client(url)
    bts.blocking = "head"
    set_shared_blockchain_instance(bts)  # Price.as_base builds objects on the shared one
    if symbol is not None:
        Asset(symbol, full=True, blockchain_instance=bts)
    return bts


def _create_and_feed(url, symbol):
    from bitshares.asset import Asset
    from bitshares.price import Price

    bts = _client(url)
    bts.create_asset(symbol, 4, 1000000, is_bitasset=True, bitasset_options=dict(OPTIONS),
                     account="init0")
    Asset(symbol, blockchain_instance=bts).update_feed_producers(["init0"])
    bts = _client(url, symbol)
    bts.publish_price_feed(symbol, Price(f"100 TEST/{symbol}", blockchain_instance=bts),
                           mssr=110, mcr=175, account="init0")
    return Asset(symbol, blockchain_instance=bts)["id"]


def _publish(url, symbol, test_per_usd):
    from bitshares.price import Price

    bts = _client(url, symbol)
    bts.publish_price_feed(symbol, Price(f"{test_per_usd} TEST/{symbol}", blockchain_instance=bts),
                           mssr=110, mcr=175, account="init0")


def _borrow_and_sell(url, symbol):
    from bitshares.amount import Amount
    from bitshares.dex import Dex
    from bitshares.market import Market

    bts = _client(url, symbol)
    Dex(blockchain_instance=bts).borrow(Amount(100, symbol, blockchain_instance=bts),
                                        collateral_ratio=2.0, account="init0")
    Market(f"{symbol}:TEST", blockchain_instance=bts).sell(120, 50, account="init0")


def _borrow(url, symbol, amount, ratio):
    from bitshares.amount import Amount
    from bitshares.dex import Dex

    bts = _client(url, symbol)
    Dex(blockchain_instance=bts).borrow(Amount(amount, symbol, blockchain_instance=bts),
                                        collateral_ratio=ratio, account="init0")


def _settle(url, symbol, amount):
    from bitshares.amount import Amount

    _client(url).asset_settle(Amount(amount, symbol, blockchain_instance=_client(url)),
                              account="init0")


def _bid(url, symbol, collateral, debt):
    from bitshares.amount import Amount

    bts = _client(url)
    bts.bid_collateral(Amount(collateral, "TEST", blockchain_instance=bts),
                       Amount(debt, symbol, blockchain_instance=bts), account="init0")


def _positions(state, usd):
    return [(state.objects[c]["debt"], state.objects[c]["collateral"])
            for c in state.calls_by_asset.get(usd, ())]


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_python_bitshares_smartcoin_life(live):
    state, url = live.chain.state, live.ws_url
    usd = yield threads.deferToThread(_create_and_feed, url, "USDX")
    b = state.objects[state.objects[usd]["bitasset_data_id"]]
    # 100 TEST per USDX = 10^7 / 10^4 TEST sat per USDX sat
    assert b["current_feed"]["settlement_price"] == {
        "base": {"amount": 1, "asset_id": usd}, "quote": {"amount": 1000, "asset_id": "1.3.0"}}
    assert (b["current_feed"]["maintenance_collateral_ratio"],
            b["current_feed"]["maximum_short_squeeze_ratio"]) == (1750, 1100)

    # borrow 100 USDX at a ratio of 2: 100 * 2 / 0.01 = 20,000 TEST; then
    # offer 50 USDX at 120 TEST each
    yield threads.deferToThread(_borrow_and_sell, url, "USDX")
    assert _positions(state, usd) == [(1000000, 2000000000)]
    [order] = [state.objects[o] for o in state.orders_by_seller[INIT0]]
    assert order["for_sale"] == 500000

    # the feed rises to 120 TEST per USDX: maintenance at 210 TEST per USDX
    # margin-calls the position (200) against the order at the order's price
    # (MCOP 132 >= 120): the call buys 50 USDX for 6,000 TEST (no MCFR, no
    # fee) and keeps 50 USDX of debt on 14,000 TEST
    yield threads.deferToThread(_publish, url, "USDX", 120)
    assert _positions(state, usd) == [(500000, 1400000000)]
    assert order["id"] not in state.objects

    # force-settle 10 USDX: after 3 s, at the feed (no offset): 1,200 TEST
    # from the position
    yield threads.deferToThread(_settle, url, "USDX", 10)
    yield live.blocks_later(5)
    assert _positions(state, usd) == [(400000, 1280000000)]

    # a black swan at 1,000 TEST per USDX: the position (320 TEST per USDX)
    # is below MSSP (1,100).  Global settlement at 400000/1280000000; the
    # fund receives at that * 1.1 = 11/32000: ceil(400000 * 32000/11) =
    # 1,163,636,364 TEST sat, the margin call fee is 116,363,636.
    yield threads.deferToThread(_publish, url, "USDX", 1000)
    b = state.objects[b["id"]]
    assert b["settlement_fund"] == 1163636364
    assert b["settlement_price"]["base"]["amount"] == 400000
    assert state.objects[state.objects[usd]["dynamic_asset_data_id"]][
        "accumulated_collateral_fees"] == 116363636
    assert _positions(state, usd) == []

    # a bid of 10,000 TEST for the 40 USDX; a feed of 300 TEST per USDX keeps
    # the fund (290.9 TEST per USDX) below the ICR collateralization (525):
    # no revival at the feed, but at maintenance the bid's position
    # (10^9 + 1,163,636,364 for 400,000: 540.9 TEST per USDX) is healthy
    yield threads.deferToThread(_bid, url, "USDX", 10000, 40)
    seen = []  # the blocks that revived it (maintenance blocks only)

    def watch(applied):
        if any(op.op[0] == 46 for op in applied.operations):
            seen.append((applied.timestamp, live.chain.dgp["last_vote_tally_time"]))

    live.chain.add_consumer(type("W", (), {"block_applied": lambda s, a: watch(a)})())
    yield threads.deferToThread(_publish, url, "USDX", 300)
    for _ in range(80):
        if not state.objects[b["id"]]["settlement_fund"]:
            break
        yield live.blocks_later(1)
    assert state.objects[b["id"]]["settlement_fund"] == 0
    assert _positions(state, usd) == [(400000, 2163636364)]
    # the execute_bid came in a maintenance block (its time is the last tally)
    [(when, tally)] = seen
    assert when == tally


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_uptick_feeds_borrow_calls_and_settlements(live, tmp_path):
    state, url, chain_id = live.chain.state, live.ws_url, live.chain.chain_id
    usd = yield threads.deferToThread(_create_and_feed, url, "USDU")

    def uptick(*args):
        return run_uptick(tmp_path, url, *args, chain_id=chain_id)

    # (uptick ``newfeed`` builds its Price before python-bitshares loads the
    # asset fully and then fails on any node: python-bitshares publishes)
    yield threads.deferToThread(_publish, url, "USDU", 125)
    b = state.objects[state.objects[usd]["bitasset_data_id"]]
    assert b["current_feed"]["settlement_price"]["quote"]["amount"] == 1250
    out, err, code = yield uptick("feeds", "USDU")
    assert code == 0 and "USDU" in out, out + err
    # borrow 10 USDU at ratio 3: 10 * 3 * 125 = 3,750 TEST (python-bitshares:
    # uptick ``borrow`` hits the same python-bitshares asset cache bug)
    yield threads.deferToThread(_borrow, url, "USDU", 10, 3.0)
    assert _positions(state, usd) == [(100000, 375000000)]
    out, err, code = yield uptick("calls", "init0")
    assert code == 0 and "USDU" in out, out + err
    out, err, code = yield uptick("--blocking", "settle", "1", "USDU", "--account", "init0")
    assert code == 0, out + err
    out, err, code = yield uptick("settlements", "USDU")
    assert code == 0, out + err
    yield live.blocks_later(5)
    # settled at the feed, 125 TEST per USDU, from the only position
    assert _positions(state, usd) == [(90000, 375000000 - 12500000)]


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_bitsharesjs_call_order_update(live, js_client):
    """bitsharesjs' TransactionBuilder borrows 10 USDJ against 3,000 TEST
    with a target collateral ratio of 2.5 (tests/js/borrow.js): the node
    computes the fee, accepts the signature and confirms the block."""
    import json
    import os

    from twisted.internet import utils

    from kit.js import JS_DIR
    from kit.keys import DEV_WIF

    state, url = live.chain.state, live.ws_url
    usd = yield threads.deferToThread(_create_and_feed, url, "USDJ")
    core_before = state.balance(INIT0, "1.3.0")
    out, err, code = yield utils.getProcessOutputAndValue(
        js_client, [os.path.join(JS_DIR, "borrow.js"), url, DEV_WIF, INIT0, usd, "100000",
                    "300000000", "2500"], env=dict(os.environ), path=JS_DIR)
    assert code == 0, err.decode()[-2000:]
    result = json.loads(out.decode().strip().splitlines()[-1])
    # 10 USDJ = 100,000 sat against 3,000 TEST = 300,000,000 sat
    [call] = [state.objects[c] for c in state.calls_by_asset[usd]]
    assert (call["debt"], call["collateral"], call["target_collateral_ratio"]) == (
        100000, 300000000, 2500)
    fee = int(result["fee"]["amount"])
    assert fee > 0 and core_before - state.balance(INIT0, "1.3.0") == 300000000 + fee
    assert state.balance(INIT0, usd) == 100000
