"""The login API set (id 1) and the per-connection RPC session.

:class:`RpcSession` is graphene's ``api_session_data`` plus the API id table
of ``fc::rpc::websocket_api_connection``: one per WebSocket connection, one
per HTTP request.  It logs in, hands out API ids (0 = database or dummy,
1 = login, then 2, 3, ... in the order sets are first requested) and
resolves parsed requests to API set functions (:meth:`RpcSession.invoke`; the answer path is :mod:`nodeapi.rpc.answer`).

Rules: docs/rpc-access.rst "States and transitions", docs/wire-contract.rst
sections 1-2.
"""

from typing import Any, Callable, Optional

import attr

from nodeapi.api.base import ApiSet, Session, api_function
from nodeapi.errors import AccessDenied, ApiError
from nodeapi.rpc.access import ApiAccess
from nodeapi.protocol.wire import as_string
from nodeapi.rpc.jsonrpc import Request, method_not_found

#: Login accessors in the order of graphene's ``login_api`` reflection, then
#: nodeapi's own ``devnet``.
ACCESSORS = ("block", "network_broadcast", "database", "history", "network_node",
             "crypto", "asset", "orders", "debug", "custom_operations", "devnet")


def _make_accessor(name: str) -> Callable:
    def accessor(self):
        return self.session.api_id(name)

    accessor.__name__ = name
    accessor.__doc__ = (f"The id of the {name} API set on this connection; error "
                        f"'Assert Exception: is_allowed: Access denied' unless "
                        f"{name}_api is allowed.")
    return api_function(accessor)


class DummyApi(ApiSet):
    """Id 0 when the user may not use ``database_api`` (graphene
    ``dummy_api``): its only function answers false."""

    name = "dummy"

    @api_function
    def dummy(self):
        """Always false."""
        return False


class LoginApi(ApiSet):
    """graphene ``login_api`` (docs/rpc-access.rst "Login API set functions",
    docs/wire-contract.rst section 2).  ``dummy`` and ``is_database_api_allowed``
    are deliberately not reflected."""

    name = "login"

    @api_function
    def login(self, user=None, password=None):
        """``login()``/``login(null, null)`` -> 1; ``login(user, password)``
        -> true/false.  Exactly one of the two -> error.  Numbers and
        booleans are converted to text like graphene (:func:`fc_string`):
        ``login(1, 2)`` is ``login("1", "2")``."""
        if user is None and password is None:
            return 1
        if user is None or password is None:
            raise ApiError("Must provide both user and password")
        return self.session.login(fc_string(user, "user"), fc_string(password, "password"))

    @api_function
    def logout(self):
        """Clear the allowed sets; allocated ids stay usable.  Returns false."""
        self.session.logout()
        return False

    @api_function
    def get_info(self):
        """The operator's ``api-node-info`` string; no login needed."""
        return self.node.api_node_info

    @api_function
    def get_config(self):
        """graphene ``application_options``: the node's API options.
        Needs a login with at least one allowed set."""
        if not self.session.allowed:
            raise ApiError("Access denied, please login")
        opts = {"enable_subscribe_to_all": bool(self.node.enable_subscribe_to_all),
                # the lookups graphene's api_helper_indexes plugin enables are always on
                "has_api_helper_indexes_plugin": True}
        for field, value in sorted(vars_of(self.node.limits).items()):
            opts["api_limit_" + field] = value
        return opts

    @api_function
    def get_available_api_sets(self):
        """Sorted access names the current user may obtain."""
        return sorted(self.session.allowed)

    block = _make_accessor("block")
    network_broadcast = _make_accessor("network_broadcast")
    database = _make_accessor("database")
    history = _make_accessor("history")
    network_node = _make_accessor("network_node")
    crypto = _make_accessor("crypto")
    asset = _make_accessor("asset")
    orders = _make_accessor("orders")
    debug = _make_accessor("debug")
    custom_operations = _make_accessor("custom_operations")
    devnet = _make_accessor("devnet")  # nodeapi's own (nodeapi.api.devnet)


def fc_string(value: Any, what: str) -> str:
    """``value`` as graphene's ``optional<string>`` argument receives it:
    fc ``variant::as_string`` (:func:`nodeapi.protocol.wire.as_string`)
    turns an integer into its decimal text, a boolean into
    ``"true"``/``"false"`` and a double into fixed notation with 17
    decimals (``fc::to_string(double)``).

    :raises ApiError: an object or array (fc: "Invalid cast ... to string").
    """
    if isinstance(value, (dict, list)) or value is None:
        raise ApiError(f"{what} must be a string, got {type(value).__name__} {value!r}")
    return as_string(value)


def vars_of(limits: Any) -> dict:
    """Field -> value of an attrs instance (slots classes have no __dict__)."""
    return attr.asdict(limits)


