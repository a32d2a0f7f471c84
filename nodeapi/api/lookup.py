"""Accounts and assets by name, symbol or id, for every API set.

Graphene reference: bitshares-core libraries/app/database_api_helper.cpp
(``get_account_from_string`` / ``get_asset_from_string``: an argument whose
first character is a digit is an object id, anything else a name or symbol;
"no such account" / "no such asset").  The ``find_*`` functions answer None
for anything unknown or malformed; the ``get_*`` functions raise
:class:`~nodeapi.errors.ApiError`.
"""

from nodeapi.api.arguments import OBJECT_ID
from nodeapi.errors import ApiError


def find_account(state, name_or_id) -> dict | None:
    """The account for a name or ``1.2.N`` id, or None (graphene
    ``get_account_from_string(.., false)``: a leading digit means an id)."""
    if not isinstance(name_or_id, str) or not name_or_id:
        return None
    if name_or_id[0].isdigit():
        m = OBJECT_ID.match(name_or_id)
        if m is None or m.group(1, 2) != ("1", "2"):
            return None
        return state.objects.get(f"1.2.{int(m.group(3))}")
    oid = state.account_by_name.get(name_or_id)
    return state.objects.get(oid) if oid else None


def get_account(state, name_or_id) -> dict:
    """Like :func:`find_account`; raises ``ApiError("no such account ...")``."""
    account = find_account(state, name_or_id)
    if account is None:
        raise ApiError(f"no such account: {name_or_id!r}")
    return account


def find_asset(state, symbol_or_id) -> dict | None:
    """The asset for a symbol or ``1.3.N`` id, or None."""
    if not isinstance(symbol_or_id, str) or not symbol_or_id:
        return None
    if symbol_or_id[0].isdigit():
        m = OBJECT_ID.match(symbol_or_id)
        if m is None or m.group(1, 2) != ("1", "3"):
            return None
        return state.objects.get(f"1.3.{int(m.group(3))}")
    oid = state.asset_by_symbol.get(symbol_or_id)
    return state.objects.get(oid) if oid else None


def get_asset(state, symbol_or_id) -> dict:
    """Like :func:`find_asset`; raises ``ApiError("no such asset ...")``."""
    asset = find_asset(state, symbol_or_id)
    if asset is None:
        raise ApiError(f"no such asset: {symbol_or_id!r}")
    return asset
