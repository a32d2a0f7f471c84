"""Who of the gateway's clients receives an upstream notice, and in what
bytes: the interests of every client (:class:`Interest`), indexed
(:class:`Interests`), and the fan-out of one upstream notice to them,
encoded once (:class:`Encoded`).

The gateway holds a few upstream subscriptions for all its clients
(:mod:`nodeapi.gateway.subscriptions`), and each client must get exactly
what one bitshares-core connection carrying its interest would send it:
the tests are bitshares-core's (libraries/app/database_api.cpp
``handle_object_changed``, ``on_applied_block``), through
:mod:`nodeapi.api.database.notice_rules`.  A notice's way from the upstream
to the clients: docs/DESIGN.rst, "A wallet's account subscription through
a gateway".
"""

from collections import OrderedDict

import orjson

from nodeapi.api.database.notice_rules import batch_accounts, batch_wanted, relevant_accounts

#: The most object ids whose accounts :meth:`Interests.learn` remembers
#: (the oldest are forgotten first).
REMEMBERED_OBJECTS = 200_000


class Interest:
    """What one client connection subscribed (bitshares-core
    ``database_api_impl``'s members of the same names).

    :ivar session: the client's :class:`~nodeapi.api.base.Session`
        (``send_notice(cb, payload)``).
    :ivar subscribe_cb: the ``set_subscribe_callback`` id, or None.
    :ivar notify_remove_create: its second argument.
    :ivar auto_subscription: ``set_auto_subscription`` (default true).
    :ivar ids: subscribed object ids; :ivar accounts: subscribed accounts.
    :ivar block_cb / pending_cb: the block-applied and pending-transaction
        callback ids, or None.
    :ivar markets: market ``(asset id, asset id)`` -> callback id.
    :ivar shard: the :class:`~nodeapi.gateway.shards.Shard` carrying it
        (None until placed).

    Each subscribed id, market and callback is one item of the session's
    subscription budget (``session.budget``, :mod:`nodeapi.api.budget`),
    taken and given back by :class:`Interests`' methods as the node's own
    database set does (:mod:`nodeapi.api.database.subscriptions`)."""

    def __init__(self, session) -> None:
        self.session = session
        self.subscribe_cb = None
        self.notify_remove_create = False
        self.auto_subscription = True
        self.ids: set = set()
        self.accounts: set = set()
        self.block_cb = None
        self.pending_cb = None
        self.markets: dict = {}
        self.shard = None


