"""database API, graphene section "Markets / feeds": open orders and the
order book of a market (a section of
:class:`nodeapi.api.database.DatabaseApi`; :func:`order_book` is shared
with the tickers).

Graphene reference: bitshares-core libraries/app/database_api.cpp section
"Markets / feeds" (``get_limit_orders``, ``get_limit_orders_by_account``,
``get_account_limit_orders``, ``get_order_book``).  Asset arguments accept a symbol or a ``1.3.N`` id.
Orders are ordered like graphene's ``limit_order_index`` by_price: best
price for the taker first (the seller offering the most per unit asked),
then by id.
"""

from fractions import Fraction

from nodeapi.api.arguments import check_limit, id_key, typed_id
from nodeapi.api.base import Section, api_function, fc_int
from nodeapi.api.database.amounts import price_to_string
from nodeapi.api.lookup import find_asset, get_account, get_asset
from nodeapi.chain.state import StateObject
from nodeapi.errors import ApiError
from nodeapi.protocol.asset import amount_of, amount_to_string, invert, value


def order_book(node, base, quote, limit: int) -> dict:
    """graphene ``get_order_book`` over ``node``: the order book of
    ``base``/``quote`` (symbols or ids): ``{base, quote, bids, asks}``,
    each order ``{price, quote, base, id, owner_id, owner_name,
    expiration}``, amounts as decimal strings in whole units (price = base
    per quote, graphene ``price_to_string``).  Bids sell ``base``, asks sell
    ``quote``; up to ``limit`` (<= ``api-limit-get-order-book``, 50) each,
    best first.  The answer is kept in ``node.api_answers.order_books``
    (:mod:`nodeapi.api.answers`) while the market's orders and assets stay
    the same.

    :raises ApiError: a limit above the configured one, an unknown asset
        (``Invalid base asset symbol: X``), twice the same asset."""
    check_limit(limit, node.limits.get_order_book)
    state = node.chain.state
    base_asset = find_asset(state, base)
    quote_asset = find_asset(state, quote)
    if base_asset is None:
        raise ApiError(f"Invalid base asset symbol: {base}")
    if quote_asset is None:
        raise ApiError(f"Invalid quote asset symbol: {quote}")
    base_id, quote_id = base_asset["id"], quote_asset["id"]
    if base_id == quote_id:
        raise ApiError("The two assets of a market must differ")
    sources = (state.book(base_id, quote_id), state.book(quote_id, base_id),
               base_asset, quote_asset)
    key = (base, quote, limit)
    cache = node.api_answers.order_books
    cached = cache.get(key, sources)
    if cached is not None:
        return cached
    bp, qp = int(base_asset["precision"]), int(quote_asset["precision"])
    book = StateObject(base=base, quote=quote, bids=[], asks=[])
    for order in sources[0][:limit] + sources[1][:limit]:
        sp = order["sell_price"]
        sold, asked = amount_of(sp["base"]), amount_of(sp["quote"])
        for_sale = int(order["for_sale"])
        receives = for_sale * asked // sold
        owner = {"id": order["id"], "owner_id": order["seller"],
                 "owner_name": state.objects[order["seller"]]["name"],
                 "expiration": order["expiration"]}
        if sp["base"]["asset_id"] == base_id:
            book["bids"].append({"price": price_to_string(sold, asked, bp, qp),
                                 "quote": amount_to_string(receives, qp),
                                 "base": amount_to_string(for_sale, bp), **owner})
        else:
            book["asks"].append({"price": price_to_string(asked, sold, bp, qp),
                                 "quote": amount_to_string(for_sale, qp),
                                 "base": amount_to_string(receives, bp), **owner})
    return cache.put(key, sources, book)


