"""The API sets a gateway forwards to its upstreams.

:class:`Gateway` is what the forwarded sets share (the
:class:`~nodeapi.gateway.pool.UpstreamPool`, the
:class:`~nodeapi.gateway.cache.ForwardedAnswerCache`, the subscription hub);
:func:`gateway_registry` gives the RPC layer one :class:`ForwardedApi`
subclass per forwarded set name (:data:`FORWARDED`), so login and
api-access stay local, and the history set from the search database when
one is given; ``debug`` and ``devnet`` are not served (no chain of its
own).  :class:`ClientHead` keeps a connection's head from going backwards.
The functions answered here are ordinary API functions of a subclass: the
broadcasts (:class:`NetworkBroadcastForward`, never repeated blindly) and
the subscription functions (:class:`ForwardedDatabaseApi`, through the
hub; refused with :class:`CallbacksNotRouted` without one).

Reference: a forwarded call is bitshares-fc's ``"call"`` with the set
named as a string (src/rpc/websocket_api.cpp; bitshares-core
libraries/app/api.cpp ``login_api::database()`` and the others, each
refusing what the upstream's user may not use), the client's arguments
unchanged and the upstream's JSON answer or error
(:class:`~nodeapi.peers.errors.UpstreamError`) passed on as it came.  The
flow (routes, cache, answers shared in flight and per head block, the
client's floor) is DESIGN.rst's "A read forwarded by a gateway".
"""

import weakref
from typing import Any

import orjson
from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure

from nodeapi.api.base import ApiSet, api_function
from nodeapi.errors import ApiError
from nodeapi.gateway.cache import ForwardedAnswerCache, cache_key
from nodeapi.gateway.routes import DEFAULT_RULE, NEVER, UpstreamRoutes
from nodeapi.gateway.confirmations import Confirmations
from nodeapi.gateway.head_share import HeadShare, dgp_head, shareable
from nodeapi.gateway.subscribing_reads import SUBSCRIBING_READS, without_subscribe
from nodeapi.peers.errors import (
    NoUpstream, PeerDisconnected, PeerRpcError, UpstreamError, UpstreamTimeout)
from nodeapi.protocol.transaction import transaction_id

#: the sets forwarded (login accessor names, bitshares-core login_api)
FORWARDED = ("database", "network_broadcast", "network_node", "crypto", "asset", "block",
             "orders", "custom_operations", "history")

#: database_api functions that register callbacks (bitshares-core
#: libraries/app/include/graphene/app/database_api.hpp) and the orders of
#: market subscriptions: answered by :class:`ForwardedDatabaseApi` only
SUBSCRIPTION_FUNCTIONS = (
    ("database", "set_subscribe_callback"), ("database", "set_pending_transaction_callback"),
    ("database", "set_block_applied_callback"), ("database", "cancel_all_subscriptions"),
    ("database", "set_auto_subscription"), ("database", "subscribe_to_market"),
    ("database", "unsubscribe_from_market"))


#: sets whose identical calls in flight at the same moment share one
#: upstream call (reads without side effects; not network_node, whose
#: add_node and parameters change the upstream, nor network_broadcast)
SHARED_SETS = frozenset(("database", "history", "asset", "orders", "block",
                         "custom_operations", "crypto"))


class CallbacksNotRouted(ApiError):
    """A subscription function reached a gateway that has no subscription
    hub routing its notices (:attr:`Gateway.hub`)."""

    name = "callbacks_not_routed"


class ClientHead:
    """The highest head block one client connection was served (module
    docstring): :attr:`floor`, raised by :meth:`served`."""

    __slots__ = ("floor", "__weakref__")

    def __init__(self) -> None:
        self.floor = 0

    def served(self, num: int) -> None:
        """An answer of head block ``num`` reached the client."""
        if num > self.floor:
            self.floor = num


