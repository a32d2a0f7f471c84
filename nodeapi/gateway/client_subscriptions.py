"""One gateway client's subscription calls (:class:`ClientSubscriptions`):
the ``database`` functions graphene groups under "Subscriptions" and the
market subscriptions, answered over the gateway's merged upstream
subscriptions (:class:`nodeapi.gateway.subscriptions.SubscriptionHub`; the
client is carried by one of its shards, :mod:`nodeapi.gateway.shards`), and
the reads that subscribe what they return while the client has a
subscribe callback (:mod:`nodeapi.gateway.subscribing_reads`).

Graphene reference: bitshares-core libraries/app/database_api.cpp
(``set_subscribe_callback``, ``cancel_all_subscriptions``,
``get_full_accounts``: at most ``api_limit_get_full_accounts_subscribe``
accounts per connection).  Each function answers null like graphene's;
the upstream's errors (an unknown asset, ``notify_remove_create`` refused)
reach the client as the upstream raised them
(:class:`~nodeapi.peers.errors.UpstreamError`); a callback on an HTTP
request is an :class:`~nodeapi.errors.ApiError`.  Each subscribed object
id, market and callback is one item of the connection's subscription
budget (:mod:`nodeapi.api.budget`).  A subscription's way through the
gateway: docs/DESIGN.rst, "A wallet's account subscription through a
gateway".
"""

import orjson
from twisted.internet import defer

from nodeapi.errors import ApiError
from nodeapi.gateway.notice_routing import Interest
from nodeapi.gateway.subscribing_reads import (
    SUBSCRIBING_READS, items_of, may_subscribe, subscribe_argument, subscribed_by,
    with_subscribe)
from nodeapi.peers.errors import PeerDisconnected

#: Times a subscribing read is sent again when its link dies under it.
READ_ATTEMPTS = 3


