"""One maker per mode of ``twistd nodeapi``, each returning the root
service of exactly what that mode runs (:mod:`nodeapi.tap` only picks
one):

* :func:`nodeapi.modes.node.make_node`: a node with a chain (block log,
  plugins, peers, checkpoints, ports, with ``--devnet`` the devnet) under a
  :class:`~nodeapi.service.NodeService`;
* :func:`nodeapi.modes.gateway.make_gateway` (``--upstream``): the
  upstream pool, with the ``searchdb`` plugin the indexer, and the ports
  under a :class:`~nodeapi.service.ModeService`;
* :func:`nodeapi.modes.indexer.make_indexer`: the indexer, the
  ``searchdb`` plugin fed by a follower of one upstream, a subtree of the
  gateway's.

:mod:`nodeapi.modes.ports` attaches the RPC and metrics ports every mode
serves on.
"""
