"""Market operations: limit orders, margin positions and collateral bids.

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/market.hpp``
(``FC_REFLECT`` order): limit_order_create (1) with its ``on_fill``
extension (``limit_order_auto_action``: take-profit orders, core 7.0),
limit_order_cancel (2), call_order_update (3) with
``target_collateral_ratio``, fill_order (4, virtual), bid_collateral (45),
execute_bid (46, virtual) and limit_order_update (77).
"""

from nodeapi.protocol.composite import (
    Extension, Initialized, Optional, StaticVariant, Struct, Vector)
from nodeapi.protocol.operations.common import EXT, FEE, op, zero_fee
from nodeapi.protocol.serialize import BOOL, TIME, UINT16, UINT32, Bool
from nodeapi.protocol.graphene_types import OBJECT_ID
from nodeapi.protocol.types import ACCOUNT_ID, ASSET, ASSET_ID, LIMIT_ORDER_ID, PRICE
from nodeapi.protocol import validation_checks as c
from nodeapi.protocol.config import BLOCKCHAIN_PRECISION as P
from nodeapi.protocol.serialize import UINT64
from nodeapi.protocol.validation_checks import amount, check, checked_fee, extensions_of, fee_non_negative

CREATE_TAKE_PROFIT_ORDER_ACTION = Struct("create_take_profit_order_action", [
    ("fee_asset_id", ASSET_ID),
    ("spread_percent", UINT16),
    ("size_percent", UINT16),
    ("expiration_seconds", UINT32),
    ("repeat", BOOL),
    EXT,
])

#: ``limit_order_auto_action`` = static_variant<create_take_profit_order_action>
LIMIT_ORDER_AUTO_ACTION = StaticVariant(
    "limit_order_auto_action", [CREATE_TAKE_PROFIT_ORDER_ACTION],
    ["create_take_profit_order_action"])

ON_FILL = Optional(Vector(LIMIT_ORDER_AUTO_ACTION))

OPERATIONS = {
    1: ("limit_order_create", op("limit_order_create", [
        FEE, ("seller", ACCOUNT_ID), ("amount_to_sell", ASSET), ("min_to_receive", ASSET),
        # time_point_sec::maximum() (market.hpp)
        ("expiration", Initialized(TIME, "2106-02-07T06:28:15")), ("fill_or_kill", BOOL),
        ("extensions", Extension("limit_order_create_operation::options_type", [
            ("on_fill", Vector(LIMIT_ORDER_AUTO_ACTION)),
        ]))])),
    2: ("limit_order_cancel", op("limit_order_cancel", [
        FEE, ("fee_paying_account", ACCOUNT_ID), ("order", LIMIT_ORDER_ID), EXT])),
    3: ("call_order_update", op("call_order_update", [
        FEE, ("funding_account", ACCOUNT_ID), ("delta_collateral", ASSET),
        ("delta_debt", ASSET),
        ("extensions", Extension("call_order_update_operation::options_type", [
            ("target_collateral_ratio", UINT16),
        ]))])),
    # virtual: made by the chain, never signed; is_maker was added later
    # (older history has none), graphene's default is true
    4: ("fill_order", op("fill_order", [
        FEE, ("order_id", OBJECT_ID), ("account_id", ACCOUNT_ID), ("pays", ASSET),
        ("receives", ASSET), ("fill_price", PRICE), ("is_maker", Bool(default=True))])),
    45: ("bid_collateral", op("bid_collateral", [
        FEE, ("bidder", ACCOUNT_ID), ("additional_collateral", ASSET),
        ("debt_covered", ASSET), EXT])),
    46: ("execute_bid", op("execute_bid", [  # virtual
        FEE, ("bidder", ACCOUNT_ID), ("debt", ASSET), ("collateral", ASSET)])),
    77: ("limit_order_update", op("limit_order_update", [
        FEE, ("seller", ACCOUNT_ID), ("order", LIMIT_ORDER_ID),
        ("new_price", Optional(PRICE)), ("delta_amount_to_sell", Optional(ASSET)),
        ("new_expiration", Optional(TIME)), ("on_fill", ON_FILL), EXT])),
}


# -- validate(): each type's own rules (bitshares-core libraries/protocol/*.cpp) --


