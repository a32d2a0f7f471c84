"""The P2P peer database (graphene ``peer_database``,
bitshares-core ``libraries/net/peer_database.cpp``): the peers heard of
(``address`` messages, the listening ports in hellos), at most
:data:`MAX_POTENTIAL_PEERS`, kept in a JSON file in the data dir.
"""

import collections
import ipaddress
import json
import os

from twisted.logger import Logger

from nodeapi.protocol.times import format_time

log = Logger()

#: graphene ``MAXIMUM_PEERDB_SIZE``
MAX_POTENTIAL_PEERS = 1000


class PeerDatabase:
    """The potential peers: ``"a.b.c.d:port"`` -> ``{"endpoint",
    "node_id", "last_seen_time"}`` in :attr:`records`, oldest first.

    :param path: the JSON file (a list of the records), or None to keep
        them in memory only.
    :param own_node_id: this node's id (hex): records of it are refused.
    """

    def __init__(self, path: str | None, own_node_id: str) -> None:
        self.path = path
        self.own_node_id = own_node_id
        self.records: collections.OrderedDict = collections.OrderedDict()
        #: True when records changed since the last :meth:`save`
        self.dirty = False
        if path is not None:
            self._load()

    def remember(self, address: str, node_id: str, now: float) -> None:
        """Record (or refresh) ``address`` with ``node_id`` seen at ``now``
        (s); an address that is no IPv4 ``host:port`` nor ``[v6]:port`` or names this node
        is ignored; the oldest go past :data:`MAX_POTENTIAL_PEERS`."""
        if node_id == self.own_node_id or not valid_endpoint(address):
            return
        self.records[address] = {"endpoint": address, "node_id": node_id,
                                 "last_seen_time": format_time(int(now))}
        self.records.move_to_end(address)
        while len(self.records) > MAX_POTENTIAL_PEERS:
            self.records.popitem(last=False)
        self.dirty = True

    def _load(self) -> None:
        """Read the file; one that does not read is logged and replaced at
        the next save (the peers are only hints)."""
        try:
            with open(self.path, encoding="utf-8") as f:
                records = json.load(f)
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            log.warn("P2P peer database {path} unreadable ({error}); starting empty",
                     path=self.path, error=exc)
            return
        if not isinstance(records, list):
            log.warn("P2P peer database {path} is not a list; starting empty", path=self.path)
            return
        for record in records[-MAX_POTENTIAL_PEERS:]:
            if (isinstance(record, dict) and valid_endpoint(record.get("endpoint"))
                    and isinstance(record.get("node_id"), str)
                    and record["node_id"] != self.own_node_id):
                self.records[record["endpoint"]] = {
                    "endpoint": record["endpoint"], "node_id": record["node_id"][:66],
                    "last_seen_time": str(record.get("last_seen_time", ""))[:19]}

    def save(self) -> None:
        """Write the file (a temporary file renamed over it); a failure is
        logged, the records stay."""
        if self.path is None:
            return
        self.dirty = False
        tmp = self.path + ".tmp"
        try:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(list(self.records.values()), f)
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warn("P2P peer database {path} not written: {error}", path=self.path,
                     error=exc)


def valid_endpoint(address) -> bool:
    """``"a.b.c.d:port"`` or ``"[v6]:port"`` with a port above 0."""
    if not isinstance(address, str) or ":" not in address:
        return False
    host, _, port = address.rpartition(":")
    if not (port.isdigit() and 0 < int(port) < 65536):
        return False
    if host.startswith("[") and host.endswith("]"):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return False
        return True
    return is_ipv4(host)


def endpoint_text(addr) -> str:
    """An ``IPv4Address`` / ``IPv6Address`` as ``"host:port"`` or
    ``"[v6]:port"`` (the form of ``--seed-node`` and of the peer database)."""
    host = f"[{addr.host}]" if ":" in addr.host else addr.host
    return f"{host}:{addr.port}"


def is_ipv4(host: str) -> bool:
    """``host`` is a dotted-quad IPv4 address."""
    parts = host.split(".")
    return len(parts) == 4 and all(p.isdigit() and int(p) < 256 for p in parts)
