"""The operation table: every bitshares-core 7.x operation by type number.

Reference: the ``operation`` static_variant of bitshares-core
``libraries/protocol/include/graphene/protocol/operations.hpp`` (types
0..77 in that order).  Each family module contributes,
by type number, the operation's ``(name, struct)`` (``OPERATIONS``), its
``validate()`` rule (``VALIDATE``), its fee parameters with their
defaults (``FEE_PARAMETERS``), its fee formula (``CALCULATE_FEE``), its
fee payer (``FEE_PAYER``), the authorities it needs besides the fee
payer's (``REQUIRED_AUTHORITIES``, ``OTHER_AUTHORITIES``) and the
accounts it impacts (``IMPACTED``); this module joins them, checks that
the table is complete and defines the alternatives of the ``operation``
and ``fee_parameters`` wire types (both are recursive: an operation can
carry operations and a fee schedule, so the families use them before they
are complete).
"""

import nodeapi.protocol.operations.accounts as accounts
import nodeapi.protocol.operations.assets as assets
import nodeapi.protocol.operations.blind as blind
import nodeapi.protocol.operations.credit as credit
import nodeapi.protocol.operations.custom as custom
import nodeapi.protocol.operations.custom_authorities as custom_authorities
import nodeapi.protocol.operations.governance as governance
import nodeapi.protocol.operations.htlc as htlc
import nodeapi.protocol.operations.market as market
import nodeapi.protocol.operations.pools as pools
import nodeapi.protocol.operations.transfers as transfers
from nodeapi.protocol.operations.common import zero_fee
from nodeapi.protocol.operations.fee_parameters import FEE_PARAMETERS_VARIANT, fee_params_struct
from nodeapi.protocol.operations.variant import OPERATION

_FAMILIES = (transfers, market, accounts, assets, governance, custom, blind, htlc,
             custom_authorities, pools, credit)


def _join(table: str) -> dict:
    joined: dict = {}
    for family in _FAMILIES:
        for number, entry in getattr(family, table).items():
            assert number not in joined, (table, number)
            joined[number] = entry
    return dict(sorted(joined.items()))


#: type number -> (name, struct); names without the ``_operation`` suffix
OPERATIONS = _join("OPERATIONS")
assert list(OPERATIONS) == list(range(78)), sorted(set(range(78)) - set(OPERATIONS))
#: type number -> ``fee_params_t`` fields ``[(name, wire type, default)]``
FEE_PARAMETER_FIELDS = _join("FEE_PARAMETERS")
assert list(FEE_PARAMETER_FIELDS) == list(OPERATIONS)
#: type number -> wire struct of its ``fee_params_t``
FEE_PARAMETERS = {number: fee_params_struct(OPERATIONS[number][0], fields)
                  for number, fields in FEE_PARAMETER_FIELDS.items()}
OPERATION.define(OPERATIONS)
FEE_PARAMETERS_VARIANT.define([FEE_PARAMETERS[n] for n in FEE_PARAMETERS],
                              [FEE_PARAMETERS[n].name for n in FEE_PARAMETERS])
#: type number -> ``rule(data)``, the operation's ``validate()`` (not for
#: virtual operations)
VALIDATE = _join("VALIDATE")
#: type number -> the field naming the fee payer, or ``"="`` + a fixed account
#: id (the operation's ``fee_payer()``)
FEE_PAYER = _join("FEE_PAYER")
assert list(FEE_PAYER) == list(OPERATIONS)
#: type number -> ``fee(data, params, context)``, the operation's
#: ``calculate_fee`` for the types that do not pay a flat ``fee``
CALCULATE_FEE = _join("CALCULATE_FEE")
#: type number -> ``rule(data, active, owner)`` adding the accounts whose
#: active / owner authority the operation needs besides its fee payer's
REQUIRED_AUTHORITIES = _join("REQUIRED_AUTHORITIES")
#: type number -> ``rule(data) -> [authority]``, the authorities the
#: operation needs besides accounts' (``get_required_authorities``)
OTHER_AUTHORITIES = _join("OTHER_AUTHORITIES")
#: type number -> :class:`~nodeapi.protocol.operations.common.Impacted`, for
#: the types that impact more than their fee payer and required authorities
IMPACTED = _join("IMPACTED")

#: operation name -> type number
OPERATION_IDS = {name: number for number, (name, _s) in OPERATIONS.items()}

#: virtual operations (made by the chain, never in a signed transaction;
#: graphene ``is_virtual_operation``)
VIRTUAL_OPERATIONS = frozenset(
    OPERATION_IDS[name] for name in (
        "fill_order", "asset_settle_cancel", "fba_distribute", "execute_bid",
        "htlc_redeemed", "htlc_refund", "credit_deal_expired"))

assert all(CALCULATE_FEE.get(number) is zero_fee for number in VIRTUAL_OPERATIONS)
