"""A state whose objects come from another node as they are touched: the
chain side of a devnet's lazy fork (``--fork-url``, :mod:`nodeapi.devnet.fork`).

An :class:`~nodeapi.chain.state.ObjectStore` made lazy (:meth:`RemoteState.install`)
holds the objects of the live chain that were touched so far, as *base
state*: below every undo session, as if they had been there from the
start.  A lookup of anything the store cannot answer yet raises
:class:`NotHereYet` naming what is missing (a *want*):

- an object id of the live chain's range (instance below the space's
  :attr:`RemoteState.limits`: what existed when the devnet started) not
  fetched yet: ``("object", id)``;
- an index entry (graphene's secondary indexes, :mod:`nodeapi.chain.indexes`)
  not complete yet: ``("name", account name)``, ``("symbol", asset
  symbol)``, ``("account", id)`` (the account's balances, limit and call
  orders, statistics: ``get_full_accounts``), ``("vesting", id)``
  (its vesting balances), ``("market", base, quote)`` (the limit orders of
  both sides), ``("calls", asset)``, ``("settles", asset)``,
  ``("bids", asset)``, ``("witness_of", account)``, ``("committee_of",
  account)``, ``("key", public key)`` (the accounts using it:
  ``get_key_references``, what wallets look accounts up by),
  ``("balance_objects", address)`` (its genesis balances).

Nothing in this layer waits: the caller that can (the RPC answer path, the
devnet's block production) catches the error, has the loader fetch the
want (:meth:`NotHereYet.fetch`, a Deferred) and runs the operation again
(:func:`call_loading`).  A transaction or a block is applied in undo
sessions and rolled back whole on an error, so the retry starts clean.
Objects fetched are inserted once (:meth:`RemoteState.insert`): a second
fetch of an id never overwrites what the devnet made of it, and the
sinks (the devnet's snapshots) get each one, so a revert to a snapshot
taken before the fetch still holds it.

Indexes answered from what is loaded only (not guarded): the holders of an
asset, withdraw permissions and HTLCs by account, the iteration sweeps of the block upkeep (expired
orders, feeds, ...), listings by name: the devnet documents them.
"""

from twisted.internet import defer

from nodeapi.chain.indexes import index_object
from nodeapi.chain.state import StateObject

#: fetch rounds one call may need before it fails (each round fetches what
#: the last attempt found missing)
MAX_ROUNDS = 200

_NOTHING = object()


class NotHereYet(Exception):
    """The state lacks ``want`` (module text) and the remote may hold it.
    Not a ChainError: nothing may take it for the operation's failure."""

    def __init__(self, remote, want: tuple) -> None:
        super().__init__(f"not loaded yet: {want}")
        self.remote = remote
        self.want = want

    def fetch(self) -> defer.Deferred:
        """Load :attr:`want` into the state (a Deferred firing when done,
        failing with the loader's error: the node unreachable, slow or
        refusing)."""
        return self.remote.load(self.want)


def call_loading(fn, rounds: int = MAX_ROUNDS) -> defer.Deferred:
    """``fn()`` until it raises no :class:`NotHereYet` (or returns a
    Deferred that does not fail with one), fetching each want first; a
    Deferred of its result.  ``fn`` must be safe to run again after such
    a failure (module text).  After ``rounds`` fetches the last want's
    error is a ``RuntimeError`` naming it."""
    async def attempt():
        for _ in range(rounds):
            try:
                result = fn()
                if isinstance(result, defer.Deferred):
                    result = await result
                return result
            except NotHereYet as missing:
                await missing.fetch()
        raise RuntimeError(f"fork: still missing state after {rounds} fetches")

    return defer.Deferred.fromCoroutine(attempt())


def _space_and_instance(oid):
    """``("1.2", 17)`` of ``"1.2.17"``, None for anything else."""
    if type(oid) is not str:
        return None
    cut = oid.rfind(".")
    tail = oid[cut + 1:]
    if cut <= 0 or not tail.isdigit() or not tail.isascii():
        return None
    return oid[:cut], int(tail)


class LazyObjects(dict):
    """The store's ``objects`` of a lazy store: a missing id of the live
    chain's range raises :class:`NotHereYet` on ``[]``, ``get`` and ``in``."""

    __slots__ = ("remote",)

    def __missing__(self, oid):
        self.remote.missing_object(oid)
        raise KeyError(oid)

    def get(self, oid, default=None):
        """``dict.get``, except that an id the live chain may hold and that was
        never fetched raises :class:`NotHereYet`
        (:meth:`RemoteState.missing_object`); an id known absent gives
        ``default``."""
        value = dict.get(self, oid, _NOTHING)
        if value is _NOTHING:
            self.remote.missing_object(oid)
            return default
        return value

    def __contains__(self, oid) -> bool:
        if dict.__contains__(self, oid):
            return True
        self.remote.missing_object(oid)
        return False


class LazyIndex(dict):
    """A secondary index of a lazy store: reading an entry not complete yet
    raises :class:`NotHereYet` with the want ``want_of(key)`` (None: the
    key cannot be on the live chain).  Writes are never refused: the store
    keeps its indexes as always, and an entry counts as complete only once
    loaded (:attr:`RemoteState.done`)."""

    __slots__ = ("remote", "want_of", "present_is_complete")

    def _check(self, key) -> None:
        if self.present_is_complete and dict.__contains__(self, key):
            return
        want = self.want_of(key)
        if want is not None and want not in self.remote.done:
            raise NotHereYet(self.remote, want)

    def get(self, key, default=None):
        """``dict.get`` of a complete entry.

        :raises NotHereYet: the entry of ``key`` may be on the live chain and
            is not loaded yet (its want ``want_of(key)`` not in
            ``remote.done``; with ``present_is_complete`` an entry present
            counts as complete)."""
        self._check(key)
        return dict.get(self, key, default)

    def __getitem__(self, key):
        self._check(key)
        return dict.__getitem__(self, key)

    def __contains__(self, key) -> bool:
        self._check(key)
        return dict.__contains__(self, key)


