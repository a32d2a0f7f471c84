"""Per-set and per-function routing and cache lifetimes of the gateway
(``--upstream-routes FILE``, read and checked at start:
:class:`UpstreamRoutes`), after jussi's ``upstreams`` (a ``name`` matched
against the JSON-RPC namespace, ``urls`` and ``ttl`` per name, jussi's
``ttl`` values).

A call takes the route of its ``set.function``, else of its set, else
none (every upstream, the default cache rule of
:mod:`nodeapi.gateway.cache`); a ``network_broadcast`` route may give
``urls`` but no ``ttl``; errors name the file and the entry.  The file's
shape, the set names and what each ``ttl`` means: README.rst, the
gateway's "Routes and cache lifetimes".
"""

import re
from typing import Any, Iterable, Optional

import attr
import orjson

from nodeapi.protocol.errors import InvalidPeerAddress
from nodeapi.protocol.node_address import parse_node_address

#: the sets a gateway forwards (nodeapi.gateway.apis.FORWARDED)
ROUTED_SETS = ("database", "network_broadcast", "network_node", "crypto", "asset", "block",
               "orders", "custom_operations", "history")
#: ttl values with a meaning of their own (jussi's)
DEFAULT_RULE, FOREVER, NEVER = -2, -1, 0
#: the largest number of routes a file may give
MAX_ROUTES = 1000
_FUNCTION = re.compile(r"[a-z_][a-z0-9_]{0,99}\Z")


class RoutesError(ValueError):
    """An ``--upstream-routes`` file that cannot be used (the text names
    the file and the entry)."""


@attr.s(frozen=True, auto_attribs=True)
class Route:
    """One entry: ``api`` (a set name), ``method`` (a function name, or
    None for the whole set), ``upstreams`` (``(host, port)`` pairs, or
    None: any), ``ttl`` (seconds or one of :data:`DEFAULT_RULE`,
    :data:`FOREVER`, :data:`NEVER`)."""

    api: str
    method: Optional[str] = None
    upstreams: Optional[frozenset] = None
    ttl: int = DEFAULT_RULE

    def serves(self, upstream) -> bool:
        """Whether ``upstream`` (anything with an ``address``) may answer."""
        if self.upstreams is None:
            return True
        return (upstream.address.host, upstream.address.port) in self.upstreams


#: the route of a call no entry names
ANYWHERE = Route("*")


@attr.s(frozen=True)
class UpstreamRoutes:
    """The routes of a file, by ``(set, function)`` and by set."""

    routes: tuple = attr.ib(default=())
    _by_name: dict = attr.ib(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_by_name",
                           {(r.api, r.method): r for r in self.routes})

    def route(self, api: str, method: str) -> Route:
        """The route of ``method`` of set ``api`` (module text)."""
        by_name = self._by_name
        return by_name.get((api, method)) or by_name.get((api, None)) or ANYWHERE

    @classmethod
    def load(cls, path: str, upstreams: Iterable) -> "UpstreamRoutes":
        """Read and check the file at ``path`` against the ``--upstream``
        addresses ``upstreams`` (:class:`NodeAddress` list).

        :raises RoutesError: unreadable, not JSON, or an entry that is not
            a route (its position and name in the text)."""
        try:
            with open(path, "rb") as f:
                text = f.read(1024 * 1024 + 1)
        except OSError as exc:
            raise RoutesError(f"{path}: cannot be read: {exc.strerror or exc}") from None
        if len(text) > 1024 * 1024:
            raise RoutesError(f"{path}: larger than 1 MiB")
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise RoutesError(f"{path}: not JSON: {exc}") from None
        return cls.from_json(data, upstreams, path)

    @classmethod
    def from_json(cls, data: Any, upstreams: Iterable, where: str = "routes"
                  ) -> "UpstreamRoutes":
        """As :meth:`load`, from the decoded JSON ``data``; ``where``
        names the source in errors."""
        if type(data) is dict:
            unknown = set(data) - {"upstreams"}
            if unknown or "upstreams" not in data:
                raise RoutesError(f"{where}: expected a list of routes or "
                                  f"{{\"upstreams\": [...]}}, got the keys "
                                  f"{', '.join(sorted(map(str, data)))}")
            data = data["upstreams"]
        if type(data) is not list:
            raise RoutesError(f"{where}: expected a list of routes, got "
                              f"{type(data).__name__}")
        if len(data) > MAX_ROUTES:
            raise RoutesError(f"{where}: {len(data)} routes, at most {MAX_ROUTES}")
        known = {(a.host, a.port) for a in upstreams}
        routes, seen = [], {}
        for i, entry in enumerate(data):
            route = _route(entry, known, f"{where}: route {i + 1}")
            name = (route.api, route.method)
            if name in seen:
                raise RoutesError(f"{where}: route {i + 1} ({_name(route)}) repeats route "
                                  f"{seen[name]}")
            seen[name] = i + 1
            routes.append(route)
        return cls(tuple(routes))


def _name(route: Route) -> str:
    return route.api if route.method is None else f"{route.api}.{route.method}"


def _route(entry: Any, known: set, where: str) -> Route:
    """One entry of the file (module text) -> :class:`Route`."""
    if type(entry) is not dict:
        raise RoutesError(f"{where}: expected an object with name, urls, ttl")
    name = entry.get("name")
    if type(name) is not str:
        raise RoutesError(f"{where}: needs a \"name\" (an API set or set.function)")
    where = f"{where} ({name!r})"
    unknown = set(entry) - {"name", "urls", "ttl"}
    if unknown:
        raise RoutesError(f"{where}: unknown keys {', '.join(sorted(unknown))} "
                          f"(known: name, urls, ttl)")
    api, _, method = name.partition(".")
    api = api[:-4] if api.endswith("_api") else api
    if api not in ROUTED_SETS:
        raise RoutesError(f"{where}: {api!r} is not an API set the gateway forwards "
                          f"({', '.join(ROUTED_SETS)})")
    if method and not _FUNCTION.match(method):
        raise RoutesError(f"{where}: {method!r} is not a function name")
    ups = None
    if "urls" in entry:
        urls = entry["urls"]
        if type(urls) is not list or not urls or not all(type(u) is str for u in urls):
            raise RoutesError(f"{where}: \"urls\" must be a non-empty list of ws:// URLs")
        ups = set()
        for url in urls:
            try:
                address = parse_node_address(url)
            except InvalidPeerAddress as exc:
                raise RoutesError(f"{where}: {url!r}: {exc}") from None
            if (address.host, address.port) not in known:
                raise RoutesError(f"{where}: {url!r} is not one of the --upstream nodes")
            ups.add((address.host, address.port))
        ups = frozenset(ups)
    ttl = entry.get("ttl", DEFAULT_RULE)
    if type(ttl) is not int or ttl < DEFAULT_RULE or ttl > 365 * 86400:
        raise RoutesError(f"{where}: \"ttl\" must be whole seconds (at most a year), 0 "
                          f"(never kept), -1 (kept for good) or -2 (kept once final), "
                          f"got {ttl!r}")
    if api == "network_broadcast" and ttl != DEFAULT_RULE:
        raise RoutesError(f"{where}: broadcasts are never cached: no \"ttl\"")
    return Route(api, method or None, ups, ttl)
