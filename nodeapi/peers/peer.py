"""One followed node: its connection (a ``ClientService`` over a
:class:`~nodeapi.peers.client.PeerRpcProtocol`, reconnecting with backoff),
login, chain-id check and subscription, and the accounting of failures.
The sync loop is :class:`~nodeapi.peers.follower.Follower`; the owning
:class:`~nodeapi.peers.service.PeerService` is described in
:mod:`nodeapi.peers`.  Graphene reference: libraries/net/node.cpp
(connect, hello with the chain id, sync then follow).
"""

from twisted.internet import defer
from twisted.internet.endpoints import HostnameEndpoint
from twisted.logger import Logger

from nodeapi.errors import ChainError, StorageError
from nodeapi.peers.client import PeerRpcFactory
from nodeapi.peers.reconnect import (
    GOING_AWAY, RESTART_GRACE, QuietClientService, ReportingEndpoint)
from nodeapi.peers.errors import LoginRefused, PeerDisconnected, PeerRpcError, WrongChain
from nodeapi.peers.follower import Follower

log = Logger()

#: the callback id this node registers with ``set_block_applied_callback``.
BLOCK_APPLIED_CB = 1


class Peer:
    """One followed node.

    :param network: the owning :class:`~nodeapi.peers.service.PeerService`
        (``chain``, ``reactor``, ``clock``, ``parameters``,
        ``max_message_size``, ``apply_block``, ``mark_bad``,
        ``retry_policy``).
    :param node_address: a :class:`~nodeapi.protocol.node_address.NodeAddress`.

    :ivar address: ``"host:port"`` (``"[v6]:port"``).
    :ivar client: the ``ClientService`` (``name`` = :attr:`address`), a
        child of the PeerService while the peer is followed.
    :ivar state: ``connecting`` | ``syncing`` | ``live`` | ``disconnected`` | ``bad``.
    :ivar head_block_num: the peer's last known head block number (0 unknown).
    :ivar last_seen: reactor time (s) of the last message from the peer, or None.
    :ivar bad_reason: why the peer was marked bad, or None.
    :ivar credentials: ``(user, password)`` to log in with at connect, or None.
    :ivar sync_failures: connections in a row that opened but failed before
        a successful sync step (a fetched batch applied, or caught up); each
        one lengthens the reconnect delay (:meth:`retry_delay`).
    :ivar bad_messages: malformed messages from the peer since it last
        delivered blocks that applied; each one lengthens the delay too.
    :ivar connections: WebSocket connections to the peer opened since
        start (the metrics count the ones after the first as reconnects).
    :ivar stopping_since: clock time (s) the peer closed its connection
        with :data:`GOING_AWAY` (a planned stop or restart), until it is
        connected again; else None.
    :ivar follower: the :class:`~nodeapi.peers.follower.Follower`.
    :ivar scheme_given: False for an address written without
        ``ws://``/``wss://`` followed over RPC (``add_node`` on a node without
        a P2P node; bitshares' addresses name P2P endpoints: the first
        failure line then says, once, how to use P2P instead).
    """

    scheme_given = True
    _p2p_hint_given = False

    def __init__(self, network, node_address) -> None:
        self.network = network
        self.credentials = node_address.credentials
        self.host, self.port = node_address.host, node_address.port
        self.address = node_address.address
        self.state = "connecting"
        self.head_block_num = 0
        self.head_block_id = None
        self.last_seen = None
        self.bad_reason = None
        self.protocol = None
        self.sync_failures = 0
        self.bad_messages = 0
        self.connections = 0
        self.stopping_since = None
        self._failure_message = None
        self.follower = Follower(self)
        reactor = network.reactor
        endpoint = ReportingEndpoint(
            HostnameEndpoint(reactor, node_address.host, node_address.port),
            self._connect_failed)
        self._connect_error = None
        factory = PeerRpcFactory(self, node_address.url, network.max_message_size, reactor)
        self.client = QuietClientService(endpoint, factory, retryPolicy=self.retry_delay,
                                         clock=network.clock)
        self.client.setName(self.address)

    def retry_delay(self, attempt: int) -> float:
        """The ``ClientService`` retry policy (seconds before reconnecting).

        ``attempt`` counts failed connection attempts since the last open
        WebSocket (the ``ClientService`` resets it at each connect, so a
        peer that accepts the connection and then refuses every call would
        otherwise be retried at the first delay for ever).  The delay is
        ``network.retry_policy(attempt + sync_failures + bad_messages - 1)``
        (at least ``attempt``): failed syncs and malformed messages grow it
        like failed connects.  A failure waiting to be reported is logged
        here, once, with the delay; an unreachable peer is not within
        :data:`RESTART_GRACE` seconds of its planned stop (a restart is
        one line, :meth:`disconnected`)."""
        extra = max(self.sync_failures + self.bad_messages - 1, 0)
        delay = self.network.retry_policy(attempt + extra)
        if self._failure_message is not None:
            log.error("Sync with peer {peer} failed ({failures} in a row): {error}; "
                      "reconnecting in {delay:.1f} s", peer=self.address,
                      failures=self.sync_failures + self.bad_messages,
                      error=self._failure_message, delay=delay)
            self._failure_message = None
        elif self._connect_error is not None and not self._restarting():
            log.warn("Peer {peer} unreachable ({error}); reconnecting in {delay:.1f} s",
                     peer=self.address, error=self._connect_error, delay=delay)
        self._connect_error = None
        return delay

    def _restarting(self) -> bool:
        """True within :data:`RESTART_GRACE` seconds of a planned stop."""
        return (self.stopping_since is not None
                and self.network.clock.seconds() - self.stopping_since < RESTART_GRACE)

    def _connect_failed(self, reason: str) -> None:
        """A connection attempt failed (:class:`ReportingEndpoint`): logged
        with the delay by :meth:`retry_delay`."""
        self._connect_error = reason

    def handshake_failed(self, proto, reason: str) -> None:
        """The WebSocket opening handshake failed (the port answers, but not
        as a WebSocket server: HTTP only, another protocol): counts as a
        failed sync (longer reconnect delay) and is logged once with the
        delay (:meth:`retry_delay`)."""
        self.sync_failures += 1
        hint = ""
        if not self.scheme_given and not self._p2p_hint_given:
            self._p2p_hint_given = True  # said once; the retries' lines are short
            hint = ("; this node has no P2P node (no --p2p-endpoint, no P2P seed-node), so "
                    "an address without ws:// is followed over its WebSocket RPC: if it is "
                    "witness_node's p2p-endpoint, start this node with --p2p-endpoint or give "
                    "it as --seed-node host:port; else give ws://host:port of its rpc-endpoint")
        self._failure_message = f"not a WebSocket RPC server ({reason}){hint}"

    def report_failure(self) -> None:
        """Log a failure not yet logged by :meth:`retry_delay` (when the
        peer is stopped before a reconnect is scheduled)."""
        if self._failure_message is not None:
            log.error("Sync with peer {peer} failed ({failures} in a row): {error}",
                      peer=self.address, failures=self.sync_failures + self.bad_messages,
                      error=self._failure_message)
            self._failure_message = None

    # -- connection events (from PeerRpcProtocol) --------------------------------

    def connected(self, proto) -> None:
        """The WebSocket to the peer is open (called by
        :meth:`PeerRpcProtocol.onOpen <nodeapi.peers.client.PeerRpcProtocol.onOpen>`):
        state ``syncing``, :attr:`last_seen` now, then, without waiting:
        ``login`` with :attr:`credentials` if any (a refusal is logged and,
        as a failed login logs the connection out (docs/wire-contract.rst
        section 2), followed by ``login("", "")``, which restores the peer's
        anonymous ``*`` sets; no ``*`` entry raises ``LoginRefused``),
        ``database.get_chain_id`` (a different id raises ``WrongChain``
        and marks the peer ``bad``), ``database.set_block_applied_callback``
        (wire-contract section 5), ``database.get_dynamic_global_properties``
        for the peer's head, and the follower's sync.  A
        :class:`~nodeapi.errors.ChainError` marks the peer bad; any other
        failure counts in :attr:`sync_failures`, is logged once (see
        :meth:`failed`) and the connection aborted (the ``ClientService``
        reconnects after :meth:`retry_delay`).  Graphene reference:
        libraries/net/node.cpp ``node_impl::on_hello_message`` (a peer on
        another chain id is rejected) and its sync start after connect."""
        self.protocol = proto
        self.state = "syncing"
        self.connections += 1
        self.last_seen = self.network.reactor.seconds()
        self._subscribe(proto).addErrback(self.failed, proto)

    def disconnected(self, proto, code=None, reason=None) -> None:
        """The connection ``proto`` closed (called by
        :meth:`PeerRpcProtocol.onClose <nodeapi.peers.client.PeerRpcProtocol.onClose>`,
        cleanly or not; ``code``/``reason`` of the close, or None): if it is
        the current connection, :attr:`protocol` becomes None and the state
        ``disconnected`` (a ``bad`` peer stays ``bad``); a running sync loop
        ends at its next check.  Closes of an older connection are ignored.
        Reconnecting is the ``ClientService``'s job (unless stopped)."""
        if proto is self.protocol:
            self.protocol = None
            if self.state != "bad":
                self.state = "disconnected"
                if code == GOING_AWAY:
                    self.stopping_since = self.network.clock.seconds()
                    log.info("Peer {peer} is stopping ({code} going away: {reason}); "
                             "following it again when it is back", peer=self.address,
                             code=code, reason=reason or "no reason given")
                else:
                    log.info("Peer {peer} disconnected ({code} {reason})", peer=self.address,
                             code=code, reason=reason or "")

    def notice(self, proto, callback_id, payload: list) -> None:
        """A ``{"method": "notice", "params": [callback_id, payload]}``
        message from the peer (docs/wire-contract.rst section 5; called by
        :meth:`PeerRpcProtocol.onMessage <nodeapi.peers.client.PeerRpcProtocol.onMessage>`).
        Updates :attr:`last_seen` (reactor seconds).  For
        :data:`BLOCK_APPLIED_CB` the payload is ``[block_id]`` (40 hex
        chars): :attr:`head_block_id` becomes it, :attr:`head_block_num`
        the larger of the known head and the number in the id's first 8 hex
        digits (graphene ``block_header::num_from_id``), and the follower
        fetches what this node lacks.  Other callbacks are ignored; a
        block id that is not 40 hex digits is a bad message
        (:meth:`bad_message`).  Graphene reference: libraries/net/node.cpp
        (a peer's block inventory triggers a fetch)."""
        self.last_seen = self.network.reactor.seconds()
        if callback_id != BLOCK_APPLIED_CB or isinstance(callback_id, bool):
            return
        block_id = payload[0] if payload else None
        if not (isinstance(block_id, str) and len(block_id) == 40
                and all(c in "0123456789abcdef" for c in block_id)):
            self.bad_message(proto, f"a block-applied notice with {block_id!r}, "
                                    "not a block id")
            return
        self.head_block_id = block_id
        self.head_block_num = max(self.head_block_num, int(block_id[:8], 16))
        self.follower.sync()

    def message_too_large(self, proto, limit: int) -> None:
        """The connection closed because the peer sent a message over
        ``limit`` bytes (called by
        :meth:`PeerRpcProtocol.onClose <nodeapi.peers.client.PeerRpcProtocol.onClose>`):
        the follower shrinks its batches
        (:meth:`~nodeapi.peers.follower.Follower.reply_too_large`) and it
        counts as a bad message (:meth:`bad_message`)."""
        self.follower.reply_too_large()
        self.bad_message(proto, f"a message larger than {limit} bytes "
                                "(this node's max-message-size)")

    def bad_message(self, proto, reason: str) -> None:
        """The peer sent something that is not graphene JSON-RPC (called by
        :class:`~nodeapi.peers.client.PeerRpcProtocol`): one more
        :attr:`bad_messages`, one error line (logged by :meth:`retry_delay`
        with the reconnect delay, which grows), and the connection aborted.
        The peer is not marked bad: a broken proxy or a version mismatch may
        pass; its blocks are never taken on trust anyway."""
        self.bad_messages += 1
        self._failure_message = f"Peer {self.address} sent {reason}"
        proto.dropConnection(abort=True)

    # -- login and subscription ----------------------------------------------------

    @defer.inlineCallbacks
    def _subscribe(self, proto):
        chain = self.network.chain
        if self.credentials:  # before any other call: "*" may grant nothing
            yield self._login(proto, *self.credentials)
        chain_id = yield proto.call("database", "get_chain_id", [])
        if chain_id != chain.chain_id:
            raise WrongChain(f"Peer chain id {chain_id} differs from {chain.chain_id}")
        yield proto.call("database", "set_block_applied_callback", [BLOCK_APPLIED_CB])
        dgp = yield proto.call("database", "get_dynamic_global_properties", [])
        self.head_block_num = max(self.head_block_num, int(dgp["head_block_number"]))
        self.head_block_id = dgp["head_block_id"]
        self.stopping_since = None
        log.info("Connected to peer {peer}, head {head}", peer=self.address,
                 head=self.head_block_num)
        self.follower.sync()

    @defer.inlineCallbacks
    def _login(self, proto, user: str, password: str):
        """Log in as ``user``; when refused, log in anonymously again (the
        refusal logged the connection out, docs/wire-contract.rst section 2,
        so even the anonymous sets are gone until ``login("", "")``, which
        matches the ``*`` entry).  Raises ``LoginRefused`` when that is
        refused too."""
        if (yield proto.call(1, "login", [user, password])):
            return
        if (yield proto.call(1, "login", ["", ""])):
            log.warn("Login as {user} refused by peer {peer}; continuing anonymously",
                     user=user, peer=self.address)
            return
        raise LoginRefused(f"Login as {user} refused by peer {self.address}, and it "
                           "refuses anonymous logins too")

    def failed(self, failure, proto) -> None:
        """Errback of the subscription and of the sync loop on ``proto``.

        A closed connection needs nothing (the ``ClientService``
        reconnects); a :class:`~nodeapi.errors.ChainError` (an invalid
        block, another chain) marks the peer bad; otherwise one more
        :attr:`sync_failures` and the connection aborted: a refusal by the
        peer (``PeerRpcError``, ``LoginRefused``) or a block this node could
        not store (:class:`~nodeapi.errors.StorageError`: a full disk, a
        read-only block log) is logged as one line with the reconnect delay
        (:meth:`retry_delay`), anything else (a reply of the wrong shape)
        with its traceback."""
        if isinstance(failure.value, defer.FirstError):
            failure = failure.value.subFailure
        if failure.check(PeerDisconnected):
            return
        if failure.check(ChainError):
            self.network.mark_bad(self, str(failure.value))
            return
        self.sync_failures += 1
        if failure.check(PeerRpcError, LoginRefused):  # the peer said no: one line
            self._failure_message = failure.getErrorMessage()
        elif failure.check(StorageError):  # this node cannot store: one line, no traceback
            self._failure_message = f"cannot store its blocks: {failure.getErrorMessage()}"
        else:  # unexpected (a malformed reply, a bug): keep the traceback
            log.failure("Sync with peer {peer} failed ({failures} in a row)", failure,
                        peer=self.address, failures=self.sync_failures)
        if proto is self.protocol:
            proto.dropConnection(abort=True)  # retry_delay reports the failure
        else:
            self.report_failure()

    def describe(self) -> dict:
        """``{"addr", "state", "head_block_num", "head_block_id", "last_seen",
        "bad_reason", "reconnects"}`` (last_seen in reactor seconds, or None;
        reconnects: connections opened after the first)."""
        return {"addr": self.address, "state": self.state,
                "head_block_num": self.head_block_num, "head_block_id": self.head_block_id,
                "last_seen": self.last_seen, "bad_reason": self.bad_reason,
                "reconnects": max(self.connections - 1, 0)}
