"""The devnet service in process, on a ``task.Clock``: automine on the next
reactor turn, the block timer, the clock offset of advance_time, the
devnet API set's argument checks (clear errors, nothing changed), and the
snapshot refusal for a plugin that keeps no records."""

import os
import shutil
import tempfile
import time

import pytest
from twisted.internet import task

from nodeapi.api.devnet import DevnetApi
from nodeapi.devnet import snapshots
from nodeapi.devnet.control import Devnet, DevnetOptions
from nodeapi.errors import ApiError
from nodeapi.plugins.account_history.history import AccountHistory
from nodeapi.node import Node
from nodeapi.protocol.times import parse_time

from kit.chain import open_chain
from kit.keys import DEV_WIF
from kit.signing import sign_wire

CORE = "1.3.0"


@pytest.fixture
def devnet(genesis, tmp_path):
    chain = open_chain(genesis, tmp_path / "blocks.log")
    chain.add_consumer(AccountHistory())
    clock = task.Clock()
    clock.advance(time.time())
    net = Devnet(chain, DevnetOptions(accounts=2, key=DEV_WIF, block_interval=0), clock=clock)
    net.startService()
    yield net
    net.stopService()
    chain.block_log.close()


def _transfer(chain, frm, to, amount, wif):
    return sign_wire(chain, [[0, {"fee": {"amount": 2000000, "asset_id": CORE}, "from": frm,
                                  "to": to, "amount": {"amount": amount, "asset_id": CORE},
                                  "extensions": []}]], wif=wif)


def test_start_makes_the_ready_accounts_in_two_blocks(devnet):
    chain = devnet.chain
    assert chain.head_block_num == 2  # to now; claim, registrations and funding
    for acc in devnet.accounts:
        oid = chain.state.account_by_name[acc.name]
        assert chain.state.balance(oid, CORE) == 100_000_000_000
    # the first block is a maintenance block: graphene's get_slot_time skips
    # maintenance_skip_slots (3) slots after it; then one slot of 1 s
    assert abs(chain.head_block_time - devnet.clock.seconds()) <= 5


def test_a_pending_transaction_is_mined_on_the_next_turn(devnet):
    chain = devnet.chain
    dev0 = chain.state.account_by_name["dev0"]
    head = chain.head_block_num
    chain.push_transaction(_transfer(chain, dev0, "1.2.6", 5, devnet.accounts[0].wif))
    assert chain.head_block_num == head  # not inside push_transaction
    devnet.clock.advance(0)
    assert chain.head_block_num == head + 1
    assert chain.pending_transactions == []
    devnet.clock.advance(10)  # nothing pending: no empty blocks without a timer
    assert chain.head_block_num == head + 1


def test_revert_drops_the_pending_transactions(devnet):
    """A transaction pending at a revert is dropped with its changes
    (Chain.clear_pending, graphene database::clear_pending); the chain then
    takes and mines new ones as before."""
    chain = devnet.chain
    dev0 = chain.state.account_by_name["dev0"]
    wif = devnet.accounts[0].wif
    sid = devnet.snapshot()
    head, before = chain.head_block_num, chain.state.balance(dev0, CORE)
    chain.push_transaction(_transfer(chain, dev0, "1.2.6", 5, wif))
    assert chain.pending_transactions
    assert chain.state.balance(dev0, CORE) == before - 5 - 2000000  # amount + fee
    devnet.revert(sid)
    assert chain.pending_transactions == [] and chain.head_block_num == head
    assert chain.state.balance(dev0, CORE) == before
    devnet.clock.advance(0)
    assert chain.head_block_num == head  # nothing left to mine
    chain.push_transaction(_transfer(chain, dev0, "1.2.6", 7, wif))
    devnet.clock.advance(0)
    assert chain.head_block_num == head + 1 and chain.pending_transactions == []
    assert chain.state.balance(dev0, CORE) == before - 7 - 2000000


def test_the_head_stays_within_max_lead_of_the_clock(devnet):
    """A burst of transactions in one second: automine gives each its own
    block at the next slots, the devnet's clock moving with the head (the
    head is never ahead of it), until the head is MAX_LEAD seconds past
    the time asked for (the wall clock plus ``asked``); then it waits for
    the clock and puts what is pending in one block (bitshares-core's
    witness plugin never produces before the slot: witness.cpp
    ``not_time_yet``); clients' wall-clock expirations stay valid."""
    from nodeapi.devnet.control import MAX_LEAD

    chain = devnet.chain
    dev0 = chain.state.account_by_name["dev0"]

    def asked_time():
        return int(devnet.clock.seconds()) + devnet.asked

    for amount in range(1, 16):
        chain.push_transaction(_transfer(chain, dev0, "1.2.6", amount, devnet.accounts[0].wif))
        devnet.clock.advance(0)
        assert chain.head_block_time <= devnet.now()
        assert chain.head_block_time - asked_time() <= MAX_LEAD
    assert devnet.offset > devnet.asked  # the burst moved the clock
    assert chain.pending_transactions  # held for the clock
    devnet.clock.advance(1)
    assert not chain.pending_transactions
    assert chain.head_block_time <= devnet.now()
    assert chain.head_block_time - asked_time() <= MAX_LEAD


