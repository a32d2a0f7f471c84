"""Real answers of the functions added for the whole bitshares-core 7.x API
surface, against objects made on the chain: limit orders (account orders,
grouped orders), custom operations (account storage), blocks and history
(by block, time, operation types, history objects), debug updates and
streams, blinding factors; and the lookups of object kinds no operation of
this chain creates yet, which find such objects once they are there."""

import os

import orjson
import pytest
import pytest_twisted
from twisted.internet import task

from nodeapi.api.crypto import ORDER, CryptoApi
from nodeapi.api.custom_operations import CustomOperationsApi
from nodeapi.api.database import DatabaseApi
from nodeapi.api.debug import DebugApi
from nodeapi.api.history import HistoryApi
from nodeapi.api.orders import OrdersApi
from nodeapi.api.base import Session
from nodeapi.chain.blocklog import BlockLog
from nodeapi.chain.chain import Chain
from nodeapi.errors import ApiAssert, ApiError, NodeAPIError
from nodeapi.plugins.account_history.history import AccountHistory
from nodeapi.plugins.custom_operations.storage import AccountStorage
from nodeapi.plugins.grouped_orders.orders import GroupedOrders
from nodeapi.node import Node
from nodeapi.protocol.times import format_time
from nodeapi.protocol.transaction import sign_transaction, transaction_id

from kit.chain import open_chain, produce, signed_wire
from kit.keys import DEV_PUB, DEV_WIF
from kit.signing import chain_tapos

CORE = "1.3.0"
ZERO = {"amount": 0, "asset_id": CORE}


# -- a chain with orders, a custom operation and history ------------------------------------

def push(chain, *ops, wif=DEV_WIF):
    """Push :func:`kit.chain.signed_wire`'s transaction; returns it."""
    trx = signed_wire(chain, *ops, wif=wif)
    chain.push_transaction(trx)
    return trx


def order(chain, sell, receive, seller="1.2.6"):
    return (1, {"seller": seller, "amount_to_sell": {"amount": sell, "asset_id": CORE},
                "min_to_receive": {"amount": receive, "asset_id": "1.3.1"},
                "expiration": "2030-01-01T00:00:00", "fill_or_kill": False,
                "extensions": {}})


def storage_data(remove, catalog, pairs):
    """A packed account_storage_map (custom_operations plugin) as hex."""
    def string(s):
        b = s.encode()
        return bytes([len(b)]) + b
    out = bytes([0, 1 if remove else 0]) + string(catalog) + bytes([len(pairs)])
    for key, value in pairs:
        out += string(key) + (b"\x00" if value is None else b"\x01" + string(value))
    return out.hex()


def custom(data, payer="1.2.6"):
    return (35, {"payer": payer, "required_auths": [], "id": 0, "data": data})


class Plugins:
    """The chain, its plugins and one instance of each API set."""

    def __init__(self, chain):
        self.chain = chain
        self.history = AccountHistory()
        self.orders = GroupedOrders(chain, [10, 100])
        self.storage = AccountStorage(start_block=1)
        for consumer in (self.history, self.orders, self.storage):
            chain.add_consumer(consumer)
        self.node = Node(chain=chain, plugins={"account_history": self.history,
                                               "grouped_orders": self.orders,
                                               "custom_operations": self.storage},
                         reactor=task.Clock())

    def api(self, cls):
        return cls(self.node, Session())


@pytest.fixture
def plugins(chain):
    """init0 claimed the genesis balance (block 1), created GOLD (block 2)
    and placed three orders selling TEST for GOLD (block 3)."""
    p = Plugins(chain)
    push(chain, (37, {"deposit_to_account": "1.2.6", "balance_to_claim": "1.15.0",
                      "balance_owner_key": DEV_PUB,
                      "total_claimed": {"amount": 10 ** 15, "asset_id": CORE}}))
    produce(chain)
    opts = {"max_supply": 10 ** 12, "market_fee_percent": 0, "max_market_fee": 0,
            "issuer_permissions": 0, "flags": 0,
            "core_exchange_rate": {"base": {"amount": 1, "asset_id": CORE},
                                   "quote": {"amount": 2, "asset_id": "1.3.1"}},
            "whitelist_authorities": [], "blacklist_authorities": [], "whitelist_markets": [],
            "blacklist_markets": [], "description": "", "extensions": {}}
    push(chain, (10, {"issuer": "1.2.6", "symbol": "GOLD", "precision": 3,
                      "common_options": opts, "is_prediction_market": False,
                      "extensions": []}))
    produce(chain)
    push(chain, order(chain, 1000, 100), order(chain, 1005, 100), order(chain, 2000, 100))
    produce(chain)
    return p


