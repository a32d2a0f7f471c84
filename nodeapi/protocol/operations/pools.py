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
