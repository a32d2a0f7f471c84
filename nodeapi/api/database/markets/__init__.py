"""database API, graphene section "Markets / feeds" (a mixin of
:class:`nodeapi.api.database.DatabaseApi`), one module per concept:

- :mod:`~nodeapi.api.database.markets.orders`: ``get_limit_orders``,
  ``get_limit_orders_by_account``, ``get_order_book`` (the chain's open
  orders);
- :mod:`~nodeapi.api.database.markets.tickers`: ``get_ticker``,
  ``get_24_volume``, ``get_top_markets``, ``get_trade_history``,
  ``get_trade_history_by_sequence`` (the ``market_history`` plugin);
- :mod:`~nodeapi.api.database.markets.subscriptions`:
  ``subscribe_to_market``, ``unsubscribe_from_market``.

Amounts and prices are graphene's decimal strings
(:mod:`nodeapi.api.database.amounts`).  Graphene reference: bitshares-core
libraries/app/database_api.cpp, section "Markets / feeds".
"""

from nodeapi.api.database.markets.orders import OrdersMixin
from nodeapi.api.database.markets.subscriptions import MarketSubscriptionsMixin
from nodeapi.api.database.markets.tickers import TickersMixin


class MarketsMixin(OrdersMixin, TickersMixin, MarketSubscriptionsMixin):
    """Orders, tickers, trade history and market subscriptions."""
