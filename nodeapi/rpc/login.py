"""The login API set (id 1) and the per-connection RPC session.

:class:`RpcSession` is graphene's ``api_session_data`` plus the API id table
of ``fc::rpc::websocket_api_connection``: one per WebSocket connection, one
per HTTP request.  It logs in, hands out API ids (0 = database or dummy,
1 = login, then 2, 3, ... in the order sets are first requested) and
resolves parsed requests to API set functions (:meth:`RpcSession.target`;
the answer path is :mod:`nodeapi.rpc.answer`).

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
    :param notice: ``fn(callback_id, payload)`` sending a notice, WebSocket
        only; :param notices: ``fn([(callback_id, payload), ...])`` sending
        several at once (default: ``notice`` each).
    :param peer: the client's address (the failed-login line), or None.
    :param failed_logins: a :class:`nodeapi.rpc.failed_logins.FailedLogins`
        told of each failed login with a user name or password, or None.
    :param limit_book: the site's :class:`nodeapi.rpc.limits.LimitBook`,
        or None when no limit per user or address is configured.
    :ivar allowed: the access names the current login allows.
    :ivar user: the logged-in user name, or None.
    :ivar limits: this session's :class:`nodeapi.rpc.limits.SessionLimits`
        (also its subscription ``budget``), or None without a limit book.
    :ivar apis: by API id, the set's instance, or its class until the first
        call of one of its functions (:meth:`api_set`): an idle connection
        builds no set.
    """

    limits = None

    def __init__(self, node: Any, access: ApiAccess, registry: dict, websocket: bool = False,
                 notice: Optional[Callable[[int, Any], None]] = None,
                 notices: Optional[Callable[[list], None]] = None,
                 peer: Optional[str] = None, failed_logins: Any = None,
                 limit_book: Any = None) -> None:
        if limit_book is not None:
            self.limits = self.budget = limit_book.session(peer or "?", websocket)
        self.node = node
        self.peer, self.failed_logins = peer, failed_logins
        self.access = access
        self.registry = registry
        self.websocket = websocket
        self._notice = notice
        self._notices = notices
        self._closers: list = []
        self._closed = False
        self.user: Optional[str] = None
        self.allowed: frozenset = frozenset()
        # an API set's class until its first call makes the instance: an
        # idle connection holds none
        self.apis: list = [None, LoginApi]
        self._ids: dict = {"login": 1}

    # -- login ------------------------------------------------------------
    def login(self, user: str, password: str) -> bool:
        """Check credentials; success replaces the allowed set, failure
        logs out (docs/wire-contract.rst section 2).

        :raises ConnectionLimitExceeded: right credentials, but the entry's
            ``limits.connections`` WebSocket connections are logged in
            already; the session stays as it was."""
        entry = (self.access.anonymous_entry() if not user and not password
                 else self.access.entry(user, password))
        if entry is None:
            self.logout()
            if self.failed_logins is not None and (user or password):
                self.failed_logins.failed(self.peer or "?", user,
                                          "websocket" if self.websocket else "http")
            return False
        if self.limits is not None:
            self.limits.log_in(entry.user, entry.limits)
        self.user, self.allowed = user, entry.allowed_apis
        return True

    def logout(self) -> None:
        """Forget the login: no user, no API set allowed (what a failed
        :meth:`login` does, docs/wire-contract.rst section 2)."""
        self.user, self.allowed = None, frozenset()

    def auto_login(self, credentials: Optional[tuple]) -> None:
        """Log in at connect with Basic credentials or as ``("", "")``, then
        fix id 0: database if allowed, else dummy (docs/wire-contract.rst s. 1).

        :raises ConnectionLimitExceeded: as :meth:`login` (the WebSocket
            upgrade is then refused)."""
        self.login(*(credentials if credentials is not None else ("", "")))
        if "database_api" in self.allowed and "database" in self.registry:
            self.apis[0] = self.registry["database"]
            self._ids["database"] = 0
        else:
            self.apis[0] = DummyApi

    def api_id(self, name: str) -> int:
        """The id of set ``name`` on this connection, allocating it on first
        request; raises :class:`AccessDenied` unless ``name_api`` is allowed."""
        if name + "_api" not in self.allowed:
            raise AccessDenied()
        if name in self._ids:
            return self._ids[name]
        if name not in self.registry:  # indexer mode serves fewer sets
            raise ApiError(f"API set '{name}' is not served by this node")
        self.apis.append(self.registry[name])
        self._ids[name] = len(self.apis) - 1
        return self._ids[name]

    def api_set(self, api: int) -> ApiSet:
        """The instance of the set with id ``api``, made on first use."""
        instance = self.apis[api]
        if isinstance(instance, type):
            instance = self.apis[api] = instance(self.node, self)
        return instance

    # -- dispatch ---------------------------------------------------------
    def resolve(self, request: Request) -> ApiSet:
        """The API set instance a request addresses.  A string is a login
        accessor name (``history``; ``history_api`` accepted too)."""
        api = request.api
        if isinstance(api, str):
            name = api[:-4] if api.endswith("_api") else api
            if name == "login":
                return self.api_set(1)
            if name not in ACCESSORS:
                raise ApiError(f"Unknown API set '{api}'")
            api = self.api_id(name)
        if not 0 <= api < len(self.apis):
            raise ApiError(f"No API set with id {api} on this connection")
        return self.api_set(api)

    def target(self, request: Request) -> tuple:
        """``(set instance, binding)`` of the function a request names (the
        binding: :class:`nodeapi.api.base._Binding`, with the function's
        argument rules and its ``shared`` mark); sets ``request.api_name``.
        Every call passes here first: the session's limits count it.  A
        function the set does not define gives ``(set instance, None)`` when
        the set has a ``forward`` (a gateway's forwarded set,
        :mod:`nodeapi.gateway.apis`: the upstream answers), else is -32601.

        :raises CallRateExceeded: the session's limits refuse the call
            (:class:`nodeapi.rpc.limits.CallRateExceeded`).
        :raises RpcError: -32601 when the set has no such function.
        :raises ApiError: an unknown set, or one this login may not use."""
        if self.limits is not None:
            self.limits.call()
        api = request.api
        apis = self.apis
        if type(api) is int and 0 <= api < len(apis):  # the common case: a set id
            instance = apis[api]
            if isinstance(instance, type):  # its first call on this connection
                instance = self.api_set(api)
        else:
            instance = self.resolve(request)
        function = request.function
        binding = instance._bindings.get(function)
        if binding is None:
            if instance.forward is None:
                raise method_not_found(function, request.id)
            return instance, None  # a gateway's set: the upstream answers
        request.api_name = instance.name
        return instance, binding

    # -- Session contract (callbacks) -------------------------------------
    def send_notice(self, callback_id: int, payload: Any) -> None:
        """Session contract (:meth:`nodeapi.api.base.Session.send_notice`): the
        notice to the connection's notice function; nothing once closed.

        :raises ApiError: not a WebSocket session."""
        if not self.websocket or self._notice is None:
            raise ApiError("Callbacks need a WebSocket connection")
        if not self._closed:
            self._notice(callback_id, payload)

    def send_notices(self, notices: list) -> None:
        """Session contract (:meth:`nodeapi.api.base.Session.send_notices`):
        the notices to the connection's batch function at once (without one,
        each by :meth:`send_notice`); nothing once closed."""
        if self._notices is None:
            super().send_notices(notices)
        elif not self._closed:
            self._notices(notices)

    def on_close(self, fn: Callable[[], None]) -> None:
        """Session contract: run ``fn`` once when the connection closes
        (:meth:`close`)."""
        self._closers.append(fn)

    def close(self) -> None:
        """The connection is gone: close every set and run the closers."""
        if self._closed:
            return
        self._closed = True
        if self.limits is not None:
            # the sets give their items back as they close; then the rest
            self._closers.append(self.limits.close)
        for api in self.apis:
            if api is not None and not isinstance(api, type):
                api.close()
        for fn in self._closers:
            fn()
        # the sets point back at this session: let go of them (and of the
        # connection's notice function) so nothing waits for the gc
        self._closers = []
        self.apis = []
        self._notice = self._notices = None
