"""The devnet (``twistd nodeapi --devnet``, nodeapi.devnet) driven by real
clients: python-bitshares and uptick over its WebSocket URL, the devnet API set over
HTTP JSON-RPC (the pytest plugin's DevnetProcess, as a test suite of
another project uses it)."""

import calendar
import hashlib
import json
import time

import pytest
import pytest_twisted

from graphenebase.account import PrivateKey as BtsPrivateKey

from nodeapi.devnet.pytest_plugin import DevnetError, DevnetProcess
from nodeapi.protocol.transaction import sign_transaction

from kit import signing  # noqa: F401  (TESTNODE, the ecdsa signer)
from kit.clients import bitshares_client, run_uptick
from kit.keys import DEV_WIF
from kit.signing import tapos

pytestmark = pytest.mark.slow
CORE = "1.3.0"
#: each ready account's balance: 1,000,000 TEST (precision 5)
START_BALANCE = 100_000_000_000


@pytest.fixture(scope="module")
def devnet():
    process = DevnetProcess().start()
    yield process
    process.stop()


def _seconds(wire_time: str) -> int:
    return calendar.timegm(time.strptime(wire_time, "%Y-%m-%dT%H:%M:%S"))


def _balance(devnet, account_id, asset=CORE):
    [bal] = devnet.call("database", "get_account_balances", account_id, [asset])
    return int(bal["amount"])


def _push(devnet, ops, wif):
    """:func:`_signed` broadcast synchronously (the answer comes once the
    transaction is in a block)."""
    return devnet.call("network_broadcast", "broadcast_transaction_synchronous",
                       _signed(devnet, ops, wif))


def _signed(devnet, ops, wif):
    """``ops`` (wire JSON, fees filled in from get_required_fees) in a
    transaction over the devnet's head, signed with nodeapi's signer."""
    ops = [[kind, dict(body, fee={"amount": 0, "asset_id": CORE})] for kind, body in ops]
    fees = devnet.call("database", "get_required_fees", ops, CORE)
    ops = [[kind, dict(body, fee=fee)] for (kind, body), fee in zip(ops, fees)]
    props = devnet.call("database", "get_dynamic_global_properties")
    trx = dict(tapos(props["head_block_number"], props["head_block_id"],
                     _seconds(props["time"])), operations=ops, extensions=[], signatures=[])
    return sign_transaction(trx, devnet.chain_id, [wif], "TEST")


def test_ready_accounts_have_keys_from_the_seed_and_balances(devnet):
    """dev0..dev9 exist, funded with 1,000,000 TEST, their keys
    sha256("nodeapi-devnet devK") (computed here with python-bitshares'
    own key code), as the printed table says."""
    assert [a.name for a in devnet.accounts] == [f"dev{i}" for i in range(10)]
    assert devnet.chain_id == signing.CHAIN_ID
    log = devnet.log()
    for i, acc in enumerate(devnet.accounts):
        secret = hashlib.sha256(f"nodeapi-devnet dev{i}".encode()).hexdigest()
        key = BtsPrivateKey(secret, prefix="TEST")
        assert str(key) == acc.wif
        assert str(key.pubkey) == acc.public_key
        assert acc.wif in log and acc.public_key in log and acc.name in log
    bts = bitshares_client(devnet.url, keys=[devnet.accounts[0].wif])
    from bitshares.account import Account

    dev0 = Account("dev0", blockchain_instance=bts)
    assert dev0["id"] == devnet.accounts[0].id
    assert dev0.balance("TEST").amount == 1_000_000
    assert dev0["active"]["key_auths"] == [[devnet.accounts[0].public_key, 1]]
    assert devnet.url in log and "1,000,000 TEST" in log


