"""Notices sent to many subscribers over real WebSocket connections
(docs/wire-contract.rst section 5; nodeapi.api.database.changes and
nodeapi.rpc.notices): subscribers of the same objects and markets get the
same bytes, apart from the callback ids they chose, each payload encoded
once per reactor turn; and an idle connection builds no API set (nor a
set's sections) until it calls one of its functions."""

import pytest
import pytest_twisted
from autobahn.websocket.protocol import PreparedMessage
from twisted.internet import defer
from twisted.internet.task import Clock

from nodeapi.protocol.times import format_time
from nodeapi.rpc.access import ApiAccess
from nodeapi.rpc.notices import NoticeFrames, notice_frame

from kit.api import create_gold
from kit.chain import amt, claim_op, limit_order, produce, transfer_op
from kit.rpc import ws_connect
from kit.signing import sign
from kit.site import RunningSite, make_node

NOTICE = b'{"method":"notice","params":['


@pytest.fixture
def server(chain):
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    create_gold(chain)
    running = RunningSite(make_node(chain), ApiAccess.default())
    yield running
    running.stop_blocking()


def raw_notices(ws) -> list:
    return [p for p in ws.raw_payloads if p.startswith(NOTICE)]


def without_callback(payload: bytes) -> tuple:
    """``(callback id, the notice bytes after it)``."""
    cb, _, rest = payload[len(NOTICE):].partition(b",")
    return int(cb), rest


@pytest_twisted.inlineCallbacks
def test_subscribers_of_the_same_objects_get_the_same_bytes(server, chain):
    clients = yield defer.gatherResults([ws_connect(server.port) for _ in range(3)])
    # two clients choose the same callback ids (like bitsharesjs making the
    # same calls), the third its own
    ids = [(1, 2, 3), (1, 2, 3), (101, 102, 103)]
    try:
        for ws, (subscribe, block, market) in zip(clients, ids):
            assert (yield ws.call(0, "set_subscribe_callback", subscribe, False)) is None
            stats = chain.state.objects["1.2.6"]["statistics"]
            yield ws.call(0, "get_objects", ["1.2.6", stats, "2.1.0"])
            assert (yield ws.call(0, "set_block_applied_callback", block)) is None
            assert (yield ws.call(0, "subscribe_to_market", market, "TEST", "GOLD")) is None
            ws.raw_payloads.clear()
        # a block with a transfer from init0 (its statistics change) and an
        # order of the market
        chain.push_transaction(sign(chain, [transfer_op(1000)]))
        order = limit_order(chain, "1.2.6", amt(5000), amt(7, "1.3.1"))
        produce(chain)
        yield defer.gatherResults([ws.call(0, "get_chain_id") for ws in clients])
        a, b, c = (raw_notices(ws) for ws in clients)
        # block id, subscribed objects, created order
        assert [without_callback(p)[0] for p in a] == [2, 1, 3]
        assert [without_callback(p)[0] for p in c] == [102, 101, 103]
        assert a == b
        assert [without_callback(p)[1] for p in a] == [without_callback(p)[1] for p in c]
        assert [n[0] for n in clients[0].notices] == [2, 1, 3]
        assert clients[0].notices[0] == [2, [chain.head_block_id]]
        assert [o["id"] for o in clients[0].notices[1][1][0]] == ["2.1.0", stats]  # in id order
        # times are integers inside the chain; a notice carries their wire form
        dgp = clients[0].notices[1][1][0][0]
        assert dgp["time"] == format_time(chain.head_block_time) and dgp["time"][10] == "T"
        assert [o["id"] for o in clients[0].notices[2][1][0]] == [order]
        # the next block changes the order's market no more: no market notice
        produce(chain)
        yield defer.gatherResults([ws.call(0, "get_chain_id") for ws in clients])
        assert [n[0] for n in clients[2].notices[3:]] == [102, 101]
        assert raw_notices(clients[0]) == raw_notices(clients[1])
    finally:
        for ws in clients:
            ws.dropConnection()


@pytest_twisted.inlineCallbacks
def test_an_idle_connection_builds_no_api_section(server):
    ws = yield ws_connect(server.port)
    try:
        (conn,) = server.site.ws_factory.connections
        session = conn.session
        # connected and logged in: ids 0 (database) and 1 (login) allocated,
        # neither set built
        assert [a.name for a in session.apis] == ["database", "login"]
        assert all(isinstance(a, type) for a in session.apis)
        yield ws.call(1, "get_info")
        assert isinstance(session.apis[0], type)
        assert session.apis[1].name == "login" and not isinstance(session.apis[1], type)
        # the first database call builds the set and only the section it uses
        assert (yield ws.call(0, "get_chain_id"))
        database = session.apis[0]
        assert not isinstance(database, type)
        assert set(vars(database)) & set(type(database).sections) == {"globals"}
        # an accessor allocates an id; the set is built by its first call
        history = yield ws.call(1, "history")
        assert isinstance(session.apis[history], type)
        assert (yield ws.call(history, "get_account_history", "1.2.6", "1.11.0", 1,
                              "1.11.0")) is not None
        assert not isinstance(session.apis[history], type)
    finally:
        ws.dropConnection()


@pytest.mark.parametrize("size", [0, 100, 125 - 35, 126, 65535 - 40, 65536, 70000])
@pytest.mark.parametrize("callback", [1, 4294967296])
def test_notice_frames_are_autobahns(size, callback):
    """A notice frame built by splicing is the frame Autobahn's
    ``PreparedMessage`` makes of the same text (RFC 6455 section 5.2: the
    7-, 16- and 64-bit lengths)."""
    params = b"[" + b"7" * size + b"]"
    text = b'{"method":"notice","params":[%d,%s]}' % (callback, params)
    assert notice_frame(callback, params) == PreparedMessage(text, False, False, True).payloadHybi


def test_notice_encodings_last_one_reactor_turn():
    """A payload is encoded once per reactor turn (the same list handed to
    many subscribers); on the next turn the cache is empty, so a list
    changed since, or a new one at the same address, is encoded afresh."""
    clock = Clock()
    frames = NoticeFrames(clock)
    payload = [{"id": "2.1.0", "head_block_number": 1}]
    first = frames.frame(1, payload)
    payload[0]["head_block_number"] = 2  # never done by the API sets: shows the cache
    assert frames.frame(1, payload) is first
    assert frames.frame(5, payload) == notice_frame(5, b'[[{"id":"2.1.0","head_block_number":1}]]')
    clock.advance(0)
    assert frames.frame(1, payload) == notice_frame(1, b'[[{"id":"2.1.0","head_block_number":2}]]')
    # frames are kept for the first ids only: a client's own id costs a
    # splice each time, not memory
    for cb in range(100):
        frames.frame(cb, payload)
    assert frames.frame(3, payload) is frames.frame(3, payload)
    assert frames.frame(99, payload) is not frames.frame(99, payload)