def test_the_block_timer_skips_while_the_head_is_too_far_ahead(genesis, tmp_path):
    from nodeapi.devnet.control import MAX_LEAD

    chain = open_chain(genesis, tmp_path / "blocks.log")
    clock = task.Clock()
    clock.advance(time.time())
    net = Devnet(chain, DevnetOptions(accounts=0, key=DEV_WIF, block_interval=1), clock=clock)
    net.startService()
    try:
        for _ in range(MAX_LEAD + 2):  # single blocks at the next slots: the head runs ahead
            net.produce_block()
        lead = chain.head_block_time - (int(clock.seconds()) + net.asked)
        assert lead >= MAX_LEAD
        head = chain.head_block_num
        for _ in range(lead - MAX_LEAD + 1):  # the clock catches up to MAX_LEAD
            assert chain.head_block_num == head  # no block further ahead
            clock.advance(1)
        clock.advance(1)
        assert chain.head_block_num > head
        assert chain.head_block_time <= net.now()  # never ahead of the devnet's clock
    finally:
        net.stopService()
        chain.block_log.close()


def test_produce_blocks_moves_the_devnet_clock(devnet):
    """Blocks asked for move the devnet's clock with the head (anvil_mine
    moves time too): a transaction after them is mined at once."""
    chain = devnet.chain
    devnet.produce_blocks(30)
    devnet.clock.advance(0)
    assert chain.head_block_time <= devnet.now()
    head = chain.head_block_num
    dev0 = chain.state.account_by_name["dev0"]
    chain.push_transaction(_transfer(chain, dev0, "1.2.6", 5, devnet.accounts[0].wif))
    devnet.clock.advance(0)
    assert chain.head_block_num == head + 1


def test_the_block_timer(genesis, tmp_path):
    chain = open_chain(genesis, tmp_path / "blocks.log")
    clock = task.Clock()
    clock.advance(time.time())
    net = Devnet(chain, DevnetOptions(accounts=0, key=DEV_WIF, block_interval=5), clock=clock)
    net.startService()
    try:
        head = chain.head_block_num
        clock.advance(5)
        clock.advance(5)
        assert chain.head_block_num == head + 2
    finally:
        net.stopService()
        chain.block_log.close()


def test_advance_time_moves_the_clock_and_later_blocks_follow_it(devnet):
    chain = devnet.chain
    start = chain.head_block_time
    head = devnet.advance_time(3600)
    assert parse_time(head["time"]) == start + 3600
    assert devnet.offset >= 3600 - 5
    devnet.clock.advance(1)
    devnet.produce_block()
    assert chain.head_block_time >= start + 3600 + 1


def test_api_arguments_are_checked_and_nothing_changes(devnet):
    node = Node(chain=devnet.chain, devnet=devnet)
    api = DevnetApi(node, None)
    head = devnet.chain.head_block_id
    for function, args, message in (
            ("produce_blocks", [0], "count must be 1..100000"),
            ("produce_blocks", ["x"], "expected an integer"),
            ("advance_time", [0], "seconds must be"),
            ("advance_time", [-5], "seconds must be"),
            ("revert", [99], "No devnet snapshot 99"),
            ("create_account", ["bob", "TESTxyz", 1], "Invalid public key"),
            ("create_account", ["dev0", devnet.accounts[0].public_key, 1], "already exists"),
            ("set_balance", ["nobody", 5], "no such account"),
            ("set_balance", [["dev0"], 5], "account"),
            ("create_account", ["carol", devnet.accounts[0].public_key, 2 ** 63],
             "amount must be an integer 0..1000000000000000"),
            ("create_account", ["carol", devnet.accounts[0].public_key, -1], "non-negative"),
            ("dump_state", ["x"], "--api-output-dir"),
            ("increase_time", [0], "seconds must be"),
            ("set_automine", ["yes"], "true or false"),
            ("set_interval_mining", [-1], "seconds must be 0..86400"),
            ("drop_transaction", ["zz"], "40 hex digits"),
            ("drop_transaction", ["ab" * 20], "No pending transaction"),
            ("set_next_block_time", ["nope"], "ISO text"),
            ("impersonate_account", ["nobody"], "no such account"),
            ("stop_impersonating_account", [5], "account"),
            ("set_next_block_time", ["2001-01-01T00:00:00"], "after the head block time")):
        with pytest.raises(ApiError, match=message):
            api.call(function, args)
    assert devnet.chain.head_block_id == head
    node.devnet = None
    with pytest.raises(ApiError, match="needs a node started with --devnet"):
        api.call("snapshot", [])


