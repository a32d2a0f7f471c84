"""The API set plumbing shared by every set: function registration and
positional argument binding.

An API set is a class deriving from :class:`ApiSet` whose public functions are
methods decorated with :func:`api_function`, its own or those of its
*sections*: a set serving many functions (``database``, ``history``)
declares the classes grouping them, one per concept, each once as a
:class:`section` class attribute naming its dependencies (the node, then
the session, a subscriptions object...), built on first use.  The set's
dispatch table holds the functions of all of them.  One set instance is
created per connection (per HTTP request) by the RPC layer, like graphene's
``login_api`` creates its sets per session, so an instance may keep
per-connection state (callbacks).  Functions take positional arguments only and return a JSON-ready
value or a Deferred firing with one.

Argument rules (wire-contract section 3): extra arguments are ignored;
trailing arguments may be left out only when all of them have defaults.
Scalars are read as bitshares-fc reads a variant (fc/src/variant.cpp):
a parameter annotated ``int`` (``int | None`` for an ``optional<>``) goes
through :func:`fc_int` (``as_int64``/``as_uint64``: a number, a decimal
string, a double truncated toward zero, a boolean as 0/1), one annotated
``bool`` (``bool | None``) through :func:`fc_bool` (``as_bool``).  This is
the one place where API arguments are coerced; the argument helpers of
:mod:`nodeapi.api.arguments` use the same two functions.  Violations raise
:class:`nodeapi.errors.ApiError`.
"""

import inspect
import math
from typing import Any, Callable, ClassVar, Optional

from nodeapi.api.budget import UNLIMITED, SubscriptionBudget
from nodeapi.errors import ApiError

_MARK = "_nodeapi_api_function"
_SHARED = "_nodeapi_shared"


def api_function(func: Optional[Callable] = None, *, shared: Any = None) -> Callable:
    """Mark a method of an :class:`ApiSet` (or of a section) as callable
    over RPC under its own name: ``@api_function`` or
    ``@api_function(shared=...)``.  Binding metadata is computed once, when
    the class is created.

    :param shared: whether identical calls (same set, function and
        arguments) made while the chain state is unchanged may share one
        encoded reply (:attr:`nodeapi.api.answers.ApiAnswers.replies`):
        None (never), True (the answer depends only on the chain state and
        the arguments, and the call changes nothing), or a function
        ``shared(owner, args) -> bool`` telling it for one call (``owner``
        is the object the method belongs to, ``args`` the call's JSON
        arguments), for a function that changes something only for some
        arguments (``get_objects`` subscribing)."""

    def mark(f: Callable) -> Callable:
        setattr(f, _MARK, True)
        setattr(f, _SHARED, shared)
        return f

    return mark if func is None else mark(func)


# the 64-bit range fc reads integers in (int64_t and uint64_t together)
_INT64_MIN, _UINT64_MAX = -(1 << 63), (1 << 64) - 1


def fc_int(value: Any, name: str) -> int:
    """``value`` read as an integer the way bitshares-fc's
    ``variant::as_int64`` / ``as_uint64`` read it (fc/src/variant.cpp): an
    integer as is, a boolean as 0 or 1, a double truncated toward zero
    (python-bitshares sends ``lookup_accounts("", 1000.0)``), a string of
    decimal digits with an optional ``-`` (``fc::to_int64`` /
    ``to_uint64``).

    :raises ApiError: naming ``name``: any other string, an object, an
        array, null, NaN or infinity, or a value outside the 64-bit range
        (fc's casts of those are undefined; the range checks of the caller
        then apply to what is within it)."""
    t = type(value)
    if t is int:
        n = value
    elif t is bool:
        return int(value)
    elif t is float:
        if not math.isfinite(value):
            raise ApiError(f"argument {name}: expected an integer, got {value!r}")
        n = int(value)
    elif t is str:
        body = value[1:] if value[:1] == "-" else value
        if not (body.isascii() and body.isdigit()):
            raise ApiError(f"argument {name}: expected an integer, got {value!r}")
        n = int(value)
    else:
        raise ApiError(f"argument {name}: expected an integer, got {value!r}")
    if not _INT64_MIN <= n <= _UINT64_MAX:
        raise ApiError(f"argument {name}: {value!r} is out of the 64-bit integer range")
    return n