def test_a_broadcast_transaction_is_in_a_block_at_once(fresh):
    """Automine: python-bitshares' transfer (broadcast synchronously, as
    ``blocking``) comes back in a block well within a second: the block
    is produced on the next reactor turn, not at a slot."""
    devnet = fresh
    dev0, dev1 = devnet.accounts[:2]
    bts = bitshares_client(devnet.url, keys=[dev0.wif])
    bts.blocking = "head"
    head = devnet.head()["head_block_number"]
    started = time.monotonic()
    result = bts.transfer("dev1", 12.5, "TEST", account="dev0")
    elapsed = time.monotonic() - started
    assert result["block_num"] == head + 1
    assert elapsed < 2.0  # python-bitshares' own round trips included
    assert _balance(devnet, dev1.id) == START_BALANCE + 1_250_000
    # the node's part alone: a synchronous broadcast over HTTP answers once
    # the transaction is in a block; 100 ms at most (the best of three, on
    # a shared machine; about 10 ms here)
    took = []
    for i in range(3):
        trx = _signed(devnet, [[0, {"from": dev1.id, "to": dev0.id,
                                    "amount": {"amount": i + 1, "asset_id": CORE},
                                    "extensions": []}]], dev1.wif)
        trx_started = time.monotonic()
        out = devnet.call("network_broadcast", "broadcast_transaction_synchronous", trx)
        took.append(time.monotonic() - trx_started)
        assert out["block_num"] == head + 2 + i
    assert min(took) < 0.1 and max(took) < 1.0, took


def test_produce_blocks_makes_consecutive_blocks(fresh):
    devnet = fresh
    head = devnet.head()
    assert devnet.produce_blocks(5) == head["head_block_number"] + 5
    times = [_seconds(devnet.call("database", "get_block_header", n)["timestamp"])
             for n in range(head["head_block_number"], head["head_block_number"] + 6)]
    assert all(b > a for a, b in zip(times, times[1:]))
    with pytest.raises(DevnetError, match="count must be 1..100000"):
        devnet.produce_blocks(0)
    assert devnet.head()["head_block_number"] == head["head_block_number"] + 5


def _gold_and_order(bts, account):
    """``account`` creates the asset GOLD (precision 3) and sells 1000
    TEST for it at 2 GOLD per TEST (python-bitshares ``create_asset`` and
    ``Market.sell``); returns the order id."""
    from bitshares.market import Market

    bts.create_asset("GOLD", 3, 1000000, account=account)
    result = Market("TEST:GOLD", blockchain_instance=bts).sell(2, 1000, account=account,
                                                               returnOrderId="head")
    return result["orderid"]


def test_a_vote_counts_after_advance_to_maintenance(fresh):
    """dev0 votes for init1's witness with python-bitshares and has 1000
    TEST in an open order; the next maintenance (advance_to_maintenance,
    no waiting on the wall clock) counts that stake in the witness'
    total_votes.  nodeapi.chain.votes after graphene db_maint.cpp
    ``vote_tally_helper``: before proof-of-burn the core in open orders
    (``total_core_in_orders``) votes, liquid core does not: 1000 TEST =
    100000000 satoshis."""
    devnet = fresh
    started = time.monotonic()
    dev0 = devnet.accounts[0]
    bts = bitshares_client(devnet.url, keys=[dev0.wif])
    bts.blocking = "head"
    _gold_and_order(bts, "dev0")
    bts.approvewitness("init1", account="dev0")
    [witness] = devnet.call("database", "get_witnesses", ["1.6.2"])
    assert int(witness["total_votes"]) == 0
    props = devnet.call("database", "get_dynamic_global_properties")
    head = devnet.advance_to_maintenance()
    assert head["time"] == props["next_maintenance_time"]
    [witness] = devnet.call("database", "get_witnesses", ["1.6.2"])
    assert int(witness["total_votes"]) == 100_000_000
    after = devnet.call("database", "get_dynamic_global_properties")
    assert after["last_vote_tally_time"] == props["next_maintenance_time"]
    assert _seconds(after["next_maintenance_time"]) == _seconds(props["next_maintenance_time"]) \
        + 86400  # the bundled genesis' maintenance_interval
    assert time.monotonic() - started < 5.0


