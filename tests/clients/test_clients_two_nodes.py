"""python-bitshares' everyday flows against nodeapi and against the reference
node (bitshares-core 7.0.2's witness_node, kit.reference), the same
assertions on both: a flow that fails on both is python-bitshares' quirk, one
that fails on one node only is a node difference.

One node of each kind per module (:data:`kit.clients.NODE_KINDS`); init0
claims the genesis balance with python-bitshares when the node starts, and
every flow then uses accounts and symbols of its own, checking what moved
by differences of balances read over RPC.  TEST has precision 5; fees are
the ones each broadcast paid (its ``operations[0][1]["fee"]``), checked
against the node's own ``get_required_fees`` for the same operation."""

import pytest

from kit.clients import NODE_KINDS, bitshares_client, forget_cached_objects, start_client_node
from kit.keys import CHAIN_ID, DEV_PUB, DEV_WIF

pytestmark = pytest.mark.slow

CORE = "1.3.0"
GENESIS_BALANCE = 10 ** 15
INIT0, INIT1, INIT2, INIT3 = "1.2.6", "1.2.7", "1.2.8", "1.2.9"


@pytest.fixture(scope="module", params=NODE_KINDS)
def node(request, tmp_path_factory):
    """A node of each kind with init0's genesis claim made by python-bitshares
    (``node.claim``: the broadcast answer)."""
    from kit.chain import claim_op

    side = start_client_node(request.param, tmp_path_factory.mktemp(request.param))
    try:
        forget_cached_objects()
        side.claim = client(side).finalizeOp(claim_op(), "init0", "active")
        yield side
    finally:
        side.node.stop()


def client(node, keys=(DEV_WIF,), **kwargs):
    """python-bitshares on ``node`` waiting for each broadcast's block."""
    bts = bitshares_client(node.ws_url, keys, **kwargs)
    bts.blocking = "head"
    return bts


def balance(node, account, asset_id=CORE) -> int:
    return node.balance(account, asset_id)


def paid(result) -> int:
    """The core fee paid by a blocking broadcast's single operation."""
    [[_, op]] = result["operations"]
    assert op["fee"]["asset_id"] == CORE
    return int(op["fee"]["amount"])


def required(node, op) -> int:
    """The node's required core fee of a wire operation (fee set to 0)."""
    kind, data = op
    [fee] = node.call("get_required_fees", [[kind, dict(data, fee={"amount": 0,
                                                                    "asset_id": CORE})]], CORE)
    return int(fee["amount"])


def test_connect_and_read_chain_properties(node):
    from bitshares.account import Account
    from bitshares.asset import Asset
    from bitshares.blockchain import Blockchain

    forget_cached_objects()
    bts = client(node)
    assert bts.rpc.get_chain_properties()["chain_id"] == CHAIN_ID
    assert bts.prefix == "TEST" and bts.rpc.chain_params["core_symbol"] == "TEST"
    config = bts.rpc.get_config()
    assert config["GRAPHENE_ADDRESS_PREFIX"] == "TEST"
    params = bts.rpc.get_global_properties()["parameters"]
    assert params["block_interval"] == 1
    info = bts.info()
    assert info["head_block_number"] >= 1 and info["current_witness"].startswith("1.6.")
    assert Account("init0", blockchain_instance=bts)["id"] == INIT0
    core = Asset("TEST", blockchain_instance=bts)
    assert (core["id"], core["precision"]) == (CORE, 5)
    chain = Blockchain(blockchain_instance=bts, mode="head")
    block = chain.block_time(1)
    assert block.year >= 2020
    witnesses = bts.rpc.lookup_witness_accounts("", 100)
    assert [name for name, _ in witnesses] == sorted(f"init{i}" for i in range(11))


