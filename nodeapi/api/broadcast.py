"""The network_broadcast API set (login accessor ``network_broadcast``,
access name ``network_broadcast_api``): put transactions and blocks on the
chain, or, on a follower, pass them to the node it follows.

Graphene reference: bitshares-core libraries/app/api.cpp
``network_broadcast_api`` (``broadcast_transaction``,
``broadcast_transaction_with_callback``,
``broadcast_transaction_synchronous``, ``broadcast_block``,
``on_applied_block``); wire-contract sections 5 and 6.  A broadcast's way,
its confirmations and its budget item: docs/DESIGN.rst, "A transaction
broadcast on a node".
"""

from contextlib import contextmanager

from twisted.internet import defer
from twisted.logger import Logger

from nodeapi.api.arguments import require_trx
from nodeapi.api.base import ApiSet, api_function
from nodeapi.chain.errors import MalformedBlock
from nodeapi.chain.validation import received_transaction
from nodeapi.protocol.times import parse_time
from nodeapi.errors import ApiError, ChainError, NodeAPIError, ProtocolError
from nodeapi.protocol.transaction import transaction_id
from nodeapi.protocol.wire import from_wire, strip_block_info

_MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError, AssertionError,
              OverflowError)


class _Waiting:
    """Who waits for one transaction id: notice callback ids and Deferreds."""

    __slots__ = ("expiration", "callbacks", "deferreds")

    def __init__(self, expiration: int) -> None:
        self.expiration = expiration
        self.callbacks: list = []
        self.deferreds: list = []


@contextmanager
def malformed_as(error: type, what: str):
    """Run the reading and pushing of a client's ``what`` (``"transaction"``,
    ``"block"``): a :class:`ChainError` (the chain refused it;
    ``InvalidSignature`` and ``InvalidOperation``, an operation's
    ``validate()`` or evaluator assert, are also ProtocolErrors), one of
    fc's own exceptions (``what``: a bad cast, sent as bitshares-core
    sends it) and any other
    :class:`NodeAPIError` pass; another ProtocolError (fc serialization
    rejected a field) or a Python error of a wrongly shaped value
    (``_MALFORMED``) becomes ``error("Malformed <what>: ...")``."""
    try:
        yield
    except ChainError:
        raise
    except ProtocolError as exc:
        if exc.what:
            raise
        raise error(f"Malformed {what}: {exc}") from None
    except NodeAPIError:
        raise
    except _MALFORMED as exc:
        raise error(f"Malformed {what}: {type(exc).__name__}: {exc}") from None


