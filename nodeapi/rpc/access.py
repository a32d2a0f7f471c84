"""api-access: who may obtain which API sets (graphene ``api_access``,
bitshares-core libraries/app/include/graphene/app/api_access.hpp).

The file named by ``--api-access`` is JSON::

    {"permission_map": [
        ["bytemaster", {"password_hash_b64": "...", "password_salt_b64": "...",
                        "allowed_apis": ["database_api", "network_node_api"]}],
        ["*", {"password_hash_b64": "*", "password_salt_b64": "*",
               "allowed_apis": ["database_api"]}]]}

The rules (docs/rpc-access.rst "The api-access file", "Authentication" and
"Limits per user and per source address"; docs/wire-contract.rst section
2) are :meth:`ApiAccess.entry`'s, :meth:`Permission.accepts`' and
:func:`password_digest`'s; with no file, :meth:`ApiAccess.default`.
"""

import base64
import binascii
import hashlib
import hmac
import os
from typing import Optional

import attr
import orjson

from nodeapi.errors import ConfigError
from nodeapi.files import ACCESS_LIMIT, FileRefused, read_bounded
from nodeapi.rpc.limits import NO_LIMITS, ClientLimits

#: The API sets a client may obtain when no api-access file is configured
#: (graphene ``login_api`` default access).
DEFAULT_ALLOWED_APIS = frozenset({
    "database_api", "network_broadcast_api", "history_api", "orders_api",
    "custom_operations_api",
})

#: Every access name an api-access file may list.
KNOWN_APIS = frozenset({
    "database_api", "network_broadcast_api", "history_api", "network_node_api",
    "block_api", "asset_api", "crypto_api", "debug_api", "orders_api",
    "custom_operations_api", "devnet_api",
})


#: The salt hashed against when a login matches no salted entry (an unknown
#: user, or a ``*`` entry): the same work as a real check (8 bytes, the salt
#: length ``nodeapi-saltpass`` and graphene's examples use).
DUMMY_SALT = b"\x00nodeapi"


def password_digest(password: str, salt: bytes) -> bytes:
    """sha256(utf8(password) + salt): the raw 32 bytes behind
    ``password_hash_b64`` (docs/wire-contract.rst section 2)."""
    return hashlib.sha256(password.encode("utf-8") + salt).digest()


def hash_password(password: str, salt: bytes) -> str:
    """The ``password_hash_b64`` for ``password`` and raw ``salt`` bytes:
    base64 of sha256(utf8(password) + salt) (docs/wire-contract.rst section 2)."""
    return base64.b64encode(password_digest(password, salt)).decode("ascii")


@attr.s(frozen=True, slots=True, auto_attribs=True)
class Permission:
    """One ``permission_map`` entry.

    :ivar user: the user name, or ``*``.
    :ivar password_hash: the 32-byte sha256 digest, or None for ``*``
        (any password).
    :ivar salt: the raw salt bytes (empty for ``*``).
    :ivar allowed_apis: access names such as ``database_api``.
    :ivar limits: the entry's :class:`~nodeapi.rpc.limits.ClientLimits`
        (:data:`~nodeapi.rpc.limits.NO_LIMITS` without a ``limits`` key).
    """

    user: str
    password_hash: Optional[bytes]
    salt: bytes
    allowed_apis: frozenset
    limits: ClientLimits = NO_LIMITS

    def accepts(self, password: str) -> bool:
        """True if ``password`` matches this entry (constant-time compare).
        The password is hashed once either way, against
        :data:`DUMMY_SALT` for a ``*`` hash (see :meth:`ApiAccess.check`)."""
        if self.password_hash is None:
            password_digest(password, DUMMY_SALT)
            return True
        return hmac.compare_digest(password_digest(password, self.salt), self.password_hash)


