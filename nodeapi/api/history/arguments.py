"""Argument readings and checks shared by the sections of the history API
set (:mod:`nodeapi.api.history`).

Graphene reference: bitshares-core libraries/app/api.cpp (``history_api``):
the limit is checked first against the node's ``api-limit-*`` option
(``limit can not be greater than N``, :class:`~nodeapi.errors.ApiLimitExceeded`),
operation ids are ``"1.11.N"`` strings read as fc reads an ``object_id``,
integers as fc's ``uint32_t`` / ``uint64_t``, times as fc
``time_point_sec`` strings (``YYYY-MM-DDTHH:MM:SS``).
"""

from typing import Any

from nodeapi.api.arguments import parse_time_point
from nodeapi.api.base import fc_int
from nodeapi.errors import ApiError, ApiLimitExceeded

_OHI = "1.11."
U16 = (1 << 16) - 1
U32 = (1 << 32) - 1
U64 = (1 << 64) - 1


def parse_operation_history_id(value: Any, name: str) -> int:
    """``"1.11.N"`` -> N.  An integer is taken as the instance.

    ``"1.11.-N"`` is read as fc reads it (``fc::to_uint64`` is boost's
    ``lexical_cast<uint64_t>``, which wraps a negative number modulo 2^64;
    bitshares-core libraries/protocol/include/graphene/protocol/object_id.hpp
    ``from_variant``): ``2^64 - N``, an instance beyond every operation, so
    the history functions start from the newest.  python-bitshares' asyncio
    ``Account.history()`` sends ``"1.11.-1"``.

    :raises ApiError: anything else (bad type, other space/type, bad digits).
    """
    if isinstance(value, bool):
        raise ApiError(f"{name}: expected an operation history id 1.11.N, got {value!r}")
    if isinstance(value, int):
        if 0 <= value <= U64:
            return value
    elif isinstance(value, str) and value.startswith(_OHI):
        digits = value[len(_OHI):]
        negative = digits.startswith("-")
        if negative:
            digits = digits[1:]
        if digits.isdigit() and digits.isascii() and len(digits) <= 20:
            n = int(digits)
            if n <= U64:
                return (-n) % (U64 + 1) if negative else n
    raise ApiError(f"{name}: expected an operation history id 1.11.N, got {value!r}")


def unsigned(value: int, name: str, bound: int = U64) -> int:
    """``value`` (an integer) if within ``0..bound``.

    :raises ApiError: out of range."""
    if value < 0 or value > bound:
        raise ApiError(f"{name}: {value} is out of range 0..{bound}")
    return value


def uint(value, what: str, bound: int) -> int:
    """``value`` read as an fc integer (:func:`~nodeapi.api.base.fc_int`)
    within ``0..bound``.

    :raises ApiError: not an integer, or out of range."""
    value = fc_int(value, what)
    if not 0 <= value <= bound:
        raise ApiError(f"{what}: expected an integer 0..{bound}, got {value!r}")
    return value


def optional_int(value, what: str):
    """An optional fc integer: None or :func:`~nodeapi.api.base.fc_int`."""
    return None if value is None else fc_int(value, what)


def optional_time(value, what: str):
    """An optional fc ``time_point_sec`` (null or a string) -> seconds or
    None (:func:`~nodeapi.api.arguments.parse_time_point`)."""
    return None if value is None else parse_time_point(value, what)


def check_limit(node, option: str, limit: int) -> int:
    """``limit`` (an integer) if at most ``node.limits.<option>``.

    :raises ApiError: outside ``0..2^32-1``.
    :raises ApiLimitExceeded: above the configured limit."""
    unsigned(limit, "limit", U32)
    configured = getattr(node.limits, option)
    if limit > configured:
        raise ApiLimitExceeded(configured)
    return limit


def limit_or_default(node, limit, option: str) -> int:
    """graphene's ``optional<uint32_t> limit``: ``node.limits.<option>``
    when ``limit`` is null, else ``limit`` read as an fc integer and checked
    against it (:func:`check_limit`)."""
    configured = getattr(node.limits, option)
    if limit is None:
        return configured
    limit = uint(limit, "limit", U32)
    if limit > configured:
        raise ApiLimitExceeded(configured)
    return limit


def market_plugin(node):
    """The node's ``market_history`` plugin.

    :raises ApiError: ``Market history plugin is not enabled`` without it."""
    plugin = node.plugins.get("market_history")
    if plugin is None:
        raise ApiError("Market history plugin is not enabled")
    return plugin
