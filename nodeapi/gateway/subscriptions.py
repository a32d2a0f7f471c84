"""The gateway's merged subscriptions: one upstream subscription serving
every client (:class:`SubscriptionHub`); each client's calls are
:mod:`nodeapi.gateway.client_subscriptions` (installed into the forwarded
``database`` set), the reads that subscribe
:mod:`nodeapi.gateway.subscribing_reads`, who receives a notice
:mod:`nodeapi.gateway.notice_routing`, the calls waiting for a link
:mod:`nodeapi.gateway.link_wait`.  Graphene reference: bitshares-core
libraries/app/database_api.cpp (the subscription functions,
``handle_object_changed``, ``on_applied_block``).

The hub keeps one *subscription link* from the first client's subscription
on: a connection of the gateway's
:class:`~nodeapi.gateway.pool.UpstreamPool` (an
:class:`~nodeapi.gateway.upstream.Upstream`: ``call``/``call_raw``,
``new_callback_id``, ``listen``), chosen by the pool when one is usable
and chosen again when the pool reports it lost, or its head stale while
another upstream's is fresh (``pool.watch``); the forwarded calls share
the connection.  It carries the union of the clients' interests, under
callback ids of that connection:

- ``set_subscribe_callback(cb, notify_remove_create)`` (the flag on once a
  client asked for it: the upstream's refusal reaches that client), then
  ``set_auto_subscription(false)`` (so only the gateway's own reads
  subscribe) and ``get_objects(["2.1.0"], true)``: the dynamic global
  properties change with every block, so every block's batch of changed
  objects holds ``2.1.0`` and a batch without it is a batch of created
  objects (bitshares-core sends no other sign of which one it is);
- a client's read that subscribes is sent on the link with ``subscribe``
  true, so the upstream subscribes what it returns at once; the hub then
  adds what the answer holds to that client's interest;
- ``set_block_applied_callback`` / ``set_pending_transaction_callback``
  once a client set one; ``subscribe_to_market(cb, a, b)`` once per
  market, ``unsubscribe_from_market`` when its last client leaves.

Clients keep their own callback ids: a notice is encoded once and written
to each client that would have received it from the upstream directly
(:mod:`nodeapi.gateway.notice_routing`).  A new link (the pool replaced a
dead upstream) gets the whole union again; the subscribed objects that
changed in between (the hub keeps a digest of what was last seen of each)
are noticed then, as one batch of changed objects, and the ids of the
blocks applied in between are read and relayed before the next block's
(:mod:`nodeapi.gateway.block_notices`); the changes to subscribed
accounts' other objects in those blocks are not replayed.  Ids and
accounts no client wants any more stay subscribed upstream until the next
link (the upstream's subscription is a bloom filter that cannot drop one
id); the notices they bring go to nobody.  Upstream limits apply to the link: bitshares-core subscribes at
most ``api_limit_get_full_accounts_subscribe`` (100) accounts per
connection, so more distinct accounts than that among all clients are not
all noticed.
"""

from twisted.internet import defer
from twisted.logger import Logger

from nodeapi.api.arguments import id_key
from nodeapi.errors import ApiError
from nodeapi.gateway.client_subscriptions import ClientSubscriptions
from nodeapi.gateway.fanout import EVERY_BLOCK_OBJECT, Fanout
from nodeapi.gateway.head_share import notice_head
from nodeapi.gateway.link_wait import LinkWait
from nodeapi.gateway.notice_routing import Interests
from nodeapi.gateway.subscribing_reads import FULL_ACCOUNTS_SUBSCRIBE_LIMIT
from nodeapi.peers.errors import NoUpstream, PeerDisconnected, PeerRpcError, UpstreamError

#: Ids per ``get_objects`` and accounts per ``get_full_accounts`` when the
#: union is subscribed again (bitshares-core's default api_limit_get_objects
#: is 100, api_limit_get_full_accounts 50).
OBJECTS_PER_CALL, ACCOUNTS_PER_CALL = 100, 10
#: Seconds before subscribing again after a link's subscription failed,
#: doubled at each failure in a row up to the second figure.
RETRY_DELAY, MAX_RETRY_DELAY = 1.0, 60.0