def test_a_plugin_without_records_refuses_snapshots(devnet):
    class NoRecords:
        def block_applied(self, applied):
            pass

    devnet.chain.add_consumer(NoRecords())
    with pytest.raises(snapshots.SnapshotError, match="NoRecords keeps no snapshot"):
        devnet.snapshot()


def test_load_state_without_devnet_is_a_startup_error(tmp_path, capsys):
    """One line on stderr, exit status 78 (a configuration error)."""
    from nodeapi.config import Options
    from nodeapi.tap import EX_CONFIG, makeService

    options = Options()
    options.parseOptions(["--data-dir", str(tmp_path / "d"), "--load-state", "x.ckpt"])
    with pytest.raises(SystemExit) as stopped:
        makeService(options, reactor=task.Clock())
    assert stopped.value.code == EX_CONFIG == 78
    assert capsys.readouterr().err == "nodeapi: --load-state needs --devnet\n"


def test_fork_options_are_checked_at_startup(tmp_path, capsys):
    """One line on stderr, exit status 78 (a configuration error)."""
    from nodeapi.config import Options
    from nodeapi.tap import EX_CONFIG, makeService

    for argv, message in (
            (["--fork-url", "ws://127.0.0.1:1"], "nodeapi: --fork-url needs --devnet\n"),
            (["--devnet", "--fork-url", "ws://127.0.0.1:1", "--load-state", "x"],
             "nodeapi: --fork-url and --load-state both give the devnet's start state: "
             "choose one\n")):
        options = Options()
        options.parseOptions(["--data-dir", str(tmp_path / "d"), *argv])
        with pytest.raises(SystemExit) as stopped:
            makeService(options, reactor=task.Clock())
        assert stopped.value.code == EX_CONFIG
        assert capsys.readouterr().err == message


def test_many_ready_accounts_are_funded_in_transactions_that_fit(genesis, tmp_path):
    """45 accounts: their funding takes three transactions of at most 20
    transfers (graphene maximum_transaction_size, 2048 bytes here)."""
    chain = open_chain(genesis, tmp_path / "blocks.log")
    clock = task.Clock()
    clock.advance(time.time())
    net = Devnet(chain, DevnetOptions(accounts=45, key=DEV_WIF), clock=clock)
    net.startService()
    try:
        block = chain.get_block(chain.head_block_num)["transactions"]
        funding = [t for t in block if t["operations"][0][0] == 0]  # after the claim, registrations
        assert [len(t["operations"]) for t in funding] == [20, 20, 5]
        for acc in net.accounts:
            assert chain.state.balance(chain.state.account_by_name[acc.name], CORE) \
                == 100_000_000_000
    finally:
        net.stopService()
        chain.block_log.close()


@pytest.mark.parametrize("endpoint,warned", [("0.0.0.0:0", True), ("127.0.0.1:0", False)])
def test_devnet_off_loopback_is_warned(tmp_path, captured, endpoint, warned):
    """--devnet opens every set but debug without login: a port not on a
    loopback address gets a warning (and one naming --rpc-allowed-hosts);
    the service tree has the devnet and no witness; the data dir is a
    fresh temporary one."""
    from twisted.internet.testing import MemoryReactorClock

    from nodeapi.config import Options
    from nodeapi.tap import makeService

    options = Options()
    options.parseOptions(["--devnet", "--rpc-endpoint", endpoint,
                          "--data-dir", str(tmp_path / "ignored")])
    top = makeService(options, reactor=MemoryReactorClock())
    try:
        names = [svc.name for svc in top]
        assert "devnet" in names and "witness" not in names
        assert top.node.devnet is top.getServiceNamed("devnet")
        assert options["data-dir"].startswith(os.path.join(tempfile.gettempdir(),
                                                           "nodeapi-devnet-"))
        text = " ".join(line for _level, line, _event in captured)
        assert ("not a loopback address" in text) is warned
        # on every interface, a name the clients use is the operator's to list
        assert ("get HTTP 403; list the names in --rpc-allowed-hosts" in text) is warned
        assert top.node.devnet is not None
    finally:
        top.block_log.close()
        shutil.rmtree(options["data-dir"], ignore_errors=True)


