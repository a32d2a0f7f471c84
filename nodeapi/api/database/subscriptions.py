"""database API, graphene section "Subscriptions": callbacks and object
subscriptions of one connection (:class:`Subscriptions`, a section of
:class:`nodeapi.api.database.DatabaseApi` that the other sections are given
to subscribe what they fetch), wire-contract section 5
(docs/wire-contract.rst).

Graphene reference: bitshares-core libraries/app/database_api.cpp
(``set_subscribe_callback``, ``set_auto_subscription``,
``set_pending_transaction_callback``, ``set_block_applied_callback``,
``cancel_all_subscriptions``, ``handle_object_changed``,
``on_objects_new/changed/removed``, ``on_applied_block``).  What is
subscribed, and which notices a block sends: docs/DESIGN.rst, "An object
subscription on a node".
"""

from twisted.logger import Logger

from nodeapi.api.arguments import optional_bool
from nodeapi.api.base import Section, api_function
from nodeapi.api.database.changes import block_changes, select_objects, state_changes
from nodeapi.errors import ApiError

#: object ids remembered per connection (graphene's bloom filter is sized for 10,000)
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
        fewer than :data:`MAX_SUBSCRIBED_OBJECTS` are).

        :raises SubscriptionLimitExceeded: the session's budget has no room
            (:mod:`nodeapi.api.budget`)."""
        ids = self._subscribed_ids
        if (self._subscribe_cb is not None and oid not in ids
                and len(ids) < MAX_SUBSCRIBED_OBJECTS):
            self.session.budget.take()
            ids.add(oid)

    def subscribe_to_account(self, account_id: str, limit: int) -> None:
        """Subscribe account ``account_id`` and the objects belonging to it
        (``get_full_accounts``), unless ``limit`` accounts are already."""
        if len(self._subscribed_accounts) < limit:
            self.subscribe_to_item(account_id)  # first: it may refuse (budget)
            self._subscribed_accounts.add(account_id)

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
        self.session.budget.take()
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
        cb = self.callback_id(cb)
        if self._pending_cb is None:
            self.session.budget.take()
        self._pending_cb = cb
        if self._pending_observer is None:
            self._pending_observer = self._on_pending
            self.chain.add_pending_observer(self._pending_observer)
            self.hook_close()
        return None

    @api_function
    def set_block_applied_callback(self, cb: int):
        """Notify ``cb`` after each applied block (payload: its id, hex);
        the connection counts in ``node.block_subscribers`` until it closes
        (following nodes and wallets; the metrics and the status page)."""
        cb = self.callback_id(cb)
        if self._block_cb is None:
            self.session.budget.take()
            self.node.block_subscribers += 1
        self._block_cb = cb
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
        """Forget the subscribe callback and the subscribed objects, giving
        their items back to the budget."""
        held = len(self._subscribed_ids) + (self._subscribe_cb is not None)
        if held:
            self.session.budget.give_back(held)
        self._subscribe_cb = None
        self._notify_remove_create = False
        self._subscribed_ids = set()
        self._subscribed_accounts = set()

    def _observe_blocks(self) -> None:
        if self._block_observer is None:
            self._block_observer = self._on_block
            self.chain.add_block_observer(self._block_observer)
            self.chain.add_change_observer(self._on_state_change)
            self.hook_close()

    def _on_pending(self, trx: dict) -> None:
        if self._pending_cb is None:
            return
        try:
            self.session.send_notice(self._pending_cb, trx)
        except Exception:
            self.log.failure("Pending transaction notice failed")

    def _on_block(self, applied) -> None:
        changes = block_changes(self.node.api_answers, self.chain, applied)
        try:
            notices = []
            if self._block_cb is not None:
                notices.append((self._block_cb, applied.block_id))
            if self._subscribe_cb is not None:
                self._notify_objects(changes, notices)
            if notices:
                self.session.send_notices(notices)
        except Exception:
            self.log.failure("Block {num} notices failed", num=applied.block_num)
        finally:
            self._counters = changes.counters  # shared, never changed

    def _on_state_change(self, ids: set) -> None:
        """Objects changed outside a block (a debug update, the devnet's
        set_balance or revert): notified as the objects of a block are,
        without a block-applied notice."""
        if self._subscribe_cb is None:
            return
        changes = state_changes(self.chain, ids)
        try:
            notices = []
            self._notify_objects(changes, notices)
            if notices:
                self.session.send_notices(notices)
        except Exception:
            self.log.failure("State change notices failed")
        finally:
            self._counters = changes.counters

    def _notify_objects(self, changes, notices: list) -> None:
        """Add to ``notices`` those :func:`select_objects` picks for this
        connection, each a list :meth:`BlockChanges.batch` shares with the
        other connections sent the same."""
        subscribed = self._subscribed_ids
        created, changed, removed = select_objects(
            changes, self._counters, subscribed, self._subscribed_accounts,
            self._notify_remove_create)
        if subscribed:
            for oid, obj in changes.changed:
                if obj is None and oid in subscribed:
                    subscribed.discard(oid)
                    self.session.budget.give_back()
        cb = self._subscribe_cb
        for kind, ids in (("objects", created), ("objects", changed), ("ids", removed)):
            if ids:
                notices.append((cb, changes.batch(kind, ids)))

    def close(self) -> None:
        """Connection closed: remove the chain observers, drop callbacks and
        the other subscriptions (:meth:`cancel_also`)."""
        self._closed = True
        self._reset_subscriptions()
        for cancel in self._cancellers:
            cancel()
        callbacks = (self._pending_cb is not None) + (self._block_cb is not None)
        if callbacks:
            self.session.budget.give_back(callbacks)
        if self._block_cb is not None:
            self.node.block_subscribers -= 1
        self._pending_cb = self._block_cb = None
        if self._block_observer is not None:
            self.chain.remove_block_observer(self._block_observer)
            self.chain.remove_change_observer(self._on_state_change)
            self._block_observer = None
        if self._pending_observer is not None:
            self.chain.remove_pending_observer(self._pending_observer)
            self._pending_observer = None
