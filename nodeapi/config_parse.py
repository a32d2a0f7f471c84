"""Value parsers (coercers) of the ``twistd nodeapi`` options.

Each ``parse_*`` takes the raw text of one option (command line or INI
value, see :mod:`nodeapi.config`) and returns the typed, normalized value,
or raises ``ValueError`` with a message that :class:`nodeapi.config.Options`
prefixes with the option name (and INI file and line).  Repeatable options'
parsers return lists.  Accepted forms follow bitshares' witness_node
options (``witness-id`` as ``"1.6.N"``, ``private-key`` as
``["PUBKEY", "WIF"]``, ``seed-node``), the docs/searchdb-plugin.rst
options and docs/wire-contract.rst section 6 (endpoints).
"""

import json
import re
import urllib.parse

from twisted.internet.endpoints import serverFromString

from nodeapi.chain import authority as auth
from nodeapi.chain.genesis import statistics_space
from nodeapi.history.retention import UNLIMITED
from nodeapi.protocol.errors import InvalidPeerAddress
from nodeapi.protocol.keys import public_key_bytes
from nodeapi.protocol.node_address import parse_node_address

KNOWN_PLUGINS = ("witness", "account_history", "market_history", "searchdb", "grouped_orders",
                 "custom_operations", "searchdb-objects")
#: bitshares-core plugin names nodeapi has no plugin of: accepted, then
#: dropped with a warning (``api_helper_indexes``: its lookups are always on
#: here, the warning says so; ``elasticsearch`` is ``searchdb``).
REFERENCE_PLUGINS = ("api_helper_indexes", "delayed_node", "snapshot", "debug_witness")
PLUGIN_ALIASES = {"elasticsearch": "searchdb", "es_objects": "searchdb-objects"}
_INDEX_FORBIDDEN = set('\\/*?"<>| ,#:')
_BOOLS = dict.fromkeys(("true", "yes", "on", "1"), True) | dict.fromkeys(
    ("false", "no", "off", "0"), False)


def _number(kind, lo, hi, what):
    def coerce(text):
        try:
            value = kind(str(text).strip())
        except ValueError:
            raise ValueError(f"{text!r} is not {what}") from None
        if not lo <= value <= hi:
            raise ValueError(f"{value} is not between {lo} and {hi}")
        return value
    return coerce


def parse_int(lo, hi=2 ** 31 - 1):
    """Coercer: an integer in [lo, hi]."""
    return _number(int, lo, hi, "an integer")


def parse_op_count(text) -> int:
    """Coercer: a count of operations, 0 to 2**64-1 (graphene ``uint64_t``);
    empty = 2**64-1, graphene's default ``-1``, i.e. unlimited."""
    text = parse_text(text)
    return UNLIMITED if text == "" else _number(int, 0, UNLIMITED, "an integer")(text)


def parse_statistics_type(text) -> int:
    """Coercer of ``account-statistics-type``: 7 (the specification's
    2.7.N) or 6 (graphene's 2.6.N), :data:`nodeapi.chain.genesis.STATISTICS_TYPES`."""
    value = parse_int(0, 255)(text)
    statistics_space(value)
    return value


#: Coercer: seconds, 0 (off) to one year.
parse_seconds = _number(float, 0, 86400 * 365, "a number of seconds")


def parse_bucket_sizes(text) -> tuple:
    """Coercer: a JSON array of seconds (0 to 2^32-1, numbers or numeric
    strings, as fc reads ``flat_set<uint32_t>``) -> ascending tuple without
    duplicates and without 0 (bitshares ``bucket-size``: 0 is dropped)."""
    raw = parse_text(text)
    try:
        values = json.loads(raw)
    except ValueError:
        values = None
    if not isinstance(values, list):
        raise ValueError(f"{raw!r} is not a JSON array of seconds, e.g. [60,300,3600]")
    sizes = set()
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValueError(f"{value!r} is not a number of seconds")
        sizes.add(parse_int(0, 2 ** 32 - 1)(value))
    return tuple(sorted(sizes - {0}))


def parse_bool(text) -> bool:
    """Coercer: true/false, yes/no, on/off, 1/0."""
    value = _BOOLS.get(str(text).strip().lower())
    if value is None:
        raise ValueError(f"{text!r} is not true or false")
    return value


def parse_text(text) -> str:
    """Coercer: a string; one pair of surrounding double quotes is removed."""
    text = str(text).strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    return text


