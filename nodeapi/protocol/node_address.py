"""Addresses of other nodes: ``--seed-node`` values and network_node
``add_node`` arguments.

Accepted forms (graphene ``seed-node`` is ``host:port``; nodeapi follows
over the RPC WebSocket, so a ``ws://`` URL with credentials is accepted too,
docs/rpc-access.rst: credentials in the WebSocket address log in at
connect):

* ``host:port`` - a name or an IPv4 address;
* ``[v6]:port`` - an IPv6 address in brackets (``[::1]:8090``);
* ``user:password@`` before either form;
* ``ws://[user:password@]host:port[/path]`` (user and password
  percent-decoded, path default ``/``).

Pure Python (no Twisted): the configuration checks ``--seed-node`` values
with it before the reactor runs, and the peers service parses with it.
"""

from typing import Optional, Tuple
from urllib.parse import unquote, urlsplit

import attr

from nodeapi.protocol.errors import InvalidPeerAddress


@attr.s(frozen=True, slots=True, auto_attribs=True)
class NodeAddress:
    """A parsed node address.

    :ivar host: host name or IP address, IPv6 without brackets (``"::1"``).
    :ivar port: TCP port, 1..65535.
    :ivar path: the WebSocket path (``"/"`` unless a URL named one).
    :ivar credentials: ``(user, password)`` to log in with, or None.
    :ivar url_given: True when the text was a ``ws://`` URL, False for a
        bare ``host:port`` (a peer then hints at the P2P port when the
        address does not speak WebSocket); not part of equality.
    """

    host: str
    port: int
    path: str = "/"
    credentials: Optional[Tuple[str, str]] = None
    url_given: bool = attr.ib(default=True, eq=False)

    @property
    def address(self) -> str:
        """``"host:port"`` (``"[v6]:port"`` for IPv6): the peer's name in logs
        and in network_node answers; credentials are never shown."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def url(self) -> str:
        """The WebSocket URL without credentials: ``ws://host:port/path``."""
        return f"ws://{self.address}{self.path}"


def parse_node_address(text) -> NodeAddress:
    """``text`` (see the module docstring) -> :class:`NodeAddress`.

    :raises InvalidPeerAddress: not a string, another scheme than ``ws``,
        no host, no port or one outside 1..65535, an IPv6 address without
        brackets; the message quotes ``text`` without its password.
    """
    if not isinstance(text, str):
        raise InvalidPeerAddress(f"Peer address {text!r} is not a string")
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "ws", text
    shown = _without_password(text)
    if scheme.lower() != "ws":
        raise InvalidPeerAddress(f"Peer address {shown!r}: only ws:// is supported, "
                                 f"not {scheme}://")
    try:
        parts = urlsplit(f"ws://{rest}")
        port = parts.port
    except ValueError:
        hint = (" (write an IPv6 address in brackets: [::1]:8090)"
                if rest.count(":") > 2 and "[" not in rest else "")
        raise InvalidPeerAddress(f"Peer address {shown!r} is not host:port with a port "
                                 f"from 1 to 65535{hint}") from None
    if not parts.hostname or port is None or not 0 < port < 65536:
        raise InvalidPeerAddress(f"Peer address {shown!r} is not host:port with a port "
                                 "from 1 to 65535")
    credentials = None
    if parts.username is not None:
        credentials = (unquote(parts.username), unquote(parts.password or ""))
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return NodeAddress(parts.hostname, port, path, credentials, url_given=bool(sep))


def _without_password(text: str) -> str:
    """``text`` with the password of ``user:password@`` replaced by ``***``."""
    head, at, tail = text.rpartition("@")
    if not at:
        return text
    scheme, sep, userinfo = head.rpartition("://")
    user = userinfo.partition(":")[0]
    return f"{scheme}{sep}{user}:***@{tail}"
