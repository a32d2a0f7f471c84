"""Value parsers (coercers) of the node's own ``twistd nodeapi`` options
(the general ones, which plugins use too, are in :mod:`nodeapi.plugins.values`).

Each ``parse_*`` takes the raw text of one option (command line or INI
value, see :mod:`nodeapi.config`) and returns the typed, normalized value,
or raises ``ValueError`` with a message that :class:`nodeapi.config.Options`
prefixes with the option name (and INI file and line).  Repeatable options'
parsers return lists.  Accepted forms follow bitshares' witness_node
options (``seed-node``, ``plugins``) and docs/wire-contract.rst section 6
(endpoints).
"""

import json
import re

from twisted.internet.endpoints import serverFromString

from nodeapi.chain.genesis import statistics_space
from nodeapi.plugins.values import parse_int, parse_text
from nodeapi.protocol.errors import InvalidPeerAddress
from nodeapi.protocol.node_address import parse_node_address

def parse_statistics_type(text) -> int:
    """Coercer of ``account-statistics-type``: 7 (the specification's
    2.7.N) or 6 (graphene's 2.6.N), :data:`nodeapi.chain.genesis.STATISTICS_TYPES`."""
    value = parse_int(0, 255)(text)
    statistics_space(value)
    return value


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


def _parse_list(text, parse_entry) -> list:
    entries = [e.strip() for e in parse_text(text).split(",") if e.strip()]
    for entry in entries:
        parse_entry(entry)
    return entries


def parse_allowed_hosts(text) -> list:
    """``--rpc-allowed-hosts``: a comma list of host names, ``*`` for any
    (:func:`nodeapi.rpc.browser_guard.parse_host_rule`); [] for the
    defaults."""
    from nodeapi.rpc.browser_guard import parse_host_rule

    return _parse_list(text, parse_host_rule)


def parse_trusted_proxies(text) -> list:
    """``--trusted-proxies``: a comma list of IP addresses and CIDR
    networks (:func:`nodeapi.rpc.proxies.parse_trusted_proxy`); [] for
    none."""
    from nodeapi.rpc.proxies import parse_trusted_proxy

    return _parse_list(text, parse_trusted_proxy)


def parse_allowed_origins(text) -> list:
    """``--rpc-allowed-origins``: a comma list of host names,
    ``scheme://host[:port]``, ``null`` or ``*``
    (:func:`nodeapi.rpc.browser_guard.parse_origin_rule`); [] for the
    defaults."""
    from nodeapi.rpc.browser_guard import parse_origin_rule

    return _parse_list(text, parse_origin_rule)


def parse_upstream(text) -> list:
    """An ``--upstream`` value (repeatable): a node address as for
    ``seed-node`` (``ws://[user:password@]host:port``) -> ``[its``
    :class:`~nodeapi.protocol.node_address.NodeAddress` ``]``; raises
    ``ValueError`` with the parser's message (:func:`parse_seed_node`'s
    rule)."""
    return parse_seed_node(text)


def parse_chain_id(text) -> str:
    """``--upstream-chain-id``: empty (the first upstream's) or 64 hex
    digits, returned in lower case; raises ``ValueError``."""
    text = parse_text(text).strip().lower()
    if text and (len(text) != 64 or any(c not in "0123456789abcdef" for c in text)):
        raise ValueError(f"expected a chain id of 64 hex digits, got {text!r}")
    return text


def parse_seed_nodes(text) -> list:
    """A ``--seed-nodes`` value in bitshares-core's form, a JSON list of
    addresses (``'["host:port", ...]'``) -> their
    :class:`~nodeapi.protocol.node_address.NodeAddress` values (each as
    :func:`parse_seed_node` reads it); raises ``ValueError``."""
    text = parse_text(text)
    try:
        items = json.loads(text)
    except ValueError:
        raise ValueError(f"expected a JSON list of \"host:port\" strings, got {text!r}") from None
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise ValueError(f"expected a JSON list of \"host:port\" strings, got {text!r}")
    return [address for item in items for address in parse_seed_node(item)]


def parse_p2p_endpoint(text) -> str:
    """``--p2p-endpoint``: ``host:port`` (an IPv4 address, or empty for
    every IPv4 interface) or ``[v6]:port`` (an IPv6 address, ``[::]`` for
    every interface) of graphene's peer protocol listener, or empty (none);
    returns ``"host:port"`` / ``"[v6]:port"``; raises ``ValueError``."""
    import ipaddress

    text = parse_text(text).strip()
    if not text:
        return ""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"expected host:port, got {text!r}")
    if host.startswith("[") and host.endswith("]"):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise ValueError(f"not an IPv6 address: {host!r}") from None
        return f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]:{int(port)}"
    if host and not all(p.isdigit() and int(p) < 256 for p in host.split(".")) \
            or host and len(host.split(".")) != 4:
        raise ValueError(f"the P2P endpoint's host must be an IPv4 address or an IPv6 "
                         f"address in brackets, got {host!r}")
    return f"{host or '0.0.0.0'}:{int(port)}"


def parse_fork_url(text):
    """A ``--fork-url`` value: empty -> None, else the node's address
    (:func:`parse_seed_node`'s forms) -> ``NodeAddress``; raises
    ``ValueError`` with the parser's message."""
    text = parse_text(text)
    return parse_seed_node(text)[0] if text else None


def parse_seed_node(text) -> list:
    """A ``--seed-node`` value (``[user:password@]host:port``, ``[v6]:port``
    or ``ws://`` URL, :func:`nodeapi.protocol.node_address.parse_node_address`)
    -> ``[NodeAddress]``; raises ``ValueError`` with the parser's message."""
    text = parse_text(text)
    try:
        return [parse_node_address(text)]
    except InvalidPeerAddress as exc:
        raise ValueError(str(exc)) from None
