"""The devnet's block-time rule on a ``task.Clock`` (nodeapi.devnet.control):
a transaction the devnet accepted is in the next block however long the
devnet was idle, after advance_time and after --load-state; one that no
block could include is refused at broadcast with the devnet's head time
and the reason; the last irreversible block is the head.

The expirations are the clients' rules: bitsharesjs takes the head block
time + 15 s once the head is more than 30 s old (TransactionBuilder
``base_expiration_sec``), python-bitshares the wall clock + 30 s, the
plugin's ``expiration()`` the head time + 30 s."""

import time

import pytest
from twisted.internet import task

from nodeapi.chain.errors import TransactionExpired
from nodeapi.devnet.control import Devnet, DevnetOptions
from nodeapi.errors import ApiError
from nodeapi.plugins.account_history.history import AccountHistory

from kit.chain import open_chain
from kit.keys import DEV_WIF
from kit.signing import sign_wire

CORE = "1.3.0"


def _devnet(genesis, path, **options):
    chain = open_chain(genesis, path)
    chain.add_consumer(AccountHistory())
    clock = task.Clock()
    clock.advance(time.time())
    net = Devnet(chain, DevnetOptions(key=DEV_WIF, **dict({"accounts": 2}, **options)),
                 clock=clock)
    net.startService()
    return net


@pytest.fixture
def devnet(genesis, tmp_path):
    net = _devnet(genesis, tmp_path / "blocks.log")
    yield net
    net.stopService()
    net.chain.block_log.close()


def _transfer(net, amount, expire_in):
    """dev0 -> 1.2.6 ``amount`` satoshis, expiring ``expire_in`` s after
    the head block time."""
    chain = net.chain
    dev0 = chain.state.account_by_name["dev0"]
    return sign_wire(chain, [[0, {"fee": {"amount": 2000000, "asset_id": CORE}, "from": dev0,
                                  "to": "1.2.6", "amount": {"amount": amount, "asset_id": CORE},
                                  "extensions": []}]], wif=net.accounts[0].wif,
                     expire_in=expire_in)


def _mined(net, trx) -> int:
    """Push ``trx``, run the automine turn; the new head block's time."""
    chain = net.chain
    head = chain.head_block_num
    chain.push_transaction(trx)
    net.clock.advance(0)
    assert chain.head_block_num == head + 1, "not mined"
    assert chain.pending_transactions == []
    block = chain.get_block(head + 1)
    assert len(block["transactions"]) == 1
    return chain.head_block_time


def test_after_60_s_idle_a_head_time_expiration_is_in_the_next_block(devnet):
    """60 s without a block: bitsharesjs expires its transaction at head +
    15 s; the block is stamped at head + 14 s (the last slot before it),
    not at the clock (head + 60 s, which dropped it before)."""
    head_time = devnet.chain.head_block_time
    devnet.clock.advance(60)
    assert devnet.now() - head_time >= 50  # the start may leave the head a few s ahead
    assert _mined(devnet, _transfer(devnet, 5, 15)) == head_time + 14
    # the head is behind the clock, never ahead; a wall-clock expiration
    # (python-bitshares: now + 30 s) is stamped at the clock again
    assert devnet.chain.head_block_time < devnet.now()
    now = devnet.now()
    expire_in = now + 30 - devnet.chain.head_block_time
    assert _mined(devnet, _transfer(devnet, 6, expire_in)) == now


def test_after_advance_time_and_idle_the_plugins_expiration_holds(devnet):
    """advance_time(3600), then 31 s idle: the plugin's expiration() (head
    time + 30 s) is in the next block."""
    devnet.advance_time(3600)
    head_time = devnet.chain.head_block_time
    devnet.clock.advance(31)
    assert _mined(devnet, _transfer(devnet, 5, 30)) == head_time + 29


def test_several_pending_share_a_block_before_the_earliest_expiration(devnet):
    devnet.automine = False
    chain = devnet.chain
    head_time = chain.head_block_time
    devnet.clock.advance(100)
    chain.push_transaction(_transfer(devnet, 5, 40))
    chain.push_transaction(_transfer(devnet, 6, 20))
    chain.push_transaction(_transfer(devnet, 7, 90))
    devnet.clock.advance(0)
    assert len(chain.pending_transactions) == 3  # automine off
    assert devnet.next_block_time() == head_time + 19
    devnet.produce_block()
    assert chain.head_block_time == head_time + 19
    assert chain.pending_transactions == []
    assert len(chain.get_block(chain.head_block_num)["transactions"]) == 3


