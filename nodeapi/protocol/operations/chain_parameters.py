"""``chain_parameters``: the committee-set parameters of the chain.

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/chain_parameters.hpp``
(``FC_REFLECT`` order; ``witness_pay_vesting_seconds`` is not reflected, so
it is neither in the JSON nor in the bytes) with its ``ext`` extension
(``updatable_htlc_options``, ``custom_authority_options``,
``market_fee_network_percent``, ``maker_fee_discount_percent``).
``current_fees`` is a ``shared_ptr<fee_schedule>``: fc packs the pointee
without a presence flag.  Carried by committee_member_update_global_parameters (31).
"""

from nodeapi.protocol.composite import Extension, Struct
from nodeapi.protocol.operations.fee_parameters import FEE_SCHEDULE
from nodeapi.protocol.serialize import BOOL, UINT8, UINT16, UINT32
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
    ("block_interval", UINT8),
    ("maintenance_interval", UINT32),
    ("maintenance_skip_slots", UINT8),
    ("committee_proposal_review_period", UINT32),
    ("maximum_transaction_size", UINT32),
    ("maximum_block_size", UINT32),
    ("maximum_time_until_expiration", UINT32),
    ("maximum_proposal_lifetime", UINT32),
    ("maximum_asset_whitelist_authorities", UINT8),
    ("maximum_asset_feed_publishers", UINT8),
    ("maximum_witness_count", UINT16),
    ("maximum_committee_count", UINT16),
    ("maximum_authority_membership", UINT16),
    ("reserve_percent_of_fee", UINT16),
    ("network_percent_of_fee", UINT16),
    ("lifetime_referrer_percent_of_fee", UINT16),
    ("cashback_vesting_period_seconds", UINT32),
    ("cashback_vesting_threshold", SHARE),
    ("count_non_member_votes", BOOL),
    ("allow_non_member_whitelists", BOOL),
    ("witness_pay_per_block", SHARE),
    ("worker_budget_per_day", SHARE),
    ("max_predicate_opcode", UINT16),
    ("fee_liquidation_threshold", SHARE),
    ("accounts_per_fee_scale", UINT16),
    ("account_fee_scale_bitshifts", UINT8),
    ("max_authority_depth", UINT8),
    ("extensions", Extension("chain_parameters::ext", [
        ("updatable_htlc_options", HTLC_OPTIONS),
        ("custom_authority_options", CUSTOM_AUTHORITY_OPTIONS),
        ("market_fee_network_percent", UINT16),
        ("maker_fee_discount_percent", UINT16),
    ])),
])
