"""Gateway mode: nodeapi in front of bitshares-core-compatible nodes.

With ``--upstream`` (one or more), clients connect to nodeapi as to any
node: login and api-access are answered locally, the history set from the
search database when the searchdb plugin runs, every other set by the
upstreams.  Its modules, one role each: docs/DESIGN.rst,
``nodeapi/gateway/``; a forwarded read and a subscription through a
gateway: the flows there.
"""