class Interests:
    """Every client's :class:`Interest`, indexed by what routes a notice to
    it; the union of them is what the upstream subscription must carry
    (a market notice goes to every client subscribed to that market, block
    and pending-transaction notices to every client that set that
    callback).  Changes go through the methods (which keep the indexes)."""

    def __init__(self) -> None:
        self.by_id: dict = {}
        self.by_account: dict = {}
        self.by_market: dict = {}
        self.everything: set = set()  # notify_remove_create
        self.block: set = set()
        self.pending: set = set()
        self._accounts_of: OrderedDict = OrderedDict()  # object id -> its accounts

    # -- bookkeeping ---------------------------------------------------------------

    def set_subscribe(self, interest: Interest, cb, notify_remove_create: bool) -> None:
        """``set_subscribe_callback``: forget the client's object
        subscriptions (graphene ``cancel_all_subscriptions(false, false)``),
        then set the callback (one budget item).

        :raises SubscriptionLimitExceeded: no room for the callback (the
            object subscriptions are gone, no callback is set)."""
        self.cancel_objects(interest)
        interest.session.budget.take()
        interest.subscribe_cb = cb
        interest.notify_remove_create = notify_remove_create
        if notify_remove_create:
            self.everything.add(interest)

    def cancel_objects(self, interest: Interest) -> None:
        """Drop the client's subscribe callback, ids and accounts (their
        budget items given back)."""
        held = len(interest.ids) + (interest.subscribe_cb is not None)
        if held:
            interest.session.budget.give_back(held)
        for oid in interest.ids:
            _discard(self.by_id, oid, interest)
        for account in interest.accounts:
            _discard(self.by_account, account, interest)
        interest.ids, interest.accounts = set(), set()
        interest.subscribe_cb, interest.notify_remove_create = None, False
        self.everything.discard(interest)

    def subscribe_ids(self, interest: Interest, ids) -> None:
        """Subscribe object ids for the client (it has a subscribe
        callback), one budget item each.

        :raises SubscriptionLimitExceeded: no room for the next id (those
            before it stay subscribed)."""
        budget = interest.session.budget
        for oid in ids:
            if oid not in interest.ids:
                budget.take()
                interest.ids.add(oid)
                self.by_id.setdefault(oid, set()).add(interest)

    def subscribe_account(self, interest: Interest, account: str) -> None:
        """Subscribe an account (``get_full_accounts``) and its id (the
        id's budget item; :meth:`subscribe_ids` raises first)."""
        self.subscribe_ids(interest, (account,))
        if account not in interest.accounts:
            interest.accounts.add(account)
            self.by_account.setdefault(account, set()).add(interest)

    def set_block(self, interest: Interest, cb) -> None:
        """Set the block-applied callback (one budget item while set;
        :raises SubscriptionLimitExceeded: no room)."""
        if interest.block_cb is None:
            interest.session.budget.take()
        interest.block_cb = cb
        self.block.add(interest)

    def set_pending(self, interest: Interest, cb) -> None:
        """Set the pending-transaction callback (as :meth:`set_block`)."""
        if interest.pending_cb is None:
            interest.session.budget.take()
        interest.pending_cb = cb
        self.pending.add(interest)

    def subscribe_market(self, interest: Interest, market: tuple, cb) -> None:
        """Subscribe ``market`` (one budget item; :raises
        SubscriptionLimitExceeded: no room)."""
        if market not in interest.markets:
            interest.session.budget.take()
        interest.markets[market] = cb
        self.by_market.setdefault(market, set()).add(interest)

    def unsubscribe_market(self, interest: Interest, market: tuple) -> None:
        """Unsubscribe ``market`` for the client, giving its budget item back;
        nothing when it was not subscribed (bitshares-core database_api.cpp
        ``unsubscribe_from_market``)."""
        if interest.markets.pop(market, None) is not None:
            interest.session.budget.give_back()
            _discard(self.by_market, market, interest)

    def cancel_markets(self, interest: Interest) -> None:
        """Unsubscribe every market of the client (:meth:`unsubscribe_market`):
        at ``cancel_all_subscriptions`` and when the client leaves."""
        for market in list(interest.markets):
            self.unsubscribe_market(interest, market)

    def remove(self, interest: Interest) -> None:
        """The client is gone: forget everything it subscribed (every
        budget item given back)."""
        self.cancel_objects(interest)
        self.cancel_markets(interest)
        callbacks = (interest.block_cb is not None) + (interest.pending_cb is not None)
        if callbacks:
            interest.session.budget.give_back(callbacks)
        interest.block_cb = interest.pending_cb = None
        self.block.discard(interest)
        self.pending.discard(interest)

    def learn(self, value) -> None:
        """Remember the accounts of every object (a dict with an ``id``)
        found in ``value`` (an answer or a notice, walked recursively), so
        a later removal of the object can be routed by account."""
        stack = [value]
        remembered = self._accounts_of
        while stack:
            item = stack.pop()
            if type(item) is dict:
                oid = item.get("id")
                if type(oid) is str and not oid.startswith("1.2."):
                    accounts = relevant_accounts(item)
                    if accounts:
                        remembered[oid] = frozenset(accounts)
                        remembered.move_to_end(oid)
                stack.extend(v for v in item.values() if type(v) in (dict, list))
            elif type(item) is list:
                stack.extend(v for v in item if type(v) in (dict, list))
        while len(remembered) > REMEMBERED_OBJECTS:
            remembered.popitem(last=False)

    def accounts_of(self, oid: str) -> frozenset:
        """The accounts remembered for object ``oid`` (:meth:`learn`),
        empty when none are."""
        return self._accounts_of.get(oid, frozenset())

    # -- routing ---------------------------------------------------------------------

    def route_objects(self, batch: list, created: bool, shard=None) -> dict:
        """Created or changed objects (one upstream notice): client -> the
        indexes of ``batch`` it receives, in order (``None``: the whole
        batch); only the clients of ``shard`` (:attr:`Interest.shard`)
        when given.  A client gets the batch whole if one of its
        subscribed accounts is among the batch's accounts
        (``is_impacted_account`` on ``get_relevant_accounts`` of every
        object), whole if the batch is a created one and it asked
        ``notify_remove_create``, otherwise the objects it subscribed.  The
        batch received is the whole batch whenever some client's account
        is touched (the upstream sends it whole to the gateway too), so its
        accounts are the whole batch's; bitshares-core computes a changed
        object's accounts from its old value, the gateway from the new one
        (they differ only when the owner itself changed, e.g.
        ``asset_update_issuer``)."""
        ids = [obj.get("id") if type(obj) is dict else None for obj in batch]
        return self._route(ids, batch_accounts(batch), created, shard)

    def route_removed(self, ids: list, shard=None) -> dict:
        """Removed object ids: client -> indexes (None: all), of ``shard``
        when given: whole to ``notify_remove_create`` clients and to a
        client whose account one of the removed objects belonged to (as
        :meth:`learn` remembered), else the ids it subscribed; the removed
        ids are then unsubscribed for those clients (their budget items
        given back)."""
        remembered = self._accounts_of
        impacted = set()
        for oid in ids:
            impacted |= remembered.get(oid, frozenset())
        out = self._route(ids, impacted, True, shard)
        for oid in ids:
            holders = self.by_id.get(oid, ())
            for client in [c for c in holders if shard is None or c.shard is shard]:
                client.ids.discard(oid)
                client.session.budget.give_back()
                _discard(self.by_id, oid, client)
            if oid not in self.by_id:
                remembered.pop(oid, None)
        return out

    def _route(self, ids: list, impacted: set, forced: bool, shard=None) -> dict:
        """The clients the indexes point at, with bitshares-core's rule
        (:func:`batch_wanted`, tested once per client: then the whole
        batch), else the ids the client subscribed; of ``shard`` only
        when given."""
        candidates = set(self.everything) if forced else set()
        by_account, by_id = self.by_account, self.by_id
        for account in impacted:
            candidates.update(by_account.get(account, ()))
        for oid in ids:
            candidates.update(by_id.get(oid, ()))
        out: dict = {}
        count = len(ids)
        for client in candidates:
            if client.subscribe_cb is None or (shard is not None and client.shard is not shard):
                continue
            if batch_wanted(forced and client.notify_remove_create, client.accounts, impacted):
                out[client] = None
                continue
            subscribed = client.ids
            chosen = [i for i, oid in enumerate(ids) if oid in subscribed]
            if chosen:
                out[client] = None if len(chosen) == count else chosen
        return out


