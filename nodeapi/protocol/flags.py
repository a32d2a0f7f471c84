"""The asset issuer permission flags, one home for each bit.

Reference: bitshares-core libraries/protocol/include/graphene/protocol/types.hpp
``enum asset_issuer_permission_flags`` and the masks after it
(``ASSET_ISSUER_PERMISSION_MASK``, ``UIA_ASSET_ISSUER_PERMISSION_MASK``).
An asset's ``options.flags`` and ``options.issuer_permissions`` are ORs of
these bits.
"""

CHARGE_MARKET_FEE = 0x01
WHITE_LIST = 0x02
OVERRIDE_AUTHORITY = 0x04
TRANSFER_RESTRICTED = 0x08
DISABLE_FORCE_SETTLE = 0x10
GLOBAL_SETTLE = 0x20
DISABLE_CONFIDENTIAL = 0x40
WITNESS_FED_ASSET = 0x80
COMMITTEE_FED_ASSET = 0x100
LOCK_MAX_SUPPLY = 0x200
DISABLE_NEW_SUPPLY = 0x400
DISABLE_MCR_UPDATE = 0x800
DISABLE_ICR_UPDATE = 0x1000
DISABLE_MSSR_UPDATE = 0x2000
DISABLE_BSRM_UPDATE = 0x4000
DISABLE_COLLATERAL_BIDDING = 0x8000

#: Every permission bit.
ASSET_ISSUER_PERMISSION_MASK = 0xFFFF
#: The bits a user-issued asset may carry.
UIA_ASSET_ISSUER_PERMISSION_MASK = (CHARGE_MARKET_FEE | WHITE_LIST | OVERRIDE_AUTHORITY
                                    | TRANSFER_RESTRICTED | DISABLE_CONFIDENTIAL
                                    | LOCK_MAX_SUPPLY | DISABLE_NEW_SUPPLY)
#: The bits only market-issued assets may carry.
NON_UIA_ONLY_ISSUER_PERMISSION_MASK = ASSET_ISSUER_PERMISSION_MASK ^ UIA_ASSET_ISSUER_PERMISSION_MASK
#: The "enable" permission bits: set means the issuer may use the feature.
ASSET_ISSUER_PERMISSION_ENABLE_BITS_MASK = (CHARGE_MARKET_FEE | WHITE_LIST | OVERRIDE_AUTHORITY
                                            | TRANSFER_RESTRICTED | DISABLE_FORCE_SETTLE
                                            | GLOBAL_SETTLE | DISABLE_CONFIDENTIAL
                                            | WITNESS_FED_ASSET | COMMITTEE_FED_ASSET)
#: The "disable" permission bits: set means the issuer gave the feature up.
ASSET_ISSUER_PERMISSION_DISABLE_BITS_MASK = (LOCK_MAX_SUPPLY | DISABLE_NEW_SUPPLY
                                             | DISABLE_MCR_UPDATE | DISABLE_ICR_UPDATE
                                             | DISABLE_MSSR_UPDATE | DISABLE_BSRM_UPDATE
                                             | DISABLE_COLLATERAL_BIDDING)


#: The bits only the permissions carry, never the flags.
PERMISSION_ONLY_MASK = (GLOBAL_SETTLE | DISABLE_MCR_UPDATE | DISABLE_ICR_UPDATE
                        | DISABLE_MSSR_UPDATE | DISABLE_BSRM_UPDATE)
#: The bits a market-issued asset's flags may carry.
VALID_FLAGS_MASK = ASSET_ISSUER_PERMISSION_MASK & ~PERMISSION_ONLY_MASK


def enabled_issuer_permissions(permissions: int) -> int:
    """graphene ``asset_options::get_enabled_issuer_permissions_mask``: the
    enable bits that are set and the disable bits that are not."""
    permissions = int(permissions)
    return (permissions & ASSET_ISSUER_PERMISSION_ENABLE_BITS_MASK) \
        | (~permissions & ASSET_ISSUER_PERMISSION_DISABLE_BITS_MASK)
