"""The exception hierarchy of nodeapi.

Every error a client or an operator can cause is a subclass of
:class:`NodeAPIError`.  The RPC layer maps them to JSON-RPC errors in one place
(:mod:`nodeapi.rpc.jsonrpc`): a :class:`NodeAPIError` raised by an API
function becomes ``{"code": err.code, "message": "Execution error: " + str(err)}``
(docs/wire-contract.rst section 4, HTTP status 200).  Anything else escaping an API
function is an internal failure (-32603, HTTP 500) and is logged, never shown.

Subsystems define their specific errors as subclasses of the family classes
below, each with a message a user can act on.
"""


class NodeAPIError(Exception):
    """Base of every error nodeapi reports to a client or operator.

    :ivar code: the JSON-RPC error code used when this error answers a call;
        graphene answers every failed function with 10 ("fc::exception").
    :ivar name: a short machine-readable name, sent as ``error.data.name``
        (docs/wire-contract.rst section 4): clients, nodeapi's own peer
        follower included, tell errors apart by it, not by the message text.
    :ivar details: ``None`` or a dict of the values named in the message
        (fc's ``log_message`` ``data``: ``FC_ASSERT(cond, "... ${x}",
        ("x", x))``), sent as ``error.data.stack[0].data``.
    """

    code = 10
    name = "exception"
    details = None
    #: ``None``, or fc's description of the exception type when this error
    #: is one of fc's (``"Assert Exception"``, ``"Bad Cast"``,
    #: ``"missing required active authority"``): sent as
    #: ``error.data.message``, with a stack entry carrying :attr:`format`,
    #: as bitshares-core sends an fc exception (fc ``exception::to_variant``)
    what = None
    #: ``None``, or the format of fc's log message with its ``${name}``
    #: placeholders (``"Missing Active Authority ${id}"``), sent as
    #: ``error.data.stack[0].format``; see :attr:`log_format`
    fc_format = None
    #: ``None``, or a JSON-RPC error object ``{"code": int, "message": str,
    #: ["data": any]}`` another node answered a call this node forwarded
    #: (a follower's broadcasts, :mod:`nodeapi.api.broadcast`): the RPC layer
    #: sends it unchanged instead of building one from this exception.
    wire_error = None

    def __init__(self, message: str = "") -> None:
        super().__init__(message or self.__class__.__doc__.strip().splitlines()[0])

    @property
    def message(self) -> str:
        """The error text (``str``; the constructor's ``message``, or the
        first line of the class docstring when it was empty).  The RPC layer
        sends it as ``"Execution error: " + message`` (docs/wire-contract.rst
        section 4; graphene ``fc::exception::to_string``)."""
        return self.args[0]

    @property
    def log_format(self) -> str:
        """fc's ``format`` of the top stack entry: :attr:`fc_format` when
        set, else the message without fc's ``"<what>: "`` prefix (an
        ``FC_ASSERT`` without values: ``"now <= trx.expiration: "``), else
        the message."""
        if self.fc_format is not None:
            return self.fc_format
        text = self.message
        if self.what and text.startswith(self.what + ": "):
            return text[len(self.what) + 2:]
        return text


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


#: fc's name, code and description of a failed ``FC_ASSERT`` (bitshares-fc
#: include/fc/exception/exception.hpp, ``assert_exception``,
#: ``assert_exception_code`` 10, "Assert Exception")
ASSERT_NAME, ASSERT_CODE, ASSERT_WHAT = "assert_exception", 10, "Assert Exception"


class ApiAssert(ApiError):
    """A call bitshares-core refuses with an ``FC_ASSERT`` of its database
    API (an object that does not exist, ``"no such account"``, an asset
    that is not market-issued, an id of another type): fc's
    ``assert_exception``, text ``Assert Exception: <expression>: <message>``.
    """

    name = ASSERT_NAME
    code = ASSERT_CODE
    what = ASSERT_WHAT


class AccessDenied(ApiError):
    """Assert Exception: is_allowed: Access denied

    The first docstring line is the default message: graphene's text when a
    login API accessor (``database``, ``block``, ...) names a set the
    connection is not allowed (docs/wire-contract.rst section 2; graphene
    libraries/app/api.cpp, ``login_api`` accessors and ``is_allowed``).
    Sent with ``error.data.name`` ``access_denied`` (graphene sends
    ``assert_exception``, which names no cause): nodeapi's peer follower
    (:class:`~nodeapi.peers.errors.PeerRpcError`) reads the name.
    """

    name = "access_denied"


class ApiLimitExceeded(ApiError):
    """A call asked for more results than the node's ``api-limit-*`` option
    allows: graphene's ``FC_ASSERT( limit <= configured_limit, "limit can
    not be greater than ${configured_limit}" )`` (bitshares-core
    libraries/app/api.cpp and database_api.cpp).

    :ivar details: ``{"configured_limit": int}``, sent as
        ``error.data.stack[0].data`` like fc does, so a client reads the
        limit without parsing the text (``error.data.name`` is
        ``api_limit_exceeded``).
    """

    name = "api_limit_exceeded"

    def __init__(self, configured_limit: int, prefix: str = "") -> None:
        """``prefix``: text put before graphene's message (for example
        ``"Too many blocks: 120 requested, "``)."""
        super().__init__(f"{prefix}limit can not be greater than {configured_limit}")
        self.details = {"configured_limit": configured_limit}


class ClientLimitExceeded(ApiError):
    """A client is over one of the operator's limits per user or per source
    address (calls per second, connections, subscribed items; api-access
    ``limits`` and the ``--max-*-per-ip`` options, docs/rpc-access.rst
    "Limits per user and per source address").

    Answered like a failed function (``Execution error: <text>``, HTTP 200:
    python-bitshares' HTTP client takes any other status for a broken node
    and reconnects in a loop) but with code -32005, the JSON-RPC server
    code "limit exceeded" (EIP-1474), so a client can tell it from a failed
    call without reading ``data.name``.  bitshares-core has no such limits.
    Subclasses name the limit.
    """

    code = -32005
    name = "limit_exceeded"


class HistoryError(NodeAPIError):
    """The history backend cannot answer (for example the search database is
    unreachable).  Raised by :mod:`nodeapi.history`.
    """

    name = "history_error"


class StorageError(NodeAPIError):
    """The node's own data on disk cannot be read or written: the block log
    is damaged, locked, or a write failed (disk full, I/O error).  Raised by
    :mod:`nodeapi.chain.blocklog`; at startup it stops the node with one
    line, while running a failed write leaves the chain at its head until
    the disk recovers.
    """

    name = "storage_error"


class ConfigError(NodeAPIError):
    """A bad option value or unreadable file; stops startup before the reactor
    runs.  The message names the option or file and the problem.
    """

    name = "config_error"
