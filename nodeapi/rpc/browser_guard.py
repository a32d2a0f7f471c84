"""What keeps web pages away from the RPC port (:class:`BrowserGuard`):
the ``Host`` and ``Origin`` headers and the ``Content-Type`` of POST
bodies, checked before anything is parsed on both transports (the
devnet's faucet included), as geth checks ``--http.vhosts`` and
``--ws.origins``.

Why: a node on 127.0.0.1 is reachable from every page its user's browser
opens; a page can open a WebSocket to it (browsers apply no same-origin
policy to WebSockets), POST a ``text/plain`` body without a CORS preflight,
or rebind its own DNS name to 127.0.0.1 (then its requests carry ``Host:
evil.example``).  So a request is refused when its ``Host`` (without the
port) is not in ``--rpc-allowed-hosts``, when it carries an ``Origin`` no
rule of ``--rpc-allowed-origins`` matches (a host name, ``scheme://host[:port]``
or ``null``), or when it is a POST whose type is not ``application/json``
(an untyped one passes only without an ``Origin``).  A request without
``Host`` or without ``Origin`` passes that check: browsers send both on
these requests, and software that leaves them out (python-bitshares, curl)
could send any value.  The options, their defaults and the refusals (403, 415,
JSON-RPC -32600 naming the header and the option): docs/rpc-access.rst
"Requests from web pages".
"""

import re
from typing import Optional
from urllib.parse import urlsplit

import attr

#: The names every default list holds.
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
#: ``interface=`` values that bind every interface (no name to add).
ANY_INTERFACE = ("", "0.0.0.0", "::", "0:0:0:0:0:0:0:0")
#: The one media type of a JSON-RPC POST body.
JSON_MEDIA_TYPE = "application/json"

_NAME = re.compile(r"[a-z0-9_.\-:]+")


@attr.s(frozen=True, slots=True, auto_attribs=True)
class OriginRule:
    """One ``--rpc-allowed-origins`` entry: ``host`` (lower case, IPv6
    without brackets; ``null`` for the null origin), and optionally
    ``scheme`` and ``port`` (None: any)."""

    host: str
    scheme: Optional[str] = None
    port: Optional[int] = None

    def matches(self, scheme: str, host: str, port: Optional[int]) -> bool:
        """Whether an ``Origin`` of ``scheme``, ``host`` (lower case, IPv6
        without brackets) and ``port`` (the scheme's default when the origin
        has none) matches: the same host, and the scheme and port when the rule
        names them."""
        return (self.host == host and (self.scheme is None or self.scheme == scheme)
                and (self.port is None or self.port == port))


