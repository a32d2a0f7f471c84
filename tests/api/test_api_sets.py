"""block, asset and debug API sets over a real Chain."""

import pytest
import pytest_twisted
from twisted.internet import task

from nodeapi.api.asset import AssetApi
from nodeapi.api.block import BlockApi
from nodeapi.api.debug import BATCH, DebugApi
from nodeapi.errors import ApiError
from nodeapi.node import ApiLimits

from kit.api import create_gold, make_api
from kit.chain import fund, produce, transfer_op
from kit.keys import DEV_WIF, OTHER_PUB, OTHER_WIF
from kit.signing import sign


@pytest.fixture
def funded(chain):
    """init0 claimed the genesis balance; init1 got 12345 in block 2."""
    return fund(chain, init1=12345)


def test_get_blocks(funded):
    api, _ = make_api(funded, BlockApi)
    b1, b2, b3 = api.call("get_blocks", [1, "3"])
    assert b1 == funded.get_block(1) and b2["transactions"][0]["operations"][0][0] == 0
    assert b3 is None
    assert api.call("get_blocks", [0, 0]) == [None]
    with pytest.raises(ApiError, match="must not be less than"):
        api.call("get_blocks", [2, 1])
    with pytest.raises(ApiError, match="limit can not be greater than 100"):
        api.call("get_blocks", [1, 101])
    assert len(api.call("get_blocks", [1, 100])) == 100
    small, _ = make_api(funded, BlockApi, limits=ApiLimits(get_blocks=1))
    with pytest.raises(ApiError, match="Too many blocks: 2 requested"):
        small.call("get_blocks", [1, 2])


def test_asset_holders(funded):
    create_gold(funded)  # init1 holds 5000 GOLD
    funded.push_transaction(sign(funded, [transfer_op(10 ** 8, to="1.2.8")]))
    produce(funded)
    api, _ = make_api(funded, AssetApi)
    holders = api.call("get_asset_holders", ["TEST", 0, 10])
    assert [h["name"] for h in holders] == ["init0", "init1", "init2"]
    assert holders[1] == {"name": "init1", "account_id": "1.2.7",
                          "amount": funded.state.balance("1.2.7", "1.3.0")}
    assert holders[0]["amount"] > holders[1]["amount"] > holders[2]["amount"]
    assert api.call("get_asset_holders", ["1.3.0", 1, 1]) == holders[1:2]
    assert api.call("get_asset_holders", ["GOLD", 0, 10]) == [
        {"name": "init1", "account_id": "1.2.7", "amount": 5000}]
    assert api.call("get_asset_holders_count", ["TEST"]) == 3
    assert api.call("get_asset_holders_count", ["GOLD"]) == 1
    assert api.call("get_all_asset_holders", []) == [{"asset_id": "1.3.0", "count": 3},
                                                     {"asset_id": "1.3.1", "count": 1}]
    with pytest.raises(ApiError, match="limit can not be greater than 100"):
        api.call("get_asset_holders", ["TEST", 0, 101])
    with pytest.raises(ApiError, match="no such asset"):
        api.call("get_asset_holders_count", ["SILVER"])


@pytest_twisted.inlineCallbacks
def test_debug_generate_blocks(chain):
    clock = task.Clock()
    api, _ = make_api(chain, DebugApi, reactor=clock)
    head = chain.head_block_num
    produced = yield api.call("debug_generate_blocks", [DEV_WIF, 3])
    assert produced == 3 and chain.head_block_num == head + 3
    batches = api.call("debug_generate_blocks", [DEV_WIF, BATCH + 2])
    # one batch, then back to the node's reactor before the next
    assert not batches.called and chain.head_block_num == head + 3 + BATCH
    clock.advance(0)
    produced = yield batches
    assert produced == BATCH + 2 and chain.head_block_num == head + 5 + BATCH
    assert (yield api.call("debug_generate_blocks", [DEV_WIF, 0])) == 0
    with pytest.raises(ApiError, match="not a valid WIF"):
        api.call("debug_generate_blocks", ["5Knotakey", 1])
    with pytest.raises(ApiError, match="count must be an integer"):
        api.call("debug_generate_blocks", [DEV_WIF, -1])
    # another key: graphene rewrites the scheduled witness' signing key first
    before = chain.head_block_num
    assert (yield api.call("debug_generate_blocks", [OTHER_WIF, 2])) == 2
    assert chain.head_block_num == before + 2
    for num in (before + 1, before + 2):
        witness = chain.get_block(num)["witness"]
        assert chain.state.objects[witness]["signing_key"] == OTHER_PUB


def test_debug_blocks_include_pending_transactions(funded):
    api, _ = make_api(funded, DebugApi)
    funded.push_transaction(sign(funded, [transfer_op(42, to="1.2.9")]))
    d = api.call("debug_generate_blocks", [DEV_WIF, 1])
    assert d.result == 1
    assert funded.state.balance("1.2.9", "1.3.0") == 42
    assert funded.get_block(funded.head_block_num)["transactions"][0]["operations"][0][1][
        "amount"]["amount"] == 42


