"""The advanced node parameters (network_node ``get_advanced_node_parameters``
/ ``set_advanced_node_parameters``) and the reconnect delay they define.

Graphene's parameters tune its binary P2P node (libraries/net/node.cpp);
here they are the RPC follower's sync batch size, the reconnect backoff
(of RPC and P2P seeds), and two of graphene's own names for the P2P node:
``desired_number_of_connections`` (below it, peers heard of are dialled)
and ``maximum_number_of_connections`` (more peers are rejected).
"""

import math
import random

from twisted.application.internet import backoffPolicy

from nodeapi.peers.errors import InvalidNodeParameter

#: name -> default: ``sync_batch_size`` (blocks per fetch, integer
#: 1..1000), ``reconnect_initial_delay`` / ``reconnect_max_delay`` (s),
#: ``reconnect_factor``, ``reconnect_jitter`` (s, random extra delay up to
#: this; 0 allowed), ``desired_number_of_connections`` /
#: ``maximum_number_of_connections`` (P2P peers, integers 1..100000; graphene
#: ``GRAPHENE_NET_DEFAULT_DESIRED_CONNECTIONS`` and ``..._MAX_CONNECTIONS``).
DEFAULT_PARAMETERS = {
    "sync_batch_size": 100,
    "reconnect_initial_delay": 1.0,
    "reconnect_max_delay": 60.0,
    "reconnect_factor": 1.5,
    "reconnect_jitter": 1.0,
    "desired_number_of_connections": 20,
    "maximum_number_of_connections": 200,
}
#: the parameters that are connection counts: integers 1..100000
_COUNTS = ("desired_number_of_connections", "maximum_number_of_connections")


def updated_parameters(current: dict, params) -> dict:
    """``current`` with the values of ``params`` (a dict) applied, as a new
    dict; ``current`` is not changed.

    :raises InvalidNodeParameter: ``params`` is not an object, names an
        unknown parameter, or gives a value that is not a positive finite
        number (a JSON number or numeric string, docs/wire-contract.rst
        section 3; booleans, NaN and infinities are refused; 0 only for
        ``reconnect_jitter``; batch size: an integer from 1 to 1000).
    """
    if not isinstance(params, dict):
        raise InvalidNodeParameter("Parameters must be an object")
    new = dict(current)
    for name, value in params.items():
        if name not in DEFAULT_PARAMETERS:
            raise InvalidNodeParameter(f"Unknown node parameter {name!r}; known: "
                                       f"{', '.join(sorted(DEFAULT_PARAMETERS))}")
        value = _finite_number(name, value)
        if value < 0 or (value == 0 and name != "reconnect_jitter"):
            raise InvalidNodeParameter(f"{name} must be positive")
        if name == "sync_batch_size":
            if value != int(value) or value > 1000:
                raise InvalidNodeParameter("sync_batch_size must be an integer 1..1000")
            value = int(value)
        elif name in _COUNTS:
            if value != int(value) or value > 100000:
                raise InvalidNodeParameter(f"{name} must be an integer 1..100000")
            value = int(value)
        new[name] = value
    return new


def reconnect_delay(parameters: dict, attempt: int) -> float:
    """Reconnect delay (s) after ``attempt`` failures (counting from 1):
    ``reconnect_initial_delay`` after the first, times ``reconnect_factor``
    per further failure, capped at ``reconnect_max_delay``, plus a random
    0..``reconnect_jitter``.  Twisted's ``backoffPolicy`` computes it."""
    p = parameters
    return backoffPolicy(initialDelay=p["reconnect_initial_delay"],
                         maxDelay=p["reconnect_max_delay"],
                         factor=p["reconnect_factor"],
                         jitter=lambda: random.uniform(0, p["reconnect_jitter"]))(
                             max(attempt - 1, 0))


def _finite_number(name: str, value) -> float:
    """``value`` (int, float or numeric string) as a finite float; raises
    :class:`InvalidNodeParameter` naming ``name`` for anything else (bools,
    NaN, infinities, other strings, null)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InvalidNodeParameter(f"{name} must be a number, got {value!r}")
    try:
        number = float(value)
    except (ValueError, OverflowError):
        raise InvalidNodeParameter(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise InvalidNodeParameter(f"{name} must be a finite number, got {value!r}")
    return number
