"""A long mixed network over graphene's peer protocol: bitshares-core
7.0.2's witness_node producing for init witnesses 1.6.1-1.6.5, a nodeapi
node producing for 1.6.6-1.6.11, joined over P2P (nodeapi dials the
reference and listens; the reference dials back), on a copy of the bundled
genesis with a short maintenance interval so the run crosses many
maintenances.  A transfer is broadcast every second, alternately to each
node; nodeapi is restarted a third of the way, the reference two thirds
(each catches up from the other over P2P, and whatever the other produced
meanwhile on its own decides which fork both end on).

Prints: blocks, blocks produced by each side, operations and transfers in
blocks, maintenances crossed, fork switches on each side (nodeapi's
"Switching to the fork", the reference's "Switching to fork"), blocks whose header differs between the two nodes
(must be 0), blocks refused on either side (nodeapi's log: a peer dropped
for a refused block, a fork given up for a refused block; the reference's
log: its block push errors), and the slowest block arrival seen by
polling.

Run: PYTHONPATH=. python bench/p2p_mixed.py [SECONDS] [MAINTENANCE_INTERVAL]
(defaults 300 and 20; needs ../shared/reference/witness_node or
NODEAPI_REFERENCE_NODE)
"""

import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
import common  # noqa: F401  puts the repository and tests/ on sys.path

from nodeapi.protocol.times import parse_time  # noqa: E402
from nodeapi.protocol.transaction import sign_transaction  # noqa: E402
from kit.chain import claim_wire, transfer_wire  # noqa: E402
from kit.daemon import Daemon, free_port  # noqa: E402
from kit.keys import DEV_WIF  # noqa: E402
from kit.reference import API_ACCESS, INIT_WITNESSES, start_reference  # noqa: E402
from kit.signing import tapos  # noqa: E402

GENESIS = os.path.join(HERE, "..", "nodeapi", "data", "genesis.json")


def signed(node, op) -> dict:
    """``op`` (wire JSON) in a transaction over ``node``'s head, signed
    with the development key for this run's chain id (its own genesis)."""
    props = node.call("get_dynamic_global_properties")
    ref = tapos(props["head_block_number"], props["head_block_id"], parse_time(props["time"]))
    trx = dict(ref, operations=[op], extensions=[], signatures=[])
    return sign_transaction(trx, node.call("get_chain_id"), [DEV_WIF], "TEST")


def main(seconds: int, maintenance: int) -> None:
    tmp = tempfile.mkdtemp(prefix="bench-p2p-mixed-")
    with open(GENESIS) as f:
        genesis = json.load(f)
    genesis["initial_parameters"]["maintenance_interval"] = maintenance
    genesis_path = os.path.join(tmp, "genesis.json")
    with open(genesis_path, "w") as f:
        json.dump(genesis, f)
    access = os.path.join(tmp, "api-access.json")
    with open(access, "w") as f:
        json.dump(API_ACCESS, f)
    ref = start_reference(tmp, "ref", witnesses=INIT_WITNESSES[:5],
                          extra=["--genesis-json", genesis_path])
    port = free_port()
    args = ["--genesis-json", genesis_path, "--p2p-endpoint", f"127.0.0.1:{port}",
            "--seed-node", ref.p2p, "--api-access", access]
    for wid in INIT_WITNESSES[5:]:
        args += ["--witness-id", json.dumps(wid)]
    node = None
    try:
        ref.wait_head(3)
        node = Daemon(os.path.join(tmp, "nodeapi"), *args).start()
        first = ref.head()
        node.wait_head(first)  # the claim is signed over a synced head
        node.call("broadcast_transaction", signed(node, claim_wire()),
                  api="network_broadcast")
        sent, attempts, worst = 0, 0, 0.0
        seen = {}
        start = time.time()
        end = start + seconds
        restarts = [(start + seconds / 3, node), (start + 2 * seconds / 3, ref)]
        while time.time() < end:
            if restarts and time.time() > restarts[0][0]:
                _, who = restarts.pop(0)
                who.stop()
                time.sleep(3)
                if who is ref:
                    # witness_node started again on the P2P port it just left
                    # can hang before listening (its RPC never comes up): a
                    # new port, which nodeapi is told of (the reference also
                    # dials nodeapi's listening port, kept in its peer database)
                    ref.p2p_port = free_port()
                    ref.start()
                    node.call("add_node", ref.p2p, api="network_node")
                else:
                    who.start()
            attempts += 1
            target = node if attempts % 2 else ref
            try:
                target.call("broadcast_transaction",
                            signed(target, transfer_wire(1000 + sent)),
                            api="network_broadcast")
                sent += 1
            except Exception as exc:  # a refusal (e.g. not yet funded) is reported
                print("broadcast refused:", str(exc)[:120])
            t0 = time.time()
            while time.time() - t0 < 1:
                now = time.time()
                r, n = ref.head(), node.head()[0]
                seen.setdefault(("ref", r), now)
                seen.setdefault(("node", n), now)
                time.sleep(0.05)
        time.sleep(3)
        last = min(ref.head(), node.head()[0])
        differ, by_ref, by_node, transfers, operations = 0, 0, 0, 0, 0
        for num in range(first, last + 1):
            a, b = ref.call("get_block", num), node.call("get_block", num)
            if {k: a[k] for k in ("previous", "witness", "timestamp")} != \
                    {k: b[k] for k in ("previous", "witness", "timestamp")}:
                differ += 1
            if a["witness"] in INIT_WITNESSES[:5]:
                by_ref += 1
            else:
                by_node += 1
            transfers += sum(1 for t in a["transactions"] for op in t["operations"]
                             if op[0] == 0)
            operations += sum(len(t["operations"]) for t in a["transactions"])
        for num in range(first + 1, last):
            if ("ref", num) in seen and ("node", num) in seen:
                worst = max(worst, abs(seen[("ref", num)] - seen[("node", num)]))
        dgp = node.call("get_dynamic_global_properties")
        span = (parse_time(node.call("get_block_header", last)["timestamp"])
                - parse_time(node.call("get_block_header", first)["timestamp"]))
        with open(node.log_path) as f:
            node_log = f.read()
        # a block refused: the peer dropped for it, or a fork given up for
        # one of its blocks (transactions refused over P2P are not counted:
        # a TaPoS of the other side's fork is refused after a switch)
        refused_node = sum(1 for line in node_log.splitlines()
                           if ("Dropping P2P peer" in line and " refused: " in line)
                           or "of the fork refused" in line)
        ref_log = ref.log()
        refused_ref = sum(ref_log.count(s) for s in (
            "Error when pushing block", "block_validate_exception", "Invalid block"))
        switches_node = node_log.count("Switching to the fork")
        switches_ref = ref_log.count("Switching to fork")
        print(f"blocks {first}..{last} ({last - first + 1}): {by_ref} by the reference, "
              f"{by_node} by nodeapi; operations in blocks {operations}, transfers "
              f"{transfers} of {sent} broadcast; "
              f"maintenance intervals crossed {span // maintenance} "
              f"(next {dgp['next_maintenance_time']}); headers differing {differ}; "
              f"refused blocks: nodeapi {refused_node}, reference {refused_ref}; "
              f"fork switches: nodeapi {switches_node}, reference {switches_ref}; "
              f"slowest arrival difference seen by 50 ms polling {worst:.2f} s; logs {tmp}")
    finally:
        if node is not None:
            node.stop()
        ref.stop()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300,
         int(sys.argv[2]) if len(sys.argv) > 2 else 20)
