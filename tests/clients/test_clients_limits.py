"""python-bitshares (synchronous, in a thread) over its call rate limit, over
ws:// and http://: it raises with the node's text, the connection stays
usable, and once the bucket has refilled (the site's clock, a
``task.Clock`` advanced by hand) it is served again.  docs/rpc-access.rst
"Limits per user and per source address"."""

import pytest
import pytest_twisted
from twisted.internet import task, threads

from nodeapi.rpc.access import ApiAccess
from nodeapi.rpc.guard import RpcLimits

from kit.keys import CHAIN_ID
from kit.site import RunningSite, make_node

#: anonymous clients: 1 call per second, 10 at once, per source address
ACCESS = {"permission_map": [["*", {
    "password_hash_b64": "*", "password_salt_b64": "*",
    "allowed_apis": ["database_api", "network_broadcast_api", "history_api"],
    "limits": {"calls_per_second": 1, "burst": 10}}]]}


@pytest.fixture
def clock():
    return task.Clock()


@pytest.fixture
def limited(chain, clock):
    server = RunningSite(make_node(chain), ApiAccess.from_json(ACCESS), clock=clock,
                         limits=RpcLimits(handshake_timeout=0))
    yield server
    server.stop_blocking()


def connect(url):
    from bitshares import BitShares

    return BitShares(node=url, num_retries=0)


def calls_until_refused(bts, most=50):
    """``(calls served, the exception text)`` calling get_chain_id until the
    node refuses one."""
    from bitsharesapi.exceptions import UnhandledRPCError

    for served in range(most):
        try:
            assert bts.rpc.get_chain_id() == CHAIN_ID
        except UnhandledRPCError as exc:
            return served, str(exc)
    return most, None


@pytest_twisted.inlineCallbacks
@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_python_bitshares_over_its_rate_limit(limited, clock, scheme):
    bts = yield threads.deferToThread(connect, f"{scheme}://127.0.0.1:{limited.port}")
    served, text = yield threads.deferToThread(calls_until_refused, bts)
    assert served < 10 and text is not None
    assert text.startswith("Execution error: Too many calls: over 1 per second (burst 10) "
                           "for the '*' entry from 127.0.0.1 (api-access "
                           "limits.calls_per_second); try again in "), text
    clock.advance(3)  # three calls refilled; the same client is served again
    served, text = yield threads.deferToThread(calls_until_refused, bts)
    assert served == 3 and "Too many calls" in text
