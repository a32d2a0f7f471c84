"""The gateway's merged subscriptions: one upstream subscription serving
every client (:class:`SubscriptionHub`), and each client's subscription
calls (:class:`ClientSubscriptions`, the hook the forwarded ``database``
set hands its subscription functions to).

Graphene reference: bitshares-core libraries/app/database_api.cpp
(``set_subscribe_callback``, ``set_auto_subscription``,
``set_pending_transaction_callback``, ``set_block_applied_callback``,
``cancel_all_subscriptions``, ``subscribe_to_market``,
``unsubscribe_from_market``, ``handle_object_changed``,
``on_applied_block``); the reads that subscribe are
:mod:`nodeapi.gateway.subscribing_reads`, who receives a notice
:mod:`nodeapi.gateway.notice_routing`.

The hub keeps one *subscription link* to an upstream (an object with
``call(api, function, args) -> Deferred``, given by :meth:`SubscriptionHub.attach`
and taken back by :meth:`~SubscriptionHub.detach` when it dies) and
carries on it the union of the clients' interests:

- ``set_subscribe_callback(1, notify_remove_create)`` (the flag on once a
  client asked for it: the upstream's refusal reaches that client), then
  ``set_auto_subscription(false)`` (so only the gateway's own reads
  subscribe) and ``get_objects(["2.1.0"], true)``: the dynamic global
  properties change with every block, so every block's batch of changed
  objects holds ``2.1.0`` and a batch without it is a batch of created
  objects (bitshares-core sends no other sign of which one it is);
- a client's read that subscribes is sent on the link with ``subscribe``
  true, so the upstream subscribes what it returns at once; the hub then
  adds what the answer holds to that client's interest;
- ``set_block_applied_callback(2)`` / ``set_pending_transaction_callback(3)``
  once a client set one; ``subscribe_to_market(cb, a, b)`` once per
  market (callbacks from 16), ``unsubscribe_from_market`` when its last
  client leaves.

Clients keep their own callback ids: a notice is encoded once and written
to each client that would have received it from the upstream directly
(:mod:`nodeapi.gateway.notice_routing`).  A new link (the pool replaced a
dead upstream) gets the whole union again; notices of the blocks applied
in between are not replayed.  Ids and accounts no client wants any more
stay subscribed upstream until the next link (the upstream's subscription
is a bloom filter that cannot drop one id); the notices they bring go to
nobody.  Upstream limits apply to the link: bitshares-core subscribes at
most ``api_limit_get_full_accounts_subscribe`` (100) accounts per
connection, so more distinct accounts than that among all clients are not
all noticed.
"""

from twisted.internet import defer
from twisted.logger import Logger

from nodeapi.api.arguments import id_key
from nodeapi.errors import ApiError
from nodeapi.gateway.client_subscriptions import ClientSubscriptions
from nodeapi.gateway.notice_routing import Encoded, Interests, encode
from nodeapi.gateway.subscribing_reads import FULL_ACCOUNTS_SUBSCRIBE_LIMIT

#: The hub's callback ids on the upstream link.
SUBSCRIBE_CB, BLOCK_CB, PENDING_CB, FIRST_MARKET_CB = 1, 2, 3, 16
#: An object every block changes (module docstring).
EVERY_BLOCK_OBJECT = "2.1.0"
#: Ids per ``get_objects`` and accounts per ``get_full_accounts`` when the
#: union is subscribed again (bitshares-core's default api_limit_get_objects
#: is 100, api_limit_get_full_accounts 50).
OBJECTS_PER_CALL, ACCOUNTS_PER_CALL = 100, 10
#: Seconds a client's call waits for a subscription link.
LINK_WAIT = 30.0



