"""Answers shaped as bitshares-core 7.x gives them: worker votes in
``lookup_vote_ids`` and ``get_full_accounts``, the creation block and time
of asset objects, account options' ``extensions`` stored as the
``extensions_type`` array (values by hand from the reference files cited
in each test)."""

import pytest

from nodeapi.errors import ApiError, ProtocolError
from nodeapi.protocol.times import format_time
from nodeapi.protocol.wire import to_wire

from kit.api import make_api
from kit.chain import CORE, asset_options, produce, push_wire

INIT0 = "1.2.6"
DAY = 86400


def _worker(chain, name):
    begin = chain.head_block_time + 10
    [[_, wid]] = push_wire(chain, [34, {
        "owner": INIT0, "work_begin_date": format_time(begin),
        "work_end_date": format_time(begin + 30 * DAY), "daily_pay": 10 ** 9, "name": name,
        "url": "https://example.org", "initializer": [2, {}]}])
    return wid


def test_lookup_vote_ids_finds_workers_by_vote_for_and_against(funded):
    """database_api.cpp ``lookup_vote_ids``: a worker vote id (type 2) is
    looked up in the worker index by ``vote_for``, then by
    ``vote_against``; an unknown one is null.  ``get_full_accounts`` fills
    ``votes`` with the same lookup of the account's votes."""
    chain = funded
    wid = _worker(chain, "burn")
    produce(chain)
    db = make_api(chain)[0]
    worker = chain.state.get(wid)
    witness = chain.state.get("1.6.1")
    found = db.call("lookup_vote_ids", [[worker["vote_for"], worker["vote_against"],
                                         witness["vote_id"], "2:9999"]])
    assert [f and f["id"] for f in found] == [wid, wid, "1.6.1", None]
    options = dict(chain.state.get(INIT0)["options"], votes=sorted(
        [worker["vote_for"], witness["vote_id"]], key=lambda v: int(v.split(":")[1])),
        num_witness=1)
    push_wire(chain, [6, {"account": INIT0, "new_options": options, "extensions": {}}])
    produce(chain)
    full = dict(db.call("get_full_accounts", [[INIT0], False]))[INIT0]
    assert sorted(v["id"] for v in full["votes"]) == ["1.14.0", "1.6.1"] == sorted(
        ["1.6.1", wid])


def test_assets_carry_creation_block_and_time(funded, genesis):
    """7.x asset_object (chain/asset_object.hpp FC_REFLECT): ..., options,
    dynamic_asset_data_id, [bitasset_data_id, buyback_account,
    for_liquidity_pool], creation_block_num, creation_time.  Genesis assets
    have block 0 and the genesis ``initial_timestamp`` (db_genesis.cpp);
    asset_create_evaluator::do_apply sets the block being applied and its
    time."""
    chain = funded
    db = make_api(chain)[0]
    core = to_wire(db.call("get_assets", [["1.3.0"], 0]))[0]
    assert core["creation_block_num"] == 0
    assert core["creation_time"] == genesis.data["initial_timestamp"]
    # get_assets answers graphene's extended_asset_object: the asset, then
    # total_in_collateral (database_api.cpp extend_asset)
    assert list(core)[-3:] == ["creation_block_num", "creation_time", "total_in_collateral"]
    [[_, gold]] = push_wire(chain, [10, {
        "issuer": INIT0, "symbol": "GOLD", "precision": 3, "common_options": asset_options(),
        "is_prediction_market": False, "extensions": []}])
    produce(chain)
    asset = to_wire(db.call("get_assets", [[gold]]))[0]
    assert asset["creation_block_num"] == chain.head_block_num
    assert asset["creation_time"] == format_time(chain.head_block_time)
    assert list(asset) == ["id", "symbol", "precision", "issuer", "options",
                           "dynamic_asset_data_id", "creation_block_num", "creation_time",
                           "total_in_collateral"]
    # an optional member set later goes before the creation members
    [[_, result]] = push_wire(chain, [59, {
        "account": INIT0, "asset_a": CORE, "asset_b": gold, "share_asset": _share(chain),
        "taker_fee_percent": 0, "withdrawal_fee_percent": 0, "extensions": []}])
    produce(chain)
    [pool] = result["new_objects"]
    share = chain.state.get(chain.state.get(pool)["share_asset"])
    assert list(share)[-3:] == ["for_liquidity_pool", "creation_block_num", "creation_time"]


def _share(chain):
    [[_, share]] = push_wire(chain, [10, {
        "issuer": INIT0, "symbol": "SHARE", "precision": 3,
        "common_options": asset_options(), "is_prediction_market": False, "extensions": []}])
    return share


def test_account_options_extensions_are_extensions_type(funded):
    """protocol/account.hpp (7.x): ``account_options::extensions`` is
    ``extensions_type`` (a ``flat_set`` of ``future_extensions``): stored
    and answered as the array ``[]``; fc reads it only from an array
    (variant.cpp ``variant::get_array``), so an object - ``{}``, or a member
    such as ``committee_voting_account``, no extension of 7.x - is refused
    with fc's ``bad_cast_exception``."""
    chain = funded
    base = dict(chain.state.get(INIT0)["options"])
    assert base["extensions"] == []
    push_wire(chain, [6, {"account": INIT0, "new_options": dict(base, extensions=[]),
                          "extensions": {}}])
    produce(chain)
    db = make_api(chain)[0]
    assert db.call("get_accounts", [[INIT0]])[0]["options"]["extensions"] == []
    for sent in ({}, {"committee_voting_account": "1.2.7"}):
        with pytest.raises(ProtocolError, match="^Bad Cast: Invalid cast from object_type to "
                                                "Array$"):
            push_wire(chain, [6, {"account": INIT0, "new_options": dict(base, extensions=sent),
                                  "extensions": {}}])


def test_get_account_limit_orders_of_an_unknown_account(funded):
    """database_api.cpp ``get_account_limit_orders`` calls
    ``get_account_from_string`` (database_api_helper.hxx default
    ``throw_if_not_found = true``): "no such account"."""
    db = make_api(funded)[0]
    with pytest.raises(ApiError, match="no such account"):
        db.call("get_account_limit_orders", ["nobody", "TEST", "TEST", 10])
    assert db.call("get_account_limit_orders", ["init0", "1.3.0", "1.3.0", 10]) == []