def test_revert_restores_balances_orders_history_and_head(devnet):
    """After a snapshot: a transfer, an asset, an order and two blocks by
    python-bitshares; revert puts back the balances, the order book, the
    account history, the head block (number and id) and the block log."""
    dev0, dev1 = devnet.accounts[:2]
    head = devnet.call("database", "get_dynamic_global_properties")
    balances = [_balance(devnet, a.id) for a in (dev0, dev1)]
    history = devnet.call("history", "get_account_history", dev0.id, "1.11.0", 100, "1.11.0")
    sid = devnet.snapshot()
    bts = bitshares_client(devnet.url, keys=[dev0.wif])
    bts.blocking = "head"
    bts.transfer("dev1", 5, "TEST", account="dev0")
    order = _gold_and_order(bts, "dev0")
    assert devnet.call("database", "get_objects", [order])[0]["seller"] == dev0.id
    assert _balance(devnet, dev1.id) == balances[1] + 500_000
    assert devnet.revert(sid) is True
    assert [_balance(devnet, a.id) for a in (dev0, dev1)] == balances
    assert devnet.call("database", "get_objects", [order]) == [None]
    assert devnet.call("database", "lookup_asset_symbols", ["GOLD"]) == [None]
    assert devnet.call("history", "get_account_history", dev0.id, "1.11.0", 100,
                       "1.11.0") == history
    now = devnet.call("database", "get_dynamic_global_properties")
    assert (now["head_block_number"], now["head_block_id"]) == (head["head_block_number"],
                                                                head["head_block_id"])
    assert devnet.call("database", "get_block", head["head_block_number"] + 1) is None
    # the chain goes on from there: the same transfer again, in the next block
    result = bts.transfer("dev1", 5, "TEST", account="dev0")
    assert result["block_num"] == head["head_block_number"] + 1
    assert _balance(devnet, dev1.id) == balances[1] + 500_000
    with pytest.raises(DevnetError, match="No devnet snapshot"):
        devnet.revert(sid)  # a revert drops its snapshot (anvil evm_revert)


def test_a_vesting_balance_becomes_withdrawable_after_advance_time(fresh):
    """A linear vesting balance of 100 TEST with a 30-day cliff and
    duration (graphene vesting_balance_object.cpp linear_vesting_policy):
    nothing is withdrawable before; after advance_time(30 days)
    python-bitshares withdraws all of it (with its expiration moved to the
    devnet's clock, DevnetProcess.expiration)."""
    devnet = fresh
    dev2 = devnet.accounts[2]
    head_time = devnet.head()["time"]
    month = 30 * 86400
    out = _push(devnet, [[32, {"creator": dev2.id, "owner": dev2.id,
                               "amount": {"amount": 10_000_000, "asset_id": CORE},
                               "policy": [0, {"begin_timestamp": head_time,
                                              "vesting_cliff_seconds": month,
                                              "vesting_duration_seconds": month}]}]], dev2.wif)
    vbid = out["trx"]["operation_results"][0][1]
    bts = bitshares_client(devnet.url, keys=[dev2.wif])
    bts.blocking = "head"
    from bitshares.amount import Amount

    # python-bitshares packs int(amount) satoshis of amount["asset"];
    # vesting_balance_evaluator.cpp: FC_ASSERT( vbo.is_withdraw_allowed( now,
    # op.amount ), "" ), as the reference words it
    with pytest.raises(Exception, match=r"vbo\.is_withdraw_allowed\( now, op\.amount \)"):
        bts.vesting_balance_withdraw(vbid, amount=Amount(1, "TEST", blockchain_instance=bts),
                                     account="dev2")
    head = devnet.advance_time(month)
    assert _seconds(head["time"]) >= _seconds(head_time) + month
    bts = bitshares_client(devnet.url, keys=[dev2.wif], expiration=devnet.expiration())
    bts.blocking = "head"
    before = _balance(devnet, dev2.id)
    bts.vesting_balance_withdraw(vbid, amount=Amount(100, "TEST", blockchain_instance=bts),
                                 account="dev2")
    [vb] = devnet.call("database", "get_objects", [vbid])
    assert int(vb["balance"]["amount"]) == 0
    fee = devnet.call("database", "get_required_fees", [[33, {
        "fee": {"amount": 0, "asset_id": CORE}, "vesting_balance": vbid, "owner": dev2.id,
        "amount": {"amount": 10_000_000, "asset_id": CORE}}]], CORE)[0]["amount"]
    assert _balance(devnet, dev2.id) - before == 10_000_000 - fee


