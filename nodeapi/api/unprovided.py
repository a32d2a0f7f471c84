"""API sets this node serves without functions: ``crypto``, ``orders`` and
``custom_operations``.

They exist so that the login API's accessors hand out their ids and check
``crypto_api`` / ``orders_api`` / ``custom_operations_api`` like graphene
(docs/rpc-access.rst, wire-contract section 2).  This node does not
provide their functions (graphene: confidential-transfer crypto helpers,
the grouped_orders plugin, the custom_operations plugin's storage), so
every call answers -32601 ``Method not found``: :meth:`ApiSet.call` raises
``KeyError`` for a function a set does not have, never a fake result.
"""

from nodeapi.api.base import ApiSet


class CryptoApi(ApiSet):
    """graphene ``crypto_api``; no functions provided by this node."""

    name = "crypto"


class OrdersApi(ApiSet):
    """graphene ``orders_api`` (grouped_orders plugin); no functions
    provided by this node."""

    name = "orders"


class CustomOperationsApi(ApiSet):
    """graphene ``custom_operations_api`` (custom_operations plugin); no
    functions provided by this node."""

    name = "custom_operations"
