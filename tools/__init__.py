"""Operator and developer tools that run beside nodeapi, not inside it:
process runners for a nodeapi daemon (:mod:`tools.nodeapi_daemon`) and for
bitshares-core's reference ``witness_node`` (:mod:`tools.reference_node`),
and the differential runner (:mod:`tools.differential`) that judges nodeapi
against the reference block by block.  The test kit re-exports the runners
(``kit.daemon``, ``kit.reference``); nothing here imports the tests."""