class RemoteState:
    """What a lazy store knows of the live chain (module text).

    :param limits: ``{"space.type": instance}``: the ids below are the live
        chain's (objects that existed when the fork started), the ones
        from there on are the devnet's own (its counters start there).
    :param loader: ``fn(want) -> Deferred`` fetching ``want`` and calling
        :meth:`insert` with what it found and :meth:`mark_done`.
    :ivar done: the wants loaded (complete index entries, names and
        symbols looked up, objects fetched or known absent).
    :ivar known: every id fetched once (present or not): never fetched or
        inserted again.
    :ivar sinks: ``fn(oid, obj)`` told of each inserted object (the
        devnet's snapshots hold it from then on).
    """

    def __init__(self, limits: dict, loader) -> None:
        self.limits = dict(limits)
        self.loader = loader
        self.done: set = set()
        self.known: set = set()
        self.sinks: list = []
        self.store = None
        self.fetches = 0  # wants loaded (figures)

    # -- what is remote ----------------------------------------------------

    def is_remote(self, oid) -> bool:
        """Whether ``oid`` is in the live chain's range (``limits``)."""
        parts = _space_and_instance(oid)
        if parts is None:
            return False
        limit = self.limits.get(parts[0])
        return limit is not None and parts[1] < limit

    def missing_object(self, oid) -> None:
        """Raise :class:`NotHereYet` when ``oid``, missing from the store,
        may be on the live chain and was never fetched."""
        if oid not in self.known and self.is_remote(oid):
            raise NotHereYet(self, ("object", oid))

    def _of_id(self, kind):
        """The want ``(kind, key)`` of an index keyed by an account or
        asset id, None for an id that is not the live chain's."""
        return lambda key: (kind, key) if self.is_remote(key) else None

    def _of_pair(self, kind, pick):
        def want(key):
            try:
                ids = pick(key)
            except (TypeError, IndexError, ValueError):
                return None
            return (kind, *ids) if all(self.is_remote(i) for i in ids) else None
        return want

    # -- installing ----------------------------------------------------------

    def install(self, store) -> None:
        """Make ``store`` lazy: its objects and guarded indexes replaced by
        :class:`LazyObjects` / :class:`LazyIndex` holding what they held;
        :attr:`store` becomes it (a devnet's revert installs the restored
        store)."""
        objects = LazyObjects(store.objects)
        objects.remote = self
        store.objects = objects
        store.remote = self
        guarded = {
            "account_by_name": (lambda name: ("name", name) if isinstance(name, str) else None,
                                True),
            "asset_by_symbol": (lambda sym: ("symbol", sym) if isinstance(sym, str) else None,
                                True),
            "balance_by_owner": (self._of_id("account"), False),
            "orders_by_seller": (self._of_id("account"), False),
            "call_by_borrower": (self._of_pair("account", lambda k: (k[0],)), False),
            "fee_sharing_balances": (self._of_pair("vesting", lambda k: (k[0],)), False),
            "orders_by_market": (self._of_pair("market", lambda k: tuple(sorted(k))), False),
            "calls_by_asset": (self._of_id("calls"), False),
            "settles_by_asset": (self._of_id("settles"), False),
            "bids_by_asset": (self._of_id("bids"), False),
            "witness_by_account": (self._of_id("witness_of"), True),
            "committee_member_by_account": (self._of_id("committee_of"), True),
            "key_references": (lambda key: ("key", key) if isinstance(key, str) else None,
                               False),
            "genesis_balances_by_owner": (
                lambda address: ("balance_objects", address) if isinstance(address, str)
                else None, False),
        }
        for name, (want_of, present) in guarded.items():
            index = LazyIndex(getattr(store, name))
            index.remote, index.want_of, index.present_is_complete = self, want_of, present
            setattr(store, name, index)
        self.store = store

    # -- loading ---------------------------------------------------------------

    def load(self, want: tuple) -> defer.Deferred:
        """Fetch ``want`` through the loader (module text)."""
        self.fetches += 1
        return defer.maybeDeferred(self.loader, want)

    def mark_done(self, *wants) -> None:
        """Record ``wants`` as loaded (and, for ``("object", id)``, the id
        as known)."""
        for want in wants:
            self.done.add(want)
            if want[0] == "object":
                self.known.add(want[1])

    def insert(self, objects) -> list:
        """Put the live chain's ``objects`` (dicts in the chain's memory
        form, :func:`nodeapi.protocol.wire.object_from_wire`) into the
        store as base state: below every undo session, indexed, never
        replacing an id fetched before, leaving out ids past
        :attr:`limits` (made on the live chain after the fork began).
        Returns the ids inserted."""
        store = self.store
        raw = dict.__setitem__
        inserted = []
        for fields in objects:
            oid = fields.get("id") if isinstance(fields, dict) else None
            if oid is None or oid in self.known:
                continue
            self.known.add(oid)
            if not self.is_remote(oid) or dict.__contains__(store.objects, oid):
                continue
            obj = StateObject(fields)
            raw(store.objects, oid, obj)
            index_object(store, obj, True)
            inserted.append(oid)
            for sink in list(self.sinks):
                sink(oid, obj)
        if inserted:
            store.version += 1
        return inserted
