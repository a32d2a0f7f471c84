"""The subscription budget: how many subscribed items a connection may hold.

An operator limits the items a client keeps subscribed (api-access
``limits.subscriptions`` per user, ``--max-subscriptions-per-ip`` per
source address; docs/rpc-access.rst "Limits per user and per source
address").  The API sets do not know users or addresses: each connection's
:class:`nodeapi.api.base.Session` carries a :class:`SubscriptionBudget` as
``session.budget`` (:data:`UNLIMITED` unless the RPC layer gives it
another, :class:`nodeapi.rpc.limits.SessionLimits`).  A node's object
subscriptions: docs/DESIGN.rst, "An object subscription on a node"; a
gateway's: "A wallet's account subscription through a gateway".
"""

from nodeapi.errors import ClientLimitExceeded


class SubscriptionLimitExceeded(ClientLimitExceeded):
    """Subscription limit reached

    Raised by :meth:`SubscriptionBudget.take` when the connection's user or
    source address holds as many subscribed items as its limit allows.
    ``error.data.name`` is ``subscription_limit_exceeded``;
    ``error.data.stack[0].data`` is ``{"limit": N, "scope": "user" or
    "source"}``.
    """

    name = "subscription_limit_exceeded"

    def __init__(self, limit: int, scope: str, whom: str, setting: str) -> None:
        """``limit``: the items allowed; ``scope``: ``"user"`` or
        ``"source"``; ``whom``: the user or address, as the message names
        it; ``setting``: where the limit is set, as the message names it
        (an api-access entry's ``limits.subscriptions`` or
        ``--max-subscriptions-per-ip``)."""
        super().__init__(f"Subscription limit reached: {limit} subscribed items for {whom} "
                         f"({setting}); cancel_all_subscriptions, unsubscribe, or call with "
                         f"subscribe false")
        self.details = {"limit": limit, "scope": scope}


class SubscriptionBudget:
    """The subscribed items one connection may still add.

    One item: each object id remembered for the subscribe callback (also
    the accounts ``get_full_accounts`` subscribes), each subscribed market,
    each of the three database callbacks (subscribe, pending transaction,
    block applied) while it is set, each callback of
    ``broadcast_transaction_with_callback`` until its transaction is
    confirmed or expires; a gateway's per-connection tables count the same.
    Whoever adds an item takes it first and gives it back when it ends;
    the budget is read from ``session.budget`` at each use (never cached
    across calls: a login may change the accounts it charges).

    This base class is the interface and the unlimited budget: ``take``
    never refuses.  Implementations charge shared counters (per user, per
    source address) and refuse once one is at its limit.  For example, a
    forwarded ``subscribe_to_market`` kept in a per-connection table::

        if market not in table:
            session.budget.take()          # SubscriptionLimitExceeded: answer it
            table[market] = callback       # now the item exists
        ...
        if table.pop(market, None) is not None:   # unsubscribed, cancelled
            session.budget.give_back()
        ...
        session.budget.give_back(len(table))      # the connection closed
        table.clear()
    """

    def take(self, count: int = 1) -> None:
        """Reserve ``count`` (>= 1) more items for this connection, before
        they exist.  A call that subscribes several items takes one at a
        time, so those taken before a refusal stay subscribed.

        :raises SubscriptionLimitExceeded: no room for ``count`` more items
            (then nothing is reserved and the item must not be added; the
            error is the JSON-RPC error the client sees)."""

    def give_back(self, count: int = 1) -> None:
        """``count`` (>= 0) items taken before have ended (unsubscribed,
        cancelled, the object removed from the chain, the connection
        closed), exactly once each: giving back more than was taken is a
        bug of the caller."""


#: The budget of a connection without limits (the default of
#: :class:`nodeapi.api.base.Session`).
UNLIMITED = SubscriptionBudget()
