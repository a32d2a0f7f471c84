"""The bitasset data object 2.4.N of a market-issued asset: its shape, the
prices derived from its current feed, and the median of published feeds.

Shape (graphene ``asset_bitasset_data_object``, reflected field order)::

    {"asset_id", "feeds": [[account, [time, feed_with_icr]]...],
     "median_feed", "current_feed", "current_feed_publication_time",
     "current_maintenance_collateralization",
     "current_initial_collateralization", "options",
     "force_settled_volume", "is_prediction_market", "settlement_price",
     "settlement_fund", "individual_settlement_debt",
     "individual_settlement_fund", "asset_cer_updated", "feed_cer_updated"}

``current_feed_publication_time`` is seconds in the chain; the times in
``feeds`` keep their wire form (positional, not a field a wire writer can
name).  A feed with ICR is ``{"settlement_price", "maintenance_collateral_ratio",
"maximum_short_squeeze_ratio", "core_exchange_rate",
"initial_collateral_ratio"}``.

``current_feed`` is the median feed, except that under the black swan
response methods no settlement (1) and individual settlement to fund (2)
its settlement price may be capped above the median (db_update.cpp
``get_derived_current_feed_price``).

Reference: bitshares-core libraries/chain/asset_object.cpp
(``update_median_feeds``, ``refresh_cache``, ``max_force_settlement_volume``),
db_update.cpp (``update_bitasset_current_feed``), asset_evaluator.cpp
(``asset_create`` creating the object).
"""


from nodeapi.chain.market.positions import collateralization, least_collateralized
from nodeapi.protocol.times import parse_time
from nodeapi.protocol.asset import (
    RATIO_DENOM, default_feed, equal, initial_collateralization, invert, is_null,
    maintenance_collateralization, make_price, margin_call_order_price,
    margin_call_order_ratio, margin_call_pays_ratio, max_short_squeeze_price, mul_up, normal,
    null_price, percent_of, price_key, times_ratio, value)
from nodeapi.protocol.config import MAX_SHARE_SUPPLY

#: asset_issuer_permission_flags (protocol/types.hpp)
DISABLE_FORCE_SETTLE, GLOBAL_SETTLE = 0x10, 0x20
WITNESS_FED, COMMITTEE_FED = 0x80, 0x100
DISABLE_MCR_UPDATE, DISABLE_ICR_UPDATE, DISABLE_MSSR_UPDATE = 0x800, 0x1000, 0x2000
DISABLE_BSRM_UPDATE, DISABLE_COLLATERAL_BIDDING = 0x4000, 0x8000

#: bitasset_options::black_swan_response_type (protocol/asset_ops.hpp)
GLOBAL_SETTLEMENT, NO_SETTLEMENT = 0, 1
INDIVIDUAL_SETTLEMENT_TO_FUND, INDIVIDUAL_SETTLEMENT_TO_ORDER = 2, 3


def new_bitasset_data(asset_id: str, options: dict, is_prediction_market: bool) -> dict:
    """The fields of a new 2.4.N for ``asset_id`` (asset_create)."""
    return {
        "asset_id": asset_id, "feeds": [], "median_feed": default_feed(),
        "current_feed": default_feed(), "current_feed_publication_time": 0,
        "current_maintenance_collateralization": null_price(),
        "current_initial_collateralization": null_price(), "options": options,
        "force_settled_volume": 0, "is_prediction_market": bool(is_prediction_market),
        "settlement_price": null_price(), "settlement_fund": 0,
        "individual_settlement_debt": 0, "individual_settlement_fund": 0,
        "asset_cer_updated": False, "feed_cer_updated": False,
    }


def bitasset_of(state, mia_id: str) -> dict | None:
    """The 2.4.N of asset ``mia_id``, or None for a user-issued asset."""
    bid = state.objects[mia_id].get("bitasset_data_id")
    return state.objects[bid] if bid else None


def extensions(options: dict) -> dict:
    """The ``extensions`` of bitasset ``options`` as a dict: ``{}`` when absent
    or not an object."""
    ext = options.get("extensions")
    return ext if isinstance(ext, dict) else {}


def mcfr(bitasset: dict):
    """The margin call fee ratio (per mille) or None."""
    return extensions(bitasset["options"]).get("margin_call_fee_ratio")


def bsrm(bitasset: dict) -> int:
    """graphene ``get_black_swan_response_method``: the options' method,
    global settlement (0) when unset."""
    method = extensions(bitasset["options"]).get("black_swan_response_method")
    return int(method) if method is not None else GLOBAL_SETTLEMENT


def is_individually_settled_to_fund(bitasset: dict) -> bool:
    """graphene ``is_individually_settled_to_fund``: the individual
    settlement pool holds debt and the method is 2."""
    return int(bitasset["individual_settlement_debt"]) != 0 \
        and bsrm(bitasset) == INDIVIDUAL_SETTLEMENT_TO_FUND


