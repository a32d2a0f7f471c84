"""Value parsers (coercers) for option rows (:class:`nodeapi.plugins.interface.Option`).

Each ``parse_*`` takes the raw text of one option (command line or INI
value, :mod:`nodeapi.config`) and returns the typed, normalized value, or
raises ``ValueError`` with a message that :class:`nodeapi.config.Options`
prefixes with the option name (and INI file and line).  Repeatable
options' parsers return lists.  Accepted forms follow bitshares'
witness_node options (``witness-id`` as ``"1.6.N"``, ``private-key`` as
``["PUBKEY", "WIF"]``, ``track-account`` as ``"1.2.N"``) and the
docs/searchdb-plugin.rst options.  A plugin's own parsers live in its
package (``bucket-size`` in :mod:`nodeapi.plugins.market_history.plugin`).
"""

import json
import re
import urllib.parse

from nodeapi.chain import authority as auth
from nodeapi.protocol.keys import public_key_bytes

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


#: Coercer: seconds, 0 (off) to one year.
parse_seconds = _number(float, 0, 86400 * 365, "a number of seconds")

#: Coercer: a timeout in seconds, 0.1 to one hour (never off).
parse_timeout = _number(float, 0.1, 3600, "a number of seconds")

#: Coercer: a rate in calls per second, 0 (off) to a million.
parse_rate = _number(float, 0, 1_000_000, "a number of calls per second")


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


def parse_optional_url(text) -> str:
    """Like :func:`parse_url`; empty stays empty (another option's URL
    applies)."""
    return "" if not parse_text(text) else parse_url(text)


def parse_basic_auth(text) -> str:
    """Empty, or ``user:password``."""
    text = parse_text(text)
    if text and (":" not in text or text.startswith(":")):
        raise ValueError("expected <username>:<password>")
    return text


def parse_index_prefix(text) -> str:
    """A search database index name prefix: lowercase, no special characters."""
    text = parse_text(text)
    if (not text or text != text.lower() or text[0] in "-_+"
            or _INDEX_FORBIDDEN.intersection(text)):
        raise ValueError(f"{text!r} is not a valid index prefix (lowercase, not starting "
                         "with - _ +, none of \\ / * ? \" < > | , # : or space)")
    return text


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
        derived = auth.public_key_data(wif)
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