def test_claim_genesis_balance(node):
    from bitshares.account import Account

    claim = node.claim
    [[kind, op]] = claim["operations"]
    assert kind == 37 and op["balance_to_claim"] == "1.15.0"
    assert op["balance_owner_key"] == DEV_PUB and op["fee"] == {"amount": 0, "asset_id": CORE}
    assert claim["operation_results"] == [[0, {}]]
    assert claim["block_num"] >= 1 and len(claim["id"]) == 40
    assert node.call("get_objects", ["1.15.0"]) == [None]
    # 2.5.0 is the committee account's emptied core balance (db_genesis.cpp),
    # so init0's first balance is 2.5.1
    [committee] = node.call("get_objects", ["2.5.0"])
    assert (committee["owner"], committee["asset_type"], committee["balance"]) == (
        "1.2.0", CORE, 0)
    [[_, full]] = node.call("get_full_accounts", ["init0"], False)
    assert [b["id"] for b in full["balances"]] == ["2.5.1"]
    forget_cached_objects()
    history = list(Account("init0", blockchain_instance=client(node)).history(
        only_ops=["balance_claim"]))
    assert [int(h["op"][1]["total_claimed"]["amount"]) for h in history] == [GENESIS_BALANCE]


def test_transfer_with_memo(node):
    from bitshares.account import Account
    from bitshares.memo import Memo

    forget_cached_objects()
    bts = client(node)
    before = balance(node, INIT0), balance(node, INIT1)
    result = bts.transfer("init1", 12.5, "TEST", memo="hello from init0", account="init0")
    [[kind, op]] = result["operations"]
    assert kind == 0 and op["amount"] == {"amount": 1250000, "asset_id": CORE}
    assert op["memo"]["from"] == op["memo"]["to"] == DEV_PUB
    assert paid(result) == required(node, [0, op])
    # the block holds it with its results cleared (bitshares-core 7.x
    # db_block.cpp _generate_block); the broadcast answer carried them
    assert result["operation_results"] == [[0, {}]]
    block = node.call("get_block", result["block_num"])
    [stored] = [t for t in block["transactions"] if t["signatures"] == result["signatures"]]
    assert stored["operation_results"] == [] and stored["operations"] == result["operations"]
    assert balance(node, INIT0) == before[0] - 1250000 - paid(result)
    assert balance(node, INIT1) == before[1] + 1250000
    [latest] = Account("init1", blockchain_instance=bts).history(limit=1)
    assert latest["op"][1]["memo"] == op["memo"]
    memo = Memo(from_account="init0", to_account="init1", blockchain_instance=bts)
    assert memo.decrypt(latest["op"][1]["memo"]) == "hello from init0"


def _keys(name):
    from bitsharesbase.account import PasswordKey

    return {role: format(PasswordKey(name, "two nodes", role=role).get_private_key().pubkey,
                         "TEST") for role in ("owner", "active", "memo")}


def test_account_creation(node):
    from bitshares.account import Account

    forget_cached_objects()
    bts = client(node)
    keys = _keys("cref-alice")
    before = balance(node, INIT0)
    result = bts.create_account("cref-alice", registrar="init0", referrer="init1",
                                referrer_percent=25, owner_key=keys["owner"],
                                active_key=keys["active"], memo_key=keys["memo"])
    [[kind, op]] = result["operations"]
    [[_, new_id]] = result["operation_results"]
    assert kind == 5 and new_id.startswith("1.2.")
    # a name with a dash is not premium: the basic fee (account_create_operation::calculate_fee)
    assert paid(result) == required(node, [5, op])
    assert balance(node, INIT0) == before - paid(result)
    alice = Account("cref-alice", blockchain_instance=bts)
    assert alice["id"] == new_id
    assert (alice["registrar"], alice["referrer"]) == (INIT0, INIT1)
    assert alice["referrer_rewards_percentage"] == 2500
    assert alice["owner"]["key_auths"] == [[keys["owner"], 1]]
    assert alice["active"]["key_auths"] == [[keys["active"], 1]]
    assert alice["options"]["memo_key"] == keys["memo"]
    assert node.call("get_account_by_name", "cref-alice")["id"] == new_id
    # account_object's members (account_object.cpp FC_REFLECT_DERIVED; the
    # optional cashback_vb and allowed_assets unset are left out); nodeapi
    # adds the empty ``annotations`` the specification requires
    [raw] = node.call("get_accounts", [new_id])
    assert raw.get("annotations", []) == []
    assert [k for k in raw if k != "annotations"] == [
        "id", "membership_expiration_date", "registrar", "referrer", "lifetime_referrer",
        "network_fee_percentage", "lifetime_referrer_fee_percentage",
        "referrer_rewards_percentage", "name", "owner", "active", "options",
        "num_committee_voted", "statistics", "whitelisting_accounts", "blacklisting_accounts",
        "whitelisted_accounts", "blacklisted_accounts", "owner_special_authority",
        "active_special_authority", "top_n_control_flags", "creation_block_num",
        "creation_time"]