@pytest_twisted.inlineCallbacks
def test_uptick_htlc_is_refunded_after_advance_time(fresh, tmp_path):
    """uptick ``htlc create-from-secret`` locks 10 TEST from dev0 to dev1
    for 3600 s; advance_time(3600) reaches its expiry and the chain
    refunds it to dev0 (graphene htlc_evaluator.cpp / db_update.cpp
    ``clear_expired_htlcs``: removed at the first block at or after
    ``expiration``, the amount back to the sender, htlc_refund virtual
    operation in dev0's history)."""
    devnet = fresh
    dev0 = devnet.accounts[0]
    out, err, code = yield run_uptick(
        tmp_path, devnet.url, "--blocking", "htlc", "create-from-secret", "dev1", "10",
        "TEST", "--type", "sha256", "--secret", "opensesame", "--expiration", "3600",
        "--account", "dev0", keys=(dev0.wif,), chain_id=devnet.chain_id)
    assert code == 0, out + err
    [htlc] = devnet.call("database", "get_htlc_by_from", dev0.id, "1.16.0", 10)
    assert int(htlc["transfer"]["amount"]) == 1_000_000
    locked = _balance(devnet, dev0.id)
    devnet.advance_time(3600)
    assert devnet.call("database", "get_objects", [htlc["id"]]) == [None]
    assert _balance(devnet, dev0.id) == locked + 1_000_000
    [latest] = devnet.call("history", "get_account_history", dev0.id, "1.11.0", 1, "1.11.0")
    assert latest["op"][0] == 53  # htlc_refund


def test_every_devnet_function_through_python_bitshares_rpc(fresh, tmp_path):
    """python-bitshares' own RPC calls the devnet set by name
    (``bts.rpc.<function>(..., api="devnet")``, graphene's ``call`` with a
    set name) and its objects see the effects."""
    from bitshares.account import Account
    from bitshares.blockchain import Blockchain

    from nodeapi.protocol.keys import PrivateKey

    devnet = fresh
    bts = bitshares_client(devnet.url, keys=[devnet.accounts[0].wif])
    rpc = bts.rpc
    chain = Blockchain(blockchain_instance=bts, mode="head")
    head = chain.get_current_block_num()
    assert rpc.produce_blocks(3, api="devnet") == head + 3
    assert chain.get_current_block_num() == head + 3
    sid = rpc.snapshot(api="devnet")
    assert rpc.set_balance("dev2", 42_00000, api="devnet")["amount"] == 42_00000
    assert Account("dev2", blockchain_instance=bts, use_cache=False).balance("TEST") == 42
    key = PrivateKey.from_seed("rpc user")
    made = rpc.create_account("rpc-user", key.public_key.to_str("TEST"), 7_00000, api="devnet")
    assert Account("rpc-user", blockchain_instance=bts).balance("TEST") == 7
    accounts = rpc.get_accounts(api="devnet")
    assert [a["name"] for a in accounts][:2] == ["dev0", "dev1"]
    props = bts.rpc.get_dynamic_global_properties()
    moved = rpc.advance_time(600, api="devnet")
    assert moved["head_block_number"] == props["head_block_number"] + 1
    due = bts.rpc.get_dynamic_global_properties()["next_maintenance_time"]
    maint = rpc.advance_to_maintenance(api="devnet")
    assert maint["time"] == due
    assert rpc.get_head(api="devnet")["head_block_id"] == maint["head_block_id"]
    state = rpc.dump_state(api="devnet")  # the state as text: no path comes from RPC
    assert json.loads(state.partition("\n")[0])[2]["block_num"] == maint["head_block_number"]
    assert rpc.revert(sid, api="devnet") is True
    assert bts.rpc.get_account_by_name("rpc-user") is None
    assert made["id"] not in [a["id"] for a in rpc.get_accounts(api="devnet")]
    assert chain.get_current_block_num() == head + 3


def test_expiration_follows_the_head_after_many_blocks(fresh):
    """produce_blocks(120) puts the head two minutes ahead of the wall
    clock (one slot of 1 s per block): python-bitshares' default 30 s
    expiration is then refused as expired; with devnet.expiration() it
    goes through."""
    devnet = fresh
    dev0 = devnet.accounts[0]
    devnet.produce_blocks(120)
    bts = bitshares_client(devnet.url, keys=[dev0.wif])
    with pytest.raises(Exception, match="expired"):
        bts.transfer("dev1", 1, "TEST", account="dev0")
    bts = bitshares_client(devnet.url, keys=[dev0.wif], expiration=devnet.expiration())
    bts.blocking = "head"
    assert bts.transfer("dev1", 1, "TEST", account="dev0")["block_num"] > 0
