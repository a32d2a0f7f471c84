"""Amounts and prices of graphene, on their wire forms: the percent rule,
price comparison and ordering, price arithmetic.

An amount (graphene ``asset``) is the wire dict ``{"amount", "asset_id"}``,
made by :func:`asset` (:func:`core` for the core asset) and read by
:func:`amount_of` (its amount may be a decimal string on the wire).  A price is the wire dict ``{"base": {"amount", "asset_id"}, "quote":
{"amount", "asset_id"}}``; it values ``base.amount`` of ``base`` at
``quote.amount`` of ``quote``.  Amounts are integers (satoshis); Python's
integers stand in for graphene's 128/256-bit intermediates.

Reference: bitshares-core libraries/protocol/asset.cpp (``asset * price``,
``multiply_and_round_up``, ``price * ratio_type`` with its shrinking rule,
``price::max``/``min``, the ``price_feed`` prices) and
libraries/chain/asset_object.cpp (``get_initial_collateralization``,
``amount_to_string``).

Feed prices (``price_feed``): ``settlement_price`` is DEBT per COLLATERAL
(base = the market-issued asset); ratios are per mille
(``GRAPHENE_COLLATERAL_RATIO_DENOM`` = 1000).

- MSSP (:func:`max_short_squeeze_price`) = settlement_price / MSSR
- MCOP (:func:`margin_call_order_price`) = settlement_price / (MSSR - MCFR),
  MSSR - MCFR floored at 1.000
- MCPR (:func:`margin_call_pays_ratio`) = (MSSR - MCFR) / MSSR
- maintenance collateralization = ~settlement_price * MCR (COLLATERAL per
  DEBT), initial collateralization likewise with ICR.
"""

from fractions import Fraction

from nodeapi.protocol.errors import InvalidField
from nodeapi.protocol.ids import instance_number
from nodeapi.protocol.config import (
    COLLATERAL_RATIO_DENOM as RATIO_DENOM, CORE_ASSET, DEFAULT_MAINTENANCE_COLLATERAL_RATIO,
    DEFAULT_MAX_SHORT_SQUEEZE_RATIO, GRAPHENE_100_PERCENT, MAX_SHARE_SUPPLY)


def asset(amount: int, asset_id: str) -> dict:
    """graphene ``asset(amount, asset_id)``: ``{"amount", "asset_id"}``
    (``amount`` an integer, kept as given)."""
    return {"amount": amount, "asset_id": asset_id}


def core(amount: int) -> dict:
    """``amount`` satoshis of the core asset (1.3.0), as :func:`asset`."""
    return {"amount": amount, "asset_id": CORE_ASSET}


def amount_of(value: dict) -> int:
    """The integer ``amount`` of an amount dict (wire JSON may carry it as
    a decimal string)."""
    return int(value["amount"])


def make_price(base_amount: int, base_id: str, quote_amount: int, quote_id: str) -> dict:
    """A wire price ``base_amount base_id / quote_amount quote_id``."""
    return {"base": {"amount": int(base_amount), "asset_id": base_id},
            "quote": {"amount": int(quote_amount), "asset_id": quote_id}}


def normal(p: dict) -> dict:
    """``p`` with integer amounts (wire JSON may carry them as strings)."""
    return make_price(p["base"]["amount"], p["base"]["asset_id"],
                      p["quote"]["amount"], p["quote"]["asset_id"])


def null_price() -> dict:
    """graphene ``price()``: 0 of 1.3.0 over 0 of 1.3.0."""
    return make_price(0, CORE_ASSET, 0, CORE_ASSET)


def is_null(p: dict) -> bool:
    """graphene ``price::is_null``: both sides are asset 1.3.0."""
    return p["base"]["asset_id"] == CORE_ASSET and p["quote"]["asset_id"] == CORE_ASSET


def invert(p: dict) -> dict:
    """graphene ``~price``: base and quote swapped."""
    return {"base": p["quote"], "quote": p["base"]}


def value(p: dict) -> Fraction:
    """``base.amount / quote.amount`` exactly (the order graphene compares
    prices of one market by)."""
    return Fraction(int(p["base"]["amount"]), int(p["quote"]["amount"]))


def value_key(p: dict) -> tuple:
    """:func:`value` as a sort key that mostly compares floats:
    ``(base.amount / quote.amount as a float, the exact Fraction)``.
    Python's int true division is correctly rounded, so monotonic: two
    prices whose floats differ are in the order of their exact values, and
    only equal floats fall back to comparing the Fractions (each Fraction
    comparison is a Python call: sorting an order book by Fractions alone
    was a quarter of applying a market's blocks)."""
    base, quote = int(p["base"]["amount"]), int(p["quote"]["amount"])
    return (base / quote, Fraction(base, quote))


