"""The genesis objects as bitshares-core's db_genesis.cpp makes them
(``database::init_genesis``); the reference node shows the same in
tests/reference/test_reference_objects.py."""

import copy
import json

import pytest

from nodeapi.chain.genesis import init_genesis, load_genesis

MAX_SHARE_SUPPLY = 10 ** 15  # GRAPHENE_MAX_SHARE_SUPPLY


def test_blockchain_accounts_balance_and_properties(genesis):
    state = init_genesis(genesis, 6)
    # "Create blockchain accounts": the committee account's core balance
    # first (2.5.0), the whole supply, which adjust_balance then hands to
    # the genesis balances: 0, flagged for the next maintenance
    assert state.get("2.5.0") == {"id": "2.5.0", "owner": "1.2.0", "asset_type": "1.3.0",
                                  "balance": 0, "maintenance_flag": True}
    assert state.get("2.6.0")["core_in_balance"] == MAX_SHARE_SUPPLY
    # init_account_data_as_null: null-account and proxy-to-self are the null
    # account's; the relaxed committee account has thresholds 1, temp 0
    for aid in ("1.2.3", "1.2.5"):
        acc = state.get(aid)
        assert acc["registrar"] == acc["referrer"] == acc["lifetime_referrer"] == "1.2.3"
        assert acc["network_fee_percentage"] == 0
    for aid in ("1.2.0", "1.2.1", "1.2.2"):
        acc = state.get(aid)
        assert acc["registrar"] == acc["referrer"] == acc["lifetime_referrer"] == aid
        assert acc["owner"]["weight_threshold"] == acc["active"]["weight_threshold"] == 1
    assert state.get("1.2.4")["active"]["weight_threshold"] == 0
    # the core asset: max_market_fee GRAPHENE_MAX_SHARE_SUPPLY (asset_options'
    # default), integers in memory (numbers or strings only on the wire)
    options = state.get("1.3.0")["options"]
    assert options["max_market_fee"] == MAX_SHARE_SUPPLY
    assert options["max_supply"] == int(genesis.data["max_core_supply"])
    # no committee until block 1's maintenance, which the epoch makes due
    assert state.get("2.0.0")["active_committee_members"] == []
    dgp = state.get("2.1.0")
    assert dgp["next_maintenance_time"] == 0 and dgp["last_vote_tally_time"] == 0
    # "Create FBA counters": 3, of GRAPHENE_FBA_STEALTH_DESIGNATED_ASSET
    assert [state.get(f"2.16.{i}") for i in range(4)] == [
        {"id": f"2.16.{i}", "accumulated_fba_fees": 0, "designated_asset": "1.3.743"}
        for i in range(3)] + [None]


def test_without_genesis_balances_the_committee_keeps_the_supply(genesis):
    data = copy.deepcopy(genesis.data)
    data["initial_balances"] = []
    state = init_genesis(type(genesis)(data, genesis.chain_id, genesis.address_prefix,
                                       genesis.core_symbol), 6)
    assert state.get("2.5.0")["balance"] == MAX_SHARE_SUPPLY
    assert state.get("2.5.0")["maintenance_flag"] is False
    assert state.get("2.3.0")["current_supply"] == MAX_SHARE_SUPPLY


def test_key_prefix_comes_from_the_genesis_keys(tmp_path, genesis):
    """No default prefix: the first initial account's owner key gives it,
    else the first witness candidate's signing key; a genesis with neither
    is refused."""
    data = copy.deepcopy(genesis.data)
    key = "XYZ" + data["initial_accounts"][0]["owner_key"][-50:]
    data["initial_accounts"][0]["owner_key"] = key
    path = tmp_path / "genesis.json"
    path.write_text(json.dumps(data))
    assert load_genesis(str(path)).address_prefix == "XYZ"
    data["initial_accounts"] = []
    data["initial_witness_candidates"][0]["block_signing_key"] = "ABC" + key[-50:]
    path.write_text(json.dumps(data))
    assert load_genesis(str(path)).address_prefix == "ABC"
    data["initial_witness_candidates"] = []
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="no initial account or witness candidate"):
        load_genesis(str(path))