def test_a_transaction_no_block_can_include_is_refused_at_broadcast(devnet):
    """Expiring at the next slot (head + 1 s): no block could include it
    (its time must be before the expiration); refused with the head time,
    the clock and what to do.  After advance_time a wall-clock expiration
    is before the head: the chain's text first, then the devnet's why."""
    chain = devnet.chain
    head_time, head = chain.head_block_time, chain.head_block_num
    with pytest.raises(TransactionExpired) as info:
        chain.push_transaction(_transfer(devnet, 5, 1))
    text = str(info.value)
    assert "is not after the devnet's next block time" in text
    assert "head block time is" in text and "plus at least 2 s" in text
    devnet.clock.advance(0)
    assert chain.head_block_num == head and chain.pending_transactions == []
    devnet.advance_time(3600)
    with pytest.raises(TransactionExpired) as info:
        chain.push_transaction(_transfer(devnet, 5, 30 - 3600))
    text = str(info.value)
    assert text.startswith("Transaction expired: expiration ")
    assert "s ahead of the wall clock: advance_time" in text
    assert head_time + 3600 == chain.head_block_time


def test_after_load_state_a_head_time_expiration_is_in_the_next_block(devnet, genesis,
                                                                     tmp_path):
    """A state dumped, loaded a day later: the head is a day old, so
    bitsharesjs expires at head + 15 s; the block is stamped before it."""
    path = str(tmp_path / "state")
    devnet.dump_state(path)
    loaded = _devnet(genesis, tmp_path / "loaded" / "blocks.log", load_state=path)
    try:
        loaded.clock.advance(86400)
        head_time = loaded.chain.head_block_time
        assert loaded.chain.head_block_id == devnet.chain.head_block_id
        assert _mined(loaded, _transfer(loaded, 5, 15)) == head_time + 14
    finally:
        loaded.stopService()
        loaded.chain.block_log.close()


def test_the_last_irreversible_block_follows_the_head(devnet, genesis, tmp_path):
    """On a devnet the last irreversible block is the one before the head
    (one producer, no fork; not the head itself: python-bitshares reads
    the header of the block after it for its TaPoS).  A node not a devnet
    keeps graphene's rule (75 % of the active witnesses confirmed it)."""
    chain = devnet.chain
    _mined(devnet, _transfer(devnet, 5, 30))
    assert chain.dgp["last_irreversible_block_num"] == chain.head_block_num - 1
    devnet.produce_blocks(3)
    assert chain.dgp["last_irreversible_block_num"] == chain.head_block_num - 1
    plain = open_chain(genesis, tmp_path / "plain" / "blocks.log")
    try:
        for _ in range(3):
            slot = plain.get_slot_at_time(max(plain.get_slot_time(1), int(time.time())))
            witness = plain.get_scheduled_witness(slot)
            plain.debug_update({"_action": "update", "id": witness,
                                "signing_key": devnet.public})
            plain.generate_block(plain.get_slot_time(slot), witness, DEV_WIF)
        assert plain.dgp["last_irreversible_block_num"] < plain.head_block_num - 1
    finally:
        plain.block_log.close()


def test_mining_control(devnet):
    """Automine off: accepted transactions wait (pending_transactions),
    one can be dropped (and one spending what it paid goes with it); on
    again, what is pending is mined on the next turn; interval mining
    makes a block every N s; set_next_block_time stamps the next block;
    increase_time moves the clock without a block (anvil evm_setAutomine,
    evm_setIntervalMining, anvil_dropTransaction, evm_setNextBlockTimestamp,
    evm_increaseTime)."""
    chain = devnet.chain
    head = chain.head_block_num
    devnet.set_automine(False)
    first = chain.push_transaction(_transfer(devnet, 5, 60))
    second = chain.push_transaction(_transfer(devnet, 6, 60))
    devnet.clock.advance(1)
    assert chain.head_block_num == head
    ids = [p["id"] for p in devnet.pending_transactions()]
    assert len(ids) == 2 and devnet.pending_transactions()[0]["transaction"]["operations"] \
        == first["operations"]
    assert devnet.drop_transaction(ids[0]) == [ids[0]]
    assert [p["id"] for p in devnet.pending_transactions()] == [ids[1]]
    with pytest.raises(ApiError, match="No pending transaction"):
        devnet.drop_transaction(ids[0])
    devnet.set_automine(True)
    devnet.clock.advance(0)
    assert chain.head_block_num == head + 1
    block = chain.get_block(head + 1)
    assert block["transactions"][0]["operations"] == second["operations"]
    # increase_time: no block, the next one later
    before = devnet.now()
    assert devnet.increase_time(100)["head_block_number"] == head + 1
    assert devnet.now() == before + 100
    # set_next_block_time
    when = chain.head_block_time + 500
    devnet.set_next_block_time(when)
    assert devnet.produce_block() and chain.head_block_time == when
    with pytest.raises(ApiError, match="after the head block time"):
        devnet.set_next_block_time(when)
    # interval mining
    devnet.set_interval_mining(2)
    head = chain.head_block_num
    devnet.clock.advance(2)
    devnet.clock.advance(2)
    assert chain.head_block_num == head + 2
    devnet.set_interval_mining(0)
    devnet.clock.advance(10)
    assert chain.head_block_num == head + 2


