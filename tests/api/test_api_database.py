"""database API set over a real Chain: globals, objects, blocks, accounts,
balances, keys, witnesses, committee, votes, assets and the order book,
with transactions signed by python-bitshares."""

import re

import pytest

from nodeapi.api.database import DatabaseApi
from nodeapi.protocol.times import format_time
from nodeapi.protocol.wire import to_wire
from nodeapi.errors import ApiError
from nodeapi.node import ApiLimits, Node

from kit.api import RecordingSession, create_gold, make_api
from kit.chain import fund, limit_order, produce, transfer_op
from kit.keys import CHAIN_ID, DEV_PUB, DEV_WIF, OTHER_PUB
from kit.signing import sign


GENESIS_ADDRESS = "TEST7CwdioNL9my53mj31UYGdcPxhxHfPTBvx"


@pytest.fixture
def funded(chain):
    """init0 claimed the genesis balance; init1 got 12345 in block 2."""
    return fund(chain, init1=12345)


def test_globals(db, funded):
    assert db.call("get_chain_id", []) == CHAIN_ID
    props = db.call("get_chain_properties", [])
    assert props["id"] == "2.11.0" and props["chain_id"] == CHAIN_ID
    dgp = db.call("get_dynamic_global_properties", [])
    assert dgp["id"] == "2.1.0" and dgp["head_block_number"] == 2
    assert dgp["head_block_id"] == funded.head_block_id
    gp = db.call("get_global_properties", [])
    assert gp["id"] == "2.0.0" and gp["active_witnesses"][0] == "1.6.1"
    config = db.call("get_config", [])
    assert config["GRAPHENE_SYMBOL"] == "TEST" and config["GRAPHENE_ADDRESS_PREFIX"] == "TEST"
    # bitshares-core 7.0's get_config.cpp: 62 keys, none of the older
    # releases' (the schedule's CTR IVs, GRAPHENE_MAX_PAY_RATE, ...)
    assert len(config) == 62 and "GRAPHENE_NEAR_SCHEDULE_CTR_IV" not in config
    assert config["GRAPHENE_DEFAULT_WORKER_BUDGET_PER_DAY"] == 50000000000
    assert config["GRAPHENE_NULL_ACCOUNT"] == "1.2.3"


def test_get_objects(db):
    acc, missing, dgp, acc2 = db.call("get_objects", [["1.2.6", "1.2.999", "2.1.0", "1.2.07"]])
    assert acc["name"] == "init0" and missing is None and dgp["head_block_number"] == 2
    assert acc2["name"] == "init1"
    for bad in (["abc"], ["1.2"], ["1.2.x"], [6], "1.2.6", ["256.0.0"]):
        with pytest.raises(ApiError):
            db.call("get_objects", [bad])
    small = DatabaseApi(Node(chain=db.node.chain, limits=ApiLimits(get_objects=2)),
                        RecordingSession())
    with pytest.raises(ApiError, match="Number of querying objects can not be greater than 2"):
        small.call("get_objects", [["1.2.0", "1.2.1", "1.2.2"]])


def test_block_summaries(db, funded):
    """2.8.N as bitshares-core keeps them: 2.8.0..2.8.65536 from genesis
    (db_genesis.cpp), 2.8.(num & 0xFFFF) the id of block num
    (db_block.cpp create_block_summary), zeros until a block fills one."""
    head = funded.head_block_num
    ids = ["2.8.0", "2.8.1", f"2.8.{head}", f"2.8.{head + 1}", "2.8.65536", "2.8.65537"]
    zero, first, last, unfilled, top, beyond = db.call("get_objects", [ids])
    assert zero == {"id": "2.8.0", "block_id": "0" * 40}
    block1 = funded.get_block(2)["previous"]
    assert first == {"id": "2.8.1", "block_id": block1}
    assert last == {"id": f"2.8.{head}", "block_id": funded.head_block_id}
    assert unfilled["block_id"] == "0" * 40 and top["block_id"] == "0" * 40
    assert beyond is None


def test_blocks_and_transactions(db, funded):
    header = db.call("get_block_header", [2])
    assert header["previous"].startswith("00000001")
    assert set(header) == {"previous", "timestamp", "witness", "transaction_merkle_root",
                           "extensions"}
    block = db.call("get_block", ["2"])
    assert block["witness_signature"] and len(block["transactions"]) == 1
    assert db.call("get_block", [99]) is None and db.call("get_block_header", [0]) is None
    trx = db.call("get_transaction", [2, 0])
    assert trx["operations"][0][1]["amount"]["amount"] == 12345
    with pytest.raises(ApiError, match="has 1 transaction"):
        db.call("get_transaction", [2, 1])
    with pytest.raises(ApiError, match="Block 50 does not exist"):
        db.call("get_transaction", [50, 0])
    batch = db.call("get_block_header_batch", [[2, 1, 7, 2]])
    assert [n for n, _ in batch] == [1, 2, 7] and batch[2][1] is None
    assert batch[1][1] == header


