"""database API, graphene section "Markets / feeds", the collateralized debt
part: margin (call) orders, force settlements and collateral bids (a
section of :class:`nodeapi.api.database.DatabaseApi`; :func:`positions_of`
is shared with full accounts).

Graphene reference: bitshares-core libraries/app/database_api.cpp
``get_call_orders``, ``get_call_orders_by_account``, ``get_settle_orders``,
``get_settle_orders_by_account``, ``get_margin_positions``,
``get_collateral_bids``.  Call orders are ``1.8.N`` (``borrower``,
``collateral``, ``debt``, ``call_price``), force settlements ``1.4.N``
(``owner``, ``balance``, ``settlement_date``), collateral bids ``2.17.N``
(``bidder``, ``inv_swan_price``); all exist only for market-issued assets
(``bitasset_data_id``).  Limits: ``api-limit-get-call-orders`` (300),
``api-limit-get-settle-orders`` (300), ``api-limit-get-collateral-bids``
(100).
"""

from fractions import Fraction

from nodeapi.api.arguments import check_limit, id_key, typed_id
from nodeapi.api.base import Section, api_function
from nodeapi.api.database.listing import matching, page, uint_argument
from nodeapi.api.lookup import get_account, get_asset
from nodeapi.errors import ApiAssert
from nodeapi.protocol.asset import price_key
from nodeapi.protocol.config import CORE_ASSET

CALL_ORDER, FORCE_SETTLEMENT, COLLATERAL_BID = "1.8", "1.4", "2.17"


def _ratio(price: dict) -> Fraction:
    """``base.amount / quote.amount`` of a price (0 for an empty quote)."""
    return price_key(price)[2]


def positions_of(state, borrower: str, start: str, limit: int) -> list:
    """The call orders ``1.8.N`` of account ``borrower`` by debt asset id
    from ``start`` (``1.3.N``), at most ``limit`` (graphene
    ``call_order_index`` ``by_account``)."""
    orders = [o for o in matching(state, CALL_ORDER, borrower=borrower)
              if id_key(o["call_price"]["quote"]["asset_id"]) >= id_key(start)]
    orders.sort(key=lambda o: id_key(o["call_price"]["quote"]["asset_id"]))
    return orders[:limit]


class Debt(Section):
    """Call orders, force settlements, collateral bids."""

    def _limit(self, limit, configured: int) -> int:
        return check_limit(uint_argument(limit, "limit"), configured)

    def _market_issued(self, symbol_or_id, expression: str, message: str) -> dict:
        """The market-issued asset ``symbol_or_id``, else the reference's
        ``FC_ASSERT( expression, message )`` (``${a}``/``${id}`` in
        ``message``: the asset's symbol and id)."""
        asset = get_asset(self.chain.state, symbol_or_id)
        if not asset.get("bitasset_data_id"):
            error = ApiAssert(f"Assert Exception: {expression}: "
                              + message.replace("${a}", asset["symbol"])
                              .replace("${id}", asset["id"]))
            error.fc_format = f"{expression}: {message}"
            error.details = {"a": asset["symbol"], "id": asset["id"]} if "${" in message \
                else None
            raise error
        return asset

    @api_function
    def get_call_orders(self, a, limit):
        """Call orders of the market-issued asset ``a`` (backed by its
        ``short_backing_asset``), least collateralized first, then by id."""
        limit = self._limit(limit, self.node.limits.get_call_orders)
        # asset_object::bitasset_data (asset_object.hpp)
        mia = self._market_issued(a, "bitasset_data_id.valid()",
                                  "Asset ${a} (${id}) is not a market issued asset.")
        bitasset = self.chain.state.objects[mia["bitasset_data_id"]]
        backing = bitasset["options"]["short_backing_asset"]
        orders = [o for o in matching(self.chain.state, CALL_ORDER, call_price__quote__asset_id=mia["id"])
                  if o["call_price"]["base"]["asset_id"] == backing]
        orders.sort(key=lambda o: (Fraction(int(o["collateral"]), int(o["debt"]) or 1),
                                   id_key(o["id"])))
        return orders[:limit]

    @api_function
    def get_call_orders_by_account(self, account_name_or_id, start, limit):
        """The account's call orders by debt asset id from ``start``
        (``1.3.N``), at most ``limit``."""
        limit = self._limit(limit, self.node.limits.get_call_orders)
        return self._positions(account_name_or_id, typed_id(start, "1.3", "start"), limit)

    def _positions(self, account_name_or_id, start: str, limit: int) -> list:
        state = self.chain.state
        return positions_of(state, get_account(state, account_name_or_id)["id"], start, limit)

    @api_function
    def get_margin_positions(self, account_name_or_id):
        """Every call order of the account (graphene: ``get_call_orders_by_account``
        from ``1.3.0`` with the configured limit)."""
        return self._positions(account_name_or_id, CORE_ASSET,
                               self.node.limits.get_call_orders)

    @api_function
    def get_settle_orders(self, a, limit):
        """Force settlements of asset ``a``, earliest settlement date first."""
        limit = self._limit(limit, self.node.limits.get_settle_orders)
        asset_id = get_asset(self.chain.state, a)["id"]
        orders = matching(self.chain.state, FORCE_SETTLEMENT, balance__asset_id=asset_id)
        orders.sort(key=lambda o: (o["settlement_date"], id_key(o["id"])))
        return orders[:limit]

    @api_function
    def get_settle_orders_by_account(self, account_name_or_id, start, limit):
        """The account's force settlements by id from ``start`` (``1.4.N``)."""
        limit = self._limit(limit, self.node.limits.get_settle_orders)
        owner = get_account(self.chain.state, account_name_or_id)["id"]
        first = id_key(typed_id(start, FORCE_SETTLEMENT, "start"))
        return page(matching(self.chain.state, FORCE_SETTLEMENT, owner=owner), first, limit)

    @api_function
    def get_collateral_bids(self, asset, limit, start):
        """Collateral bids on the globally settled market-issued ``asset``,
        highest collateral per debt first, skipping ``start`` bids."""
        limit = self._limit(limit, self.node.limits.get_collateral_bids)
        skip = uint_argument(start, "start")
        # database_api.cpp get_collateral_bids
        mia = self._market_issued(asset, "swan.is_market_issued()", "Asset is not a MPA")
        bids = matching(self.chain.state, COLLATERAL_BID,
                        inv_swan_price__quote__asset_id=mia["id"])
        bids.sort(key=lambda b: (-_ratio(b["inv_swan_price"]), id_key(b["id"])))
        return bids[skip:skip + limit]