def fc_bool(value: Any, name: str) -> bool:
    """``value`` read as bitshares-fc's ``variant::as_bool`` reads it
    (fc/src/variant.cpp): a boolean as is, a number as ``!= 0``, the strings
    ``"true"`` and ``"false"`` (bitshares-explorer-api sends
    ``get_assets([ids], 0)``).

    :raises ApiError: any other string (fc: "Cannot convert string to
        bool"), an object or an array."""
    t = type(value)
    if t is bool:
        return value
    if t is int or t is float:
        return value != 0
    if t is str and value in ("true", "false"):
        return value == "true"
    raise ApiError(f"argument {name}: expected true or false, got {value!r}")


_INT_KINDS = (int, "int")
_OPTIONAL_INT_KINDS = (int | None, "int | None")
_BOOL_KINDS = (bool, "bool")
_OPTIONAL_BOOL_KINDS = (bool | None, "bool | None")


def _coercion(annotation: Any):
    """The coercion of a parameter annotated ``annotation``, or None."""
    if annotation in _INT_KINDS:
        return fc_int
    if annotation in _BOOL_KINDS:
        return fc_bool
    if annotation in _OPTIONAL_INT_KINDS:
        return lambda v, n: None if v is None else fc_int(v, n)
    if annotation in _OPTIONAL_BOOL_KINDS:
        return lambda v, n: None if v is None else fc_bool(v, n)
    return None


class _Binding:
    """How to bind a list of JSON arguments to one function's parameters."""

    __slots__ = ("name", "required", "params", "coercions", "shared")

    def __init__(self, func: Callable) -> None:
        sig = inspect.signature(func)
        params = [p for p in sig.parameters.values() if p.name != "self"]
        for p in params:
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise TypeError(f"API function {func.__name__}: positional parameters only")
        self.name = func.__name__
        #: :func:`api_function`'s ``shared``
        self.shared = getattr(func, _SHARED, None)
        self.params = [p.name for p in params]
        self.required = sum(1 for p in params if p.default is p.empty)
        self.coercions = tuple(
            (i, fn) for i, fn in enumerate(_coercion(p.annotation) for p in params)
            if fn is not None
        )

    def bind(self, args: list) -> list:
        """Return the argument list to call with; raise ApiError if too short
        or if an annotated argument does not convert (module docstring)."""
        if not self.params:  # most polled functions take nothing: extra args ignored
            return ()
        if len(args) < self.required:
            missing = ", ".join(self.params[len(args):self.required])
            raise ApiError(
                f"{self.name}: missing argument(s) {missing} "
                f"(takes {self.required} to {len(self.params)}, got {len(args)})"
            )
        args = list(args[: len(self.params)])
        n = len(args)
        for i, coerce in self.coercions:
            if i < n:
                args[i] = coerce(args[i], self.params[i])
        return args


def api_functions(klass: type) -> dict[str, Callable]:
    """``{name: function}`` of the :func:`api_function` methods of
    ``klass`` and its bases (a subclass' definition wins)."""
    found: dict[str, Callable] = {}
    for base in reversed(klass.__mro__):
        for attr_name, value in vars(base).items():
            if callable(value) and getattr(value, _MARK, False):
                found[attr_name] = value
    return found


class _SectionFunction:
    """The class attribute of an API set standing for a function ``name``
    one of its sections serves: read on a set instance, the method bound to
    the section instance the set provides under ``section``; kept in the
    instance's ``__dict__``, where later reads find it first."""

    __slots__ = ("section", "name", "func")

    def __init__(self, section: str, name: str, func: Callable) -> None:
        self.section = section
        self.name = name
        self.func = func

    def __get__(self, instance: Any, owner: Any = None) -> Callable:
        if instance is None:
            return self.func
        bound = self.func.__get__(getattr(instance, self.section))
        instance.__dict__[self.name] = bound
        return bound