@attr.s(frozen=True, slots=True)
class ApiAccess:
    """The parsed permission map; immutable and shared by all connections.

    :ivar permissions: user name -> :class:`Permission` (first entry wins).
    :ivar source: the file it came from, or ``None`` for the default.
    """

    permissions: dict = attr.ib()
    source: Optional[str] = attr.ib(default=None)
    # entry("", ""), matched once (see anonymous_entry())
    _anonymous: tuple = attr.ib(init=False, default=(), eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_anonymous", (self.entry("", ""),))

    def anonymous_entry(self) -> Optional[Permission]:
        """:meth:`entry` of ``("", "")``, the login of a connection or
        HTTP request without credentials (docs/wire-contract.rst section
        1), matched once when the map is built: the map never changes, and
        the empty credentials are no secret whose existence timing could
        reveal."""
        return self._anonymous[0]

    def anonymous(self) -> Optional[frozenset]:
        """:meth:`check` of ``("", "")``, from :meth:`anonymous_entry`."""
        entry = self._anonymous[0]
        return entry.allowed_apis if entry is not None else None

    @classmethod
    def default(cls) -> "ApiAccess":
        """The access used without a file: ``*``/``*`` with
        :data:`DEFAULT_ALLOWED_APIS`."""
        return cls({"*": Permission("*", None, b"", DEFAULT_ALLOWED_APIS)})

    @classmethod
    def open_to_all(cls) -> "ApiAccess":
        """``*``/``*`` with every set of :data:`KNOWN_APIS`, ``debug_api``
        included (benches and tests)."""
        return cls({"*": Permission("*", None, b"", KNOWN_APIS)}, "open to all")

    @classmethod
    def devnet_default(cls) -> "ApiAccess":
        """The access of ``--devnet`` without a file: ``*``/``*`` with
        every set of :data:`KNOWN_APIS` but ``debug_api`` (its functions
        rewrite any object; an api-access file grants it)."""
        return cls({"*": Permission("*", None, b"", KNOWN_APIS - {"debug_api"})}, "--devnet")

    def check(self, user: str, password: str) -> Optional[frozenset]:
        """The allowed access names for ``user``/``password``, or None if
        the login fails (no entry for the user and no ``*``, or a wrong
        password).

        Hashes ``password`` exactly once on every path (an unknown user
        without ``*`` is hashed against :data:`DUMMY_SALT` and refused), so
        the time taken does not reveal whether ``user`` exists."""
        entry = self.entry(user, password)
        return entry.allowed_apis if entry is not None else None

    def entry(self, user: str, password: str) -> Optional[Permission]:
        """The :class:`Permission` a login with ``user``/``password``
        matches (the user's own, else ``*``: a known user with a wrong
        password does not fall back to ``*``), or None if the login fails;
        the same rules and the same single hash as :meth:`check`."""
        entry = self.permissions.get(user)
        if entry is None:
            entry = self.permissions.get("*")
            if entry is None:
                password_digest(password, DUMMY_SALT)
                return None
        return entry if entry.accepts(password) else None

    @property
    def has_limits(self) -> bool:
        """True when some entry has limits."""
        return any(p.limits for p in self.permissions.values())

    @classmethod
    def load(cls, path: str) -> "ApiAccess":
        """Read and validate an api-access file.

        :raises ConfigError: naming ``path`` and the problem (unreadable,
            not a regular file, over 16 MiB, not JSON, wrong shape, bad base64, hash not 32 bytes, unknown
            API name)."""
        try:
            raw = read_bounded(path, ACCESS_LIMIT)
        except OSError as exc:
            raise ConfigError(f"api-access file {path}: cannot read: {exc.strerror}") from None
        except FileRefused as exc:
            raise ConfigError(f"api-access file {path}: cannot read: {exc}") from None
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise ConfigError(f"api-access file {path}: not valid JSON: {exc}") from None
        return cls.from_json(doc, path)

    @classmethod
    def from_json(cls, doc, path: str = "<api-access>") -> "ApiAccess":
        """Validate a decoded api-access document; see :meth:`load`."""
        if not isinstance(doc, dict) or not isinstance(doc.get("permission_map"), list):
            raise ConfigError(f"api-access file {path}: expected an object with a "
                              f"'permission_map' array")
        permissions: dict = {}
        for index, pair in enumerate(doc["permission_map"]):
            where = f"api-access file {path}: permission_map[{index}]"
            if (not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], str)
                    or not isinstance(pair[1], dict)):
                raise ConfigError(f"{where}: expected [user, {{...}}]")
            user, entry = pair
            perm = _permission(user, entry, where)
            permissions.setdefault(user, perm)
        return cls(permissions, os.path.abspath(path) if path != "<api-access>" else None)


def _permission(user: str, entry: dict, where: str) -> Permission:
    for key in ("password_hash_b64", "password_salt_b64", "allowed_apis"):
        if key not in entry:
            raise ConfigError(f"{where}: missing '{key}'")
    apis = entry["allowed_apis"]
    if not isinstance(apis, list) or not all(isinstance(a, str) for a in apis):
        raise ConfigError(f"{where}: 'allowed_apis' must be an array of strings")
    unknown = sorted(set(apis) - KNOWN_APIS)
    if unknown:
        raise ConfigError(f"{where}: unknown API name(s) {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(KNOWN_APIS))}")
    hash_b64, salt_b64 = entry["password_hash_b64"], entry["password_salt_b64"]
    if not isinstance(hash_b64, str) or not isinstance(salt_b64, str):
        raise ConfigError(f"{where}: password_hash_b64 and password_salt_b64 must be strings")
    limits = ClientLimits.from_json(entry["limits"], where) if "limits" in entry else NO_LIMITS
    if hash_b64 == "*":
        return Permission(user, None, b"", frozenset(apis), limits)
    try:
        digest = base64.b64decode(hash_b64, validate=True)
        salt = base64.b64decode(salt_b64, validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError(f"{where}: password_hash_b64 or password_salt_b64 is not "
                          f"valid base64") from None
    if len(digest) != 32:
        raise ConfigError(f"{where}: password_hash_b64 must decode to 32 bytes "
                          f"(sha256), got {len(digest)}")
    return Permission(user, digest, salt, frozenset(apis), limits)
