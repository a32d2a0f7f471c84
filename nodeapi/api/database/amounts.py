"""graphene's decimal strings of amounts and prices, as the market
functions answer them (order book entries; tickers and trade history use the
same forms).

Graphene reference: bitshares-core libraries/app/util.cpp
(``uint128_amount_to_string``, ``price_to_string``,
``price_diff_percent_string``) and
libraries/chain/asset_object.cpp (``amount_to_string``, whose home is
:func:`nodeapi.protocol.asset.amount_to_string`: the chain's error texts use
it too).
"""

from nodeapi.errors import ApiError
from nodeapi.protocol.config import GRAPHENE_100_PERCENT

_INT64_MAX = (1 << 63) - 1
_UINT128_MAX = (1 << 128) - 1


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


def price_diff_percent_string(old_base: int, old_quote: int, new_base: int,
                              new_quote: int) -> str:
    """graphene ``price_diff_percent_string``: the change from the old to
    the new price (both base/quote amounts of one market) in percent, at
    most 2 decimals, rounded toward zero (``"-50"``, ``"33.33"``, ``"0"``).
    A zero amount stands for the extreme price (1 over int64 max, or int64
    max over 1)."""
    def usable(base, quote):
        if base == 0:
            return 1, _INT64_MAX
        if quote == 0:
            return _INT64_MAX, 1
        return base, quote

    old_base, old_quote = usable(old_base, old_quote)
    new_base, new_quote = usable(new_base, new_quote)
    new = new_base * old_quote
    old = old_base * new_quote
    diff = min(abs(new - old) * GRAPHENE_100_PERCENT // old, _UINT128_MAX)
    text = uint_amount_to_string(diff, 2)
    return text if new >= old or text == "0" else "-" + text