class SubscriptionHub:
    """One per gateway: the clients' :class:`~.notice_routing.Interests`,
    the subscription link and what it carries (module docstring).

    :param clock: an ``IReactorTime`` (the wait for a link times out on it).
    :param full_accounts_limit: accounts one client may subscribe through
        ``get_full_accounts`` (the upstream's
        ``api_limit_get_full_accounts_subscribe``).
    """

    log = Logger()

    def __init__(self, clock, full_accounts_limit: int = FULL_ACCOUNTS_SUBSCRIBE_LIMIT) -> None:
        self.clock = clock
        self.full_accounts_limit = full_accounts_limit
        self.interests = Interests()
        self.link = None
        self._symbols: dict = {}  # asset id -> symbol, of the markets
        self._waiting: list = []
        self._everything = False  # notify_remove_create on the link
        self._block = self._pending = False
        self._market_cbs: dict = {}  # market -> callback id on the link
        self._cb_markets: dict = {}  # callback id -> market
        self._next_market_cb = FIRST_MARKET_CB

    def client(self, session) -> ClientSubscriptions:
        """The subscription calls of a new client connection."""
        return ClientSubscriptions(self, session)

    # -- the link --------------------------------------------------------------------

    def attach(self, link) -> defer.Deferred:
        """Carry the subscriptions on ``link`` from now on: subscribe the
        union again on it, then let waiting calls through.  Fires when done
        (or failed: the failure is logged, the link is left detached)."""
        self.link = None
        self._attaching = link
        return defer.Deferred.fromCoroutine(self._setup(link))

    def detach(self, link) -> None:
        """``link`` is dead (or replaced): calls wait for the next one."""
        if self._attaching is link:
            self._attaching = None
        if self.link is link:
            self.link = None
            self.log.info("Subscription link lost; waiting for another upstream")

    def ready(self) -> defer.Deferred:
        """Fires with the current link, once there is one (fails with
        ApiError after :data:`LINK_WAIT` s without)."""
        if self.link is not None:
            return defer.succeed(self.link)
        d = defer.Deferred()
        self._waiting.append(d)
        timer = self.clock.callLater(LINK_WAIT, self._timed_out, d)
        d.addBoth(lambda r: (timer.cancel() if timer.active() else None, r)[1])
        return d

    def _timed_out(self, d) -> None:
        if d in self._waiting:
            self._waiting.remove(d)
            d.errback(ApiError("No upstream node is available for subscriptions"))

    async def _setup(self, link) -> None:
        try:
            await self._subscribe_union(link, self._everything)
            if self.interests.block:
                await link.call("database", "set_block_applied_callback", [BLOCK_CB])
            if self.interests.pending:
                await link.call("database", "set_pending_transaction_callback", [PENDING_CB])
            self._block, self._pending = bool(self.interests.block), bool(self.interests.pending)
            self._market_cbs, self._cb_markets = {}, {}
            for market in sorted(self.interests.by_market):
                await self._subscribe_market(link, market)
        except Exception:
            self.log.failure("Subscribing again on a new upstream link failed")
            return
        if self._attaching is not link:
            return  # detached (or replaced) while subscribing
        self._attaching = None
        self.link = link
        self.log.info("Subscriptions carried by a new upstream link ({ids} ids, {accounts} "
                      "accounts, {markets} markets)", ids=len(self.interests.by_id),
                      accounts=len(self.interests.by_account),
                      markets=len(self.interests.by_market))
        waiting, self._waiting = self._waiting, []
        for d in waiting:
            d.callback(link)

    async def _subscribe_union(self, link, everything: bool) -> None:
        """``set_subscribe_callback`` on the link (which forgets what it
        subscribed), then every id and account any client subscribed."""
        await link.call("database", "set_subscribe_callback", [SUBSCRIBE_CB, everything])
        self._everything = everything
        await link.call("database", "set_auto_subscription", [False])
        ids = [EVERY_BLOCK_OBJECT] + sorted(self.interests.by_id, key=id_key)
        await self._subscribe(link, ids, sorted(self.interests.by_account, key=id_key))

    async def _subscribe(self, link, ids: list, accounts: list) -> None:
        for i in range(0, len(ids), OBJECTS_PER_CALL):
            self.interests.learn(await link.call("database", "get_objects",
                                                 [ids[i:i + OBJECTS_PER_CALL], True]))
        for i in range(0, len(accounts), ACCOUNTS_PER_CALL):
            self.interests.learn(await link.call("database", "get_full_accounts",
                                                 [accounts[i:i + ACCOUNTS_PER_CALL], True]))

    async def carry(self, ids: list, accounts: list) -> None:
        """Subscribe ``ids`` and ``accounts`` on the current link (a read
        answered by a link replaced meanwhile)."""
        await self._subscribe(await self.ready(), list(ids), list(accounts))

    async def need_everything(self) -> None:
        """A client asked ``notify_remove_create``: turn it on on the link
        (the upstream's refusal is raised) and subscribe the union again."""
        link = await self.ready()
        if not self._everything:
            await self._subscribe_union(link, True)

    async def need_block(self) -> None:
        link = await self.ready()
        if not self._block:
            await link.call("database", "set_block_applied_callback", [BLOCK_CB])
            self._block = True

    async def need_pending(self) -> None:
        link = await self.ready()
        if not self._pending:
            await link.call("database", "set_pending_transaction_callback", [PENDING_CB])
            self._pending = True

    async def _subscribe_market(self, link, market: tuple) -> None:
        cb = self._next_market_cb
        self._next_market_cb += 1
        await link.call("database", "subscribe_to_market", [cb, market[0], market[1]])
        self._market_cbs[market] = cb
        self._cb_markets[cb] = market

    async def market_of(self, a, b) -> tuple:
        """The market ``(lower asset id, higher asset id)`` of assets ``a``
        and ``b`` (symbols or ids), as the upstream resolves them.

        :raises ApiError: an asset does not exist, or both are the same
            (the upstream's ``subscribe_to_market`` error text is kept)."""
        link = await self.ready()
        found = await link.call("database", "lookup_asset_symbols", [[a, b]])
        if not (found and found[0] and found[1]) or found[0]["id"] == found[1]["id"]:
            # let the upstream say what is wrong, in its own words
            await link.call("database", "subscribe_to_market", [0, a, b])
            raise ApiError("Market assets not found")
        pair = sorted((found[0], found[1]), key=lambda asset: id_key(asset["id"]))
        for asset in pair:
            self._symbols[asset["id"]] = asset["symbol"]
        return pair[0]["id"], pair[1]["id"]

    async def need_market(self, market: tuple) -> None:
        link = await self.ready()
        if market not in self._market_cbs:
            await self._subscribe_market(link, market)

    def market_left(self, market: tuple) -> None:
        """No client wants ``market`` any more: unsubscribe it upstream.
        bitshares-core's ``unsubscribe_from_market`` swaps the two ids when
        its first argument sorts after the second as a string, so it is
        sent the lower asset's id and the higher one's symbol (an id, which
        starts with a digit, sorts before a symbol)."""
        cb = self._market_cbs.pop(market, None)
        if cb is None or market in self.interests.by_market:
            return
        self._cb_markets.pop(cb, None)
        link = self.link
        if link is not None:
            d = link.call("database", "unsubscribe_from_market",
                          [market[0], self._symbols.get(market[1], market[1])])
            d.addErrback(lambda f: self.log.failure("unsubscribe_from_market failed", f))

    # -- notices -------------------------------------------------------------------

    def notice(self, link, cb, params: list) -> None:
        """A notice ``[cb, params]`` from ``link`` (``params`` is the list
        holding the payload): fan it out (module docstring); notices of a
        link no longer attached are dropped."""
        if link is not self.link or not params:
            return
        payload = params[0]
        interests = self.interests
        try:
            if cb == SUBSCRIBE_CB:
                self._objects_notice(payload)
            elif cb == BLOCK_CB:
                self._send_all(interests.block, "block_cb", encode(payload))
            elif cb == PENDING_CB:
                self._send_all(interests.pending, "pending_cb", encode(payload))
            elif cb in self._cb_markets:
                market = self._cb_markets[cb]
                interests.learn(payload)
                fragment = encode(payload)
                for client in list(interests.by_market.get(market, ())):
                    self._send(client, client.markets.get(market), fragment)
        except Exception:
            self.log.failure("Fan-out of an upstream notice failed")

    def _objects_notice(self, batch) -> None:
        if type(batch) is not list or not batch:
            return
        interests = self.interests
        encoded = Encoded(batch)
        if all(type(item) is str for item in batch):
            routes = interests.route_removed(batch)
        else:
            created = not any(type(o) is dict and o.get("id") == EVERY_BLOCK_OBJECT
                              for o in batch)
            interests.learn(batch)
            routes = interests.route_objects(batch, created)
        for client, indexes in routes.items():
            self._send(client, client.subscribe_cb, encoded.payload(indexes))

    def _send_all(self, clients, attribute: str, fragment) -> None:
        for client in list(clients):
            self._send(client, getattr(client, attribute), fragment)

    def _send(self, client, cb, fragment) -> None:
        if cb is None:
            return
        try:
            client.session.send_notice(cb, fragment)
        except Exception:
            self.log.failure("Notice to a client failed")