def test_accounts(db):
    init0, init1, none1, none2 = db.call("get_accounts", [["init0", "1.2.7", "nobody", "1.3.0"]])
    assert init0["id"] == "1.2.6" and init1["name"] == "init1"
    assert none1 is None and none2 is None
    assert db.call("get_account_by_name", ["init2"])["id"] == "1.2.8"
    assert db.call("get_account_by_name", ["1.2.8"]) is None
    assert [a and a["id"] for a in db.call("lookup_account_names", [["init0", "1.2.6"]])] == [
        "1.2.6", None]
    assert db.call("lookup_accounts", ["init", 3]) == [
        ["init0", "1.2.6"], ["init1", "1.2.7"], ["init10", "1.2.16"]]
    assert db.call("lookup_accounts", ["zzz", 10]) == []
    assert db.call("lookup_accounts", ["", 0]) == []
    with pytest.raises(ApiError, match="limit can not be greater than 1000"):
        db.call("lookup_accounts", ["", 1001])
    assert db.call("get_account_count", []) == 18  # 6 special, init0..10, faucet
    assert db.call("get_account_id_from_string", ["init3"]) == "1.2.9"
    with pytest.raises(ApiError, match="no such account"):
        db.call("get_account_id_from_string", ["1.2.500"])
    assert db.call("get_account_references", ["init0"]) == []


def test_full_accounts(db, funded):
    result = db.call("get_full_accounts", [["init1", "nobody", "1.2.6", "init1"], False])
    assert [k for k, _ in result] == ["1.2.6", "init1"]
    full = dict(result)["init1"]
    assert full["account"]["id"] == "1.2.7"
    assert full["statistics"]["id"] == "2.7.7"
    assert full["registrar_name"] == "init1" and full["lifetime_referrer_name"] == "init1"
    assert [(b["asset_type"], b["balance"]) for b in full["balances"]] == [("1.3.0", 12345)]
    assert full["limit_orders"] == [] and full["assets"] == [] and full["votes"] == []
    assert full["more_data_available"]["balances"] is False
    assert full["vesting_balances"] == [] and full["proposals"] == []
    full0 = dict(result)["1.2.6"]
    assert full0["statistics"]["pending_vested_fees"] == 2000000  # until maintenance
    small = DatabaseApi(Node(chain=funded, limits=ApiLimits(get_full_accounts=1)),
                        RecordingSession())
    with pytest.raises(ApiError, match="Number of querying accounts can not be greater than 1"):
        small.call("get_full_accounts", [["init0", "init1"], False])


def _maintenance_block(chain):
    """Produce the block at next_maintenance_time (runs process_fees);
    returns that time as the API writes it."""
    when = chain.dgp["next_maintenance_time"]
    when_text = format_time(when)
    chain.generate_block(when, chain.get_scheduled_witness(chain.get_slot_at_time(when)), DEV_WIF)
    return when_text


def test_vesting_balances_after_maintenance(db, funded):
    """Maintenance pays the fees out as cashback vesting balances 1.13.N:
    init0 (pending 20 TEST + vested 2 TEST from the fixture's transfer) and
    init1 (pending 20 TEST); both lifetime members keep 80 %."""
    assert db.call("get_vesting_balances", ["init0"]) == []
    funded.push_transaction(sign(funded, [transfer_op(10 ** 8, fee=20000000)]))
    funded.push_transaction(sign(funded, [transfer_op(5, fee=20000000, frm="1.2.7", to="1.2.6")],
                                 wifs=(DEV_WIF,)))
    produce(funded)
    when = _maintenance_block(funded)
    year = 31536000
    vb0 = {"id": "1.13.0", "owner": "1.2.6", "balance_type": "cashback",
           "balance": {"amount": 16000000 + 1600000, "asset_id": "1.3.0"},
           "policy": [1, {"vesting_seconds": year, "start_claim": "1970-01-01T00:00:00",
                          "coin_seconds_earned": str(1600000 * year),
                          "coin_seconds_earned_last_update": when}]}
    vb1 = {"id": "1.13.1", "owner": "1.2.7", "balance_type": "cashback",
           "balance": {"amount": 16000000, "asset_id": "1.3.0"},
           "policy": [1, {"vesting_seconds": year, "start_claim": "1970-01-01T00:00:00",
                          "coin_seconds_earned": "0",
                          "coin_seconds_earned_last_update": when}]}
    assert to_wire(db.call("get_vesting_balances", ["init0"])) == [vb0]
    assert to_wire(db.call("get_vesting_balances", ["1.2.7"])) == [vb1]
    assert db.call("get_vesting_balances", ["init2"]) == []
    assert funded.state.get("1.2.7")["cashback_vb"] == "1.13.1"
    full = dict(to_wire(db.call("get_full_accounts", [["init0", "init1", "init2"], False])))
    assert full["init0"]["vesting_balances"] == [vb0]
    assert full["init1"]["vesting_balances"] == [vb1]
    assert full["init2"]["vesting_balances"] == []
    assert full["init1"]["more_data_available"]["vesting_balances"] is False
    assert to_wire(db.call("get_objects", [["1.13.1"]])) == [vb1]
    with pytest.raises(ApiError, match="no such account"):
        db.call("get_vesting_balances", ["nobody"])


