"""The API sets: one :class:`~nodeapi.api.base.ApiSet` subclass per login
accessor (``database``, ``history``, ``block``, ``network_broadcast``,
``asset``, ``debug``, ...), as bitshares-core's libraries/app/
(database_api.cpp, api.cpp) defines them.  :mod:`.base` holds the plumbing they
share (``@api_function``, sections, the ``Session`` contract the RPC layer
implements), :mod:`.registry` the accessor names; the RPC layer
(:mod:`nodeapi.rpc`) calls them.  Each module's role: docs/DESIGN.rst,
``nodeapi/api/``."""
