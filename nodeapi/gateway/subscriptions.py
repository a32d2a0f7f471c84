"""The gateway's merged subscriptions: a few upstream subscriptions serving
every client (:class:`SubscriptionHub`); each client's calls are
:mod:`nodeapi.gateway.client_subscriptions` (what the forwarded
``database`` set's subscription functions call), the reads that subscribe
:mod:`nodeapi.gateway.subscribing_reads`, one upstream subscription
connection and the clients it carries :mod:`nodeapi.gateway.shards`, who
receives a notice :mod:`nodeapi.gateway.notice_routing`, the calls waiting
for a link :mod:`nodeapi.gateway.link_wait`.  Graphene reference:
bitshares-core libraries/app/database_api.cpp (the subscription functions,
``handle_object_changed``, ``on_applied_block``, ``get_full_accounts``).

Clients keep their own callback ids: a notice is encoded once and written
to each client that would have received it from the upstream directly;
clients with the same interest share one upstream subscription.  A
subscription's way, the placement of a client on a shard and a lost
upstream: docs/DESIGN.rst, "A wallet's account subscription through a
gateway".
"""

from collections import OrderedDict

from twisted.logger import Logger

from nodeapi.api.arguments import id_key
from nodeapi.errors import ApiError
from nodeapi.gateway.client_subscriptions import ClientSubscriptions
from nodeapi.gateway.fanout import Fanout
from nodeapi.gateway.notice_routing import Interests, encode
from nodeapi.gateway.shards import Shard
from nodeapi.gateway.side_links import SideLinks
from nodeapi.gateway.subscribing_reads import FULL_ACCOUNTS_SUBSCRIBE_LIMIT
from nodeapi.protocol.transaction import transaction_id

#: Upstream connections the subscriptions may use (each carries up to
#: ``api_limit_get_full_accounts_subscribe`` accounts).
MAX_CONNECTIONS = 32
#: Blocks a subscription link's notices may lag another usable upstream's
#: head before it moves, and seconds between the checks.
MAX_LAG_BLOCKS, LAG_CHECK = 3, 1.0
#: Pending transactions remembered to notice each once.
PENDING_REMEMBERED = 10_000
#: Account names remembered with their ids (to count the accounts a
#: ``get_full_accounts`` may add).
NAMES_REMEMBERED = 100_000


class SubscriptionCapacity(ApiError):
    """Every subscription connection the gateway may open holds as many
    accounts as its upstream subscribes per connection: no room for more."""

    name = "subscription_capacity"


def pending_key(trx) -> str:
    """What tells one pending transaction from another: its id (the
    signatures or its JSON when it has no valid id)."""
    try:
        return transaction_id(trx)
    except Exception:
        if type(trx) is dict and trx.get("signatures"):
            return repr(trx["signatures"])
        return repr(trx)