class Gateway:
    """What the forwarded sets share (module docstring).

    :param pool: the :class:`~nodeapi.gateway.pool.UpstreamPool`.
    :param cache: the :class:`~nodeapi.gateway.cache.ForwardedAnswerCache` (a
        default-sized one when None).
    :param confirmations: the broadcast callbacks'
        :class:`~nodeapi.gateway.confirmations.Confirmations` (one over
        ``pool`` when None).
    :param share: the :class:`~nodeapi.gateway.head_share.HeadShare` of
        per-block answers, or None (no sharing beyond the calls in flight).
    :param routes: the :class:`~nodeapi.gateway.routes.UpstreamRoutes`
        (``--upstream-routes``: the upstreams and cache lifetime of each
        set or function; default none: every upstream, the default rule).
    :param hub: the merged subscriptions'
        :class:`~nodeapi.gateway.subscriptions.SubscriptionHub` answering
        the subscription functions (:class:`ForwardedDatabaseApi`; its
        figures are the gateway's), or None: they are refused.  Each
        transaction an upstream took through the gateway is its pending
        notice, and the heads its notices show reach ``share``.
    :ivar broadcast_listeners: ``listener(trx)`` for each transaction an
        upstream took (:meth:`broadcast`).
    :ivar shared: calls answered with the answer of an identical call that
        was in flight when they came.
    """

    log = Logger()

    def __init__(self, pool, cache: ForwardedAnswerCache = None,
                 confirmations: Confirmations = None, share: HeadShare = None,
                 routes: UpstreamRoutes = UpstreamRoutes(), hub: Any = None) -> None:
        self.pool = pool
        self.share = share
        self.routes = routes
        self.cache = cache if cache is not None else ForwardedAnswerCache()
        if self.cache.clock is None and any(r.ttl > 0 for r in routes.routes):
            raise ValueError("routes with a ttl in seconds need an ForwardedAnswerCache with a clock")
        self.confirmations = confirmations if confirmations is not None \
            else Confirmations(pool)
        self.broadcast_listeners: list = []
        self.hub = hub
        if hub is not None:
            if share is not None:
                hub.on_head = share.saw_head
            self.broadcast_listeners.append(hub.pending_notice)
        self.shared = 0
        # (set, function, args JSON[, generation]) -> (floor sent for, [waiting Deferreds])
        self._in_flight: dict = {}
        self._clients = weakref.WeakKeyDictionary()  # session -> ClientHead

    def client_head(self, session) -> ClientHead:
        """The :class:`ClientHead` of client connection ``session``."""
        head = self._clients.get(session)
        if head is None:
            head = self._clients[session] = ClientHead()
        return head

    def forward(self, api: str, method: str, args: list,
                client: ClientHead = None) -> defer.Deferred:
        """``method`` of set ``api`` at an upstream, or from the cache, or
        from the answers of this block (:attr:`share`), or shared with the
        identical call in flight (:data:`SHARED_SETS`; with a share, only
        one sent in the same generation), never from an upstream below
        ``client``'s floor (module docstring): a Deferred firing with the
        answer as an ``orjson.Fragment``.  The call's route
        (:attr:`routes`) names the upstreams that may answer it and how
        long its answer is kept."""
        route = self.routes.route(api, method)
        key = self._cache_key(route, api, method, args)
        if key is not None:
            kept = self.cache.get(key[0])
            if kept is not None:
                return defer.succeed(orjson.Fragment(kept))
        if client is None:
            client = ClientHead()
        if api not in SHARED_SETS:
            return self._send(api, method, args, key, None, client, route)
        same = flight = (api, method, orjson.dumps(args))
        ticket = None
        share = self.share
        if share is not None and shareable(api, method):
            generation = share.sent()
            if generation[0] >= client.floor:
                kept = share.get(same)
                if kept is not None:
                    client.served(generation[0])
                    return defer.succeed(orjson.Fragment(kept))
            ticket = (same, generation, share.clock.seconds())
            flight = same + (generation,)
        waiting = self._in_flight.get(flight)
        if waiting is not None and waiting[0] >= client.floor:
            self.shared += 1
            d = defer.Deferred()
            waiting[1].append(d)
            return d
        if waiting is not None:  # sent for a lower floor: not shared
            return self._send(api, method, args, key, ticket, client, route)
        self._in_flight[flight] = (client.floor, [])
        return self._send(api, method, args, key, ticket, client, route).addBoth(
            self._release, flight)

    @staticmethod
    def _cache_key(route, api: str, method: str, args: list):
        """``(cache key, highest block, seconds)`` of a call under
        ``route`` (:mod:`nodeapi.gateway.routes`: the default rule of
        :func:`~nodeapi.gateway.cache.cache_key`, never, for good, or for
        ``ttl`` seconds), or None: not kept."""
        if route.ttl == NEVER:
            return None
        if route.ttl == DEFAULT_RULE:
            key = cache_key(api, method, args)
            return None if key is None else (key[0], key[1], None)
        same = ("ttl", api, method, orjson.dumps(args))
        return same, None, (route.ttl if route.ttl > 0 else None)

    def _release(self, outcome, flight):
        """The shared call is answered: so is every identical one that waited."""
        for d in self._in_flight.pop(flight, (0, ()))[1]:
            if isinstance(outcome, Failure):
                d.errback(outcome)
            else:
                d.callback(outcome)
        return outcome

    def _send(self, api: str, method: str, args: list, key, ticket, client,
              route) -> defer.Deferred:
        try:
            upstream = self.pool.pick(floor=client.floor, route=route)
        except NoUpstream:  # none now: the pool waits for one
            return defer.Deferred.fromCoroutine(
                self._forward(api, method, args, key, ticket, client, [], None, route))
        # the common case without a coroutine: one upstream, one call
        d = upstream.call_raw(api, method, args)
        return d.addCallbacks(
            self._answered, self._failed, callbackArgs=(upstream, key, ticket, client, method),
            errbackArgs=(api, method, args, key, ticket, client, upstream, route))

    def _answered(self, answer: bytes, upstream, key, ticket, client, method: str):
        if key is not None:
            self.cache.put(key[0], answer, key[1], upstream.lib, key[2])
        if method == "get_dynamic_global_properties":
            upstream.saw_head(dgp_head(answer))
        client.served(upstream.head)
        if ticket is not None:
            self.share.put(ticket[0], answer, upstream, ticket[1], ticket[2])
        return orjson.Fragment(answer)

    def _failed(self, failure, api: str, method: str, args: list, key, ticket, client,
                upstream, route):
        if failure.check(PeerRpcError):
            raise UpstreamError(failure.value)
        failure.trap(PeerDisconnected)  # lost before the answer (or late): another upstream
        timed_out = failure.value if failure.check(UpstreamTimeout) else None
        self.pool.lost_read(upstream, api, method, timed_out=timed_out is not None)
        return defer.Deferred.fromCoroutine(
            self._forward(api, method, args, key, ticket, client, [upstream], timed_out,
                          route))

    async def _forward(self, api: str, method: str, args: list, key, ticket, client,
                       tried: list, timed_out, route):
        upstream, answer = await self.pool.call(api, method, args, tried=tried,
                                                floor=client.floor, timed_out=timed_out,
                                                route=route)
        return self._answered(answer, upstream, key, ticket, client, method)

    async def broadcast(self, send, trx, method: str = "broadcast_transaction"):
        """:meth:`~nodeapi.gateway.pool.UpstreamPool.broadcast`, after which
        no answer kept for this block is shared (the upstream's state now
        holds the transaction); once an upstream took it, each of
        :attr:`broadcast_listeners` is called with ``trx`` (the merged
        subscriptions' pending-transaction notices)."""
        try:
            outcome = await self.pool.broadcast(
                send, trx, self.routes.route("network_broadcast", method))
        finally:
            if self.share is not None:
                self.share.broadcast()
        for listener in list(self.broadcast_listeners):
            try:
                listener(trx)
            except Exception:
                self.log.failure("A broadcast listener failed")
        return outcome

    def saw_confirmation(self, upstream, confirmation) -> None:
        """``upstream`` confirmed a transaction in a block (a
        ``transaction_confirmation``): its head is at least that block."""
        num = confirmation.get("block_num") if type(confirmation) is dict else None
        upstream.saw_head(num)


