"""The object store: every chain object as a dict in its wire shape, with
indexes and undo sessions.

Objects are stored under their id string (``"1.2.6"``) as dicts in graphene's
exact wire shapes (what ``get_objects`` returns), except that their times
(``fc::time_point_sec``) are integer seconds: the wire form is made where
objects leave the node (:data:`nodeapi.protocol.wire.TIME_FIELDS`).  Readers must treat them as
read-only; writers go through :meth:`ObjectStore.create`,
:meth:`ObjectStore.modify` and :meth:`ObjectStore.remove` so that indexes and
undo stay right.  ``modify`` is copy-on-write one level deep: an evaluator that
changes a nested container (e.g. ``options``) assigns a new one instead of
mutating the old.

Indexes (all read-only for callers; what each holds and how it follows
the objects: :mod:`nodeapi.chain.indexes`): ``account_by_name``,
``asset_by_symbol``, ``balance_by_owner``, ``holders_by_asset``,
``witness_by_account``, ``committee_member_by_account``,
``key_references``, ``orders_by_seller``, ``orders_by_market``,
``genesis_balances_by_owner``, ``withdraw_permission_ids``, ``htlc_ids``,
``calls_by_asset``, ``call_by_borrower``, ``settles_by_asset``,
``bids_by_asset``, ``fee_sharing_balances`` and ``by_kind``
(:meth:`ObjectStore.ids_of_type`).

``version`` grows with every change, so an answer computed from the state
stays right while it is unchanged.

Undo (graphene ``undo_database``): :meth:`begin` opens a session,
:meth:`rollback` restores the state as it was at ``begin`` and
:meth:`commit` keeps the changes (merging them into the enclosing session if
there is one).  The store also records the ids changed since
:meth:`reset_changed` (used for ``chain.changed_objects_of_last_block()``).
"""

from operator import itemgetter

from nodeapi.chain.errors import UnknownObject, assertion
from nodeapi.chain.indexes import index_object, order_market
from nodeapi.protocol.asset import value_key
from nodeapi.protocol.errors import InvalidObjectId
from nodeapi.protocol.ids import ObjectId, instance_number

_MISSING = object()


class StateObject(dict):
    """A chain object as the store holds it: a dict that is never changed
    once the operation that made it (:meth:`ObjectStore.create` or the
    copy-on-write :meth:`ObjectStore.modify`) has returned.  Readers may
    therefore cache forms derived from one by identity; the node keeps its
    wire form and encoding (:class:`nodeapi.api.answers.EncodedObjects`)."""

    __slots__ = ()

    def writable(self) -> "StateObject":
        """The copy :meth:`ObjectStore.modify` hands out."""
        return StateObject(self)


class AnnotatedObject(StateObject):
    """A chain object with chain-private state beside its fields:
    ``private``, what graphene keeps about the object in a secondary index
    rather than in the object (never on the wire, carried along by
    :meth:`ObjectStore.modify` and undone with the object).  A store
    restored from a checkpoint starts without it, as graphene rebuilds its
    secondary indexes from the objects when it starts."""

    __slots__ = ("private",)

    def writable(self) -> "AnnotatedObject":
        """The copy :meth:`ObjectStore.modify` hands out, carrying ``private``
        along (the same value, not a copy)."""
        new = AnnotatedObject(self)
        new.private = self.private
        return new



def sort_book(orders: list) -> list:
    """``orders`` (1.7.N objects of one market) best price first: by the
    value of the inverted ``sell_price`` (quote / base) ascending, then by
    id (graphene ``limit_order_index`` by_price).  Sorted by the correctly
    rounded float of that value and the id; a run of equal floats whose
    exact values differ (amounts beyond a double's precision) is sorted
    again by the exact value (:func:`~nodeapi.protocol.asset.value_key`),
    so the order is graphene's exactly without building a Fraction per
    order (a book is sorted again whenever one of its orders changes)."""
    keyed = []
    for o in orders:
        price = o["sell_price"]
        quote, base = int(price["quote"]["amount"]), int(price["base"]["amount"])
        keyed.append((quote / base, instance_number(o["id"]), quote, base, o))
    keyed.sort(key=_FLOAT_AND_ID)
    start, n = 0, len(keyed)
    while start < n:
        end = start + 1
        first = keyed[start]
        while end < n and keyed[end][0] == first[0]:
            end += 1
        if end - start > 1 and any(k[2] * first[3] != first[2] * k[3]
                                   for k in keyed[start + 1:end]):
            keyed[start:end] = sorted(keyed[start:end], key=_EXACT_AND_ID)
        start = end
    return [k[4] for k in keyed]


