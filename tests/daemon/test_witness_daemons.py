"""A witness created, voted in and run on a second daemon (issue: "the
witness plugin produces for any witness given by --witness-id /
--private-key"): two ``twistd -n nodeapi`` daemons on a devnet genesis with
1 s blocks and a 6 s maintenance interval follow each other
(``--seed-node``); node A produces for the genesis witnesses, node B only
for the new witness 1.6.12 (key OTHER).  Once the new witness is voted in,
blocks signed by it appear on both nodes once the witness schedule (2.12.0,
reshuffled at round boundaries: bitshares-core
libraries/chain/witness_schedule.cpp ``update_witness_schedule``) holds it;
voted out, it produces no more once the schedule drops it."""

import json
import time

import pytest

from nodeapi.protocol.transaction import sign_transaction
from nodeapi.protocol.times import parse_time

from kit.chain import asset_options, claim_wire, genesis_with
from kit.daemon import ACCESS, Daemon, free_port
from kit.keys import DEV_PUB, DEV_WIF, OTHER_PUB, OTHER_WIF
from kit.signing import tapos

pytestmark = pytest.mark.slow

INIT0 = "1.2.6"
FEE0 = {"amount": 0, "asset_id": "1.3.0"}


def push(node, chain_id, *ops, wif=DEV_WIF):
    """Sign ``ops`` (wire JSON, fees from the node's get_required_fees)
    over the node's head and broadcast them synchronously; the results."""
    ops = [[t, dict(d, fee=FEE0)] for t, d in ops]
    fees = node.call("get_required_fees", ops, "1.3.0", api="database")
    ops = [[t, dict(d, fee=f[0] if isinstance(f, list) else f)]
           for (t, d), f in zip(ops, fees)]
    props = node.call("get_dynamic_global_properties")
    head_time = parse_time(props["time"])
    trx = dict(tapos(props["head_block_number"], props["head_block_id"], head_time),
               operations=ops, extensions=[], signatures=[])
    trx = sign_transaction(trx, chain_id, [wif], "TEST")
    result = node.call("broadcast_transaction_synchronous", trx, api="network_broadcast")
    return [r for r in result["trx"]["operation_results"]]


def signers(node, first, last):
    return [node.call("get_block", n)["witness"] for n in range(first, last + 1)]


def wait(predicate, timeout, what, *nodes):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError(f"{what} not reached:\n" + "\n".join(n.log()[-3000:] for n in nodes))


def shuffled(node):
    """The witnesses of the current round (2.12.0 ``current_shuffled_witnesses``)."""
    return node.call("get_objects", ["2.12.0"])[0]["current_shuffled_witnesses"]


def test_a_voted_in_witness_on_a_second_node_produces(genesis, tmp_path):
    devnet = genesis_with(genesis, block_interval=1, maintenance_interval=6,
                          maintenance_skip_slots=0)
    path = tmp_path / "genesis.json"
    path.write_text(json.dumps(devnet.data, sort_keys=True))
    port_a, port_b = free_port(), free_port()
    common = ("--genesis-json", str(path), "--api-access", ACCESS)
    a = Daemon(tmp_path / "a", *common, "--seed-node", f"bytemaster:supersecret@127.0.0.1:{port_b}",
               port=port_a)
    b = Daemon(tmp_path / "b", *common, "--witness-id", "1.6.12", "--private-key",
               json.dumps([OTHER_PUB, OTHER_WIF]),
               "--seed-node", f"bytemaster:supersecret@127.0.0.1:{port_a}", port=port_b)
    a.start()
    try:
        chain_id = a.call("get_chain_id")
        a.wait_head(1)
        push(a, chain_id, claim_wire())
        key = {"weight_threshold": 1, "account_auths": [], "key_auths": [[DEV_PUB, 1]],
               "address_auths": []}
        options = {"memo_key": DEV_PUB, "voting_account": "1.2.5", "num_witness": 0,
                   "num_committee": 0, "votes": [], "extensions": []}
        [[_t, acc]] = push(a, chain_id, [5, {
            "registrar": INIT0, "referrer": INIT0, "referrer_percent": 0, "name": "new-witness",
            "owner": key, "active": key, "options": options, "extensions": {}}])
        push(a, chain_id, [0, {"from": INIT0, "to": acc,
                               "amount": {"amount": 10 ** 11, "asset_id": "1.3.0"},
                               "extensions": []}])
        push(a, chain_id, [8, {"account_to_upgrade": acc, "upgrade_to_lifetime_member": True,
                               "extensions": []}])
        [[_t, wid]] = push(a, chain_id, [20, {"witness_account": acc, "url": "",
                                              "block_signing_key": OTHER_PUB}])
        assert wid == "1.6.12"
        vote_id = a.call("get_objects", [wid])[0]["vote_id"]
        # voting stake under the current rules: core in an open order
        [[_t, gold]] = push(a, chain_id, [10, {
            "issuer": INIT0, "symbol": "GOLD", "precision": 3, "common_options": asset_options(),
            "is_prediction_market": False, "extensions": []}])
        push(a, chain_id, [1, {"seller": INIT0,
                               "amount_to_sell": {"amount": 10 ** 12, "asset_id": "1.3.0"},
                               "min_to_receive": {"amount": 1000, "asset_id": gold},
                               "expiration": "2030-01-01T00:00:00", "fill_or_kill": False,
                               "extensions": {}}])
        init0 = a.call("get_objects", [INIT0])[0]
        voting = dict(init0["options"], votes=[vote_id], num_witness=1)
        push(a, chain_id, [6, {"account": INIT0, "new_options": voting, "extensions": {}}])
        b.start()
        # after the next maintenance the new witness is active and node B signs its slots
        wait(lambda: wid in a.call("get_global_properties")["active_witnesses"], 150,
             "the new witness elected", a, b)
        wait(lambda: wid in shuffled(a), 150, "the new witness scheduled", a, b)
        start = a.head()[0]
        wait(lambda: wid in signers(a, start, a.head()[0]), 240,
             "a block signed by the new witness on node A", a, b)
        assert b.head()[0] >= start
        # voted out: after the next maintenance it signs no more
        push(a, chain_id, [6, {"account": INIT0, "new_options": dict(voting, votes=[],
                                                                       num_witness=0),
                               "extensions": {}}])
        wait(lambda: wid not in a.call("get_global_properties")["active_witnesses"], 150,
             "the new witness voted out", a, b)
        # the round under way keeps its shuffled schedule (graphene reshuffles
        # at round boundaries): count from the round that no longer holds it
        wait(lambda: wid not in shuffled(a), 150, "the new witness unscheduled", a, b)
        out = a.head()[0]
        wait(lambda: a.head()[0] >= out + 12, 120, "a full round", a, b)
        assert wid not in signers(a, out + 1, a.head()[0])
    finally:
        b.stop()
        a.stop()
