"""One followed node: its connection (``ClientService`` with backoff over a
:class:`~nodeapi.peers_client.PeerRpcProtocol`) and its sync loop, plus the
address and error helpers of the network node (the wire helpers
:func:`~nodeapi.peers_client.strip_block_info` and ``wire_ints`` live in
:mod:`nodeapi.peers_client` and are re-exported here).  The owning
:class:`~nodeapi.peers.PeerService` and the overall flow are described in
:mod:`nodeapi.peers`.  Graphene reference: libraries/net/node.cpp (fetch the
blocks after our head in batches, then follow).
"""

import re

from twisted.application.internet import ClientService
from twisted.internet import defer, task
from twisted.internet.endpoints import clientFromString
from twisted.logger import Logger

from nodeapi.chain.errors import MalformedBlock  # noqa: F401  (re-exported by peers)
from nodeapi.errors import ApiError, ChainError
from nodeapi.peers_client import (  # noqa: F401  (wire helpers re-exported)
    PeerDisconnected, PeerRpcError, PeerRpcFactory, strip_block_info, wire_ints)

log = Logger()

APPLY_SLICE = 50  # blocks applied between returns to the reactor
#: get_block calls pipelined at once on the fallback path (below the default
#: ``max-calls-in-flight`` of 100 of a nodeapi peer).
GET_BLOCK_WINDOW = 50
#: graphene's / nodeapi's answer to a get_blocks call over the peer's api limit.
_LIMIT = re.compile(r"limit can not be greater than (\d+)")


BLOCK_APPLIED_CB = 1
DEFAULT_PARAMETERS = {
    "sync_batch_size": 100,
    "reconnect_initial_delay": 1.0,
    "reconnect_max_delay": 60.0,
    "reconnect_factor": 1.5,
    "reconnect_jitter": 1.0,
}


class InvalidPeerAddress(ApiError):
    """A peer address must be "host:port" with a port number from 1 to 65535."""

    name = "invalid_peer_address"


class InvalidNodeParameter(ApiError):
    """An advanced node parameter is unknown or has a bad value.

    Raised by :meth:`~nodeapi.peers.PeerService.set_advanced_node_parameters`
    (graphene network_node_api ``set_advanced_node_parameters``).
    """

    name = "invalid_node_parameter"


class PeerUnreachable(ApiError):
    """The first connection attempt to the peer failed; retries continue."""

    name = "peer_unreachable"


class LoginRefused(ApiError):
    """The peer refused both the configured credentials and an anonymous
    login (its api-access file has no ``*`` entry): this node may call
    nothing there.  Logged as one line per attempt; reconnects back off."""

    name = "login_refused"


class WrongChain(ChainError):
    """The peer serves a different chain (its chain id differs).

    Raised while subscribing to a peer; the peer is marked ``bad``
    (graphene libraries/net/node.cpp rejects a hello with another chain id).
    """

    name = "wrong_chain"


def split_credentials(address: str) -> tuple:
    """``"user:password@host:port"`` -> ``((user, password), "host:port")``;
    without ``@`` -> ``(None, address)`` (node-rpc-access.md: credentials
    in the WebSocket address log in at connect)."""
    if isinstance(address, str) and "@" in address:
        creds, _, rest = address.rpartition("@")
        user, _, password = creds.partition(":")
        return (user, password), rest
    return None, address


def parse_address(host_port: str) -> tuple:
    """``"host:port"`` -> ``(host, port)``; raises :class:`InvalidPeerAddress`."""
    if not isinstance(host_port, str) or ":" not in host_port:
        raise InvalidPeerAddress(f"Peer address {host_port!r} is not host:port")
    host, _, port = host_port.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidPeerAddress(f"Peer address {host_port!r} is not host:port "
                                 "with a port from 1 to 65535")
    return host, int(port)


