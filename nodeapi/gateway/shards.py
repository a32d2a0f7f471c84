"""One subscription connection of the gateway (:class:`Shard`): the
clients it carries, the upstream connection (the *link*) that carries the
union of their interests, and what that link subscribed.

The gateway's :class:`~nodeapi.gateway.subscriptions.SubscriptionHub`
places each subscribing client on one shard; shard ``i`` connects with
connection ``i`` of an upstream chosen by the pool
(:class:`~nodeapi.gateway.side_links.SideLinks`: shard 0 shares the pool's
connection).  On its link a shard holds, under callback ids of that
connection:

- ``set_subscribe_callback(cb, notify_remove_create)`` (the flag on once
  one of its clients asked for it: the upstream's refusal reaches that
  client), ``set_auto_subscription(false)`` (so only the gateway's own
  reads subscribe) and ``get_objects(["2.1.0"], true)``: the dynamic
  global properties change with every block, so every block's batch of
  changed objects holds ``2.1.0`` and a batch without it is a batch of
  created objects (bitshares-core sends no other sign of which one it is);
- its clients' subscribed ids (``get_objects`` with ``subscribe`` true) and
  accounts (``get_full_accounts`` with ``subscribe`` true): at most
  ``api_limit_get_full_accounts_subscribe`` accounts per connection
  (bitshares-core libraries/app/database_api.cpp ``get_full_accounts``;
  :attr:`Shard.link_accounts` counts those the upstream holds, which only
  ``set_subscribe_callback`` forgets);
- ``set_block_applied_callback`` once one of its clients set one,
  ``subscribe_to_market(cb, a, b)`` once per market of its clients,
  ``unsubscribe_from_market`` when the last of them leaves; shard 0 also
  ``set_pending_transaction_callback`` for every client of the gateway
  (the hub deduplicates pending transactions).

A notice of the link goes to the shard's clients only
(:class:`~nodeapi.gateway.fanout.Fanout`), so each client gets what one
bitshares-core connection carrying its interest sends.

A link lagging another usable upstream by more than ``max_lag`` blocks
(:meth:`Shard.check_lag`) is left for another upstream; a new link gets
the shard's union again and its clients are brought up to date
(:meth:`Shard.setup` with catch-up: changed objects noticed, one batch per
account, gone ones as one batch of removed ids, as bitshares-core notices
a removal; the flow is DESIGN.rst's "A wallet's account subscription
through a gateway").  :meth:`Shard.refresh` subscribes the union again on
the same link, releasing what no client of the shard wants any more.
"""

from twisted.internet import defer
from twisted.logger import Logger

from nodeapi.api.arguments import id_key
from nodeapi.gateway.fanout import EVERY_BLOCK_OBJECT, Fanout
from nodeapi.gateway.head_share import notice_head
from nodeapi.gateway.link_wait import LinkWait
from nodeapi.gateway.notice_routing import (REMOVABLE_ACCOUNT_OBJECTS, Digests,
                                            full_account_objects)
from nodeapi.gateway.read_share import ReadShare
from nodeapi.peers.errors import NoUpstream, PeerDisconnected, PeerRpcError, UpstreamError

#: Ids per ``get_objects`` and accounts per ``get_full_accounts`` when the
#: union is subscribed again (bitshares-core's default api_limit_get_objects
#: is 100, api_limit_get_full_accounts 50).
OBJECTS_PER_CALL, ACCOUNTS_PER_CALL = 100, 10
#: Seconds before subscribing again after a link's subscription failed,
#: doubled at each failure in a row up to the second figure.
RETRY_DELAY, MAX_RETRY_DELAY = 1.0, 60.0


