"""database API: assets and the limit order market (a mixin of
:class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp sections
"Assets" and "Markets / feeds" (``get_assets``, ``list_assets``,
``get_assets_by_issuer``, ``lookup_asset_symbols``, ``get_limit_orders``,
``get_limit_orders_by_account``, ``get_order_book``).  Asset arguments accept
a symbol or a ``1.3.N`` id.  Orders are ordered like graphene's
``limit_order_index`` by_price: best price for the taker first (the seller
offering the most per unit asked), then by id.
"""

from nodeapi.api.base import api_function
from nodeapi.api.database_common import (
    amount_to_string, api_limit, check_count, check_limit, find_asset, get_account,
    get_asset, id_key, optional_bool, price_to_string, require_list, require_str, typed_id)
from nodeapi.errors import ApiError


class AssetsMixin:
    """Assets and limit orders."""

    @api_function
    def get_asset_id_from_string(self, symbol_or_id):
        """The ``1.3.N`` id of an asset symbol or id; ``no such asset``."""
        return get_asset(self.chain.state, symbol_or_id)["id"]

    @api_function
    def get_assets(self, asset_symbols_or_ids, subscribe=None):
        """``[asset | null]`` for symbols or ids, in order; found assets are
        subscribed.  At most ``api-limit-get-assets`` items."""
        items = require_list(asset_symbols_or_ids, "asset_symbols_or_ids")
        check_count(len(items), api_limit(self.node, "get_assets", 101), "assets")
        to_subscribe = self._whether_to_subscribe(optional_bool(subscribe, "subscribe"))
        result = []
        for item in items:
            asset = find_asset(self.chain.state, item)
            if asset is not None and to_subscribe:
                self._subscribe_to_item(asset["id"])
            result.append(asset)
        return result

    @api_function
    def lookup_asset_symbols(self, symbols_or_ids):
        """``[asset | null]`` for symbols or ids (no subscription)."""
        items = require_list(symbols_or_ids, "symbols_or_ids")
        check_count(len(items), api_limit(self.node, "get_assets", 101), "assets")
        return [find_asset(self.chain.state, item) for item in items]

    @api_function
    def list_assets(self, lower_bound_symbol, limit: int):
        """Assets whose symbol is >= ``lower_bound_symbol``, by symbol, at
        most ``limit`` (<= ``api-limit-list-assets``)."""
        require_str(lower_bound_symbol, "lower_bound_symbol")
        check_limit(limit, api_limit(self.node, "list_assets", 101))
        state = self.chain.state
        symbols = sorted(s for s in state.asset_by_symbol if s >= lower_bound_symbol)
        return [state.objects[state.asset_by_symbol[s]] for s in symbols[:limit]]

    @api_function
    def get_asset_count(self):
        """Number of assets."""
        return len(self.chain.state.asset_by_symbol)

    @api_function
    def get_assets_by_issuer(self, issuer_name_or_id, start, limit: int):
        """Assets issued by the account, by id from ``start`` (``1.3.N``), at
        most ``limit`` (<= ``api-limit-get-assets``)."""
        check_limit(limit, api_limit(self.node, "get_assets", 101))
        issuer = get_account(self.chain.state, issuer_name_or_id)["id"]
        first = id_key(typed_id(start, "1.3", "start"))
        state = self.chain.state
        out = []
        for oid in state.ids_of_type("1.3."):
            if len(out) >= limit:
                break
            if id_key(oid) >= first and state.objects[oid]["issuer"] == issuer:
                out.append(state.objects[oid])
        return out

    # -- limit orders ------------------------------------------------------------

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
