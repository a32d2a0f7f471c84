"""Writing the upstream's notices to the gateway's clients
(:class:`Fanout`): the objects of the subscribe callback routed by
:class:`~nodeapi.gateway.notice_routing.Interests`, block ids in order
(:class:`~nodeapi.gateway.block_notices.BlockNotices`), pending
and market notices to every client that asked, each payload
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
from nodeapi.gateway.notice_routing import Digests, Encoded, encode


class Fanout:
    """The notices of one subscription connection (``shard``, a
    :class:`~nodeapi.gateway.shards.Shard`, or None: every client) to the
    clients of ``interests`` (an
    :class:`~nodeapi.gateway.notice_routing.Interests`) it carries.

    :param digests: the shard's :class:`~nodeapi.gateway.notice_routing.Digests`
        (what its clients last saw).
    :ivar blocks: the :class:`~nodeapi.gateway.block_notices.BlockNotices`.
    :ivar routed: notices written to clients."""

    log = Logger()

    def __init__(self, interests, shard=None, digests=None) -> None:
        self.interests = interests
        self.shard = shard
        self.digests = digests if digests is not None else Digests()
        self.routed = 0
        self.blocks = BlockNotices(
            lambda block_id: self.send_all(self.mine(interests.block), "block_cb",
                                           encode(block_id)))

    def mine(self, clients) -> list:
        """The clients of ``clients`` this fan-out's shard carries."""
        shard = self.shard
        return [c for c in clients if shard is None or c.shard is shard]

    def objects(self, batch) -> None:
        """A subscribe-callback notice: created or changed objects, or
        removed ids."""
        if type(batch) is not list or not batch:
            return
        interests = self.interests
        if all(type(item) is str for item in batch):
            routes = interests.route_removed(batch, self.shard)
            self.digests.forget(batch)  # not noticed again by a later catch-up
        else:
            created = not any(type(o) is dict and o.get("id") == EVERY_BLOCK_OBJECT
                              for o in batch)
            interests.learn(batch)
            routes = interests.route_objects(batch, created, self.shard)
            self._remember_sent(batch, routes)
        self._send_routes(routes, Encoded(batch))

    def _remember_sent(self, batch: list, routes: dict) -> None:
        if not routes:
            return
        if any(indexes is None for indexes in routes.values()):
            self.digests.remember(batch)
            return
        sent = set()
        for indexes in routes.values():
            sent.update(indexes)
        self.digests.remember([batch[i] for i in sorted(sent)])

    def catch_up(self, objects, unseen: bool = False) -> None:
        """The objects of ``objects`` (a new link's answer) that changed
        unseen (with ``unseen``, also those never seen: an account's new
        objects) are noticed, as one batch of changed objects."""
        changed = self.digests.changed(objects, unseen)
        if changed:
            self.interests.learn(changed)
            self._send_routes(self.interests.route_objects(changed, False, self.shard),
                              Encoded(changed))

    def removed(self, ids: list) -> None:
        """Objects its clients had seen that a new link finds no more
        (removed while no link carried the subscriptions): noticed as one
        batch of removed ids, routed as the upstream's own removal notices
        (bitshares-core libraries/app/database_api.cpp ``on_objects_removed``:
        ``handle_object_changed`` with ``full_object`` false sends each
        removed object's id string), then forgotten in the digests."""
        if not ids:
            return
        routes = self.interests.route_removed(ids, self.shard)
        self.digests.forget(ids)
        self._send_routes(routes, Encoded(ids))

    def market(self, market: tuple, payload) -> None:
        """A notice of ``market`` (fills, or orders created, changed or
        removed): to each client subscribed to it."""
        self.interests.learn(payload)
        fragment = encode(payload)
        for client in self.mine(self.interests.by_market.get(market, ())):
            self.send(client, client.markets.get(market), fragment)

    def _send_routes(self, routes: dict, encoded: Encoded) -> None:
        for client, indexes in routes.items():
            self.send(client, client.subscribe_cb, encoded.payload(indexes))

    def send_all(self, clients, attribute: str, fragment) -> None:
        """``fragment`` to each of ``clients`` under its callback id named
        ``attribute`` (``"block_cb"``, ``"pending_cb"``), as :meth:`send`."""
        for client in list(clients):
            self.send(client, getattr(client, attribute), fragment)

    def send(self, client, cb, fragment) -> None:
        """``fragment`` to ``client`` under callback ``cb`` (none: nothing);
        a failing client is logged, the others still get theirs."""
        if cb is None:
            return
        self.routed += 1
        try:
            client.session.send_notice(cb, fragment)
        except Exception:
            self.log.failure("Notice to a client failed")
