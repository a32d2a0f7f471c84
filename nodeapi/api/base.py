"""The API set plumbing shared by every set: function registration and
positional argument binding.

An API set is a class deriving from :class:`ApiSet` whose public functions are
methods decorated with :func:`api_function`.  One instance is created per
connection (per HTTP request) by the RPC layer, like graphene's ``login_api``
creates its sets per session, so an instance may keep per-connection state
(callbacks).  Functions take positional arguments only and return a JSON-ready
value or a Deferred firing with one.

Argument rules (wire-contract section 3): extra arguments are ignored;
trailing arguments may be left out only when all of them have defaults;
a parameter annotated ``int`` accepts a numeric string.  Violations raise
:class:`nodeapi.errors.ApiError`.
"""

import inspect
from typing import Any, Callable, ClassVar

from nodeapi.errors import ApiError

_MARK = "_nodeapi_api_function"


def api_function(func: Callable) -> Callable:
    """Mark a method of an :class:`ApiSet` as callable over RPC under its own
    name.  Binding metadata is computed once, when the class is created."""
    setattr(func, _MARK, True)
    return func


class _Binding:
    """How to bind a list of JSON arguments to one function's parameters."""

    __slots__ = ("name", "required", "params", "int_params")

    def __init__(self, func: Callable) -> None:
        sig = inspect.signature(func)
        params = [p for p in sig.parameters.values() if p.name != "self"]
        for p in params:
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise TypeError(f"API function {func.__name__}: positional parameters only")
        self.name = func.__name__
        self.params = [p.name for p in params]
        self.required = sum(1 for p in params if p.default is p.empty)
        self.int_params = frozenset(
            i for i, p in enumerate(params) if p.annotation in (int, "int")
        )

    def bind(self, args: list) -> list:
        """Return the argument list to call with; raise ApiError if too short."""
        if not self.params:  # most polled functions take nothing: extra args ignored
            return ()
        if len(args) < self.required:
            missing = ", ".join(self.params[len(args):self.required])
            raise ApiError(
                f"{self.name}: missing argument(s) {missing} "
                f"(takes {self.required} to {len(self.params)}, got {len(args)})"
            )
        args = list(args[: len(self.params)])
        for i in self.int_params:
            if i < len(args):
                args[i] = _to_int(args[i], self.params[i])
        return args


def _to_int(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise ApiError(f"argument {name}: expected an integer, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value, 10)
        except ValueError:
            pass
    raise ApiError(f"argument {name}: expected an integer, got {value!r}")


class ApiSet:
    """Base class of every API set.

    Subclasses set :attr:`name` to the login accessor name (``"database"``,
    ``"history"``, ...); the access name checked against ``allowed_apis`` is
    ``name + "_api"``.  The constructor receives the shared
    :class:`nodeapi.node.Node` and the per-connection
    :class:`nodeapi.api.base.Session`.
    """

    name: ClassVar[str] = ""
    _bindings: ClassVar[dict[str, _Binding]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        bindings: dict[str, _Binding] = {}
        for klass in reversed(cls.__mro__):
            for attr_name, value in vars(klass).items():
                if callable(value) and getattr(value, _MARK, False):
                    bindings[attr_name] = _Binding(value)
        cls._bindings = bindings

    def __init__(self, node: Any, session: "Session") -> None:
        self.node = node
        self.session = session

    @property
    def access_name(self) -> str:
        return self.name + "_api"

    @classmethod
    def function_names(cls) -> list[str]:
        """The sorted names of the functions this set provides."""
        return sorted(cls._bindings)

    def has_function(self, function: str) -> bool:
        return function in self._bindings

    def call(self, function: str, args: list) -> Any:
        """Call ``function`` with positional JSON ``args``.

        :raises KeyError: the set has no such function (the RPC layer answers
            -32601 ``Method not found``).
        :raises nodeapi.errors.NodeAPIError: the function failed.
        """
        binding = self._bindings[function]
        return getattr(self, function)(*binding.bind(args))

    def close(self) -> None:
        """Called when the connection closes: drop callbacks and observers."""


class Session:
    """Per-connection state visible to API sets.

    The RPC layer creates one per WebSocket connection and one per HTTP
    request.  :ivar websocket: True if notices can be delivered.
    :ivar user: the logged-in user name or None.
    """

    websocket: bool = False
    user: Any = None

    def send_notice(self, callback_id: int, payload: Any) -> None:
        """Deliver ``{"method": "notice", "params": [callback_id, [payload]]}``
        to this connection (wire-contract section 5).  No-op once closed."""
        raise ApiError("callbacks need a WebSocket connection")

    def on_close(self, fn: Callable[[], None]) -> None:
        """Register ``fn`` to run once when the connection closes."""