class Digests:
    """A digest of what the clients of one subscription connection last
    saw of each object (at most :data:`REMEMBERED_OBJECTS`, the oldest
    forgotten first), so that a new link can notice what changed unseen."""

    def __init__(self) -> None:
        self._seen: OrderedDict = OrderedDict()  # object id -> digest

    def __len__(self) -> int:
        return len(self._seen)

    def remember(self, objects) -> None:
        """Remember each object (a dict with an ``id``) of ``objects`` as seen."""
        seen = self._seen
        for obj in objects or ():
            if type(obj) is dict and type(obj.get("id")) is str:
                seen[obj["id"]] = hash(orjson.dumps(obj))
                seen.move_to_end(obj["id"])
        while len(seen) > REMEMBERED_OBJECTS:
            seen.popitem(last=False)

    def changed(self, objects, unseen: bool = False) -> list:
        """The objects of ``objects`` whose clients last saw another version
        of them (with ``unseen``, also those never seen), then remembered."""
        seen = self._seen
        out = []
        for obj in objects or ():
            if type(obj) is dict and type(obj.get("id")) is str:
                old = seen.get(obj["id"])
                if (old is None and unseen) or (old is not None
                                                and old != hash(orjson.dumps(obj))):
                    out.append(obj)
        self.remember(objects)
        return out

    def __contains__(self, oid) -> bool:
        return oid in self._seen

    def ids(self) -> list:
        """The ids of every object remembered, oldest first."""
        return list(self._seen)

    def forget(self, ids) -> None:
        """Forget ``ids`` (objects removed)."""
        seen = self._seen
        for oid in ids:
            seen.pop(oid, None)

    def keep_only(self, wanted) -> None:
        """Forget the digests of ids for which ``wanted(id)`` is false."""
        self._seen = OrderedDict((oid, d) for oid, d in self._seen.items() if wanted(oid))


