"""What one applied block changed, worked out once for every connection
(:class:`BlockChanges`), and the rules deciding which of those changes a
subscriber is told of (:func:`select_objects`, :func:`select_orders`).

Every connection with a callback observes every block
(:mod:`nodeapi.api.database.subscriptions`,
:mod:`nodeapi.api.database.markets.subscriptions`); what does not depend
on the connection (the changed ids in id order, the accounts each object
belongs to, the accounts the operations impacted, the fills and order
changes of each market) is computed by the first of them and shared by
the others: :func:`block_changes` keeps it for the block being notified.

The notice payloads are shared too: :meth:`BlockChanges.batch` hands every
subscriber of the same selection the same list object, so the RPC layer
encodes it once for all of them (the contract of
:meth:`nodeapi.api.base.Session.send_notice`).  Those lists are never
changed once made.

Graphene reference: bitshares-core libraries/app/database_api.cpp
(``handle_object_changed``, ``on_objects_new/changed/removed``,
``enqueue_if_subscribed_to_market``, ``on_applied_block``), where each
session's ``database_api_impl`` filters the signals on its own; the rules
are the same, only the work shared between connections is done once here.
"""

from nodeapi.api.arguments import id_key
from nodeapi.api.database.notice_rules import relevant_accounts
from nodeapi.plugins.market_history.objects import market_of
from nodeapi.protocol.ids import kind_and_instance

_LIMIT_ORDER = "1.7."
_FILL_ORDER = 4


def order_market(order: dict) -> tuple:
    """graphene ``get_order_market`` of a limit order: its two assets by id."""
    sp = order["sell_price"]
    return market_of(sp["base"]["asset_id"], sp["quote"]["asset_id"])


class BlockChanges:
    """The changes of one applied block over ``chain``'s head state (or,
    given ``ids``, of those objects changed outside a block:
    :func:`state_changes`).

    :ivar applied: the :class:`~nodeapi.applied.AppliedBlock`.
    :ivar changed: ``[(oid, object or None), ...]`` in id order, None for
        a removed object (or one created and removed by the block).
    :ivar impacted: the accounts the block's operations impacted.
    :ivar counters: the instance counters the block left (``{"1.2": n}``):
        an object at or above them next block is new then.
    """

    __slots__ = ("applied", "changed", "impacted", "counters", "_objects", "_accounts",
                 "_new", "_batch_accounts", "_batches", "_markets")

    def __init__(self, chain, applied, ids=None) -> None:
        self.applied = applied
        objects = chain.state.objects
        if ids is None:
            ids = chain.changed_objects_of_last_block()
        self.changed = [(oid, objects.get(oid)) for oid in sorted(ids, key=id_key)]
        self._objects = dict(self.changed)
        self.impacted = frozenset(a for op in applied.operations for a in op.impacted)
        self.counters = dict(chain.state.next_instance)
        self._accounts: dict = {}
        self._new: dict = {}
        self._batch_accounts: dict = {}
        self._batches: dict = {}
        self._markets = None

    def accounts_of(self, oid: str, obj: dict) -> frozenset:
        """:func:`relevant_accounts` of changed object ``obj``, once per block."""
        found = self._accounts.get(oid)
        if found is None:
            found = self._accounts[oid] = relevant_accounts(obj)
        return found

    def new_flags(self, counters: dict) -> list:
        """For each of :attr:`changed`, whether it is new to a subscriber
        whose counters (the :attr:`counters` of the block before, or those
        of the moment it subscribed) are ``counters``: its instance is at or
        above them.  Computed once per counters object."""
        entry = self._new.get(id(counters))
        if entry is None or entry[0] is not counters:
            flags = []
            for oid, _ in self.changed:
                kind, instance = kind_and_instance(oid)
                flags.append(instance >= counters.get(kind, 0))
            entry = self._new[id(counters)] = (counters, flags)
        return entry[1]

    def batch_accounts(self, counters: dict) -> tuple:
        """``(accounts of the created batch, accounts of the changed
        batch)`` for a subscriber whose counters are ``counters``
        (:meth:`new_flags`): the union of :func:`relevant_accounts` of each
        batch's objects (db_notify.cpp ``notify_changed_objects``).
        Computed once per counters object."""
        entry = self._batch_accounts.get(id(counters))
        if entry is None or entry[0] is not counters:
            new_accounts, old_accounts = set(), set()
            for (oid, obj), new in zip(self.changed, self.new_flags(counters)):
                if obj is not None:
                    (new_accounts if new else old_accounts).update(self.accounts_of(oid, obj))
            entry = self._batch_accounts[id(counters)] = (counters, new_accounts, old_accounts)
        return entry[1], entry[2]

    def batch(self, kind: str, ids: tuple) -> list:
        """The list every subscriber of the changes ``ids`` is sent: with
        ``kind`` ``"objects"`` the objects (as the block left them), with
        ``"ids"`` the ids; made once per block, the same list object for
        every subscriber (module docstring)."""
        key = (kind, ids)
        found = self._batches.get(key)
        if found is None:
            if kind == "objects":
                objects = self._objects
                found = [objects[oid] for oid in ids]
            else:
                found = list(ids)
            self._batches[key] = found
        return found

    def markets(self) -> tuple:
        """``(fills, orders, removed)`` of the block, once: its fills by
        market (``{market: [[op, result], ...]}``, operation order), its
        created or changed limit orders by market (``{market: [(oid,
        order), ...]}``, id order) and the ids of the limit orders it
        removed (id order; their market is no longer known here:
        :func:`select_orders` finds it in what a subscriber tracks)."""
        if self._markets is None:
            fills: dict = {}
            for op in self.applied.operations:
                if op.op[0] == _FILL_ORDER:
                    body = op.op[1]
                    market = market_of(body["pays"]["asset_id"], body["receives"]["asset_id"])
                    fills.setdefault(market, []).append([op.op, op.result])
            orders: dict = {}
            removed = []
            for oid, order in self.changed:
                if oid.startswith(_LIMIT_ORDER):
                    if order is None:
                        removed.append(oid)
                    else:
                        orders.setdefault(order_market(order), []).append((oid, order))
            self._markets = (fills, orders, removed)
        return self._markets


