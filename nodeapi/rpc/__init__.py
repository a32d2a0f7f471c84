"""The RPC port: JSON-RPC over WebSocket and HTTP on one twisted.web Site
(:mod:`.site`, :mod:`.websocket`, :mod:`.http`), the login API set and the
per-connection session (:mod:`.login`), api-access (:mod:`.access`), the one
answer path (:mod:`.answer`, :mod:`.jsonrpc`), and what protects the port from
hostile clients and web pages (:mod:`.guard`, :mod:`.limits`,
:mod:`.browser_guard`, :mod:`.proxies`).  Graphene reference: bitshares-core
libraries/app/api.cpp (``login_api``) and api_access.hpp; the wire rules:
docs/wire-contract.rst.  Each module's role: docs/DESIGN.rst,
``nodeapi/rpc/``."""