def test_uia_create_and_issue(node):
    from bitshares.asset import Asset

    forget_cached_objects()
    bts = client(node)
    before = balance(node, INIT0)
    created = bts.create_asset("CREFA", 3, 1000000, description="two nodes", account="init0")
    [[_, asset_id]] = created["operation_results"]
    [[kind, op]] = created["operations"]
    assert kind == 10 and paid(created) == required(node, [10, op])
    coin = Asset("CREFA", blockchain_instance=bts)
    assert coin["id"] == asset_id and coin["precision"] == 3 and coin["issuer"] == INIT0
    # share_type within 32 bits is a JSON number (fc's writer), beyond a string
    assert coin["options"]["max_supply"] == 1000000 * 1000
    assert coin["options"]["max_market_fee"] == 1000000 * 1000
    # get_assets answers graphene's extended_asset_object (database_api.cpp
    # extend_asset): a UIA backs no position and is held in none
    [extended] = node.call("get_assets", ["CREFA"])
    assert extended["total_in_collateral"] == 0 and "total_backing_collateral" not in extended
    issued = coin.issue(250, "init1", memo="fresh")
    assert balance(node, INIT1, asset_id) == 250000
    [dynamic] = node.call("get_objects", [coin["dynamic_asset_data_id"]])
    assert int(dynamic["current_supply"]) == 250000
    assert balance(node, INIT0) == before - paid(created) - paid(issued)


