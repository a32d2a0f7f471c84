"""database API, graphene section "Markets / feeds": ``subscribe_to_market``
/ ``unsubscribe_from_market`` (:class:`MarketSubscriptions`, a section of
:class:`nodeapi.api.database.DatabaseApi`), per connection.

Graphene reference: bitshares-core libraries/app/database_api.cpp
(``subscribe_to_market``, ``unsubscribe_from_market``,
``cancel_all_subscriptions``, ``on_applied_block``,
``handle_object_changed`` with ``enqueue_if_subscribed_to_market``).
Notices of a subscribed market, after each applied block, in this order,
each as ``{"method": "notice", "params": [callback, [payload]]}``:

1. the block's fills of that market: ``[[op, result], ...]`` (virtual
   fill_order operations ``[4, {...}]`` with their ``[0, {}]`` results);
2. its limit orders created by the block (full objects);
3. its limit orders changed by the block (full objects);
4. its limit orders removed by the block (ids ``"1.7.N"``).

A notice is sent only when its list is not empty.  An order created and
removed by the same block (a taker filled at once) is not notified, as in
graphene.  A market is the unordered pair of assets (``a``/``b`` symbols or
ids, ``no such asset`` otherwise, the two must differ); subscribing again
replaces the callback.  Unlike graphene, ``unsubscribe_from_market`` orders
the pair by asset id (graphene compares the argument strings, so it misses
a market whose symbols sort the other way than its ids).  Subscriptions
end with ``cancel_all_subscriptions`` and when the connection closes (the
connection's :class:`~nodeapi.api.database.subscriptions.Subscriptions`,
given to the constructor, calls :meth:`MarketSubscriptions.cancel`).  Each
subscribed market is one item of the connection's subscription budget
(``session.budget``, :mod:`nodeapi.api.budget`).
"""

from twisted.logger import Logger

from nodeapi.api.base import Section, api_function
from nodeapi.api.database.changes import block_changes, select_orders
from nodeapi.api.lookup import get_asset
from nodeapi.errors import ApiError
from nodeapi.plugins.market_history.objects import market_of


class MarketSubscriptions(Section):
    """Market subscriptions of one connection: notices go through
    ``session``; callbacks are checked, and the subscriptions cancelled, by
    the connection's ``subscriptions``
    (:class:`~nodeapi.api.database.subscriptions.Subscriptions`)."""

    log = Logger()

    def __init__(self, node, session, subscriptions) -> None:
        super().__init__(node)
        self.session = session
        self.subscriptions = subscriptions
        self._callbacks: dict = {}  # market -> callback id
        self._orders: dict = {}  # order id -> market, orders of subscribed markets
        self._observer = None
        subscriptions.cancel_also(self.cancel)

    def _market_arg(self, a, b) -> tuple:
        state = self.chain.state
        a_id, b_id = get_asset(state, a)["id"], get_asset(state, b)["id"]
        if a_id == b_id:
            raise ApiError("The two assets of a market must differ")
        return market_of(a_id, b_id)

    @api_function
    def subscribe_to_market(self, callback: int, a, b):
        """Notify ``callback`` of the fills and order changes of the market
        of assets ``a`` and ``b`` after each block (module docstring)."""
        callback = self.subscriptions.callback_id(callback)
        market = self._market_arg(a, b)
        subs = self._callbacks
        if market not in subs:
            self.session.budget.take()
            state = self.chain.state
            for order in state.limit_orders(*market) + state.limit_orders(market[1], market[0]):
                self._orders[order["id"]] = market
        subs[market] = callback
        if self._observer is None:
            self._observer = self._on_block
            self.chain.add_block_observer(self._observer)
            self.subscriptions.hook_close()
        return None

    @api_function
    def unsubscribe_from_market(self, a, b):
        """Stop the notices of the market of ``a`` and ``b``."""
        market = self._market_arg(a, b)
        subs = self._callbacks
        if subs.pop(market, None) is not None:
            self.session.budget.give_back()
            self._orders = {o: m for o, m in self._orders.items() if m != market}
        if not subs:
            self._stop_observer()
        return None

    def cancel(self) -> None:
        """End every market subscription of this connection."""
        if self._callbacks:
            self.session.budget.give_back(len(self._callbacks))
        self._callbacks = {}
        self._orders = {}
        self._stop_observer()

    def _stop_observer(self) -> None:
        if self._observer is not None:
            self.chain.remove_block_observer(self._observer)
            self._observer = None

    def _on_block(self, applied) -> None:
        try:
            self._notify_markets(applied)
        except Exception:
            self.log.failure("Block {num} market notices failed", num=applied.block_num)

    def _notify_markets(self, applied) -> None:
        """Send the notices :func:`select_orders` picks for this connection's
        markets, the order lists shared with the other connections sent the
        same (:meth:`BlockChanges.batch`)."""
        subs = self._callbacks
        changes = block_changes(self.node.api_answers, self.chain, applied)
        if not any(changes.markets()):  # no fill, no order changed: nothing to tell
            return
        fills, created, changed, removed = select_orders(changes, subs, self._orders)
        send = self.session.send_notice
        for market, items in fills.items():
            send(subs[market], items)
        for kind, batch in (("objects", created), ("objects", changed), ("ids", removed)):
            for market, ids in batch.items():
                callback = subs.get(market)
                if callback is not None:
                    send(callback, changes.batch(kind, ids))
