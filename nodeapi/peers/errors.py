"""Errors of the peers package.

Errors a client of the network_node API sees are :class:`~nodeapi.errors.ApiError`
subclasses (JSON-RPC code 10, ``error.data.name`` below); a peer serving
another chain is a :class:`~nodeapi.errors.ChainError` (the peer is marked
bad).  :class:`PeerRpcError` reads the peer's JSON-RPC error by its
structured fields (docs/wire-contract.rst section 4).
"""

import re

from nodeapi.errors import AccessDenied, ApiError, ApiLimitExceeded, ChainError

#: graphene's text of an api limit (bitshares-core libraries/app/api.cpp,
#: ``"limit can not be greater than ${configured_limit}"``), read only from
#: a server that sends no structured limit.
_LIMIT_TEXT = re.compile(r"limit can not be greater than (\d+)")
#: fc's name of a failed ``FC_ASSERT``: graphene's name for both "Access
#: denied" and api limits, so its text decides.
_FC_ASSERT = "assert_exception"


class InvalidNodeParameter(ApiError):
    """An advanced node parameter is unknown or has a bad value.

    Raised by :meth:`~nodeapi.peers.service.PeerService.set_advanced_node_parameters`
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


class PeerDropped(ApiError):
    """This node drops a graphene P2P peer for an error: another chain, a
    bad hello signature, a handshake or request timed out, silence, a
    message that does not read or was not asked for, a refused block
    (bitshares-core libraries/net/node.cpp ``disconnect_from_peer`` with
    ``caused_by_error``).  What the connection's owner hears
    (:meth:`~nodeapi.peers.remote.IRemoteOwner.failed`)."""

    name = "peer_dropped"


class PeerRejected(ApiError):
    """A graphene P2P peer rejected this node's hello for another chain or
    for being itself (``connection_rejected_message``, node.cpp
    ``on_hello_message``); the text is ``"rejected us: <its reason>"``."""

    name = "peer_rejected"


class PeerDisconnected(ApiError):
    """The connection to the peer closed before the call was answered."""

    name = "peer_disconnected"


class UpstreamTimeout(PeerDisconnected):
    """Another node did not answer a call in time (the connection's
    ``timeout``, :mod:`nodeapi.peers.client`; a gateway's
    ``--upstream-timeout``).  A
    :class:`PeerDisconnected`: the call's outcome is unknown as with a lost
    connection, so a read goes to another upstream and a broadcast is
    looked for before it is sent again
    (:class:`~nodeapi.gateway.pool.UpstreamPool`); a client sees it when
    no other upstream could answer."""

    name = "upstream_timeout"


class RemoteBusy(ApiError):
    """A call to another node was not sent: as many calls as the connection
    allows are in flight and as many wait already
    (:class:`~nodeapi.peers.client.RemoteFactory` ``max_waiting``)."""

    name = "remote_busy"


class MessageTooLarge(ApiError):
    """Another node sent a message over this node's ``max-message-size``:
    the connection was closed (WebSocket close code 1009)."""

    name = "message_too_large"


class PeerRpcError(ApiError):
    """The peer answered a call with a JSON-RPC error.

    :ivar remote_error: the peer's ``error`` object as it came (a dict).
    :ivar remote_code: the peer's ``error.code`` (10 for a failed function,
        docs/wire-contract.rst section 4), or None.
    :ivar remote_message: the peer's ``error.message`` (str).
    :ivar remote_name: the peer's ``error.data.name`` (str), or None when it
        sent none (nodeapi always does; graphene sends fc's names).
    :ivar remote_details: ``error.data.stack[0].data`` (dict; empty when
        absent): the values named in the message, as fc sends them.
    """

    name = "peer_rpc_error"

    def __init__(self, method: str, error) -> None:
        if not isinstance(error, dict):
            error = {"message": error}
        data = error.get("data")
        data = data if isinstance(data, dict) else {}
        stack = data.get("stack")
        first = stack[0] if isinstance(stack, list) and stack else None
        details = first.get("data") if isinstance(first, dict) else None
        name = data.get("name")
        self.remote_error = error
        self.remote_code = error.get("code")
        self.remote_message = str(error.get("message", ""))
        self.remote_name = name if isinstance(name, str) else None
        self.remote_details = details if isinstance(details, dict) else {}
        super().__init__(f"Peer call {method} failed: {self.remote_message} "
                         f"(code {self.remote_code})")

    def _text_decides(self) -> bool:
        """True when the name is absent or fc's generic assert name."""
        return self.remote_name in (None, _FC_ASSERT)

    @property
    def access_denied(self) -> bool:
        """True when the peer refused the API set: ``error.data.name``
        ``access_denied`` (:class:`~nodeapi.errors.AccessDenied`); for a
        server without that name (graphene: ``assert_exception``), the text
        "Access denied" (docs/wire-contract.rst section 2)."""
        if self.remote_name == AccessDenied.name:
            return True
        return self._text_decides() and "Access denied" in self.remote_message

    @property
    def configured_limit(self):
        """The peer's api limit (int >= 1) when the call asked for more, else
        None: ``error.data.stack[0].data.configured_limit`` (nodeapi's
        :class:`~nodeapi.errors.ApiLimitExceeded`, and fc's ``FC_ASSERT``
        values in graphene); for a server that sends no values, the number
        in graphene's text "limit can not be greater than N"."""
        limit = self.remote_details.get("configured_limit")
        if isinstance(limit, int) and not isinstance(limit, bool):
            return limit if limit >= 1 else None
        if self.remote_name != ApiLimitExceeded.name and not self._text_decides():
            return None
        match = _LIMIT_TEXT.search(self.remote_message)
        return int(match.group(1)) if match is not None and int(match.group(1)) >= 1 else None


class NoUpstream(ApiError):
    """This node follows other nodes, but none is connected now: a call it
    forwards (a follower's broadcast) has nowhere to go.  Raised by
    :meth:`~nodeapi.peers.service.PeerService.forward`; nothing was sent,
    the client may retry once the upstream is back."""

    name = "no_upstream"


class UpstreamError(ApiError):
    """The upstream answered a call this node forwarded with a JSON-RPC
    error.  :attr:`wire_error` holds that error object as it came (code,
    message, data), and the RPC layer sends it to the client unchanged
    (:func:`nodeapi.rpc.jsonrpc.error_from_failure`); an error object of
    another shape (no integer ``code`` or no string ``message``) is reported
    as this error's own text instead.

    :param refusal: the :class:`PeerRpcError` of the forwarded call.
    """

    name = "upstream_error"

    def __init__(self, refusal: PeerRpcError) -> None:
        super().__init__(f"The upstream refused the call: {refusal.remote_message} "
                         f"(code {refusal.remote_code})")
        error = refusal.remote_error
        code = error.get("code")
        if (isinstance(code, int) and not isinstance(code, bool)
                and isinstance(error.get("message"), str)):
            self.wire_error = error
