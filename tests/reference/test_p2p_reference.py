"""graphene's peer protocol against bitshares-core 7.0.2's witness_node:
nodeapi syncs from a reference producer over P2P and stays in step, its
transactions reach the reference's blocks, and a reference node syncs from
a nodeapi producer (bitshares-core re-applies every nodeapi block with its
own rules: the strongest check of nodeapi's blocks there is)."""

import json
import time

import pytest

from nodeapi.chain.genesis import load_genesis
from nodeapi.peers import core_messages as cm
from nodeapi.protocol.times import parse_time
from nodeapi.protocol.transaction import sign_transaction

from kit.chain import claim_op, open_chain, produce, transfer_op, transfer_wire
from kit.daemon import Daemon, free_port
from kit.keys import CHAIN_ID, DEV_WIF
from kit.p2p_raw import accepted_peer, firewall_probe
from kit.signing import sign, signed_over_head, tapos
from kit.reference import API_ACCESS, INIT_WITNESSES, requires_reference, start_reference
from kit.wait import wait_until

pytestmark = [pytest.mark.reference, pytest.mark.slow, requires_reference]


@pytest.fixture
def producer(tmp_path):
    node = start_reference(tmp_path, "producer")
    yield node
    node.stop()


#: a nodeapi node that produces nothing (no witness plugin)
FOLLOWER = ("--plugins", "account_history")


def _access(tmp_path) -> str:
    """An api-access file opening every set (network_node included) to
    anonymous clients on loopback."""
    path = tmp_path / "api-access.json"
    path.write_text(json.dumps(API_ACCESS))
    return str(path)


def _p2p_peers(node):
    return [p for p in node.call("get_connected_peers", api="network_node")
            if "info" in p and "user_agent" in p["info"]]


