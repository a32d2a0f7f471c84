"""graphene protocol structs used by operations, with their field order.

Field lists follow the ``FC_REFLECT`` declarations of bitshares-core
(``libraries/protocol/include/graphene/protocol/``): ``asset.hpp`` (asset,
price), ``authority.hpp``, ``memo.hpp``, ``account.hpp`` (account_options),
``special_authority.hpp``, ``buyback.hpp``, ``asset_ops.hpp``
(asset_options, bitasset_options), ``base.hpp`` (operation results).
"""

from nodeapi.protocol.composite import (
    FUTURE_EXTENSIONS, Extension, FlatMap, FlatSet, Initialized, Optional, StaticVariant, Struct,
    Vector)
from nodeapi.protocol.serialize import BYTES, INT64, STRING, UINT8, UINT16, UINT32, UINT64, VOID
from nodeapi.protocol.graphene_types import ADDRESS, OBJECT_ID, PUBLIC_KEY, VOTE_ID, ObjectIdType
from nodeapi.protocol.config import CORE_ASSET, MAX_SHARE_SUPPLY

# Typed object ids (space 1, protocol objects).
ACCOUNT_ID = ObjectIdType(1, 2)
ASSET_ID = ObjectIdType(1, 3)
FORCE_SETTLEMENT_ID = ObjectIdType(1, 4)
COMMITTEE_MEMBER_ID = ObjectIdType(1, 5)
WITNESS_ID = ObjectIdType(1, 6)
LIMIT_ORDER_ID = ObjectIdType(1, 7)
CALL_ORDER_ID = ObjectIdType(1, 8)
CUSTOM_ID = ObjectIdType(1, 9)
PROPOSAL_ID = ObjectIdType(1, 10)
OPERATION_HISTORY_ID = ObjectIdType(1, 11)
WITHDRAW_PERMISSION_ID = ObjectIdType(1, 12)
VESTING_BALANCE_ID = ObjectIdType(1, 13)
WORKER_ID = ObjectIdType(1, 14)
BALANCE_ID = ObjectIdType(1, 15)
HTLC_ID = ObjectIdType(1, 16)
CUSTOM_AUTHORITY_ID = ObjectIdType(1, 17)
TICKET_ID = ObjectIdType(1, 18)
LIQUIDITY_POOL_ID = ObjectIdType(1, 19)
SAMET_FUND_ID = ObjectIdType(1, 20)
CREDIT_OFFER_ID = ObjectIdType(1, 21)
CREDIT_DEAL_ID = ObjectIdType(1, 22)

SHARE = INT64  # share_type

ASSET = Struct("asset", [("amount", SHARE), ("asset_id", ASSET_ID)])
PRICE = Struct("price", [("base", ASSET), ("quote", ASSET)])

AUTHORITY = Struct("authority", [
    ("weight_threshold", UINT32),
    ("account_auths", FlatMap(ACCOUNT_ID, UINT16)),
    ("key_auths", FlatMap(PUBLIC_KEY, UINT16)),
    ("address_auths", FlatMap(ADDRESS, UINT16)),
])

MEMO = Struct("memo_data", [
    ("from", PUBLIC_KEY),
    ("to", PUBLIC_KEY),
    ("nonce", UINT64),
    ("message", BYTES),
])

ACCOUNT_OPTIONS = Struct("account_options", [
    ("memo_key", PUBLIC_KEY),
    ("voting_account", Initialized(ACCOUNT_ID, "1.2.5")),  # GRAPHENE_PROXY_TO_SELF_ACCOUNT
    ("num_witness", UINT16),
    ("num_committee", UINT16),
    ("votes", FlatSet(VOTE_ID)),
    # extensions_type (protocol/account.hpp, 7.x): read and written as an
    # array like every future_extensions field
    ("extensions", FUTURE_EXTENSIONS),
])

SPECIAL_AUTHORITY = StaticVariant("special_authority", [
    VOID,  # no_special_authority
    Struct("top_holders_special_authority", [("asset", ASSET_ID), ("num_top_holders", UINT8)]),
], ["no_special_authority", "top_holders_special_authority"])

BUYBACK_OPTIONS = Struct("buyback_account_options", [
    ("asset_to_buy", ASSET_ID),
    ("asset_to_buy_issuer", ACCOUNT_ID),
    ("markets", FlatSet(ASSET_ID)),
])