def parse_endpoint(text) -> str:
    """``host:port`` (``[v6]:port``, ``:port`` = all interfaces) or a Twisted
    server endpoint string -> a Twisted endpoint string
    (``127.0.0.1:8090`` -> ``tcp:8090:interface=127.0.0.1``)."""
    text = parse_text(text)
    try:
        serverFromString(None, text)
        return text
    except ValueError as exc:
        endpoint_error = str(exc)
    except Exception as exc:  # e.g. ssl: with an unreadable certificate
        raise ValueError(f"bad endpoint {text!r}: {exc}") from None
    match = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d+)|([^:\s\[\]]*):(\d+)", text)
    if not match:
        raise ValueError(f"{text!r} is neither host:port nor an endpoint string "
                         f"({endpoint_error})")
    host = match.group(1) or match.group(3)
    port = parse_int(0, 65535)(match.group(2) or match.group(4))
    if not host:
        return f"tcp:{port}"
    if ":" in host:
        return f"tcp6:{port}:interface={host.replace(':', chr(92) + ':')}"
    return f"tcp:{port}:interface={host}"


def parse_optional_endpoint(text):
    """Like :func:`parse_endpoint`; empty or ``off`` -> None."""
    return None if parse_text(text).lower() in ("", "off", "none") else parse_endpoint(text)


def redact_url(text) -> str:
    """``text`` with any userinfo (``user:password@``) replaced by ``***@``,
    for messages: everything before the last ``@`` after the scheme goes,
    whatever the rest of the text looks like (malformed URLs included)."""
    text = str(text)
    head, at, tail = text.rpartition("@")
    if not at:
        return text
    scheme = re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", head)
    return (scheme.group(0) if scheme else "") + "***@" + tail


def parse_optional_url(text) -> str:
    """Like :func:`parse_url`; empty stays empty (another option's URL
    applies)."""
    return "" if not parse_text(text) else parse_url(text)


def parse_url(text) -> str:
    """An http(s) URL with a host (no space nor ``@`` in it) and a port from
    1 to 65535; normalized to end with ``/``.  A ``user:password@`` part is
    kept in the value (the searchdb client sends it as Basic credentials)
    but never shown in the error message (:func:`redact_url`)."""
    text = parse_text(text)
    try:
        parts = urllib.parse.urlsplit(text)
        port_ok = parts.port is None or 0 < parts.port < 65536
        host = parts.hostname
    except ValueError:
        parts, port_ok, host = None, False, None
    if (parts is None or parts.scheme not in ("http", "https") or not host or not port_ok
            or re.search(r"[\s@]", host)):
        raise ValueError(f"{redact_url(text)!r} is not an http:// or https:// URL with a host")
    return text if text.endswith("/") else text + "/"


def parse_basic_auth(text) -> str:
    """Empty, or ``user:password``."""
    text = parse_text(text)
    if text and (":" not in text or text.startswith(":")):
        raise ValueError("expected <username>:<password>")
    return text


#: ``searchdb-mode`` values, in the order of the reference's numbers
#: (bitshares-core elasticsearch_plugin.hpp ``enum class mode``).
SEARCHDB_MODES = ("only_save", "only_query", "all")


def parse_searchdb_mode(text) -> str:
    """Coercer of ``searchdb-mode``: ``only_save``, ``only_query``, ``all``
    or the reference's numbers 0, 1, 2 -> the name."""
    text = parse_text(text).strip()
    if text in SEARCHDB_MODES:
        return text
    if text in ("0", "1", "2"):
        return SEARCHDB_MODES[int(text)]
    raise ValueError(f"{text!r} is not a searchdb mode: only_save (0), only_query (1) "
                     "or all (2)")


def parse_index_prefix(text) -> str:
    """A search database index name prefix: lowercase, no special characters."""
    text = parse_text(text)
    if (not text or text != text.lower() or text[0] in "-_+"
            or _INDEX_FORBIDDEN.intersection(text)):
        raise ValueError(f"{text!r} is not a valid index prefix (lowercase, not starting "
                         "with - _ +, none of \\ / * ? \" < > | , # : or space)")
    return text


def parse_plugins(text) -> list:
    """Space- or comma-separated plugin names -> list (duplicates dropped)."""
    names = []
    for name in re.split(r"[\s,]+", parse_text(text)):
        name = PLUGIN_ALIASES.get(name, name)
        if name and name not in names:
            if name not in KNOWN_PLUGINS + REFERENCE_PLUGINS:
                raise ValueError(f"unknown plugin {name!r} (known: {', '.join(KNOWN_PLUGINS)})")
            names.append(name)
    if "account_history" in names and "searchdb" in names:
        raise ValueError("account_history and searchdb cannot run together")
    return names


