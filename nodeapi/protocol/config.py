"""graphene's protocol constants, one home for each.

Reference: bitshares-core libraries/protocol/include/graphene/protocol/config.hpp
(``GRAPHENE_100_PERCENT``, ``GRAPHENE_MAX_SHARE_SUPPLY``,
``GRAPHENE_BLOCKCHAIN_PRECISION``, the special accounts
``GRAPHENE_COMMITTEE_ACCOUNT`` .. ``GRAPHENE_PROXY_TO_SELF_ACCOUNT``) and
libraries/chain/include/graphene/chain/config.hpp (defaults of the chain
parameters).  Every other module imports these names; none writes the
values again.

Times: ``MAX_TIME`` is ``fc::time_point_sec::maximum()`` in seconds since the
epoch; its wire form is made by :mod:`nodeapi.protocol.times`.
"""

#: GRAPHENE_100_PERCENT: percentages are in 1/100 of a percent.
GRAPHENE_100_PERCENT = 10000
#: GRAPHENE_1_PERCENT
GRAPHENE_1_PERCENT = GRAPHENE_100_PERCENT // 100
#: GRAPHENE_IRREVERSIBLE_THRESHOLD (protocol/config.hpp): the share of the
#: active witnesses that must have confirmed a block for it to be irreversible
GRAPHENE_IRREVERSIBLE_THRESHOLD = 70 * GRAPHENE_1_PERCENT
#: GRAPHENE_MAX_SHARE_SUPPLY: the most any asset may have in existence.
MAX_SHARE_SUPPLY = 1000000000000000
#: GRAPHENE_BLOCKCHAIN_PRECISION: satoshis of the core asset per unit.
BLOCKCHAIN_PRECISION = 100000
#: GRAPHENE_COLLATERAL_RATIO_DENOM: collateral ratios are per mille.
COLLATERAL_RATIO_DENOM = 1000
#: GRAPHENE_DEFAULT_NETWORK_PERCENT_OF_FEE
DEFAULT_NETWORK_PERCENT_OF_FEE = 20 * GRAPHENE_1_PERCENT
#: fc::time_point_sec::maximum() (2106-02-07T06:28:15), seconds.
MAX_TIME = 0xFFFFFFFF

#: The special accounts db_init.cpp creates first, 1.2.0 .. 1.2.5.
COMMITTEE_ACCOUNT = "1.2.0"
WITNESS_ACCOUNT = "1.2.1"
RELAXED_COMMITTEE_ACCOUNT = "1.2.2"
NULL_ACCOUNT = "1.2.3"
TEMP_ACCOUNT = "1.2.4"
PROXY_TO_SELF_ACCOUNT = "1.2.5"

#: (name, id) of the special accounts in their creation order (db_init.cpp
#: ``init_genesis``).
SPECIAL_ACCOUNTS = (
    ("committee-account", COMMITTEE_ACCOUNT),
    ("witness-account", WITNESS_ACCOUNT),
    ("relaxed-committee-account", RELAXED_COMMITTEE_ACCOUNT),
    ("null-account", NULL_ACCOUNT),
    ("temp-account", TEMP_ACCOUNT),
    ("proxy-to-self", PROXY_TO_SELF_ACCOUNT),
)

#: The accounts of the chain itself, whose fees are not split (chain
#: account_statistics_object::process_fees pays them no cashback): every
#: special account but proxy-to-self.
BLOCKCHAIN_ACCOUNTS = frozenset(i for _, i in SPECIAL_ACCOUNTS[:5])

#: The core asset, 1.3.0.
CORE_ASSET = "1.3.0"
