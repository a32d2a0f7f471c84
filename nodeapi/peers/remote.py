"""One connection to another node's RPC WebSocket, the one used by the
follower (:class:`~nodeapi.peers.peer.Peer`), the indexer
(:class:`~nodeapi.peers.upstream.UpstreamService`), the gateway's upstreams
(:class:`~nodeapi.gateway.upstream.Upstream`) and the devnet's fork
(:class:`~nodeapi.devnet.fork.LiveNode`).  Its owner provides :class:`IRemoteOwner`,
as the owner of the graphene P2P connections does
(:class:`~nodeapi.peers.p2p_node.P2PNode` of each
:class:`~nodeapi.peers.p2p_peer.P2PPeer`); DESIGN.rst ("A connection to
another node") tells the flows.  Graphene
reference: libraries/net/node.cpp (connect, hello with the chain id,
then sync and follow).
"""

from typing import Any, Callable, Optional

import attr
from twisted.application import service
from twisted.internet import defer
from twisted.internet.endpoints import HostnameEndpoint
from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import Interface
from zope.interface.verify import verifyObject

from nodeapi.errors import NodeAPIError
from nodeapi.peers.client import CallFigures, RemoteFactory
from nodeapi.peers.errors import (
    LoginRefused, MessageTooLarge, PeerDisconnected, UpstreamTimeout, WrongChain)
from nodeapi.peers.reconnect import GOING_AWAY, ChoosingEndpoint, Reconnection
from nodeapi.peers.replies import BadReply
from nodeapi.protocol.errors import InvalidTime
from nodeapi.protocol.times import parse_time

#: seconds a call waits for its reply unless the owner says otherwise
CALL_TIMEOUT = 30.0
#: calls in flight on one connection (a nodeapi node's default
#: ``max-calls-in-flight``: more would be refused there)
MAX_IN_FLIGHT = 100
#: the largest block number (graphene block numbers are uint32_t)
MAX_BLOCK_NUM = 2 ** 32 - 1


@attr.s(frozen=True, slots=True)
class RemoteHead:
    """What a connection learned of the other node's chain when it opened,
    and what each later ``get_dynamic_global_properties`` says
    (:func:`read_head`).

    :ivar chain_id: 64 hex digits.
    :ivar head_block_num, last_irreversible_block_num: block numbers,
        ``0 <= lib <= head <= 2^32-1``; a P2P hello tells no last
        irreversible block (None, :meth:`~nodeapi.peers.p2p_peer.P2PPeer.head`).
    :ivar head_block_id: 40 hex digits (str), or None when absent.
    :ivar time: the head block's time, seconds since the epoch (None when
        a P2P hello gave none that reads).
    """

    chain_id = attr.ib()
    head_block_num = attr.ib()
    last_irreversible_block_num = attr.ib()
    head_block_id = attr.ib()
    time = attr.ib()


def read_head(dgp: Any, chain_id: str) -> RemoteHead:
    """The :class:`RemoteHead` of a ``get_dynamic_global_properties``
    answer (bitshares-core libraries/chain/include/graphene/chain/
    global_property_object.hpp ``dynamic_global_property_object``).

    :raises BadReply: no head time and block numbers, or numbers that
        cannot be (block numbers are ``uint32_t``; the last irreversible
        block is at most the head)."""
    try:
        time = parse_time(dgp["time"])
        head = dgp["head_block_number"]
        lib = dgp["last_irreversible_block_num"]
    except (TypeError, KeyError, InvalidTime) as exc:
        raise BadReply(f"dynamic global properties without head time and blocks "
                       f"({exc!r})") from None
    if not (type(head) is int and type(lib) is int and 0 <= lib <= head <= MAX_BLOCK_NUM):
        raise BadReply(f"dynamic global properties with head block {str(head)[:24]} and "
                       f"last irreversible block {str(lib)[:24]}")
    block_id = dgp.get("head_block_id")
    return RemoteHead(chain_id=chain_id, head_block_num=head, last_irreversible_block_num=lib,
                      head_block_id=block_id if isinstance(block_id, str) else None,
                      time=time)


