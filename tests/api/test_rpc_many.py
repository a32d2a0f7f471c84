"""1,000 concurrent WebSocket connections, each making calls, all served
("How we will know").

Client and server are Autobahn protocols in the same reactor over loopback.
Connections are opened in waves (the listen backlog is 50) and then kept
open together; once all 1,000 are open, every connection sends its calls at
once (pipelined, without waiting for replies), and every reply is checked
against the value it must have.
"""

import resource

import pytest
import pytest_twisted
from twisted.internet import defer

from nodeapi.rpc.access import ApiAccess
from nodeapi.rpc.guard import RpcLimits

from kit.keys import CHAIN_ID
from kit.rpc import ws_connect
from kit.site import RunningSite, make_node


CONNECTIONS = 1000
WAVE = 40  # below listenTCP's default backlog (50): no SYN drops and 1 s retries
# init0..init10 are 1.2.6..1.2.16 in the bundled genesis
ACCOUNTS = [(f"init{i}", f"1.2.{6 + i}") for i in range(11)]


@pytest.fixture(autouse=True)
def enough_files():
    """Client and server ends of every connection live in this process."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = 2 * CONNECTIONS + 256
    if soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            pytest.skip(f"RLIMIT_NOFILE hard limit {hard} < {need}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture
def site(chain):
    # all from 127.0.0.1: the per-address limit is off here
    running = RunningSite(make_node(chain), ApiAccess.default(),
                          limits=RpcLimits(max_connections_per_ip=0))
    yield running
    running.stop_blocking()


@defer.inlineCallbacks
def calls_of(ws, i):
    """Pipeline four calls on connection ``i`` and check each result."""
    name, account_id = ACCOUNTS[i % len(ACCOUNTS)]
    replies = yield defer.gatherResults([
        ws.request(0, "get_chain_id"),
        ws.request("database", "lookup_account_names", [[name]]),
        ws.request(0, "get_objects", [[account_id, "2.1.0"]]),
        ws.request(1, "history"),
    ], consumeErrors=True)
    chain_id, accounts, objects, history_id = (r["result"] for r in replies)
    assert chain_id == CHAIN_ID
    assert [a["id"] for a in accounts] == [account_id] and accounts[0]["name"] == name
    assert objects[0]["id"] == account_id and objects[0]["name"] == name
    assert objects[1]["id"] == "2.1.0"
    assert history_id == 2  # the first set this connection asked for
    return 4


@pytest_twisted.inlineCallbacks
def test_thousand_concurrent_websocket_connections(site):
    conns = []
    try:
        for start in range(0, CONNECTIONS, WAVE):
            wave = yield defer.gatherResults(
                [ws_connect(site.port) for _ in range(start, min(start + WAVE, CONNECTIONS))],
                consumeErrors=True)
            conns.extend(wave)
        assert len(conns) == CONNECTIONS
        assert len(site.site.ws_factory.connections) == CONNECTIONS  # all open together
        counts = yield defer.gatherResults([calls_of(ws, i) for i, ws in enumerate(conns)],
                                           consumeErrors=True)
        assert sum(counts) == 4 * CONNECTIONS
        # every connection got its own id space and nothing else
        assert all(len(ws.raw_replies) == 4 for ws in conns)
        assert all(ws.notices == [] for ws in conns)
    finally:
        for ws in conns:
            ws.dropConnection(abort=True)
