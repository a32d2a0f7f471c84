"""Fee parameter structs (``<operation>::fee_params_t``) by operation type.

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/*.hpp``
(each operation's ``fee_params_t`` and its ``FC_REFLECT``) and
``fee_schedule.hpp``: ``fee_parameters`` is the static_variant of the 78
``fee_params_t`` in operation order, so its tag is the operation type, and
``fee_schedule`` is ``{parameters: flat_set<fee_parameters>, scale:
uint32}`` (the flat_set ordered by tag).  Virtual operations and
balance_claim have empty parameters (``{}``).

The wire shapes live here (field names and integer widths); a member left
out of the JSON keeps its ``fee_params_t`` initializer
(:data:`nodeapi.protocol.fee_parameters.DEFAULT_FEE_PARAMETERS`, fc's
reflected ``from_variant`` sets only the members present), and a schedule
without ``scale`` has ``GRAPHENE_100_PERCENT``.  The fee calculation belongs
to the fee rules.
"""

from nodeapi.protocol.composite import FlatSet, Initialized, StaticVariant, Struct
from nodeapi.protocol.fee_parameters import DEFAULT_FEE_PARAMETERS
from nodeapi.protocol.serialize import UINT32, UINT64
from nodeapi.protocol.types import SHARE

_FEE = [("fee", UINT64)]
_FEE_KB = [("fee", UINT64), ("price_per_kbyte", UINT32)]
_FEE_OUTPUT = [("fee", UINT64), ("price_per_output", UINT32)]
_FEE_DAY = [("fee", UINT64), ("fee_per_day", UINT64)]
_BASIC_BYTE = [("basic_fee", UINT64), ("price_per_byte", UINT32)]
_NONE: list = []

# type -> (operation name, fee_params_t fields in reflection order)
_SHAPES = {
    0: ("transfer", _FEE_KB), 1: ("limit_order_create", _FEE),
    2: ("limit_order_cancel", _FEE), 3: ("call_order_update", _FEE),
    4: ("fill_order", _NONE),
    5: ("account_create", [("basic_fee", UINT64), ("premium_fee", UINT64),
                           ("price_per_kbyte", UINT32)]),
    6: ("account_update", [("fee", SHARE), ("price_per_kbyte", UINT32)]),
    7: ("account_whitelist", [("fee", SHARE)]),
    8: ("account_upgrade", [("membership_annual_fee", UINT64),
                            ("membership_lifetime_fee", UINT64)]),
    9: ("account_transfer", _FEE),
    10: ("asset_create", [("symbol3", UINT64), ("symbol4", UINT64), ("long_symbol", UINT64),
                          ("price_per_kbyte", UINT32)]),
    11: ("asset_update", _FEE_KB), 12: ("asset_update_bitasset", _FEE),
    13: ("asset_update_feed_producers", _FEE), 14: ("asset_issue", _FEE_KB),
    15: ("asset_reserve", _FEE), 16: ("asset_fund_fee_pool", _FEE),
    17: ("asset_settle", _FEE), 18: ("asset_global_settle", _FEE),
    19: ("asset_publish_feed", _FEE), 20: ("witness_create", _FEE),
    21: ("witness_update", [("fee", SHARE)]),
    22: ("proposal_create", _FEE_KB), 23: ("proposal_update", _FEE_KB),
    24: ("proposal_delete", _FEE), 25: ("withdraw_permission_create", _FEE),
    26: ("withdraw_permission_update", _FEE), 27: ("withdraw_permission_claim", _FEE_KB),
    28: ("withdraw_permission_delete", _FEE), 29: ("committee_member_create", _FEE),
    30: ("committee_member_update", _FEE),
    31: ("committee_member_update_global_parameters", _FEE),
    32: ("vesting_balance_create", _FEE), 33: ("vesting_balance_withdraw", _FEE),
    34: ("worker_create", _FEE), 35: ("custom", _FEE_KB), 36: ("assert", _FEE),
    37: ("balance_claim", _NONE), 38: ("override_transfer", _FEE_KB),
    39: ("transfer_to_blind", _FEE_OUTPUT), 40: ("blind_transfer", _FEE_OUTPUT),
    41: ("transfer_from_blind", _FEE), 42: ("asset_settle_cancel", _NONE),
    43: ("asset_claim_fees", _FEE), 44: ("fba_distribute", _NONE),
    45: ("bid_collateral", _FEE), 46: ("execute_bid", _NONE),
    47: ("asset_claim_pool", _FEE), 48: ("asset_update_issuer", _FEE),
    49: ("htlc_create", _FEE_DAY),
    50: ("htlc_redeem", [("fee", UINT64), ("fee_per_kb", UINT64)]),
    51: ("htlc_redeemed", _NONE), 52: ("htlc_extend", _FEE_DAY), 53: ("htlc_refund", _NONE),
    54: ("custom_authority_create", _BASIC_BYTE), 55: ("custom_authority_update", _BASIC_BYTE),
    56: ("custom_authority_delete", _FEE), 57: ("ticket_create", _FEE),
    58: ("ticket_update", _FEE), 59: ("liquidity_pool_create", _FEE),
    60: ("liquidity_pool_delete", _FEE), 61: ("liquidity_pool_deposit", _FEE),
    62: ("liquidity_pool_withdraw", _FEE), 63: ("liquidity_pool_exchange", _FEE),
    64: ("samet_fund_create", _FEE), 65: ("samet_fund_delete", _FEE),
    66: ("samet_fund_update", _FEE), 67: ("samet_fund_borrow", _FEE),
    68: ("samet_fund_repay", _FEE), 69: ("credit_offer_create", _FEE_KB),
    70: ("credit_offer_delete", _FEE), 71: ("credit_offer_update", _FEE_KB),
    72: ("credit_offer_accept", _FEE), 73: ("credit_deal_repay", _FEE),
    74: ("credit_deal_expired", _NONE), 75: ("liquidity_pool_update", _FEE),
    76: ("credit_deal_update", _FEE), 77: ("limit_order_update", _FEE),
}

#: operation type -> wire struct of its ``fee_params_t``
FEE_PARAMETERS = {
    number: Struct(f"{name}_operation::fee_params_t",
                   [(field, Initialized(ftype, DEFAULT_FEE_PARAMETERS[number][field]))
                    for field, ftype in fields])
    for number, (name, fields) in _SHAPES.items()}

#: the ``fee_parameters`` static_variant (tag = operation type)
FEE_PARAMETERS_VARIANT = StaticVariant(
    "fee_parameters", [FEE_PARAMETERS[n] for n in range(len(_SHAPES))],
    [f"{_SHAPES[n][0]}_operation::fee_params_t" for n in range(len(_SHAPES))])

#: ``fee_schedule`` (fee_schedule.hpp)
FEE_SCHEDULE = Struct("fee_schedule", [
    ("parameters", FlatSet(FEE_PARAMETERS_VARIANT)),
    ("scale", Initialized(UINT32, 10000)),  # GRAPHENE_100_PERCENT
])
