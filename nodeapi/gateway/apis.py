"""The API sets a gateway forwards to its upstreams.

:class:`Gateway` is what every forwarded set shares: the
:class:`~nodeapi.gateway.pool.UpstreamPool`, the
:class:`~nodeapi.gateway.cache.AnswerCache` and :attr:`Gateway.handlers`.
:func:`gateway_registry` gives the RPC layer its sets: one
:class:`ForwardedApi` subclass per set name the gateway forwards
(:data:`FORWARDED`), so login and api-access stay local and unchanged
(:mod:`nodeapi.rpc.login`, :mod:`nodeapi.rpc.access`: a client gets its
own set ids as from any node), and the history set from the search
database when one is given.  ``debug`` (and nodeapi's ``devnet``) are not
served: a gateway has no chain of its own to drive.

A forwarded set has no function table of its own: the RPC session hands
every call of a function the set does not define to
:meth:`ForwardedApi.forward`, which sends it to an upstream under the
set's name (bitshares-fc src/rpc/websocket_api.cpp: ``"call"`` with a
string set asks the upstream's login API for that set, bitshares-core
libraries/app/api.cpp ``login_api::database()`` and the others, each
refusing with "Access denied" what the upstream's user may not use), with
the client's arguments unchanged and the answer passed on as the
upstream's JSON bytes; the upstream's errors reach the client as they
came (:class:`~nodeapi.peers.errors.UpstreamError`).  Functions a set
answers itself are ordinary API functions of the subclass: the
broadcasts of :class:`NetworkBroadcastForward` (never repeated blindly,
:meth:`~nodeapi.gateway.pool.UpstreamPool.broadcast`).

Callbacks on shared upstream connections need the notices routed back to
the right client: ``Gateway.handlers[(set, function)]`` holds a
``handler(api_set, args) -> result or Deferred`` for each function of
:data:`SUBSCRIPTION_FUNCTIONS`; the merged subscriptions register theirs
there.  A subscription function without a handler is refused with
:class:`CallbacksNotRouted`, never forwarded (its notices would reach
nobody).
"""

from typing import Any

import orjson
from twisted.internet import defer

from nodeapi.api.base import ApiSet, api_function
from nodeapi.errors import ApiError
from nodeapi.gateway.cache import AnswerCache, cache_key

#: the sets forwarded (login accessor names, bitshares-core login_api)
FORWARDED = ("database", "network_broadcast", "network_node", "crypto", "asset", "block",
             "orders", "custom_operations", "history")

#: database_api functions that register callbacks (bitshares-core
#: libraries/app/include/graphene/app/database_api.hpp) and the orders of
#: market subscriptions: answered by :attr:`Gateway.handlers` only
SUBSCRIPTION_FUNCTIONS = (
    ("database", "set_subscribe_callback"), ("database", "set_pending_transaction_callback"),
    ("database", "set_block_applied_callback"), ("database", "cancel_all_subscriptions"),
    ("database", "set_auto_subscription"), ("database", "subscribe_to_market"),
    ("database", "unsubscribe_from_market"))


class CallbacksNotRouted(ApiError):
    """A subscription function reached a gateway that has no handler
    routing its notices (:attr:`Gateway.handlers`)."""

    name = "callbacks_not_routed"


