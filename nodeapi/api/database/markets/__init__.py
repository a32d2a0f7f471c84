"""database API, graphene section "Markets / feeds": one module per
concept, each a section of :class:`nodeapi.api.database.DatabaseApi`:

- :mod:`~nodeapi.api.database.markets.orders` (``Orders``):
  ``get_limit_orders``, ``get_limit_orders_by_account``, ``get_account_limit_orders``,
  ``get_order_book`` (the chain's open orders);
- :mod:`~nodeapi.api.database.markets.debt` (``Debt``): ``get_call_orders``,
  ``get_call_orders_by_account``, ``get_settle_orders``,
  ``get_settle_orders_by_account``, ``get_margin_positions``,
  ``get_collateral_bids`` (collateralized debt);
- :mod:`~nodeapi.api.database.markets.tickers` (``Tickers``): ``get_ticker``,
  ``get_24_volume``, ``get_top_markets``, ``get_trade_history``,
  ``get_trade_history_by_sequence`` (the ``market_history`` plugin);
- :mod:`~nodeapi.api.database.markets.subscriptions`
  (``MarketSubscriptions``): ``subscribe_to_market``, ``unsubscribe_from_market``.

Amounts and prices are graphene's decimal strings
(:mod:`nodeapi.api.database.amounts`).  Graphene reference: bitshares-core
libraries/app/database_api.cpp, section "Markets / feeds".
"""
