"""Margin calls: debt positions at or below the maintenance
collateralization buy their debt back from the order book (and from
waiting force settlements), and a new limit order selling a market-issued
asset for its backing asset takes such positions at the margin call order
price.

A margin call pays at the margin call pays price (the match price times
MCPR); what it pays beyond what the limit order receives is the margin call
fee, kept by the asset in ``accumulated_collateral_fees`` (BSIP 74).  A
position with a target collateral ratio sells only down to it.

Under the black swan response method no settlement (1) the current feed
is capped (:mod:`~nodeapi.chain.market.bitasset_data`) and re-capped
after each margin call, so the prices move as positions are filled.

Reference: bitshares-core libraries/chain/db_market.cpp
(``check_call_orders``, ``apply_order``, ``apply_force_settlement``,
``match`` of a limit and a call order), with the hardforks of today's
chain: 343/453/606/625/834/1270 (least collateralized first, feed
protection, TCR), BSIP 74, core-2481 (margin calls against force
settlements, no undercollateralized fills), core-2582 (median feed for the
TCR), core-2467 (black swan response methods).
"""

from bisect import bisect_left, bisect_right
from fractions import Fraction

from nodeapi.chain.evaluators.context import ApplyContext
from nodeapi.chain.market.bitasset_data import (
    INDIVIDUAL_SETTLEMENT_TO_FUND, INDIVIDUAL_SETTLEMENT_TO_ORDER, NO_SETTLEMENT, backing_asset,
    bitasset_of, bsrm, has_feed, is_current_feed_price_capped, is_globally_settled, mcop, mcpr,
    mssp, update_bitasset_current_feed)
from nodeapi.chain.market.individual import check_settled_debt_order, match_limit_settled_debt
from nodeapi.chain.market.limits import fill_limit_order, match_limit_limit, maybe_cull
from nodeapi.chain.market.positions import (
    collateralization, fill_call_order, least_collateralized, max_debt_to_cover)
from nodeapi.chain.market.settle_orders import (
    margin_call_terms, margin_called, match_force_settlements, match_settle_call)
from nodeapi.chain.market.swan import check_for_blackswan
from nodeapi.protocol.asset import equal, invert, mul_down, mul_up, times_ratio, value
from nodeapi.protocol.ids import instance_number


def _max_debt(b: dict, call: dict, call_pays_price: dict) -> int:
    return max_debt_to_cover(call, call_pays_price, b["median_feed"]["settlement_price"],
                             int(b["current_feed"]["maintenance_collateral_ratio"]),
                             b["current_maintenance_collateralization"])


def _in_margin_call(b: dict, call: dict | None) -> bool:
    return call is not None and value(collateralization(call)) \
        <= value(b["current_maintenance_collateralization"])


def _fill_against_limit(ctx: ApplyContext, b: dict, call: dict, limit: dict) -> bool:
    """One margin call of ``call`` against the resting ``limit`` (the call
    is the taker, at the limit order's price); False when the position
    cannot pay without losing collateral ratio (core-2481)."""
    mia_id, backing = b["asset_id"], backing_asset(b)
    match_price = limit["sell_price"]
    call_pays_price = times_ratio(match_price, *mcpr(b))
    usd_to_buy = _max_debt(b, call, call_pays_price)
    usd_for_sale = int(limit["for_sale"])
    collateral, debt = int(call["collateral"]), int(call["debt"])
    if usd_to_buy > usd_for_sale:
        limit_receives = mul_down(usd_for_sale, mia_id, match_price)
        call_receives = mul_up(limit_receives, backing, match_price)
        call_pays = mul_down(call_receives, mia_id, call_pays_price)
        if call_pays >= collateral or Fraction(collateral - call_pays, debt - call_receives) \
                < Fraction(collateral, debt):
            return False
    else:
        call_receives = usd_to_buy
        call_pays = mul_up(usd_to_buy, mia_id, call_pays_price)
        if call_pays > collateral:
            return False
        limit_receives = mul_up(usd_to_buy, mia_id, match_price)
    fill_call_order(ctx, call["id"], call_pays, call_receives, match_price, False,
                    call_pays - limit_receives)
    fill_limit_order(ctx, limit["id"], call_receives, limit_receives, match_price, True, True)
    return True


