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
    ("block_interval", I(UINT8, 5)),
    ("maintenance_interval", I(UINT32, 86400)),
    ("maintenance_skip_slots", I(UINT8, 3)),
    ("committee_proposal_review_period", I(UINT32, 1209600)),
    ("maximum_transaction_size", I(UINT32, 2048)),
    ("maximum_block_size", I(UINT32, 2000000)),
    ("maximum_time_until_expiration", I(UINT32, 86400)),
    ("maximum_proposal_lifetime", I(UINT32, 2419200)),
    ("maximum_asset_whitelist_authorities", I(UINT8, 10)),
    ("maximum_asset_feed_publishers", I(UINT8, 10)),
    ("maximum_witness_count", I(UINT16, 1001)),
    ("maximum_committee_count", I(UINT16, 1001)),
    ("maximum_authority_membership", I(UINT16, 10)),
    ("reserve_percent_of_fee", I(UINT16, 2000)),
    ("network_percent_of_fee", I(UINT16, 2000)),
    ("lifetime_referrer_percent_of_fee", I(UINT16, 3000)),
    ("cashback_vesting_period_seconds", I(UINT32, 31536000)),
    ("cashback_vesting_threshold", I(SHARE, 10000000)),
    ("count_non_member_votes", Bool(default=True)),
    ("allow_non_member_whitelists", BOOL),
    ("witness_pay_per_block", I(SHARE, 1000000)),
    ("worker_budget_per_day", I(SHARE, 50000000000)),
    ("max_predicate_opcode", I(UINT16, 1)),
    ("fee_liquidation_threshold", I(SHARE, 10000000)),
    ("accounts_per_fee_scale", I(UINT16, 1000)),
    ("account_fee_scale_bitshifts", I(UINT8, 4)),
    ("max_authority_depth", I(UINT8, 2)),  # GRAPHENE_MAX_SIG_CHECK_DEPTH
    ("extensions", Extension("chain_parameters::ext", [
        ("updatable_htlc_options", HTLC_OPTIONS),
        ("custom_authority_options", CUSTOM_AUTHORITY_OPTIONS),
        ("market_fee_network_percent", UINT16),
        ("maker_fee_discount_percent", UINT16),
    ])),
])