class ForwardedApi(ApiSet):
    """A set served by the upstreams (module docstring); ``name`` is the
    set's login accessor name.  The node's ``gateway`` is the
    :class:`Gateway`."""

    def __init__(self, node: Any, session: Any) -> None:
        super().__init__(node, session)
        self.gateway = node.gateway

    def forward(self, request) -> Any:
        """Answer ``request`` (a :class:`~nodeapi.rpc.jsonrpc.Request` of a
        function this class does not define): a Deferred of the upstream's
        answer."""
        return self.gateway.forward(
            self.name, request.function, request.args,
            self.gateway.client_head(self.session)).addCallback(_resolved, request, self.name)


class ForwardedDatabaseApi(ForwardedApi):
    """The forwarded ``database`` set: its subscription functions
    (:data:`SUBSCRIPTION_FUNCTIONS`, bitshares-core database_api.hpp
    "Subscriptions" and the market subscriptions) are functions of its
    own, answered by this connection's
    :class:`~nodeapi.gateway.client_subscriptions.ClientSubscriptions`
    (made by the hub at the first one); a read that subscribes for this
    client goes through it too, other reads are forwarded with
    ``subscribe`` false (so that they add nothing to a subscription link
    they travel on).  Each answers null like graphene's.

    :raises CallbacksNotRouted: a subscription function on a gateway
        without a hub."""

    name = "database"

    def _client(self):
        hub = self.gateway.hub
        if hub is None:
            raise CallbacksNotRouted("this gateway does not route the notices of upstream "
                                     "callbacks")
        return hub.client_of(self.session)

    @api_function
    def set_subscribe_callback(self, cb, notify_remove_create: bool = False):
        """:meth:`~nodeapi.gateway.client_subscriptions.ClientSubscriptions.set_subscribe_callback`."""
        return self._client().set_subscribe_callback(cb, notify_remove_create)

    @api_function
    def set_auto_subscription(self, enable: bool):
        """:meth:`~nodeapi.gateway.client_subscriptions.ClientSubscriptions.set_auto_subscription`."""
        return self._client().set_auto_subscription(enable)

    @api_function
    def set_pending_transaction_callback(self, cb):
        """:meth:`~nodeapi.gateway.client_subscriptions.ClientSubscriptions.set_pending_transaction_callback`."""
        return self._client().set_pending_transaction_callback(cb)

    @api_function
    def set_block_applied_callback(self, cb):
        """:meth:`~nodeapi.gateway.client_subscriptions.ClientSubscriptions.set_block_applied_callback`."""
        return self._client().set_block_applied_callback(cb)

    @api_function
    def cancel_all_subscriptions(self):
        """:meth:`~nodeapi.gateway.client_subscriptions.ClientSubscriptions.cancel_all_subscriptions`."""
        return self._client().cancel_all_subscriptions()

    @api_function
    def subscribe_to_market(self, callback, a, b):
        """:meth:`~nodeapi.gateway.client_subscriptions.ClientSubscriptions.subscribe_to_market`."""
        return self._client().subscribe_to_market(callback, a, b)

    @api_function
    def unsubscribe_from_market(self, a, b):
        """:meth:`~nodeapi.gateway.client_subscriptions.ClientSubscriptions.unsubscribe_from_market`."""
        return self._client().unsubscribe_from_market(a, b)

    def forward(self, request) -> Any:
        """A read that subscribes for this client (its
        ``ClientSubscriptions.takes_read``) through the client's
        subscriptions, other subscribing reads without ``subscribe``,
        the rest as every forwarded set.  A subscribing read is a known
        function: counted under its name whatever its outcome."""
        function, hub = request.function, self.gateway.hub
        if hub is None or function not in SUBSCRIBING_READS:
            return super().forward(request)
        request.api_name = self.name
        client = hub.clients.get(self.session)
        if client is not None and client.takes_read(function, request.args):
            d = client.read(function, request.args)
        else:
            d = self.gateway.forward("database", function,
                                     without_subscribe(function, request.args),
                                     self.gateway.client_head(self.session))
        return d.addCallback(_resolved, request, self.name)