# -- database ---------------------------------------------------------------------------------

def test_account_limit_orders_by_price_then_id(plugins):
    db = plugins.api(DatabaseApi)
    orders = db.get_account_limit_orders("init0", "TEST", "GOLD", 10)
    # best price first: the seller asking least GOLD per TEST
    assert [o["id"] for o in orders] == ["1.7.2", "1.7.1", "1.7.0"]
    assert [o["id"] for o in db.get_account_limit_orders("init0", "TEST", "GOLD", 2)] == [
        "1.7.2", "1.7.1"]
    assert [o["id"] for o in db.get_account_limit_orders(
        "init0", "TEST", "GOLD", 10, "1.7.1")] == ["1.7.1", "1.7.0"]
    start = {"base": {"amount": 1005, "asset_id": CORE},
             "quote": {"amount": 100, "asset_id": "1.3.1"}}
    assert [o["id"] for o in db.get_account_limit_orders(
        "init0", "TEST", "GOLD", 10, None, start)] == ["1.7.1", "1.7.0"]
    # database_api.cpp get_account_limit_orders: get_account_from_string
    # throws "no such account" (throw_if_not_found defaults to true)
    with pytest.raises(ApiError, match="no such account"):
        db.get_account_limit_orders("nobody", "TEST", "GOLD", 10)
    assert db.get_account_limit_orders("init0", "GOLD", "TEST", 10) == []
    with pytest.raises(ApiError, match="Order not owned"):
        db.get_account_limit_orders("init1", "TEST", "GOLD", 10, "1.7.1")
    with pytest.raises(ApiError, match="limit can not be greater than 101"):
        db.get_account_limit_orders("init0", "TEST", "GOLD", 102)


def test_blocks_transactions_and_object_ids(plugins):
    chain, db = plugins.chain, plugins.api(DatabaseApi)
    header = db.get_block_header(3, True)
    assert header["witness_signature"] == chain.get_block(3)["witness_signature"]
    assert "witness_signature" not in db.get_block_header(3)
    assert db.get_block_header_batch([3], True)[0][1] == header
    trx = chain.get_block(3)["transactions"][0]
    found = db.get_recent_transaction_by_id(transaction_id(trx))
    assert found == {k: v for k, v in trx.items() if k != "operation_results"}
    assert db.get_recent_transaction_by_id("00" * 20) is None
    # a pending order counts only with pending transactions
    assert db.get_next_object_id(1, 7, False) == "1.7.3"
    push(chain, order(chain, 10, 1))
    assert db.get_next_object_id(1, 7, True) == "1.7.4"
    assert db.get_next_object_id(1, 7, False) == "1.7.3"
    assert db.get_next_object_id(1, 11, True) == f"1.11.{plugins.history.operation_count}"
    with pytest.raises(ApiError, match="No index"):
        db.get_next_object_id(3, 0, True)
    # validate_transaction: the processed transaction, nothing kept
    before = chain.state.next_instance_of("1.7")
    draft = dict(chain_tapos(chain), extensions=[],
                 operations=[[1, dict(order(chain, 7, 1)[1], fee={"amount": 500000,
                                                                   "asset_id": CORE})]])
    processed = db.validate_transaction(sign_transaction(draft, chain.chain_id, [DEV_WIF]))
    assert processed["operation_results"] == [[1, "1.7.4"]]
    assert chain.state.next_instance_of("1.7") == before
    with pytest.raises(NodeAPIError):
        db.validate_transaction(draft)  # unsigned


