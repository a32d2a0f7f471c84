


"""The shared test kit: helpers the test modules import (a test module never
imports another test module).

- :mod:`kit.keys`      dev/other keys, the test chain id, deterministic keys
- :mod:`kit.signing`   the one TaPoS rule and transaction signers
- :mod:`kit.chain`     operations, block production, funding, fresh chains
- :mod:`kit.authority` multi-key/account authorities and accounts using them
- :mod:`kit.api`       API objects over a chain with a recording session
- :mod:`kit.history`   a chain filled with real history, a block recorder,
  ath numbering of hand-made applied operations
- :mod:`kit.searchdb`  searchdb plugin/osmem-server helpers (Twisted)
- :mod:`kit.dbclient`  the operator's synchronous search-database client
- :mod:`kit.wait`      the one ``wait_for`` (reactor polling)
- :mod:`kit.daemon`    the one ``twistd -n nodeapi`` subprocess runner
  (it lives in ``tools/nodeapi_daemon.py``)
- :mod:`kit.journal`   a daemon's stdout as journald makes it entries, in a real
  journal file (systemd-journal-remote), read with journalctl
- :mod:`kit.fail2ban`  the shipped jail in a real fail2ban-server on a journal file
- :mod:`kit.reference` bitshares-core's witness_node (the reference node)
  as a producer, a producer on demand or a P2P follower, in a subprocess
  (it lives in ``tools/reference_node.py``)
- :mod:`kit.compare`   every object of two nodes compared field by field,
  less the documented differences (the differential runner's comparison,
  ``tools/differential/compare.py``, and its ``deliberate.json``)
- :mod:`kit.es_capture` a loopback server answering as Elasticsearch 7 that
  records what bitshares-core's elasticsearch / es_objects plugins send
- :mod:`kit.es_compare` search documents compared field by field, less the
  documented differences with bitshares-core
- :mod:`kit.site`      the real RPC site of a chain on a loopback port
- :mod:`kit.rpc`       the WebSocket JSON-RPC client
- :mod:`kit.raw_http`  one request byte for byte (any Host, Origin,
  Content-Type, a WebSocket upgrade) to a loopback port
- :mod:`kit.wallets`   many accounts on a test chain, a payment to each
- :mod:`kit.rpcmodel`  reference model of replies (wire contract sections 3-4)
- :mod:`kit.access`    api-access test vectors
- :mod:`kit.peers`     peer-service helpers (fast parameters, listen, close)
- :mod:`kit.peer_stub` a stand-in graphene RPC server for the peers tests
- :mod:`kit.js`        the JavaScript clients of tests/js (npm install)
- :mod:`kit.operation_cases` mainnet operation samples for the protocol tests
- :mod:`kit.operation_samples` one operation of every type 0-77 (wire JSON)
- :mod:`kit.side_by_side` the reference node and a nodeapi node, each on
  its own chain, sent the same operations (``Side``, ``start_sides``)

Fixtures live in ``tests/conftest.py``.
"""
