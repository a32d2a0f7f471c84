"""twistd plugin for nodeapi.

Kept tiny and import-safe: twistd imports every plugin file while scanning,
and an exception here would silently drop ``nodeapi`` from ``twistd --help``.
The real ``Options`` and ``makeService`` live in :mod:`nodeapi.tap`.
"""

from twisted.application.service import ServiceMaker

nodeapi = ServiceMaker(
    "nodeapi",
    "nodeapi.tap",
    "A graphene (BitShares-protocol) API node: chain, witness, RPC, history.",
    "nodeapi",
)