def test_full_account_lists_and_vested_balances(plugins, genesis, tmp_path):
    db = plugins.api(DatabaseApi)
    full = dict(db.get_full_accounts(["init0"], False))["init0"]
    assert [o["id"] for o in full["limit_orders"]] == ["1.7.0", "1.7.1", "1.7.2"]
    for name in ("call_orders", "settle_orders", "proposals", "withdraws_from",
                 "withdraws_to", "htlcs_from", "htlcs_to"):
        assert full[name] == []
    assert "cashback_balance" not in full  # no cashback vesting balance yet
    fresh = open_chain(genesis, tmp_path / "fresh" / "blocks.log")
    balance = fresh.state.objects["1.15.0"]["balance"]
    assert DatabaseApi(Node(chain=fresh), Session()).get_vested_balances(["1.15.0"]) == [
        balance]
    # database_api.cpp get_vested_balances: obj(_db), the index's FC_ASSERT
    with pytest.raises(ApiAssert, match=r"^Assert Exception: maybe_found != nullptr: Unable "
                                        r"to find Object 1\.15\.0$"):
        db.get_vested_balances(["1.15.0"])  # claimed
    with pytest.raises(ApiAssert):
        db.get_vested_balances(["1.13.0"])  # not a balance_id_type
    assert db.get_top_voters(10) == []
    with pytest.raises(ApiError, match="limit can not be greater than 200"):
        db.get_top_voters(201)


def test_kinds_no_operation_creates_yet_are_real_lookups(plugins):
    """Empty now; objects of the kind put into the state are found."""
    chain, db = plugins.chain, plugins.api(DatabaseApi)
    assert db.list_tickets() == [] == db.get_tickets_by_account("init0")
    assert db.list_liquidity_pools() == [] == db.get_liquidity_pools_by_one_asset("TEST")
    assert db.get_liquidity_pools(["1.19.0"]) == [None]
    assert db.get_htlc("1.16.0") is None and db.list_htlcs("1.16.0", 10) == []
    assert db.get_proposed_transactions("init0") == [] == db.get_all_workers()
    assert db.get_worker_count() == 0 and db.get_settle_orders("TEST", 10) == []
    assert db.list_samet_funds() == [] == db.list_credit_deals()
    with pytest.raises(ApiError, match="limit can not be greater than 101"):
        db.list_tickets(102)
    with pytest.raises(ApiError, match="limit can not be greater than 100"):
        db.get_htlc_by_from("init0", "1.16.0", 101)
    # asset_object::bitasset_data's FC_ASSERT (asset_object.hpp)
    with pytest.raises(ApiAssert, match=r"^Assert Exception: bitasset_data_id.valid\(\): Asset "
                                        r"TEST \(1\.3\.0\) is not a market issued asset\.$"):
        db.get_call_orders("TEST", 10)
    # database_api.cpp get_collateral_bids
    with pytest.raises(ApiAssert, match=r"^Assert Exception: swan.is_market_issued\(\): Asset "
                                        r"is not a MPA$"):
        db.get_collateral_bids("TEST", 10, 0)
    with pytest.raises(ApiError, match="no such account"):
        db.get_samet_funds_by_owner("nobody")
    ticket = chain.state.create("1.18", {"account": "1.2.6", "target_type": 1,
                                         "amount": {"amount": 5, "asset_id": CORE}})
    pool = chain.state.create("1.19", {"asset_a": CORE, "asset_b": "1.3.1", "share_asset": "1.3.1"})
    htlc = chain.state.create("1.16", {"transfer": {"from": "1.2.6", "to": "1.2.7"}})
    assert db.list_tickets() == [ticket] == db.get_tickets_by_account("init0")
    assert db.get_tickets_by_account("init1") == []
    assert db.get_liquidity_pools_by_both_assets("GOLD", "TEST") == [pool]
    assert db.get_liquidity_pools_by_asset_b("GOLD") == [pool]
    assert db.get_htlc_by_to("init1", "1.16.0", 10) == [htlc] == db.get_htlc_by_from(
        "init0", "1.16.0", 10)
    assert dict(db.get_full_accounts(["init0"], False))["init0"]["htlcs_from"] == [htlc]


# -- history ----------------------------------------------------------------------------------