class Gateway:
    """What the forwarded sets share (module docstring).

    :param pool: the :class:`~nodeapi.gateway.pool.UpstreamPool`.
    :param cache: the :class:`~nodeapi.gateway.cache.AnswerCache` (a
        default-sized one when None).
    :ivar handlers: ``{(set, function): handler(api_set, args)}``.
    """

    def __init__(self, pool, cache: AnswerCache = None) -> None:
        self.pool = pool
        self.cache = cache if cache is not None else AnswerCache()
        self.handlers: dict = {}

    def forward(self, api: str, method: str, args: list) -> defer.Deferred:
        """``method`` of set ``api`` at an upstream, or from the cache: a
        Deferred firing with the answer as an ``orjson.Fragment``."""
        key = cache_key(api, method, args)
        if key is not None:
            kept = self.cache.get(key[0])
            if kept is not None:
                return defer.succeed(orjson.Fragment(kept))
        return defer.Deferred.fromCoroutine(self._forward(api, method, args, key))

    async def _forward(self, api: str, method: str, args: list, key):
        upstream, answer = await self.pool.call(api, method, args)
        if key is not None:
            self.cache.put(key[0], answer, key[1], upstream.lib)
        return orjson.Fragment(answer)


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
        answer, or the handler's for a subscription function.

        :raises CallbacksNotRouted: a subscription function without a
            handler."""
        what = (self.name, request.function)
        handler = self.gateway.handlers.get(what)
        if handler is not None:
            return handler(self, request.args)
        if what in SUBSCRIPTION_FUNCTIONS:
            raise CallbacksNotRouted(f"{request.function}: this gateway does not route the "
                                     f"notices of upstream callbacks")
        return self.gateway.forward(self.name, request.function, request.args)


class NetworkBroadcastForward(ForwardedApi):
    """The forwarded ``network_broadcast`` set: its three transaction
    broadcasts go through :meth:`~nodeapi.gateway.pool.UpstreamPool.broadcast`
    (never sent twice blindly); ``broadcast_transaction_with_callback``
    registers a callback on the chosen upstream's connection and sends its
    notice (bitshares-core libraries/app/api.cpp
    ``network_broadcast_api::on_applied_block``: one
    ``transaction_confirmation`` when a block includes the transaction) to
    this client under the client's callback id."""

    name = "network_broadcast"

    def __init__(self, node: Any, session: Any) -> None:
        super().__init__(node, session)
        self._listening: list = []  # (upstream, callback id) of this connection

    def _broadcast(self, method: str, trx: Any) -> defer.Deferred:
        def send(upstream):
            return upstream.call_raw("network_broadcast", method, [trx])

        return defer.Deferred.fromCoroutine(self.gateway.pool.broadcast(send, trx))

    @api_function
    def broadcast_transaction(self, trx):
        """Forwarded; null once an upstream took the transaction."""
        return self._broadcast("broadcast_transaction", trx).addCallback(
            lambda outcome: orjson.Fragment(outcome[1]) if outcome[1] is not None else None)

    @api_function
    def broadcast_transaction_synchronous(self, trx):
        """Forwarded; the ``transaction_confirmation`` once in a block."""
        return self._broadcast("broadcast_transaction_synchronous", trx).addCallback(
            lambda outcome: orjson.Fragment(outcome[1]) if outcome[1] is not None
            else outcome[2])

    @api_function
    def broadcast_transaction_with_callback(self, callback: int, trx):
        """Forwarded with a callback id of the upstream connection; its
        notice goes to this client as ``[callback, [confirmation]]``.

        :raises ApiError: on HTTP (no notices there)."""
        if not self.session.websocket:
            raise ApiError("Callbacks need a WebSocket connection")
        session = self.session

        def send(upstream):
            upstream_cb = upstream.new_callback_id()
            entry = (upstream, upstream_cb)

            def notice(payload):
                upstream.listen(upstream_cb, None)
                if entry in self._listening:
                    self._listening.remove(entry)
                session.send_notice(callback, orjson.Fragment(orjson.dumps(payload[0]))
                                    if payload else None)

            def failed(failure):
                upstream.listen(upstream_cb, None)
                if entry in self._listening:
                    self._listening.remove(entry)
                return failure

            upstream.listen(upstream_cb, notice)
            self._listening.append(entry)
            return upstream.call_raw("network_broadcast", "broadcast_transaction_with_callback",
                                     [upstream_cb, trx]).addErrback(failed)

        def answered(outcome):
            if outcome[1] is not None:
                return orjson.Fragment(outcome[1])
            session.send_notice(callback, outcome[2])  # it was in a block already
            return None

        d = defer.Deferred.fromCoroutine(self.gateway.pool.broadcast(send, trx))
        return d.addCallback(answered)

    def close(self) -> None:
        """The client is gone: its callbacks' notices go nowhere."""
        listening, self._listening = self._listening, []
        for upstream, upstream_cb in listening:
            upstream.listen(upstream_cb, None)
        super().close()


def _forwarded(name: str) -> type:
    if name == "network_broadcast":
        return NetworkBroadcastForward
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
