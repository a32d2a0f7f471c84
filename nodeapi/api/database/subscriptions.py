"""database API, graphene section "Subscriptions": callbacks and object
subscriptions of one connection (:class:`Subscriptions`, a section of
:class:`nodeapi.api.database.DatabaseApi` that the other sections are given
to subscribe what they fetch), wire-contract section 5
(docs/wire-contract.rst).

Graphene reference: bitshares-core libraries/app/database_api.cpp
(``set_subscribe_callback``, ``set_auto_subscription``,
``set_pending_transaction_callback``, ``set_block_applied_callback``,
``cancel_all_subscriptions``, ``handle_object_changed``,
``on_objects_new/changed/removed``, ``on_applied_block``).

Semantics:

- A callback is the integer a client chose; notices go through
  ``session.send_notice(cb, payload)`` and only on WebSocket sessions.
- While a subscribe callback is set, objects fetched with ``get_objects``,
  ``get_accounts``, ``get_assets``, ``get_full_accounts``, ``lookup_accounts``
  (limit 1) are subscribed, unless the call's ``subscribe`` argument is false
  or ``set_auto_subscription(false)`` was called and ``subscribe`` is not true.
  ``get_full_accounts`` also subscribes the account itself, so changes to the
  objects belonging to it (balances, statistics, orders) are notified.
- After each applied block (``chain.changed_objects_of_last_block()``) up to
  three notices are sent, like graphene's three signals: created objects in
  full, changed objects in full, removed objects as id strings.  A created or
  changed object is sent if it is subscribed or belongs to a subscribed
  account; with ``notify_remove_create`` every created and removed object is
  sent.  A removed object is sent if it was subscribed, or if an operation of
  the block impacted a subscribed account (graphene decides on the accounts of
  the whole batch); one created and removed by the same block is not
  notified.  Created objects are told apart by their instance number:
  at or above the counter the previous block left.  The block-applied notice
  (payload: the block id, hex) comes first.
- The tests of who receives what (an object's accounts, a subscribed id,
  a forced notice) are :mod:`nodeapi.api.database.notice_rules`, shared
  with the gateway; this node passes a created or changed object's own
  accounts where bitshares-core passes the whole batch's.
- At most :data:`MAX_SUBSCRIBED_OBJECTS` ids per connection are remembered
  (graphene's bloom filter is sized for 10,000); further ones are not.
- ``cancel_all_subscriptions`` and the end of the connection also end what
  was registered with :meth:`Subscriptions.cancel_also` (the market
  subscriptions, :mod:`nodeapi.api.database.markets.subscriptions`).
"""

from twisted.logger import Logger

from nodeapi.protocol.ids import kind_and_instance
from nodeapi.api.arguments import id_key, optional_bool
from nodeapi.api.base import Section, api_function
from nodeapi.api.database.notice_rules import object_wanted, relevant_accounts
from nodeapi.errors import ApiError

MAX_SUBSCRIBED_OBJECTS = 10000


