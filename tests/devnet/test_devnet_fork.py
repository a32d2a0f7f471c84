"""Fork mode against bitshares-core 7.0.2 as the live chain
(``../shared/reference/witness_node`` producing the bundled genesis'
chain on demand, so it stands still while the devnet reads it).

Lazily (``--fork-url`` alone): the live chain holds two accounts, a
user-issued asset and a market with real orders; the devnet answers
get_full_accounts and get_order_book for them by fetching them when first
asked, a python-bitshares bot's order (a ready account's) fills against the
live order book (amounts computed by hand, graphene db_market.cpp
``match``: a taker at the maker's price), an impersonated account of the live chain transfers without its
key, a revert to a snapshot taken before any of it was fetched puts it
all back, and the live chain sees none of it.  Synced (``--fork-block``
below the live head): blocks 1..N pushed one by one.  A node that stops
answering gives one error naming the call."""

import calendar
import json
import os
import re
import signal
import time
import urllib.error
import urllib.request

import pytest

from nodeapi.devnet import accounts as acc
from nodeapi.devnet.pytest_plugin import DevnetError, DevnetProcess
from nodeapi.chain.evaluators.balance import key_addresses
from nodeapi.protocol.keys import PrivateKey
from nodeapi.protocol.times import format_time

from kit.clients import forget_cached_objects
from kit.daemon import ROOT
from kit.keys import DEV_PUB, DEV_WIF
from kit.reference import requires_reference, start_on_demand, start_reference
from kit.signing import sign_wire_over_head, tapos

pytestmark = [pytest.mark.reference, pytest.mark.slow, requires_reference]
CORE = "1.3.0"
INIT0 = "1.2.6"
ALICE = PrivateKey.from_seed("fork test alice")
BOB = PrivateKey.from_seed("fork test bob")
USD = "FORKUSD"


def _pub(key):
    return key.public_key.to_str("TEST")


def _feeless(ops):
    """``ops`` without fees (:func:`kit.signing.sign_wire_over_head` then
    sets the ones the node asks)."""
    return [[kind, {k: v for k, v in body.items() if k != "fee"}] for kind, body in ops]


def _push(live, ops, wif=DEV_WIF):
    """``ops`` signed with ``wif`` into a block of the live chain."""
    trx = sign_wire_over_head(live, _feeless(ops), wif)
    live.call("broadcast_transaction", trx, api="network_broadcast")
    live.generate_blocks(1)


def _order(seller, sell, sell_asset, receive, receive_asset, expiration):
    return [1, {"fee": {"amount": 0, "asset_id": CORE}, "seller": seller,
                "amount_to_sell": {"amount": sell, "asset_id": sell_asset},
                "min_to_receive": {"amount": receive, "asset_id": receive_asset},
                "expiration": format_time(expiration), "fill_or_kill": False,
                "extensions": {}}]