def test_drop_takes_the_transactions_that_needed_the_dropped_one(devnet):
    """dev0 pays dev1 5 TEST, then dev1 pays all it has on: dropping the
    first leaves the second without the funds, so it goes too."""
    chain = devnet.chain
    devnet.set_automine(False)
    dev0, dev1 = (chain.state.account_by_name[n] for n in ("dev0", "dev1"))
    have = chain.state.balance(dev1, CORE)
    pay = sign_wire(chain, [[0, {"fee": {"amount": 2000000, "asset_id": CORE}, "from": dev0,
                                 "to": dev1, "amount": {"amount": 500_000, "asset_id": CORE},
                                 "extensions": []}]], wif=devnet.accounts[0].wif)
    spend = sign_wire(chain, [[0, {"fee": {"amount": 2000000, "asset_id": CORE}, "from": dev1,
                                   "to": dev0, "amount": {"amount": have + 500_000 - 2000000,
                                                          "asset_id": CORE},
                                   "extensions": []}]], wif=devnet.accounts[1].wif)
    chain.push_transaction(pay)
    chain.push_transaction(spend)
    ids = [p["id"] for p in devnet.pending_transactions()]
    assert devnet.drop_transaction(ids[0]) == ids
    assert devnet.pending_transactions() == []


def test_impersonation(devnet):
    """impersonate_account: a transfer from dev1 with no signature at all
    is accepted and mined (its active authority counts as given: anvil
    anvil_impersonateAccount); one also needing another account's
    authority still needs that one's signature; after
    stop_impersonating_account the unsigned transfer is refused again
    (graphene verify_authority: missing required active authority)."""
    from nodeapi.chain.errors import MissingAuthority

    chain = devnet.chain
    dev0, dev1 = (chain.state.account_by_name[n] for n in ("dev0", "dev1"))
    before = chain.state.balance(dev0, CORE)

    def unsigned(frm, to, amount, nonce):
        trx = sign_wire(chain, [[0, {"fee": {"amount": 2000000, "asset_id": CORE},
                                     "from": frm, "to": to,
                                     "amount": {"amount": amount, "asset_id": CORE},
                                     "extensions": []}]], wif=devnet.accounts[0].wif,
                        expire_in=60 + nonce)
        return dict(trx, signatures=[])

    with pytest.raises(MissingAuthority):
        chain.push_transaction(unsigned(dev1, dev0, 5, 0))
    assert devnet.impersonate_account(dev1) == [dev1]
    chain.push_transaction(unsigned(dev1, dev0, 5, 1))
    devnet.clock.advance(0)
    assert chain.pending_transactions == []
    assert chain.state.balance(dev0, CORE) == before + 5
    with pytest.raises(MissingAuthority):  # dev0 is not impersonated
        chain.push_transaction(unsigned(dev0, dev1, 5, 2))
    assert devnet.stop_impersonating_account(dev1) == []
    with pytest.raises(MissingAuthority):
        chain.push_transaction(unsigned(dev1, dev0, 5, 3))


def test_the_head_is_never_ahead_of_the_devnet_clock(devnet):
    """At start (the first block after the genesis' maintenance skips 3
    slots) and after blocks at the next slots, the devnet's clock follows
    the head; only time asked for moves it further (get_head's offset)."""
    assert devnet.chain.head_block_time <= devnet.now()
    for _ in range(5):
        devnet.create_account(f"acct{_}", devnet.accounts[0].public_key, 1)
        assert devnet.chain.head_block_time <= devnet.now()
    assert devnet.asked == 0
    devnet.advance_time(100)
    assert devnet.asked >= 100 and devnet.chain.head_block_time <= devnet.now()