class Subscriptions(Section):
    """Callbacks and subscriptions of one connection, over ``node.chain``,
    noticed through ``session`` (:class:`nodeapi.api.base.Session`)."""

    log = Logger()

    def __init__(self, node, session) -> None:
        super().__init__(node)
        self.session = session
        self._subscribe_cb = None
        self._notify_remove_create = False
        self._auto_subscription = True
        self._subscribed_ids: set = set()
        self._subscribed_accounts: set = set()
        self._pending_cb = None
        self._block_cb = None
        self._block_observer = None
        self._pending_observer = None
        self._counters: dict = {}
        self._closed = False
        self._close_hooked = False
        self._cancellers: list = []

    # -- what the other sections use ------------------------------------------------

    def whether_to_subscribe(self, subscribe) -> bool:
        """graphene ``get_whether_to_subscribe``: whether a getter called
        with ``subscribe`` (true, false or None: left out) subscribes what
        it finds."""
        if self._subscribe_cb is None:
            return False
        if subscribe is not None:
            return bool(subscribe)
        return self._auto_subscription

    def subscribe_to_item(self, oid: str) -> None:
        """Subscribe object ``oid`` (while a subscribe callback is set and
        fewer than :data:`MAX_SUBSCRIBED_OBJECTS` are)."""
        if self._subscribe_cb is not None and len(self._subscribed_ids) < MAX_SUBSCRIBED_OBJECTS:
            self._subscribed_ids.add(oid)

    def subscribe_to_account(self, account_id: str, limit: int) -> None:
        """Subscribe account ``account_id`` and the objects belonging to it
        (``get_full_accounts``), unless ``limit`` accounts are already."""
        if len(self._subscribed_accounts) < limit:
            self._subscribed_accounts.add(account_id)
            self.subscribe_to_item(account_id)

    def callback_id(self, cb) -> int:
        """``cb``, a callback id a client chose, once this connection can
        take notices.

        :raises ApiError: not a WebSocket connection, or it closed."""
        if not getattr(self.session, "websocket", False):
            raise ApiError("callbacks need a WebSocket connection")
        if self._closed:
            raise ApiError("connection closed")
        return cb

    def hook_close(self) -> None:
        """Have :meth:`close` run when the connection closes (once)."""
        if not self._close_hooked:
            self._close_hooked = True
            self.session.on_close(self.close)

    def cancel_also(self, cancel) -> None:
        """Run ``cancel()`` on ``cancel_all_subscriptions`` and on
        :meth:`close` (other subscriptions of the connection)."""
        self._cancellers.append(cancel)

    # -- API functions -----------------------------------------------------------

    @api_function
    def set_subscribe_callback(self, cb: int, notify_remove_create: bool = False):
        """Set the subscribe callback (replacing any previous one and
        forgetting all subscriptions).  ``notify_remove_create`` true also
        notifies every created and removed object; it needs the
        ``enable-subscribe-to-all`` option."""
        cb = self.callback_id(cb)
        notify = optional_bool(notify_remove_create, "notify_remove_create")
        if notify and not getattr(self.node, "enable_subscribe_to_all", False):
            raise ApiError("Subscribing to universal object creation and removal is "
                           "disallowed in this server.")
        self._reset_subscriptions()
        self._subscribe_cb = cb
        self._notify_remove_create = bool(notify)
        self._counters = dict(self.chain.state.next_instance)
        self._observe_blocks()
        return None

    @api_function
    def set_auto_subscription(self, enable: bool):
        """Whether getters subscribe when their ``subscribe`` argument is
        left out (default true)."""
        self._auto_subscription = enable
        return None

    @api_function
    def set_pending_transaction_callback(self, cb: int):
        """Notify ``cb`` with each transaction the node accepts into its
        pending set (payload: the signed transaction)."""
        self._pending_cb = self.callback_id(cb)
        if self._pending_observer is None:
            self._pending_observer = self._on_pending
            self.chain.add_pending_observer(self._pending_observer)
            self.hook_close()
        return None

    @api_function
    def set_block_applied_callback(self, cb: int):
        """Notify ``cb`` after each applied block (payload: its id, hex)."""
        self._block_cb = self.callback_id(cb)
        self._observe_blocks()
        return None

    @api_function
    def cancel_all_subscriptions(self):
        """Drop the subscribe callback, every object subscription and every
        market subscription (graphene ``cancel_all_subscriptions(true,
        true)``); the block and pending callbacks stay."""
        self._reset_subscriptions()
        for cancel in self._cancellers:
            cancel()
        return None

    # -- observers ---------------------------------------------------------------

    def _reset_subscriptions(self) -> None:
        self._subscribe_cb = None
        self._notify_remove_create = False
        self._subscribed_ids = set()
        self._subscribed_accounts = set()

    def _observe_blocks(self) -> None:
        if self._block_observer is None:
            self._block_observer = self._on_block
            self.chain.add_block_observer(self._block_observer)
            self.hook_close()

    def _on_pending(self, trx: dict) -> None:
        if self._pending_cb is None:
            return
        try:
            self.session.send_notice(self._pending_cb, trx)
        except Exception:
            self.log.failure("Pending transaction notice failed")

    def _on_block(self, applied) -> None:
        try:
            if self._block_cb is not None:
                self.session.send_notice(self._block_cb, applied.block_id)
            if self._subscribe_cb is not None:
                self._notify_objects(applied)
        except Exception:
            self.log.failure("Block {num} notices failed", num=applied.block_num)
        finally:
            self._counters = dict(self.chain.state.next_instance)

    def _is_new(self, oid: str) -> bool:
        space_type, instance = kind_and_instance(oid)
        return instance >= self._counters.get(space_type, 0)

    def _notify_objects(self, applied) -> None:
        objects = self.chain.state.objects
        accounts = self._subscribed_accounts
        everything = self._notify_remove_create
        impacted = {a for op in applied.operations for a in op.impacted}
        created, changed, removed = [], [], []
        for oid in sorted(self.chain.changed_objects_of_last_block(), key=id_key):
            obj = objects.get(oid)
            if obj is None:
                # created and removed within the block: never existed at a head
                if not self._is_new(oid) and object_wanted(
                        oid, everything, self._subscribed_ids, accounts, impacted):
                    removed.append(oid)
                self._subscribed_ids.discard(oid)
                continue
            new = self._is_new(oid)
            if object_wanted(oid, new and everything, self._subscribed_ids, accounts,
                             relevant_accounts(obj) if accounts else ()):
                (created if new else changed).append(obj)
        for batch in (created, changed, removed):
            if batch and self._subscribe_cb is not None:
                self.session.send_notice(self._subscribe_cb, batch)

    def close(self) -> None:
        """Connection closed: remove the chain observers, drop callbacks and
        the other subscriptions (:meth:`cancel_also`)."""
        self._closed = True
        self._reset_subscriptions()
        for cancel in self._cancellers:
            cancel()
        self._pending_cb = self._block_cb = None
        if self._block_observer is not None:
            self.chain.remove_block_observer(self._block_observer)
            self._block_observer = None
        if self._pending_observer is not None:
            self.chain.remove_pending_observer(self._pending_observer)
            self._pending_observer = None