def test_limit_order_fill_and_cancel(node):
    """init2 sells 10 CREFB for 20 TEST; init3 buys 4 CREFB at 2 TEST: a
    fill at the maker's price (db_market.cpp match: 4 CREFB for 8 TEST);
    init2 then cancels the rest (6 CREFB back)."""
    from bitshares.asset import Asset
    from bitshares.instance import BlockchainInstance, set_shared_blockchain_instance
    from bitshares.market import Market

    forget_cached_objects()
    bts = client(node)
    bts.transfer("init2", 10000, "TEST", account="init0")  # CREFB costs 5000
    bts.transfer("init3", 1000, "TEST", account="init0")
    created = bts.create_asset("CREFB", 3, 1000000, account="init2")
    [[_, coin]] = created["operation_results"]
    Asset("CREFB", blockchain_instance=bts).issue(100, "init2")
    init2_core, init3_core = balance(node, INIT2), balance(node, INIT3)
    market = Market("CREFB:TEST", blockchain_instance=bts)
    ask = market.sell(2, 10, account="init2", returnOrderId="head")
    order_id = ask["orderid"]
    assert order_id.startswith("1.7.")
    bid = market.buy(2, 4, account="init3", returnOrderId="head")
    # the taker's order is filled at once: no order is left of it
    assert node.call("get_objects", [bid["orderid"]]) == [None]
    [rest] = node.call("get_objects", [order_id])
    assert int(rest["for_sale"]) == 6000
    assert rest["sell_price"] == {"base": {"amount": 10000, "asset_id": coin},
                                  "quote": {"amount": 2000000, "asset_id": CORE}}
    assert balance(node, INIT3, coin) == 4000
    assert balance(node, INIT3) == init3_core - 800000 - paid(bid)
    assert balance(node, INIT2) == init2_core - paid(ask) + 800000
    book = node.call("get_limit_orders", coin, CORE, 10)
    assert [o["id"] for o in book] == [order_id]
    fills = [h["op"] for h in node.call("get_account_history", "init3", "1.11.0", 10,
                                        "1.11.0", api="history") if h["op"][0] == 4]
    assert [(f[1]["pays"], f[1]["receives"]) for f in fills] == [
        ({"amount": 800000, "asset_id": CORE}, {"amount": 4000, "asset_id": coin})]
    # python-bitshares' FilledOrder builds its Price on the shared instance
    # (price.py passes no blockchain_instance on), so Market.trades() needs one
    # set, or it dials python-bitshares' default public node: a client quirk,
    # the same on both nodes (docs/python-bitshares-testnet-suite.rst)
    set_shared_blockchain_instance(bts)
    try:
        [trade] = list(market.trades(limit=5))
    finally:
        BlockchainInstance.set_shared_blockchain_instance(None)
    assert (float(trade["quote"]), float(trade["base"])) == (4, 8)
    cancelled = bts.cancel([order_id], account="init2")
    assert cancelled["operation_results"] == [[2, {"amount": 6000, "asset_id": coin}]]
    assert node.call("get_objects", [order_id]) == [None]
    assert balance(node, INIT2, coin) == 96000


def test_account_update_and_vote(node):
    from bitshares.account import Account

    forget_cached_objects()
    bts = client(node)
    bts.transfer("init4", 100, "TEST", account="init0")
    witness = node.call("get_witness_by_account", "init5")
    bts.approvewitness(["init5"], account="init4")
    new_memo = _keys("cref-init4")["memo"]
    bts.update_memo_key(new_memo, account="init4")
    forget_cached_objects()
    init4 = Account("init4", blockchain_instance=bts)
    assert witness["vote_id"] in init4["options"]["votes"]
    assert init4["options"]["num_witness"] == 1
    assert init4["options"]["memo_key"] == new_memo


def test_proposal_and_approval(node):
    """init0 proposes a 1.5 TEST transfer init6 -> init7 (python-bitshares'
    proposer mode); init6's approval executes it at once."""
    from bitshares.instance import BlockchainInstance, set_shared_blockchain_instance
    from bitshares.proposal import Proposals

    forget_cached_objects()
    funder = client(node)
    funder.transfer("init6", 100, "TEST", account="init0")
    init6_id, init7_id = "1.2.12", "1.2.13"
    before = balance(node, init6_id), balance(node, init7_id)
    bts = client(node, proposer="init0", proposal_expiration=3600)
    set_shared_blockchain_instance(bts)
    try:
        created = bts.transfer("init7", 1.5, "TEST", account="init6")
        [[_, pid]] = created["operation_results"]
        seen = [p["id"] for p in Proposals("init6", blockchain_instance=bts)]
    finally:
        BlockchainInstance.set_shared_blockchain_instance(None)
    assert pid.startswith("1.10.") and seen == [pid]
    [proposal] = node.call("get_objects", [pid])
    assert proposal["required_active_approvals"] == [init6_id]
    approved = client(node).approveproposal([pid], account="init6")
    assert node.call("get_objects", [pid]) == [None]
    [[_, inner]] = proposal["proposed_transaction"]["operations"]
    assert inner["amount"] == {"amount": 150000, "asset_id": CORE}
    assert balance(node, init6_id) == before[0] - 150000 - int(inner["fee"]["amount"]) \
        - paid(approved)
    assert balance(node, init7_id) == before[1] + 150000