def test_history_by_block_time_and_operation_types(plugins):
    chain, hist = plugins.chain, plugins.api(HistoryApi)
    ops3 = hist.get_block_operation_history(3)
    assert [o["op"][0] for o in ops3] == [1, 1, 1]
    assert [(o["trx_in_block"], o["op_in_trx"]) for o in ops3] == [(0, 0), (0, 1), (0, 2)]
    assert hist.get_block_operation_history(3, 1) == []
    assert hist.get_block_operation_history(99) == []
    newest = hist.get_block_operations_by_time()
    assert [o["id"] for o in newest] == [o["id"] for o in reversed(ops3)]
    t2 = chain.get_block(2)["timestamp"]
    assert [o["op"][0] for o in hist.get_block_operations_by_time(t2)] == [10]
    assert hist.get_block_operations_by_time("2000-01-01T00:00:00") == []
    mine = hist.get_account_history_by_time("init0")
    assert [o["op"][0] for o in mine] == [1, 1, 1, 10, 37]
    assert [o["op"][0] for o in hist.get_account_history_by_time("init0", 2, t2)] == [10, 37]
    with pytest.raises(ApiError, match="limit can not be greater than 100"):
        hist.get_account_history_by_time("init0", 101)
    detail = hist.get_account_history_by_operations("init0", [10, 37], 1, 4).result
    assert detail["total_count"] == 4
    assert [o["op"][0] for o in detail["operation_history_objs"]] == [10, 37]
    every = hist.get_account_history_by_operations("init0", [], 0, 100).result
    assert every["total_count"] == 5 == len(every["operation_history_objs"])


def test_get_objects_answers_history_objects(plugins):
    db = plugins.api(DatabaseApi)
    op0, ath0, ath9, missing = db.get_objects(["1.11.0", "2.9.0", "2.9.4", "1.11.99"])
    assert op0["id"] == "1.11.0" and op0["op"][0] == 37 and missing is None
    assert ath0 == {"id": "2.9.0", "account": "1.2.6", "operation_id": "1.11.0",
                    "sequence": 1, "next": "2.9.0"}
    assert ath9["account"] == "1.2.6" and ath9["sequence"] == 5 and ath9["next"] == "2.9.3"


# -- orders and custom operations plugins -------------------------------------------------------

def test_grouped_limit_orders_follow_the_book(plugins):
    api = plugins.api(OrdersApi)
    assert api.get_tracked_groups() == [10, 100]

    def price(base, quote):
        return {"base": {"amount": base, "asset_id": CORE},
                "quote": {"amount": quote, "asset_id": "1.3.1"}}

    # 1% groups: 2000/100 alone; 1000/100 and 1005/100 within 1% of each other
    assert api.get_grouped_limit_orders("TEST", "GOLD", 100, None, 10) == [
        {"min_price": price(2000, 100), "max_price": price(2000, 100), "total_for_sale": 2000},
        {"min_price": price(1000, 100), "max_price": price(1005, 100), "total_for_sale": 2005}]
    # 0.1% groups: three
    assert len(api.get_grouped_limit_orders("TEST", "GOLD", 10, None, 10)) == 3
    assert api.get_grouped_limit_orders("TEST", "GOLD", 100, price(1500, 100), 10) == [
        {"min_price": price(1000, 100), "max_price": price(1005, 100), "total_for_sale": 2005}]
    assert api.get_grouped_limit_orders("GOLD", "TEST", 100, None, 10) == []
    push(plugins.chain, (2, {"fee_paying_account": "1.2.6", "order": "1.7.1",
                             "extensions": []}))
    produce(plugins.chain)
    assert api.get_grouped_limit_orders("TEST", "GOLD", 100, None, 10)[1]["total_for_sale"] == 1000
    with pytest.raises(ApiError, match="limit can not be greater than 101"):
        api.get_grouped_limit_orders("TEST", "GOLD", 100, None, 102)
    bare = OrdersApi(Node(chain=plugins.chain), Session())
    with pytest.raises(ApiError, match="grouped_orders plugin is not enabled"):
        bare.get_tracked_groups()