def test_balances(db):
    total = 1000000000000000
    assert db.call("get_account_balances", ["init1", []]) == [
        {"amount": 12345, "asset_id": "1.3.0"}]
    assert db.call("get_account_balances", ["1.2.6", ["1.3.5", "1.3.0", "1.3.0"]]) == [
        {"amount": total - 12345 - 2000000, "asset_id": "1.3.0"},
        {"amount": 0, "asset_id": "1.3.5"}]
    assert db.call("get_named_account_balances", ["init2", []]) == []
    with pytest.raises(ApiError, match="no such account"):
        db.call("get_account_balances", ["nobody", []])
    with pytest.raises(ApiError, match="asset id"):
        db.call("get_account_balances", ["init0", ["GOLD"]])
    assert db.call("get_balance_objects", [[GENESIS_ADDRESS]]) == []
    with pytest.raises(ApiError, match="Invalid address"):
        db.call("get_balance_objects", [["BTS1234"]])


def test_genesis_balance_objects(chain):
    db = make_api(chain)[0]
    (bal,) = db.call("get_balance_objects", [[GENESIS_ADDRESS]])
    assert bal["id"] == "1.15.0" and bal["balance"]["amount"] == 1000000000000000


def test_keys_witnesses_committee_votes(db):
    (refs,) = db.call("get_key_references", [[DEV_PUB]])
    assert refs == [f"1.2.{i}" for i in range(6, 18)]  # init0..init10, faucet
    assert db.call("get_key_references", [[OTHER_PUB]]) == [[]]
    with pytest.raises(ApiError, match="Invalid public key"):
        db.call("get_key_references", [["BTS6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV"]])
    assert db.call("is_public_key_registered", [DEV_PUB]) is True
    assert db.call("is_public_key_registered", [OTHER_PUB]) is False
    assert db.call("is_public_key_registered", ["garbage"]) is False
    w1, missing = db.call("get_witnesses", [["1.6.1", "1.6.99"]])
    assert w1["witness_account"] == "1.2.6" and missing is None
    with pytest.raises(ApiError, match="witness id"):
        db.call("get_witnesses", [["1.2.6"]])
    assert db.call("get_witness_by_account", ["init1"])["id"] == "1.6.2"
    assert db.call("get_witness_by_account", ["committee-account"]) is None
    assert db.call("lookup_witness_accounts", ["init1", 3]) == [
        ["init1", "1.6.2"], ["init10", "1.6.11"], ["init2", "1.6.3"]]
    # graphene db_genesis.cpp: 1.6.0 is created and removed, 11 witnesses remain
    assert db.call("get_witness_count", []) == 11
    assert db.call("get_objects", [["1.6.0"]]) == [None]
    assert db.call("get_committee_members", [["1.5.0"]])[0]["committee_member_account"] == "1.2.6"
    assert db.call("get_committee_member_by_account", ["init0"])["id"] == "1.5.0"
    assert db.call("lookup_committee_member_accounts", ["", 2]) == [
        ["init0", "1.5.0"], ["init1", "1.5.1"]]
    assert db.call("get_committee_count", []) == 11
    # witnesses take vote ids 1:0..1:10, then the committee 0:11..0:21
    w, c, none, other = db.call("lookup_vote_ids", [["1:0", "0:11", "1:999", "1:11"]])
    assert w["id"] == "1.6.1" and c["id"] == "1.5.0" and none is None and other is None
    with pytest.raises(ApiError, match="Invalid vote id"):
        db.call("lookup_vote_ids", [["x"]])


