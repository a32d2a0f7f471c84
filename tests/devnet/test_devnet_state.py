"""The devnet's state functions with real clients: set_balance and
create_account (python-bitshares then uses the account), 200
snapshot/revert cycles in flat memory, dump_state and ``--load-state``,
the block timer, and the devnet set refused on a node without --devnet."""

import os
import time

import pytest

from nodeapi.devnet.pytest_plugin import DevnetError, DevnetProcess
from nodeapi.protocol.keys import PrivateKey

from kit import signing  # noqa: F401  (TESTNODE, the ecdsa signer)
from kit.clients import bitshares_client, forget_cached_objects
from kit.daemon import Daemon

pytestmark = pytest.mark.slow
CORE = "1.3.0"


@pytest.fixture(scope="module")
def devnet():
    process = DevnetProcess("--devnet-accounts", "3", "--devnet-seed", "state-tests").start()
    yield process
    process.stop()


def _balance(devnet, account_id, asset=CORE):
    [bal] = devnet.call("database", "get_account_balances", account_id, [asset])
    return int(bal["amount"])


def _supply(devnet, asset=CORE):
    [asset_obj] = devnet.call("database", "get_assets", [asset])
    [dyn] = devnet.call("database", "get_objects", [asset_obj["dynamic_asset_data_id"]])
    return int(dyn["current_supply"])


def _rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_seed_and_count_options(devnet):
    assert [a.name for a in devnet.accounts] == ["dev0", "dev1", "dev2"]
    key = PrivateKey.from_seed("state-tests dev1")
    assert devnet.accounts[1].wif == key.to_wif()
    assert "'state-tests'" in devnet.log()


def test_set_balance_seen_by_python_bitshares(fresh):
    """set_balance moves the balance and the asset's current_supply by the
    difference; python-bitshares reads the new balance and can spend it."""
    devnet = fresh
    dev0 = devnet.accounts[0]
    supply = _supply(devnet)
    before = _balance(devnet, dev0.id)
    assert devnet.set_balance("dev0", 123_456_789) == {"amount": 123_456_789, "asset_id": CORE}
    assert _supply(devnet) == supply + 123_456_789 - before
    from bitshares.account import Account

    bts = bitshares_client(devnet.url, keys=[dev0.wif])
    bts.blocking = "head"
    assert Account("dev0", blockchain_instance=bts).balance("TEST").amount == 1234.56789
    bts.transfer("dev1", 1000, "TEST", account="dev0")
    assert devnet.set_balance(dev0.id, {"amount": "5", "asset_id": "TEST"})["amount"] == 5


def test_set_balance_refuses_bad_input_and_changes_nothing(fresh):
    devnet = fresh
    dev0 = devnet.accounts[0]
    before = _balance(devnet, dev0.id)
    for args, message in ((("nobody", 1), "no such account"),
                          (("dev0", -1), "non-negative"),
                          (("dev0", "lots"), "non-negative"),
                          (("dev0", {"amount": 1, "asset_id": "NOPE"}), "no such asset"),
                          (("dev0", 10 ** 16), "supply of TEST would be")):
        with pytest.raises(DevnetError, match=message):
            devnet.set_balance(*args)
    assert _balance(devnet, dev0.id) == before


def test_create_account_then_python_bitshares_uses_it(fresh):
    """create_account registers by the faucet init0 and funds in blocks of
    its own; the new account's key signs a python-bitshares transfer."""
    devnet = fresh
    key = PrivateKey.from_seed("a new devnet user")
    public = key.public_key.to_str("TEST")
    made = devnet.create_account("alice-1", public, 50_000_000)
    assert made["name"] == "alice-1" and made["id"].startswith("1.2.")
    [account] = devnet.call("database", "get_accounts", ["alice-1"])
    assert account["registrar"] == account["referrer"] == "1.2.6"
    assert _balance(devnet, made["id"]) == 50_000_000
    bts = bitshares_client(devnet.url, keys=[key.to_wif()])
    bts.blocking = "head"
    bts.transfer("dev0", 1, "TEST", account="alice-1")
    assert _balance(devnet, made["id"]) < 50_000_000 - 100_000
    for args, message in ((("alice-1", public, 0), "already exists"),
                          (("bob", "TESTnotakey", 0), "Invalid public key"),
                          (("Bad_Name", public, 0), "name")):
        with pytest.raises(DevnetError, match=message):
            devnet.create_account(*args)
    assert devnet.call("database", "get_account_by_name", "bob") is None


def test_two_hundred_snapshot_revert_cycles_in_flat_memory(devnet):
    """Each cycle: snapshot, a block with a transfer, revert.  The
    daemon's resident memory after 200 more cycles stays within 8 MiB of
    what it was after 20 (a leak of one state copy per cycle would be
    hundreds of kB each)."""
    dev0, dev1 = devnet.accounts[:2]
    head = devnet.head()

    def cycle():
        sid = devnet.snapshot()
        devnet.set_balance(dev1.id, 7)
        devnet.produce_blocks(1)
        devnet.revert(sid)

    for _ in range(20):
        cycle()
    warm = _rss_kib(devnet.pid)
    started = time.monotonic()
    for _ in range(200):
        cycle()
    elapsed = time.monotonic() - started
    assert _rss_kib(devnet.pid) - warm < 8 * 1024
    assert devnet.head()["head_block_id"] == head["head_block_id"]
    assert _balance(devnet, dev1.id) != 7
    assert elapsed < 60  # cheap enough between every test