def price_key(p: dict) -> tuple:
    """The sort key of graphene's price ``operator<``: base asset, quote
    asset (by instance), then ``base.amount / quote.amount`` (0 for an
    empty quote, which graphene's cross-multiplication ranks lowest)."""
    quote = int(p["quote"]["amount"])
    ratio = Fraction(int(p["base"]["amount"]), quote) if quote else Fraction(0)
    return (instance_number(p["base"]["asset_id"]), instance_number(p["quote"]["asset_id"]), ratio)


def same_market(a: dict, b: dict) -> bool:
    """Whether prices ``a`` and ``b`` have the same base asset and the same
    quote asset (the asset half of graphene's price ``operator==``,
    asset.cpp)."""
    return (a["base"]["asset_id"] == b["base"]["asset_id"]
            and a["quote"]["asset_id"] == b["quote"]["asset_id"])


def ratio_less(a_base: int, a_quote: int, b_base: int, b_quote: int) -> bool:
    """graphene price ``operator<`` for two prices of one market given by
    their amounts: ``a_base/a_quote < b_base/b_quote``, cross-multiplied."""
    return a_base * b_quote < b_base * a_quote


def less(a: dict, b: dict) -> bool:
    """graphene ``a < b`` for two prices of one market (:func:`ratio_less`)."""
    return ratio_less(int(a["base"]["amount"]), int(a["quote"]["amount"]),
                      int(b["base"]["amount"]), int(b["quote"]["amount"]))


def equal(a: dict, b: dict) -> bool:
    """graphene ``a == b``: same assets and the same ratio."""
    return same_market(a, b) and int(a["base"]["amount"]) * int(b["quote"]["amount"]) \
        == int(b["base"]["amount"]) * int(a["quote"]["amount"])


def mul_down(amount: int, asset_id: str, p: dict) -> int:
    """graphene ``asset * price``: ``amount`` of ``asset_id`` (one side of
    ``p``) in the other side's asset, rounded down."""
    base, quote = p["base"], p["quote"]
    if asset_id == base["asset_id"]:
        return int(amount) * int(quote["amount"]) // int(base["amount"])
    if asset_id == quote["asset_id"]:
        return int(amount) * int(base["amount"]) // int(quote["amount"])
    raise ValueError(f"invalid asset * price: {asset_id} is not in {p}")