def test_assets_and_order_book(db, funded):
    create_gold(funded)
    gold, core, none = db.call("get_assets", [["GOLD", "1.3.0", "SILVER"]])
    assert gold["id"] == "1.3.1" and gold["precision"] == 3 and core["symbol"] == "TEST"
    assert none is None
    assert [a and a["id"] for a in db.call("lookup_asset_symbols", [["1.3.1", "TEST", "1.2.0"]])
            ] == ["1.3.1", "1.3.0", None]
    assert [a["symbol"] for a in db.call("list_assets", ["", 10])] == ["GOLD", "TEST"]
    assert [a["symbol"] for a in db.call("list_assets", ["H", 10])] == ["TEST"]
    with pytest.raises(ApiError, match="limit can not be greater than 101"):
        db.call("list_assets", ["", 102])
    assert db.call("get_asset_count", []) == 2
    assert db.call("get_asset_id_from_string", ["GOLD"]) == "1.3.1"
    assert [a["id"] for a in db.call("get_assets_by_issuer", ["init0", "1.3.0", 10])] == ["1.3.1"]
    # init0 sells 1000 TEST for 100 GOLD and 3000 TEST for 200 GOLD;
    # init1 sells 50 GOLD for 1000 TEST.  Nothing crosses.
    o1 = limit_order(funded, "1.2.6", {"amount": 1000, "asset_id": "1.3.0"},
                     {"amount": 100, "asset_id": "1.3.1"})
    o2 = limit_order(funded, "1.2.6", {"amount": 3000, "asset_id": "1.3.0"},
                     {"amount": 200, "asset_id": "1.3.1"})
    o3 = limit_order(funded, "1.2.7", {"amount": 50, "asset_id": "1.3.1"},
                     {"amount": 1000, "asset_id": "1.3.0"})
    orders = db.call("get_limit_orders", ["TEST", "1.3.1", 10])
    assert [o["id"] for o in orders] == [o2, o1, o3]
    assert [o["id"] for o in db.call("get_limit_orders", ["GOLD", "TEST", 1])] == [o3, o2]
    with pytest.raises(ApiError, match="limit can not be greater than 300"):
        db.call("get_limit_orders", ["GOLD", "TEST", 301])
    assert [o["id"] for o in db.call("get_limit_orders_by_account", ["init0"])] == [o1, o2]
    assert [o["id"] for o in db.call("get_limit_orders_by_account", ["init0", 5, o2])] == [o2]
    book = db.call("get_order_book", ["GOLD", "TEST", 10])
    assert book["base"] == "GOLD" and book["quote"] == "TEST"
    # bids sell GOLD: 50 GOLD (0.050) for 1000 TEST (0.01000) -> 5 GOLD per TEST
    # (graphene order: price, quote, base, id, owner_id, owner_name, expiration)
    assert to_wire(book)["bids"] == [{"price": "5", "quote": "0.01000", "base": "0.050", "id": "1.7.2",
                             "owner_id": "1.2.7", "owner_name": "init1",
                             "expiration": "2030-01-01T00:00:00"}]
    assert list(book["bids"][0]) == ["price", "quote", "base", "id", "owner_id", "owner_name",
                                     "expiration"]
    # asks sell TEST: 3000 TEST for 200 GOLD -> 0.2/0.03 = 6.666..; 1000 for 100 -> 10
    assert [{k: a[k] for k in ("price", "quote", "base", "id", "owner_name")}
            for a in book["asks"]] == [
        {"price": "6.66666666666666666", "quote": "0.03000", "base": "0.200", "id": o2,
         "owner_name": "init0"},
        {"price": "10", "quote": "0.01000", "base": "0.100", "id": o1, "owner_name": "init0"}]
    with pytest.raises(ApiError, match="Invalid quote asset symbol: NOPE"):
        db.call("get_order_book", ["GOLD", "NOPE"])
    full = dict(db.call("get_full_accounts", [["init0"], False]))["init0"]
    assert full["assets"] == ["1.3.1"] and [o["id"] for o in full["limit_orders"]] == [o1, o2]


def test_bad_arguments(db):
    with pytest.raises(ApiError, match="missing argument"):
        db.call("get_accounts", [])
    with pytest.raises(ApiError, match="must be an array"):
        db.call("get_accounts", ["init0"])
    with pytest.raises(ApiError, match="expected an integer"):
        db.call("get_block", ["one"])
    with pytest.raises(ApiError, match="subscribe"):
        db.call("get_accounts", [["init0"], "yes"])