class IRemoteOwner(Interface):
    """What the owner of a :class:`RemoteNode` is told, and asked; the
    owner of a graphene P2P connection too (``remote`` a
    :class:`~nodeapi.peers.p2p_peer.P2PPeer`; no notices, no calls timed
    out there)."""

    def claim_chain(remote, chain_id):
        """The other node serves ``chain_id`` (64 hex digits): True when it
        is the owner's chain (an owner without one yet may adopt it); False
        drops the connection as :class:`~nodeapi.peers.errors.WrongChain`."""

    def connected(remote, head):
        """The connection is open, logged in and on the owner's chain;
        ``head`` (:class:`RemoteHead`) read just now.  Returns None or a
        Deferred of the owner's work on this connection: its failure goes
        to :meth:`RemoteNode.fail`."""

    def notice(remote, callback_id, payload):
        """A ``{"method": "notice", "params": [callback_id, payload]}``
        message of the current connection (docs/wire-contract.rst section
        5; ``callback_id`` an int, ``payload`` a list)."""

    def call_timed_out(remote, method):
        """A call (``method``) of the current connection was not answered
        in time; the connection stays (the call already failed with
        :class:`~nodeapi.peers.errors.UpstreamTimeout`)."""

    def failed(remote, error):
        """The connection is dropped because of ``error`` (an exception:
        :class:`~nodeapi.peers.errors.LoginRefused`,
        :class:`~nodeapi.peers.errors.WrongChain`,
        :class:`~nodeapi.peers.replies.BadReply`,
        :class:`~nodeapi.peers.errors.MessageTooLarge`,
        :class:`~nodeapi.peers.errors.UpstreamTimeout`, or what the
        owner's work raised; of a P2P connection
        :class:`~nodeapi.peers.errors.PeerDropped` or
        :class:`~nodeapi.peers.errors.PeerRejected`).  True: the owner
        stops following (it logged why); otherwise the failure counts and
        is logged with the reconnection delay."""

    def lost(remote):
        """The open connection closed (every call on it failed already);
        :attr:`RemoteNode.protocol` is None now.  Reconnecting is the
        remote's business."""


