"""database API, graphene section "Objects": any object by id (a section
of :class:`nodeapi.api.database.DatabaseApi`; :func:`fetch_objects` is the
lookup itself, which ``get_htlc`` shares).

Graphene reference: bitshares-core libraries/app/database_api.cpp
``get_objects``.  Objects are returned in the wire shapes the chain stores
(wire-contract section 7); an unknown id gives ``null``.  The objects of
the ``market_history`` plugin (space 5: ``5.0.N`` fills, ``5.1.N`` buckets,
``5.2.N`` tickers, ``5.3.0``) come from the plugin when it runs; they are
not subscribed (their changes are not chain object changes).  Operation
history ``1.11.N`` and account history ``2.9.N`` objects live in the
history plugin (graphene's account_history plugin keeps them in the
database), which :meth:`nodeapi.applied.IAccountHistory.get_history_objects`
asks.  Block summaries ``2.8.N`` (0..65536, the id of the last block whose
number's low 16 bits are N) come from the chain
(:meth:`nodeapi.chain.chain.Chain.block_summary`) and are not subscribed.
"""

from twisted.internet.defer import Deferred

from nodeapi.api.arguments import check_count, parse_object_id, require_list
from nodeapi.api.base import Section, api_function
from nodeapi.protocol.ids import instance_number

# Object types whose subscription graphene skips in get_objects.
_NO_SUBSCRIBE = ("1.11.", "2.9.")
_MARKET_HISTORY_SPACE = "5."
# block summaries, which the chain keeps beside its objects
_BLOCK_SUMMARY = "2.8."


def fetch_objects(node, subscriptions, ids, subscribe) -> list:
    """graphene ``get_objects(ids, subscribe)`` over ``node``: ``[object |
    null]`` for ``ids`` (any ``space.type.instance``), in order; existing
    objects are subscribed through ``subscriptions``
    (:class:`~nodeapi.api.database.subscriptions.Subscriptions`) except
    operation history ``1.11.N`` and ``2.9.N``, which come from the history
    plugin (then a Deferred with ``searchdb``).  At most
    ``api-limit-get-objects`` ids, else :class:`~nodeapi.errors.ApiError`."""
    ids = require_list(ids, "ids")
    check_count(len(ids), node.limits.get_objects, "objects")
    parsed = [parse_object_id(i) for i in ids]
    to_subscribe = subscriptions.whether_to_subscribe(subscribe)
    objects = node.chain.state.objects
    market_history = node.plugins.get("market_history")
    result = []
    for oid in parsed:
        if oid.startswith(_MARKET_HISTORY_SPACE):
            result.append(None if market_history is None else market_history.get_object(oid))
            continue
        if oid.startswith(_BLOCK_SUMMARY):
            result.append(node.chain.block_summary(instance_number(oid)))
            continue
        obj = objects.get(oid)
        if obj is not None and to_subscribe and not oid.startswith(_NO_SUBSCRIBE):
            subscriptions.subscribe_to_item(oid)
        result.append(obj)
    history = [oid for oid in parsed if oid.startswith(_NO_SUBSCRIBE)]
    plugin = node.account_history()
    if not history or plugin is None:
        return result
    found = plugin.get_history_objects(history)

    def fill(found: dict) -> list:
        return [found.get(oid, obj) if oid.startswith(_NO_SUBSCRIBE) else obj
                for oid, obj in zip(parsed, result)]

    return found.addCallback(fill) if isinstance(found, Deferred) else fill(found)


class Objects(Section):
    """Objects by id; what is found is subscribed through
    ``subscriptions``."""

    def __init__(self, node, subscriptions) -> None:
        super().__init__(node)
        self.subscriptions = subscriptions

    @api_function
    def get_objects(self, ids, subscribe: bool | None = None):
        """``[object | null]`` for ``ids`` (:func:`fetch_objects`)."""
        return fetch_objects(self.node, self.subscriptions, ids, subscribe)
