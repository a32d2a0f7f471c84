"""database API callbacks over real WebSocket connections (docs/wire-contract.rst
section 5): notices go only to the connection that registered a callback,
as ``{"method": "notice", "params": [callback_id, [payload]]}`` with no id
and no jsonrpc."""

import orjson
import pytest
import pytest_twisted
from twisted.internet import defer, reactor, task

from nodeapi.rpc.access import ApiAccess
from nodeapi.rpc.jsonrpc import to_wire

from kit.chain import claim_op, produce, transfer_op
from kit.rpc import ws_connect
from kit.signing import sign
from kit.site import RunningSite, make_node


def wire(value):
    """``value`` as a client decodes it from the wire."""
    return orjson.loads(orjson.dumps(to_wire(value)))


@pytest.fixture
def server(chain):
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    running = RunningSite(make_node(chain), ApiAccess.default())
    yield running
    running.stop_blocking()


def notice_frames(ws):
    return [m for m in ws.raw_replies if m.get("method") == "notice"]


@pytest_twisted.inlineCallbacks
def test_notices_reach_only_the_registering_connection(server, chain):
    a = yield ws_connect(server.port)
    b = yield ws_connect(server.port)
    try:
        assert (yield a.call(0, "set_block_applied_callback", 7)) is None
        assert (yield a.call(0, "set_pending_transaction_callback", 8)) is None
        assert (yield a.call(0, "set_subscribe_callback", 9, False)) is None
        dgp = (yield a.call(0, "get_objects", ["2.1.0"]))[0]  # subscribes A to 2.1.0
        assert dgp["id"] == "2.1.0"
        # B reads the same object (no callback set: nothing to subscribe to)
        assert (yield b.call(0, "get_objects", ["2.1.0"]))[0] == dgp

        # a transaction pushed through B: only A hears of it
        trx = sign(chain, [transfer_op(4321)])
        pending = a.next_notice()
        assert (yield b.call("network_broadcast", "broadcast_transaction", trx)) is None
        assert (yield pending) == [8, [wire(trx)]]

        # a block: A gets the block id, then the changed subscribed object
        produce(chain)
        yield defer.gatherResults([a.call(0, "get_chain_id"), b.call(0, "get_chain_id")])
        head = chain.state.objects["2.1.0"]
        assert head["head_block_id"] == chain.head_block_id
        assert a.notices == [[8, [wire(trx)]],
                             [7, [chain.head_block_id]],
                             [9, [[wire(head)]]]]
        assert notice_frames(a) == [{"method": "notice", "params": p} for p in a.notices]
        assert all(list(m) == ["method", "params"] for m in notice_frames(a))
        assert b.notices == [] and notice_frames(b) == []

        # cancel_all_subscriptions keeps the block and pending callbacks
        assert (yield a.call(0, "cancel_all_subscriptions")) is None
        produce(chain)
        yield defer.gatherResults([a.call(0, "get_chain_id"), b.call(0, "get_chain_id")])
        assert a.notices[3:] == [[7, [chain.head_block_id]]]
        assert b.notices == []
    finally:
        a.dropConnection()
        b.dropConnection()


@pytest_twisted.inlineCallbacks
def test_callbacks_end_with_the_connection(server, chain):
    a = yield ws_connect(server.port)
    yield a.call(0, "set_block_applied_callback", 1)
    yield a.call(0, "set_pending_transaction_callback", 2)
    observers = (len(chain._block_observers), len(chain.pending.observers))
    a.sendClose()
    yield a.closed
    for _ in range(100):  # the server side's onClose may run a moment later
        if not server.site.ws_factory.connections:
            break
        yield task.deferLater(reactor, 0.01, lambda: None)
    produce(chain)  # no notice to a closed connection, no error
    assert (len(chain._block_observers), len(chain.pending.observers)) == (
        observers[0] - 1, observers[1] - 1)
