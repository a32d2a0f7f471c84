"""The operation table: every bitshares-core 7.x operation by type number.

Reference: the ``operation`` static_variant of bitshares-core
``libraries/protocol/include/graphene/protocol/operations.hpp`` (types
0..77 in that order).  Each family module contributes
``{type: (name, struct)}``; this module joins them, checks that the table
is complete and registers it with the ``operation`` wire type.
"""

from nodeapi.protocol.operations import (
    accounts, assets, blind, credit, custom, custom_authorities, governance, htlc, market,
    pools, transfers)
from nodeapi.protocol.operations.variant import register

#: type number -> (name, struct); names without the ``_operation`` suffix
OPERATIONS: dict = {}
for _family in (transfers, market, accounts, assets, governance, custom, blind, htlc,
                custom_authorities, pools, credit):
    for _number, _entry in _family.OPERATIONS.items():
        assert _number not in OPERATIONS, _number
        OPERATIONS[_number] = _entry
OPERATIONS = dict(sorted(OPERATIONS.items()))
assert list(OPERATIONS) == list(range(78)), sorted(set(range(78)) - set(OPERATIONS))

#: operation name -> type number
OPERATION_IDS = {name: number for number, (name, _s) in OPERATIONS.items()}

#: virtual operations (made by the chain, never in a signed transaction;
#: graphene ``is_virtual_operation``)
VIRTUAL_OPERATIONS = frozenset(
    OPERATION_IDS[name] for name in (
        "fill_order", "asset_settle_cancel", "fba_distribute", "execute_bid",
        "htlc_redeemed", "htlc_refund", "credit_deal_expired"))

register(OPERATIONS)