def parse_tracked_groups(text) -> list:
    """``tracked-groups``: a JSON array of group widths in 1/10000 (0..65535),
    sorted, each once, 0 dropped (graphene grouped_orders plugin)."""
    try:
        value = json.loads(parse_text(text))
    except ValueError:
        raise ValueError(f"{text!r} is not a JSON array of numbers") from None
    if not isinstance(value, list) or not all(
            isinstance(g, int) and not isinstance(g, bool) and 0 <= g <= 0xFFFF for g in value):
        raise ValueError(f"{text!r} is not a JSON array of numbers 0..65535")
    return sorted(set(value) - {0})


def _json_or_raw(text, shown):
    """``text`` stripped, or its JSON value when it starts with ``"`` or ``[``."""
    raw = str(text).strip()
    if raw[:1] not in ('"', "["):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        raise ValueError(f"{shown(raw)} is not valid JSON") from None


def _object_ids(text, space_type: str, what: str) -> list:
    """``S.T.N``, JSON ``"S.T.N"`` (bitshares' form) or a JSON array of them
    -> list of ``"S.T.N"`` strings (``space_type`` = ``"S.T"``)."""
    values = _json_or_raw(text, repr)
    pattern = re.escape(space_type) + r"\.(0|[1-9]\d{0,9})"
    for value in values if isinstance(values, list) else [values]:
        if not isinstance(value, str) or not re.fullmatch(pattern, value):
            raise ValueError(f"{value!r} is not {what} {space_type}.N")
    return values if isinstance(values, list) else [values]


def parse_witness_ids(text) -> list:
    """``1.6.N``, JSON ``"1.6.N"`` (bitshares form) or a JSON array of them."""
    return _object_ids(text, "1.6", "a witness id")


def parse_account_ids(text) -> list:
    """``1.2.N``, JSON ``"1.2.N"`` (bitshares' ``track-account`` form) or a
    JSON array of them."""
    return _object_ids(text, "1.2", "an account id")


def parse_private_key(text) -> list:
    """A WIF, or bitshares' JSON pair ``["PUBKEY", "WIF"]`` whose public key
    must belong to the WIF -> ``[WIF]``."""
    value = _json_or_raw(text, lambda raw: raw[:12] + "...")
    wif, public = value, None
    if not isinstance(value, str):
        if not (isinstance(value, list) and len(value) == 2
                and all(isinstance(v, str) for v in value)):
            raise ValueError('expected a WIF or ["PUBLIC_KEY", "WIF"]')
        public, wif = value
    try:
        derived = public_key_bytes(auth.public_key_of(wif, "TEST"))
    except Exception:
        raise ValueError("malformed WIF private key (bad encoding or "
                         "checksum)") from None
    if public is not None:
        try:
            given = public_key_bytes(public)
        except Exception:
            raise ValueError(f"malformed public key {public!r}") from None
        if given != derived:
            raise ValueError(f"public key {public} does not belong to the WIF key")
    return [wif]


def parse_upstream(text) -> list:
    """An ``--upstream`` value: a node address as for ``seed-node``
    (``ws://[user:password@]host:port``), kept as given -> ``[text]``;
    raises ``ValueError`` with the parser's message."""
    text = parse_text(text)
    try:
        parse_node_address(text)
    except InvalidPeerAddress as exc:
        raise ValueError(str(exc)) from None
    return [text]


def parse_chain_id(text) -> str:
    """``--upstream-chain-id``: empty (the first upstream's) or 64 hex
    digits, returned in lower case; raises ``ValueError``."""
    text = parse_text(text).strip().lower()
    if text and (len(text) != 64 or any(c not in "0123456789abcdef" for c in text)):
        raise ValueError(f"expected a chain id of 64 hex digits, got {text!r}")
    return text


def parse_seed_node(text) -> list:
    """A ``--seed-node`` value (``[user:password@]host:port``, ``[v6]:port``
    or ``ws://`` URL, :func:`nodeapi.protocol.node_address.parse_node_address`)
    -> ``[text]``; raises ``ValueError`` with the parser's message."""
    text = parse_text(text)
    try:
        parse_node_address(text)
    except InvalidPeerAddress as exc:
        raise ValueError(str(exc)) from None
    return [text]
