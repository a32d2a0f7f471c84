"""Account white and black lists of assets: graphene ``is_authorized_asset``
(libraries/chain/is_authorized_asset.cpp, include/graphene/chain/
is_authorized_asset.hpp), with every hardfork passed.

The fast path: an asset without the ``white_list`` flag (0x02) authorizes
every account that has no ``allowed_assets`` (only buyback accounts have
one).  Otherwise, in the reference's order:

- the committee account (1.2.0) is always authorized (BSIP 86);
- an account with ``allowed_assets`` (a buyback account) is refused every
  asset not among them, and must still pass the lists below;
- one of the account's blacklisting accounts among the asset's
  ``blacklist_authorities`` refuses it;
- an asset without ``whitelist_authorities`` authorizes it; with them, one
  of the account's whitelisting accounts must be among them.

The account lists are kept by account_whitelist (7) on the listed account
(``whitelisting_accounts`` / ``blacklisting_accounts``).
"""

from nodeapi.protocol.config import COMMITTEE_ACCOUNT
from nodeapi.protocol.flags import WHITE_LIST


def is_authorized_asset(state, account_id: str, asset: dict) -> bool:
    """Whether ``account_id`` may hold and transact ``asset`` (an asset
    object; module docstring for the order of the checks)."""
    options = asset["options"]
    account = state.objects[account_id]
    allowed = account.get("allowed_assets")
    if not int(options.get("flags", 0)) & WHITE_LIST and allowed is None:
        return True
    if account_id == COMMITTEE_ACCOUNT:
        return True
    if allowed is not None and asset["id"] not in allowed:
        return False
    blacklist = set(options.get("blacklist_authorities") or ())
    if blacklist.intersection(account.get("blacklisting_accounts") or ()):
        return False
    whitelist = set(options.get("whitelist_authorities") or ())
    if not whitelist:
        return True
    return bool(whitelist.intersection(account.get("whitelisting_accounts") or ()))
