"""SameT funds (64-68) and credit offers/deals (69-74, 76).

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/``
``samet_fund.hpp`` and ``credit_offer.hpp`` (``FC_REFLECT`` order);
credit_deal_expired (74) is virtual; credit_offer_accept's ``auto_repay``
extension and credit_deal_update (76) came with core 7.0.
"""

from nodeapi.protocol.composite import Extension, FlatMap, Optional
from nodeapi.protocol.operations.common import EXT, FEE, op
from nodeapi.protocol.serialize import BOOL, TIME, UINT8, UINT32
from nodeapi.protocol.types import (
    ACCOUNT_ID, ASSET, ASSET_ID, CREDIT_DEAL_ID, CREDIT_OFFER_ID, PRICE, SAMET_FUND_ID, SHARE)

ACCEPTABLE_COLLATERAL = FlatMap(ASSET_ID, PRICE)
ACCEPTABLE_BORROWERS = FlatMap(ACCOUNT_ID, SHARE)

OPERATIONS = {
    64: ("samet_fund_create", op("samet_fund_create", [
        FEE, ("owner_account", ACCOUNT_ID), ("asset_type", ASSET_ID), ("balance", SHARE),
        ("fee_rate", UINT32), EXT])),
    65: ("samet_fund_delete", op("samet_fund_delete", [
        FEE, ("owner_account", ACCOUNT_ID), ("fund_id", SAMET_FUND_ID), EXT])),
    66: ("samet_fund_update", op("samet_fund_update", [
        FEE, ("owner_account", ACCOUNT_ID), ("fund_id", SAMET_FUND_ID),
        ("delta_amount", Optional(ASSET)), ("new_fee_rate", Optional(UINT32)), EXT])),
    67: ("samet_fund_borrow", op("samet_fund_borrow", [
        FEE, ("borrower", ACCOUNT_ID), ("fund_id", SAMET_FUND_ID), ("borrow_amount", ASSET),
        EXT])),
    68: ("samet_fund_repay", op("samet_fund_repay", [
        FEE, ("account", ACCOUNT_ID), ("fund_id", SAMET_FUND_ID), ("repay_amount", ASSET),
        ("fund_fee", ASSET), EXT])),
    69: ("credit_offer_create", op("credit_offer_create", [
        FEE, ("owner_account", ACCOUNT_ID), ("asset_type", ASSET_ID), ("balance", SHARE),
        ("fee_rate", UINT32), ("max_duration_seconds", UINT32), ("min_deal_amount", SHARE),
        ("enabled", BOOL), ("auto_disable_time", TIME),
        ("acceptable_collateral", ACCEPTABLE_COLLATERAL),
        ("acceptable_borrowers", ACCEPTABLE_BORROWERS), EXT])),
    70: ("credit_offer_delete", op("credit_offer_delete", [
        FEE, ("owner_account", ACCOUNT_ID), ("offer_id", CREDIT_OFFER_ID), EXT])),
    71: ("credit_offer_update", op("credit_offer_update", [
        FEE, ("owner_account", ACCOUNT_ID), ("offer_id", CREDIT_OFFER_ID),
        ("delta_amount", Optional(ASSET)), ("fee_rate", Optional(UINT32)),
        ("max_duration_seconds", Optional(UINT32)), ("min_deal_amount", Optional(SHARE)),
        ("enabled", Optional(BOOL)), ("auto_disable_time", Optional(TIME)),
        ("acceptable_collateral", Optional(ACCEPTABLE_COLLATERAL)),
        ("acceptable_borrowers", Optional(ACCEPTABLE_BORROWERS)), EXT])),
    72: ("credit_offer_accept", op("credit_offer_accept", [
        FEE, ("borrower", ACCOUNT_ID), ("offer_id", CREDIT_OFFER_ID),
        ("borrow_amount", ASSET), ("collateral", ASSET), ("max_fee_rate", UINT32),
        ("min_duration_seconds", UINT32),
        ("extensions", Extension("credit_offer_accept_operation::ext", [
            ("auto_repay", UINT8),
        ]))])),
    73: ("credit_deal_repay", op("credit_deal_repay", [
        FEE, ("account", ACCOUNT_ID), ("deal_id", CREDIT_DEAL_ID), ("repay_amount", ASSET),
        ("credit_fee", ASSET), EXT])),
    74: ("credit_deal_expired", op("credit_deal_expired", [  # virtual
        FEE, ("deal_id", CREDIT_DEAL_ID), ("offer_id", CREDIT_OFFER_ID),
        ("offer_owner", ACCOUNT_ID), ("borrower", ACCOUNT_ID), ("unpaid_amount", ASSET),
        ("collateral", ASSET), ("fee_rate", UINT32)])),
    76: ("credit_deal_update", op("credit_deal_update", [
        FEE, ("account", ACCOUNT_ID), ("deal_id", CREDIT_DEAL_ID), ("auto_repay", UINT8),
        EXT])),
}