_FLOAT_AND_ID = itemgetter(0, 1)


def _EXACT_AND_ID(k: tuple) -> tuple:
    return value_key({"base": {"amount": k[2]}, "quote": {"amount": k[3]}}), k[1]


class ObjectStore:
    """Chain objects by id, with indexes and nested undo sessions.

    :ivar statistics_space: ``"space.type"`` of the account statistics
        objects (``"2.7"`` or ``"2.6"``, chosen by the chain:
        :func:`nodeapi.chain.genesis.statistics_space`); accounts are created
        with theirs there and every other reader follows an account's
        ``statistics`` field.
    """

    def __init__(self, statistics_space: str) -> None:
        self.statistics_space = statistics_space
        self.objects: dict[str, dict] = {}
        self.next_instance: dict[str, int] = {}
        self.account_by_name: dict[str, str] = {}
        self.asset_by_symbol: dict[str, str] = {}
        self.balance_by_owner: dict[str, dict[str, str]] = {}
        self.holders_by_asset: dict[str, dict[str, str]] = {}
        self.witness_by_account: dict[str, str] = {}
        self.committee_member_by_account: dict[str, str] = {}
        self.key_references: dict[str, set] = {}
        self.orders_by_seller: dict[str, set] = {}
        self.orders_by_market: dict[tuple, set] = {}
        self.genesis_balances_by_owner: dict[str, set] = {}
        self.withdraw_permission_ids: set = set()
        self.htlc_ids: set = set()
        self.calls_by_asset: dict[str, set] = {}
        self.call_by_borrower: dict[tuple, str] = {}
        self.settles_by_asset: dict[str, set] = {}
        self.bids_by_asset: dict[str, set] = {}
        self.fee_sharing_balances: dict[tuple, str] = {}  # (owner, asset) -> 1.13
        self.by_kind: dict[str, set] = {}
        self.version = 0  # grows with every change (create, modify, remove, rollback)
        self.books: dict[tuple, list] = {}  # market -> book() answer (nodeapi.chain.indexes)
        #: the earliest ``expiration`` (seconds) of an open 1.7 order, or None
        #: while unknown: set by
        #: :func:`nodeapi.chain.evaluators.market.clear_expired_orders`,
        #: dropped whenever an order is created, changed or removed (as
        #: ``books``), so a block with no order expiring scans no order
        self.order_expiry = None
        self._undo: list[tuple[dict, dict]] = []
        self.changed: set[str] = set()
        #: a devnet fork's :class:`~nodeapi.chain.remote.RemoteState` (the
        #: objects and indexes then load lazily); None on any other node
        self.remote = None

    # -- reading -----------------------------------------------------------

    def find(self, oid: str) -> dict | None:
        """The object with id ``oid`` or None."""
        return self.objects.get(oid)

    def get(self, oid: str) -> dict | None:
        """The object with id ``oid`` or None (DESIGN.rst contract)."""
        return self.objects.get(oid)

    def require(self, oid: str) -> dict:
        """The object with id ``oid``; raises :class:`UnknownObject` with
        the text of graphene's ``object_database::get`` (``FC_ASSERT(
        maybe_found != nullptr, "Unable to find Object ${id}" )``), which an
        evaluator's ``op.id(d)`` raises."""
        obj = self.objects.get(oid)
        if obj is None:
            raise assertion(UnknownObject, "maybe_found != nullptr", f"Unable to find Object {oid}",
                            {"id": oid}, "Unable to find Object ${id}")
        return obj

    def ids_of_type(self, prefix: str) -> list[str]:
        """Ids of the kind ``prefix`` (e.g. ``"1.2."``) in instance order."""
        found = self.by_kind.get(prefix[:-1])
        if not found:  # the per-block sweeps ask for kinds most chains lack
            return []
        ids = list(found)
        ids.sort(key=instance_number)
        return ids

    def next_instance_of(self, space_type: str, outermost: bool = False) -> int:
        """The instance :meth:`new_id` gives next for ``space_type``; with
        ``outermost`` the one it gave before the outermost open undo session
        (the chain's pending transactions) began."""
        current = self.next_instance.get(space_type, 0)
        if outermost and self._undo:
            return self._undo[0][1].get(space_type, current)
        return current

    def _by_name_or_id(self, text, space: int, kind: int, by_name: dict) -> dict | None:
        """The object of type ``space.kind`` named ``text`` (a key of
        ``by_name``) or with the id ``text``: a leading digit means an id
        (bitshares-core database_api_helper.cpp ``get_account_from_string``
        / ``get_asset_from_string``).  None for anything unknown, malformed
        or of another type."""
        if not isinstance(text, str) or not text:
            return None
        if text[0].isdigit():
            try:
                oid = ObjectId.parse(text)
            except InvalidObjectId:
                return None
            return self.objects.get(str(oid)) if oid.is_type(space, kind) else None
        oid = by_name.get(text)
        return self.objects.get(oid) if oid else None

    def account_by_name_or_id(self, name_or_id) -> dict | None:
        """The account object for an account name or ``1.2.N`` id, or None
        (:meth:`_by_name_or_id`)."""
        return self._by_name_or_id(name_or_id, 1, 2, self.account_by_name)

    def asset_by_symbol_or_id(self, symbol_or_id) -> dict | None:
        """The asset object for a symbol or ``1.3.N`` id, or None
        (:meth:`_by_name_or_id`)."""
        return self._by_name_or_id(symbol_or_id, 1, 3, self.asset_by_symbol)

    def balance(self, account_id: str, asset_id: str) -> int:
        """The account's balance of the asset in satoshis (0 when none)."""
        bid = self.balance_by_owner.get(account_id, {}).get(asset_id)
        return self.objects[bid]["balance"] if bid else 0

    def balances_of(self, account_id: str) -> list[dict]:
        """The account's 2.5.N ``account_balance`` objects, by asset id."""
        ids = self.balance_by_owner.get(account_id, {})
        return [self.objects[ids[a]] for a in sorted(ids, key=lambda a: instance_number(a))]

    def limit_orders(self, sell_asset: str, receive_asset: str) -> list[dict]:
        """Open 1.7.N orders selling ``sell_asset`` for ``receive_asset``,
        best price (the seller asking least per unit sold) first: ordered by
        quote/base ascending, then id (graphene ``limit_order_index``
        by_price)."""
        return list(self.book(sell_asset, receive_asset))

    def book(self, sell_asset: str, receive_asset: str) -> list:
        """:meth:`limit_orders` without the copy: a list the store keeps
        until an order of this market changes, then replaces (callers must
        not change it; its identity tells whether the market changed)."""
        market = (sell_asset, receive_asset)
        orders = self.books.get(market)
        if orders is None:
            orders = sort_book([self.objects[i] for i in self.orders_by_market.get(market, ())])
            self.books[market] = orders
        return orders

    def limit_orders_of(self, account_id: str) -> list[dict]:
        """The account's open 1.7.N orders by id."""
        ids = self.orders_by_seller.get(account_id, ())
        return [self.objects[i] for i in sorted(ids, key=lambda i: instance_number(i))]

    def witness_of(self, account_id: str) -> dict | None:
        """The witness object 1.6.N of an account, or None."""
        wid = self.witness_by_account.get(account_id)
        return self.objects.get(wid) if wid else None

    def accounts_by_name(self, lower_bound: str = "", limit: int = 1000) -> list[tuple[str, str]]:
        """``[(name, id)]`` ordered by name, names >= ``lower_bound``
        (graphene ``lookup_accounts``)."""
        names = sorted(n for n in self.account_by_name if n >= lower_bound)[:limit]
        return [(n, self.account_by_name[n]) for n in names]

    # -- writing -----------------------------------------------------------

    def _record(self, oid: str) -> None:
        self.version += 1
        self.changed.add(oid)
        if self._undo:
            layer = self._undo[-1][0]
            if oid not in layer:
                layer[oid] = self.objects.get(oid, _MISSING)

    def new_id(self, space_type: str) -> str:
        """Reserve the next id of ``space_type`` (``"1.2"``)."""
        n = self.next_instance.get(space_type, 0)
        if self._undo:
            counters = self._undo[-1][1]
            if space_type not in counters:
                counters[space_type] = n
        self.next_instance[space_type] = n + 1
        return f"{space_type}.{n}"

    def create(self, space_type: str, fields: dict) -> dict:
        """Create an object with the next id of ``space_type``; ``fields``
        (without ``id``) are stored after the id.  Returns the new object."""
        oid = self.new_id(space_type)
        obj = StateObject(id=oid)
        obj.update(fields)
        self._record(oid)
        self.objects[oid] = obj
        index_object(self, obj, True)
        return obj

    def modify(self, oid: str) -> dict:
        """A writable (shallow) copy of object ``oid``, already in the store.

        The copy has the indexed fields of the old version, so the indexes
        (which hold ids) stay right as they are; only the cached order book
        holding the old 1.7 object is dropped.  A caller that then changes
        an indexed field calls :meth:`reindex`."""
        old = self.require(oid)
        self._record(oid)
        new = old.writable() if isinstance(old, StateObject) else StateObject(old)
        self.objects[oid] = new
        if oid[:4] == "1.7.":
            self.books.pop(order_market(old), None)
            self.order_expiry = None
        return new

    def annotate(self, oid: str, private) -> dict:
        """Give object ``oid``, as :meth:`modify` returned it in the change
        being made, the chain-private state ``private``
        (:class:`AnnotatedObject`); returns the object now in the store,
        which the caller goes on with."""
        new = AnnotatedObject(self.objects[oid])
        new.private = private
        self.objects[oid] = new
        return new

    def reindex(self, obj: dict, old: dict) -> None:
        """Refresh the indexes after changing indexed fields of ``obj`` that
        :meth:`modify` returned (``old`` is the previous version)."""
        index_object(self, old, False)
        index_object(self, obj, True)

    def remove(self, oid: str) -> None:
        """Delete object ``oid``."""
        old = self.require(oid)
        self._record(oid)
        index_object(self, old, False)
        del self.objects[oid]

    # -- checkpoints -------------------------------------------------------

    def committed(self) -> tuple:
        """``(objects, next_instance)`` as they were before the outermost
        open undo session (the head block's state, without pending
        transactions): new dicts holding the store's own (never changed)
        objects, so building them costs a shallow copy and they stay valid
        while the store goes on (nodeapi.chain.checkpoint)."""
        objects = dict(self.objects)
        counters = dict(self.next_instance)
        for layer, layer_counters in reversed(self._undo):  # the outermost wins
            for oid, old in layer.items():
                if old is _MISSING:
                    objects.pop(oid, None)
                else:
                    objects[oid] = old
            counters.update(layer_counters)
        return objects, counters

    @classmethod
    def restored(cls, statistics_space: str, objects: dict, next_instance: dict):
        """A store holding ``objects`` (id -> wire dict) with its indexes
        built and ``next_instance`` counters, no undo session open."""
        store = cls(statistics_space)
        for oid, fields in objects.items():
            obj = StateObject(fields)
            store.objects[oid] = obj
            index_object(store, obj, True)
        store.next_instance = dict(next_instance)
        return store

    # -- undo --------------------------------------------------------------

    def begin(self) -> None:
        """Open an undo session."""
        self._undo.append(({}, {}))

    def rollback(self) -> None:
        """Undo every change since the matching :meth:`begin`."""
        self.undo(*self._undo.pop())

    def detach(self) -> tuple:
        """Close the outermost (and only) session keeping its changes, and
        return its ``(layer, counters)`` for a later :meth:`undo`: graphene
        ``undo_database`` keeps one such session per block above the last
        irreversible block, so a block can be popped (``pop_block``).

        :raises RuntimeError: another session encloses it."""
        if len(self._undo) != 1:
            raise RuntimeError(f"detach needs exactly one open session, {len(self._undo)} open")
        return self._undo.pop()

    @staticmethod
    def existed_before(layer: dict) -> set:
        """Ids of a detached session's ``layer`` (:meth:`detach`) whose
        objects existed before the session (graphene ``undo_state``'s
        ``old_values`` and ``removed``, not its ``new_ids``)."""
        return {oid for oid, old in layer.items() if old is not _MISSING}

    def undo(self, layer: dict, counters: dict) -> None:
        """Put back the objects and counters a session changed: ``layer``
        (id -> the object before it, or the missing marker) and ``counters``
        (space.type -> the next instance before it), as :meth:`rollback`
        and :meth:`detach` give them.  A detached block session is undone
        only after every later one (``Chain.pop_block``)."""
        self.version += 1
        for oid, old in layer.items():
            cur = self.objects.get(oid)
            if cur is not None:
                index_object(self, cur, False)
            if old is _MISSING:
                self.objects.pop(oid, None)
            else:
                self.objects[oid] = old
                index_object(self, old, True)
        self.next_instance.update(counters)

    def commit(self) -> None:
        """Keep the changes of the innermost session."""
        layer, counters = self._undo.pop()
        if self._undo:
            outer, outer_counters = self._undo[-1]
            for oid, old in layer.items():
                outer.setdefault(oid, old)
            for k, v in counters.items():
                outer_counters.setdefault(k, v)

    @property
    def depth(self) -> int:
        """Number of open undo sessions."""
        return len(self._undo)

    def reset_changed(self) -> set[str]:
        """Return the ids changed since the last call and forget them."""
        changed, self.changed = self.changed, set()
        return changed
