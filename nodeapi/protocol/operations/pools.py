"""Tickets and liquidity pools: ticket_create (57), ticket_update (58),
liquidity_pool_create (59), _delete (60), _deposit (61), _withdraw (62),
_exchange (63) and _update (75).

Reference: bitshares-core ``libraries/protocol/include/graphene/protocol/``
``ticket.hpp`` (``target_type`` is an ``unsigned_int`` varint) and
``liquidity_pool.hpp`` (``FC_REFLECT`` order).
"""

from nodeapi.protocol.composite import Optional
from nodeapi.protocol.operations.common import EXT, FEE, op
from nodeapi.protocol.serialize import UINT16, VARINT
from nodeapi.protocol.types import ACCOUNT_ID, ASSET, ASSET_ID, LIQUIDITY_POOL_ID, TICKET_ID
from nodeapi.protocol.config import BLOCKCHAIN_PRECISION as P
from nodeapi.protocol.config import CORE_ASSET, GRAPHENE_100_PERCENT
from nodeapi.protocol.ids import instance_number as instance
from nodeapi.protocol.serialize import UINT64
from nodeapi.protocol.validation_checks import amount, check, checked_fee, num, positive_field

OPERATIONS = {
    57: ("ticket_create", op("ticket_create", [
        FEE, ("account", ACCOUNT_ID), ("target_type", VARINT), ("amount", ASSET), EXT])),
    58: ("ticket_update", op("ticket_update", [
        FEE, ("ticket", TICKET_ID), ("account", ACCOUNT_ID), ("target_type", VARINT),
        ("amount_for_new_target", Optional(ASSET)), EXT])),
    59: ("liquidity_pool_create", op("liquidity_pool_create", [
        FEE, ("account", ACCOUNT_ID), ("asset_a", ASSET_ID), ("asset_b", ASSET_ID),
        ("share_asset", ASSET_ID), ("taker_fee_percent", UINT16),
        ("withdrawal_fee_percent", UINT16), EXT])),
    60: ("liquidity_pool_delete", op("liquidity_pool_delete", [
        FEE, ("account", ACCOUNT_ID), ("pool", LIQUIDITY_POOL_ID), EXT])),
    61: ("liquidity_pool_deposit", op("liquidity_pool_deposit", [
        FEE, ("account", ACCOUNT_ID), ("pool", LIQUIDITY_POOL_ID), ("amount_a", ASSET),
        ("amount_b", ASSET), EXT])),
    62: ("liquidity_pool_withdraw", op("liquidity_pool_withdraw", [
        FEE, ("account", ACCOUNT_ID), ("pool", LIQUIDITY_POOL_ID), ("share_amount", ASSET),
        EXT])),
    63: ("liquidity_pool_exchange", op("liquidity_pool_exchange", [
        FEE, ("account", ACCOUNT_ID), ("pool", LIQUIDITY_POOL_ID), ("amount_to_sell", ASSET),
        ("min_to_receive", ASSET), EXT])),
    75: ("liquidity_pool_update", op("liquidity_pool_update", [
        FEE, ("account", ACCOUNT_ID), ("pool", LIQUIDITY_POOL_ID),
        ("taker_fee_percent", Optional(UINT16)), ("withdrawal_fee_percent", Optional(UINT16)),
        EXT])),
}


# -- validate(): each type's own rules (bitshares-core libraries/protocol/*.cpp) --
TICKET_TYPE_COUNT = 5


def _core_only(value: dict, message: str = "Amount must be in BTS so far"):
    check(value["asset_id"] == CORE_ASSET, "amount.asset_id == asset_id_type()", message)


def _ticket_create(d):
    checked_fee(d)
    target = num(d["target_type"])
    check(target != 0, "target_type != liquid", "Target type can not be liquid")
    check(target < TICKET_TYPE_COUNT, "target_type < TICKET_TYPE_COUNT", "Invalid target type")
    check(amount(d["amount"]) > 0, "amount.amount > 0",
          "A positive amount is needed for creating a ticket")
    _core_only(d["amount"])


def _ticket_update(d):
    checked_fee(d)
    check(num(d["target_type"]) < TICKET_TYPE_COUNT, "target_type < TICKET_TYPE_COUNT",
          "Invalid target type")
    new = d.get("amount_for_new_target")
    if new is not None:
        check(amount(new) > 0, "amount_for_new_target->amount > 0", "A positive amount is needed")
        _core_only(new)


def _percent(value, expression: str, message: str):
    check(num(value) <= GRAPHENE_100_PERCENT, f"{expression} <= GRAPHENE_100_PERCENT", message)


