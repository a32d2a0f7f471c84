"""Accounts and assets by name, symbol or id, for every API set.

Graphene reference: bitshares-core libraries/app/database_api_helper.cpp
(``get_account_from_string`` / ``get_asset_from_string``: an argument whose
first character is a digit is an object id, anything else a name or symbol;
"no such account" / "no such asset").  The ``find_*`` functions answer None
for anything unknown or malformed; the ``get_*`` functions raise
:class:`~nodeapi.errors.ApiError`.
"""

from nodeapi.errors import ApiError
from nodeapi.protocol.errors import InvalidObjectId
from nodeapi.protocol.ids import ObjectId


def _find(state, text, space: int, kind: int, by_name: dict) -> dict | None:
    """The object of type ``space.kind`` named ``text`` (a key of
    ``by_name``) or with the id ``text`` (a leading digit means an id)."""
    if not isinstance(text, str) or not text:
        return None
    if text[0].isdigit():
        try:
            oid = ObjectId.parse(text)
        except InvalidObjectId:
            return None
        if not oid.is_type(space, kind):
            return None
        return state.objects.get(str(oid))
    oid = by_name.get(text)
    return state.objects.get(oid) if oid else None


def _found(obj: dict | None, noun: str, text) -> dict:
    if obj is None:
        raise ApiError(f"no such {noun}: {text!r}")
    return obj


def find_account(state, name_or_id) -> dict | None:
    """The account for a name or ``1.2.N`` id, or None (graphene
    ``get_account_from_string(.., false)``)."""
    return _find(state, name_or_id, 1, 2, state.account_by_name)


def get_account(state, name_or_id) -> dict:
    """Like :func:`find_account`; raises ``ApiError("no such account ...")``."""
    return _found(find_account(state, name_or_id), "account", name_or_id)


def find_asset(state, symbol_or_id) -> dict | None:
    """The asset for a symbol or ``1.3.N`` id, or None."""
    return _find(state, symbol_or_id, 1, 3, state.asset_by_symbol)


def get_asset(state, symbol_or_id) -> dict:
    """Like :func:`find_asset`; raises ``ApiError("no such asset ...")``."""
    return _found(find_asset(state, symbol_or_id), "asset", symbol_or_id)
