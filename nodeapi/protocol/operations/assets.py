"""Asset operations.

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/asset_ops.hpp``
(``FC_REFLECT`` order): asset_create (10) with ``bitasset_opts``,
asset_update (11) with ``new_precision`` / ``skip_core_exchange_rate``,
asset_update_bitasset (12), asset_update_feed_producers (13), asset_issue
(14), asset_reserve (15), asset_fund_fee_pool (16), asset_settle (17),
asset_global_settle (18), asset_publish_feed (19) with
``initial_collateral_ratio``, asset_settle_cancel (42, virtual),
asset_claim_fees (43) with ``claim_from_asset_id``, asset_claim_pool (47)
and asset_update_issuer (48).  The asset/bitasset options structs are in
:mod:`nodeapi.protocol.types`.
"""

from nodeapi.protocol.composite import Extension, FlatSet, Optional
from nodeapi.protocol.operations.common import EXT, FEE, op
from nodeapi.protocol.serialize import BOOL, STRING, UINT8, UINT16
from nodeapi.protocol.types import (
    ACCOUNT_ID, ASSET, ASSET_ID, ASSET_OPTIONS, BITASSET_OPTIONS, FORCE_SETTLEMENT_ID, MEMO,
    PRICE, PRICE_FEED, SHARE)

OPERATIONS = {
    10: ("asset_create", op("asset_create", [
        FEE, ("issuer", ACCOUNT_ID), ("symbol", STRING), ("precision", UINT8),
        ("common_options", ASSET_OPTIONS), ("bitasset_opts", Optional(BITASSET_OPTIONS)),
        ("is_prediction_market", BOOL), EXT])),
    11: ("asset_update", op("asset_update", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_to_update", ASSET_ID),
        ("new_issuer", Optional(ACCOUNT_ID)), ("new_options", ASSET_OPTIONS),
        ("extensions", Extension("asset_update_operation::ext", [
            ("new_precision", UINT8),
            ("skip_core_exchange_rate", BOOL),
        ]))])),
    12: ("asset_update_bitasset", op("asset_update_bitasset", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_to_update", ASSET_ID),
        ("new_options", BITASSET_OPTIONS), EXT])),
    13: ("asset_update_feed_producers", op("asset_update_feed_producers", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_to_update", ASSET_ID),
        ("new_feed_producers", FlatSet(ACCOUNT_ID)), EXT])),
    14: ("asset_issue", op("asset_issue", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_to_issue", ASSET),
        ("issue_to_account", ACCOUNT_ID), ("memo", Optional(MEMO)), EXT])),
    15: ("asset_reserve", op("asset_reserve", [
        FEE, ("payer", ACCOUNT_ID), ("amount_to_reserve", ASSET), EXT])),
    16: ("asset_fund_fee_pool", op("asset_fund_fee_pool", [
        FEE, ("from_account", ACCOUNT_ID), ("asset_id", ASSET_ID), ("amount", SHARE), EXT])),
    17: ("asset_settle", op("asset_settle", [
        FEE, ("account", ACCOUNT_ID), ("amount", ASSET), EXT])),
    18: ("asset_global_settle", op("asset_global_settle", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_to_settle", ASSET_ID), ("settle_price", PRICE),
        EXT])),
    19: ("asset_publish_feed", op("asset_publish_feed", [
        FEE, ("publisher", ACCOUNT_ID), ("asset_id", ASSET_ID), ("feed", PRICE_FEED),
        ("extensions", Extension("asset_publish_feed_operation::ext", [
            ("initial_collateral_ratio", UINT16),
        ]))])),
    42: ("asset_settle_cancel", op("asset_settle_cancel", [  # virtual
        FEE, ("settlement", FORCE_SETTLEMENT_ID), ("account", ACCOUNT_ID), ("amount", ASSET)])),
    43: ("asset_claim_fees", op("asset_claim_fees", [
        FEE, ("issuer", ACCOUNT_ID), ("amount_to_claim", ASSET),
        ("extensions", Extension("asset_claim_fees_operation::additional_options_type", [
            ("claim_from_asset_id", ASSET_ID),
        ]))])),
    47: ("asset_claim_pool", op("asset_claim_pool", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_id", ASSET_ID), ("amount_to_claim", ASSET), EXT])),
    48: ("asset_update_issuer", op("asset_update_issuer", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_to_update", ASSET_ID),
        ("new_issuer", ACCOUNT_ID), EXT])),
}
