"""The reference-node kit (kit.reference): bitshares-core 7.0.2's
witness_node produces the bundled genesis' chain (same chain id as
nodeapi's), a second one follows it over graphene P2P, and a nodeapi node
follows it over RPC, block for block."""

import pytest

from kit.keys import CHAIN_ID
from kit.reference import nodeapi_follower, requires_reference, start_reference
from kit.wait import wait_until

pytestmark = [pytest.mark.reference, pytest.mark.slow, requires_reference]


@pytest.fixture
def producer(tmp_path):
    node = start_reference(tmp_path, "producer")
    yield node
    node.stop()


def test_producer_and_p2p_follower(producer, tmp_path):
    assert producer.call("get_chain_id") == CHAIN_ID
    producer.wait_head(3)
    follower = start_reference(tmp_path, "follower", produce=False, seed_node=producer.p2p)
    try:
        head = producer.head()
        follower.wait_head(head)
        assert (follower.call("get_block_header", head)
                == producer.call("get_block_header", head))
        peers = follower.call("get_connected_peers", api="network_node")
        assert [p["host"] for p in peers] == [producer.p2p]
    finally:
        follower.stop()


def test_debug_generate_blocks_moves_time(producer):
    before = producer.call("get_dynamic_global_properties")
    head = producer.generate_blocks(20)
    after = producer.call("get_dynamic_global_properties")
    assert head == after["head_block_number"] >= before["head_block_number"] + 20
    assert after["time"] > before["time"]


def test_nodeapi_follows_the_reference_over_rpc(producer, tmp_path):
    producer.wait_head(3)
    node = nodeapi_follower(tmp_path, producer)
    try:
        target = producer.head() + 2
        wait_until(lambda: node.head()[0] >= target, timeout=30,
                   what=f"nodeapi at block {target}")
        assert node.call("get_chain_id") == CHAIN_ID
        assert (node.call("get_block_header", target)
                == producer.call("get_block_header", target))
    finally:
        node.stop()


def test_a_port_taken_meanwhile_starts_it_on_other_ports(tmp_path):
    """A port found free may be taken before witness_node binds it: the
    node starts again on other free ports (tools.reference_node
    ReferenceNode.start)."""
    import socket

    from kit.reference import ReferenceNode

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        node = ReferenceNode(tmp_path / "ref", produce=False)
        node.rpc_port = taken.getsockname()[1]
        node.start()
        try:
            assert node.rpc_port != taken.getsockname()[1]
            assert node.call("get_chain_id") == CHAIN_ID
            assert "Underlying Transport Error" in node.log()
        finally:
            node.stop()
