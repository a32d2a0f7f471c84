"""Fork mode against bitshares-core 7.0.2 as the live chain
(``../shared/reference/witness_node`` producing the bundled genesis'
chain): ``--fork-url`` syncs its blocks up to ``--fork-block``, then the
devnet produces on top; an impersonated account of the live chain
transfers without its key, a revert puts the fork back, and the live
chain sees none of it."""

import calendar
import time

import pytest

from nodeapi.devnet.pytest_plugin import DevnetError, DevnetProcess

from kit.daemon import ROOT
from kit.reference import requires_reference, start_reference
from kit.signing import tapos

pytestmark = [pytest.mark.reference, pytest.mark.slow, requires_reference]
CORE = "1.3.0"


@pytest.fixture
def live(tmp_path):
    node = start_reference(tmp_path, "live")
    yield node
    node.stop()


def _balance(node_call, account_id):
    [bal] = node_call("get_account_balances", account_id, [CORE])
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


def test_a_fork_of_the_reference_chain(live, monkeypatch):
    """Blocks 1..N from the live chain, identical; the ready accounts made
    on top (the faucet init0 claims the genesis balances of the
    development key, still unclaimed on the live chain); dev1 impersonated
    transfers without a signature; a revert puts the fork back; the live
    chain has none of it (no dev1 there)."""
    monkeypatch.setenv("PYTHONPATH", ROOT)
    target = live.wait_head(5)
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
        with pytest.raises(DevnetError, match="missing required active authority: Missing Active Authority"):
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


def test_a_fork_past_the_head_stops_with_one_line(live, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", ROOT)
    head = live.wait_head(2)
    with pytest.raises(DevnetError) as info:
        DevnetProcess("--fork-url", live.ws_url, "--fork-block", str(head + 10_000)).start()
    assert f"--fork-block {head + 10_000} is past the head" in str(info.value)
    with pytest.raises(DevnetError) as info:
        DevnetProcess("--fork-url", "ws://127.0.0.1:1").start()
    assert "--fork-url ws://127.0.0.1:1/: cannot connect" in str(info.value) \
        or "--fork-url ws://127.0.0.1:1: cannot connect" in str(info.value)