def check_call_orders(ctx: ApplyContext, mia_id: str, enable_black_swan: bool = True,
                      skip_matching_settle_orders: bool = False) -> bool:
    """graphene ``check_call_orders``: margin-call the positions of
    ``mia_id`` in margin call territory, least collateralized first,
    against limit orders selling the asset at or above the margin call
    order price, then against force settlements; a black swan settles the
    asset globally, or settles the undercollateralized positions
    individually under the response methods 2 and 3 (checked before each
    margin call only).  True when a margin call or an individual
    settlement was executed.

    :raises InvalidOperation: a black swan where ``enable_black_swan`` is
        false."""
    state = ctx.state
    b = bitasset_of(state, mia_id)
    if b is None or b["is_prediction_market"]:
        return False
    individual = bsrm(b) in (INDIVIDUAL_SETTLEMENT_TO_FUND, INDIVIDUAL_SETTLEMENT_TO_ORDER)
    if not individual and check_for_blackswan(ctx, mia_id, enable_black_swan):
        return False
    if not has_feed(b):
        return False
    backing = backing_asset(b)
    update_current_feed = bsrm(b) == NO_SETTLEMENT and is_current_feed_price_capped(b)
    margin_called = False
    while True:
        settled_some = check_for_blackswan(ctx, mia_id, enable_black_swan)
        b = bitasset_of(state, mia_id)
        if is_globally_settled(b):
            return margin_called
        call = least_collateralized(state, mia_id)
        if settled_some:
            if call is None:
                check_settled_debt_order(ctx, mia_id)
                return True
            margin_called = True
        if call is None or not _in_margin_call(b, call):
            check_settled_debt_order(ctx, mia_id)
            return margin_called
        book = state.book(mia_id, backing)
        if book and value(book[0]["sell_price"]) >= value(mcop(b)):
            margin_called = True
            if _fill_against_limit(ctx, b, call, book[0]):
                if update_current_feed:
                    update_bitasset_current_feed(state, b["id"], ctx.now, skip_median_update=True)
                    update_current_feed = is_current_feed_price_capped(bitasset_of(state, mia_id))
                continue
        if skip_matching_settle_orders or not state.settles_by_asset.get(mia_id):
            return margin_called
        if match_force_settlements(ctx, mia_id):
            margin_called = True
            if update_current_feed:
                update_current_feed = is_current_feed_price_capped(bitasset_of(state, mia_id))


def _match_limit_call(ctx: ApplyContext, order_id: str, call: dict, b: dict,
                      match_price: dict, call_pays_price: dict) -> bool:
    """graphene ``match(limit_order, call_order)``: the new order (taker)
    buys collateral from the position at the margin call order price;
    True when the new order is gone."""
    state = ctx.state
    mia_id, backing = b["asset_id"], backing_asset(b)
    usd_for_sale = int(state.objects[order_id]["for_sale"])
    usd_to_buy = _max_debt(b, call, call_pays_price)
    cull_taker = False
    if usd_to_buy > usd_for_sale:
        order_receives = mul_down(usd_for_sale, mia_id, match_price)
        if order_receives == 0:
            return True
        call_receives = mul_up(order_receives, backing, match_price)
        call_pays = mul_down(call_receives, mia_id, call_pays_price)
        cull_taker = True
    else:
        call_receives = usd_to_buy
        order_receives = mul_up(usd_to_buy, mia_id, match_price)
        call_pays = mul_up(usd_to_buy, mia_id, call_pays_price)
    taker_gone = fill_limit_order(ctx, order_id, call_receives, order_receives, match_price,
                                  cull_taker, False)
    fill_call_order(ctx, call["id"], call_pays, call_receives, match_price, True,
                    call_pays - order_receives)
    if bsrm(b) == NO_SETTLEMENT:
        update_bitasset_current_feed(state, b["id"], ctx.now, skip_median_update=True)
    return taker_gone


def _book_key(order: dict) -> tuple:
    """An order's place in its market's book: graphene's
    ``limit_order_index`` ``by_price`` (higher price first, then older)."""
    return (value(invert(order["sell_price"])), instance_number(order["id"]))


def _first(state, market: tuple, key: tuple | None, after: bool = False) -> tuple | None:
    """``(id, key)`` of the first order of ``market`` at or after ``key``
    (after it with ``after``; the first of the book for None), None at the
    end."""
    book = state.book(*market)
    i = 0 if key is None else (bisect_right if after else bisect_left)(book, key, key=_book_key)
    return (book[i]["id"], _book_key(book[i])) if i < len(book) else None


def _boundary(state, market: tuple, price: dict, inclusive: bool) -> tuple | None:
    """The key of the first order of ``market`` priced below ``price``
    (at or below with ``inclusive``): graphene's ``upper_bound`` /
    ``lower_bound`` of the ``by_price`` index, fixed when iteration
    begins; None for the end of the market."""
    limit = value(price)
    for m in state.book(*market):
        v = value(m["sell_price"])
        if v < limit or (inclusive and v == limit):
            return _book_key(m)
    return None


