"""A transaction the devnet accepted is in the next block, with real
clients: bitsharesjs (tests/js/devnet_transfer.js: expiration from the head
block time, head + 15 s once the head is 30 s old) and python-bitshares
(expiration from the wall clock, or the plugin's ``expiration()`` after
advance_time), non-blocking as its default is, after an idle devnet
(``increase_time``, anvil's evm_increaseTime: the clock moves, no block),
after ``advance_time(3600)`` and after ``--load-state``.  Both clients
register the chain with the lines the devnet's banner prints."""

import json
import os
import subprocess
import time

import pytest

from nodeapi.devnet.pytest_plugin import DevnetProcess

from kit.clients import forget_cached_objects
from kit.js import JS_DIR

pytestmark = pytest.mark.slow
CORE = "1.3.0"


@pytest.fixture(scope="module")
def devnet():
    process = DevnetProcess("--devnet-accounts", "2").start()
    yield process
    process.stop()


def _balance(devnet, name):
    account = devnet.call("database", "get_account_by_name", name)
    [bal] = devnet.call("database", "get_account_balances", account["id"], [CORE])
    return int(bal["amount"])


def _bitsharesjs(js_client, devnet, amount, *more):
    """One bitsharesjs transfer dev0 -> dev1 waiting for its block; its output."""
    proc = subprocess.run([js_client, os.path.join(JS_DIR, "devnet_transfer.js"), devnet.url,
                           devnet.chain_id, str(amount), *more], cwd=JS_DIR,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _python_bitshares(devnet, amount, **kwargs):
    """A non-blocking python-bitshares transfer dev0 -> dev1 (its default):
    returns once broadcast; then the balance must move within 10 s."""
    forget_cached_objects()
    before = _balance(devnet, "dev1")
    bts = devnet.bitshares(**kwargs)
    bts.transfer("dev1", amount, "TEST", account="dev0")
    deadline = time.monotonic() + 10
    while _balance(devnet, "dev1") == before:
        assert time.monotonic() < deadline, "accepted but never in a block"
        time.sleep(0.05)
    assert _balance(devnet, "dev1") == before + int(amount * 100_000)


def _check_both(js_client, devnet, idle):
    """``idle`` s pass on the devnet's clock, then each client transfers
    and its transaction is in the next block."""
    devnet.increase_time(idle)
    head = devnet.head()["head_block_number"]
    out = _bitsharesjs(js_client, devnet, 12345)
    assert out["prefix"] == "TEST"  # the chain registered, not CBA
    assert out["block_num"] == head + 1
    devnet.increase_time(idle)
    _python_bitshares(devnet, 3, expiration=devnet.expiration())


def test_after_60_s_idle(js_client, fresh):
    _check_both(js_client, fresh, 60)


def test_after_advance_time(js_client, fresh):
    fresh.advance_time(3600)
    _check_both(js_client, fresh, 60)
    # a wall-clock expiration is before the head now: refused at broadcast,
    # saying why, never accepted and lost
    forget_cached_objects()
    with pytest.raises(Exception) as info:
        fresh.bitshares().transfer("dev1", 1, "TEST", account="dev0")
    assert "ahead of the wall clock: advance_time" in str(info.value)


def test_after_load_state(js_client, devnet, tmp_path):
    path = str(tmp_path / "devnet.state")
    devnet.dump_state(path)
    loaded = DevnetProcess("--devnet-accounts", "2", "--load-state", path).start()
    try:
        assert loaded.head()["head_block_id"] == devnet.head()["head_block_id"]
        _python_bitshares(loaded, 2)  # python-bitshares' wall-clock expiration
        _check_both(js_client, loaded, 3600)  # as if loaded an hour later
    finally:
        loaded.stop()


def test_the_readme_mining_control_and_impersonation(js_client, fresh):
    """The README's examples: python-bitshares with the plugin's helpers
    (automine off, a pending transfer dropped, dev2 impersonated: its
    transfer built by python-bitshares and sent unsigned is mined) and
    bitsharesjs calling the same functions by name; its ChainStore shows
    the balance set_balance set (a change outside a block, notified)."""
    from bitsharesbase import operations

    devnet = fresh
    forget_cached_objects()
    bts = devnet.bitshares(expiration=devnet.expiration())
    head = devnet.head()["head_block_number"]
    devnet.set_automine(False)
    bts.transfer("dev1", 1, "TEST", account="dev0")          # accepted, not mined
    [pending] = devnet.pending_transactions()
    assert devnet.drop_transaction(pending["id"]) == [pending["id"]]
    devnet.set_automine(True)
    assert devnet.head()["head_block_number"] == head and devnet.pending_transactions() == []
    dev0, dev1 = devnet.accounts[0].id, devnet.accounts[1].id
    devnet.impersonate_account("dev1")                          # no dev1 key needed
    tx = bts.new_tx()
    tx.appendOps(operations.Transfer(**{
        "fee": {"amount": 0, "asset_id": CORE}, "from": dev1, "to": dev0,
        "amount": {"amount": 100_000, "asset_id": CORE}}))
    tx.constructTx()                                            # fees, TaPoS; not signed
    assert tx.json()["signatures"] == []
    before = _balance(devnet, "dev0")
    done = devnet.call("network_broadcast", "broadcast_transaction_synchronous", tx.json())
    assert done["block_num"] == head + 1
    assert _balance(devnet, "dev0") == before + 100_000
    devnet.stop_impersonating_account("dev1")
    out = _bitsharesjs(js_client, devnet, 5, "controls")
    controls = out["controls"]
    assert controls["pending"] == [] and controls["head_time"] == controls["next"]
    assert controls["automine"] is False  # read before it was turned on again
    assert controls["impersonated"] == [dev1] and controls["left"] == []
    assert controls["chainstore_balance"] == 4242  # set_balance reached ChainStore


def test_an_irreversible_stream_sees_the_bots_own_transfer(fresh):
    """python-bitshares' Blockchain in irreversible mode reads up to the
    last irreversible block, the one before the head on a devnet: a bot's
    transfer is seen once the next block is made (graphene's rule, 75 % of
    the 11 witnesses confirming, would take 8 more blocks)."""
    from bitshares.blockchain import Blockchain

    devnet = fresh
    forget_cached_objects()
    bts = devnet.bitshares(expiration=devnet.expiration(), blocking="head")
    done = bts.transfer("dev1", 4, "TEST", account="dev0")
    num = done["block_num"]
    assert devnet.head()["head_block_number"] == num
    devnet.produce_blocks(1)
    props = devnet.call("database", "get_dynamic_global_properties")
    assert props["last_irreversible_block_num"] == num
    chain = Blockchain(blockchain_instance=bts, mode="irreversible")
    seen = list(chain.stream(opNames=["transfer"], start=num, stop=num))
    assert [op["amount"]["amount"] for op in seen] == [400_000]


def test_with_confirming_blocks_the_stream_needs_no_other_block(fresh):
    """set_confirming_blocks(true): automine follows the transfer's block
    with an empty one, so python-bitshares' irreversible stream sees the
    bot's own transfer as soon as the broadcast returns, and its next
    transaction still finds the header after the last irreversible block
    for its TaPoS."""
    from bitshares.blockchain import Blockchain

    devnet = fresh
    devnet.set_confirming_blocks(True)
    try:
        bts = devnet.bitshares(expiration=devnet.expiration(), blocking="head")
        num = bts.transfer("dev1", 5, "TEST", account="dev0")["block_num"]
        props = devnet.call("database", "get_dynamic_global_properties")
        assert props["head_block_number"] == num + 1
        assert props["last_irreversible_block_num"] == num
        chain = Blockchain(blockchain_instance=bts, mode="irreversible")
        seen = list(chain.stream(opNames=["transfer"], start=num, stop=num))
        assert [op["amount"]["amount"] for op in seen] == [500_000]
        again = bts.transfer("dev1", 6, "TEST", account="dev0")["block_num"]
        assert again == num + 2
    finally:
        devnet.set_confirming_blocks(False)