class SubscriptionHub:
    """One per gateway: the clients' :class:`~.notice_routing.Interests`
    and the shards carrying them.

    :param pool: the :class:`~nodeapi.gateway.pool.UpstreamPool` (watched
        from now on), or None to attach links by hand
        (``hub.shards[0].attach(link)``).
    :param clock: an ``IReactorTime`` (the waits for a link time out on it).
    :param full_accounts_limit: accounts one connection subscribes through
        ``get_full_accounts`` (the upstream's
        ``api_limit_get_full_accounts_subscribe``).
    :param max_connections: upstream connections the subscriptions may use.
    :param max_message_size: bytes, the largest message its own
        connections accept.
    :param max_lag: blocks a link's notices may lag another usable
        upstream's head (its health checks) before the link moves (a
        frozen upstream), checked every :data:`LAG_CHECK` s.
    :ivar clients: session -> its :class:`ClientSubscriptions`.
    :ivar shards: the :class:`~nodeapi.gateway.shards.Shard` list.
    :ivar pending_fanout: writes pending transactions to every client that
        asked (``routed``: notices written)."""

    log = Logger()

    def __init__(self, pool, clock, full_accounts_limit: int = FULL_ACCOUNTS_SUBSCRIBE_LIMIT,
                 max_connections: int = MAX_CONNECTIONS,
                 max_message_size: int = 64 * 1024 * 1024,
                 max_lag: int = MAX_LAG_BLOCKS) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.pool = pool
        self.clock = clock
        self.full_accounts_limit = full_accounts_limit
        self.max_connections = max_connections
        self.interests = Interests()
        self.clients: dict = {}
        self.on_head = None  # on_head(upstream, block number): the heads its notices show
        self.sides = SideLinks(pool, self._side_changed, max_message_size)
        self.shards = [Shard(self, 0)]
        self.pending_fanout = Fanout(self.interests)
        self._pending_seen: OrderedDict = OrderedDict()
        self._symbols: dict = {}  # asset id -> symbol, of the markets
        self._names: OrderedDict = OrderedDict()  # account name -> id
        self.refreshes = 0  # unions subscribed again to release accounts
        self.max_lag = max_lag
        self.moved_stale = 0  # links left for lagging behind
        self._lag_timer = None
        if pool is not None:
            pool.watch(self._pool_changed)

    # -- compatibility with one link ----------------------------------------------------

    @property
    def link(self):
        """The first shard's link (None without one)."""
        return self.shards[0].link

    @property
    def links(self) -> list:
        """The links carrying subscriptions now."""
        return [s.link for s in self.shards if s.link is not None]

    @property
    def notices_routed(self) -> int:
        """Notices written to clients."""
        return sum(s.fanout.routed for s in self.shards) + self.pending_fanout.routed

    @property
    def upstream_notices(self) -> int:
        """Notices received from the links."""
        return sum(s.notices for s in self.shards)

    def client_of(self, session) -> ClientSubscriptions:
        """The subscription calls of the connection of ``session`` (made on
        first use, placed on a shard with account room, forgotten when it
        closes)."""
        client = self.clients.get(session)
        if client is None:
            client = self.clients[session] = ClientSubscriptions(self, session)
            shard = next((s for s in self.shards if s.room() > 0), self.shards[0])
            self._join(client.interest, shard)
        return client

    def _join(self, interest, shard) -> None:
        interest.shard = shard
        shard.clients.add(interest)

    def left(self, interest) -> None:
        """``interest``'s client is gone: a shard (not the first) that
        carries nobody any more closes its connection."""
        shard = interest.shard
        if shard is None:
            return
        shard.clients.discard(interest)
        interest.shard = None
        self.release_if_empty(shard)

    def release_if_empty(self, shard) -> None:
        """``shard`` (not the first) closes its connection when it carries
        nobody and no read of a client is on its way; empty shards at the
        end of the list are forgotten."""
        if shard.index and not shard.clients and not shard.reserved:
            shard.release()
            while len(self.shards) > 1 and self.shards[-1].connection is None \
                    and not self.shards[-1].clients and not self.shards[-1].reserved:
                self.shards.pop()

    # -- links ---------------------------------------------------------------------

    def _pool_changed(self, upstream) -> None:
        for shard in list(self.shards):
            shard.pool_changed(upstream)

    def watch_lag(self) -> None:
        """Check every :data:`LAG_CHECK` s that no link lags (from the first
        subscription on, while the pool runs)."""
        if self._lag_timer is None and self.pool is not None:
            self._lag_timer = self.clock.callLater(LAG_CHECK, self._check_lag)

    def _check_lag(self) -> None:
        self._lag_timer = None
        if not self.pool.running:
            return
        for shard in list(self.shards):
            try:
                if shard.check_lag(self.max_lag):
                    self.moved_stale += 1
            except Exception:
                self.log.failure("Checking subscription link {index} failed",
                                 index=shard.index)
        self.watch_lag()

    def _side_changed(self, connection) -> None:
        for shard in list(self.shards):
            shard.side_changed(connection)

    # -- placing clients -----------------------------------------------------------

    def known_account(self, name_or_id) -> str:
        """The account id of ``name_or_id`` when known (an id, or a name seen
        in an answer), else None."""
        if type(name_or_id) is not str:
            return None
        if name_or_id.startswith("1.2."):
            return name_or_id
        return self._names.get(name_or_id)

    def learn_names(self, answer) -> None:
        """Remember the names and ids of the accounts of a
        ``get_full_accounts`` answer."""
        names = self._names
        for pair in answer or ():
            if type(pair) is list and len(pair) == 2 and type(pair[1]) is dict:
                account = pair[1].get("account")
                if type(account) is dict and type(account.get("name")) is str:
                    names[account["name"]] = account.get("id")
                    names.move_to_end(account["name"])
        while len(names) > NAMES_REMEMBERED:
            names.popitem(last=False)

    async def place(self, client: ClientSubscriptions, accounts: int) -> Shard:
        """The shard that sends a read of ``client`` which may subscribe
        ``accounts`` more accounts, placed before anything is subscribed
        for it: its own when its link has room, else one with room for all
        its accounts (the client moves, with everything it subscribed),
        else a shard whose link counts accounts no client wants any more,
        subscribing its union again (releasing them), else a new shard on
        a new connection, up to ``max_connections``.  bitshares-core
        subscribes at most ``api_limit_get_full_accounts_subscribe`` (100)
        accounts per connection, and only ``set_subscribe_callback`` (or
        ``cancel_all_subscriptions``) forgets them; a shard (not the
        first) whose last client left closes its connection.  The accounts
        are reserved on the shard returned (``shard.reserved``; the caller
        gives them back).

        :raises SubscriptionCapacity: no room anywhere (nothing moved)."""
        interest = client.interest
        shard = interest.shard
        if shard is None:
            raise ApiError("connection closed")
        if accounts <= 0 or shard.room() >= accounts:
            shard.reserved += max(accounts, 0)
            return shard
        total = len(interest.accounts) + accounts
        target = next((s for s in self.shards if s is not shard and s.room() >= total), None)
        if target is None:
            for s in self.shards:
                wanted = s.accounts_wanted()
                if s is not shard:
                    wanted |= interest.accounts
                if len(wanted) + s.reserved + accounts <= self.full_accounts_limit and \
                        s.link is not None:
                    s.reserved += accounts  # held while the union is subscribed again
                    try:
                        self.refreshes += 1
                        self.log.info("Subscription connection {index} subscribes its "
                                      "clients' {n} accounts again (releasing {gone})",
                                      index=s.index, n=len(s.accounts_wanted()),
                                      gone=len(s.link_accounts - s.accounts_wanted()))
                        await s.refresh()
                    finally:
                        s.reserved -= accounts
                    if s is shard and s.room() >= accounts:
                        s.reserved += accounts
                        return s
                    if s.room() >= total:
                        target = s
                        break
        if target is None and len(self.shards) < self.max_connections:
            target = Shard(self, len(self.shards))
            self.shards.append(target)
        if target is None:
            raise SubscriptionCapacity(
                f"The gateway's {self.max_connections} subscription connections hold "
                f"{self.full_accounts_limit} accounts each (the upstream's "
                f"api_limit_get_full_accounts_subscribe): no room for {accounts} more")
        await self._move(client, shard, target, accounts)
        return target

    async def _move(self, client, old: Shard, new: Shard, accounts: int) -> None:
        """``client`` (all it subscribed) goes from ``old`` to ``new``,
        which reserves ``accounts`` more for its read."""
        interest = client.interest
        new.reserved += accounts + len(interest.accounts)
        moved = False
        try:
            old.clients.discard(interest)
            self._join(interest, new)
            self.log.debug("A client moves from subscription connection {old} to {new}",
                           old=old.index, new=new.index)
            if interest.notify_remove_create:
                await new.need_everything()
            if interest.ids or interest.accounts:
                await new.carry(sorted(interest.ids, key=id_key),
                                sorted(interest.accounts, key=id_key))
            if interest.block_cb is not None:
                await new.need_block()
            for market in sorted(interest.markets):
                await new.need_market(market)
            moved = True
        finally:
            new.reserved -= len(interest.accounts) + (0 if moved else accounts)
        for market in sorted(interest.markets):
            old.market_left(market, self._symbols)
        self.release_if_empty(old)

    # -- what clients need -----------------------------------------------------------

    async def need_pending(self) -> None:
        """A client set a pending-transaction callback: the first shard's
        link carries one."""
        await self.shards[0].need_pending()

    def pending_notice(self, trx) -> None:
        """A pending transaction (from the first shard's link, which serves
        every client's ``set_pending_transaction_callback``, or one a
        client broadcast through the gateway and an upstream accepted,
        called by :class:`~nodeapi.gateway.apis.Gateway`, so it reaches the
        pending subscribers whichever upstream took it): to every client
        with a pending-transaction callback, once per transaction id,
        whichever comes first (nothing is remembered while no client has
        one)."""
        if not self.interests.pending:
            return
        key = pending_key(trx)
        seen = self._pending_seen
        if key in seen:
            return
        seen[key] = None
        while len(seen) > PENDING_REMEMBERED:
            seen.popitem(last=False)
        self.pending_fanout.send_all(self.interests.pending, "pending_cb", encode(trx))

    async def market_of(self, shard: Shard, a, b) -> tuple:
        """The market ``(lower asset id, higher asset id)`` of assets ``a``
        and ``b`` (symbols or ids), as the upstream of ``shard`` resolves
        them.

        :raises UpstreamError: an asset does not exist, or both are the
            same (the upstream's own ``subscribe_to_market`` error)."""
        found = await shard.ask("lookup_asset_symbols", [[a, b]])
        if not (found and found[0] and found[1]) or found[0]["id"] == found[1]["id"]:
            # let the upstream say what is wrong, in its own words (its
            # unsubscribe_from_market reads the assets as subscribe_to_market
            # does, and changes nothing)
            await shard.ask("unsubscribe_from_market", [a, b])
            raise ApiError(f"Market {a}:{b} not found")
        pair = sorted((found[0], found[1]), key=lambda asset: id_key(asset["id"]))
        for asset in pair:
            self._symbols[asset["id"]] = asset["symbol"]
        return pair[0]["id"], pair[1]["id"]

    def market_left(self, shard: Shard, market: tuple) -> None:
        """No client of ``shard`` wants ``market`` any more: unsubscribed
        on its link."""
        shard.market_left(market, self._symbols)

    # -- figures ---------------------------------------------------------------------

    def clients_per_interest(self) -> dict:
        """``{"account": counts, "object": counts, "market": counts}``: for
        each subscribed account, object id and market, how many clients
        share it (read at scrape time)."""
        interests = self.interests
        return {"account": [len(v) for v in interests.by_account.values()],
                "object": [len(v) for v in interests.by_id.values()],
                "market": [len(v) for v in interests.by_market.values()]}

    def figures(self) -> dict:
        """``{"accounts", "objects", "markets", "clients", "connections",
        "refreshes", "moved_stale", "notices_routed", "upstream_notices",
        "pending_clients", "block_clients"}`` now (Prometheus,
        :mod:`nodeapi.gateway.figures`)."""
        interests = self.interests
        return {"accounts": len(interests.by_account), "objects": len(interests.by_id),
                "markets": len(interests.by_market), "clients": len(self.clients),
                "connections": len(self.links), "refreshes": self.refreshes,
                "moved_stale": self.moved_stale,
                "notices_routed": self.notices_routed,
                "upstream_notices": self.upstream_notices,
                "pending_clients": len(interests.pending),
                "block_clients": len(interests.block)}