class Orders(Section):
    """Limit orders and the order book."""

    def _market_orders(self, a: str, b: str, limit: int) -> list:
        """Up to ``limit`` orders selling ``a`` for ``b``, then up to ``limit``
        selling ``b`` for ``a`` (graphene ``get_limit_orders``)."""
        state = self.chain.state
        return state.limit_orders(a, b)[:limit] + state.limit_orders(b, a)[:limit]

    @api_function
    def get_limit_orders(self, a, b, limit: int):
        """Open orders of the market between assets ``a`` and ``b``: up to
        ``limit`` selling ``a``, then up to ``limit`` selling ``b``, each
        side best price first.  ``limit`` <= ``api-limit-get-limit-orders``
        (300)."""
        check_limit(limit, self.node.limits.get_limit_orders)
        state = self.chain.state
        a_id, b_id = get_asset(state, a)["id"], get_asset(state, b)["id"]
        if a_id == b_id:
            raise ApiError("The two assets of a market must differ")
        return self._market_orders(a_id, b_id, limit)

    @api_function
    def get_limit_orders_by_account(self, account_name_or_id, limit=None, start_id=None):
        """The account's open orders by id, from ``start_id`` (``1.7.N``,
        default the first), at most ``limit`` (default and maximum
        ``api-limit-get-limit-orders-by-account``, 101)."""
        configured = self.node.limits.get_limit_orders_by_account
        if limit is None:
            limit = configured
        limit = check_limit(fc_int(limit, "limit"), configured)
        aid = get_account(self.chain.state, account_name_or_id)["id"]
        first = id_key(typed_id(start_id, "1.7", "start_id")) if start_id is not None else ()
        orders = [o for o in self.chain.state.limit_orders_of(aid) if id_key(o["id"]) >= first]
        return orders[:limit]

    @api_function(shared=True)
    def get_order_book(self, base, quote, limit: int = 50):
        """The order book of ``base``/``quote``: ``{base, quote, bids,
        asks}``, up to ``limit`` orders a side, best first
        (:func:`order_book`)."""
        return order_book(self.node, base, quote, limit)

    @api_function
    def get_account_limit_orders(self, account_name_or_id, base, quote, limit: int = 101,
                                 ostart_id=None, ostart_price=None):
        """The account's orders selling ``base`` for ``quote``, best price
        first then by id (graphene ``limit_order_index`` by_account_price),
        starting at order ``ostart_id`` (which must be the account's, in
        this market) or at price ``ostart_price`` (``{base, quote}`` of the
        market's assets), at most ``limit`` (<=
        ``api-limit-get-account-limit-orders``, 101).  An unknown account
        is an error, "no such account" (database_api.cpp
        ``get_account_limit_orders`` calls ``get_account_from_string`` with
        its default ``throw_if_not_found = true``)."""
        check_limit(limit, self.node.limits.get_account_limit_orders)
        state = self.chain.state
        account = get_account(state, account_name_or_id)
        base_asset, quote_asset = find_asset(state, base), find_asset(state, quote)
        if base_asset is None:
            raise ApiError(f"Invalid base asset symbol: {base}")
        if quote_asset is None:
            raise ApiError(f"Invalid quote asset symbol: {quote}")
        base_id, quote_id = base_asset["id"], quote_asset["id"]
        start_price = None
        if ostart_price is not None:
            start_price = _price_key(ostart_price, base_id, quote_id)
        orders = [o for o in state.limit_orders(base_id, quote_id) if o["seller"] == account["id"]]
        first = 0
        if ostart_id is not None:
            start_id = typed_id(ostart_id, "1.7", "ostart_id")
            start = state.objects.get(start_id)
            if start is None:
                if start_price is None:
                    raise ApiError("Order id invalid (maybe just been canceled?), "
                                   "and start price not provided")
                key = (start_price, id_key(start_id))
            else:
                if start["sell_price"]["base"]["asset_id"] != base_id:
                    raise ApiError("Order base asset inconsistent")
                if start["sell_price"]["quote"]["asset_id"] != quote_id:
                    raise ApiError("Order quote asset inconsistent with order")
                if start["seller"] != account["id"]:
                    raise ApiError("Order not owned by specified account")
                key = (_price_key(start["sell_price"], base_id, quote_id), id_key(start_id))
            first = next((i for i, o in enumerate(orders) if _order_key(o) >= key), len(orders))
        elif start_price is not None:
            first = next((i for i, o in enumerate(orders) if _order_key(o)[0] >= start_price),
                         len(orders))
        return orders[first:first + limit]


def _price_key(price, base_id: str, quote_id: str) -> Fraction:
    """The by_price order of a ``{base, quote}`` price of this market:
    quote per base ascending is the seller asking least first."""
    try:
        if price["base"]["asset_id"] != base_id:
            raise ApiError("Base asset inconsistent with start price")
        if price["quote"]["asset_id"] != quote_id:
            raise ApiError("Quote asset inconsistent with start price")
        return Fraction(amount_of(price["quote"]), amount_of(price["base"]))
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise ApiError(f"Malformed start price: {exc!r}") from None


def _order_key(order: dict) -> tuple:
    sp = order["sell_price"]
    return (value(invert(sp)), id_key(order["id"]))
