"""The subscription budget: how many subscribed items a connection may hold.

An operator limits the items a client keeps subscribed (api-access
``limits.subscriptions`` per user, ``--max-subscriptions-per-ip`` per
source address; docs/rpc-access.rst "Limits per user and per source
address").  The API sets do not know users or addresses: each connection's
:class:`nodeapi.api.base.Session` carries a :class:`SubscriptionBudget` as
``session.budget`` (:data:`UNLIMITED` unless the RPC layer gives it
another, :class:`nodeapi.rpc.limits.SessionLimits`), and whoever adds a
subscribed item to a connection takes it from that budget first and gives
it back when the item ends.

What counts as one item (the database set,
:mod:`nodeapi.api.database.subscriptions` and
:mod:`nodeapi.api.database.markets.subscriptions`): each object id
remembered for the subscribe callback (also the accounts
``get_full_accounts`` subscribes), each subscribed market, and each of the
three callbacks (subscribe, pending transaction, block applied) while it
is set; the network_broadcast set (:mod:`nodeapi.api.broadcast`): each
callback of ``broadcast_transaction_with_callback`` until its transaction
is confirmed or expires.

Contract, for every user of the interface (the database set's sections,
and a gateway that forwards subscriptions to an upstream node and keeps
them in its own per-connection tables):

* :meth:`SubscriptionBudget.take` before the item exists; when it raises
  :class:`SubscriptionLimitExceeded` nothing was taken and the item must not
  be added: let the error reach the client (it is the JSON-RPC error the
  client sees, ``data.name`` ``subscription_limit_exceeded``).  A call that
  subscribes several items takes one at a time, so those taken before the
  refusal stay subscribed;
* :meth:`SubscriptionBudget.give_back` exactly once for each item taken, when
  it ends: unsubscribed, cancelled (``cancel_all_subscriptions``), the
  object removed from the chain, the connection closed.  Giving back more
  than was taken is a bug of the caller;
* the budget is read from ``session.budget`` at each use (never cached
  across calls): a login may change the accounts it charges, the object
  stays the same.

For example, a forwarded ``subscribe_to_market`` kept in a per-connection
table::

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
    """The subscribed items one connection may still add (module docstring).

    This base class is the interface and the unlimited budget: ``take``
    never refuses.  Implementations charge shared counters (per user, per
    source address) and refuse once one is at its limit."""

    def take(self, count: int = 1) -> None:
        """Reserve ``count`` (>= 1) more items for this connection.

        :raises SubscriptionLimitExceeded: no room for ``count`` more items
            (then nothing is reserved)."""

    def give_back(self, count: int = 1) -> None:
        """``count`` (>= 0) items taken before have ended."""


#: The budget of a connection without limits (the default of
#: :class:`nodeapi.api.base.Session`).
UNLIMITED = SubscriptionBudget()