def test_nodeapi_syncs_from_a_reference_producer_over_p2p(producer, tmp_path):
    head = producer.wait_head(12)  # real-time blocks (debug_generate_blocks skips checks)
    node = Daemon(tmp_path / "nodeapi", *FOLLOWER, "--seed-node", producer.p2p,
                  "--api-access", _access(tmp_path)).start()
    try:
        wait_until(lambda: node.head()[0] >= head, timeout=60, what=f"nodeapi at block {head}")
        assert node.call("get_chain_id") == CHAIN_ID
        for num in (1, head // 2, head):
            assert (node.call("get_block_header", num)
                    == producer.call("get_block_header", num))
        # then in step: the producer's next blocks arrive by relay
        target = producer.wait_head(head + 3)
        wait_until(lambda: node.head()[0] >= target, timeout=10,
                   what=f"nodeapi at relayed block {target}")
        assert node.head()[1] == producer.call("get_dynamic_global_properties")[
            "head_block_id"] or node.head()[0] > target
        peers = _p2p_peers(node)
        assert [p["info"]["user_agent"] for p in peers] == ["BitShares Reference Implementation"]
        info = node.call("get_info", api="network_node")
        assert info["connection_count"] == 1 and len(info["node_public_key"]) == 66
    finally:
        node.stop()


def _history(node, account):
    return node.call("get_account_history", account, "1.11.0", 10, "1.11.0", api="history")


def test_transactions_travel_both_ways_over_p2p(producer, tmp_path):
    """A transaction broadcast to nodeapi (a follower without a witness,
    with no RPC upstream: it pushes and relays) reaches the reference
    producer over P2P and comes back in its block; one broadcast to the
    reference reaches nodeapi's chain the same way."""
    producer.wait_head(3)
    node = Daemon(tmp_path / "nodeapi", *FOLLOWER, "--seed-node", producer.p2p,
                  "--api-access", _access(tmp_path)).start()
    try:
        wait_until(lambda: _p2p_peers(node) and node.head()[0] >= producer.head() - 1,
                   timeout=30, what="nodeapi in step with the producer")
        node.call("broadcast_transaction", signed_over_head(node, [claim_op()]),
                  api="network_broadcast")
        wait_until(lambda: _history(producer, "1.2.6"), timeout=15,
                   what="nodeapi's claim in a reference block")
        wait_until(lambda: _history(node, "1.2.6") == _history(producer, "1.2.6"),
                   timeout=10, what="the reference's block with the claim at nodeapi")
        producer.call("broadcast_transaction", signed_over_head(producer, [transfer_op(5000000)]),
                      api="network_broadcast")
        # the reference's pending transaction reaches nodeapi by inventory and fetch
        wait_until(lambda: node.call("get_info", api="network_node")[
            "p2p_transactions_received"] == 1, timeout=10, what="the reference's transaction")
        wait_until(lambda: len(_history(node, "1.2.7")) == 1, timeout=15,
                   what="the reference's transfer at nodeapi")
        assert _history(node, "1.2.7") == _history(producer, "1.2.7")
        assert _history(node, "1.2.6") == _history(producer, "1.2.6")
    finally:
        node.stop()


def test_a_reference_node_syncs_from_a_nodeapi_producer(tmp_path):
    port = free_port()
    node = Daemon(tmp_path / "nodeapi", "--p2p-endpoint", f"127.0.0.1:{port}",
                  "--api-access", _access(tmp_path)).start()
    follower = None
    try:
        head = node.wait_head(10)[0]
        follower = start_reference(tmp_path, "follower", produce=False,
                                   seed_node=f"127.0.0.1:{port}")
        follower.wait_head(head, timeout=60)
        for num in (1, head // 2, head):
            assert (follower.call("get_block_header", num)
                    == node.call("get_block_header", num))
        # in step: nodeapi's next blocks reach the reference by relay
        target = node.wait_head(head + 3)[0]
        follower.wait_head(target, timeout=10)
        assert (follower.call("get_block_header", target)
                == node.call("get_block_header", target))
        # blocks with transactions: bitshares-core applies them with its rules
        node.call("broadcast_transaction", signed_over_head(node, [claim_op()]),
                  api="network_broadcast")
        wait_until(lambda: _history(node, "1.2.6"), timeout=10, what="the claim produced")
        for amount in (1000000, 2500000, 7):
            node.call("broadcast_transaction",
                      signed_over_head(node, [transfer_op(amount)]), api="network_broadcast")
        wait_until(lambda: len(_history(node, "1.2.7")) == 3, timeout=10,
                   what="the transfers produced")
        last = node.head()[0]
        follower.wait_head(last, timeout=10)
        for account in ("1.2.6", "1.2.7"):
            assert _history(follower, account) == _history(node, account)
            assert (follower.call("get_account_balances", account, [])
                    == node.call("get_account_balances", account, []))
        assert (follower.call("get_block_header", last) == node.call("get_block_header", last))
        peers = _p2p_peers(node)
        assert [p["info"]["direction"] for p in peers] == ["inbound"]
        ref_peers = follower.call("get_connected_peers", api="network_node")
        assert [p["host"] for p in ref_peers] == [f"127.0.0.1:{port}"]
    finally:
        if follower is not None:
            follower.stop()
        node.stop()


def test_mixed_network_of_a_reference_and_a_nodeapi_producer(tmp_path):
    """The init witnesses split between a reference producer (1.6.1-1.6.5)
    and a nodeapi producer (1.6.6-1.6.11) joined over P2P: each applies
    the other's blocks, both chains are one, and a restart of nodeapi
    catches up."""
    ref = start_reference(tmp_path, "ref", witnesses=INIT_WITNESSES[:5])
    port = free_port()
    args = ["--p2p-endpoint", f"127.0.0.1:{port}", "--seed-node", ref.p2p,
            "--api-access", _access(tmp_path)]
    for wid in INIT_WITNESSES[5:]:
        args += ["--witness-id", json.dumps(wid)]
    node = None
    try:
        ref.wait_head(3)
        node = Daemon(tmp_path / "nodeapi", *args).start()
        start = ref.head()
        wait_until(lambda: node.head()[0] >= start + 15, timeout=60,
                   what="15 blocks of the mixed network")
        head = ref.wait_head(node.head()[0], timeout=10)
        witnesses = {ref.call("get_block_header", n)["witness"] for n in range(start + 1, head)}
        assert witnesses & set(INIT_WITNESSES[:5]) and witnesses & set(INIT_WITNESSES[5:])
        for num in range(start, head):
            assert ref.call("get_block_header", num) == node.call("get_block_header", num)
        node.stop()
        behind = ref.wait_head(ref.head() + 5)
        node.start()
        wait_until(lambda: node.head()[0] >= behind + 3, timeout=60,
                   what="the restarted nodeapi producer back in the network")
        num = node.head()[0]
        ref.wait_head(num, timeout=10)
        assert ref.call("get_block_header", num) == node.call("get_block_header", num)
    finally:
        if node is not None:
            node.stop()
        ref.stop()


def test_a_reference_node_syncs_a_long_nodeapi_chain(tmp_path):
    """2,500 blocks made in-process (from the genesis' slots on, so long past)
    and served by a nodeapi node: the reference asks for ids twice (at most
    2,000 per answer), fetches the blocks in batches and applies every one
    with its own rules (block 2 holds the genesis balance claim)."""
    data = tmp_path / "nodeapi"
    data.mkdir()
    chain = open_chain(load_genesis(), data / "blocks.log")
    produce(chain, 1)  # a maintenance, as bitshares-core's block 1 (db_genesis.cpp)
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain, 2499)
    head_id = chain.head_block_id
    chain.block_log.close()
    port = free_port()
    node = Daemon(data, *FOLLOWER, "--p2p-endpoint", f"127.0.0.1:{port}",
                  "--api-access", _access(tmp_path)).start(timeout=120)
    follower = None
    try:
        assert node.head() == (2500, head_id)
        follower = start_reference(tmp_path, "follower", produce=False,
                                   seed_node=f"127.0.0.1:{port}")
        follower.wait_head(2500, timeout=120)
        for num in (1, 200, 201, 2000, 2001, 2500):
            assert follower.call("get_block_header", num) == node.call("get_block_header", num)
        assert (follower.call("get_account_balances", "1.2.6", [])
                == node.call("get_account_balances", "1.2.6", []))
    finally:
        if follower is not None:
            follower.stop()
        node.stop()



def test_the_reference_ignores_check_firewall(producer):
    """bitshares-core 7.0.2 answers neither check_firewall nor its reply
    (node.cpp ``on_message``): after both, the next answer to a raw peer
    is the time reply - what nodeapi does (tests/peers/test_p2p.py)."""
    producer.wait_head(2)
    peer = accepted_peer(producer.p2p)
    try:
        assert firewall_probe(peer) == [cm.CURRENT_TIME_REPLY]
    finally:
        peer.close()


def _header(node, num):
    return node.call("get_block_header", num)


@pytest.mark.parametrize("ref_witnesses", [7, 4], ids=["nodeapi-switches", "reference-switches"])
def test_partitioned_reference_and_nodeapi_rejoin_on_the_longer_fork(tmp_path, ref_witnesses):
    """A mixed network (the init witnesses split: the reference
    ``ref_witnesses`` of them, nodeapi the others) in step, then
    partitioned: the reference restarts on another P2P port nodeapi does
    not know (nodeapi dials it, it never dials nodeapi: no inbound port),
    and each side produces its own blocks for 20 s (7 witnesses against 4:
    neither side makes blocks irreversible alone, 70% are needed).  Rejoined
    (``network_node.add_node``), the side with more witnesses has the
    longer branch: the other pops its own blocks and switches (nodeapi as
    db_block.cpp ``push_block``; bitshares-core itself from nodeapi's
    blocks), and the two go on as one chain.  A transfer broadcast to each
    side while apart (its TaPoS on a block both have) is in the one chain
    afterwards: the popped side's goes back to its pending transactions
    (graphene ``_popped_tx``) and into a later block, and both nodes agree
    on the balances and histories it changed."""
    ref = start_reference(tmp_path, "ref", witnesses=INIT_WITNESSES[:ref_witnesses])
    args = ["--seed-node", ref.p2p, "--api-access", _access(tmp_path)]
    for wid in INIT_WITNESSES[ref_witnesses:]:
        args += ["--witness-id", json.dumps(wid)]
    node = None
    try:
        ref.wait_head(2)
        node = Daemon(tmp_path / "nodeapi", *args).start()
        start = ref.head()
        wait_until(lambda: node.head()[0] >= start + 6, timeout=60,
                   what="6 blocks of the mixed network")
        node.call("broadcast_transaction", signed_over_head(node, [claim_op()]),
                  api="network_broadcast")
        wait_until(lambda: _history(node, "1.2.6") and _history(ref, "1.2.6"), timeout=30,
                   what="the claim on both sides")
        joint = ref.wait_head(node.head()[0], timeout=10)
        assert _header(ref, joint) == _header(node, joint)
        header = _header(ref, joint)
        ref_block = tapos(joint, _id_of(ref, joint), parse_time(header["timestamp"]), 600)
        ref.stop()
        ref.p2p_port = free_port()
        ref.start()
        for side, amount in ((node, 1111), (ref, 2222)):
            trx = dict(ref_block, operations=[transfer_wire(amount)], extensions=[],
                       signatures=[])
            side.call("broadcast_transaction", sign_transaction(trx, CHAIN_ID, [DEV_WIF], "TEST"),
                      api="network_broadcast")
        time.sleep(20)
        split = min(ref.head(), node.head()[0])
        assert _header(ref, split) != _header(node, split), "no fork while partitioned"
        longer, shorter = (ref, node) if ref_witnesses == 7 else (node, ref)
        node.call("add_node", ref.p2p, api="network_node")
        target = longer.head() if longer is ref else longer.head()[0]
        wait_until(lambda: _same_head(ref, node) and _num(shorter) >= target, timeout=60,
                   what="both nodes on the longer branch")
        num = min(_num(node), _num(ref))  # one may have made a block since
        assert _header(ref, num) == _header(node, num)
        assert _header(ref, split) == _header(node, split)
        # and in step afterwards, both transfers in the one chain
        after = _num(node) + 3
        wait_until(lambda: _num(node) >= after and _same_head(ref, node), timeout=30,
                   what="the rejoined network in step")
        wait_until(lambda: len(_history(node, "1.2.7")) == 2 == len(_history(ref, "1.2.7")),
                   timeout=30, what="both transfers in the chain on both sides")
        assert sorted(h["op"][1]["amount"]["amount"] for h in _history(node, "1.2.7")) == [
            1111, 2222]
        wait_until(lambda: _history(node, "1.2.7") == _history(ref, "1.2.7"), timeout=10,
                   what="the same history on both sides")
        for account in ("1.2.6", "1.2.7"):
            assert (node.call("get_account_balances", account, [])
                    == ref.call("get_account_balances", account, []))
    finally:
        if node is not None:
            node.stop()
        ref.stop()


def _id_of(node, num):
    """The id of block ``num``: the next block's ``previous``, or the head's."""
    props = node.call("get_dynamic_global_properties")
    if props["head_block_number"] == num:
        return props["head_block_id"]
    return node.call("get_block_header", num + 1)["previous"]


def _num(node):
    head = node.head()
    return head[0] if isinstance(head, tuple) else head


def _same_head(ref, node):
    num = min(_num(ref), _num(node))
    try:
        return _header(ref, num) == _header(node, num)
    except Exception:  # noqa: BLE001 - a block popped between the two reads
        return False
