"""The exception hierarchy of nodeapi.

Every error a client or an operator can cause is a subclass of
:class:`NodeAPIError`.  The RPC layer maps them to JSON-RPC errors in one place
(:mod:`nodeapi.rpc.jsonrpc`): a :class:`NodeAPIError` raised by an API
function becomes ``{"code": err.code, "message": "Execution error: " + str(err)}``
(wire-contract.md section 4, HTTP status 200).  Anything else escaping an API
function is an internal failure (-32603, HTTP 500) and is logged, never shown.

Subsystems define their specific errors as subclasses of the family classes
below, each with a message a user can act on.
"""


class NodeAPIError(Exception):
    """Base of every error nodeapi reports to a client or operator.

    :ivar code: the JSON-RPC error code used when this error answers a call;
        graphene answers every failed function with 10 ("fc::exception").
    :ivar name: a short machine-readable name, sent as ``error.data.name``.
    """

    code = 10
    name = "exception"

    def __init__(self, message: str = "") -> None:
        super().__init__(message or self.__class__.__doc__.strip().splitlines()[0])

    @property
    def message(self) -> str:
        """The error text (``str``; the constructor's ``message``, or the
        first line of the class docstring when it was empty).  The RPC layer
        sends it as ``"Execution error: " + message`` (wire-contract.md
        section 4; graphene ``fc::exception::to_string``)."""
        return self.args[0]


class ProtocolError(NodeAPIError, ValueError):
    """Malformed wire data: ids, keys, hex, integers, operations, signatures.

    Raised by :mod:`nodeapi.protocol`; subclasses live there.
    """

    name = "protocol_error"


class ChainError(NodeAPIError):
    """A transaction or block that the chain rejects; nothing was applied.

    Raised by :mod:`nodeapi.chain`; subclasses name each validation rule.
    """

    name = "chain_error"


class ApiError(NodeAPIError):
    """A function call that cannot be answered: bad argument, limit exceeded,
    access denied, unknown object.  Raised by the API sets in :mod:`nodeapi.api`.
    """

    name = "api_error"


class AccessDenied(ApiError):
    """Assert Exception: is_allowed: Access denied

    The first docstring line is the default message: graphene's text when a
    login API accessor (``database``, ``block``, ...) names a set the
    connection is not allowed (wire-contract.md section 2; graphene
    libraries/app/api.cpp, ``login_api`` accessors and ``is_allowed``).
    Clients such as :class:`~nodeapi.peers_client.PeerRpcError` match on
    "Access denied".
    """

    name = "assert_exception"


class HistoryError(NodeAPIError):
    """The history backend cannot answer (for example the search database is
    unreachable).  Raised by :mod:`nodeapi.history`.
    """

    name = "history_error"


class ConfigError(NodeAPIError):
    """A bad option value or unreadable file; stops startup before the reactor
    runs.  The message names the option or file and the problem.
    """

    name = "config_error"