def is_current_feed_price_capped(bitasset: dict) -> bool:
    """graphene ``is_current_feed_price_capped``: the current feed's
    settlement price differs from the median's."""
    return not equal(bitasset["median_feed"]["settlement_price"],
                     bitasset["current_feed"]["settlement_price"])


def individual_settlement_price(bitasset: dict) -> dict:
    """graphene ``get_individual_settlement_price``: the pool's debt per
    collateral (DEBT per COLLATERAL)."""
    return make_price(bitasset["individual_settlement_debt"], bitasset["asset_id"],
                      bitasset["individual_settlement_fund"], backing_asset(bitasset))


def find_settled_debt_order(state, mia_id: str) -> dict | None:
    """graphene ``find_settled_debt_order``: the limit order
    (``is_settled_debt``, seller the null account) selling the individual
    settlement pool's collateral for ``mia_id`` under method 3, or None."""
    b = bitasset_of(state, mia_id)
    for order in state.book(backing_asset(b), mia_id):
        if order.get("is_settled_debt"):
            return order
    return None


def settled_debt_order_terms(bitasset: dict) -> tuple:
    """``(for_sale, sell_price)`` of the settled-debt order (core-2591):
    the pool's debt bought back at the margin call order price,
    ``ceil(debt * ~MCOP)`` collateral, when the pool holds that much; else
    the whole fund at the pool's price (db_update.cpp
    ``update_settled_debt_order``, db_market.cpp ``individually_settle``)."""
    sell_price = invert(mcop(bitasset))
    for_sale = mul_up(int(bitasset["individual_settlement_debt"]), bitasset["asset_id"],
                      sell_price)
    if for_sale <= MAX_SHARE_SUPPLY and for_sale <= int(bitasset["individual_settlement_fund"]):
        return for_sale, sell_price
    return (int(bitasset["individual_settlement_fund"]),
            invert(individual_settlement_price(bitasset)))


def _update_settled_debt_order(state, b: dict) -> None:
    """db_update.cpp ``update_settled_debt_order``: after a new median the
    settled-debt order takes :func:`settled_debt_order_terms` (not without
    a feed)."""
    if not has_feed(b):
        return
    order = find_settled_debt_order(state, b["asset_id"])
    if order is None:
        return
    for_sale, sell_price = settled_debt_order_terms(b)
    order = state.modify(order["id"])
    order["for_sale"], order["sell_price"] = for_sale, sell_price


def is_globally_settled(bitasset: dict) -> bool:
    """graphene ``asset_bitasset_data_object::is_globally_settled``
    (asset_object.hpp): the settlement price is not null."""
    return not is_null(bitasset["settlement_price"])


def has_feed(bitasset: dict) -> bool:
    """Whether the current feed has a settlement price: graphene's
    ``!current_feed.settlement_price.is_null()``, without which no margin call
    is checked (db_market.cpp ``check_call_orders``) and no force settlement
    taken."""
    return not is_null(bitasset["current_feed"]["settlement_price"])


def backing_asset(bitasset: dict) -> str:
    """The id of the asset backing it (``options.short_backing_asset``): the
    collateral of its debt positions."""
    return bitasset["options"]["short_backing_asset"]


def mcop(bitasset: dict) -> dict:
    """The margin call order price (DEBT per COLLATERAL) of the current feed."""
    return margin_call_order_price(bitasset["current_feed"], mcfr(bitasset))


def mssp(bitasset: dict) -> dict:
    """The maximum short squeeze price (DEBT per COLLATERAL)."""
    return max_short_squeeze_price(bitasset["current_feed"])


def mcpr(bitasset: dict) -> tuple:
    """The margin call pays ratio ``(num, den)``."""
    return margin_call_pays_ratio(bitasset["current_feed"], mcfr(bitasset))


def max_force_settlement_volume(bitasset: dict, current_supply: int) -> int:
    """graphene ``max_force_settlement_volume``: the debt that may be
    force-settled this maintenance interval."""
    percent = int(bitasset["options"]["maximum_force_settlement_volume"])
    volume = int(current_supply) + int(bitasset["force_settled_volume"])
    return percent_of(volume, percent)


def feed_expiration_time(bitasset: dict) -> int:
    """``current_feed_publication_time + feed_lifetime_sec`` (seconds)."""
    return bitasset["current_feed_publication_time"] + int(bitasset["options"]["feed_lifetime_sec"])


def feed_with_icr(feed: dict, icr) -> dict:
    """graphene ``price_feed_with_icr(feed, icr)``: ICR defaults to MCR."""
    mcr = int(feed["maintenance_collateral_ratio"])
    return {"settlement_price": normal(feed["settlement_price"]),
            "maintenance_collateral_ratio": mcr,
            "maximum_short_squeeze_ratio": int(feed["maximum_short_squeeze_ratio"]),
            "core_exchange_rate": normal(feed["core_exchange_rate"]),
            "initial_collateral_ratio": int(icr) if icr is not None else mcr}