class Shard:
    """One subscription connection (module docstring).

    :param hub: the :class:`~nodeapi.gateway.subscriptions.SubscriptionHub`
        (``pool``, ``clock``, ``interests``, ``sides``, ``on_head``,
        ``pending_notice``).
    :param index: its number (0: on the pool's own connection).
    :ivar clients: the :class:`~nodeapi.gateway.notice_routing.Interest` it carries.
    :ivar link: the connection carrying them now, or None.
    :ivar upstream: the pool upstream it connects to (or waits for).
    :ivar link_accounts: the accounts the link's upstream counts against its
        per-connection limit; :ivar reserved: accounts of reads in flight.
    :ivar generation: incremented each time the union is subscribed again
        (a read sent before must subscribe its answer again).
    :ivar read_share: the :class:`~nodeapi.gateway.read_share.ReadShare`
        of its clients' identical subscribing reads."""

    log = Logger()

    def __init__(self, hub, index: int) -> None:
        self.hub = hub
        self.index = index
        self.interests = hub.interests
        self.clients: set = set()
        self.upstream = None
        self.connection = None  # the link chosen (usable or not yet)
        self.link = None
        self._attaching = None
        self._carried = False  # a link carried the subscriptions before
        self._wanted = False
        self._failures = 0
        self.digests = Digests()
        self.fanout = Fanout(hub.interests, self, self.digests)
        self.waiting = LinkWait(hub.clock)
        self.link_accounts: set = set()
        self.reserved = 0
        self.generation = 0
        self.notices = 0  # upstream notices received
        self.noticed_head = None  # the head block its link's notices showed last
        self.read_share = ReadShare(hub.clock)
        self.avoid = None  # an upstream found stale: not picked again at once
        self._reset_link_state()

    def _reset_link_state(self) -> None:
        self._everything = False  # notify_remove_create on the link
        self._kinds: dict = {}  # callback id -> "subscribe", "block", "pending" or a market
        self._subscribe_cb = self._block_cb = self._pending_cb = None
        self._market_cbs: dict = {}  # market -> callback id on the link

    # -- what it carries ---------------------------------------------------------------

    def union(self) -> tuple:
        """``(ids, accounts)`` its clients subscribed, sorted."""
        ids, accounts = set(), set()
        for client in self.clients:
            ids |= client.ids
            accounts |= client.accounts
        return sorted(ids, key=id_key), sorted(accounts, key=id_key)

    def accounts_wanted(self) -> set:
        """The accounts its clients subscribed."""
        out = set()
        for client in self.clients:
            out |= client.accounts
        return out

    def room(self) -> int:
        """Accounts its link's upstream still subscribes."""
        return self.hub.full_accounts_limit - len(self.link_accounts) - self.reserved

    def everything(self) -> bool:
        """Whether one of its clients asked ``notify_remove_create`` (the flag
        of the link's ``set_subscribe_callback``)."""
        return any(c.notify_remove_create for c in self.clients)

    def markets(self) -> set:
        """The markets ``(asset id, asset id)`` its clients subscribed."""
        return {m for c in self.clients for m in c.markets}

    def mine(self, clients) -> list:
        """The clients of ``clients`` this shard carries."""
        return [c for c in clients if c.shard is self]

    # -- the link --------------------------------------------------------------------

    def want(self) -> None:
        """A client of it subscribes: from now on a link carries the shard."""
        self._wanted = True
        self.hub.watch_lag()
        self.pick()

    def pool_changed(self, upstream) -> None:
        """The pool reports a change of ``upstream`` (``pool.watch``)."""
        if upstream is self.upstream and self.link is not None:
            if not upstream.usable:
                self.detach(self.link)
            elif not upstream.healthy and any(u.healthy for u in self.hub.pool.upstreams):
                self.detach(self.link)  # its head stopped: notices come from a live one
        self.pick()

    def side_changed(self, connection) -> None:
        """A side connection became usable or stopped being usable."""
        if connection is not self.connection:
            return
        if not connection.usable and self.link is connection:
            self.detach(connection)
        self.pick()

    def pick(self) -> None:
        """Attach the chosen connection when the shard is wanted and no
        link carries it (none usable: the next change tries again)."""
        if self.link is not None or self._attaching is not None or not self._wanted:
            return
        pool, sides = self.hub.pool, self.hub.sides
        if pool is None:
            return
        conn = self.connection
        if conn is not None and conn is not self.upstream and not conn.usable \
                and self.upstream.usable and self.upstream is not self.avoid:
            return  # its side connection is on its way
        try:
            upstream = pool.pick(exclude=[self.avoid] if self.avoid is not None else [])
        except NoUpstream:
            try:
                upstream = pool.pick()
            except NoUpstream:
                return
        conn = sides.connection(upstream, self.index)
        if self.connection is not None and self.connection is not conn:
            sides.release(self.connection)
        self.upstream, self.connection = upstream, conn
        if conn.usable:
            self.attach(conn)

    def attach(self, link) -> defer.Deferred:
        """Carry the shard on ``link`` from now on: subscribe the union
        again on it, then let waiting calls through.  Fires when done (or
        failed: the failure is logged, the link is left detached)."""
        self.link = None
        self._attaching = link
        if self.upstream is None:
            self.upstream = self.hub.sides.upstream_of(link)
        return defer.Deferred.fromCoroutine(self._setup(link))

    def detach(self, link) -> None:
        """``link`` is dead (or replaced): calls wait for the next one."""
        if self._attaching is link:
            self._attaching = None
        if self.link is link:
            self.link = None
            self.log.info("Subscription link {index} lost; waiting for another upstream",
                          index=self.index)

    def check_lag(self, max_lag: int) -> bool:
        """Whether the link's notices show a head more than ``max_lag``
        blocks behind another usable upstream's (its health checks): a
        frozen or lagging upstream, left for another (then True)."""
        link, upstream, pool = self.link, self.upstream, self.hub.pool
        if link is None or self.noticed_head is None or pool is None:
            return False
        best = max((u.head_block_num for u in pool.upstreams
                    if u.usable and u is not upstream), default=0)
        if best - self.noticed_head <= max_lag:
            return False
        self.log.warn("Subscription link {index} on upstream {name} shows head {head}, "
                      "{lag} blocks behind another upstream: moving", index=self.index,
                      name=getattr(link, "name", "?"), head=self.noticed_head,
                      lag=best - self.noticed_head)
        self.avoid = upstream
        self.detach(link)
        self.pick()
        return True

    def release(self) -> None:
        """No client left on this shard (not the first): its link and its
        side connection end."""
        self._wanted = False
        link, self.link, self._attaching = self.link, None, None
        if link is not None:
            for cb in list(self._kinds):
                link.listen(cb, None)
        if self.connection is not None:
            self.hub.sides.release(self.connection)
        self.connection = self.upstream = None
        self._carried = False
        self.link_accounts = set()
        self.digests = self.fanout.digests = Digests()
        self._reset_link_state()

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
        interests = self.interests
        try:
            await self._subscribe_union(link, self.everything(), catch_up=self._carried)
            if self.mine(interests.block):
                await self._set_block(link)
            if self.index == 0 and interests.pending:
                await self._set_pending(link)
            for market in sorted(self.markets()):
                await self._subscribe_market(link, market)
        except Exception as exc:
            delay = min(RETRY_DELAY * 2 ** self._failures, MAX_RETRY_DELAY)
            self._failures += 1
            name = getattr(link, "name", "?")
            if isinstance(exc, PeerDisconnected) or self._failures > 1:
                self.log.info("Subscribing on upstream {name} (connection {index}) failed "
                              "({error}); choosing again in {delay} s", name=name,
                              index=self.index, error=exc, delay=delay)
            else:
                self.log.failure("Subscribing on upstream {name} (connection {index}) "
                                 "failed; choosing again in {delay} s", name=name,
                                 index=self.index, delay=delay)
            if isinstance(exc, PeerRpcError):  # refused: the waiting calls are told so
                self.waiting.fail(UpstreamError(exc))
            if self._attaching is link:
                self._attaching = None
                if self.hub.pool is not None and self.hub.pool.running:
                    self.hub.clock.callLater(delay, self.pick)
            return
        if self._attaching is not link:
            return  # detached (or replaced) while subscribing
        self._attaching = None
        self.link = link
        self.noticed_head = None
        if self.avoid is not self.upstream:
            self.avoid = None
        self._carried = True
        self._failures = 0
        ids, accounts = self.union()
        self.log.info("Subscriptions of {clients} clients carried by upstream {name} "
                      "(connection {index}: {ids} ids, {accounts} accounts)",
                      clients=len(self.clients), name=getattr(link, "name", "?"),
                      index=self.index, ids=len(ids), accounts=len(accounts))
        self.waiting.release(link)
        # callbacks clients set while this link was being set up
        if self.mine(interests.block):
            self._later(self.need_block())
        if self.index == 0 and interests.pending:
            self._later(self.need_pending())

    def _later(self, coroutine) -> None:
        defer.Deferred.fromCoroutine(coroutine).addErrback(
            lambda f: self.log.failure("Setting a callback on the link failed", f))

    async def _subscribe_union(self, link, everything: bool, catch_up: bool = False) -> None:
        """``set_subscribe_callback`` on the link (which forgets what it
        subscribed, its accounts too), then every id and account of the
        shard's clients; with ``catch_up``, what changed unseen is
        noticed (module docstring)."""
        self.generation += 1
        if self._subscribe_cb is None:
            self._subscribe_cb = self._callback(link, "subscribe")
        await link.call("database", "set_subscribe_callback", [self._subscribe_cb, everything])
        self._everything = everything
        self.link_accounts = set()
        await link.call("database", "set_auto_subscription", [False])
        ids, accounts = self.union()
        await self._subscribe(link, [EVERY_BLOCK_OBJECT] + ids, accounts, catch_up)

    async def _subscribe(self, link, ids: list, accounts: list, catch_up=False) -> None:
        self.link_subscribed(accounts)  # counted before the calls go out
        removed = []  # with catch_up: seen ids the link finds no more
        for i in range(0, len(ids), OBJECTS_PER_CALL):
            chunk = ids[i:i + OBJECTS_PER_CALL]
            found = await link.call("database", "get_objects", [chunk, True])
            self.interests.learn(found)
            if catch_up:
                self.fanout.catch_up(found)
                if type(found) is list and len(found) == len(chunk):
                    removed += [oid for oid, obj in zip(chunk, found)
                                if obj is None and oid in self.digests]
            else:
                self.digests.remember(found)
        present, answered = set(), set()
        for i in range(0, len(accounts), ACCOUNTS_PER_CALL):
            answer = await link.call("database", "get_full_accounts",
                                     [accounts[i:i + ACCOUNTS_PER_CALL], True])
            self.interests.learn(answer)
            for pair in answer or ():
                if type(pair) is list and len(pair) == 2:
                    objects = full_account_objects(pair[1])
                    if catch_up:
                        self.fanout.catch_up(objects, unseen=True)
                        present.update(obj["id"] for obj in objects)
                        account = pair[1].get("account") if type(pair[1]) is dict else None
                        if type(account) is dict and type(account.get("id")) is str:
                            answered.add(account["id"])
                    else:
                        self.digests.remember(objects)
        if catch_up:
            removed += await self._removed_of(link, answered, present.union(removed))
            self.fanout.removed(removed)

    async def _removed_of(self, link, accounts: set, present: set) -> list:
        """The objects of ``accounts`` the clients saw (their digests) of
        the kinds an account's ``get_full_accounts`` answer lists and the
        chain removes (:data:`~nodeapi.gateway.notice_routing.REMOVABLE_ACCOUNT_OBJECTS`),
        absent from its new answer (``present``: the ids it holds) and
        null in a ``get_objects`` (not subscribing) of ``link``: the
        objects removed meanwhile.  A list an answer cut short at the
        upstream's limit leaves existing objects out; the read tells
        them apart."""
        if not accounts:
            return []
        accounts_of = self.interests.accounts_of
        absent = [oid for oid in self.digests.ids()
                  if oid not in present and oid.rpartition(".")[0] in REMOVABLE_ACCOUNT_OBJECTS
                  and not accounts.isdisjoint(accounts_of(oid))]
        removed = []
        for i in range(0, len(absent), OBJECTS_PER_CALL):
            chunk = absent[i:i + OBJECTS_PER_CALL]
            found = await link.call("database", "get_objects", [chunk, False])
            if type(found) is list and len(found) == len(chunk):
                removed += [oid for oid, obj in zip(chunk, found) if obj is None]
        return removed

    def link_subscribed(self, accounts) -> None:
        """The link's upstream subscribed ``accounts`` (in the order asked)
        as bitshares-core does: each one while it holds fewer than its
        limit (``get_full_accounts``)."""
        held, limit = self.link_accounts, self.hub.full_accounts_limit
        for account in accounts:
            if account not in held and len(held) < limit:
                held.add(account)

    def remember_answer(self, function: str, answer) -> None:
        """What a client's subscribing read showed it (its objects; a full
        account's objects too)."""
        items = answer if type(answer) is list else [answer]
        if function == "get_full_accounts":
            for pair in items:
                if type(pair) is list and len(pair) == 2:
                    self.digests.remember(full_account_objects(pair[1]))
        else:
            self.digests.remember(items)

    async def refresh(self) -> None:
        """Subscribe the union again on the current link (releasing what no
        client wants), noticing what changed meanwhile; nothing without a
        link (the next link subscribes the union anyway)."""
        link = self.link
        if link is None:
            return
        try:
            await self._subscribe_union(link, self.everything(), catch_up=True)
        except PeerRpcError as exc:
            raise UpstreamError(exc) from None

    async def carry(self, ids: list, accounts: list) -> None:
        """Subscribe ``ids`` and ``accounts`` on the current link (a read
        answered by a link replaced meanwhile, a client moved here)."""
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
        await link.call("database", "subscribe_to_market",
                        [cb, market[0], market[1]])
        self._market_cbs[market] = cb

    # -- what clients need -----------------------------------------------------------

    async def ask(self, function: str, args: list, link=None, raw: bool = False):
        """``database.function(args)`` on ``link`` (default: the current
        link, waited for): the answer (its JSON bytes with ``raw``).  The
        upstream's error is raised as :class:`UpstreamError`, a lost
        connection as ``PeerDisconnected``."""
        if link is None:
            link = await self.ready()
        try:
            if raw:
                return await link.call_raw("database", function, args)
            return await link.call("database", function, args)
        except PeerRpcError as exc:
            raise UpstreamError(exc) from None

    def ask_shared(self, function: str, args: list, link) -> defer.Deferred:
        """A subscribing read ``database.function(args)`` on ``link``: its
        answer's JSON bytes, shared with identical reads of the same block
        (:attr:`read_share`); errors as :meth:`ask`."""
        return self.read_share.ask(
            function, args, link, self.generation, self.noticed_head,
            lambda: defer.Deferred.fromCoroutine(self.ask(function, args, link=link, raw=True)))

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
        """A client of it set a block-applied callback: unless the link has
        one, ``set_block_applied_callback`` on it, block notices starting
        afresh (no gap to fill for the clients asking now).

        :raises ApiError: no link in time (:meth:`ready`); the upstream call's
            errors (``PeerRpcError``, ``PeerDisconnected``)."""
        link = await self.ready()
        if self._block_cb is None:
            self.fanout.blocks.last = None  # no gap to fill for those who ask now
            await self._set_block(link)

    async def need_pending(self) -> None:
        """A client set a pending-transaction callback: unless the link has
        one, ``set_pending_transaction_callback`` on it (shard 0 carries every
        client's).  Errors as :meth:`need_block`."""
        link = await self.ready()
        if self._pending_cb is None:
            await self._set_pending(link)

    async def need_market(self, market: tuple) -> None:
        """A client of it subscribed ``market`` ``(asset id, asset id)``:
        unless the link carries it, ``subscribe_to_market`` on it.  Errors as
        :meth:`need_block`."""
        link = await self.ready()
        if market not in self._market_cbs:
            await self._subscribe_market(link, market)

    def market_left(self, market: tuple, symbols: dict) -> None:
        """No client of the shard wants ``market`` any more: unsubscribe it
        upstream.  bitshares-core's ``unsubscribe_from_market`` swaps the
        two ids when its first argument sorts after the second as a
        string, so it is sent the lower asset's id and the higher one's
        symbol (``symbols``: asset id -> symbol; an id, which starts with
        a digit, sorts before a symbol)."""
        if any(market in c.markets for c in self.clients):
            return
        cb = self._market_cbs.pop(market, None)
        link = self.link
        if cb is None or link is None:
            return
        link.listen(cb, None)
        self._kinds.pop(cb, None)
        d = link.call("database", "unsubscribe_from_market",
                      [market[0], symbols.get(market[1], market[1])])
        d.addErrback(lambda f: f.trap(PeerDisconnected))  # gone with its connection
        d.addErrback(lambda f: self.log.failure("unsubscribe_from_market failed", f))

    # -- notices -------------------------------------------------------------------

    def notice(self, link, cb, params: list) -> None:
        """A notice ``[cb, params]`` from ``link`` (``params`` is the list
        holding the payload): fanned out to the shard's clients; notices of
        a link neither attached nor being attached are dropped."""
        if (link is not self.link and link is not self._attaching) or not params:
            return
        self.notices += 1
        kind = self._kinds.get(cb)
        payload = params[0]
        fanout = self.fanout
        hub = self.hub
        if kind in ("subscribe", "block"):
            num = notice_head(payload)
            if num is not None:
                if self.noticed_head is None or num > self.noticed_head:
                    self.noticed_head = num
                    self.read_share.new_head()
                if hub.on_head is not None:  # first: a client told of the block reads after it
                    hub.on_head(self.upstream if self.upstream is not None else link, num)
        try:
            if kind == "subscribe":
                fanout.objects(payload)
            elif kind == "block":
                fanout.blocks.notice(link, payload)
            elif kind == "pending":
                hub.pending_notice(payload)
            elif kind is not None:
                fanout.market(kind, payload)
        except Exception:
            self.log.failure("Fan-out of an upstream notice failed")