class NetworkBroadcastApi(ApiSet):
    """graphene ``network_broadcast_api`` over ``node.chain``; on a
    follower (no witness plugin, following other nodes) every call is
    forwarded to the node it follows (``node.peers.forward``)."""

    name = "network_broadcast"
    log = Logger()

    def __init__(self, node, session) -> None:
        super().__init__(node, session)
        self._waiting: dict = {}
        self._observer = None
        self._closed = False

    # -- helpers -----------------------------------------------------------------

    def _push(self, trx) -> tuple:
        """Validate and queue ``trx``; relay it; return ``(trx id, expiration
        seconds)``."""
        trx = from_wire(require_trx(trx))
        chain = self.node.chain
        with malformed_as(ApiError, "transaction"):
            # the chain reads it as fc does (nodeapi.chain.validation.
            # received_transaction): relayed in that form, same bytes
            processed = chain.push_transaction(trx)
            trx = {k: v for k, v in processed.items() if k != "operation_results"}
            trx_id = transaction_id(trx, chain.address_prefix)
            expiration = parse_time(trx["expiration"])
        self.log.debug("Accepted transaction {trx_id}", trx_id=trx_id)
        peers = self.node.peers
        if peers is not None:
            d = peers.relay_transaction(trx)
            d.addErrback(lambda f: self.log.failure("Relaying {trx_id} failed", f,
                                                    trx_id=trx_id))
        return trx_id, expiration

    def _forwarder(self):
        """The peers service when this node forwards this set's calls (a
        follower: no witness plugin, and it follows at least one node),
        else None."""
        peers = self.node.peers
        if peers is None or self.node.plugins.get("witness") is not None or not peers.follows_nodes:
            return None
        return peers

    def _identify(self, trx: dict) -> tuple:
        """``(trx id, expiration seconds)`` of ``trx`` read as the chain
        reads it (numeric-string tags and integers: the id the block will
        list), without validating it against the state; raises what
        :func:`~nodeapi.chain.validation.received_transaction` raises."""
        chain = self.node.chain
        trx = received_transaction(from_wire(trx), chain.address_prefix,
                                   chain.state.objects["2.0.0"]["parameters"])
        return transaction_id(trx, chain.address_prefix), parse_time(trx["expiration"])

    async def _forward_and_wait(self, peers, trx: dict, waiter) -> None:
        """Forward ``trx`` upstream; ``waiter`` (a notice callback id, or a
        Deferred) is registered for the transaction's inclusion first, so a
        block arriving with the answer is not missed, and removed again when
        the upstream refuses (its error propagates).  A callback id holds
        one budget item, taken by the caller: given back here when the
        callback does not stay waiting."""
        callback = not isinstance(waiter, defer.Deferred)
        try:
            trx_id, expiration = self._identify(trx)
        except (NodeAPIError, *_MALFORMED) as exc:  # the upstream will say why
            if callback:
                self.session.budget.give_back()
            await peers.forward("network_broadcast", "broadcast_transaction", [trx])
            raise ApiError(f"Malformed transaction: the upstream accepted it but this node "
                           f"cannot read it to follow it: {exc}") from None
        try:
            entry = self._wait_for(trx_id, expiration)
        except ApiError:  # the connection closed meanwhile
            if callback:
                self.session.budget.give_back()
            raise
        waiters = entry.callbacks if callback else entry.deferreds
        waiters.append(waiter)
        try:
            await peers.forward("network_broadcast", "broadcast_transaction", [trx])
        except Exception:
            waiters.remove(waiter)
            if self._waiting.get(trx_id) is entry:  # not confirmed, expired or closed
                if callback:
                    self.session.budget.give_back()
                if not entry.callbacks and not entry.deferreds:
                    del self._waiting[trx_id]
            raise

    def _wait_for(self, trx_id: str, expiration: int) -> _Waiting:
        if self._closed:
            raise ApiError("connection closed")
        if self._observer is None:
            self._observer = self._on_block
            self.node.chain.add_block_observer(self._observer)
            self.session.on_close(self.close)
        entry = self._waiting.get(trx_id)
        if entry is None:
            entry = self._waiting[trx_id] = _Waiting(expiration)
        return entry

    def _on_block(self, applied) -> None:
        """Chain block observer: confirm included transactions, fail expired
        synchronous waits."""
        if not self._waiting:
            return
        try:
            prefix = self.node.chain.address_prefix
            for trx_num, trx in enumerate(applied.block["transactions"]):
                trx_id = transaction_id(trx, prefix)
                entry = self._waiting.pop(trx_id, None)
                if entry is not None:
                    self._release(entry)
                    self._confirm(entry, trx_id, applied, trx_num, trx)
            for trx_id, entry in list(self._waiting.items()):
                if entry.expiration <= applied.timestamp:
                    del self._waiting[trx_id]
                    self._release(entry)
                    self._fail(entry, ApiError(
                        f"Transaction {trx_id} expired without being included in a block"))
        except Exception:
            self.log.failure("Broadcast confirmations for block {num} failed",
                             num=applied.block_num)

    def _confirm(self, entry: _Waiting, trx_id: str, applied, trx_num: int, trx: dict) -> None:
        results = sorted((op.op_in_trx, op.result) for op in applied.operations
                         if op.trx_in_block == trx_num and not op.is_virtual)
        confirmation = {"id": trx_id, "block_num": applied.block_num, "trx_num": trx_num,
                        "trx": dict(trx, operation_results=[r for _, r in results])}
        for cb in entry.callbacks:
            self.session.send_notice(cb, confirmation)
        for d in entry.deferreds:
            d.callback(confirmation)

    def _release(self, entry: _Waiting) -> None:
        """``entry`` waits no longer: its callbacks' budget items are given back."""
        if entry.callbacks:
            self.session.budget.give_back(len(entry.callbacks))

    @staticmethod
    def _fail(entry: _Waiting, error: Exception) -> None:
        for d in entry.deferreds:
            d.errback(error)

    # -- API functions -------------------------------------------------------------

    @api_function
    def broadcast_transaction(self, trx):
        """Validate ``trx`` (a signed transaction), queue it for the next
        block and relay it to the peers; returns null.  Raises the chain's
        error when it is refused.  On a follower: forwarded, a Deferred
        firing with the upstream's answer (its error object unchanged;
        :class:`~nodeapi.peers.errors.NoUpstream` without one)."""
        peers = self._forwarder()
        if peers is not None:
            return peers.forward("network_broadcast", "broadcast_transaction",
                                 [require_trx(trx)])
        self._push(trx)
        return None

    @api_function
    def broadcast_transaction_with_callback(self, cb: int, trx):
        """Like :meth:`broadcast_transaction`; when a block includes the
        transaction, notice ``cb`` with ``{id, block_num, trx_num, trx}``
        (WebSocket only).  On a follower: forwarded (a Deferred firing with
        null once the upstream accepted it), the notice sent when the
        upstream's block reaches this node."""
        if not getattr(self.session, "websocket", False):
            raise ApiError("callbacks need a WebSocket connection")
        if self._closed:
            raise ApiError("connection closed")
        peers = self._forwarder()
        if peers is not None:
            trx = require_trx(trx)
            self.session.budget.take()
            return defer.Deferred.fromCoroutine(self._forward_and_wait(peers, trx, cb))
        self.session.budget.take()
        try:
            trx_id, expiration = self._push(trx)
            self._wait_for(trx_id, expiration).callbacks.append(cb)
        except BaseException:
            self.session.budget.give_back()
            raise
        return None

    @api_function
    def broadcast_transaction_synchronous(self, trx):
        """Like :meth:`broadcast_transaction`, answering (a Deferred) with
        ``{id, block_num, trx_num, trx}`` once a block includes the
        transaction; fails if it expires first or the connection closes.
        On a follower: forwarded, then confirmed from the upstream's block
        as it reaches this node."""
        if self._closed:
            raise ApiError("connection closed")
        peers = self._forwarder()
        if peers is not None:
            d = defer.Deferred()
            forwarded = defer.Deferred.fromCoroutine(
                self._forward_and_wait(peers, require_trx(trx), d))
            forwarded.addErrback(lambda failure: None if d.called else d.errback(failure))
            return d
        trx_id, expiration = self._push(trx)
        d = defer.Deferred()
        self._wait_for(trx_id, expiration).deferreds.append(d)
        return d

    @api_function
    def broadcast_block(self, block):
        """Validate and apply a signed block (``chain.push_block``: it must
        extend the head, be signed by the scheduled witness, ...); returns
        null.  ``block_id``/``signing_key``/``transaction_ids`` fields are
        ignored.  A block that is not a well-formed signed block raises
        :class:`~nodeapi.chain.errors.MalformedBlock` ("Malformed block:
        ..."), any other refusal the chain's error.  On a follower:
        forwarded; the block comes back with the upstream's next notice."""
        peers = self._forwarder()
        if peers is not None:
            return peers.forward("network_broadcast", "broadcast_block", [block])
        with malformed_as(MalformedBlock, "block"):
            self.node.chain.push_block(strip_block_info(block) if isinstance(block, dict)
                                       else block)
        return None

    def close(self) -> None:
        """Connection closed: stop observing blocks; waiting synchronous
        broadcasts fail with ``connection closed``."""
        self._closed = True
        if self._observer is not None:
            self.node.chain.remove_block_observer(self._observer)
            self._observer = None
        waiting, self._waiting = self._waiting, {}
        for entry in waiting.values():
            self._release(entry)
            self._fail(entry, ApiError("connection closed"))
