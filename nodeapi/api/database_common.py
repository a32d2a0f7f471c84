"""Helpers shared by the database, asset and block API sets: argument
checking (object ids, lists, api-limit options), account and asset lookup by
name/symbol or id, and graphene's amount/price formatting.

Graphene reference: bitshares-core libraries/app/database_api_helper.cpp
(``get_account_from_string`` / ``get_asset_from_string``: an argument whose
first character is a digit is an object id, anything else a name or symbol;
"no such account" / "no such asset"), libraries/app/util.cpp
(``uint128_amount_to_string``, ``price_to_string``) and
libraries/chain/asset_object.cpp (``amount_to_string``).  Every failure raises
:class:`~nodeapi.errors.ApiError` with a message naming the bad argument.
"""

import re

from nodeapi.errors import ApiError, ApiLimitExceeded

_OBJECT_ID = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,15})$")
MAX_INSTANCE = (1 << 48) - 1  # GRAPHENE_MAX_INSTANCE_ID

# Object kinds by "space.type" prefix, for error messages.
KINDS = {
    "1.2": "account", "1.3": "asset", "1.5": "committee member", "1.6": "witness",
    "1.7": "limit order", "1.15": "balance", "2.5": "account balance",
}


def id_key(oid: str) -> tuple:
    """Sort key of an object id string: ``(space, type, instance)`` as ints."""
    a, b, c = oid.split(".")
    return int(a), int(b), int(c)


def parse_object_id(value, what: str = "object id") -> str:
    """``"space.type.instance"`` in canonical form (no leading zeros).

    :raises ApiError: ``value`` is not such a string (graphene
        ``object_id_type`` parsing: space and type 0..255, instance < 2**48).
    """
    m = _OBJECT_ID.match(value) if isinstance(value, str) else None
    if m is None:
        raise ApiError(f"Invalid {what} {value!r}: expected space.type.instance, e.g. 1.2.0")
    space, kind, instance = (int(g) for g in m.groups())
    if space > 255 or kind > 255 or instance > MAX_INSTANCE:
        raise ApiError(f"Invalid {what} {value!r}: number out of range")
    return f"{space}.{kind}.{instance}"


def typed_id(value, space_type: str, what: str) -> str:
    """An object id of kind ``space_type`` (``"1.3"``), canonical.

    :raises ApiError: malformed, or an id of another kind.
    """
    oid = parse_object_id(value, what)
    if oid.rsplit(".", 1)[0] != space_type:
        kind = KINDS.get(space_type, space_type)
        raise ApiError(f"Invalid {what} {value!r}: expected a {kind} id {space_type}.N")
    return oid


def require_list(value, what: str) -> list:
    """``value`` if it is a JSON array, else :class:`ApiError`."""
    if not isinstance(value, list):
        raise ApiError(f"{what} must be an array, got {type(value).__name__}")
    return value


def require_str(value, what: str) -> str:
    """``value`` if it is a string, else :class:`ApiError`."""
    if not isinstance(value, str):
        raise ApiError(f"{what} must be a string, got {value!r}")
    return value


def require_name_or_id(value, what: str) -> str:
    """``value`` if it can name an account or asset: a non-empty string.

    graphene reads these arguments as ``std::string`` (fc fails to convert
    an object or array, and a number would then fail as an object id) and
    ``get_account_from_string`` / ``get_asset_from_string`` assert
    ``name_or_id.size() > 0``.

    :raises ApiError: naming ``what`` and the value.
    """
    if not isinstance(value, str) or not value:
        raise ApiError(f"{what} must be a non-empty name or id string, got {value!r}")
    return value


def optional_bool(value, what: str):
    """``None`` or a boolean (graphene ``optional<bool>``)."""
    if value is not None and not isinstance(value, bool):
        raise ApiError(f"{what} must be true, false or null, got {value!r}")
    return value


def api_limit(node, name: str, default: int) -> int:
    """The configured ``api-limit-<name>`` (``node.limits``), or graphene's
    default for limits :class:`~nodeapi.node.ApiLimits` does not carry."""
    return int(getattr(node.limits, name, default))


def check_limit(limit: int, configured: int) -> int:
    """graphene's ``FC_ASSERT( limit <= configured_limit, "limit can not be
    greater than ${configured_limit}" )``; negative limits are errors too."""
    if limit < 0:
        raise ApiError(f"limit must not be negative, got {limit}")
    if limit > configured:
        raise ApiLimitExceeded(configured)
    return limit


def check_count(count: int, configured: int, noun: str) -> None:
    """graphene's "Number of querying <noun> can not be greater than N"."""
    if count > configured:
        raise ApiError(f"Number of querying {noun} can not be greater than {configured}")


def find_account(state, name_or_id) -> dict | None:
    """The account for a name or ``1.2.N`` id, or None (graphene
    ``get_account_from_string(.., false)``: a leading digit means an id)."""
    if not isinstance(name_or_id, str) or not name_or_id:
        return None
    if name_or_id[0].isdigit():
        m = _OBJECT_ID.match(name_or_id)
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
        m = _OBJECT_ID.match(symbol_or_id)
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


def relevant_accounts(obj: dict) -> set:
    """Accounts an object belongs to (graphene ``get_relevant_accounts`` for
    the objects this chain models): the account itself, a balance's or
    statistics' owner, an order's seller, an asset's issuer, a witness' or
    committee member's account."""
    out = set()
    oid = obj.get("id", "")
    if oid.startswith("1.2."):
        out.add(oid)
    for key in ("owner", "seller", "issuer", "witness_account", "committee_member_account"):
        value = obj.get(key)
        if isinstance(value, str) and value.startswith("1.2."):
            out.add(value)
    return out


# -- formatting (graphene util.cpp / asset_object.cpp) ----------------------------


def amount_to_string(amount: int, precision: int) -> str:
    """graphene ``asset_object::amount_to_string``: ``12345, 3`` -> ``"12.345"``,
    ``12000, 3`` -> ``"12"``; the fraction keeps its trailing zeros
    (``12300, 3`` -> ``"12.300"``)."""
    scale = 10 ** precision
    whole, frac = divmod(abs(int(amount)), scale)
    sign = "-" if amount < 0 else ""
    if not frac:
        return f"{sign}{whole}"
    return f"{sign}{whole}.{frac:0{precision}d}"


def uint_amount_to_string(amount: int, precision: int) -> str:
    """graphene ``uint128_amount_to_string``: like :func:`amount_to_string`
    for non-negative values, with trailing zeros of the fraction removed."""
    text = str(int(amount))
    if precision == 0 or amount == 0:
        return text
    if len(text) > precision:
        whole, frac = text[:-precision], text[-precision:].rstrip("0")
    else:
        whole, frac = "0", ("0" * (precision - len(text)) + text).rstrip("0")
    return f"{whole}.{frac}" if frac else whole


def price_to_string(base_amount: int, quote_amount: int, base_precision: int,
                    quote_precision: int) -> str:
    """graphene ``price_to_string``: the price ``base/quote`` in whole units of
    each asset, as a decimal string with up to 19 + base_precision -
    quote_precision fraction digits (``"0"`` when base is 0)."""
    base_amount, quote_amount = int(base_amount), int(quote_amount)
    if base_amount == 0:
        return "0"
    if base_amount < 0 or quote_amount < 0:
        raise ApiError("Cannot format a negative price")
    if quote_amount == 0:
        base_amount, quote_amount = (1 << 63) - 1, 1
    scaled = base_amount * 10 ** 19 // quote_amount
    return uint_amount_to_string(scaled, 19 + base_precision - quote_precision)