ASSET_OPTIONS = Struct("asset_options", [
    ("max_supply", Initialized(SHARE, MAX_SHARE_SUPPLY)),
    ("market_fee_percent", UINT16),
    ("max_market_fee", Initialized(SHARE, MAX_SHARE_SUPPLY)),
    # DEFAULT_UIA_ASSET_ISSUER_PERMISSION (protocol/types.hpp): charge_market_fee
    # | white_list | override_authority | transfer_restricted | disable_confidential
    ("issuer_permissions", Initialized(UINT16, 0x4F)),
    ("flags", UINT16),
    # price(asset(), asset(0, asset_id_type(1))) (asset_ops.hpp)
    ("core_exchange_rate", Initialized(PRICE, {"base": {"amount": 0, "asset_id": CORE_ASSET},
                                               "quote": {"amount": 0, "asset_id": "1.3.1"}})),
    ("whitelist_authorities", FlatSet(ACCOUNT_ID)),
    ("blacklist_authorities", FlatSet(ACCOUNT_ID)),
    ("whitelist_markets", FlatSet(ASSET_ID)),
    ("blacklist_markets", FlatSet(ASSET_ID)),
    ("description", STRING),
    ("extensions", Extension("additional_asset_options", [
        ("reward_percent", UINT16),
        ("whitelist_market_fee_sharing", FlatSet(ACCOUNT_ID)),
        ("taker_fee_percent", UINT16),
    ])),
])

BITASSET_OPTIONS = Struct("bitasset_options", [
    ("feed_lifetime_sec", Initialized(UINT32, 86400)),  # GRAPHENE_DEFAULT_PRICE_FEED_LIFETIME
    ("minimum_feeds", Initialized(UINT8, 1)),
    ("force_settlement_delay_sec", Initialized(UINT32, 86400)),
    ("force_settlement_offset_percent", UINT16),
    ("maximum_force_settlement_volume", Initialized(UINT16, 2000)),  # 20 percent
    ("short_backing_asset", ASSET_ID),
    ("extensions", Extension("bitasset_options::ext", [
        ("initial_collateral_ratio", UINT16),
        ("maintenance_collateral_ratio", UINT16),
        ("maximum_short_squeeze_ratio", UINT16),
        ("margin_call_fee_ratio", UINT16),
        ("force_settle_fee_percent", UINT16),
        ("black_swan_response_method", UINT8),
    ])),
])

PRICE_FEED = Struct("price_feed", [
    ("settlement_price", PRICE),
    # GRAPHENE_DEFAULT_MAINTENANCE_COLLATERAL_RATIO, GRAPHENE_DEFAULT_MAX_SHORT_SQUEEZE_RATIO
    ("maintenance_collateral_ratio", Initialized(UINT16, 1750)),
    ("maximum_short_squeeze_ratio", Initialized(UINT16, 1500)),
    ("core_exchange_rate", PRICE),
])

# operation_result (base.hpp): void_result, object_id_type, asset,
# generic_operation_result, generic_exchange_operation_result,
# extendable_operation_result.
OPERATION_RESULT = StaticVariant("operation_result", [
    VOID,
    OBJECT_ID,
    ASSET,
    Struct("generic_operation_result", [
        ("new_objects", FlatSet(OBJECT_ID)),
        ("updated_objects", FlatSet(OBJECT_ID)),
        ("removed_objects", FlatSet(OBJECT_ID)),
    ]),
    Struct("generic_exchange_operation_result", [
        ("paid", Vector(ASSET)),
        ("received", Vector(ASSET)),
        ("fees", Vector(ASSET)),
    ]),
    Extension("extendable_operation_result_dtl", [
        ("impacted_accounts", FlatSet(ACCOUNT_ID)),
        ("new_objects", FlatSet(OBJECT_ID)),
        ("updated_objects", FlatSet(OBJECT_ID)),
        ("removed_objects", FlatSet(OBJECT_ID)),
        ("paid", Vector(ASSET)),
        ("received", Vector(ASSET)),
        ("fees", Vector(ASSET)),
    ]),
], ["void_result", "object_id_type", "asset", "generic_operation_result",
    "generic_exchange_operation_result", "extendable_operation_result"])
