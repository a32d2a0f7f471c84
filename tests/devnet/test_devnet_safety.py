"""A devnet on a developer's laptop, attacked as a web page or a careless
call would, over its real loopback port: each attack fails with a clear
error and changes nothing.

- a page's WebSocket (``Origin: http://evil.example``), its ``text/plain``
  POST and its rebound DNS name (``Host: evil.example``) are refused;
- ``debug`` is closed to anonymous users unless an api-access file grants
  it; granted, ``debug_stream_json_objects`` writes only plain names in
  ``--api-output-dir``;
- ``dump_state`` never writes a path from RPC (``../x``, ``/tmp/x``, NUL,
  a hidden name): ``dump_state()`` answers the state, ``dump_state(name)``
  writes in ``--api-output-dir``;
- ``create_account`` of 2^63 or of more than the faucet holds registers
  nothing; snapshots stop at ``--devnet-max-snapshots``; the faucet
  answers other methods with a JSON 405 and counts against the
  per-address call limits; ``--load-state /dev/zero`` stops the start with
  one line."""

import base64
import json
import os
import uuid

import pytest

from nodeapi.devnet.pytest_plugin import INIT0_WIF, DevnetError, DevnetProcess
from nodeapi.protocol.keys import PrivateKey
from nodeapi.rpc.access import hash_password

from kit.raw_http import WS_UPGRADE, json_rpc, raw_request

pytestmark = pytest.mark.slow
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("devnet-out")


@pytest.fixture(scope="module")
def devnet(out_dir):
    process = DevnetProcess("--devnet-accounts", "2", "--devnet-seed", "safety",
                            "--api-output-dir", str(out_dir),
                            "--devnet-max-snapshots", "6").start()
    yield process
    process.stop()


def _port(devnet) -> int:
    return int(devnet.url.rsplit(":", 1)[1])


def _head(devnet) -> int:
    return devnet.head()["head_block_number"]


def _key(seed: str) -> str:
    return PrivateKey.from_seed(seed).public_key.to_str("TEST")


def test_a_web_page_cannot_drive_the_devnet(fresh):
    """The three ways a page reaches 127.0.0.1 are refused (403, 415) and
    no block is produced; the same call without them works."""
    devnet = fresh
    port, head = _port(devnet), _head(devnet)
    produce = json_rpc("produce_blocks", 1, api="devnet")
    answer = raw_request(port, "GET", "/", headers=dict(WS_UPGRADE, Origin="http://evil.example"))
    assert answer.status == 403
    assert "Origin 'http://evil.example' is not allowed" in answer.json()["error"]["message"]
    answer = raw_request(port, body=produce, headers={"Content-Type": "text/plain",
                                                      "Origin": "http://evil.example"})
    assert answer.status in (403, 415)
    answer = raw_request(port, body=produce, headers={"Content-Type": "text/plain"})
    assert answer.status == 415 and "application/json" in answer.json()["error"]["message"]
    answer = raw_request(port, body=produce, headers=JSON, host=f"evil.example:{port}")
    assert answer.status == 403
    assert "Host 'evil.example:" in answer.json()["error"]["message"]
    assert _head(devnet) == head
    answer = raw_request(port, body=produce, headers=JSON, host=f"localhost:{port}")
    assert answer.status == 200 and answer.json()["result"] == head + 1


def test_debug_is_closed_to_anonymous_users(devnet):
    """Without an api-access file a devnet opens every set but debug: its
    functions (which rewrite any object or write files) are refused,
    while the devnet set the plugin drives works."""
    for function, args in (("debug_update_object", [{"_action": "update", "id": "1.6.1",
                                                     "url": "x"}]),
                           ("debug_stream_json_objects", ["x"]),
                           ("debug_generate_blocks", [INIT0_WIF, 1])):
        with pytest.raises(DevnetError, match="Access denied"):
            devnet.call("debug", function, *args)
    assert devnet.call("database", "get_objects", ["1.6.1"])[0]["url"] != "x"
    assert devnet.call("devnet", "get_head")["head_block_number"] > 0


def test_dump_state_writes_no_path_from_rpc(fresh, out_dir, tmp_path):
    """Names that leave --api-output-dir or hide a file are refused with a
    message saying what a name may be, and nothing is written anywhere;
    a plain name is written there; without a name the state comes back
    as text (what --load-state reads)."""
    devnet = fresh
    outside = f"/tmp/nodeapi-test-{uuid.uuid4().hex}"
    before = sorted(os.listdir(out_dir))
    for name in ("../x", outside, "sub/x", "a\x00b", ".bashrc", "..", "", "x" * 256,
                 "a\\b", "line\nbreak"):
        with pytest.raises(DevnetError, match="name must be a plain file name"):
            devnet.call("devnet", "dump_state", name)
    with pytest.raises(DevnetError, match="must be a plain file name"):
        devnet.call("devnet", "dump_state", 7)
    assert sorted(os.listdir(out_dir)) == before
    assert not os.path.exists(outside)
    assert not os.path.exists(os.path.join(os.path.dirname(out_dir), "x"))
    head = devnet.call("devnet", "dump_state", "state.ckpt")
    assert head == _head(devnet)
    text = (out_dir / "state.ckpt").read_text()
    assert json.loads(text.partition("\n")[0])[2]["block_num"] == head
    assert devnet.call("devnet", "dump_state").splitlines()[0] == text.splitlines()[0]
    # a symbolic link planted at the name is replaced, its target untouched
    target = tmp_path / "target"
    target.write_text("keep")
    os.symlink(target, out_dir / "linked")
    devnet.call("devnet", "dump_state", "linked")
    assert target.read_text() == "keep" and not os.path.islink(out_dir / "linked")