def test_no_ready_accounts_still_claims_the_faucet(genesis, tmp_path):
    chain = open_chain(genesis, tmp_path / "blocks.log")
    clock = task.Clock()
    clock.advance(time.time())
    net = Devnet(chain, DevnetOptions(accounts=0, key=DEV_WIF), clock=clock)
    net.startService()
    try:
        assert chain.state.balance("1.2.6", CORE) > 10 ** 14  # init0 holds the genesis balance
        assert net.create_account("solo", net.public, 5)["id"].startswith("1.2.")
    finally:
        net.stopService()
        chain.block_log.close()


def test_a_witness_signing_with_another_key_gets_the_devnet_key(devnet):
    """As bitshares-core's debug_generate_blocks: the scheduled witness'
    signing_key is rewritten to the devnet's key before its block."""
    from kit.keys import OTHER_PUB

    chain = devnet.chain
    for i in range(1, 12):
        chain.debug_update({"_action": "update", "id": f"1.6.{i}", "signing_key": OTHER_PUB})
    head = chain.head_block_num
    devnet.produce_blocks(3)
    devnet.clock.advance(0)
    assert chain.head_block_num == head + 3
    changed = [chain.state.objects[f"1.6.{i}"]["signing_key"] for i in range(1, 12)]
    assert changed.count(devnet.public) >= 1 and OTHER_PUB in changed


def _rewrite(path, change):
    """A copy of the state file at ``path`` with its records passed
    through ``change(records) -> records`` and a valid digest (a crafted
    file: the digest alone does not tell a state file's blocks are
    blocks)."""
    import hashlib

    import orjson

    from nodeapi.chain.checkpoint import encode

    records = [orjson.loads(line) for line in open(path, "rb")][:-1]
    lines = [encode(*record) for record in change(records)]
    digest = hashlib.sha256(b"".join(lines)).hexdigest()
    with open(path, "wb") as f:
        f.write(b"".join(lines) + encode("end", digest, len(lines)))


def _fresh_chain(genesis, path):
    chain = open_chain(genesis, path)
    chain.add_consumer(AccountHistory())
    return chain


def test_load_state_refuses_what_is_not_a_state_file(devnet, genesis, tmp_path):
    """snapshots.load checks before changing anything: a regular file
    (not /dev/zero), at most max_size bytes, and blocks that are the chain
    of ids from the genesis to the state's head with the transactions of
    their merkle roots, each refusal naming the file and the first
    problem; the node is left at its genesis and loads a good file
    afterwards."""
    dev0 = devnet.chain.state.account_by_name["dev0"]
    devnet.chain.push_transaction(_transfer(devnet.chain, dev0, "1.2.6", 5,
                                            devnet.accounts[0].wif))
    devnet.clock.advance(0)
    good = str(tmp_path / "good.state")
    head = devnet.dump_state(good)
    assert head == 3

    def altered_amount(records):
        for section, key, value in records:
            if section == "blocks" and key == 3:
                value["transactions"][0]["operations"][0][1]["amount"]["amount"] = 10 ** 12
        return records

    def relinked(records):
        for section, key, value in records:
            if section == "blocks" and key == 2:
                value["previous"] = "00000001" + "ff" * 16
        return records

    def dropped_head(records):
        return [r for r in records if not (r[0] == "blocks" and r[1] == 3)]

    def not_a_block(records):
        return [[s, k, "junk" if s == "blocks" and k == 1 else v] for s, k, v in records]

    cases = [("/dev/zero", "not a regular file"), (str(tmp_path), "not a regular file")]
    for name, change, message in (
            ("amount", altered_amount, "block record 3 is damaged: Transaction merkle root"),
            ("relinked", relinked, "block record 2: previous '00000001ffff"),
            ("short", dropped_head, "its blocks end at 2"),
            ("junk", not_a_block, "block record 1 is not block 1")):
        path = str(tmp_path / f"{name}.state")
        shutil.copy(good, path)
        _rewrite(path, change)
        cases.append((path, message))
    for number, (path, message) in enumerate(cases):
        chain = _fresh_chain(genesis, tmp_path / f"c{number}" / "blocks.log")
        with pytest.raises(snapshots.SnapshotError) as info:
            snapshots.load(chain, path)
        assert str(info.value).startswith(f"--load-state {path}: ")
        assert message in str(info.value), str(info.value)
        assert chain.head_block_num == 0 and chain.block_log.head_num == 0
        chain.block_log.close()
    chain = _fresh_chain(genesis, tmp_path / "capped" / "blocks.log")
    with pytest.raises(snapshots.SnapshotError, match="over the 1000 bytes a state file"):
        snapshots.load(chain, good, max_size=1000)
    assert snapshots.load(chain, good) == {"offset": devnet.offset}
    assert chain.head_block_id == devnet.chain.head_block_id
    chain.block_log.close()


