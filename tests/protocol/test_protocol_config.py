"""protocol/config.py, the one home of bitshares-core's config.hpp values:
graphene's ``get_config()`` and the chain parameters' defaults are made
from it.

Reference: bitshares-core libraries/protocol/include/graphene/protocol/config.hpp,
libraries/chain/get_config.cpp, chain_parameters.hpp."""

import io
import os
import tokenize

from kit.paths import ROOT

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


def _literals(folders, wanted, hints):
    """``(path, line, token)`` of the literal tokens of nodeapi's sources in
    ``folders`` (config.py excepted) for which ``wanted(tokens, i)`` holds;
    only files whose text holds one of ``hints`` are tokenized."""
    found = []
    for folder in folders:
        for root, _dirs, names in os.walk(os.path.join(ROOT, "nodeapi", folder)):
            for name in names:
                path = os.path.join(root, name)
                if not name.endswith(".py") or path.endswith(os.path.join("protocol", "config.py")):
                    continue
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                if not any(hint in text for hint in hints):
                    continue
                tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
                found += [(os.path.relpath(path, ROOT), t.start[0], t.string)
                          for i, t in enumerate(tokens) if wanted(tokens, i)]
    return found


def test_config_values_are_written_only_in_config():
    """The core asset id and GRAPHENE_MAX_SHARE_SUPPLY appear nowhere in
    nodeapi but protocol/config.py; GRAPHENE_100_PERCENT nowhere in the
    protocol and chain code (a fee default ``10000 * P``, 10000 whole
    units, is no percent)."""
    def core_or_supply(tokens, i):
        t = tokens[i]
        if t.type == tokenize.STRING:
            return t.string in ('"1.3.0"', "'1.3.0'")
        if t.type == tokenize.NUMBER:
            if t.string.replace("_", "") == "1000000000000000":
                return True
            return t.string == "10" and [x.string for x in tokens[i + 1:i + 3]] == ["**", "15"]
        return False

    def percent(tokens, i):
        t = tokens[i]
        return (t.type == tokenize.NUMBER and t.string.replace("_", "") == "10000"
                and tokens[i + 1].string != "*")

    assert _literals([""], core_or_supply, ("1.3.0", "000000000000", "**")) == []
    assert _literals(["protocol", "chain"], percent, ("10000", "10_000")) == []
    # the scan sees a literal where there is one
    assert _literals(["protocol"], lambda tokens, i: tokens[i].string == "GRAPHENE_100_PERCENT",
                     ("GRAPHENE_100_PERCENT",))