def test_create_account_registers_nothing_when_its_amount_fails(fresh):
    """2^63 satoshis (over any share supply) and 10^15 (more than the
    faucet holds) are refused before or with the registration: the name
    stays free and no block is produced; a payable amount registers and
    funds in one block."""
    devnet = fresh
    head = _head(devnet)
    with pytest.raises(DevnetError, match="amount must be an integer 0..1000000000000000"):
        devnet.create_account("big-one", _key("big one"), 2 ** 63)
    with pytest.raises(DevnetError, match="Insufficient Balance"):
        devnet.create_account("big-two", _key("big two"), 10 ** 15)
    assert devnet.call("database", "lookup_account_names", ["big-one", "big-two"]) == [None,
                                                                                      None]
    assert _head(devnet) == head
    made = devnet.create_account("small-one", _key("small one"), 5)
    assert _head(devnet) == head + 1
    [balance] = devnet.call("database", "get_account_balances", made["id"], ["1.3.0"])
    assert int(balance["amount"]) == 5


def test_snapshots_stop_at_the_cap(fresh):
    """--devnet-max-snapshots 6: the seventh held snapshot is refused with
    a message naming the option; a revert drops some and snapshots work
    again."""
    devnet = fresh
    taken = []
    with pytest.raises(DevnetError, match="holds 6 snapshots already"):
        for _ in range(7):
            taken.append(devnet.snapshot())
    assert len(taken) == 5  # the fixture holds one
    devnet.revert(taken[2])
    assert devnet.snapshot() == taken[-1] + 1


def test_the_faucet_answers_other_methods_in_json(devnet):
    port = _port(devnet)
    for method in ("GET", "PUT", "DELETE", "PATCH"):
        answer = raw_request(port, method, "/api/v1/accounts")
        assert answer.status == 405, answer
        assert "not allowed" in answer.json()["error"]["base"][0]
        assert answer.headers["allow"] == "POST, OPTIONS"


def test_the_faucet_counts_against_the_call_limits(tmp_path):
    """With --max-calls-per-second-per-ip, faucet registrations come out
    of the same bucket as the address' RPC calls: past the burst the
    faucet answers 429 with the limit's message, registers nothing, and
    the address' next RPC call is refused too."""
    devnet = DevnetProcess("--devnet-accounts", "1", "--max-calls-per-second-per-ip", "0.01",
                           "--max-call-burst-per-ip", "6").start()
    try:
        port = _port(devnet)
        statuses = []
        for i in range(8):
            key = _key(f"faucet {i}")
            body = json.dumps({"account": {"name": f"tap-{i}", "owner_key": key,
                                           "active_key": key, "memo_key": key}}).encode()
            answer = raw_request(port, "POST", "/api/v1/accounts", headers=JSON, body=body)
            statuses.append(answer.status)
            if answer.status == 429:
                assert "calls" in answer.json()["error"]["message"]
                break
        assert statuses[0] == 201 and statuses[-1] == 429, statuses
        answer = raw_request(port, body=json_rpc("lookup_account_names",
                                                 [f"tap-{len(statuses) - 1}"]), headers=JSON)
        assert "error" in answer.json() and "calls" in answer.json()["error"]["message"]
    finally:
        devnet.stop()


def test_debug_granted_by_api_access_writes_only_in_the_output_dir(tmp_path):
    """An api-access file granting debug_api to one user: anonymous users
    still get Access denied; the user's debug_stream_json_objects refuses
    paths and writes a plain name in --api-output-dir."""
    salt = b"saltsalt"
    access = {"permission_map": [
        ["dev", {"password_hash_b64": hash_password("devpw", salt),
                 "password_salt_b64": base64.b64encode(salt).decode(),
                 "allowed_apis": ["database_api", "devnet_api", "debug_api"]}],
        ["*", {"password_hash_b64": "*", "password_salt_b64": "*",
               "allowed_apis": ["database_api", "network_broadcast_api", "devnet_api"]}]]}
    (tmp_path / "access.json").write_text(json.dumps(access))
    out = tmp_path / "out"
    out.mkdir()
    devnet = DevnetProcess("--devnet-accounts", "1", "--api-access",
                           str(tmp_path / "access.json"), "--api-output-dir", str(out)).start()
    try:
        port = _port(devnet)
        auth = dict(JSON, Authorization="Basic " + base64.b64encode(b"dev:devpw").decode())

        def debug(function, *params, headers=auth):
            return raw_request(port, body=json_rpc(function, *params, api="debug"),
                               headers=headers).json()

        assert "Access denied" in debug("debug_stream_json_objects", "x",
                                        headers=JSON)["error"]["message"]
        for name in ("../x", "/tmp/x", "a\x00b"):
            reply = debug("debug_stream_json_objects", name)
            assert "filename must be a plain file name" in reply["error"]["message"]
        assert os.listdir(out) == []
        assert debug("debug_stream_json_objects", "objects.jsonl") == {
            "id": 1, "jsonrpc": "2.0", "result": None}
        devnet.produce_blocks(1)
        debug("debug_stream_json_objects_flush")
        lines = (out / "objects.jsonl").read_text().splitlines()
        assert any(json.loads(line).get("id") == "2.1.0" for line in lines)
    finally:
        devnet.stop()


def test_load_state_of_dev_zero_is_one_startup_line():
    """--load-state /dev/zero (endless, no line ends) is refused before a
    byte is read: the start fails with one line naming the file and why,
    no traceback."""
    with pytest.raises(DevnetError) as info:
        DevnetProcess("--load-state", "/dev/zero").start(timeout=30)
    log = str(info.value)
    assert "Node startup failed: --load-state /dev/zero: not a regular file" in log
    assert "Traceback" not in log