class ClientSubscriptions:
    """The subscriptions of one client connection, made by the hub at the
    connection's first subscription function
    (:meth:`~nodeapi.gateway.subscriptions.SubscriptionHub.client_of`):
    the forwarded ``database`` set
    (:class:`~nodeapi.gateway.apis.ForwardedDatabaseApi`, whose API
    functions bind the arguments) calls its methods of the same names and
    sends the reads :meth:`takes_read` accepts through :meth:`read`.

    :param hub: the gateway's :class:`~nodeapi.gateway.subscriptions.SubscriptionHub`.
    :param session: the connection's :class:`~nodeapi.api.base.Session`
        (``websocket``, ``send_notice``, ``on_close``).
    :ivar interest: the client's :class:`~nodeapi.gateway.notice_routing.Interest`."""

    def __init__(self, hub, session) -> None:
        self.session = session
        self.hub = hub
        self.interest = Interest(session)
        self._closed = False
        session.on_close(self.close)

    def _callback(self, cb):
        if not getattr(self.session, "websocket", False):
            raise ApiError("callbacks need a WebSocket connection")
        if self._closed:
            raise ApiError("connection closed")
        return cb

    # -- the subscription functions ----------------------------------------------------

    def set_subscribe_callback(self, cb, notify_remove_create: bool = False):
        """Set the subscribe callback, forgetting this client's object
        subscriptions; ``notify_remove_create`` true needs the upstream to
        allow it (its error otherwise)."""
        cb = self._callback(cb)
        return defer.Deferred.fromCoroutine(self._set_subscribe(cb, bool(notify_remove_create)))

    @property
    def shard(self):
        """The :class:`~nodeapi.gateway.shards.Shard` carrying this client now."""
        return self.interest.shard

    async def _set_subscribe(self, cb, everything: bool) -> None:
        if everything:
            await self.shard.need_everything()
        self.hub.interests.set_subscribe(self.interest, cb, everything)
        self.shard.want()
        return None

    def set_auto_subscription(self, enable: bool):
        """Whether reads subscribe when their ``subscribe`` argument is left
        out (default true)."""
        self.interest.auto_subscription = enable
        return None

    def set_block_applied_callback(self, cb):
        """Notify ``cb`` with each applied block's id."""
        cb = self._callback(cb)
        return defer.Deferred.fromCoroutine(self._set(
            lambda: self.shard, lambda: self.shard.need_block(),
            self.hub.interests.set_block, cb))

    def set_pending_transaction_callback(self, cb):
        """Notify ``cb`` with each transaction the first subscription
        link's upstream accepts and each one broadcast through the gateway
        (once each, :meth:`~nodeapi.gateway.subscriptions.SubscriptionHub.pending_notice`)."""
        cb = self._callback(cb)
        return defer.Deferred.fromCoroutine(self._set(
            lambda: self.hub.shards[0], self.hub.need_pending,
            self.hub.interests.set_pending, cb))

    async def _set(self, shard_of, need, record, cb) -> None:
        record(self.interest, cb)  # a link attached later sets it up too
        shard = shard_of()
        if shard.link is not None:
            await need()
        else:
            shard.want()
        return None

    def cancel_all_subscriptions(self):
        """End the subscribe callback, the object and market subscriptions;
        the block and pending callbacks stay."""
        self._cancel()
        return None

    def subscribe_to_market(self, callback, a, b):
        """Notify ``callback`` of the market of assets ``a`` and ``b``
        (symbols or ids; bitshares-core's errors for a missing asset or two
        equal ones)."""
        callback = self._callback(callback)
        return defer.Deferred.fromCoroutine(self._subscribe_market(callback, a, b))

    async def _subscribe_market(self, callback, a, b) -> None:
        market = await self.hub.market_of(self.shard, a, b)
        if self._closed:
            return None
        interests = self.hub.interests
        known = market in self.interest.markets
        interests.subscribe_market(self.interest, market, callback)  # the budget may refuse
        shard = self.shard
        try:
            await shard.need_market(market)
        except Exception:
            if not known:
                interests.unsubscribe_market(self.interest, market)
                self.hub.market_left(shard, market)
            raise
        if self._closed:  # gone meanwhile: nobody wants what was subscribed for it
            self.hub.market_left(shard, market)
        return None

    def unsubscribe_from_market(self, a, b):
        """Stop the notices of the market of ``a`` and ``b`` (the pair of
        asset ids in either order: unlike bitshares-core, whose comparison
        of the argument strings misses a market whose symbols sort the
        other way than its ids, like the node's own
        :mod:`nodeapi.api.database.markets.subscriptions`)."""
        return defer.Deferred.fromCoroutine(self._unsubscribe_market(a, b))

    async def _unsubscribe_market(self, a, b) -> None:
        market = await self.hub.market_of(self.shard, a, b)
        self.hub.interests.unsubscribe_market(self.interest, market)
        if self.shard is not None:
            self.hub.market_left(self.shard, market)
        return None

    # -- reads ---------------------------------------------------------------------------

    def takes_read(self, function: str, args: list) -> bool:
        """Whether a call of ``function`` subscribes for this client, so it
        must go through :meth:`read` (graphene ``get_whether_to_subscribe``:
        a subscribe callback, and ``subscribe`` true or left out with
        auto-subscription on).  A ``subscribe`` argument that is no boolean
        is left to the upstream to refuse."""
        interest = self.interest
        if function not in SUBSCRIBING_READS or interest.subscribe_cb is None:
            return False
        try:
            subscribe = subscribe_argument(function, args)
        except ApiError:
            return False
        wanted = interest.auto_subscription if subscribe is None else subscribe
        if function == "get_full_accounts" and len(interest.accounts) >= \
                self.hub.full_accounts_limit:
            return False  # bitshares-core: at the limit, nothing more is subscribed
        return wanted and may_subscribe(function, args)

    def read(self, function: str, args: list) -> defer.Deferred:
        """Send a subscribing read on this client's shard's link with
        ``subscribe`` true (or take the answer of an identical read of the
        same block on that link, :mod:`nodeapi.gateway.read_share`); fires
        with the upstream's answer (its JSON as
        an ``orjson.Fragment``), once what it subscribes is this client's
        interest.  Before it is sent, as many budget items as it may
        subscribe are taken (the ids it names that the client does not hold
        yet; two per liquidity pool with its statistics): when they do not
        fit the whole read is refused and nothing is subscribed upstream
        (the node's own database set subscribes the items that fit first);
        once answered, the items of what it did not subscribe go back.  The
        accounts it may subscribe are placed
        (:meth:`~nodeapi.gateway.subscriptions.SubscriptionHub.place`).
        Sent again (up to :data:`READ_ATTEMPTS` times) when the link dies
        before the answer; the upstream's error is raised as
        :class:`~nodeapi.peers.errors.UpstreamError`.

        :raises SubscriptionLimitExceeded: the items do not fit the budget.
        :raises SubscriptionCapacity: no subscription connection has room
            for its accounts."""
        return defer.Deferred.fromCoroutine(self._read(function, args))

    def _new_accounts(self, args: list) -> int:
        """Accounts a ``get_full_accounts`` call may add to this client's
        (names not known as its accounts), at most its room."""
        interest, hub = self.interest, self.hub
        names = args[0] if args and type(args[0]) is list else []
        new = set()
        for name in names:
            known = hub.known_account(name)
            if known is None:
                new.add(("name", name))
            elif known not in interest.accounts:
                new.add(known)
        return min(len(new), max(hub.full_accounts_limit - len(interest.accounts), 0))

    async def _read(self, function: str, args: list):
        sent = with_subscribe(function, args)
        hub, interest = self.hub, self.interest
        items = items_of(function, args, interest.ids)
        accounts = self._new_accounts(args) if function == "get_full_accounts" else 0
        budget = self.session.budget
        if items:
            budget.take(items)  # refused: nothing is sent
        shard = None
        try:
            shard = await hub.place(self, accounts)
            for attempt in range(READ_ATTEMPTS):
                link = await shard.ready()
                generation = shard.generation
                try:
                    raw = await shard.ask_shared(function, sent, link)
                    break
                except PeerDisconnected:
                    shard.detach(link)
                    if attempt == READ_ATTEMPTS - 1:
                        raise
        finally:
            if items:
                budget.give_back(items)  # taken again below for what was subscribed
            if shard is not None:
                shard.reserved -= accounts
        answer = orjson.loads(raw)
        ids, accounts = subscribed_by(function, answer)
        if function == "get_full_accounts":
            hub.learn_names(answer)
            accounts = in_order_asked(args, answer)
            shard.link_subscribed(accounts)
        if not self._closed and interest.subscribe_cb is not None:
            hub.interests.learn(answer)
            try:  # fits: the items were free a moment ago
                hub.interests.subscribe_ids(interest, ids)
                for account in accounts:
                    if len(interest.accounts) < hub.full_accounts_limit:
                        hub.interests.subscribe_account(interest, account)
            finally:
                shard.remember_answer(function, answer)
                if shard.link is not link or shard.generation != generation \
                        or interest.shard is not shard:
                    # the link changed (or subscribed its union again) while
                    # the answer was on its way: these were not among it
                    await interest.shard.carry(ids, accounts)
        elif self._closed:
            hub.release_if_empty(shard)  # its last client left while it read
        return orjson.Fragment(raw)

    # -- the end ---------------------------------------------------------------------------

    def _cancel(self) -> None:
        markets = list(self.interest.markets)
        self.hub.interests.cancel_objects(self.interest)
        self.hub.interests.cancel_markets(self.interest)
        if self.shard is not None:
            for market in markets:
                self.hub.market_left(self.shard, market)

    def close(self) -> None:
        """The connection closed: everything it subscribed ends."""
        if self._closed:
            return
        self._closed = True
        self._cancel()
        self.hub.interests.remove(self.interest)
        self.hub.left(self.interest)
        if self.hub.clients.get(self.session) is self:
            del self.hub.clients[self.session]


def in_order_asked(args: list, answer) -> list:
    """The account ids of a ``get_full_accounts`` ``answer`` (pairs
    ``[name or id asked, full account]``, sorted) in the order ``args``
    asked for them: the order in which bitshares-core subscribes them."""
    found = {}
    for pair in answer or ():
        if type(pair) is list and len(pair) == 2 and type(pair[1]) is dict:
            account = pair[1].get("account")
            if type(account) is dict and type(account.get("id")) is str:
                found.setdefault(pair[0], account["id"])
    names = args[0] if args and type(args[0]) is list else []
    out = []
    for name in names:
        account = found.get(name) if type(name) is str else None
        if account is not None and account not in out:
            out.append(account)
    return out
