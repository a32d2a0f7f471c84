"""python-bitshares against the daemon: the story of
:mod:`e2e.flows` (ws with login, http with Basic credentials), then reads of
accounts, balances, blocks and history checked to exact values.  Fees are
recomputed from the chain's own fee schedule (``get_global_properties``)
over the bitsharesbase serialization of what was broadcast (graphene
``fee_schedule::calculate_fee``)."""

import pytest

from e2e.flows import ALICE, BOB, COIN, GENESIS_BALANCE, MEMOS, client, keys


pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TYPES = [37, 5, 5, 0, 0, 0, 10, 14]
#: 1.11.M of each account's operations, oldest first
ACCOUNT_OPS = {"init0": [0, 1, 2, 3, 4, 6, 7], ALICE: [1, 3, 5, 7], BOB: [2, 4, 5]}


def expected_fee(op: list, schedule: dict) -> int:
    """Graphene's required core fee of ``op`` (as broadcast) under the
    chain's ``current_fees``."""
    from bitsharesbase.objects import Memo, Operation

    kind, data = op
    params = dict(schedule["parameters"])[kind]
    if kind == 5:
        fee = params["basic_fee"] if any(c in "-0123456789" for c in data["name"]) \
            else params["premium_fee"]
    elif kind == 10:
        fee = int(params["long_symbol"]) if len(data["symbol"]) > 4 else \
            int(params["symbol4" if len(data["symbol"]) == 4 else "symbol3"])
    else:
        fee = params.get("fee", 0)
    ppk = params.get("price_per_kbyte", 0)
    if kind in (0, 14):
        # pack_size of the optional<memo_data>: its presence byte plus the memo;
        # transfer charges it only with a memo, asset_issue always
        memo = data.get("memo")
        size = 1 + len(bytes(Memo(**dict(memo, prefix="TEST")))) if memo else kind // 14
    elif ppk:
        size = len(bytes(Operation([kind, dict(data, prefix="TEST")]))) - 1
    else:
        size = 0
    return (int(fee) + size * int(ppk) // 1024) * schedule["scale"] // 10000


@pytest.fixture(scope="module")
def ws(node):
    """A fresh python-bitshares websocket client (logged in) for reads, with
    every memo key of the story."""
    from kit.keys import DEV_WIF

    return client(node.port, "ws", [DEV_WIF, keys(ALICE)["memo"][0], keys(BOB)["memo"][0]])


@pytest.fixture(scope="module")
def http(node):
    return client(node.port, "http", [])


def test_operations_land_in_blocks_in_order(scenario, ws):
    res = scenario.results
    assert [r["operations"][0][0] for r in res] == TYPES
    blocks = [r["block_num"] for r in res]
    assert blocks == sorted(blocks) and len(set(blocks)) == len(blocks)
    assert [r["operation_results"] for r in res] == [
        [[0, {}]], [[1, "1.2.18"]], [[1, "1.2.19"]], [[0, {}]], [[0, {}]], [[0, {}]],
        [[1, "1.3.1"]], [[0, {}]]]
    for r in res:
        assert r["trx_num"] == 0 and len(r["id"]) == 40
        block = ws.rpc.get_block(r["block_num"])
        [trx] = block["transactions"]
        assert trx["signatures"] == r["signatures"]
        assert trx["operations"] == r["operations"]
        assert block["witness"].startswith("1.6.")
        assert ws.rpc.get_transaction(r["block_num"], 0)["signatures"] == r["signatures"]


def test_fees_follow_the_chain_fee_schedule(scenario, ws):
    schedule = ws.rpc.get_global_properties()["parameters"]["current_fees"]
    fees = [scenario.fee(m) for m in range(8)]
    assert fees == [expected_fee(scenario.op(m), schedule) for m in range(8)]
    assert fees[0] == 0 and fees[6] >= 500000000  # long-symbol asset_create


def test_balances_after_transfers_and_fees(scenario, ws, http):
    from bitshares.account import Account

    fee = scenario.fee
    want = {
        "init0": {"TEST": GENESIS_BALANCE - 150000000 - sum(fee(m) for m in (1, 2, 3, 4, 6, 7))},
        ALICE: {"TEST": 100000000 - 10000000 - fee(5), COIN: 250000},
        BOB: {"TEST": 60000000},
    }
    for name, balances in want.items():
        for bts in (ws, http):
            account = Account(name, blockchain_instance=bts, full=True, lazy=False)
            got = {b["symbol"]: int(b["amount"] * 10 ** b["asset"]["precision"] + 0.5)
                   for b in account.balances}
            assert got == balances, (name, bts.rpc.url)
    assert ws.rpc.get_account_balances(scenario.ids[ALICE], ["1.3.1"]) == \
        [{"amount": 250000, "asset_id": "1.3.1"}]
    supply = ws.rpc.get_objects(["2.3.0", "2.3.1"])
    assert int(supply[1]["current_supply"]) == 250000


def test_accounts_and_asset_read_back(scenario, ws, http):
    from bitshares.account import Account
    from bitshares.asset import Asset

    assert scenario.ids == {"init0": "1.2.6", ALICE: "1.2.18", BOB: "1.2.19", COIN: "1.3.1"}
    for name in (ALICE, BOB):
        k = keys(name)
        acc = Account(name, blockchain_instance=http)
        assert acc["id"] == scenario.ids[name] and acc["name"] == name
        assert acc["registrar"] == acc["referrer"] == "1.2.6"
        assert acc["referrer_rewards_percentage"] == 5000
        assert acc["owner"]["key_auths"] == [[k["owner"][1], 1]]
        assert acc["active"]["key_auths"] == [[k["active"][1], 1]]
        assert acc["options"]["memo_key"] == k["memo"][1]
        assert acc["options"]["voting_account"] == "1.2.5"
    assert ws.rpc.get_account_count() == 20
    assert [a["id"] for a in ws.rpc.lookup_account_names([ALICE, BOB, "nobody-e2e"])
            if a] == ["1.2.18", "1.2.19"]
    coin = Asset(COIN, blockchain_instance=ws, full=True)
    assert coin["issuer"] == "1.2.6" and coin["precision"] == 3
    assert int(coin["options"]["max_supply"]) == 1000000000
    assert coin["options"]["description"] == "e2e coin"


def _history(bts, name):
    from bitshares.account import Account

    return list(Account(name, blockchain_instance=bts).history(limit=100))


@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_account_history_exact_ids(scenario, ws, http, scheme):
    bts = ws if scheme == "ws" else http
    for name, ms in ACCOUNT_OPS.items():
        entries = _history(bts, name)
        assert [e["id"] for e in entries] == [f"1.11.{m}" for m in reversed(ms)], name
        for e in entries:
            r = scenario.results[int(e["id"].split(".")[2])]
            assert e["op"] == r["operations"][0]
            assert e["block_num"] == r["block_num"] and e["trx_in_block"] == 0
            assert e["op_in_trx"] == 0 and e["virtual_op"] == 0
            assert e["result"] == r["operation_results"][0]


def test_memos_decrypt(scenario, ws):
    from bitshares.memo import Memo

    memo = Memo(blockchain_instance=ws)
    for m, text in MEMOS.items():
        assert memo.decrypt(scenario.op(m)[1]["memo"]) == text


def test_history_api_calls(scenario, ws):
    alice, bob = scenario.ids[ALICE], scenario.ids[BOB]
    call = ws.rpc

    def ids(entries):
        return [e["id"] for e in entries]

    assert ids(call.get_account_history(alice, "1.11.0", 2, "1.11.0", api="history")) == \
        ["1.11.7", "1.11.5"]
    assert ids(call.get_account_history(alice, "1.11.1", 100, "1.11.5", api="history")) == \
        ["1.11.5", "1.11.3"]
    assert ids(call.get_relative_account_history(bob, 1, 2, 3, api="history")) == \
        ["1.11.5", "1.11.4"]
    assert ids(call.get_account_history_operations("1.2.6", 5, "1.11.0", "1.11.0", 10,
                                                   api="history")) == ["1.11.2", "1.11.1"]
    assert ids(call.get_account_history_operations(bob, 0, "1.11.0", "1.11.0", 10,
                                                   api="history")) == ["1.11.5", "1.11.4"]
    assert call.get_account_history("1.2.17", "1.11.0", 10, "1.11.0", api="history") == []


def test_login_reaches_restricted_sets(scenario, node, ws, http):
    assert scenario.ws_login is True
    api_id = ws.rpc.network_node(api_id=1)
    assert ws.rpc.get_info(api_id=api_id)["connection_count"] == 0
    # over HTTP, Basic credentials log in for the call (api-access: bytemaster has every set)
    assert http.rpc.get_info(api="network_node")["connection_count"] == 0
    from bitshares import BitShares

    user2 = BitShares(node=f"http://user2:superpassword2@127.0.0.1:{node.port}", num_retries=0)
    with pytest.raises(Exception, match="Access denied"):
        user2.rpc.get_info(api="network_node")
    assert user2.rpc.get_block_header(1, api="database")["witness"].startswith("1.6.")


def test_statistics_follow_the_history(scenario, ws):
    """``most_recent_op`` is the account's newest ``2.9.N`` and ``total_ops``
    its entry count (ath ids as numbered in test_search_database.ATH)."""
    full = dict(ws.rpc.get_full_accounts(["init0", ALICE, BOB], False))
    got = {name: (f["statistics"]["most_recent_op"], f["statistics"]["total_ops"])
           for name, f in full.items()}
    assert got == {"init0": ("2.9.12", 7), ALICE: ("2.9.13", 4), BOB: ("2.9.10", 3)}