def test_snapshots_are_capped(genesis, tmp_path):
    chain = open_chain(genesis, tmp_path / "blocks.log")
    clock = task.Clock()
    clock.advance(time.time())
    net = Devnet(chain, DevnetOptions(accounts=0, key=DEV_WIF, max_snapshots=2), clock=clock)
    net.startService()
    try:
        first = net.snapshot()
        net.snapshot()
        with pytest.raises(ApiError, match="holds 2 snapshots already "
                                           r"\(--devnet-max-snapshots\)"):
            net.snapshot()
        net.revert(first)
        assert net.snapshot() == first + 2
    finally:
        net.stopService()
        chain.block_log.close()


def test_create_account_is_one_transaction(devnet):
    """The registration and the transfer are one transaction: a transfer
    the faucet cannot pay refuses the registration too (before: the
    account was registered in a block of its own, then the transfer
    failed), and nothing is produced."""
    from nodeapi.errors import ChainError

    chain = devnet.chain
    head, public = chain.head_block_num, devnet.accounts[0].public_key
    faucet = chain.state.balance("1.2.6", CORE)
    with pytest.raises(ChainError, match="Insufficient Balance"):
        devnet.create_account("too-rich", public, faucet + 1)
    with pytest.raises(ApiError, match=r"amount must be an integer 0\.\.1000000000000000"):
        devnet.create_account("too-rich", public, 2 ** 63)
    assert "too-rich" not in chain.state.account_by_name
    assert chain.head_block_num == head and chain.pending_transactions == []
    made = devnet.create_account("rich", public, 7)
    assert chain.head_block_num == head + 1
    assert chain.state.balance(made["id"], CORE) == 7


def test_ready_accounts_are_lifetime_members_that_register_accounts(devnet):
    """Each ready account is upgraded at the start (account_upgrade, the
    faucet paying the 10,000 TEST fee on top of its balance: the balance
    stays 1,000,000 TEST) and registers an account itself (graphene
    account_create_evaluator: only a lifetime member may register)."""
    from nodeapi.chain.genesis import MAX_TIME
    from nodeapi.devnet import accounts as acc

    chain = devnet.chain
    dev0 = chain.state.account_by_name["dev0"]
    account = chain.state.objects[dev0]
    assert account["membership_expiration_date"] == MAX_TIME
    assert account["lifetime_referrer"] == dev0
    assert chain.state.balance(dev0, CORE) == 100_000_000_000
    ops = acc.create_ops(dev0, "made-by-dev0", devnet.accounts[0].public_key)
    chain.push_transaction(acc.signed(chain, ops, [devnet.accounts[0].wif]))
    devnet.clock.advance(0)
    made = chain.state.objects[chain.state.account_by_name["made-by-dev0"]]
    assert made["registrar"] == dev0


def test_confirming_blocks_make_a_mined_block_irreversible_at_once(devnet):
    """set_confirming_blocks(true): automine follows the block holding a
    transaction with an empty one, so the last irreversible block (the
    one before the head on a devnet) is that block; off again, one block
    per turn."""
    chain = devnet.chain
    dev0 = chain.state.account_by_name["dev0"]
    wif = devnet.accounts[0].wif
    api = DevnetApi(Node(chain=chain, devnet=devnet), None)
    assert api.set_confirming_blocks(True) is True
    head = chain.head_block_num
    chain.push_transaction(_transfer(chain, dev0, "1.2.6", 5, wif))
    devnet.clock.advance(0)
    assert chain.head_block_num == head + 2
    assert len(chain.get_block(head + 1)["transactions"]) == 1
    assert chain.get_block(head + 2)["transactions"] == []
    assert chain.dgp["last_irreversible_block_num"] == head + 1
    devnet.clock.advance(10)  # nothing pending: nothing more
    assert chain.head_block_num == head + 2
    with pytest.raises(ApiError, match="enabled must be true or false"):
        api.set_confirming_blocks(1)
    assert api.set_confirming_blocks(False) is False
    chain.push_transaction(_transfer(chain, dev0, "1.2.6", 6, wif))
    devnet.clock.advance(0)
    assert chain.head_block_num == head + 3
    assert chain.dgp["last_irreversible_block_num"] == head + 2