def mul_up(amount: int, asset_id: str, p: dict) -> int:
    """graphene ``asset::multiply_and_round_up``: as :func:`mul_down`,
    rounded up."""
    base, quote = p["base"], p["quote"]
    if asset_id == base["asset_id"]:
        return -(-int(amount) * int(quote["amount"]) // int(base["amount"]))
    if asset_id == quote["asset_id"]:
        return -(-int(amount) * int(base["amount"]) // int(quote["amount"]))
    raise ValueError(f"invalid asset * price: {asset_id} is not in {p}")


def multiply_and_round_up(value: dict, p: dict) -> dict:
    """graphene ``asset::multiply_and_round_up(price)``: the amount ``value``
    (``{"amount", "asset_id"}``, one side of ``p``) in the other side's
    asset, rounded up.

    :raises InvalidField: ``value``'s asset is on neither side, or the side
        it divides by is not positive (graphene's FC_ASSERTs)."""
    asset_id = value["asset_id"]
    base, quote = p["base"], p["quote"]
    if asset_id == base["asset_id"]:
        divisor, other = base, quote
    elif asset_id == quote["asset_id"]:
        divisor, other = quote, base
    else:
        raise InvalidField(f"invalid asset::multiply_and_round_up(price): {asset_id} is not "
                           f"in the price")
    if int(divisor["amount"]) <= 0:
        raise InvalidField("invalid asset::multiply_and_round_up(price): zero amount")
    return asset(mul_up(value["amount"], asset_id, p), other["asset_id"])


def price_max(base_id: str, quote_id: str) -> dict:
    """graphene ``price::max``: MAX_SHARE_SUPPLY base per 1 quote."""
    return make_price(MAX_SHARE_SUPPLY, base_id, 1, quote_id)


def price_min(base_id: str, quote_id: str) -> dict:
    """graphene ``price::min``: 1 base per MAX_SHARE_SUPPLY quote."""
    return make_price(1, base_id, MAX_SHARE_SUPPLY, quote_id)


def times_ratio(p: dict, num: int, den: int) -> dict:
    """graphene ``price * ratio_type(num, den)``: the exact product reduced
    to lowest terms; when a side exceeds MAX_SHARE_SUPPLY both are halved
    until they fit (or pinned at 1/MAX or MAX/1), then the closer of that
    and the integer approximation is taken, and a result that moved the
    wrong way falls back to ``p`` (asset.cpp)."""
    if num == den:
        return p
    base_id, quote_id = p["base"]["asset_id"], p["quote"]["asset_id"]
    exact = Fraction(int(p["base"]["amount"]) * num, int(p["quote"]["amount"]) * den)
    n, d = exact.numerator, exact.denominator
    shrunk = using_max = False
    while n > MAX_SHARE_SUPPLY or d > MAX_SHARE_SUPPLY:
        if n == 1:
            n, d, using_max = 1, MAX_SHARE_SUPPLY, True
            break
        if d == 1:
            n, d, using_max = MAX_SHARE_SUPPLY, 1, True
            break
        reduced = Fraction(n >> 1, d >> 1)
        n, d, shrunk = reduced.numerator, reduced.denominator, True
    if shrunk:
        en, ed = exact.numerator, exact.denominator
        if en > ed:
            approx = Fraction(min(en // ed, MAX_SHARE_SUPPLY), 1)
        else:
            approx = Fraction(1, min(ed // en, MAX_SHARE_SUPPLY))
        if MAX_SHARE_SUPPLY in (approx.numerator, approx.denominator) \
                or abs(approx - exact) < abs(Fraction(n, d) - exact):
            n, d = approx.numerator, approx.denominator
    result = make_price(n, base_id, d, quote_id)
    if shrunk or using_max:
        flipped = less(result, p) if num > den else less(p, result)
        if flipped:
            result = p
    return result


def divide_ratio(p: dict, num: int, den: int) -> dict:
    """graphene ``price / ratio_type(num, den)``."""
    return times_ratio(p, den, num)


# -- price_feed -------------------------------------------------------------

def default_feed() -> dict:
    """graphene ``price_feed_with_icr()``: null prices, MCR 1750, MSSR 1500,
    ICR = MCR (asset_object.hpp, config.hpp defaults)."""
    return {"settlement_price": null_price(),
            "maintenance_collateral_ratio": DEFAULT_MAINTENANCE_COLLATERAL_RATIO,
            "maximum_short_squeeze_ratio": DEFAULT_MAX_SHORT_SQUEEZE_RATIO,
            "core_exchange_rate": null_price(),
            "initial_collateral_ratio": DEFAULT_MAINTENANCE_COLLATERAL_RATIO}


def max_short_squeeze_price(feed: dict) -> dict:
    """MSSP = settlement_price / MSSR (DEBT per COLLATERAL)."""
    return times_ratio(feed["settlement_price"], RATIO_DENOM,
                       int(feed["maximum_short_squeeze_ratio"]))


def margin_call_order_ratio(feed: dict, mcfr) -> int:
    """The numerator (per mille) of MCOR = MSSR - MCFR, floored at 1000
    (``price_feed::get_margin_call_price_numerator``); ``mcfr`` may be
    None."""
    mssr = int(feed["maximum_short_squeeze_ratio"])
    mcfr = int(mcfr or 0)
    numerator = mssr - mcfr if mcfr < mssr else RATIO_DENOM
    return max(numerator, RATIO_DENOM)


def margin_call_order_price(feed: dict, mcfr) -> dict:
    """MCOP = settlement_price / MCOR (DEBT per COLLATERAL)."""
    return times_ratio(feed["settlement_price"], RATIO_DENOM, margin_call_order_ratio(feed, mcfr))


def margin_call_pays_ratio(feed: dict, mcfr) -> tuple:
    """MCPR = MCOR / MSSR as ``(num, den)``."""
    return margin_call_order_ratio(feed, mcfr), int(feed["maximum_short_squeeze_ratio"])


def maintenance_collateralization(feed: dict) -> dict:
    """~settlement_price * MCR (COLLATERAL per DEBT); null for a null feed."""
    if is_null(feed["settlement_price"]):
        return null_price()
    return times_ratio(invert(feed["settlement_price"]),
                       int(feed["maintenance_collateral_ratio"]), RATIO_DENOM)


def initial_collateralization(feed: dict) -> dict:
    """~settlement_price * ICR (COLLATERAL per DEBT); null for a null feed."""
    if is_null(feed["settlement_price"]):
        return null_price()
    return times_ratio(invert(feed["settlement_price"]),
                       int(feed["initial_collateral_ratio"]), RATIO_DENOM)


def margin_call_params_equal(a: dict, b: dict) -> bool:
    """graphene ``price_feed::margin_call_params_equal``: same settlement
    price (exactly, as a tuple), MCR and MSSR."""
    return (equal(a["settlement_price"], b["settlement_price"])
            and int(a["maintenance_collateral_ratio"]) == int(b["maintenance_collateral_ratio"])
            and int(a["maximum_short_squeeze_ratio"]) == int(b["maximum_short_squeeze_ratio"]))


def percent_of(amount: int, percent: int) -> int:
    """``amount * percent / GRAPHENE_100_PERCENT`` rounded down, the one
    percent rule (graphene ``detail::calculate_percent``, account_object.cpp
    ``cut_fee``; the product is 128-bit there, unbounded here).  ``percent``
    is in 1/100 of a percent; raises nothing for any integers."""
    return int(amount) * int(percent) // GRAPHENE_100_PERCENT


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