def test_account_storage_from_custom_operations(plugins):
    chain, api = plugins.chain, plugins.api(CustomOperationsApi)
    push(chain, custom(storage_data(False, "settings", [("theme", '"dark"'),
                                                         ("langs", "[1, 2]")])))
    push(chain, custom(storage_data(False, "contacts", [("bob", None)])),
         custom("00ff"), custom(""))  # data that is no storage map is skipped
    produce(chain)
    everything = api.get_storage_info()
    assert everything == [
        {"id": "7.0.0", "account": "1.2.6", "catalog": "settings", "key": "langs",
         "value": [1, 2]},
        {"id": "7.0.1", "account": "1.2.6", "catalog": "settings", "key": "theme",
         "value": "dark"},
        {"id": "7.0.2", "account": "1.2.6", "catalog": "contacts", "key": "bob"}]
    assert api.get_storage_info("init0", "settings", "theme") == [everything[1]]
    assert api.get_storage_info(None, "contacts") == [everything[2]]
    assert api.get_storage_info("init0", None, None, 1, "7.0.1") == [everything[1]]
    assert api.get_storage_info("init1") == []
    push(chain, custom(storage_data(True, "settings", [("theme", None)])),
         custom(storage_data(False, "settings", [("langs", '"en"')])))
    produce(chain)
    assert api.get_storage_info("init0", "settings") == [dict(everything[0], value="en")]
    with pytest.raises(ApiError, match="Can not specify key if catalog is not specified"):
        api.get_storage_info("init0", None, "theme")
    with pytest.raises(ApiError, match="limit can not be greater than 101"):
        api.get_storage_info(None, None, None, 102)


# -- debug and crypto ---------------------------------------------------------------------------

def test_debug_update_object_and_json_stream(plugins, tmp_path):
    chain, api = plugins.chain, plugins.api(DebugApi)
    api.debug_update_object({"_action": "update", "id": "1.6.1", "url": "https://x"})
    assert chain.state.objects["1.6.1"]["url"] == "https://x"
    produce(chain)  # the update stays below the pending state
    assert chain.state.objects["1.6.1"]["url"] == "https://x"
    with pytest.raises(NodeAPIError, match="not supported"):
        api.debug_update_object({"_action": "create", "id": "1.6.99"})
    with pytest.raises(NodeAPIError, match="lacks"):
        api.debug_update_object({"_action": "write", "id": "1.6.1", "url": "y"})
    api.node.output_dir = str(tmp_path)  # --api-output-dir
    path = str(tmp_path / "objects.jsonl")
    api.debug_stream_json_objects("objects.jsonl")
    push(chain, order(chain, 50, 5))
    produce(chain)
    api.debug_stream_json_objects_flush()
    lines = [orjson.loads(line) for line in open(path, "rb").read().splitlines()]
    assert lines[0] == {"bn": chain.head_block_num}  # debug_witness.cpp on_applied_block
    # on_changed_objects: the objects that existed before the block (the
    # order 1.7.3 it created is not written; the seller's balance is)
    assert not any(o.get("id") == "1.7.3" for o in lines)
    assert any(o.get("id") == "2.1.0" for o in lines)
    assert any(o.get("id", "").startswith("2.5.") and o["owner"] == "1.2.6" for o in lines)
    push(chain, (2, {"fee": {"amount": 0, "asset_id": CORE}, "fee_paying_account": "1.2.6",
                     "order": "1.7.3", "extensions": []}))
    produce(chain)
    api.debug_stream_json_objects_flush()
    lines = [orjson.loads(line) for line in open(path, "rb").read().splitlines()]
    block = lines[[i for i, o in enumerate(lines) if "bn" in o][-1]:]
    assert block[0] == {"bn": chain.head_block_num}
    assert block[-1] == {"id": "1.7.3"}  # on_removed_objects, after the changed ones
    assert any(o.get("id") == "2.1.0" for o in block[1:-1])
    # the chain keeps seconds; the stream writes wire times
    [dgp] = [o for o in block if o.get("id") == "2.1.0"]
    assert dgp["time"] == format_time(chain.head_block_time)


@pytest_twisted.inlineCallbacks
def test_debug_push_blocks_from_another_data_dir(genesis, tmp_path):
    source = BlockLog(str(tmp_path / "a" / "blocks.log"))
    source.open()
    producer = Chain(genesis, source)
    produce(producer, 3)
    source.close()
    follower = open_chain(genesis, tmp_path / "b" / "blocks.log")
    api = DebugApi(Node(chain=follower, reactor=task.Clock()), Session())
    assert (yield api.debug_push_blocks(str(tmp_path / "a"), 10)) == 3
    assert follower.head_block_id == producer.head_block_id
    assert (yield api.debug_push_blocks(str(tmp_path / "a"), 10)) == 0
    assert api.debug_push_blocks(str(tmp_path / "none"), 5) == 0
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]