def test_dump_state_then_load_state(devnet, tmp_path):
    """dump_state writes the state with its blocks; a devnet started with
    --load-state has the same head, balances, blocks and history, and goes
    on producing blocks after it."""
    dev0, dev1 = devnet.accounts[:2]
    forget_cached_objects()
    sid = devnet.snapshot()
    bts = bitshares_client(devnet.url, keys=[dev0.wif])
    bts.blocking = "head"
    bts.transfer("dev1", 3, "TEST", account="dev0")
    path = str(tmp_path / "state.ckpt")
    head = devnet.dump_state(path)
    assert head == devnet.head()["head_block_number"]
    expected = {"head": devnet.head(), "block": devnet.call("database", "get_block", head),
                "balances": [_balance(devnet, a.id) for a in (dev0, dev1)],
                "history": devnet.call("history", "get_account_history", dev1.id, "1.11.0",
                                       10, "1.11.0")}
    devnet.revert(sid)
    loaded = DevnetProcess("--devnet-accounts", "3", "--devnet-seed", "state-tests",
                           "--load-state", path).start()
    try:
        same = ("head_block_number", "head_block_id", "time", "offset")  # not the clock
        assert {k: loaded.head()[k] for k in same} == {k: expected["head"][k] for k in same}
        assert loaded.call("database", "get_block", head) == expected["block"]
        assert [_balance(loaded, a.id) for a in (dev0, dev1)] == expected["balances"]
        assert loaded.call("history", "get_account_history", dev1.id, "1.11.0", 10,
                           "1.11.0") == expected["history"]
        assert loaded.produce_blocks(1) == head + 1
    finally:
        loaded.stop()
    broken = tmp_path / "broken.ckpt"
    broken.write_bytes(open(path, "rb").read()[:-40])
    with pytest.raises(DevnetError, match="did not start") as info:
        DevnetProcess("--load-state", str(broken)).start(timeout=30)
    assert f"Node startup failed: --load-state {broken}: " in str(info.value)
    assert "Traceback" not in str(info.value)


def test_block_interval_produces_blocks_on_a_timer():
    process = DevnetProcess("--devnet-accounts", "1", "--block-interval", "1").start()
    try:
        first = process.head()["head_block_number"]
        time.sleep(2.5)
        assert process.head()["head_block_number"] >= first + 2
    finally:
        process.stop()


def test_the_devnet_set_is_refused_without_devnet(tmp_path):
    """A node without --devnet does not grant devnet_api by default; an
    api-access file granting it gets an answer saying --devnet is needed."""
    access = tmp_path / "access.json"
    access.write_text('{"permission_map": [["*", {"password_hash_b64": "*", '
                      '"password_salt_b64": "*", "allowed_apis": ["database_api", '
                      '"devnet_api"]}]]}')
    plain = Daemon(tmp_path / "plain").start(wait=False)  # the two start side by side
    granted = Daemon(tmp_path / "granted", "--api-access", str(access)).start(wait=False)
    try:
        plain.wait_rpc()
        granted.wait_rpc()
        with pytest.raises(RuntimeError, match="Access denied"):
            plain.call("snapshot", api="devnet")
        with pytest.raises(RuntimeError, match="needs a node started with --devnet"):
            granted.call("snapshot", api="devnet")
    finally:
        plain.stop()
        granted.stop()


def _faucet(devnet, body, content_type="application/json"):
    import json
    import urllib.error
    import urllib.request

    request = urllib.request.Request(devnet.http_url + "/api/v1/accounts",
                                     data=body if isinstance(body, bytes)
                                     else json.dumps(body).encode(),
                                     headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read()), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), exc.headers


def test_the_faucet_registers_as_the_bitshares_faucet_does(fresh):
    """POST /api/v1/accounts in the BitShares faucet's form registers the
    account with its three keys and funds it; python-bitshares then signs
    with the active key.  Bad requests get {"error": {"base": [...]}} and
    register nothing."""
    devnet = fresh
    owner = PrivateKey.from_seed("faucet owner")
    active = PrivateKey.from_seed("faucet active")
    keys = {k: p.public_key.to_str("TEST") for k, p in
            (("owner_key", owner), ("active_key", active), ("memo_key", active))}
    status, body, headers = _faucet(devnet, {"account": dict(
        name="wallet-user", refcode=None, referrer="nobody", **keys)})
    assert status == 201, body
    assert headers["Access-Control-Allow-Origin"] == "*"
    assert body["account"]["name"] == "wallet-user" and body["account"]["referrer"] == "init0"
    [account] = devnet.call("database", "get_accounts", ["wallet-user"])
    assert account["owner"]["key_auths"] == [[keys["owner_key"], 1]]
    assert account["active"]["key_auths"] == [[keys["active_key"], 1]]
    assert account["options"]["memo_key"] == keys["memo_key"]
    assert _balance(devnet, account["id"]) == 1_000_000_000  # 10,000 TEST
    bts = bitshares_client(devnet.url, keys=[active.to_wif()])
    bts.blocking = "head"
    bts.transfer("dev0", 1, "TEST", account="wallet-user")
    for body_sent, message in ((b"not json", "not JSON"),
                               ({"name": "x"}, "Expected"),
                               ({"account": dict(name="wallet-user", **keys)}, "already taken"),
                               ({"account": dict(keys, name="other", owner_key="TESTbad")},
                                "owner_key must be a TEST"),
                               ({"account": dict(name="Not_Valid", **keys)}, "name")):
        status, reply, _h = _faucet(devnet, body_sent)
        assert status == 400 and message in reply["error"]["base"][0], reply
    assert devnet.call("database", "lookup_account_names", ["other", "Not_Valid"]) == [None,
                                                                                        None]
