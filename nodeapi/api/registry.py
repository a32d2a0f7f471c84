"""Accessor name -> API set class: what the login API hands out.

The names are the login accessors of docs/rpc-access.rst ("API set
names"); the access name checked against ``allowed_apis`` is
``<name>_api``.  Each set is one module of :mod:`nodeapi.api`, except the
database and history sets, packages (:mod:`nodeapi.api.database`,
:mod:`nodeapi.api.history`) of one module per section.
"""

from nodeapi.api.asset import AssetApi
from nodeapi.api.block import BlockApi
from nodeapi.api.crypto import CryptoApi
from nodeapi.api.custom_operations import CustomOperationsApi
from nodeapi.api.broadcast import NetworkBroadcastApi
from nodeapi.api.database import DatabaseApi
from nodeapi.api.debug import DebugApi
from nodeapi.api.devnet import DevnetApi
from nodeapi.api.history import HistoryApi
from nodeapi.api.network_node import NetworkNodeApi
from nodeapi.api.orders import OrdersApi


def default_registry() -> dict:
    """A fresh ``{name: ApiSet subclass}`` of every set the node serves."""
    return {
        "database": DatabaseApi,
        "history": HistoryApi,
        "network_broadcast": NetworkBroadcastApi,
        "block": BlockApi,
        "asset": AssetApi,
        "network_node": NetworkNodeApi,
        "debug": DebugApi,
        "devnet": DevnetApi,
        "crypto": CryptoApi,
        "orders": OrdersApi,
        "custom_operations": CustomOperationsApi,
    }