#: The members of a full account (bitshares-core ``full_account``) holding
#: objects of the account that change with its operations (``votes``, the
#: objects it votes for, are not its own).
FULL_ACCOUNT_OBJECTS = ("account", "statistics", "balances", "vesting_balances",
                        "limit_orders", "call_orders", "settle_orders", "proposals",
                        "withdraws_from", "withdraws_to", "htlcs_from", "htlcs_to")


#: The object types (``space.type``) of the members of
#: :data:`FULL_ACCOUNT_OBJECTS` that the chain removes: balances (2.5),
#: vesting balances (1.13), limit, call and settle orders (1.7, 1.8, 1.4),
#: proposals (1.10), withdraw permissions (1.12) and HTLCs (1.16).
REMOVABLE_ACCOUNT_OBJECTS = frozenset(("2.5", "1.13", "1.7", "1.8", "1.4", "1.10",
                                       "1.12", "1.16"))


def full_account_objects(full) -> list:
    """The objects (dicts with an ``id``) of a ``full_account`` answer's
    members :data:`FULL_ACCOUNT_OBJECTS`."""
    out = []
    if type(full) is not dict:
        return out
    for key in FULL_ACCOUNT_OBJECTS:
        value = full.get(key)
        for item in (value if type(value) is list else (value,)):
            if type(item) is dict and type(item.get("id")) is str:
                out.append(item)
    return out


def _discard(index: dict, key, interest) -> None:
    holders = index.get(key)
    if holders is not None:
        holders.discard(interest)
        if not holders:
            del index[key]


class Encoded:
    """One upstream notice's payload list, encoded once per item
    (``orjson``) and once per distinct selection of items: every client
    receiving the same selection gets the same payload bytes (an
    ``orjson.Fragment`` for ``session.send_notice(cb, payload)``) inside
    its own ``[cb, [payload]]`` frame."""

    def __init__(self, items: list) -> None:
        self.items = items
        self._pieces = None
        self._selections: dict = {}

    def payload(self, indexes) -> orjson.Fragment:
        """The JSON list of the items at ``indexes`` (None: all), as a
        Fragment; the same object for the same selection."""
        key = None if indexes is None else tuple(indexes)
        fragment = self._selections.get(key)
        if fragment is None:
            if key is None:
                fragment = orjson.Fragment(orjson.dumps(self.items))
            else:
                if self._pieces is None:
                    self._pieces = [None] * len(self.items)
                pieces = self._pieces
                for i in key:
                    if pieces[i] is None:
                        pieces[i] = orjson.dumps(self.items[i])
                fragment = orjson.Fragment(b"[" + b",".join(pieces[i] for i in key) + b"]")
            self._selections[key] = fragment
        return fragment


def encode(value) -> orjson.Fragment:
    """``value`` (a whole notice payload: a block id, a transaction, a
    market's list) encoded once, for every client it goes to."""
    return orjson.Fragment(orjson.dumps(value))