def _pool_create(d):
    checked_fee(d)
    check(instance(d["asset_a"]) < instance(d["asset_b"]), "asset_a < asset_b",
          "ID of the first asset should be smaller than ID of the second asset")
    check(d["share_asset"] not in (d["asset_a"], d["asset_b"]),
          "asset_a != share_asset && asset_b != share_asset",
          "Share asset can not be the same as one of the assets in the pool")
    _percent(d.get("taker_fee_percent", 0), "taker_fee_percent",
             "Taker fee percent should not exceed 100%")
    _percent(d.get("withdrawal_fee_percent", 0), "withdrawal_fee_percent",
             "Withdrawal fee percent should not exceed 100%")


def _pool_update(d):
    checked_fee(d)
    taker, withdrawal = d.get("taker_fee_percent"), d.get("withdrawal_fee_percent")
    check(taker is not None or withdrawal is not None,
          "taker_fee_percent.valid() || withdrawal_fee_percent.valid()", "Should update something")
    if taker is not None:
        _percent(taker, "*taker_fee_percent", "Taker fee percent should not exceed 100%")
    if withdrawal is not None:
        check(num(withdrawal) == 0, "0 == *withdrawal_fee_percent",
              "Withdrawal fee percent can only be updated to zero")


def _pool_deposit(d):
    checked_fee(d)
    check(amount(d["amount_a"]) > 0 and amount(d["amount_b"]) > 0,
          "amount_a.amount > 0 && amount_b.amount > 0",
          "Both amounts of the assets should be positive")
    check(instance(d["amount_a"]["asset_id"]) < instance(d["amount_b"]["asset_id"]),
          "amount_a.asset_id < amount_b.asset_id",
          "ID of the first asset should be smaller than ID of the second asset")


def _exchange(d, sell: str):
    checked_fee(d)
    check(amount(d[sell]) > 0, f"{sell}.amount > 0", "Amount to sell should be positive")
    check(amount(d["min_to_receive"]) > 0, "min_to_receive.amount > 0",
          "Minimum amount to receive should be positive")
    check(d[sell]["asset_id"] != d["min_to_receive"]["asset_id"],
          f"{sell}.asset_id != min_to_receive.asset_id",
          "ID of the two assets should not be the same")


#: type -> ``rule(data)``: the operation's ``validate()`` (virtual operations have none)
VALIDATE = {
    57: _ticket_create,
    58: _ticket_update,
    59: _pool_create,
    60: checked_fee,
    61: _pool_deposit,
    62: lambda d: positive_field(d, "share_amount", "Amount of the share asset should be positive"),
    63: lambda d: _exchange(d, "amount_to_sell"),
    75: _pool_update,
}

#: type -> its ``fee_params_t``: ``(field, wire type, default)`` in reflection order
#: (bitshares-core protocol/*.hpp; defaults in core satoshis, ``P`` = GRAPHENE_BLOCKCHAIN_PRECISION)
FEE_PARAMETERS = {
    57: [("fee", UINT64, 50 * P)],
    58: [("fee", UINT64, 50 * P)],
    59: [("fee", UINT64, 50 * P)],
    60: [("fee", UINT64, 0)],
    61: [("fee", UINT64, P // 10)],
    62: [("fee", UINT64, 5 * P)],
    63: [("fee", UINT64, P)],
    75: [("fee", UINT64, P)],
}


#: type -> the field naming the fee payer, or ``"="`` + a fixed account id
#: (each operation's ``fee_payer()``, bitshares-core
#: libraries/protocol/include/graphene/protocol/: ticket.hpp, liquidity_pool.hpp)
FEE_PAYER = {
    57: "account", 58: "account", 59: "account", 60: "account", 61: "account",
    62: "account", 63: "account", 75: "account",
}

#: type -> :class:`~nodeapi.protocol.operations.common.Impacted` (bitshares-core
#: libraries/chain/db_notify.cpp ``get_impacted_account_visitor``); types not
#: listed impact their fee payer and required authorities only
IMPACTED: dict = {}


#: type -> ``fee(data, params, context)``: the operation's ``calculate_fee``
#: (bitshares-core libraries/protocol/ticket.hpp, liquidity_pool.hpp); types
#: not listed pay their flat ``fee``
#: (:mod:`~nodeapi.protocol.operations.common`)
CALCULATE_FEE: dict = {}

#: type -> ``rule(data, active, owner)``: the account ids whose active /
#: owner authority the operation needs besides its fee payer's active
#: (``get_required_active_authorities`` /
#: ``get_required_owner_authorities``)
REQUIRED_AUTHORITIES: dict = {}

#: type -> ``rule(data) -> [authority]``: the authorities it needs besides
#: accounts' (``get_required_authorities``)
OTHER_AUTHORITIES: dict = {}