class Peer:
    """One followed node.

    :ivar address: ``"host:port"``.
    :ivar state: ``connecting`` | ``syncing`` | ``live`` | ``disconnected`` | ``bad``.
    :ivar head_block_num: the peer's last known head block number (0 unknown).
    :ivar last_seen: reactor time (s) of the last message from the peer, or None.
    :ivar bad_reason: why the peer was marked bad, or None.
    :ivar credentials: ``(user, password)`` to log in with at connect, or None.
    :ivar sync_failures: connections in a row that opened but failed before
        a successful sync step (a fetched batch applied, or caught up); each
        one lengthens the reconnect delay (:meth:`retry_delay`).
    """

    def __init__(self, network, host: str, port: int, path: str = "/",
                 credentials=None) -> None:
        self.network = network
        self.credentials = credentials
        self.host, self.port = host, port
        self.address = f"{host}:{port}"
        self.state = "connecting"
        self.head_block_num = 0
        self.head_block_id = None
        self.last_seen = None
        self.bad_reason = None
        self.use_get_block = False
        self.batch_limit = None  # the peer's get_blocks limit, once it told us
        self.protocol = None
        self._syncing = False
        self._again = False
        self.sync_failures = 0
        self._failure_message = None
        reactor = network.reactor
        endpoint = clientFromString(reactor, f"tcp:host={host}:port={port}")
        self.client = ClientService(endpoint, PeerRpcFactory(self, path),
                                    retryPolicy=self.retry_delay, clock=network.clock,
                                    prepareConnection=lambda proto: proto.opened)

    def retry_delay(self, attempt: int) -> float:
        """The ``ClientService`` retry policy (seconds before reconnecting).

        ``attempt`` counts failed connection attempts since the last open
        WebSocket (the ``ClientService`` resets it at each connect, so a
        peer that accepts the connection and then refuses every call would
        otherwise be retried at the first delay for ever).  The delay is
        ``network.retry_policy(attempt + sync_failures - 1)`` (at least
        ``attempt``): consecutive failed syncs grow it like failed
        connects, and only a successful sync step resets it.  A sync
        failure waiting to be reported is logged here, once, with the
        delay."""
        delay = self.network.retry_policy(attempt + max(self.sync_failures - 1, 0))
        if self._failure_message is not None:
            log.error("Sync with peer {peer} failed ({failures} in a row): {error}; "
                      "reconnecting in {delay:.1f} s", peer=self.address,
                      failures=self.sync_failures, error=self._failure_message,
                      delay=delay)
            self._failure_message = None
        return delay

    # -- connection events (from PeerRpcProtocol) --------------------------------

    def start(self) -> None:
        """Start following: clear :attr:`bad_reason`, set state
        ``connecting`` and start the ``ClientService``, which connects to
        ``tcp:host:port`` and, after each lost or failed connection,
        reconnects after :meth:`retry_delay` seconds (the ``reconnect_*``
        node parameters, on ``network.clock``) until :meth:`stop`.  Returns at
        once; :meth:`connected` runs when the WebSocket is open.  Called by
        :class:`~nodeapi.peers.PeerService` for a new address and for a
        ``bad`` peer named again by ``add_node``.  Graphene reference:
        libraries/net/node.cpp ``node_impl::connect_to_endpoint`` /
        ``add_node`` (keep trying the peers one was given)."""
        self.bad_reason = None
        self.state = "connecting"
        self.client.startService()

    def stop(self) -> defer.Deferred:
        """Stop the ``ClientService``: cancel a pending connection attempt or
        reconnect delay, and close an open connection (then
        :meth:`disconnected` runs).  The Deferred fires with None once the
        connection is closed and no reconnect is scheduled; it never fails.
        The state is not set here: closing an open connection runs
        :meth:`disconnected` (``disconnected``, or ``bad`` kept).  A sync
        failure not yet reported (see :meth:`retry_delay`) is logged."""
        self._report_failure()
        return self.client.stopService()

    def _report_failure(self) -> None:
        """Log a sync failure not yet logged by :meth:`retry_delay`."""
        if self._failure_message is not None:
            log.error("Sync with peer {peer} failed ({failures} in a row): {error}",
                      peer=self.address, failures=self.sync_failures,
                      error=self._failure_message)
            self._failure_message = None

    def connected(self, proto) -> None:
        """The WebSocket to the peer is open (called by
        :meth:`PeerRpcProtocol.onOpen <nodeapi.peers_client.PeerRpcProtocol.onOpen>`):
        state ``syncing``, :attr:`last_seen` now, then, without waiting:
        ``login`` with :attr:`credentials` if any (a refusal is logged and,
        as a failed login logs the connection out (wire-contract.md section
        2), followed by ``login("", "")``, which restores the peer's
        anonymous ``*`` sets; no ``*`` entry raises :class:`LoginRefused`),
        ``database.get_chain_id`` (a different id raises :class:`WrongChain`
        and marks the peer ``bad``),
        ``database.set_block_applied_callback`` (wire-contract.md section 5),
        ``database.get_dynamic_global_properties`` for the peer's head, and
        :meth:`sync`.  A :class:`~nodeapi.errors.ChainError` marks the peer
        bad; any other failure counts in :attr:`sync_failures`, is logged
        once (the peer's error message, no traceback, for a refused call)
        and the connection aborted (the ``ClientService`` reconnects after
        :meth:`retry_delay`).  Graphene reference:
        libraries/net/node.cpp ``node_impl::on_hello_message`` (a peer on
        another chain id is rejected) and its sync start after connect."""
        self.protocol = proto
        self.state = "syncing"
        self.last_seen = self.network.reactor.seconds()
        self._subscribe(proto).addErrback(self._failed, proto)

    def disconnected(self, proto) -> None:
        """The connection ``proto`` closed (called by
        :meth:`PeerRpcProtocol.onClose <nodeapi.peers_client.PeerRpcProtocol.onClose>`,
        cleanly or not): if it is the current connection, :attr:`protocol`
        becomes None and the state ``disconnected`` (a ``bad`` peer stays
        ``bad``); a running sync loop ends at its next check.  Closes of an
        older connection are ignored.  Reconnecting is the
        ``ClientService``'s job (unless stopped)."""
        if proto is self.protocol:
            self.protocol = None
            if self.state != "bad":
                self.state = "disconnected"
                log.info("Peer {peer} disconnected", peer=self.address)

    def notice(self, proto, callback_id, payload: list) -> None:
        """A ``{"method": "notice", "params": [callback_id, payload]}``
        message from the peer (wire-contract.md section 5; called by
        :meth:`PeerRpcProtocol.onMessage <nodeapi.peers_client.PeerRpcProtocol.onMessage>`).
        Updates :attr:`last_seen` (reactor seconds).  For
        :data:`BLOCK_APPLIED_CB` the payload is ``[block_id]`` (40 hex
        chars): :attr:`head_block_id` becomes it, :attr:`head_block_num`
        the larger of the known head and the number in the id's first 8 hex
        digits (graphene ``block_header::num_from_id``), and :meth:`sync`
        fetches what this node lacks.  Other callbacks and malformed
        payloads are ignored.  Graphene reference: libraries/net/node.cpp
        (a peer's block inventory triggers a fetch)."""
        self.last_seen = self.network.reactor.seconds()
        if callback_id == BLOCK_APPLIED_CB and payload and isinstance(payload[0], str):
            self.head_block_id = payload[0]
            self.head_block_num = max(self.head_block_num, int(payload[0][:8], 16))
            self.sync()

    # -- sync ----------------------------------------------------------------------

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
        log.info("Connected to peer {peer}, head {head}", peer=self.address,
                 head=self.head_block_num)
        self.sync()

    @defer.inlineCallbacks
    def _login(self, proto, user: str, password: str):
        """Log in as ``user``; when refused, log in anonymously again (the
        refusal logged the connection out, wire-contract.md section 2, so
        even the anonymous sets are gone until ``login("", "")``, which
        matches the ``*`` entry).  Raises :class:`LoginRefused` when that
        is refused too."""
        if (yield proto.call(1, "login", [user, password])):
            return
        if (yield proto.call(1, "login", ["", ""])):
            log.warn("Login as {user} refused by peer {peer}; continuing anonymously",
                     user=user, peer=self.address)
            return
        raise LoginRefused(f"Login as {user} refused by peer {self.address}, and it "
                           "refuses anonymous logins too")

    def sync(self) -> None:
        """Fetch and apply the peer's blocks after this node's head, in
        batches of ``sync_batch_size`` (``block.get_blocks``, or pipelined
        ``database.get_block`` when the peer denies ``block_api``), yielding
        to the reactor every :data:`APPLY_SLICE` blocks; state ``live`` once
        caught up.  Returns at once; a call while a sync runs makes it go
        around once more; no-op without a connection or for a ``bad`` peer.
        A block the chain rejects (:class:`~nodeapi.errors.ChainError`,
        :class:`MalformedBlock`) marks the peer bad.  Graphene reference:
        libraries/net/node.cpp (sync from the peer, then follow)."""
        if self.protocol is None or self.state == "bad":
            return
        if self._syncing:
            self._again = True
            return
        self._syncing = True
        proto = self.protocol
        d = self._sync_loop(proto)
        d.addErrback(self._failed, proto)

        def done(_):
            self._syncing = False
            if self.protocol is not None and self.protocol is not proto:
                self.sync()  # reconnected while the old loop was winding down

        d.addBoth(done)

    @defer.inlineCallbacks
    def _sync_loop(self, proto):
        chain = self.network.chain
        while True:
            self._again = False
            while chain.head_block_num < self.head_block_num and proto is self.protocol:
                first = chain.head_block_num + 1
                batch = self.network.parameters["sync_batch_size"]
                if self.batch_limit is not None:
                    batch = min(batch, self.batch_limit)
                last = min(self.head_block_num, first + batch - 1)
                blocks = yield self._fetch(proto, first, last)
                self.last_seen = self.network.reactor.seconds()
                for i, block in enumerate(blocks):
                    if block is None or proto is not self.protocol:
                        break
                    self._apply(block)
                    if i % APPLY_SLICE == APPLY_SLICE - 1:  # let the reactor serve
                        yield task.deferLater(self.network.reactor, 0, lambda: None)
                if blocks and blocks[0] is not None:
                    self.sync_failures = 0  # a successful sync step
                if not blocks or blocks[-1] is None:
                    break
            if not self._again or proto is not self.protocol:
                break
        if proto is self.protocol:
            self.sync_failures = 0  # caught up
        if proto is self.protocol and self.state == "syncing":
            self.state = "live"
            log.info("Peer {peer} in sync at block {head}", peer=self.address,
                     head=chain.head_block_num)

    def _apply(self, block) -> None:
        """Apply one fetched block; a block that is not even well formed
        counts as invalid (:class:`MalformedBlock`)."""
        try:
            self.network.apply_block(strip_block_info(block), self)
        except ChainError:
            raise
        except (AttributeError, KeyError, TypeError, ValueError, IndexError) as exc:
            raise MalformedBlock(f"Malformed block from peer {self.address}: "
                                 f"{type(exc).__name__}: {exc}") from exc

    @defer.inlineCallbacks
    def _fetch(self, proto, first: int, last: int):
        """Blocks ``first..last`` from the peer (list, None for missing)."""
        if not self.use_get_block:
            try:
                blocks = yield proto.call("block", "get_blocks", [first, last])
                return blocks
            except PeerRpcError as exc:
                limit = _LIMIT.search(exc.remote_message)
                if limit is not None and 1 <= int(limit.group(1)) <= last - first:
                    # the peer's api-limit-get-blocks is below our batch size
                    self.batch_limit = int(limit.group(1))
                    log.info("Peer {peer} serves at most {limit} blocks per get_blocks; "
                             "fetching batches of that size", peer=self.address,
                             limit=self.batch_limit)
                    blocks = yield self._fetch(proto, first, first + self.batch_limit - 1)
                    return blocks
                if not exc.access_denied:
                    raise
                log.info("Peer {peer} denies block_api; using database get_block",
                         peer=self.address)
                self.use_get_block = True
        # pipelined get_block calls stay below the peer's calls-in-flight cap
        last = min(last, first + GET_BLOCK_WINDOW - 1)
        calls = [proto.call("database", "get_block", [n]) for n in range(first, last + 1)]
        blocks = yield defer.gatherResults(calls, consumeErrors=True)
        return blocks

    def _failed(self, failure, proto) -> None:
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
        else:  # unexpected (a malformed reply, a bug): keep the traceback
            log.failure("Sync with peer {peer} failed ({failures} in a row)", failure,
                        peer=self.address, failures=self.sync_failures)
        if proto is self.protocol:
            proto.dropConnection(abort=True)  # retry_delay reports the failure
        else:
            self._report_failure()

    def describe(self) -> dict:
        """``{"addr", "state", "head_block_num", "head_block_id", "last_seen",
        "bad_reason"}`` (last_seen in reactor seconds, or None)."""
        return {"addr": self.address, "state": self.state,
                "head_block_num": self.head_block_num, "head_block_id": self.head_block_id,
                "last_seen": self.last_seen, "bad_reason": self.bad_reason}
