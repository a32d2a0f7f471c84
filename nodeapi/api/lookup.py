"""Accounts and assets by name, symbol or id, for every API set.

Graphene reference: bitshares-core libraries/app/database_api_helper.cpp
(``get_account_from_string`` / ``get_asset_from_string``: an argument whose
first character is a digit is an object id, anything else a name or symbol;
"no such account" / "no such asset").  The ``find_*`` functions answer None
for anything unknown or malformed; the ``get_*`` functions raise
:class:`~nodeapi.errors.ApiError`.  The rule itself is the chain's
(:meth:`nodeapi.chain.state.ObjectStore.account_by_name_or_id`), shared by
the evaluators and every API set.  The refusals are fc's
``assert_exception`` (:class:`~nodeapi.errors.ApiAssert`), as the
reference's.
"""

from nodeapi.errors import ApiAssert


def _found(obj: dict | None, noun: str, text, pointer: str) -> dict:
    """``obj``, or graphene's refusal: ``FC_ASSERT( account_ptr, "no such
    account" )`` (fc's text ``Assert Exception: account_ptr: no such
    account``), or for an empty string ``FC_THROW_EXCEPTION(
    fc::assert_exception, "no such account" )``."""
    if obj is None:
        if text == "":
            raise ApiAssert(f"Assert Exception: no such {noun}")
        raise ApiAssert(f"Assert Exception: {pointer}: no such {noun}")
    return obj


def find_account(state, name_or_id) -> dict | None:
    """The account for a name or ``1.2.N`` id, or None (graphene
    ``get_account_from_string(.., false)``)."""
    return state.account_by_name_or_id(name_or_id)


def get_account(state, name_or_id) -> dict:
    """Like :func:`find_account`; raises :class:`~nodeapi.errors.ApiAssert`
    with graphene's text, ``Assert Exception: account_ptr: no such
    account``."""
    return _found(find_account(state, name_or_id), "account", name_or_id, "account_ptr")


def find_asset(state, symbol_or_id) -> dict | None:
    """The asset for a symbol or ``1.3.N`` id, or None."""
    return state.asset_by_symbol_or_id(symbol_or_id)


def get_asset(state, symbol_or_id) -> dict:
    """Like :func:`find_asset`; raises :class:`~nodeapi.errors.ApiAssert`
    with graphene's text, ``Assert Exception: asset_ptr: no such asset``."""
    return _found(find_asset(state, symbol_or_id), "asset", symbol_or_id, "asset_ptr")