def _refresh_cache(b: dict) -> None:
    median = b["median_feed"]
    b["current_maintenance_collateralization"] = maintenance_collateralization(median)
    if int(median["initial_collateral_ratio"]) > int(median["maintenance_collateral_ratio"]):
        b["current_initial_collateralization"] = initial_collateralization(median)
    else:
        b["current_initial_collateralization"] = b["current_maintenance_collateralization"]


def update_median_feeds(b: dict, now: int) -> None:
    """graphene ``update_median_feeds`` on the writable 2.4.N ``b``: the
    median of the feeds younger than ``feed_lifetime_sec`` (each field on
    its own; MCR, MSSR, ICR fixed by the options' extensions when set), a
    null feed below ``minimum_feeds``; ``current_feed_publication_time``
    is the oldest feed used."""
    opts = b["options"]
    lifetime = int(opts["feed_lifetime_sec"])
    published = now
    effective = []
    for _account, (when, feed) in b["feeds"]:
        t = parse_time(when)
        if now - t < lifetime and t != 0:
            effective.append(feed)
            published = min(published, t)
    b["current_feed_publication_time"] = published
    old_cer = b["median_feed"]["core_exchange_rate"]
    if len(effective) < int(opts["minimum_feeds"]):
        b["feed_cer_updated"] = False
        b["current_feed_publication_time"] = now
        b["median_feed"] = default_feed()
        _refresh_cache(b)
        return
    ext = extensions(opts)
    if len(effective) == 1:
        median = dict(effective[0])
    else:
        median = {}
        middle = len(effective) // 2
        for field in ("settlement_price", "core_exchange_rate"):
            median[field] = sorted((f[field] for f in effective), key=price_key)[middle]
        for field in ("maintenance_collateral_ratio", "maximum_short_squeeze_ratio",
                      "initial_collateral_ratio"):
            median[field] = sorted(int(f[field]) for f in effective)[middle]
    for field in ("maintenance_collateral_ratio", "maximum_short_squeeze_ratio",
                  "initial_collateral_ratio"):
        if ext.get(field) is not None:
            median[field] = int(ext[field])
    if not equal(old_cer, median["core_exchange_rate"]):
        b["feed_cer_updated"] = True
    b["median_feed"] = {k: median[k] for k in default_feed()}
    _refresh_cache(b)


def _derived_current_feed_price(state, b: dict) -> dict | None:
    """graphene ``get_derived_current_feed_price``: the settlement price
    the current feed should have, or None when it has it already.  Under
    no settlement (1) it is at least the price at which the least
    collateralized position is exactly at MSSR
    (``~collateralization * MSSR``); under individual settlement to fund
    (2) with a non-empty pool at least the pool's price times MCOR; else
    the median's."""
    median, current = b["median_feed"]["settlement_price"], b["current_feed"]["settlement_price"]
    if is_null(median):
        return None if is_null(current) else median
    method = bsrm(b)
    result = median
    lowest = None
    if method == NO_SETTLEMENT:
        call = least_collateralized(state, b["asset_id"])
        if call is not None:
            lowest = times_ratio(invert(collateralization(call)),
                                 int(b["current_feed"]["maximum_short_squeeze_ratio"]),
                                 RATIO_DENOM)
    elif method == INDIVIDUAL_SETTLEMENT_TO_FUND and int(b["individual_settlement_debt"]) > 0:
        lowest = times_ratio(individual_settlement_price(b),
                             margin_call_order_ratio(b["current_feed"], mcfr(b)), RATIO_DENOM)
    if lowest is not None and value(lowest) > value(median):
        result = lowest
    return None if equal(result, current) else result


def update_bitasset_current_feed(state, bitasset_id: str, now: int,
                                 skip_median_update: bool = False) -> None:
    """graphene ``update_bitasset_current_feed``: recompute the median
    (unless ``skip_median_update``) and make it the current feed, its
    settlement price capped as :func:`_derived_current_feed_price` says
    under the methods 1 and 2; under method 3 a new median re-prices the
    settled-debt order."""
    b = state.objects[bitasset_id]
    capping = bsrm(b) in (NO_SETTLEMENT, INDIVIDUAL_SETTLEMENT_TO_FUND)
    new_price = None
    if skip_median_update:
        if not capping:
            if equal(b["current_feed"]["settlement_price"], b["median_feed"]["settlement_price"]):
                return
            new_price = b["median_feed"]["settlement_price"]
        else:
            new_price = _derived_current_feed_price(state, b)
            if new_price is None:
                return
    b = state.modify(bitasset_id)
    if not skip_median_update:
        update_median_feeds(b, now)
        b["current_feed"] = dict(b["median_feed"])
        if capping:
            new_price = _derived_current_feed_price(state, b)
    if new_price is not None:
        b["current_feed"] = dict(b["current_feed"], settlement_price=new_price)
    if not skip_median_update and bsrm(b) == INDIVIDUAL_SETTLEMENT_TO_ORDER:
        _update_settled_debt_order(state, b)
