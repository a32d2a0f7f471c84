"""Real clients nobody on the team wrote, against the real RPC site of a
chain whose witness produces at the wall clock: python-bitshares
(synchronous, run in a thread) over ws:// and http://, and bitsharesjs-ws /
bitsharesjs (node) from tests/js."""

import json
import os
import shutil

import pytest
import pytest_twisted
from twisted.internet import defer, reactor, threads, utils

from nodeapi.rpc.access import ApiAccess
from nodeapi.plugins.witness.service import WitnessService

from kit.access import VECTORS
from kit.js import JS_DIR, npm_install
from kit.keys import CHAIN_ID, DEV_WIF, WITNESS_KEYS
from kit.site import RunningSite, make_node
from kit.wait import wait_for


@pytest.fixture
def live(chain):
    witness = WitnessService(chain, WITNESS_KEYS, enable_stale_production=True,
                             clock=reactor)
    server = RunningSite(make_node(chain, witness=witness), ApiAccess.from_json(VECTORS))
    witness.startService()
    pytest_twisted.blockon(wait_for(lambda: chain.head_block_num >= 1, timeout=15.0))
    yield server
    pytest_twisted.blockon(defer.maybeDeferred(witness.stopService))
    server.stop_blocking()


def _python_bitshares_flow(url, user=None, password=None):
    """Everything python-bitshares does here, synchronously (in a thread)."""
    from bitshares import BitShares
    from bitshares.account import Account
    from kit.chain import claim_op

    bts = BitShares(node=url, keys=[DEV_WIF], num_retries=0, rpcuser=user or "",
                    rpcpassword=password or "")
    out = {"chain_id": bts.rpc.get_chain_properties()["chain_id"],
           "prefix": bts.prefix}
    init0 = Account("init0", blockchain_instance=bts)
    out["init0_id"] = init0["id"]
    claim = claim_op()  # the genesis balance 1.15.0 into init0
    bts.finalizeOp(claim, init0["name"], "active")
    out["transfer"] = bts.transfer("init1", 12.5, "TEST", memo="hello", account="init0")
    return bts, out


def _balance(bts, name):
    from bitshares.account import Account

    account = Account(name, blockchain_instance=bts, full=True, lazy=False)
    account.refresh()
    return {b["symbol"]: b.amount for b in account.balances}


@pytest_twisted.inlineCallbacks
@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_python_bitshares_claim_transfer_history(live, chain, scheme):
    url = f"{scheme}://127.0.0.1:{live.port}"
    bts, out = yield threads.deferToThread(_python_bitshares_flow, url)
    assert out["chain_id"] == CHAIN_ID and out["prefix"] == "TEST"
    assert out["init0_id"] == "1.2.6"
    trx_ops = out["transfer"]["operations"]
    assert trx_ops[0][0] == 0 and trx_ops[0][1]["amount"]["amount"] == 1250000
    # both transactions land in blocks produced by the witness
    yield wait_for(lambda: live.node.account_history().operation_count == 2, timeout=15.0)
    included = [t for n in range(1, chain.head_block_num + 1)
                for t in chain.get_block(n)["transactions"]]
    assert [t["operations"][0][0] for t in included] == [37, 0]
    stats = chain.state.get("2.7.6")  # fees wait in pending_* until maintenance (graphene)
    fee = stats["pending_fees"] + stats["pending_vested_fees"] + stats["lifetime_fees_paid"]
    assert chain.state.balance("1.2.6", "1.3.0") == 1000000000000000 - 1250000 - fee
    balances = yield threads.deferToThread(_balance, bts, "init1")
    assert balances == {"TEST": 12.5}

    def history():
        from bitshares.account import Account

        return list(Account("init0", blockchain_instance=bts).history(limit=10))

    entries = yield threads.deferToThread(history)
    assert [e["op"][0] for e in entries] == [0, 37]  # newest first: transfer, claim
    assert entries[0]["op"][1]["memo"]["from"].startswith("TEST")
    assert entries[0]["id"] == "1.11.1" and entries[1]["id"] == "1.11.0"


@pytest_twisted.inlineCallbacks
def test_python_bitshares_login_reaches_network_node(live):
    def flow():
        from bitshares import BitShares

        bts = BitShares(node=f"ws://127.0.0.1:{live.port}", rpcuser="bytemaster",
                        rpcpassword="supersecret", num_retries=0)
        api_id = bts.rpc.network_node(api_id=1)
        return bts.rpc.get_info(api_id=api_id)

    info = yield threads.deferToThread(flow)
    assert info["connection_count"] == 0


@pytest_twisted.inlineCallbacks
def test_bitsharesjs_connects_reads_and_subscribes(live, chain, js_client):
    out, err, code = yield utils.getProcessOutputAndValue(
        js_client, [os.path.join(JS_DIR, "client.js"), f"ws://127.0.0.1:{live.port}", "init0",
                    "--subscribe"], env=dict(os.environ), path=JS_DIR)
    assert code == 0, err.decode()
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["chain_id"] == CHAIN_ID
    assert result["account"]["id"] == "1.2.6" and result["account"]["name"] == "init0"
    assert result["history"] == []
    # bitsharesjs-ws hands the callback params[1], i.e. [block id] (wire-contract section 5)
    [block_id] = result["notice"]
    assert len(block_id) == 40 and int(block_id[:8], 16) >= 1


@pytest_twisted.inlineCallbacks
def test_bitsharesjs_credentials_in_address(live, js_client):
    out, err, code = yield utils.getProcessOutputAndValue(
        js_client, [os.path.join(JS_DIR, "client.js"),
                    f"ws://bytemaster:supersecret@127.0.0.1:{live.port}", "init1"],
        env=dict(os.environ), path=JS_DIR)
    assert code == 0, err.decode()
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["account"]["id"] == "1.2.7"


def test_npm_install_waits_for_another_workers_install():
    """Parallel pytest workers share tests/js: while one holds the install
    lock (kit.js.npm_install) another waits, here until its timeout; once
    it is free the clients are found installed."""
    import fcntl

    npm_install()
    with open(os.path.join(JS_DIR, ".npm-install.lock"), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(TimeoutError, match="another npm ci"):
            npm_install(timeout=1)
    npm_install(timeout=1)
    assert all(os.path.isdir(os.path.join(JS_DIR, "node_modules", name))
               for name in ("bitsharesjs", "bitsharesjs-ws", "btsdex"))
