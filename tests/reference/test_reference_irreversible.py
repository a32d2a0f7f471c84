"""The last irreversible block: the block confirmed by
GRAPHENE_IRREVERSIBLE_THRESHOLD (70 %) of the active witnesses, never
lower than before (libraries/chain/db_update.cpp
``update_last_irreversible_block``, protocol/config.hpp); nodeapi
following the reference node reports the same number at the same head."""

import pytest

from kit.chain import produce
from kit.reference import nodeapi_follower, requires_reference, start_reference
from kit.wait import wait_until


def test_irreversible_block_is_the_fourth_lowest_confirmation_of_eleven(new_chain):
    """11 active witnesses: offset (10000 - 7000) * 11 // 10000 = 3, the
    fourth lowest ``last_confirmed_block_num`` (75 % gave the third)."""
    chain = new_chain()
    produce(chain, 30)
    dgp = chain.state.objects["2.1.0"]
    active = chain.state.objects["2.0.0"]["active_witnesses"]
    confirmed = sorted(chain.state.objects[w]["last_confirmed_block_num"] for w in active)
    assert len(confirmed) == 11
    assert dgp["last_irreversible_block_num"] == confirmed[3] > 0


@pytest.mark.reference
@pytest.mark.slow
@requires_reference
def test_nodeapi_reports_the_references_irreversible_block(tmp_path):
    producer = start_reference(tmp_path, "producer")
    node = None
    try:
        producer.wait_head(14, timeout=60)
        node = nodeapi_follower(tmp_path, producer)
        for _attempt in range(10):  # a block a second: read both at one head
            theirs = producer.call("get_dynamic_global_properties")
            wait_until(lambda: node.head()[0] >= theirs["head_block_number"], timeout=30,
                       what=f"nodeapi at block {theirs['head_block_number']}")
            mine = node.call("get_dynamic_global_properties")
            if mine["head_block_number"] == theirs["head_block_number"]:
                break
        else:
            pytest.fail("never read both nodes at the same head")
        assert theirs["last_irreversible_block_num"] > 0
        assert mine["last_irreversible_block_num"] == theirs["last_irreversible_block_num"]
    finally:
        if node is not None:
            node.stop()
        producer.stop()