def _bare_host(host: str) -> str:
    """``host`` lower case, IPv6 brackets and a trailing dot dropped."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host[:-1] if host.endswith(".") and len(host) > 1 else host


def parse_host_rule(text: str) -> str:
    """One ``--rpc-allowed-hosts`` entry: ``*`` or a host name or address
    (lower-cased, IPv6 brackets dropped).

    :raises ValueError: empty, or not a host name (a port, a scheme, a
        path, spaces)."""
    text = text.strip()
    if text == "*":
        return text
    host = _bare_host(text)
    if not host or not _NAME.fullmatch(host) or (":" in host and not text.startswith("[")
                                                  and host.count(":") < 2):
        raise ValueError(f"{text!r} is not a host name (e.g. localhost, node.example.org, "
                         f"::1, or * for any)")
    return host


def parse_origin_rule(text: str):
    """One ``--rpc-allowed-origins`` entry: ``*``, ``null``, a host name, or
    ``scheme://host[:port]`` -> ``"*"`` or an :class:`OriginRule`.

    :raises ValueError: naming the entry and the forms expected."""
    text = text.strip()
    if text == "*":
        return text
    if text.lower() == "null":
        return OriginRule("null")
    if "://" not in text:
        return OriginRule(parse_host_rule(text))
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        parts = port = None
    if (parts is None or parts.scheme not in ("http", "https") or not parts.hostname
            or parts.path not in ("", "/") or parts.query or parts.fragment
            or parts.username or parts.password):
        raise ValueError(f"{text!r} is not an origin (e.g. localhost, "
                         f"http://localhost:3000, null, or * for any)")
    return OriginRule(parse_host_rule(f"[{parts.hostname}]" if ":" in parts.hostname
                                      else parts.hostname), parts.scheme, port)


def endpoint_host(endpoint: str) -> Optional[str]:
    """The address a Twisted endpoint string binds (its ``interface=``,
    unescaped, lower case), or None when it binds every interface or is
    not a TCP endpoint."""
    match = re.search(r"(?:^|:)interface=((?:\\.|[^:\\])*)", endpoint or "")
    if not match:
        return None
    host = _bare_host(match.group(1).replace("\\", ""))
    return None if host in ANY_INTERFACE else host


def media_type(header: Optional[bytes]) -> Optional[str]:
    """The media type of a ``Content-Type`` value (lower case, parameters
    dropped), or None without a header."""
    if header is None:
        return None
    return header.decode("latin-1").split(";", 1)[0].strip().lower()


@attr.s(frozen=True, slots=True)
class BrowserGuard:
    """The three checks (module text).

    :ivar hosts: allowed host names (lower case), or None: any.
    :ivar origins: allowed :class:`OriginRule`\\ s, or None: any.
    """

    hosts: Optional[frozenset] = attr.ib()
    origins: Optional[tuple] = attr.ib()

    @classmethod
    def from_options(cls, hosts=(), origins=(), endpoint: str = "") -> "BrowserGuard":
        """The guard of ``--rpc-allowed-hosts`` and ``--rpc-allowed-origins``
        (lists of entries as the options give them; empty: the defaults of
        the module text for ``endpoint``, the ``--rpc-endpoint`` string).

        :raises ValueError: an entry that is neither a host nor an origin."""
        bound = endpoint_host(endpoint)
        defaults = LOOPBACK_NAMES + ((bound,) if bound and bound not in LOOPBACK_NAMES else ())
        host_rules = [parse_host_rule(h) for h in hosts] or list(defaults)
        origin_rules = [parse_origin_rule(o) for o in origins] or [OriginRule(h)
                                                                    for h in defaults]
        return cls(None if "*" in host_rules else frozenset(host_rules),
                   None if "*" in origin_rules else tuple(origin_rules))

    @property
    def loopback_only(self) -> bool:
        """True when only loopback names are allowed as hosts."""
        return self.hosts is not None and self.hosts <= set(LOOPBACK_NAMES)

    def host_refusal(self, request) -> Optional[str]:
        """None when ``request``'s ``Host`` is allowed, else the error text."""
        if self.hosts is None:
            return None
        header = request.requestHeaders.getRawHeaders(b"host")
        if not header:
            return None
        raw = header[-1].decode("latin-1")
        if len(header) == 1 and self._host_of(raw) in self.hosts:
            return None
        return (f"Host {raw[:100]!r} is not allowed on this node (a web page using a "
                f"rebound DNS name?): allowed are {', '.join(sorted(self.hosts))} "
                f"(--rpc-allowed-hosts; '*' allows any)")

    @staticmethod
    def _host_of(value: str) -> str:
        value = value.strip()
        if value.startswith("["):
            return _bare_host(value[:value.find("]") + 1])
        return _bare_host(value.rsplit(":", 1)[0] if value.count(":") == 1 else value)

    def origin_refusal(self, request) -> Optional[str]:
        """None when ``request`` has no ``Origin`` or an allowed one, else
        the error text."""
        header = request.requestHeaders.getRawHeaders(b"origin")
        if not header or self.origins is None:
            return None
        raw = header[-1].decode("latin-1").strip()
        if len(header) == 1 and self._origin_allowed(raw):
            return None
        allowed = ", ".join(r.host if r.scheme is None else
                            f"{r.scheme}://{r.host}" + (f":{r.port}" if r.port else "")
                            for r in self.origins)
        return (f"Origin {raw[:100]!r} is not allowed on this node (a web page on another "
                f"site?): allowed are {allowed} (--rpc-allowed-origins; '*' allows any)")

    def _origin_allowed(self, raw: str) -> bool:
        if raw.lower() == "null":
            return any(r.host == "null" for r in self.origins)
        try:
            parts = urlsplit(raw)
            scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
        except ValueError:
            return False
        if not host:
            return False
        port = port or {"http": 80, "https": 443}.get(scheme)
        host = _bare_host(host)
        return any(rule.matches(scheme, host, port) for rule in self.origins)

    @staticmethod
    def content_type_refusal(request) -> Optional[str]:
        """None when a POST's body is declared JSON (or undeclared from a
        client without ``Origin``), else the error text; other methods
        pass."""
        if request.method != b"POST":
            return None
        header = request.requestHeaders.getRawHeaders(b"content-type")
        kind = media_type(header[-1]) if header else None
        if kind == JSON_MEDIA_TYPE and len(header) == 1:
            return None
        if kind is None and not request.requestHeaders.hasHeader(b"origin"):
            return None
        shown = "none" if kind is None else repr(header[-1].decode("latin-1")[:100])
        return (f"Unsupported Content-Type {shown}: a JSON-RPC body must be sent as "
                f"Content-Type: application/json (curl: -H 'Content-Type: application/json')")
