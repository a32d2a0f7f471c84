"""Argument checks shared by the API sets: object ids, JSON types, the
``api-limit-*`` options, public keys and transactions.

Graphene reference: bitshares-core libraries/protocol/object_id.cpp
(``space.type.instance`` parsing), libraries/app/database_api.cpp (the
``FC_ASSERT`` limit messages) and libraries/protocol/types.cpp
(``public_key_type``).  Every check raises :class:`~nodeapi.errors.ApiError`
with a message naming the bad argument; the lookups by name or id are
:mod:`nodeapi.api.lookup`.
"""

import os

from nodeapi.api.base import fc_bool
from nodeapi.errors import ApiError, ApiLimitExceeded, NodeAPIError, ProtocolError
from nodeapi.protocol.errors import InvalidObjectId, InvalidTime
from nodeapi.protocol.ids import ObjectId
from nodeapi.protocol.keys import public_key_bytes
from nodeapi.protocol.config import MAX_TIME
from nodeapi.protocol.times import parse_time


# Object kinds by "space.type" prefix, for error messages.
KINDS = {
    "1.2": "account", "1.3": "asset", "1.5": "committee member", "1.6": "witness",
    "1.7": "limit order", "1.15": "balance", "2.5": "account balance",
}


def id_key(oid: str) -> tuple:
    """Sort key of an object id string: ``(space, type, instance)`` as ints."""
    oid = ObjectId.parse(oid)
    return oid.space, oid.type, oid.instance


def parse_object_id(value, what: str = "object id") -> str:
    """``"space.type.instance"`` in canonical form (no leading zeros).

    :raises ApiError: ``value`` is not such a string (graphene
        ``object_id_type`` parsing: space and type 0..255, instance < 2**48).
    """
    if not isinstance(value, str) or value.count(".") != 2:
        raise ApiError(f"Invalid {what} {value!r}: expected space.type.instance, e.g. 1.2.0")
    try:
        return str(ObjectId.parse(value))
    except InvalidObjectId:
        pass
    if all(part.isascii() and part.isdigit() for part in value.split(".")):
        raise ApiError(f"Invalid {what} {value!r}: number out of range")
    raise ApiError(f"Invalid {what} {value!r}: expected space.type.instance, e.g. 1.2.0")


def typed_id(value, space_type: str, what: str) -> str:
    """An object id of kind ``space_type`` (``"1.3"``), canonical.

    :raises ApiError: malformed, or an id of another kind.
    """
    oid = parse_object_id(value, what)
    if oid.rsplit(".", 1)[0] != space_type:
        kind = KINDS.get(space_type, space_type)
        raise ApiError(f"Invalid {what} {value!r}: expected a {kind} id {space_type}.N")
    return oid


def require_list(value, what: str) -> list:
    """``value`` if it is a JSON array, else :class:`ApiError`."""
    if not isinstance(value, list):
        raise ApiError(f"{what} must be an array, got {type(value).__name__}")
    return value


def require_hex(value, size: int, what: str) -> bytes:
    """``value`` as bytes if it is a hex string of ``size`` bytes (graphene
    fixed-size ids, hashes, commitments), else :class:`ApiError`."""
    if isinstance(value, str) and len(value) == 2 * size:
        try:
            return bytes.fromhex(value)
        except ValueError:
            pass
    raise ApiError(f"Invalid {what} {value!r}: expected {2 * size} hex digits")


def require_str(value, what: str) -> str:
    """``value`` if it is a string, else :class:`ApiError`."""
    if not isinstance(value, str):
        raise ApiError(f"{what} must be a string, got {value!r}")
    return value


def require_path(value, what: str) -> str:
    """``value`` if it can name a file: a non-empty string without NUL
    (the operating system refuses NUL in a path), else :class:`ApiError`
    naming ``what``."""
    if not isinstance(value, str) or not value:
        raise ApiError(f"{what} must be a file name, got {value!r}")
    if "\x00" in value:
        raise ApiError(f"{what} must not contain a NUL character")
    return value


#: longest file name ``output_path`` takes, in UTF-8 bytes (NAME_MAX of
#: Linux file systems)
MAX_FILE_NAME = 255