@pytest.mark.parametrize("function", ["get_full_accounts", "get_accounts"])
@pytest.mark.parametrize("bad", [None, {}, [], 6, ""])
def test_account_inputs_must_be_name_or_id_strings(db, function, bad):
    """graphene reads these as strings and asserts they are not empty: a
    null, object, array, number or "" is an error, not a silent [] / null."""
    with pytest.raises(ApiError, match=r"\[1\] must be a non-empty name or id string, got "
                                       + re.escape(repr(bad))):
        db.call(function, [["init0", bad], False])


# graphene database_api.hpp section -> the module of nodeapi/api/database/
# holding it; a function graphene adds to a section goes into that module.
LAYOUT = {
    "objects": ["get_objects"],
    "subscriptions": ["cancel_all_subscriptions", "set_auto_subscription",
                      "set_block_applied_callback", "set_pending_transaction_callback",
                      "set_subscribe_callback"],
    "blocks": ["get_block", "get_block_header", "get_block_header_batch", "get_transaction",
               "get_recent_transaction_by_id"],
    "properties": ["get_chain_id", "get_chain_properties", "get_config",
                   "get_dynamic_global_properties", "get_global_properties", "get_next_object_id"],
    "keys": ["get_key_references", "is_public_key_registered"],
    "accounts": ["get_account_by_name", "get_account_count", "get_account_id_from_string",
                 "get_account_references", "get_accounts", "get_full_accounts",
                 "lookup_account_names", "lookup_accounts", "get_top_voters"],
    "balances": ["get_account_balances", "get_balance_objects", "get_named_account_balances",
                 "get_vesting_balances", "get_vested_balances"],
    "assets": ["get_asset_count", "get_asset_id_from_string", "get_assets",
               "get_assets_by_issuer", "list_assets", "lookup_asset_symbols"],
    "markets": ["get_24_volume", "get_limit_orders", "get_limit_orders_by_account",
                "get_order_book", "get_ticker", "get_top_markets", "get_trade_history",
                "get_trade_history_by_sequence", "subscribe_to_market",
                "unsubscribe_from_market", "get_account_limit_orders", "get_call_orders",
                "get_call_orders_by_account", "get_settle_orders",
                "get_settle_orders_by_account", "get_margin_positions", "get_collateral_bids"],
    "pools": ["list_liquidity_pools", "get_liquidity_pools_by_asset_a",
              "get_liquidity_pools_by_asset_b", "get_liquidity_pools_by_one_asset",
              "get_liquidity_pools_by_both_assets", "get_liquidity_pools",
              "get_liquidity_pools_by_share_asset", "get_liquidity_pools_by_owner"],
    "funds": ["list_samet_funds", "get_samet_funds_by_owner", "get_samet_funds_by_asset",
              "list_credit_offers", "get_credit_offers_by_owner", "get_credit_offers_by_asset",
              "list_credit_deals", "get_credit_deals_by_offer_id",
              "get_credit_deals_by_offer_owner", "get_credit_deals_by_borrower",
              "get_credit_deals_by_debt_asset", "get_credit_deals_by_collateral_asset"],
    "governance": ["get_committee_count", "get_committee_member_by_account",
                   "get_committee_members", "get_witness_by_account", "get_witness_count",
                   "get_witnesses", "lookup_committee_member_accounts", "lookup_vote_ids",
                   "lookup_witness_accounts", "get_all_workers", "get_workers_by_account",
                   "get_worker_count"],
    "authority": ["get_potential_address_signatures", "get_potential_signatures",
                  "get_required_fees", "get_required_signatures", "get_transaction_hex",
                  "get_transaction_hex_without_sig", "verify_account_authority",
                  "verify_authority", "validate_transaction"],
    "withdrawals": ["get_withdraw_permissions_by_giver", "get_withdraw_permissions_by_recipient"],
    "htlc": ["get_htlc", "get_htlc_by_from", "get_htlc_by_to", "list_htlcs"],
    "claims": ["get_proposed_transactions", "get_blinded_balances", "list_tickets",
               "get_tickets_by_account"],
}


def test_each_function_lives_in_the_module_of_its_graphene_section():
    """The database API set is composed of one module per graphene section
    (``nodeapi/api/database/<section>.py``, or a package of that name for a
    section too large for one module); the set serves exactly these."""
    where = {name: getattr(DatabaseApi, name).__module__ for name in DatabaseApi.function_names()}
    section = {name: module.removeprefix("nodeapi.api.database.").split(".")[0]
               for name, module in where.items()}
    assert section == {name: module for module, names in LAYOUT.items() for name in names}