def _limit_order_create(d):
    check(d["amount_to_sell"]["asset_id"] != d["min_to_receive"]["asset_id"],
          "amount_to_sell.asset_id != min_to_receive.asset_id")
    fee_non_negative(d)
    check(amount(d["amount_to_sell"]) > 0, "amount_to_sell.amount > 0")
    check(amount(d["min_to_receive"]) > 0, "min_to_receive.amount > 0")
    c.take_profit_actions(extensions_of(d).get("on_fill"))


def _call_order_update(d):
    fee_non_negative(d)
    check(d["delta_collateral"]["asset_id"] != d["delta_debt"]["asset_id"],
          "delta_collateral.asset_id != delta_debt.asset_id")
    check(amount(d["delta_collateral"]) != 0 or amount(d["delta_debt"]) != 0,
          "delta_collateral.amount != 0 || delta_debt.amount != 0")


def _bid_collateral(d):
    checked_fee(d, "")
    debt, collateral = amount(d["debt_covered"]), amount(d["additional_collateral"])
    check(debt == 0 or (debt > 0 and collateral > 0),
          "debt_covered.amount == 0 || (debt_covered.amount > 0 && "
          "additional_collateral.amount > 0)")


def _limit_order_update(d):
    checked_fee(d, "Fee must not be negative")
    check(any(d.get(k) is not None for k in ("new_price", "delta_amount_to_sell",
                                             "new_expiration", "on_fill")),
          "new_price || delta_amount_to_sell || new_expiration || on_fill",
          "Cannot update limit order if nothing is specified to update")
    if d.get("new_price") is not None:
        c.price(d["new_price"])
    if d.get("delta_amount_to_sell") is not None:
        check(amount(d["delta_amount_to_sell"]) != 0, "delta_amount_to_sell->amount != 0",
              "Cannot change limit order amount by zero")
    c.take_profit_actions(d.get("on_fill"))


#: type -> ``rule(data)``: the operation's ``validate()`` (virtual operations have none)
VALIDATE = {
    1: _limit_order_create,
    2: fee_non_negative,
    3: _call_order_update,
    45: _bid_collateral,
    77: _limit_order_update,
}

#: type -> its ``fee_params_t``: ``(field, wire type, default)`` in reflection order
#: (bitshares-core protocol/*.hpp; defaults in core satoshis, ``P`` = GRAPHENE_BLOCKCHAIN_PRECISION)
FEE_PARAMETERS = {
    1: [("fee", UINT64, 5 * P)],
    2: [("fee", UINT64, 0)],
    3: [("fee", UINT64, 20 * P)],
    4: [],
    45: [("fee", UINT64, 20 * P)],
    46: [],
    77: [("fee", UINT64, (P * 3) // 8)],
}


#: type -> the field naming the fee payer, or ``"="`` + a fixed account id
#: (each operation's ``fee_payer()``, bitshares-core
#: libraries/protocol/include/graphene/protocol/market.hpp)
FEE_PAYER = {
    1: "seller", 2: "fee_paying_account", 3: "funding_account", 4: "account_id",
    45: "bidder", 46: "bidder", 77: "seller",
}

#: type -> :class:`~nodeapi.protocol.operations.common.Impacted` (bitshares-core
#: libraries/chain/db_notify.cpp ``get_impacted_account_visitor``); types not
#: listed impact their fee payer and required authorities only
IMPACTED: dict = {}


#: type -> ``fee(data, params, context)``: the operation's ``calculate_fee``
#: (bitshares-core libraries/protocol/market.hpp, asset_ops.hpp: the virtual
#: fill_order and execute_bid); types not listed pay their flat ``fee``
#: (:mod:`~nodeapi.protocol.operations.common`)
CALCULATE_FEE = {4: zero_fee, 46: zero_fee}

#: type -> ``rule(data, active, owner)``: the account ids whose active /
#: owner authority the operation needs besides its fee payer's active
#: (``get_required_active_authorities`` /
#: ``get_required_owner_authorities``)
REQUIRED_AUTHORITIES: dict = {}

#: type -> ``rule(data) -> [authority]``: the authorities it needs besides
#: accounts' (``get_required_authorities``)
OTHER_AUTHORITIES: dict = {}