class RemoteNode(service.MultiService):
    """The connection to one other node, reconnecting (module docstring).

    :param address: a :class:`~nodeapi.protocol.node_address.NodeAddress`
        (``credentials`` logged in with at each connection).
    :param owner: an :class:`IRemoteOwner` provider.
    :param reactor: the reactor (TCP, name resolution, pings).
    :param clock: ``IReactorTime`` of the reconnection delays and the
        restart grace (default ``reactor``).
    :param timeouts: ``IReactorTime`` of the call timeouts (default
        ``reactor``).
    :param backoff: ``backoff(n) -> seconds`` before reconnecting after
        ``n`` failures (``twisted.application.internet.backoffPolicy``).
    :param what: how log lines name the other node (``"Peer h:p"``).
    :param max_message_size: bytes, the largest message accepted.
    :param timeout: seconds a call waits for its reply (also the longest
        TCP connection attempt, at least 1 s).
    :param max_in_flight: calls sent at once (more wait, ten times as
        many at most).
    :param choose: zero-argument callable giving the address of each
        connection attempt (a gateway's healthy upstream), or None.

    :ivar protocol: the open :class:`~nodeapi.peers.client.RemoteProtocol`,
        or None.
    :ivar ready: the open connection logged in, passed the chain check
        and read the head (its owner was told :meth:`IRemoteOwner.connected`).
    :ivar connections: WebSocket connections opened (the ones after the
        first are reconnections).
    :ivar reconnection: the :class:`~nodeapi.peers.reconnect.Reconnection`
        (the backoff and the failure lines, shared with the P2P seeds);
        :attr:`attempts`, :attr:`failures`, :attr:`waiting` and
        :attr:`stopping_since` are its.
    :ivar bad_messages: messages refused (not graphene JSON-RPC, a reply
        not asked, over the size limit).
    :ivar figures: the :class:`~nodeapi.peers.client.CallFigures`.
    :ivar handshake_hint: text added, once, to the first line saying the
        address is not a WebSocket RPC server (or None).
    """

    log = Logger()

    def __init__(self, address, owner, *, reactor: Any, backoff: Callable[[int], float],
                 what: str, clock: Optional[Any] = None, timeouts: Optional[Any] = None,
                 max_message_size: int = 4194304,
                 timeout: float = CALL_TIMEOUT, max_in_flight: int = MAX_IN_FLIGHT,
                 choose: Optional[Callable] = None) -> None:
        super().__init__()
        verifyObject(IRemoteOwner, owner)
        self.address, self.owner, self.what = address, owner, what
        self.reactor = reactor
        self.clock = clock if clock is not None else reactor
        self.timeout = timeout
        self.protocol = None
        self.ready = False
        self.connections = self.bad_messages = 0
        self.reconnection = Reconnection(backoff=backoff, clock=self.clock, log=self.log,
                                         what=what, remote=address.address)
        self.figures = CallFigures()
        self.handshake_hint: Optional[str] = None
        self.factory = RemoteFactory(self, address.url, max_message_size=max_message_size,
                                     timeout=timeout, max_in_flight=max_in_flight,
                                     max_waiting=10 * max_in_flight, reactor=reactor,
                                     clock=timeouts if timeouts is not None else reactor)
        if choose is None:
            # the next address of a name (happy eyeballs) is tried 0.1 s after
            # the last, and a refused attempt fails that soon
            endpoint = HostnameEndpoint(reactor, address.host, address.port,
                                        timeout=max(timeout, 1.0), attemptDelay=0.1)
        else:
            endpoint = ChoosingEndpoint(reactor, choose, self._chosen)
        self._client = self.reconnection.client(endpoint, self.factory)
        self._client.setServiceParent(self)

    # -- reconnecting ------------------------------------------------------------------

    @property
    def attempts(self) -> int:
        """Connection attempts made."""
        return self.reconnection.attempts

    @property
    def failures(self) -> int:
        """Failures in a row (each lengthens the reconnection delay);
        :meth:`succeeded` starts afresh."""
        return self.reconnection.failures

    @property
    def waiting(self) -> bool:
        """A reconnection delay runs."""
        return self.reconnection.waiting

    @property
    def stopping_since(self) -> Optional[float]:
        """Clock time the other node closed with
        :data:`~nodeapi.peers.reconnect.GOING_AWAY` (a planned stop), until
        a connection opens again; else None."""
        return self.reconnection.stopping_since

    def _chosen(self, address) -> None:
        """The next connection goes to ``address`` (``choose``)."""
        if address != self.address:
            self.log.info("{what} now at {remote}", what=self.what, remote=address.address)
        self.address = address
        self.reconnection.remote = address.address

    def hurry(self) -> None:
        """Waiting to reconnect: try now (a connection being opened is left
        alone)."""
        client = self._client
        if self.protocol is None and self.running and client.running and self.waiting:
            self.reconnection.waiting = False
            client.stopService()
            client.startService()

    def stopService(self) -> defer.Deferred:
        """Stop: the connection closes, pending calls fail, a failure not
        logged yet is logged."""
        self.reconnection.report()
        return super().stopService()

    def when_open(self) -> defer.Deferred:
        """A Deferred firing with None when a WebSocket opens, or failing
        (with the reason) when the first attempt fails; reconnection goes on
        either way."""
        d = self._client.whenConnected(failAfterFailures=1)

        def opened(proto):
            if proto.handshake_error is not None:
                raise PeerDisconnected(f"WebSocket handshake failed: {proto.handshake_error}")
            return proto.opened

        return d.addCallback(opened).addCallback(lambda _proto: None)

    # -- the connection's events (nodeapi.peers.client) --------------------------------

    def opened(self, proto) -> None:
        """The WebSocket opened: log in, check the chain, read the head,
        then tell the owner (:meth:`_open`)."""
        self.protocol = proto
        self.connections += 1
        defer.Deferred.fromCoroutine(self._open(proto)).addErrback(self.fail, proto)

    async def _open(self, proto) -> None:
        """Login (when the address carries credentials; a refused login
        logs the connection out, docs/wire-contract.rst section 2, so
        ``login("", "")`` follows, which restores the anonymous ``*``
        sets, else :class:`~nodeapi.peers.errors.LoginRefused`),
        ``database.get_chain_id`` (the owner's :meth:`~IRemoteOwner.claim_chain`,
        else :class:`~nodeapi.peers.errors.WrongChain`),
        ``database.get_dynamic_global_properties`` (:func:`read_head`),
        then the owner's :meth:`~IRemoteOwner.connected`."""
        credentials = self.address.credentials
        if credentials:
            if not await proto.call(1, "login", list(credentials)):
                if not await proto.call(1, "login", ["", ""]):
                    raise LoginRefused(f"login as {credentials[0]} refused, and anonymous "
                                       f"logins too")
                self.log.warn("{what} refused the login as {user}; continuing anonymously",
                              what=self.what, remote=self.address.address,
                              user=credentials[0])
        chain_id = await proto.call("database", "get_chain_id", [])
        if not isinstance(chain_id, str) or not self.owner.claim_chain(self, chain_id):
            raise WrongChain(f"it serves chain id {str(chain_id)[:80]}, another chain")
        head = read_head(await proto.call("database", "get_dynamic_global_properties", []),
                         chain_id)
        if proto is not self.protocol:
            return
        self.ready = True
        self.reconnection.opened()
        self.log.info("{what} connected (chain {chain}, head {head})", what=self.what,
                      remote=self.address.address, chain=chain_id, head=head.head_block_num)
        await defer.maybeDeferred(self.owner.connected, self, head)

    def noticed(self, proto, callback_id: int, payload: list) -> None:
        """A notice of ``proto``: to the owner when it is the open one."""
        if proto is self.protocol:
            self.owner.notice(self, callback_id, payload)

    def call_timed_out(self, proto, method: str) -> None:
        """A call of ``proto`` timed out: the owner is told when it is the
        open one."""
        if proto is self.protocol:
            self.owner.call_timed_out(self, method)

    def bad_message(self, proto, reason: str) -> None:
        """``proto`` received a message that is not graphene JSON-RPC (or a
        reply to an id not asked): dropped (:meth:`fail`)."""
        self.bad_messages += 1
        self.fail(Failure(BadReply(f"sent {reason}")), proto)

    def message_too_large(self, proto, limit: int) -> None:
        """``proto`` closes on a message over ``limit`` bytes."""
        self.bad_messages += 1
        self.fail(Failure(MessageTooLarge(f"sent a message larger than {limit} bytes (this "
                                          f"node's max-message-size)")), proto)

    def handshake_failed(self, proto, reason: str) -> None:
        """The port answered, but not as a WebSocket server (HTTP only,
        another protocol): a failure, logged with the delay."""
        error = f"not a WebSocket RPC server ({reason})"
        if self.handshake_hint is not None:
            error += self.handshake_hint
            self.handshake_hint = None  # said once; the retries' lines are short
        self.reconnection.failed(error)

    def closed(self, proto, code, reason) -> None:
        """The open connection ``proto`` closed: one info line (a planned
        stop, :data:`~nodeapi.peers.reconnect.GOING_AWAY`, named as such),
        then the owner's :meth:`~IRemoteOwner.lost`."""
        if proto is not self.protocol:
            return
        self.protocol = None
        self.ready = False
        if code == GOING_AWAY:
            self.reconnection.stopping()
            self.log.info("{what} is stopping ({code} going away: {reason}); following it "
                          "again when it is back", what=self.what,
                          remote=self.address.address, code=code,
                          reason=reason or "no reason given")
        else:
            self.log.info("{what} disconnected ({code} {reason})", what=self.what,
                          remote=self.address.address, code=code, reason=reason or "")
        self.owner.lost(self)

    # -- failures and calls ------------------------------------------------------------

    def fail(self, failure: Failure, proto=None) -> None:
        """The work on connection ``proto`` (None: the current one) failed
        with ``failure`` (ignored when a newer connection is open).  A lost
        connection needs nothing (the owner hears
        :meth:`~IRemoteOwner.lost`); otherwise the owner is asked
        (:meth:`~IRemoteOwner.failed`), and unless it stops following, the
        failure counts in :attr:`failures` and the connection is dropped;
        a node's refusal, a bad message, a timeout or this node's own
        error (any :class:`~nodeapi.errors.NodeAPIError`) is one line with
        the reconnection delay, anything else (a bug) keeps its traceback."""
        if isinstance(failure.value, defer.FirstError):
            failure = failure.value.subFailure
        if proto is None:
            proto = self.protocol
        if proto is None or (proto is not self.protocol and self.protocol is not None):
            return  # an older connection's work, a newer one open
        if failure.check(PeerDisconnected) and not failure.check(UpstreamTimeout):
            return
        if self.owner.failed(self, failure.value):
            self._drop(proto)
            return
        if failure.check(NodeAPIError, BadReply):
            self.reconnection.failed(failure.getErrorMessage())
        else:
            self.reconnection.counted()
            self.log.failure("{what} failed ({failures} in a row)", failure, what=self.what,
                             remote=self.address.address, failures=self.failures)
        self._drop(proto)

    def _drop(self, proto) -> None:
        """Drop ``proto`` (the failure is logged with the reconnection
        delay), or log the failure now if it closed already."""
        if not proto.closed:
            proto.dropConnection(abort=True)
        elif proto is not self.protocol:
            self.reconnection.report()

    def succeeded(self) -> None:
        """The other node served what was asked: the backoff starts afresh
        (the owner says when: a sync step, a check)."""
        self.reconnection.succeeded()

    def call(self, api, method: str, args: list, raw: bool = False) -> defer.Deferred:
        """``method`` of set ``api`` with ``args`` on the open connection
        (:meth:`~nodeapi.peers.client.RemoteProtocol.call`; ``raw``: the
        result as JSON bytes); fails with
        :class:`~nodeapi.peers.errors.PeerDisconnected` when none is open."""
        proto = self.protocol
        if proto is None:
            return defer.fail(PeerDisconnected(f"{self.what} is not connected"))
        return proto.call(api, method, args, raw)
