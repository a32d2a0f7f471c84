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
    from nodeapi.plugins.market_history.history import MarketHistory, MarketHistoryOptions

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


@pytest.fixture
def pool_live(funded):
    from nodeapi.plugins.market_history.history import MarketHistory, MarketHistoryOptions
    from nodeapi.plugins.market_history.pools import LiquidityPoolHistory

    # graphene keeps the pool history in the market_history plugin
    history = LiquidityPoolHistory()
    market = MarketHistory(MarketHistoryOptions(bucket_sizes=(60,)), pools=history)
    funded.add_consumer(market)
    funded.add_consumer(history)
    node = live_node(funded, market_history=market)
    yield node
    pytest_twisted.blockon(node.stop())


def _gold_and_share(url):
    """python-bitshares: init0 creates GOLD and LPS (precision 3) and
    issues itself 1,000 GOLD."""
    from bitshares.asset import Asset

    from kit.clients import bitshares_client

    bts = bitshares_client(url)
    bts.blocking = "head"
    bts.create_asset("GOLD", 3, 1000000, account="init0")
    bts.create_asset("LPS", 3, 1000000, account="init0")
    Asset("GOLD", blockchain_instance=bts, full=True).issue(1000, "init0")


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_uptick_pool_create_deposit_exchange_withdraw(pool_live, tmp_path):
    """uptick ``pool create``, ``deposit``, ``exchange`` and ``withdraw``;
    the exchange is computed by hand from the pool rules and the pool's
    history answers over RPC."""
    from twisted.internet import threads

    from kit.clients import bitshares_client

    live = pool_live
    yield threads.deferToThread(_gold_and_share, live.ws_url)
    state = live.chain.state
    gold = state.asset_by_symbol_or_id("GOLD")["id"]
    lps = state.asset_by_symbol_or_id("LPS")["id"]
    init0 = state.account_by_name_or_id("init0")["id"]
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "pool", "create", "TEST", "GOLD",
                                      "LPS", "0.3", "1", "--account", "init0")
    assert code == 0, out + err
    [pid] = state.ids_of_type("1.19.")
    pool = state.objects[pid]
    assert (pool["taker_fee_percent"], pool["withdrawal_fee_percent"]) == (30, 100)
    # first deposit: 10 TEST (1,000,000 sat) and 100 GOLD (100,000 sat):
    # 1,000,000 shares (1,000 LPS)
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "pool", "deposit", pid, "10",
                                      "TEST", "100", "GOLD", "--account", "init0")
    assert code == 0, out + err
    assert state.balance(init0, lps) == 1000000
    # sell 1 TEST (100,000 sat): new_a = 1,100,000; new_b = ceil(1e11 / 1.1e6)
    # = 90,910; delta = 9,090; pool fee 9,090 * 30 // 10000 = 27; 9,063 GOLD sat
    gold_before = state.balance(init0, gold)
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "pool", "exchange", pid, "1",
                                      "TEST", "9.063", "GOLD", "--account", "init0")
    assert code == 0, out + err
    assert state.balance(init0, gold) - gold_before == 9063
    pool = state.objects[pid]
    assert (pool["balance_a"], pool["balance_b"]) == (1100000, 100000 - 9063)
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "pool", "withdraw", pid, "1000",
                                      "LPS", "--account", "init0")
    assert code == 0, out + err
    assert state.objects[pid]["balance_a"] == 0 and state.balance(init0, lps) == 0

    def history():
        bts = bitshares_client(live.ws_url)
        return bts.rpc.get_liquidity_pool_history(pid, None, None, 10, None, api="history")
    entries = yield threads.deferToThread(history)
    assert [e["op_type"] for e in entries] == [62, 63, 61, 59]


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_uptick_ticket_create_and_update(live, tmp_path):
    """uptick ``ticket create`` locks 10 TEST in a charging ticket, ``ticket
    update`` splits 4 TEST of it towards liquid."""
    state = live.chain.state
    init0 = state.account_by_name_or_id("init0")["id"]
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "ticket", "create",
                                      "lock_180_days", "10", "TEST", "--account", "init0")
    assert code == 0, out + err
    [tid] = state.ids_of_type("1.18.")
    ticket = state.objects[tid]
    assert ticket["account"] == init0 and ticket["amount"]["amount"] == 1000000
    assert (ticket["target_type"], ticket["current_type"], ticket["status"]) == (
        "lock_180_days", "liquid", "charging")
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "ticket", "update", tid, "liquid",
                                      "--amount", "4", "TEST", "--account", "init0")
    assert code == 0, out + err
    yield live.blocks_later(1)
    tickets = sorted(state.ids_of_type("1.18."))
    assert [state.objects[t]["amount"]["amount"] for t in tickets] == [600000, 400000]
    assert state.objects[tickets[1]]["target_type"] == "liquid"