def output_path(directory, value, what: str) -> str:
    """The path under ``directory`` (the ``api-output-dir`` option, fixed
    at start) of the file an API call names ``value``: no path ever comes
    from a caller, only a plain file name.

    :raises ApiError: ``directory`` is None (the node was started without
        ``--api-output-dir``), or ``value`` is not a plain file name: not
        a string, empty, longer than :data:`MAX_FILE_NAME` bytes, holding
        a path separator (``/``, ``\\``), NUL or another control
        character, or ``..``, or starting with ``.``."""
    if directory is None:
        raise ApiError(f"{what}: this node writes no files named by RPC; its operator "
                       f"names a directory for them with --api-output-dir")
    if not isinstance(value, str) or not value:
        raise ApiError(f"{what} must be a plain file name, got {value!r}")
    if ("/" in value or "\\" in value or ".." in value or value.startswith(".")
            or any(ord(c) < 32 or ord(c) == 127 for c in value)
            or len(value.encode("utf-8", "surrogatepass")) > MAX_FILE_NAME):
        raise ApiError(f"{what} must be a plain file name (no '/', '\\', '..', NUL or "
                       f"control characters, no leading '.', at most {MAX_FILE_NAME} "
                       f"bytes), got {value[:100]!r}; it is created in --api-output-dir")
    return os.path.join(directory, value)


def require_name_or_id(value, what: str) -> str:
    """``value`` if it can name an account or asset: a non-empty string.

    graphene reads these arguments as ``std::string`` (fc fails to convert
    an object or array, and a number would then fail as an object id) and
    ``get_account_from_string`` / ``get_asset_from_string`` assert
    ``name_or_id.size() > 0``.

    :raises ApiError: naming ``what`` and the value.
    """
    if not isinstance(value, str) or not value:
        raise ApiError(f"{what} must be a non-empty name or id string, got {value!r}")
    return value


def optional_bool(value, what: str):
    """``None`` or a boolean (graphene ``optional<bool>``), read as fc's
    ``as_bool`` reads it (:func:`nodeapi.api.base.fc_bool`: numbers and
    ``"true"``/``"false"`` too)."""
    return None if value is None else fc_bool(value, what)


def parse_time_point(value, what: str) -> int:
    """An ``fc::time_point_sec`` argument (``"YYYY-MM-DDTHH:MM:SS"``, UTC,
    fc's ``from_iso_string``) -> seconds since the epoch (0 to 2^32-1).

    :raises ApiError: naming ``what`` and the value.
    """
    try:
        seconds = parse_time(value)
    except InvalidTime:
        raise ApiError(f"{what}: expected a UTC time YYYY-MM-DDTHH:MM:SS, got {value!r}") from None
    if not 0 <= seconds <= MAX_TIME:
        raise ApiError(f"{what}: {value!r} is out of range")
    return seconds


def check_limit(limit: int, configured: int) -> int:
    """graphene's ``FC_ASSERT( limit <= configured_limit, "limit can not be
    greater than ${configured_limit}" )``; negative limits are errors too."""
    if limit < 0:
        raise ApiError(f"limit must not be negative, got {limit}")
    if limit > configured:
        raise ApiLimitExceeded(configured)
    return limit


def check_count(count: int, configured: int, noun: str) -> None:
    """graphene's "Number of querying <noun> can not be greater than N"."""
    if count > configured:
        raise ApiError(f"Number of querying {noun} can not be greater than {configured}")


def check_public_key(key, prefix: str) -> str:
    """``key`` if it is a public key string of this chain (``TEST6MRy...``);
    raises :class:`ApiError` otherwise (graphene ``public_key_type``)."""
    if not isinstance(key, str) or not key.startswith(prefix) or len(key) != len(prefix) + 50:
        raise ApiError(f"Invalid public key {key!r}: expected a {prefix}... key")
    try:
        public_key_bytes(key, prefix)
    except ProtocolError:
        raise ApiError(f"Invalid public key {key!r}: bad encoding or checksum") from None
    return key


def guarded(what: str, fn, *args):
    """Call ``fn(*args)``; malformed input (missing fields, wrong types) that
    makes the serializers fail becomes ``ApiError("Malformed <what>: ...")``;
    :class:`NodeAPIError` passes through."""
    try:
        return fn(*args)
    except NodeAPIError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, AssertionError,
            OverflowError) as exc:
        raise ApiError(f"Malformed {what}: {type(exc).__name__}: {exc}") from None


def require_trx(trx) -> dict:
    """``trx`` if it is a JSON object with the transaction fields."""
    if not isinstance(trx, dict):
        raise ApiError(f"trx must be a transaction object, got {type(trx).__name__}")
    missing = [k for k in ("ref_block_num", "ref_block_prefix", "expiration", "operations")
               if k not in trx]
    if missing:
        raise ApiError(f"Malformed transaction: missing {', '.join(missing)}")
    require_list(trx["operations"], "operations")
    return trx
