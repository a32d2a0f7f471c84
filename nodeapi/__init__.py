"""nodeapi: a graphene (BitShares-protocol) API node on Twisted and Autobahn.

Data flow: block -> :mod:`nodeapi.chain` -> history plugins
(:mod:`nodeapi.history`) -> bulk -> search database; the RPC layer
(:mod:`nodeapi.rpc`) serves the API sets (:mod:`nodeapi.api`) over one port.
"""

__version__ = "0.1.0"