def test_blind_sum_and_the_commitments_this_node_lacks(chain):
    api = CryptoApi(Node(chain=chain), Session())
    a, b, c = (n.to_bytes(32, "big").hex() for n in (5, 7, ORDER - 1))
    assert api.blind_sum([a, b], 2) == (12).to_bytes(32, "big").hex()
    assert api.blind_sum([a, b], 1) == (ORDER - 2).to_bytes(32, "big").hex()
    assert api.blind_sum([c, a], 2) == (4).to_bytes(32, "big").hex()
    with pytest.raises(ApiError, match="non_neg 3 is more"):
        api.blind_sum([a, b], 3)
    with pytest.raises(ApiError, match="64 hex digits"):
        api.blind_sum(["zz"], 1)
    with pytest.raises(ApiError, match="crypto_api.blind needs .*libsecp256k1-zkp"):
        api.blind(a, 10)
    with pytest.raises(ApiError, match="66 hex digits"):
        api.verify_sum(["00"], [], 0)


def test_liquidity_pool_history_numbers_pool_operations(chain):
    """Pool operations cannot be made on this chain yet: applied blocks
    holding them (as another node would send) feed the history."""
    from nodeapi.applied import AppliedBlock, AppliedOperation
    from nodeapi.plugins.market_history.history import MarketHistory
    from nodeapi.plugins.market_history.pools import LiquidityPoolHistory

    pools = LiquidityPoolHistory()

    def op(n, kind, data, result=(0, {})):
        return AppliedOperation(n, [kind, data], list(result), 1, 0, 0, 0, False, "00" * 20,
                                "1.2.6", ("1.2.6",))

    def block(num, ts, *ops):
        return AppliedBlock(num, "00" * 20, {}, ts, ops, False)

    pools.block_applied(block(1, 1000, op(0, 59, {"account": "1.2.6"},
                                          (3, {"new_objects": ["1.19.0"]})),
                              op(1, 0, {"from": "1.2.6"})))
    pools.block_applied(block(2, 1003, op(2, 61, {"pool": "1.19.0"}),
                              op(3, 63, {"pool": "1.19.0"})))
    pools.block_applied(block(3, 1006, op(4, 61, {"pool": "1.19.1"})))
    api = HistoryApi(Node(chain=chain, plugins={"market_history": MarketHistory(pools=pools)}),
                     Session())
    every = api.get_liquidity_pool_history("1.19.0")
    assert [(r["sequence"], r["op_type"], r["id"]) for r in every] == [
        (3, 63, "5.4.2"), (2, 61, "5.4.1"), (1, 59, "5.4.0")]
    assert every[0]["op"]["id"] == "1.11.3" and every[0]["pool"] == "1.19.0"
    # a pool whose history starts after its creation is numbered from 2
    assert [r["sequence"] for r in api.get_liquidity_pool_history("1.19.1")] == [2]
    t0, t1 = format_time(1000), format_time(1003)
    assert [r["sequence"] for r in api.get_liquidity_pool_history("1.19.0", t0)] == [1]
    assert [r["sequence"] for r in api.get_liquidity_pool_history("1.19.0", None, t0)] == [
        3, 2]
    assert api.get_liquidity_pool_history("1.19.0", t0, t1) == []
    assert [r["op_type"] for r in api.get_liquidity_pool_history(
        "1.19.0", None, None, None, 61)] == [61]
    assert [r["sequence"] for r in api.get_liquidity_pool_history_by_sequence(
        "1.19.0", 2)] == [2, 1]
    assert [r["sequence"] for r in api.get_liquidity_pool_history_by_sequence(
        "1.19.0", None, t0, 1)] == [3]
    with pytest.raises(ApiError, match="limit can not be greater than 101"):
        api.get_liquidity_pool_history("1.19.0", None, None, 102)
    bare = HistoryApi(Node(chain=chain), Session())
    with pytest.raises(ApiError, match="Market history plugin is not enabled"):
        bare.get_liquidity_pool_history("1.19.0")