def _match_book(ctx: ApplyContext, order_id: str, market: tuple, cursor: tuple | None,
                stop: tuple | None) -> tuple:
    """graphene ``apply_order``'s walk of the book from ``cursor`` up to
    ``stop`` (``(id, key)`` and a key; None: the end of the market): each
    next order is taken before the match, as graphene advances its
    iterator, so an order inserted during a match (a take-profit order) is
    visited when it falls after that next order and before ``stop``.
    Returns ``(finished, cursor)``."""
    state = ctx.state
    while cursor is not None and (stop is None or cursor[1] < stop):
        if cursor[0] not in state.objects:  # gone meanwhile: go on from its place
            cursor = _first(state, market, cursor[1], after=True)
            continue
        following = _first(state, market, cursor[1], after=True)
        match = match_limit_settled_debt if state.objects[cursor[0]].get("is_settled_debt") \
            else match_limit_limit
        taker_gone, maker_gone = match(ctx, order_id, cursor[0])
        cursor = following
        if taker_gone or not maker_gone:
            return True, cursor
    return False, cursor


def apply_order(ctx: ApplyContext, order_id: str) -> bool:
    """graphene ``apply_order``: match a new limit order against the book
    (and, when it sells a market-issued asset for its backing asset at or
    below the margin call order price, against positions in margin call
    territory, after the limit orders priced better than those); True when
    it is gone (filled or culled).  The book is walked as graphene walks
    its index (:func:`_match_book`)."""
    state = ctx.state
    order = state.objects[order_id]
    sell_id = order["sell_price"]["base"]["asset_id"]
    recv_id = order["sell_price"]["quote"]["asset_id"]
    market = (recv_id, sell_id)
    cursor = _first(state, market, None)
    end = _boundary(state, market, invert(order["sell_price"]), inclusive=False)
    b = bitasset_of(state, sell_id)
    call_match_price = None
    if b is not None and backing_asset(b) == recv_id and not b["is_prediction_market"] \
            and not is_globally_settled(b) and has_feed(b):
        call_match_price = invert(mcop(b))
        if value(invert(order["sell_price"])) > value(call_match_price):
            call_match_price = None
    finished = feed_price_updated = False
    if call_match_price is not None:
        after_call = _boundary(state, market, call_match_price, inclusive=True)
        finished, cursor = _match_book(ctx, order_id, market, cursor, after_call)
        call_pays_price = invert(mssp(b))
        update_call_price = bsrm(b) == NO_SETTLEMENT and is_current_feed_price_capped(b)
        old_feed_price = b["current_feed"]["settlement_price"]
        while not finished:
            call = least_collateralized(state, sell_id)
            if not _in_margin_call(b, call):
                break
            finished = _match_limit_call(ctx, order_id, call, b, call_match_price,
                                         call_pays_price)
            b = bitasset_of(state, sell_id)
            if not finished and update_call_price:
                call_match_price, call_pays_price = invert(mcop(b)), invert(mssp(b))
                update_call_price = is_current_feed_price_capped(b)
        feed_price_updated = bsrm(b) == NO_SETTLEMENT \
            and not equal(b["current_feed"]["settlement_price"], old_feed_price)
    if not finished:
        _match_book(ctx, order_id, market, cursor, end)
    gone = order_id not in state.objects or maybe_cull(ctx, order_id)
    if gone and feed_price_updated:
        check_call_orders(ctx, sell_id, True)
    return gone


def apply_force_settlement(ctx: ApplyContext, settle_id: str, mia_id: str) -> None:
    """graphene ``apply_force_settlement`` (core-2481): a new force
    settlement first takes positions in margin call territory, least
    collateralized first, at the margin call order price.  Under no
    settlement (1) with a capped current feed, each match re-checks margin
    calls against limit orders (not against force settlements) and takes
    the feed's new prices."""
    state = ctx.state
    b = bitasset_of(state, mia_id)
    call_match_price, call_pays_price = mcop(b), mssp(b)
    update_call_price = bsrm(b) == NO_SETTLEMENT and is_current_feed_price_capped(b)
    while settle_id in state.objects:
        call = least_collateralized(state, mia_id)
        if not margin_called(b, call):
            break
        match_settle_call(ctx, settle_id, call["id"], call_pays_price,
                          margin_call_terms(state, b, call), call_match_price, True, True)
        b = bitasset_of(state, mia_id)
        if update_call_price:
            check_call_orders(ctx, mia_id, True, skip_matching_settle_orders=True)
            b = bitasset_of(state, mia_id)
            if settle_id in state.objects:
                call_match_price, call_pays_price = mcop(b), mssp(b)
                update_call_price = is_current_feed_price_capped(b)
