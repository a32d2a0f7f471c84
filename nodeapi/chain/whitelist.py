"""Account white and black lists of assets: graphene ``is_authorized_asset``
(libraries/chain/is_authorized_asset.cpp, include/graphene/chain/
is_authorized_asset.hpp), with every hardfork passed.

An asset with the ``white_list`` flag (0x02) authorizes an account unless
one of the account's blacklisting accounts is among the asset's
``blacklist_authorities``; when the asset names ``whitelist_authorities``,
one of the account's whitelisting accounts must be among them.  The
account lists are kept by account_whitelist (7) on the listed account
(``whitelisting_accounts`` / ``blacklisting_accounts``).  An asset without
the flag authorizes everyone.
"""

from nodeapi.protocol.flags import WHITE_LIST


def is_authorized_asset(state, account_id: str, asset: dict) -> bool:
    """Whether ``account_id`` may hold and transact ``asset`` (module
    docstring)."""
    options = asset["options"]
    if not int(options.get("flags", 0)) & WHITE_LIST:
        return True
    account = state.objects[account_id]
    allowed = account.get("allowed_assets")
    if allowed is not None and asset["id"] not in allowed:
        return False
    blacklist = set(options.get("blacklist_authorities") or ())
    if blacklist.intersection(account.get("blacklisting_accounts") or ()):
        return False
    whitelist = set(options.get("whitelist_authorities") or ())
    if not whitelist:
        return True
    return bool(whitelist.intersection(account.get("whitelisting_accounts") or ()))