class RpcSession(Session):
    """Per-connection login state and API id table.

    :param node: the shared :class:`nodeapi.node.Node`.
    :param access: the :class:`ApiAccess` permission map.
    :param registry: accessor name -> ApiSet class (``nodeapi.api.registry``).
    :param websocket: True for WebSocket connections (callbacks possible).
    :param notice: ``fn(bytes)`` sending a notice frame, WebSocket only.
    :param peer: the client's address (the failed-login line), or None.
    :param failed_logins: a :class:`nodeapi.rpc.failed_logins.FailedLogins`
        told of each failed login with a user name or password, or None.
    :ivar allowed: the access names the current login allows.
    :ivar user: the logged-in user name, or None.
    """

    def __init__(self, node: Any, access: ApiAccess, registry: dict, websocket: bool = False,
                 notice: Optional[Callable[[int, Any], None]] = None,
                 peer: Optional[str] = None, failed_logins: Any = None) -> None:
        self.node = node
        self.peer, self.failed_logins = peer, failed_logins
        self.access = access
        self.registry = registry
        self.websocket = websocket
        self._notice = notice
        self._closers: list = []
        self._closed = False
        self.user: Optional[str] = None
        self.allowed: frozenset = frozenset()
        self.apis: list = [None, LoginApi(node, self)]
        self._ids: dict = {"login": 1}

    # -- login ------------------------------------------------------------
    def login(self, user: str, password: str) -> bool:
        """Check credentials; success replaces the allowed set, failure
        logs out (docs/wire-contract.rst section 2)."""
        allowed = self.access.check(user, password)
        if allowed is None:
            self.logout()
            if self.failed_logins is not None and (user or password):
                self.failed_logins.failed(self.peer or "?", user,
                                          "websocket" if self.websocket else "http")
            return False
        self.user, self.allowed = user, allowed
        return True

    def logout(self) -> None:
        self.user, self.allowed = None, frozenset()

    def auto_login(self, credentials: Optional[tuple]) -> None:
        """Log in at connect with Basic credentials or as ``("", "")``, then
        fix id 0: database if allowed, else dummy (docs/wire-contract.rst s. 1)."""
        user, password = credentials if credentials is not None else ("", "")
        self.login(user, password)
        if "database_api" in self.allowed and "database" in self.registry:
            self.apis[0] = self._instantiate("database")
            self._ids["database"] = 0
        else:
            self.apis[0] = DummyApi(self.node, self)

    def api_id(self, name: str) -> int:
        """The id of set ``name`` on this connection, allocating it on first
        request; raises :class:`AccessDenied` unless ``name_api`` is allowed."""
        if name + "_api" not in self.allowed:
            raise AccessDenied()
        if name in self._ids:
            return self._ids[name]
        if name not in self.registry:  # indexer mode serves fewer sets
            raise ApiError(f"API set '{name}' is not served by this node")
        self.apis.append(self._instantiate(name))
        self._ids[name] = len(self.apis) - 1
        return self._ids[name]

    def _instantiate(self, name: str) -> ApiSet:
        return self.registry[name](self.node, self)

    # -- dispatch ---------------------------------------------------------
    def resolve(self, request: Request) -> ApiSet:
        """The API set instance a request addresses.  A string is a login
        accessor name (``history``; ``history_api`` accepted too)."""
        api = request.api
        if isinstance(api, str):
            name = api[:-4] if api.endswith("_api") else api
            if name == "login":
                return self.apis[1]
            if name not in ACCESSORS:
                raise ApiError(f"Unknown API set '{api}'")
            api = self.api_id(name)
        if not 0 <= api < len(self.apis):
            raise ApiError(f"No API set with id {api} on this connection")
        return self.apis[api]

    def invoke(self, request: Request) -> Any:
        """Call the function a request names, synchronously: returns its
        result, or a Deferred when the function is asynchronous; raises the
        error to map (RpcError / NodeAPIError / anything else = internal).
        A function the set does not define goes to the set's ``forward``
        when it has one (a gateway's forwarded set,
        :mod:`nodeapi.gateway.apis`), else is -32601."""
        api = request.api
        apis = self.apis
        if type(api) is int and 0 <= api < len(apis):  # the common case: a set id
            instance = apis[api]
        else:
            instance = self.resolve(request)
        function = request.function
        binding = instance._bindings.get(function)
        if binding is None:
            forward = instance.forward
            if forward is None:
                raise method_not_found(function, request.id)
            return forward(request)  # a gateway's set: the upstream answers
        request.api_name = instance.name
        return getattr(instance, function)(*binding.bind(request.args))

    # -- Session contract (callbacks) -------------------------------------
    def send_notice(self, callback_id: int, payload: Any) -> None:
        if not self.websocket or self._notice is None:
            raise ApiError("Callbacks need a WebSocket connection")
        if not self._closed:
            self._notice(callback_id, payload)

    def on_close(self, fn: Callable[[], None]) -> None:
        self._closers.append(fn)

    def close(self) -> None:
        """The connection is gone: close every set and run the closers."""
        if self._closed:
            return
        self._closed = True
        for api in self.apis:
            if api is not None:
                api.close()
        for fn in self._closers:
            fn()
        # the sets point back at this session: let go of them (and of the
        # connection's notice function) so nothing waits for the gc
        self._closers = []
        self.apis = []
        self._notice = None