def block_changes(answers, chain, applied) -> BlockChanges:
    """The :class:`BlockChanges` of ``applied``, the block ``chain`` just
    applied: made by the first observer that asks, then shared through
    ``answers`` (the node's :class:`~nodeapi.api.answers.ApiAnswers`)."""
    changes = answers.changes
    if changes is None or changes.applied is not applied:
        changes = answers.changes = BlockChanges(chain, applied)
    return changes


class StateChange:
    """What stands for the applied block in the :class:`BlockChanges` of a
    change outside a block (a debug update, the devnet's revert,
    ``Chain.add_change_observer``): no operations, no block id."""

    __slots__ = ()
    operations = ()
    block_id = None
    block_num = None


def state_changes(chain, ids) -> BlockChanges:
    """The :class:`BlockChanges` of objects ``ids`` changed outside a block
    (notified to subscribers as after a block)."""
    return BlockChanges(chain, StateChange(), ids)


def select_objects(changes: BlockChanges, counters: dict, subscribed: set, accounts: set,
                   everything: bool) -> tuple:
    """Which changes of a block a subscriber is told of, as three tuples of
    ids ``(created, changed, removed)`` (bitshares-core database_api.cpp
    ``handle_object_changed`` with the subscribe filter, called once per
    batch of db_notify.cpp ``notify_changed_objects``):

    - a created or changed object if it is in ``subscribed``, or (created,
      with ``everything``: ``notify_remove_create``) new;
    - every object of the created batch, or of the changed batch, when one
      of ``accounts`` is among that batch's accounts
      (:meth:`BlockChanges.batch_accounts`: bitshares-core passes the
      batch's ``get_relevant_accounts`` to ``is_impacted_account``);
    - a removed object if it was subscribed, with ``everything``, or if an
      operation of the block impacted one of ``accounts`` (the removed
      objects are gone: their operations stand for their accounts); not one
      created and removed by the same block.

    New means at or above ``counters`` (:meth:`BlockChanges.new_flags`)."""
    if accounts:
        new_accounts, old_accounts = changes.batch_accounts(counters)
        all_new = not accounts.isdisjoint(new_accounts)
        all_old = not accounts.isdisjoint(old_accounts)
        removed_hit = not accounts.isdisjoint(changes.impacted)
    else:
        all_new = all_old = removed_hit = False
    created, changed, removed = [], [], []
    for (oid, obj), new in zip(changes.changed, changes.new_flags(counters)):
        if obj is None:
            if not new and (everything or removed_hit or oid in subscribed):
                removed.append(oid)
            continue
        if new:
            if all_new or everything or oid in subscribed:
                created.append(oid)
        elif all_old or oid in subscribed:
            changed.append(oid)
    return tuple(created), tuple(changed), tuple(removed)


def select_orders(changes: BlockChanges, markets, tracked: dict) -> tuple:
    """Which fills and limit order changes of a block the subscriber of
    ``markets`` (a collection of ``(asset id, asset id)`` pairs) is told of
    (graphene ``enqueue_if_subscribed_to_market``), as four dicts
    ``market -> list`` in notice order: fills (``[[op, result], ...]``,
    shared), then created, changed and removed order ids (tuples).  An
    order of a subscribed market is changed if ``tracked`` (order id ->
    market, the subscriber's orders of its markets) holds it, else created;
    a removed order is told under the market ``tracked`` held it in.
    ``tracked`` is updated: new orders are added, removed ones dropped."""
    all_fills, orders, removed_ids = changes.markets()
    fills = {m: f for m, f in all_fills.items() if m in markets}
    created: dict = {}
    changed: dict = {}
    for market, items in orders.items():
        if market not in markets:
            continue
        for oid, _ in items:
            (changed if oid in tracked else created).setdefault(market, []).append(oid)
            tracked[oid] = market
    removed: dict = {}
    for oid in removed_ids:
        market = tracked.pop(oid, None)
        if market is not None:
            removed.setdefault(market, []).append(oid)
    return (fills, {m: tuple(v) for m, v in created.items()},
            {m: tuple(v) for m, v in changed.items()}, {m: tuple(v) for m, v in removed.items()})