class section:
    """Declares a section of an API set: ``objects = section(Objects,
    "subscriptions")`` in the set's class body.  Read on a set instance,
    the section instance, made on first use (a connection, an HTTP request,
    often calls one function) as ``klass(set.node, *needs)`` where each
    name in ``needs`` is read on the set (``"session"``, or another
    section: ``"subscriptions"``), then kept in the set's ``__dict__``.
    The set's :attr:`ApiSet.sections` is derived from these declarations.

    :param klass: a :class:`Section` subclass.
    :param needs: names of the set's attributes passed to ``klass`` after
        the node, in order."""

    __slots__ = ("klass", "needs", "name")

    def __init__(self, klass: type, *needs: str) -> None:
        self.klass = klass
        self.needs = needs
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        made = self.klass(instance.node, *(getattr(instance, n) for n in self.needs))
        instance.__dict__[self.name] = made
        return made


class Section:
    """A group of the functions of an API set, one concept (a graphene API
    section), over the node given to its constructor.  Sections needing
    more (the connection's session, its subscriptions object) take it as a
    further constructor argument and use nothing else of the set; what two
    sections share is a module function over the chain state.

    :ivar node: the shared :class:`nodeapi.node.Node`."""

    def __init__(self, node: Any) -> None:
        self.node = node

    @property
    def chain(self):
        """The node's :class:`~nodeapi.chain.chain.Chain` (read at each use:
        it is the node's, whatever the node holds now)."""
        return self.node.chain


class ApiSet:
    """Base class of every API set.

    Subclasses set :attr:`name` to the login accessor name (``"database"``,
    ``"history"``, ...); the access name checked against ``allowed_apis`` is
    ``name + "_api"``.  The constructor receives the shared
    :class:`nodeapi.node.Node` and the per-connection
    :class:`nodeapi.api.base.Session`.

    A subclass declares its sections as class attributes made with
    :class:`section` (module docstring); :attr:`sections`, derived from
    them when the class is made, maps their names to their classes, and
    the :func:`api_function` methods of those classes are functions of the
    set, called on the section instance.  Two sections (or a section and
    the set) serving one name is a :class:`TypeError` when the class is
    made.
    """

    name: ClassVar[str] = ""
    sections: ClassVar[dict[str, type]] = {}
    _bindings: ClassVar[dict[str, _Binding]] = {}
    #: ``fn(request)`` answering the functions the set does not define (a
    #: gateway's forwarded set, :mod:`nodeapi.gateway.apis`), or None.
    forward: ClassVar[Any] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        bindings = {name: _Binding(func) for name, func in api_functions(cls).items()}
        declared = {}
        for base in reversed(cls.__mro__):
            declared.update((n, v.klass) for n, v in vars(base).items()
                            if isinstance(v, section))
        served: dict[str, str] = {}
        for name_of_section, klass in declared.items():
            for name, func in api_functions(klass).items():
                if name in served or name in bindings:
                    raise TypeError(f"{cls.__name__}: function {name} of section "
                                    f"{name_of_section} is also served by "
                                    f"{served.get(name, cls.__name__)}")
                served[name] = name_of_section
                bindings[name] = _Binding(func)
                setattr(cls, name, _SectionFunction(name_of_section, name, func))
        cls.sections = declared
        cls._bindings = bindings

    def __init__(self, node: Any, session: "Session") -> None:
        self.node = node
        self.session = session

    @classmethod
    def function_names(cls) -> list[str]:
        """The sorted names of the functions this set provides."""
        return sorted(cls._bindings)

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
    :ivar budget: the :class:`~nodeapi.api.budget.SubscriptionBudget` that
        subscribed items are taken from (:data:`~nodeapi.api.budget.UNLIMITED`
        unless the RPC layer sets a limited one).
    """

    websocket: bool = False
    user: Any = None
    budget: SubscriptionBudget = UNLIMITED

    def send_notice(self, callback_id: int, payload: Any) -> None:
        """Deliver ``{"method": "notice", "params": [callback_id, [payload]]}``
        to this connection (wire-contract section 5).  No-op once closed.
        A payload object given to several sessions in one reactor turn is
        encoded once for all of them (:mod:`nodeapi.rpc.notices`): it must
        not change in between."""
        raise ApiError("callbacks need a WebSocket connection")

    def send_notices(self, notices: list) -> None:
        """Deliver ``[(callback_id, payload), ...]`` in order, like
        :meth:`send_notice` each (a transport may write them at once)."""
        for callback_id, payload in notices:
            self.send_notice(callback_id, payload)

    def on_close(self, fn: Callable[[], None]) -> None:
        """Register ``fn`` to run once when the connection closes."""
