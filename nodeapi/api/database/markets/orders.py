"""database API, graphene section "Markets / feeds": open orders and the
order book of a market (a mixin of
:class:`nodeapi.api.database.markets.MarketsMixin`).

Graphene reference: bitshares-core libraries/app/database_api.cpp section
"Markets / feeds" (``get_limit_orders``, ``get_limit_orders_by_account``,
``get_order_book``).  Asset arguments accept a symbol or a ``1.3.N`` id.
Orders are ordered like graphene's ``limit_order_index`` by_price: best
price for the taker first (the seller offering the most per unit asked),
then by id.
"""

from nodeapi.api.arguments import api_limit, check_limit, id_key, typed_id
from nodeapi.api.base import api_function
from nodeapi.api.database.amounts import amount_to_string, price_to_string
from nodeapi.api.lookup import find_asset, get_account, get_asset
from nodeapi.errors import ApiError


class OrdersMixin:
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
        check_limit(limit, api_limit(self.node, "get_limit_orders", 300))
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
        configured = api_limit(self.node, "get_limit_orders_by_account", 101)
        if limit is None:
            limit = configured
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise ApiError(f"limit must be an integer, got {limit!r}")
        check_limit(limit, configured)
        aid = get_account(self.chain.state, account_name_or_id)["id"]
        first = id_key(typed_id(start_id, "1.7", "start_id")) if start_id is not None else ()
        orders = [o for o in self.chain.state.limit_orders_of(aid) if id_key(o["id"]) >= first]
        return orders[:limit]

    @api_function
    def get_order_book(self, base, quote, limit: int = 50):
        """The order book of ``base``/``quote`` (symbols or ids):
        ``{base, quote, bids, asks}``, each order ``{price, quote, base}`` as
        decimal strings in whole units (price = base per quote, graphene
        ``price_to_string``).  Bids sell ``base``, asks sell ``quote``; up to
        ``limit`` (<= ``api-limit-get-order-book``, 50) each, best first."""
        check_limit(limit, api_limit(self.node, "get_order_book", 50))
        state = self.chain.state
        base_asset = find_asset(state, base)
        quote_asset = find_asset(state, quote)
        if base_asset is None:
            raise ApiError(f"Invalid base asset symbol: {base}")
        if quote_asset is None:
            raise ApiError(f"Invalid quote asset symbol: {quote}")
        base_id, quote_id = base_asset["id"], quote_asset["id"]
        if base_id == quote_id:
            raise ApiError("The two assets of a market must differ")
        bp, qp = int(base_asset["precision"]), int(quote_asset["precision"])
        book = {"base": base, "quote": quote, "bids": [], "asks": []}
        for order in self._market_orders(base_id, quote_id, limit):
            sp = order["sell_price"]
            sold, asked = int(sp["base"]["amount"]), int(sp["quote"]["amount"])
            for_sale = int(order["for_sale"])
            receives = for_sale * asked // sold
            if sp["base"]["asset_id"] == base_id:
                book["bids"].append({"price": price_to_string(sold, asked, bp, qp),
                                     "quote": amount_to_string(receives, qp),
                                     "base": amount_to_string(for_sale, bp)})
            else:
                book["asks"].append({"price": price_to_string(asked, sold, bp, qp),
                                     "quote": amount_to_string(for_sale, qp),
                                     "base": amount_to_string(receives, bp)})
        return book
