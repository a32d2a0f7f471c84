"""bitsharesjs-ws + bitsharesjs (node, ``tests/js/client.js`` and
``tests/js/e2e.js``) against the daemon after the python-bitshares story:
connect, log in (the login API set over bitsharesjs-ws' connection), read
accounts, balances and history (the ids the python client produced), and
receive a block-applied notice through bitsharesjs' ChainStore
subscription."""

import json
import os
import shutil
import subprocess

import pytest

from e2e.flows import ALICE, BOB

from kit.js import JS_DIR, npm_install
from kit.keys import CHAIN_ID


pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def node_js():
    npm_install()
    path = shutil.which("node")
    assert path, "node is needed for the bitsharesjs tests (.ci/run installs it)"
    return path


def run_client(node_js, url, account, *flags) -> dict:
    """Run client.js; its last stdout line is one JSON object."""
    proc = subprocess.run([node_js, os.path.join(JS_DIR, "client.js"), url, account, *flags],
                          cwd=JS_DIR, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


def test_reads_history_the_python_client_made(scenario, node, node_js):
    want = {"init0": (["1.11.7", "1.11.6", "1.11.4", "1.11.3", "1.11.2", "1.11.1", "1.11.0"],
                      {"1.3.0": 1000000000000000 - 150000000 - sum(
                          scenario.fee(m) for m in (1, 2, 3, 4, 6, 7))}),
            ALICE: (["1.11.7", "1.11.5", "1.11.3", "1.11.1"],
                    {"1.3.0": 90000000 - scenario.fee(5), "1.3.1": 250000}),
            BOB: (["1.11.5", "1.11.4", "1.11.2"], {"1.3.0": 60000000})}
    for i, (name, (history, balances)) in enumerate(want.items()):
        # anonymous, and with credentials in the address (sent as HTTP Basic on the
        # handshake; bitsharesjs-ws' own login("", "") then selects the "*" entry)
        creds = "bytemaster:supersecret@" if i % 2 else ""
        out = run_client(node_js, f"ws://{creds}127.0.0.1:{node.port}", name)
        assert out["chain_id"] == CHAIN_ID
        assert out["head_block_number"] >= scenario.results[-1]["block_num"]
        assert out["account"]["name"] == name
        assert out["account"]["id"] == scenario.ids[name]
        assert [h["id"] for h in out["history"]] == history
        for h in out["history"]:
            r = scenario.results[int(h["id"].split(".")[2])]
            assert h["op"] == r["operations"][0] and h["block_num"] == r["block_num"]
        got = {b["asset_type"]: int(b["balance"]) for b in out["balances"]}
        assert got == balances
        assert all(b["owner"] == scenario.ids[name] for b in out["balances"])


def test_subscribes_and_receives_a_block_notice(scenario, node, node_js):
    out = run_client(node_js, f"ws://user2:superpassword2@127.0.0.1:{node.port}", ALICE,
                     "--subscribe")
    # bitsharesjs-ws hands the callback params[1], i.e. [block id] (wire-contract section 5)
    [block_id] = out["notice"]
    num = int(block_id[:8], 16)
    assert len(block_id) == 40 and num > out["head_block_number"] - 1
    # the id is the one of block `num`: the next block links to it
    node.wait_head(num + 1)
    assert node.call("get_block_header", num + 1)["previous"] == block_id


def test_login_flow(scenario, node, node_js):
    """tests/js/e2e.js: the login API set through bitsharesjs-ws' own
    connection (docs/rpc-access.rst login rows, wire-contract section 2)."""
    proc = subprocess.run([node_js, os.path.join(JS_DIR, "e2e.js"),
                           f"ws://bytemaster:supersecret@127.0.0.1:{node.port}"],
                          cwd=JS_DIR, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    out = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    denied = {"error": "Execution error: Assert Exception: is_allowed: Access denied"}
    # bitsharesjs-ws' login("", "") replaced the address credentials' sets by "*"'s
    assert out["anonymous_network_node"] == denied
    assert out["bytemaster_login"] is True
    node_id = out["bytemaster_network_node"]["result"]
    assert isinstance(node_id, int) and node_id > 1
    assert out["bytemaster_info"]["result"]["connection_count"] == 0
    assert out["user2_login"] is True
    assert out["user2_network_node"] == denied
    assert out["user2_old_id_info"]["result"]["connection_count"] == 0
    assert [h["id"] for h in out["user2_history"]["result"]] == ["1.11.5", "1.11.4", "1.11.2"]
    assert out["wrong_login"] is False
