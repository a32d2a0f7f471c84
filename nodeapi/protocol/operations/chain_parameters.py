"""``chain_parameters``: the committee-set parameters of the chain.

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/chain_parameters.hpp``
(``FC_REFLECT`` order; ``witness_pay_vesting_seconds`` is not reflected, so
it is neither in the JSON nor in the bytes) with its ``ext`` extension
(``updatable_htlc_options``, ``custom_authority_options``,
``market_fee_network_percent``, ``maker_fee_discount_percent``).
``current_fees`` is a ``shared_ptr<fee_schedule>``: fc packs the pointee
without a presence flag.  Carried by committee_member_update_global_parameters (31).

A member absent from the JSON keeps its C++ default member initializer
(``GRAPHENE_DEFAULT_*`` of protocol/config.hpp): graphene's ``from_variant``
sets only the members present, so a proposal carrying only ``current_fees``
(mainnet has them) proposes the defaults for the rest.
"""

from nodeapi.protocol import config as C
from nodeapi.protocol.composite import Extension, Initialized as I, Struct
from nodeapi.protocol.operations.fee_parameters import FEE_SCHEDULE
from nodeapi.protocol.serialize import BOOL, UINT8, UINT16, UINT32, Bool
from nodeapi.protocol.types import SHARE

HTLC_OPTIONS = Struct("htlc_options", [
    ("max_timeout_secs", UINT32),
    ("max_preimage_size", UINT32),
])

CUSTOM_AUTHORITY_OPTIONS = Struct("custom_authority_options_type", [
    ("max_custom_authority_lifetime_seconds", UINT32),
    ("max_custom_authorities_per_account", UINT32),
    ("max_custom_authorities_per_account_op", UINT32),
    ("max_custom_authority_restrictions", UINT32),
])

CHAIN_PARAMETERS = Struct("chain_parameters", [
    ("current_fees", FEE_SCHEDULE),
    ("block_interval", I(UINT8, C.DEFAULT_BLOCK_INTERVAL)),
    ("maintenance_interval", I(UINT32, C.DEFAULT_MAINTENANCE_INTERVAL)),
    ("maintenance_skip_slots", I(UINT8, C.DEFAULT_MAINTENANCE_SKIP_SLOTS)),
    ("committee_proposal_review_period", I(UINT32, C.DEFAULT_COMMITTEE_PROPOSAL_REVIEW_PERIOD_SEC)),
    ("maximum_transaction_size", I(UINT32, C.DEFAULT_MAX_TRANSACTION_SIZE)),
    ("maximum_block_size", I(UINT32, C.DEFAULT_MAX_BLOCK_SIZE)),
    ("maximum_time_until_expiration", I(UINT32, C.DEFAULT_MAX_TIME_UNTIL_EXPIRATION)),
    ("maximum_proposal_lifetime", I(UINT32, C.DEFAULT_MAX_PROPOSAL_LIFETIME_SEC)),
    ("maximum_asset_whitelist_authorities", I(UINT8, C.DEFAULT_MAX_ASSET_WHITELIST_AUTHORITIES)),
    ("maximum_asset_feed_publishers", I(UINT8, C.DEFAULT_MAX_ASSET_FEED_PUBLISHERS)),
    ("maximum_witness_count", I(UINT16, C.DEFAULT_MAX_WITNESSES)),
    ("maximum_committee_count", I(UINT16, C.DEFAULT_MAX_COMMITTEE)),
    ("maximum_authority_membership", I(UINT16, C.DEFAULT_MAX_AUTHORITY_MEMBERSHIP)),
    ("reserve_percent_of_fee", I(UINT16, C.DEFAULT_BURN_PERCENT_OF_FEE)),
    ("network_percent_of_fee", I(UINT16, C.DEFAULT_NETWORK_PERCENT_OF_FEE)),
    ("lifetime_referrer_percent_of_fee", I(UINT16, C.DEFAULT_LIFETIME_REFERRER_PERCENT_OF_FEE)),
    ("cashback_vesting_period_seconds", I(UINT32, C.DEFAULT_CASHBACK_VESTING_PERIOD_SEC)),
    ("cashback_vesting_threshold", I(SHARE, C.DEFAULT_CASHBACK_VESTING_THRESHOLD)),
    ("count_non_member_votes", Bool(default=True)),
    ("allow_non_member_whitelists", BOOL),
    ("witness_pay_per_block", I(SHARE, C.DEFAULT_WITNESS_PAY_PER_BLOCK)),
    ("worker_budget_per_day", I(SHARE, C.DEFAULT_WORKER_BUDGET_PER_DAY)),
    ("max_predicate_opcode", I(UINT16, C.DEFAULT_MAX_ASSERT_OPCODE)),
    ("fee_liquidation_threshold", I(SHARE, C.DEFAULT_FEE_LIQUIDATION_THRESHOLD)),
    ("accounts_per_fee_scale", I(UINT16, C.DEFAULT_ACCOUNTS_PER_FEE_SCALE)),
    ("account_fee_scale_bitshifts", I(UINT8, C.DEFAULT_ACCOUNT_FEE_SCALE_BITSHIFTS)),
    ("max_authority_depth", I(UINT8, C.MAX_SIG_CHECK_DEPTH)),
    ("extensions", Extension("chain_parameters::ext", [
        ("updatable_htlc_options", HTLC_OPTIONS),
        ("custom_authority_options", CUSTOM_AUTHORITY_OPTIONS),
        ("market_fee_network_percent", UINT16),
        ("maker_fee_discount_percent", UINT16),
    ])),
])