class SubscriptionHub:
    """One per gateway: the clients' :class:`~.notice_routing.Interests`,
    the subscription link and what it carries (module docstring).

    :param pool: the :class:`~nodeapi.gateway.pool.UpstreamPool` (watched
        from now on), or None to attach links by hand (:meth:`attach`).
    :param clock: an ``IReactorTime`` (the wait for a link times out on it).
    :param full_accounts_limit: accounts one client may subscribe through
        ``get_full_accounts`` (the upstream's
        ``api_limit_get_full_accounts_subscribe``).
    :ivar clients: session -> its :class:`ClientSubscriptions`.
    :ivar waiting: the calls waiting for a link
        (:class:`~nodeapi.gateway.link_wait.LinkWait`)."""

    log = Logger()

    def __init__(self, pool, clock,
                 full_accounts_limit: int = FULL_ACCOUNTS_SUBSCRIBE_LIMIT) -> None:
        self.pool = pool
        self.clock = clock
        self.full_accounts_limit = full_accounts_limit
        self.interests = Interests()
        self.clients: dict = {}
        self.link = None
        self._attaching = None
        self._carried = False  # a link carried the subscriptions before
        self._wanted = False  # some client subscribed (want)
        self._failures = 0  # setups failed in a row
        self._warned = False  # about the upstream's account budget
        self.waiting = LinkWait(clock)  # calls waiting for a link
        self._symbols: dict = {}  # asset id -> symbol, of the markets
        self.fanout = Fanout(self.interests)
        self.on_head = None  # on_head(link, block number): the heads its notices show
        self._reset_link_state()
        if pool is not None:
            pool.watch(self._pool_changed)

    def _reset_link_state(self) -> None:
        self._everything = False  # notify_remove_create on the link
        self._kinds: dict = {}  # callback id on the link -> "subscribe", "block", ... or a market
        self._subscribe_cb = self._block_cb = self._pending_cb = None
        self._market_cbs: dict = {}  # market -> callback id on the link

    def client_of(self, session) -> ClientSubscriptions:
        """The subscription calls of the connection of ``session`` (made on
        first use, forgotten when it closes)."""
        client = self.clients.get(session)
        if client is None:
            client = self.clients[session] = ClientSubscriptions(self, session)
        return client

    # -- the link --------------------------------------------------------------------

    def _pool_changed(self, upstream) -> None:
        if not upstream.usable:
            self.detach(upstream)
        elif (upstream is self.link and not upstream.healthy
              and any(u.healthy for u in self.pool.upstreams)):
            self.detach(upstream)  # its head stopped: notices come from a live one
        self._pick()

    def _pick(self) -> None:
        """Attach the pool's choice when subscriptions are wanted and no
        link carries them (none usable: the next change of the pool tries
        again)."""
        if (self.link is None and self._attaching is None and self.pool is not None
                and self._wanted):
            try:
                chosen = self.pool.pick()
            except NoUpstream:
                return
            self.attach(chosen)

    def want(self) -> None:
        """A client subscribes: from now on a link carries the
        subscriptions (the hub stays off the upstreams until then)."""
        self._wanted = True
        self._pick()

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
        ApiError after :data:`~.link_wait.LINK_WAIT` s without)."""
        if self.link is not None:
            return defer.succeed(self.link)
        self.want()
        return self.waiting.wait()

    def _callback(self, link, kind) -> int:
        """A new callback id on ``link`` whose notices are of ``kind``."""
        cb = link.new_callback_id()
        self._kinds[cb] = kind
        link.listen(cb, lambda params: self.notice(link, cb, params))
        return cb

    async def _setup(self, link) -> None:
        self._reset_link_state()
        try:
            await self._subscribe_union(link, bool(self.interests.everything),
                                        catch_up=self._carried)
            if self.interests.block:
                await self._set_block(link)
            if self.interests.pending:
                await self._set_pending(link)
            for market in sorted(self.interests.by_market):
                await self._subscribe_market(link, market)
        except Exception as exc:
            delay = min(RETRY_DELAY * 2 ** self._failures, MAX_RETRY_DELAY)
            self._failures += 1
            if isinstance(exc, PeerDisconnected) or self._failures > 1:
                self.log.info("Subscribing on upstream {name} failed ({error}); choosing "
                              "again in {delay} s", name=getattr(link, "name", "?"),
                              error=exc, delay=delay)
            else:
                self.log.failure("Subscribing on upstream {name} failed; choosing again in "
                                 "{delay} s", name=getattr(link, "name", "?"), delay=delay)
            if isinstance(exc, PeerRpcError):  # refused: the waiting calls are told so
                self.waiting.fail(UpstreamError(exc))
            if self._attaching is link:
                self._attaching = None
                if self.pool is not None and self.pool.running:
                    self.clock.callLater(delay, self._pick)
            return
        if self._attaching is not link:
            return  # detached (or replaced) while subscribing
        self._attaching = None
        self.link = link
        self._carried = True
        self._failures = 0
        self.log.info("Subscriptions carried by upstream {name} ({ids} ids, {accounts} "
                      "accounts, {markets} markets)", name=getattr(link, "name", "?"),
                      ids=len(self.interests.by_id), accounts=len(self.interests.by_account),
                      markets=len(self.interests.by_market))
        self.waiting.release(link)
        # callbacks clients set while this link was being set up
        for wanted, need in ((self.interests.block, self.need_block),
                             (self.interests.pending, self.need_pending)):
            if wanted:
                defer.Deferred.fromCoroutine(need()).addErrback(
                    lambda f: self.log.failure("Setting a callback on the link failed", f))

    async def _subscribe_union(self, link, everything: bool, catch_up: bool = False) -> None:
        """``set_subscribe_callback`` on the link (which forgets what it
        subscribed), then every id and account any client subscribed; with
        ``catch_up`` (a new link after a lost one), the subscribed objects
        that changed meanwhile are noticed (:meth:`~.fanout.Fanout.catch_up`)."""
        if self._subscribe_cb is None:
            self._subscribe_cb = self._callback(link, "subscribe")
        await link.call("database", "set_subscribe_callback", [self._subscribe_cb, everything])
        self._everything = everything
        await link.call("database", "set_auto_subscription", [False])
        self.interests.forget_unsubscribed()
        ids = [EVERY_BLOCK_OBJECT] + sorted(self.interests.by_id, key=id_key)
        await self._subscribe(link, ids, sorted(self.interests.by_account, key=id_key),
                              catch_up)

    async def _subscribe(self, link, ids: list, accounts: list, catch_up=False) -> None:
        for i in range(0, len(ids), OBJECTS_PER_CALL):
            found = await link.call("database", "get_objects",
                                    [ids[i:i + OBJECTS_PER_CALL], True])
            self.interests.learn(found)
            if catch_up:
                self.fanout.catch_up(found)
            else:
                self.remember(found)
        for i in range(0, len(accounts), ACCOUNTS_PER_CALL):
            self.interests.learn(await link.call("database", "get_full_accounts",
                                                 [accounts[i:i + ACCOUNTS_PER_CALL], True]))

    def remember(self, objects) -> None:
        """What subscribers last saw of the objects in ``objects``
        (:meth:`~.notice_routing.Interests.remember`)."""
        self.interests.remember(objects)

    def check_account_budget(self) -> None:
        """Warn (once) when the clients subscribe more distinct accounts
        than one upstream connection subscribes (module docstring)."""
        if len(self.interests.by_account) > self.full_accounts_limit and not self._warned:
            self._warned = True
            self.log.warn("Clients subscribe {n} accounts with get_full_accounts; the "
                          "upstream subscribes at most {limit} per connection, so changes "
                          "of the others reach no client", n=len(self.interests.by_account),
                          limit=self.full_accounts_limit)

    async def carry(self, ids: list, accounts: list) -> None:
        """Subscribe ``ids`` and ``accounts`` on the current link (a read
        answered by a link replaced meanwhile)."""
        await self._subscribe(await self.ready(), list(ids), list(accounts))

    async def _set_block(self, link) -> None:
        cb = self._callback(link, "block")
        await link.call("database", "set_block_applied_callback", [cb])
        self._block_cb = cb

    async def _set_pending(self, link) -> None:
        cb = self._callback(link, "pending")
        await link.call("database", "set_pending_transaction_callback", [cb])
        self._pending_cb = cb

    async def _subscribe_market(self, link, market: tuple) -> None:
        cb = self._callback(link, market)
        await link.call("database", "subscribe_to_market", [cb, market[0], market[1]])
        self._market_cbs[market] = cb

    # -- what clients need -----------------------------------------------------------

    async def ask(self, function: str, args: list, link=None, raw: bool = False):
        """``database.function(args)`` on ``link`` (default: the current
        link, waited for): the answer (its JSON bytes with ``raw``).  The
        upstream's error is raised as :class:`UpstreamError` (it reaches
        the client unchanged), a lost connection as ``PeerDisconnected``."""
        if link is None:
            link = await self.ready()
        try:
            if raw:
                return await link.call_raw("database", function, args)
            return await link.call("database", function, args)
        except PeerRpcError as exc:
            raise UpstreamError(exc) from None

    async def need_everything(self) -> None:
        """A client asked ``notify_remove_create``: turn it on on the link
        (the upstream's refusal is raised) and subscribe the union again
        (noticing what changed while it was not subscribed)."""
        link = await self.ready()
        if not self._everything:
            try:  # bitshares-core refuses before it forgets anything
                await self._subscribe_union(link, True, catch_up=True)
            except PeerRpcError as exc:
                raise UpstreamError(exc) from None

    async def need_block(self) -> None:
        link = await self.ready()
        if self._block_cb is None:
            self.fanout.blocks.last = None  # no gap to fill for those who ask now
            await self._set_block(link)

    async def need_pending(self) -> None:
        link = await self.ready()
        if self._pending_cb is None:
            await self._set_pending(link)

    async def market_of(self, a, b) -> tuple:
        """The market ``(lower asset id, higher asset id)`` of assets ``a``
        and ``b`` (symbols or ids), as the upstream resolves them.

        :raises UpstreamError: an asset does not exist, or both are the
            same (the upstream's own ``subscribe_to_market`` error)."""
        found = await self.ask("lookup_asset_symbols", [[a, b]])
        if not (found and found[0] and found[1]) or found[0]["id"] == found[1]["id"]:
            # let the upstream say what is wrong, in its own words (its
            # unsubscribe_from_market reads the assets as subscribe_to_market
            # does, and changes nothing)
            await self.ask("unsubscribe_from_market", [a, b])
            raise ApiError(f"Market {a}:{b} not found")
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
        if market in self.interests.by_market:
            return
        cb = self._market_cbs.pop(market, None)
        link = self.link
        if cb is None or link is None:
            return
        link.listen(cb, None)
        self._kinds.pop(cb, None)
        d = link.call("database", "unsubscribe_from_market",
                      [market[0], self._symbols.get(market[1], market[1])])
        d.addErrback(lambda f: f.trap(PeerDisconnected))  # gone with its connection
        d.addErrback(lambda f: self.log.failure("unsubscribe_from_market failed", f))

    # -- notices -------------------------------------------------------------------

    def notice(self, link, cb, params: list) -> None:
        """A notice ``[cb, params]`` from ``link`` (``params`` is the list
        holding the payload): fanned out (:class:`~.fanout.Fanout`); notices
        of a link neither attached nor being attached are dropped."""
        if (link is not self.link and link is not self._attaching) or not params:
            return
        kind = self._kinds.get(cb)
        payload = params[0]
        fanout = self.fanout
        if self.on_head is not None and kind in ("subscribe", "block"):
            num = notice_head(payload)
            if num is not None:  # first: a client told of the block reads after it
                self.on_head(link, num)
        try:
            if kind == "subscribe":
                fanout.objects(payload)
            elif kind == "block":
                fanout.blocks.notice(link, payload)
            elif kind == "pending":
                fanout.pending(payload)
            elif kind is not None:
                fanout.market(kind, payload)
        except Exception:
            self.log.failure("Fan-out of an upstream notice failed")