def _market(live):
    """The live chain's accounts, asset and orders (module text): init0
    claims the development key's genesis balances, registers alice and bob
    and funds them with 100,000 TEST each (and init3 with a satoshi); creates FORKUSD (precision 2,
    no market fee) and issues alice 10,000.00 of it; alice sells 100.00
    FORKUSD for 200 TEST and 100.00 for 300 TEST, bob buys 100.00 FORKUSD
    for 150 TEST.  Returns ``{"alice", "bob", "usd", "orders"}`` (ids)."""
    balances = live.call("get_balance_objects", sorted(key_addresses(DEV_PUB, "TEST")))
    _push(live, [[37, {"fee": {"amount": 0, "asset_id": CORE}, "deposit_to_account": INIT0,
                       "balance_to_claim": b["id"], "balance_owner_key": DEV_PUB,
                       "total_claimed": b["balance"]}] for b in balances])
    _push(live, acc.create_ops(INIT0, "alice", _pub(ALICE))
          + acc.create_ops(INIT0, "bob", _pub(BOB)))
    alice = live.call("get_account_by_name", "alice")["id"]
    bob = live.call("get_account_by_name", "bob")["id"]
    options = {"max_supply": "1000000000000", "market_fee_percent": 0, "max_market_fee": 0,
               "issuer_permissions": 0, "flags": 0,
               "core_exchange_rate": {"base": {"amount": 1, "asset_id": CORE},
                                      "quote": {"amount": 1, "asset_id": "1.3.1"}},
               "whitelist_authorities": [], "blacklist_authorities": [],
               "whitelist_markets": [], "blacklist_markets": [], "description": "",
               "extensions": {}}
    _push(live, [acc.transfer_op(INIT0, alice, 10_000_000_000),
                 acc.transfer_op(INIT0, bob, 10_000_000_000),
                 acc.transfer_op(INIT0, "1.2.9", 1),  # init3: a balance object
                 [10, {"fee": {"amount": 0, "asset_id": CORE}, "issuer": INIT0, "symbol": USD,
                       "precision": 2, "common_options": options,
                       "is_prediction_market": False, "extensions": []}]])
    [asset] = live.call("lookup_asset_symbols", [USD])
    usd = asset["id"]
    _push(live, [[14, {"fee": {"amount": 0, "asset_id": CORE}, "issuer": INIT0,
                       "asset_to_issue": {"amount": 1_000_000, "asset_id": usd},
                       "issue_to_account": alice, "extensions": []}]])
    later = _head_time(live) + 30 * 86400
    _push(live, [_order(alice, 10_000, usd, 20_000_000, CORE, later),
                 _order(alice, 10_000, usd, 30_000_000, CORE, later)], ALICE.to_wif())
    _push(live, [_order(bob, 15_000_000, CORE, 10_000, usd, later)], BOB.to_wif())
    orders = [o["id"] for o in live.call("get_limit_orders", usd, CORE, 10)]
    assert len(orders) == 3
    return {"alice": alice, "bob": bob, "usd": usd, "orders": orders}


def _head_time(node):
    """The head block time (seconds) of ``node`` (``call(method)``)."""
    props = node.call("get_dynamic_global_properties")
    return calendar.timegm(time.strptime(props["time"], "%Y-%m-%dT%H:%M:%S"))


def _balance(call, account_id, asset=CORE):
    [bal] = call("get_account_balances", account_id, [asset])
    return int(bal["amount"])


def _unsigned_transfer(devnet, frm, to, amount):
    """A transfer over the devnet's head with its fee and no signature."""
    op = [0, {"fee": {"amount": 0, "asset_id": CORE}, "from": frm, "to": to,
              "amount": {"amount": amount, "asset_id": CORE}, "extensions": []}]
    [fee] = devnet.call("database", "get_required_fees", [op], CORE)
    op[1]["fee"] = fee
    props = devnet.call("database", "get_dynamic_global_properties")
    head_time = calendar.timegm(time.strptime(props["time"], "%Y-%m-%dT%H:%M:%S"))
    return dict(tapos(props["head_block_number"], props["head_block_id"], head_time, 60),
                operations=[op], extensions=[], signatures=[])


