"""protocol/config.py, the one home of bitshares-core's config.hpp values:
graphene's ``get_config()`` and the chain parameters' defaults are made
from it.

Reference: bitshares-core libraries/protocol/include/graphene/protocol/config.hpp,
libraries/chain/get_config.cpp, chain_parameters.hpp."""

from nodeapi.protocol import config
from nodeapi.protocol.operations import CHAIN_PARAMETERS
from nodeapi.protocol.serialize import unpack


def test_get_config_values_by_hand():
    """config.hpp's expressions worked out by hand: 2*1000*1000,
    60*60*24*7*4, PRECISION*500*1000, MIN_TRANSACTION_SIZE_LIMIT*5, ..."""
    got = config.GET_CONFIG
    assert len(got) == 60  # get_config.cpp's 62 keys but the symbol and prefix
    assert list(got)[:3] == ["GRAPHENE_MIN_ACCOUNT_NAME_LENGTH",
                             "GRAPHENE_MAX_ACCOUNT_NAME_LENGTH",
                             "GRAPHENE_MIN_ASSET_SYMBOL_LENGTH"]
    assert list(got)[-1] == "GRAPHENE_TEMP_ACCOUNT"
    assert got["GRAPHENE_MAX_SHARE_SUPPLY"] == 1000000000000000
    assert got["GRAPHENE_DEFAULT_MAX_BLOCK_SIZE"] == 2000000
    assert got["GRAPHENE_MIN_BLOCK_SIZE_LIMIT"] == 5120
    assert got["GRAPHENE_DEFAULT_MAX_PROPOSAL_LIFETIME_SEC"] == 2419200
    assert got["GRAPHENE_DEFAULT_COMMITTEE_PROPOSAL_REVIEW_PERIOD_SEC"] == 1209600
    assert got["GRAPHENE_DEFAULT_CASHBACK_VESTING_PERIOD_SEC"] == 31536000
    assert got["GRAPHENE_DEFAULT_WORKER_BUDGET_PER_DAY"] == 50000000000
    assert got["GRAPHENE_DEFAULT_WITNESS_PAY_PER_BLOCK"] == 1000000
    assert got["GRAPHENE_DEFAULT_FEE_LIQUIDATION_THRESHOLD"] == 10000000
    assert got["GRAPHENE_1_PERCENT"] == 100
    assert got["GRAPHENE_DEFAULT_FORCE_SETTLEMENT_MAX_VOLUME"] == 2000
    assert got["GRAPHENE_DEFAULT_LIFETIME_REFERRER_PERCENT_OF_FEE"] == 3000
    assert got["GRAPHENE_NULL_ACCOUNT"] == "1.2.3"


def test_chain_parameters_default_to_config_values():
    """A chain_parameters left at its C++ initializers (the bytes of an
    empty fee schedule then every default) holds config.hpp's defaults."""
    defaults, _pos = CHAIN_PARAMETERS.unpack(CHAIN_PARAMETERS.default, 0, "BTS")
    assert defaults["block_interval"] == 5
    assert defaults["maintenance_interval"] == 86400
    assert defaults["maximum_transaction_size"] == 2048
    assert defaults["maximum_proposal_lifetime"] == 2419200
    assert defaults["reserve_percent_of_fee"] == 2000
    assert defaults["network_percent_of_fee"] == 2000
    assert defaults["lifetime_referrer_percent_of_fee"] == 3000
    assert defaults["cashback_vesting_threshold"] == 10000000
    assert defaults["worker_budget_per_day"] == 50000000000
    assert defaults["max_authority_depth"] == 2
    assert unpack(CHAIN_PARAMETERS, CHAIN_PARAMETERS.default, "BTS") == defaults
