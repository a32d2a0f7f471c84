"""The JavaScript clients of tests/js against nodeapi and against the
reference node (bitshares-core 7.0.2's witness_node, kit.reference), the
same assertions on both: bitsharesjs-ws' connect sequence and reads with
bitsharesjs' ChainStore subscription (client.js), bitsharesjs' signing and
broadcast with a callback (transfer.js), and btsdex's everyday flow
(btsdex.js).  One node of each kind per module; init0 claims the genesis
balance and sends init1 100,000 TEST when the node starts."""

import json
import os
import subprocess

import pytest

from kit.clients import NODE_KINDS, start_client_node
from kit.js import JS_DIR
from kit.keys import CHAIN_ID, DEV_PUB, DEV_WIF

pytestmark = pytest.mark.slow

CORE = "1.3.0"
INIT0, INIT1 = "1.2.6", "1.2.7"


@pytest.fixture(scope="module", params=NODE_KINDS)
def node(request, tmp_path_factory):
    side = start_client_node(request.param, tmp_path_factory.mktemp(request.param))
    try:
        side.push([37, {"deposit_to_account": INIT0, "balance_to_claim": "1.15.0",
                        "balance_owner_key": DEV_PUB,
                        "total_claimed": {"amount": 10 ** 15, "asset_id": CORE}}])
        side.push([0, {"from": INIT0, "to": INIT1,
                       "amount": {"amount": 10 ** 10, "asset_id": CORE}, "extensions": []}])
        yield side
    finally:
        side.node.stop()


def run_js(js_client, script, *args, timeout=120) -> dict:
    """``node tests/js/<script> args``: its last stdout line as JSON."""
    proc = subprocess.run([js_client, os.path.join(JS_DIR, script), *args], cwd=JS_DIR,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_bitsharesjs_connects_reads_and_subscribes(node, js_client):
    out = run_js(js_client, "client.js", node.ws_url, "init0", "--subscribe")
    assert out["chain_id"] == CHAIN_ID and out["head_block_number"] >= 1
    assert out["account"]["id"] == INIT0 and out["account"]["name"] == "init0"
    # the genesis balance less 100,000 TEST and the transfer's fee (fc writes
    # amounts above 2^32 - 1 as strings)
    [[asset, held]] = [[b["asset_type"], b["balance"]] for b in out["balances"]]
    assert asset == CORE and int(held) == node.balance(INIT0, CORE) < 10 ** 15 - 10 ** 10
    assert [h["op"][0] for h in out["history"]] == [0, 37]  # newest first
    # bitsharesjs-ws hands the callback params[1]: [block id]
    [block_id] = out["notice"]
    assert len(block_id) == 40 and int(block_id[:8], 16) >= 1


def test_bitsharesjs_signs_and_broadcasts(node, js_client):
    before = node.balance(INIT1, CORE), node.balance(INIT0, CORE)
    out = run_js(js_client, "transfer.js", node.ws_url, DEV_WIF, INIT0, INIT1, "300000")
    [fee] = node.call("get_required_fees", [[0, {
        "fee": {"amount": 0, "asset_id": CORE}, "from": INIT0, "to": INIT1,
        "amount": {"amount": 300000, "asset_id": CORE}, "extensions": []}]], CORE)
    assert out["fee"] == fee
    [confirmed] = out["confirmed"]
    assert confirmed["trx"]["operations"][0][1]["amount"] == {"amount": 300000,
                                                              "asset_id": CORE}
    block = node.call("get_block", confirmed["block_num"])
    assert block["transactions"][confirmed["trx_num"]]["signatures"] == \
        confirmed["trx"]["signatures"]
    assert node.balance(INIT1, CORE) == before[0] + 300000
    assert node.balance(INIT0, CORE) == before[1] - 300000 - int(fee["amount"])


def test_btsdex_everyday_flow(node, js_client):
    init1_core = node.balance(INIT1, CORE)
    seen = run_js(js_client, "btsdex.js", node.ws_url, CHAIN_ID, DEV_WIF)
    assert seen["chain"]["chainId"] == CHAIN_ID and seen["chain"]["coreAsset"] == "TEST"
    assert (seen["init0"], seen["init1"]) == (INIT0, INIT1)
    gold = seen["gold"]["id"]
    assert seen["gold"] == {"id": gold, "symbol": "GOLD", "precision": 3}
    # btsdex's transaction builder asked the node: 4-letter symbol asset_create fee
    schedule = node.call("get_global_properties")["parameters"]["current_fees"]
    create = dict(schedule["parameters"])[10]
    assert seen["asset_create_cost"] == {"TEST": int(create["symbol4"]) / 10 ** 5}
    assert seen["transfer"]["amount"] == {"amount": 250000, "asset_id": CORE}
    assert seen["memo"] == "for the bot"
    # init0's ask: 10 GOLD for 20 TEST; init1's bid for 4 GOLD at 2 fills at once
    assert seen["ask"]["for_sale"] == 10000 and seen["ask"]["seller"] == INIT0
    assert seen["ask"]["sell_price"] == {"base": {"amount": 10000, "asset_id": gold},
                                         "quote": {"amount": 2000000, "asset_id": CORE}}
    assert seen["bid"] is None
    [rest] = seen["orders"]
    assert rest["id"] == seen["ask"]["id"] and rest["for_sale"] == 6000
    # get_order_book(GOLD, TEST): an order selling GOLD is a bid, priced 0.5 GOLD/TEST
    [bid] = seen["book"]["bids"]
    assert float(bid["price"]) == 0.5 and float(bid["base"]) == 6 and float(bid["quote"]) == 12
    assert seen["book"]["asks"] == []
    assert [o["for_sale"] for o in seen["limit_orders"]] == [6000]
    assert float(seen["ticker"]["latest"]) == 2
    assert {b["symbol"]: b["amount"] for b in seen["balances_before_cancel"]}["GOLD"] == 90000
    assert seen["orders_after_cancel"] == []
    [order_fee] = node.call("get_required_fees", [[1, {
        "fee": {"amount": 0, "asset_id": CORE}, "seller": INIT1,
        "amount_to_sell": {"amount": 800000, "asset_id": CORE},
        "min_to_receive": {"amount": 4000, "asset_id": gold},
        "expiration": "2030-01-01T00:00:00", "fill_or_kill": False, "extensions": []}]], CORE)
    # init1: +2.5 TEST, -8 TEST for 4 GOLD, - the order's fee
    assert {b["symbol"]: int(b["amount"]) for b in seen["balances"]} == {
        "TEST": init1_core + 250000 - 800000 - int(order_fee["amount"]), "GOLD": 4000}
    assert node.balance(INIT0, gold) == 96000
    assert seen["block"]["id"] == "2.1.0" and seen["block"]["head_block_number"] >= 1