def _resolved(result, request, api_name: str):
    """The upstream answered: the function exists, so the call is counted
    under its set and name (the metrics never take a label value from a
    function name only a client made up; errors count as unresolved)."""
    request.api_name = api_name
    return result


class NetworkBroadcastForward(ForwardedApi):
    """The forwarded ``network_broadcast`` set: its three transaction
    broadcasts go through :meth:`~nodeapi.gateway.pool.UpstreamPool.broadcast`
    (never sent twice blindly); ``broadcast_transaction_with_callback``
    registers a callback on the chosen upstream's connection and sends its
    notice (bitshares-core libraries/app/api.cpp
    ``network_broadcast_api::on_applied_block``: one
    ``transaction_confirmation`` when a block includes the transaction) to
    this client under the client's callback id.  ``broadcast_block`` and
    other functions are forwarded as they are."""

    name = "network_broadcast"

    def __init__(self, node: Any, session: Any) -> None:
        super().__init__(node, session)
        self._waiting: list = []  # this connection's Confirmations entries

    def _broadcast(self, method: str, trx: Any) -> defer.Deferred:
        def send(upstream):
            return upstream.call_raw("network_broadcast", method, [trx])

        return defer.Deferred.fromCoroutine(self.gateway.broadcast(send, trx, method))

    @api_function
    def broadcast_transaction(self, trx):
        """Forwarded; null once an upstream took the transaction."""
        return self._broadcast("broadcast_transaction", trx).addCallback(
            lambda outcome: orjson.Fragment(outcome.answer) if outcome.answer is not None
            else None)

    @api_function
    def broadcast_transaction_synchronous(self, trx):
        """Forwarded; the ``transaction_confirmation`` once in a block."""
        return self._broadcast("broadcast_transaction_synchronous", trx).addCallback(
            self._confirmed)

    def _confirmed(self, outcome):
        if outcome.answer is None:
            self.gateway.saw_confirmation(outcome.upstream, outcome.confirmation)
            return outcome.confirmation
        try:
            self.gateway.saw_confirmation(outcome.upstream, orjson.loads(outcome.answer))
        except orjson.JSONDecodeError:
            pass  # passed on as it came
        return orjson.Fragment(outcome.answer)

    @api_function
    def broadcast_transaction_with_callback(self, callback: int, trx):
        """Forwarded with a callback id of the upstream connection
        (:class:`~nodeapi.gateway.confirmations.Confirmations`: the notice
        survives the loss of that upstream); the notice goes to this client
        as ``[callback, [confirmation]]``.  The callback is one item of the
        connection's subscription budget (:mod:`nodeapi.api.budget`, as on
        the node's own :mod:`nodeapi.api.broadcast`) until its notice is
        sent, the upstream refuses the transaction, it expires unconfirmed
        or the connection closes.

        :raises ApiError: on HTTP (no notices there).
        :raises SubscriptionLimitExceeded: no room in the budget (nothing
            is sent)."""
        if not self.session.websocket:
            raise ApiError("Callbacks need a WebSocket connection")
        session = self.session
        confirmations = self.gateway.confirmations
        try:
            txid = transaction_id(trx)
        except Exception:
            txid = None  # the upstream refuses it with its own words
        self._waiting = [entry for entry in self._waiting if not entry.done]
        item = _CallbackItem(session)
        mine = item.entries  # this broadcast's registrations (one per upstream tried)

        def deliver(confirmation, upstream):
            self.gateway.saw_confirmation(upstream, confirmation)
            session.send_notice(callback, orjson.Fragment(orjson.dumps(confirmation)))

        def send(upstream):
            for old in mine:  # sent again: the lost upstream's registration ends
                confirmations.cancel(old)
            upstream_cb, entry = confirmations.register(
                upstream, trx, txid, lambda c: deliver(c, upstream), item.settle)
            mine.append(entry)
            self._waiting.append(entry)

            def refused(failure):
                confirmations.cancel(entry)
                return failure

            return upstream.call_raw("network_broadcast", "broadcast_transaction_with_callback",
                                     [upstream_cb, trx]).addErrback(refused)

        def answered(outcome):
            if outcome.answer is not None:
                return orjson.Fragment(outcome.answer)
            for entry in mine:  # found in a block already: no upstream will call back
                confirmations.cancel(entry)
            deliver(outcome.confirmation, outcome.upstream)
            return None

        d = defer.Deferred.fromCoroutine(
            self.gateway.broadcast(send, trx, "broadcast_transaction_with_callback"))
        return d.addCallback(answered).addBoth(item.sent)

    def close(self) -> None:
        """The client is gone: its callbacks' notices go nowhere."""
        waiting, self._waiting = self._waiting, []
        for entry in waiting:
            self.gateway.confirmations.cancel(entry)
        super().close()


