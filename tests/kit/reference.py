"""The reference node, bitshares-core 7.0.2's ``witness_node`` beside
nodeapi in a subprocess: the runner lives in ``tools/reference_node.py``
(the differential runner drives it too); the tests import it from here,
with :data:`requires_reference`: every reference test is marked
``reference`` and skipped, naming the path, only when the binary is
missing."""

import os

import pytest

from tools.reference_node import (API_ACCESS, DEFAULT_PLUGINS, FOLLOWER_PLUGINS,
                                  INIT_WITNESSES, WITNESS_NODE, ReferenceError, ReferenceNode,
                                  nodeapi_follower, start_on_demand, start_reference)

#: every reference test: ``@requires_reference`` (marked ``reference``, skipped
#: naming the path when the binary is missing)
requires_reference = pytest.mark.skipif(
    not os.access(WITNESS_NODE, os.X_OK),
    reason=f"the reference witness_node is missing: {WITNESS_NODE}")

__all__ = ["API_ACCESS", "DEFAULT_PLUGINS", "FOLLOWER_PLUGINS", "INIT_WITNESSES",
           "WITNESS_NODE", "ReferenceError", "ReferenceNode", "nodeapi_follower",
           "requires_reference", "start_on_demand", "start_reference"]
