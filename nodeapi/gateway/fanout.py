"""Writing the upstream's notices to the gateway's clients
(:class:`Fanout`): the objects of the subscribe callback routed by
:class:`~nodeapi.gateway.notice_routing.Interests`, block ids in order
(:class:`~nodeapi.gateway.block_notices.BlockNotices`), pending
transactions and market notices to every client that asked, each payload
encoded once (:mod:`nodeapi.gateway.notice_routing`) and written under
each client's own callback id (``session.send_notice``).

Created and changed objects come in separate notices with no sign of which
they are (bitshares-core libraries/chain/db_notify.cpp
``notify_changed_objects``: ``new_objects`` then ``changed_objects``); the
hub keeps :data:`EVERY_BLOCK_OBJECT` subscribed on its link, and since
every block changes it, a batch without it is a batch of created objects.
"""

from twisted.logger import Logger

from nodeapi.gateway.block_notices import BlockNotices
from nodeapi.gateway.head_share import HEAD_OBJECT as EVERY_BLOCK_OBJECT
from nodeapi.gateway.notice_routing import Encoded, encode


class Fanout:
    """The notices of the hub's link to the clients of ``interests`` (an
    :class:`~nodeapi.gateway.notice_routing.Interests`).

    :ivar blocks: the :class:`~nodeapi.gateway.block_notices.BlockNotices`."""

    log = Logger()

    def __init__(self, interests) -> None:
        self.interests = interests
        self.blocks = BlockNotices(
            lambda block_id: self.send_all(interests.block, "block_cb", encode(block_id)))

    def objects(self, batch) -> None:
        """A subscribe-callback notice: created or changed objects, or
        removed ids."""
        if type(batch) is not list or not batch:
            return
        interests = self.interests
        if all(type(item) is str for item in batch):
            routes = interests.route_removed(batch)
        else:
            created = not any(type(o) is dict and o.get("id") == EVERY_BLOCK_OBJECT
                              for o in batch)
            interests.learn(batch)
            routes = interests.route_objects(batch, created)
            interests.remember(batch)
        self._send_routes(routes, Encoded(batch))

    def catch_up(self, objects) -> None:
        """The subscribed objects among ``objects`` (a new link's answer)
        that changed unseen are noticed, as one batch of changed objects."""
        changed = self.interests.changed_since_seen(objects)
        if changed:
            self._send_routes(self.interests.route_objects(changed, False), Encoded(changed))

    def pending(self, trx) -> None:
        """A pending-transaction notice."""
        self.send_all(self.interests.pending, "pending_cb", encode(trx))

    def market(self, market: tuple, payload) -> None:
        """A notice of ``market`` (fills, or orders created, changed or
        removed): to each client subscribed to it."""
        self.interests.learn(payload)
        fragment = encode(payload)
        for client in list(self.interests.by_market.get(market, ())):
            self.send(client, client.markets.get(market), fragment)

    def _send_routes(self, routes: dict, encoded: Encoded) -> None:
        for client, indexes in routes.items():
            self.send(client, client.subscribe_cb, encoded.payload(indexes))

    def send_all(self, clients, attribute: str, fragment) -> None:
        for client in list(clients):
            self.send(client, getattr(client, attribute), fragment)

    def send(self, client, cb, fragment) -> None:
        """``fragment`` to ``client`` under callback ``cb`` (none: nothing);
        a failing client is logged, the others still get theirs."""
        if cb is None:
            return
        try:
            client.session.send_notice(cb, fragment)
        except Exception:
            self.log.failure("Notice to a client failed")