def _faucet(devnet, name, key):
    """The faucet's answer to registering ``name`` with ``key``."""
    body = json.dumps({"account": {"name": name, "owner_key": key, "active_key": key}})
    request = urllib.request.Request(devnet.http_url + "/api/v1/accounts", data=body.encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.loads(reply.read())


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    node = start_on_demand(tmp_path_factory.mktemp("fork"), "live")
    try:
        node.market = _market(node)
        yield node
    finally:
        node.stop()


def test_a_lazy_fork_trades_against_the_live_order_book(live, monkeypatch):
    """The module text, step by step."""
    monkeypatch.setenv("PYTHONPATH", ROOT)
    m = live.market
    head = live.head()
    devnet = DevnetProcess("--devnet-accounts", "2", "--fork-url", live.ws_url).start()
    try:
        ready = re.search(r"Devnet fork ready in ([0-9.]+) s", devnet.log())
        assert ready and float(ready.group(1)) < 5, devnet.log()
        db = lambda *a: devnet.call("database", *a)  # noqa: E731
        assert re.search(rf"Devnet forked from {live.ws_url}/? at block {head} ", devnet.log())
        assert devnet.head()["head_block_number"] == head + 2  # the ready accounts' blocks
        # python-bitshares' TaPoS reads the header after the last irreversible block
        assert db("get_dynamic_global_properties")["last_irreversible_block_num"] == head + 1
        dev0, dev1 = devnet.accounts
        assert int(dev0.id.split(".")[2]) >= 20  # past the live chain's accounts
        sid = devnet.snapshot()  # before anything of alice, bob or FORKUSD was fetched

        # reads answered lazily: the live chain's objects, as its node writes them
        assert db("get_objects", ["2.0.0", "1.3.0"]) == live.call("get_objects",
                                                                  ["2.0.0", "1.3.0"])
        assert db("get_key_references", [_pub(ALICE)]) == [[m["alice"]]]  # wallets' lookup
        assert db("is_public_key_registered", _pub(BOB)) is True
        [[_, full]] = db("get_full_accounts", ["alice"], False)
        [[_, live_full]] = live.call("get_full_accounts", ["alice"], False)
        for key in ("account", "statistics", "balances", "limit_orders"):
            assert full[key] == live_full[key], (key, full[key], live_full[key])
        assert db("get_objects", m["orders"]) == live.call("get_objects", m["orders"])
        book = db("get_order_book", "TEST", USD, 10)
        assert book == live.call("get_order_book", "TEST", USD, 10)
        assert [a["price"] for a in book["asks"]] == ["2", "3"]

        # dev0 buys FORKUSD: 250 TEST for at least 100.00.  It crosses
        # alice's ask at 2 TEST (200,000 satoshis per 1.00, 2,000 per
        # satoshi of FORKUSD), not the one at 3: the maker's 10,000 FORKUSD
        # satoshis all fill at the maker's price, 20,000,000 TEST satoshis
        # to alice; 5,000,000 of the 25,000,000 stay for sale.
        # The bot is python-bitshares: Market("FORKUSD:TEST").buy(2.5, 100)
        # sells 100 * 2.5 TEST (25,000,000 satoshis) for at least 100.00
        # FORKUSD (10,000).
        from bitshares.market import Market

        core_before = _balance(db, dev0.id)
        alice_before = _balance(db, m["alice"])
        forget_cached_objects()
        bts = devnet.bitshares(expiration=devnet.expiration(), blocking="head")
        done = Market(f"{USD}:TEST", blockchain_instance=bts).buy(2.5, 100, account="dev0")
        assert done["block_num"] == head + 3
        [[kind, op]] = done["operations"]
        assert kind == 1 and int(op["amount_to_sell"]["amount"]) == 25_000_000 \
            and int(op["min_to_receive"]["amount"]) == 10_000
        fee = int(op["fee"]["amount"])
        assert _balance(db, dev0.id, m["usd"]) == 10_000
        assert _balance(db, dev0.id) == core_before - fee - 25_000_000
        assert _balance(db, m["alice"]) == alice_before + 20_000_000
        assert _balance(db, m["alice"], m["usd"]) == 1_000_000 - 20_000
        [[_, dev_full]] = db("get_full_accounts", [dev0.id], False)
        [mine] = dev_full["limit_orders"]
        assert int(mine["for_sale"]) == 5_000_000
        # the live chain's orders are 1.7.0..2; the devnet's own start
        # 10,000 above (orders are removed on a live chain: its newest may
        # be gone)
        assert mine["id"] == "1.7.10003"
        assert db("get_objects", [m["orders"][0]]) == [None]  # alice's ask at 2: filled
        after = db("get_order_book", "TEST", USD, 10)
        assert [a["price"] for a in after["asks"]] == ["3"]
        assert [(b["price"], b["owner_name"]) for b in after["bids"]] \
            == [("2.5", "dev0"), ("1.5", "bob")]

        # bob, never touched yet, impersonated: a transfer without his key
        bob_before = int(live.call("get_account_balances", m["bob"], [CORE])[0]["amount"])
        unsigned = _unsigned_transfer(devnet, m["bob"], dev1.id, 100_000_000)
        bob_fee = int(unsigned["operations"][0][1]["fee"]["amount"])
        with pytest.raises(DevnetError, match="Missing Active Authority"):
            devnet.call("network_broadcast", "broadcast_transaction", unsigned)
        devnet.impersonate_account("bob")
        dev1_before = _balance(db, dev1.id)
        devnet.call("network_broadcast", "broadcast_transaction_synchronous", unsigned)
        assert _balance(db, m["bob"]) == bob_before - 100_000_000 - bob_fee
        assert _balance(db, dev1.id) == dev1_before + 100_000_000

        # the revert: everything fetched after the snapshot is back as fetched
        devnet.revert(sid)
        assert devnet.head()["head_block_number"] == head + 2
        assert _balance(db, m["bob"]) == bob_before
        assert _balance(db, m["alice"]) == alice_before
        assert db("get_objects", m["orders"]) == live.call("get_objects", m["orders"])
        assert db("get_order_book", "TEST", USD, 10) == book
        assert _balance(db, dev0.id, m["usd"]) == 0

        # set_balance of a live account's asset, time travel through a
        # maintenance (no vote tally on a fork: the live chain's witnesses
        # stay), and dump_state refused (a fork's state is partial)
        assert devnet.set_balance(m["alice"], {"amount": 123, "asset_id": m["usd"]}) \
            == {"amount": 123, "asset_id": m["usd"]}
        assert _balance(db, m["alice"], m["usd"]) == 123
        [dyn] = db("get_objects", [db("get_assets", [m["usd"]])[0]["dynamic_asset_data_id"]])
        # the supply: 1,000,000 issued, 20,000 in alice's two asks, her
        # balance 980,000 set to 123
        assert int(dyn["current_supply"]) == 20_000 + 123
        witnesses = live.call("get_global_properties")["active_witnesses"]
        before = devnet.head()["head_block_number"]
        devnet.advance_to_maintenance()
        devnet.advance_time(3600)
        assert devnet.head()["head_block_number"] == before + 2
        assert db("get_global_properties")["active_witnesses"] == witnesses
        with pytest.raises(DevnetError, match="forked lazily"):
            devnet.call("devnet", "dump_state")

        # the faucet on a fork: the name looked up on the live chain first
        carol = PrivateKey.from_seed("fork test carol").public_key.to_str("TEST")
        made = _faucet(devnet, "carol", carol)["account"]
        assert made["name"] == "carol" and db("get_account_by_name", "carol")["id"] == made["id"]
        with pytest.raises(urllib.error.HTTPError) as refused:
            _faucet(devnet, "bob", carol)
        assert refused.value.code == 400 and b"'bob' is already taken" in refused.value.read()

        # the live chain has none of it
        assert live.head() == head
        assert live.call("get_account_by_name", "dev0") is None
        assert len(live.call("get_limit_orders", m["usd"], CORE, 10)) == 3
        assert int(live.call("get_account_balances", m["bob"], [CORE])[0]["amount"]) \
            == bob_before

        # the live chain goes on: what it makes after the start is never
        # seen (ids past the fork's limits: an account, init2's first
        # balance object); what the devnet had not touched yet is read as
        # it is when first touched (init3's balance)
        _push(live, acc.create_ops(INIT0, "dave", _pub(BOB))
              + [acc.transfer_op(INIT0, "1.2.8", 777), acc.transfer_op(INIT0, "1.2.9", 777)])
        assert live.call("get_account_by_name", "dave") is not None
        assert db("get_account_by_name", "dave") is None
        assert _balance(live.call, "1.2.8") == 777 and _balance(db, "1.2.8") == 0
        assert _balance(db, "1.2.9") == _balance(live.call, "1.2.9") == 778
        for trouble in ("block production failed", "Dropped", "Unhandled", "Traceback"):
            assert trouble not in devnet.log(), devnet.log()
    finally:
        devnet.stop()


def test_a_fork_whose_node_stops_answering_says_so(live, monkeypatch):
    """--fork-block at the live head forks lazily too.  The live node
    frozen (SIGSTOP): a read needing what is not loaded fails after
    --fork-timeout with one error naming the node and call."""
    monkeypatch.setenv("PYTHONPATH", ROOT)
    devnet = DevnetProcess("--devnet-accounts", "0", "--fork-url", live.ws_url,
                           "--fork-block", str(live.head()), "--fork-timeout", "2").start()
    try:
        assert "state loaded lazily" in devnet.log()
        os.kill(live.proc.pid, signal.SIGSTOP)
        try:
            with pytest.raises(DevnetError) as info:
                devnet.call("database", "get_account_by_name", "bob")
        finally:
            os.kill(live.proc.pid, signal.SIGCONT)
        assert re.search(rf"--fork-url {live.ws_url}/?: database.get_account_by_name not "
                         rf"answered in 2 s$", str(info.value))
        assert devnet.call("database", "get_account_by_name", "bob")["id"] \
            == live.market["bob"]  # answered again once the node is back
    finally:
        devnet.stop()


def test_a_lazy_start_does_not_grow_with_the_chain(tmp_path, monkeypatch):
    """A live chain of 3,000 blocks: the lazy fork is ready in well under
    a second of its own work (the log's figure) and a few hundred calls;
    the synced one (--fork-block below the head) pushes every block.  The
    wall times of both starts are printed (-s) for comparison."""
    monkeypatch.setenv("PYTHONPATH", ROOT)
    live = start_on_demand(tmp_path, "long")
    try:
        for _ in range(3):
            live.generate_blocks(1000)
        head = live.head()
        started = time.monotonic()
        lazy = DevnetProcess("--devnet-accounts", "1", "--fork-url", live.ws_url).start()
        lazy_seconds = time.monotonic() - started
        try:
            found = re.search(r"Devnet fork ready in ([0-9.]+) s: (\d+) calls", lazy.log())
            assert found and float(found.group(1)) < 3 and int(found.group(2)) < 500, \
                lazy.log()
            assert lazy.head()["head_block_number"] == head + 2
        finally:
            lazy.stop()
        started = time.monotonic()
        synced = DevnetProcess("--devnet-accounts", "1", "--fork-url", live.ws_url,
                               "--fork-block", str(head - 1)).start(timeout=600)
        synced_seconds = time.monotonic() - started
        try:
            assert f"syncing blocks 1..{head - 1}" in synced.log()
            assert synced.head()["head_block_number"] == head + 1
        finally:
            synced.stop()
        print(f"start of a devnet forked from a chain of {head} blocks: lazily "
              f"{lazy_seconds:.2f} s (the fork {found.group(1)} s, {found.group(2)} calls), "
              f"synced {synced_seconds:.2f} s")
    finally:
        live.stop()


@pytest.fixture
def producing(tmp_path):
    node = start_reference(tmp_path, "producing")
    yield node
    node.stop()


def test_a_fork_below_the_live_head_is_synced(producing, monkeypatch):
    """--fork-block below the live head: blocks 1..N from the live chain,
    identical; the ready accounts made on top (the faucet init0 claims the
    genesis balances of the development key, still unclaimed there); dev1
    impersonated transfers without a signature; a revert puts the fork
    back; the live chain has none of it."""
    live = producing
    monkeypatch.setenv("PYTHONPATH", ROOT)
    target = live.wait_head(5) - 1
    devnet = DevnetProcess("--devnet-accounts", "2", "--fork-url", live.ws_url,
                           "--fork-block", str(target)).start()
    try:
        assert (devnet.call("database", "get_block_header", target)
                == live.call("get_block_header", target))
        assert f"Devnet forked from {live.ws_url}" in devnet.log()
        assert devnet.head()["head_block_number"] == target + 2  # the ready accounts
        dev0, dev1 = devnet.accounts
        assert live.call("get_account_by_name", "dev1") is None
        sid = devnet.snapshot()
        unsigned = _unsigned_transfer(devnet, dev1.id, dev0.id, 12_345)
        with pytest.raises(DevnetError, match="missing required active authority: Missing "
                                              "Active Authority"):
            devnet.call("network_broadcast", "broadcast_transaction", unsigned)
        devnet.impersonate_account("dev1")
        before = _balance(lambda *a: devnet.call("database", *a), dev0.id)
        done = devnet.call("network_broadcast", "broadcast_transaction_synchronous", unsigned)
        assert done["block_num"] == target + 3
        assert _balance(lambda *a: devnet.call("database", *a), dev0.id) == before + 12_345
        devnet.revert(sid)
        assert _balance(lambda *a: devnet.call("database", *a), dev0.id) == before
        assert devnet.head()["head_block_number"] == target + 2
        assert live.call("get_account_by_name", "dev0") is None
    finally:
        devnet.stop()


def test_a_fork_past_the_head_stops_with_one_line(producing, monkeypatch):
    live = producing
    monkeypatch.setenv("PYTHONPATH", ROOT)
    head = live.wait_head(2)
    with pytest.raises(DevnetError) as info:
        DevnetProcess("--fork-url", live.ws_url, "--fork-block", str(head + 10_000)).start()
    assert f"--fork-block {head + 10_000} is past the head" in str(info.value)
    with pytest.raises(DevnetError) as info:
        DevnetProcess("--fork-url", "ws://127.0.0.1:1").start()
    assert "--fork-url ws://127.0.0.1:1/: cannot connect" in str(info.value) \
        or "--fork-url ws://127.0.0.1:1: cannot connect" in str(info.value)
