"""The orders API set (``orders`` / ``orders_api``): limit orders grouped
by price ranges, from the ``grouped_orders`` plugin.

Graphene reference: bitshares-core libraries/app/api.cpp ``orders_api``
(``get_tracked_groups``, ``get_grouped_limit_orders``; the limit
``api-limit-get-grouped-limit-orders``, 101) over
:class:`nodeapi.plugins.grouped_orders.orders.GroupedOrders` (``node.plugins["grouped_orders"]``);
without the plugin both functions fail as graphene's ``FC_ASSERT( plugin )``.
"""

from nodeapi.api.arguments import check_limit
from nodeapi.api.base import ApiSet, api_function
from nodeapi.api.lookup import get_asset
from nodeapi.errors import ApiError
from nodeapi.protocol.asset import amount_of


def _price(value, base_id: str, quote_id: str):
    """An optional ``price`` argument ``{base: {amount, asset_id}, quote}``."""
    if value is None:
        return None
    try:
        price = {side: {"amount": amount_of(value[side]),
                        "asset_id": str(value[side]["asset_id"])} for side in ("base", "quote")}
    except (KeyError, TypeError, ValueError):
        raise ApiError(f"start must be a price {{base, quote}}, got {value!r}") from None
    if price["base"]["amount"] < 0 or price["quote"]["amount"] < 0:
        raise ApiError("start: price amounts must not be negative")
    if price["base"]["amount"] and not price["quote"]["amount"]:
        raise ApiError("start: the quote amount of a price must not be 0")
    return price


class OrdersApi(ApiSet):
    """graphene ``orders_api`` (module text)."""

    name = "orders"

    def _plugin(self):
        plugin = self.node.plugins.get("grouped_orders")
        if plugin is None:
            raise ApiError("The grouped_orders plugin is not enabled")
        return plugin

    @api_function
    def get_tracked_groups(self):
        """The tracked group widths (``tracked-groups``), ascending."""
        return list(self._plugin().tracked_groups)

    @api_function
    def get_grouped_limit_orders(self, base_asset, quote_asset, group: int, start=None,
                                 limit: int = 101):
        """Groups ``{min_price, max_price, total_for_sale}`` of width
        ``group`` of the orders selling ``base_asset`` for ``quote_asset``,
        highest price first from ``start`` (a price, optional), at most
        ``limit`` (<= ``api-limit-get-grouped-limit-orders``)."""
        check_limit(limit, self.node.limits.get_grouped_limit_orders)
        plugin = self._plugin()
        state = self.node.chain.state
        base_id = get_asset(state, base_asset)["id"]
        quote_id = get_asset(state, quote_asset)["id"]
        if not 0 <= group <= 0xFFFF:
            raise ApiError(f"group must be 0..65535, got {group}")
        return plugin.groups(group, base_id, quote_id, _price(start, base_id, quote_id), limit)