class _CallbackItem:
    """The budget item of one ``broadcast_transaction_with_callback``
    (:mod:`nodeapi.api.budget`): taken when made (raising
    ``SubscriptionLimitExceeded`` when there is no room), given back once
    the broadcast is over (:meth:`sent`) and none of its ``entries``
    (:class:`~nodeapi.gateway.confirmations.Confirmations` registrations)
    waits any more (:meth:`settle`)."""

    __slots__ = ("session", "entries", "busy", "held")

    def __init__(self, session) -> None:
        session.budget.take()
        self.session, self.entries, self.busy, self.held = session, [], True, True

    def settle(self) -> None:
        """A registration ended: the item goes back when it was the last."""
        if self.held and not self.busy and all(entry.done for entry in self.entries):
            self.held = False
            self.session.budget.give_back()

    def sent(self, outcome):
        """The broadcast is answered (or failed): ``outcome`` passed on."""
        self.busy = False
        self.settle()
        return outcome


def _forwarded(name: str) -> type:
    if name == "network_broadcast":
        return NetworkBroadcastForward
    if name == "database":
        return ForwardedDatabaseApi
    return type(f"Forwarded{name.title().replace('_', '')}Api", (ForwardedApi,),
                {"name": name, "__doc__": f"The {name} set, forwarded (module docstring)."})


def gateway_registry(history_api: Any = None) -> dict:
    """``{accessor name: ApiSet class}`` of a gateway: every set of
    :data:`FORWARDED` forwarded, but ``history`` served by ``history_api``
    (the search database's set class) when given."""
    registry = {name: _forwarded(name) for name in FORWARDED}
    if history_api is not None:
        registry["history"] = history_api
    return registry
