"""Gateway mode: nodeapi in front of bitshares-core-compatible nodes.

With ``--upstream`` (one or more), clients connect to nodeapi as to any
node: login and api-access are answered locally, the history set from the
search database when the searchdb plugin runs, every other set by the
upstreams.  Modules: :mod:`~nodeapi.gateway.upstream` (one upstream: the
owner of a :class:`~nodeapi.peers.remote.RemoteNode`, its health, breaker
and figures), :mod:`~nodeapi.gateway.pool` (choosing an upstream, read retries,
broadcasts never repeated blindly), :mod:`~nodeapi.gateway.cache` (answers
that cannot change), :mod:`~nodeapi.gateway.head_share` (identical reads of
one head block sharing one answer), :mod:`~nodeapi.gateway.apis` (the forwarded API sets),
:mod:`~nodeapi.gateway.figures` (Prometheus).

Merged subscriptions: :mod:`~nodeapi.gateway.subscriptions` (the hub: one
upstream subscription carrying every client's interest),
:mod:`~nodeapi.gateway.client_subscriptions` (one client's subscription
functions), :mod:`~nodeapi.gateway.notice_routing` (who receives an
upstream notice, encoded once), :mod:`~nodeapi.gateway.subscribing_reads`
(the reads that subscribe what they return),
:mod:`~nodeapi.gateway.block_notices` (block ids in order across a change
of upstream), :mod:`~nodeapi.gateway.fanout` (notices written to clients).
"""
