"""The uptick command line (PyPI ``uptick``, on python-bitshares) against a
live node: the wallet flow every other uptick test builds on."""

import pytest
import pytest_twisted

from kit.clients import live_node, run_uptick


@pytest.fixture
def live(funded):
    node = live_node(funded)
    yield node
    pytest_twisted.blockon(node.stop())


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_uptick_transfer_moves_the_amount(live, tmp_path):
    state = live.chain.state
    init0 = state.account_by_name_or_id("init0")["id"]
    init1 = state.account_by_name_or_id("init1")["id"]
    before = state.balance(init1, "1.3.0"), state.balance(init0, "1.3.0")
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "balance", "init0")
    assert code == 0, out + err
    assert "TEST" in out
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "--blocking", "transfer",
                                      "init1", "2.5", "TEST", "--account", "init0")
    assert code == 0, out + err
    assert state.balance(init1, "1.3.0") - before[0] == 250000  # 2.5 TEST, precision 5
    assert before[1] - state.balance(init0, "1.3.0") > 250000  # the amount and a fee


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_uptick_htlc_create_from_secret_and_redeem(live, tmp_path):
    """uptick ``htlc create-from-secret`` locks 10 TEST for init1 under
    sha256("opensesame"); ``htlc redeem`` with the secret releases exactly
    that amount to init1 (the redeemer, init0, pays only its fee)."""
    import hashlib

    state = live.chain.state
    init0 = state.account_by_name_or_id("init0")["id"]
    init1 = state.account_by_name_or_id("init1")["id"]
    before1 = state.balance(init1, "1.3.0")
    out, err, code = yield run_uptick(
        tmp_path, live.ws_url, "htlc", "create-from-secret", "init1", "10", "TEST",
        "--type", "sha256", "--secret", "opensesame", "--expiration", "3600",
        "--account", "init0")
    assert code == 0, out + err
    [htlc_id] = state.ids_of_type("1.16.")
    htlc = state.objects[htlc_id]
    assert htlc["transfer"] == {"from": init0, "to": init1, "amount": 1000000,
                                "asset_id": "1.3.0"}
    assert htlc["conditions"]["hash_lock"]["preimage_hash"] == [
        2, hashlib.sha256(b"opensesame").hexdigest()]
    before0 = state.balance(init0, "1.3.0")
    redeem_fee = live.chain.required_fee([50, {
        "fee": {"amount": 0, "asset_id": "1.3.0"}, "htlc_id": htlc_id, "redeemer": init0,
        "preimage": b"opensesame".hex(), "extensions": []}])["amount"]
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "--blocking", "htlc", "redeem",
                                      htlc_id, "--secret", "opensesame", "--account", "init0")
    assert code == 0, out + err
    yield live.blocks_later(1)
    assert state.find(htlc_id) is None
    assert state.balance(init1, "1.3.0") - before1 == 1000000
    assert before0 - state.balance(init0, "1.3.0") == redeem_fee


@pytest.fixture
def market_live(funded):
    from nodeapi.history.market_history import MarketHistory, MarketHistoryOptions

    plugin = MarketHistory(MarketHistoryOptions(bucket_sizes=(60, 3600)))
    funded.add_consumer(plugin)
    node = live_node(funded, market_history=plugin)
    yield node
    pytest_twisted.blockon(node.stop())


def _create_gold(url):
    """python-bitshares: init0 creates GOLD (precision 3) and issues itself
    100 GOLD; init0 sends init1 1,000 TEST."""
    from bitshares.asset import Asset

    from kit.clients import bitshares_client

    bts = bitshares_client(url)
    bts.blocking = "head"
    bts.create_asset("GOLD", 3, 1000000, account="init0")
    Asset("GOLD", blockchain_instance=bts, full=True).issue(100, "init0")
    bts.transfer("init1", 1000, "TEST", account="init0")


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_uptick_sell_buy_orderbook_ticker_trades(market_live, tmp_path):
    """uptick's market commands: init0 sells 10 GOLD at 2 TEST, init1 buys
    4 GOLD at 2 TEST (a match at the maker's price: 4 GOLD for 8 TEST);
    orderbook shows the 6 GOLD left, ticker the last price 2, trades the
    fill."""
    from twisted.internet import threads

    live = market_live
    yield threads.deferToThread(_create_gold, live.ws_url)
    state = live.chain.state
    gold = state.asset_by_symbol_or_id("GOLD")["id"]
    init1 = state.account_by_name_or_id("init1")["id"]
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "--blocking", "sell", "10",
                                      "GOLD", "2", "TEST", "--account", "init0")
    assert code == 0, out + err
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "--blocking", "buy", "4",
                                      "GOLD", "2", "TEST", "--account", "init1")
    assert code == 0, out + err
    yield live.blocks_later(1)
    assert state.balance(init1, gold) == 4000  # 4 GOLD, precision 3
    [order] = [o for o in state.limit_orders(gold, "1.3.0")]
    assert int(order["for_sale"]) == 6000
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "orderbook", "GOLD:TEST")
    assert code == 0, out + err
    # one ask: 6 GOLD left at 2 TEST/GOLD = 12 TEST; no bid
    assert "| 2.000000 TEST/GOLD | 12.00000 TEST | 12.00000 TEST | 6.000 GOLD | 6.000 GOLD |" \
        in out, out
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "ticker", "GOLD:TEST")
    assert code == 0, out + err
    for row in ("| baseVolume         | 8.00000 TEST ", "| quoteVolume        | 4.000 GOLD ",
                "| latest             | 2.00000000 TEST/GOLD |",
                "| lowestAsk          | 2.00000000 TEST/GOLD |"):
        assert row in out, out
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "trades", "GOLD:TEST")
    assert code == 0, out + err
    assert "| 4.000 GOLD | 8.00000 TEST | 2.000000 TEST/GOLD |" in out, out
