"""A follower forwards network_broadcast to the node it follows
(nodeapi.api.broadcast, PeerService.forward): real RPC sites of a producer
and of a follower (no witness) over loopback, a real WebSocket client of the
follower.  The transaction lands in the producer's block, the callback and
the synchronous answer come from that block as it reaches the follower, and
the producer's errors reach the client unchanged."""

import orjson
import pytest_twisted
import treq
from twisted.internet import reactor

from nodeapi.peers.service import PeerService
from nodeapi.rpc.access import ApiAccess

from kit.chain import claim_op, produce, transfer_op
from kit.keys import OTHER_WIF
from kit.peers import FAST, close
from kit.rpc import ws_connect
from kit.signing import sign
from kit.site import RunningSite, make_node
from kit.wait import wait_for


@pytest_twisted.inlineCallbacks
def _http_call(port, api, method, args):
    """The whole JSON-RPC reply object of one HTTP POST call."""
    body = orjson.dumps({"jsonrpc": "2.0", "id": 7, "method": "call",
                         "params": [api, method, args]})
    response = yield treq.post(f"http://127.0.0.1:{port}/rpc", data=body)
    return orjson.loads((yield response.content()))


@pytest_twisted.inlineCallbacks
def _pair(producer, follower):
    """(producer site, follower site, follower PeerService) with the
    follower caught up."""
    producer.push_transaction(sign(producer, [claim_op()]))
    produce(producer, 3)
    upstream = RunningSite(make_node(producer), ApiAccess.default())
    svc = PeerService(follower, reactor=reactor, parameters=FAST)
    svc.startService()
    yield svc.add_node(f"127.0.0.1:{upstream.port}")
    yield wait_for(lambda: follower.head_block_num == 3)
    site = RunningSite(make_node(follower, peers=svc), ApiAccess.default())
    return upstream, site, svc


@pytest_twisted.inlineCallbacks
def test_follower_forwards_broadcasts_and_calls_back(producer, follower, new_chain):
    upstream, site, svc = yield _pair(producer, follower)
    client = yield ws_connect(site.port)
    # with_callback: accepted upstream (not pushed on the follower), noticed
    # from the producer's block once the follower has it
    trx = sign(follower, [transfer_op(1111)])
    assert (yield client.call("network_broadcast", "broadcast_transaction_with_callback",
                              9, trx)) is None
    assert len(producer.pending_transactions) == 1 and follower.pending_transactions == []
    notice = client.next_notice()
    produce(producer)
    cb, (confirmation,) = yield notice
    assert cb == 9 and follower.head_block_num == 4
    assert confirmation["block_num"] == 4 and confirmation["trx_num"] == 0
    assert confirmation["trx"]["operation_results"] == [[0, {}]]
    assert confirmation["trx"]["signatures"] == trx["signatures"]
    assert follower.state.balance("1.2.7", "1.3.0") == 1111
    # synchronous: answered with the confirmation of the follower's copy of the block
    trx2 = sign(follower, [transfer_op(2222)])
    answer = client.call("network_broadcast", "broadcast_transaction_synchronous", trx2)
    yield wait_for(lambda: len(producer.pending_transactions) == 1)
    produce(producer)
    confirmation = yield answer
    assert confirmation["block_num"] == 5 and confirmation["trx"]["operations"][0][1][
        "amount"] == {"amount": 2222, "asset_id": "1.3.0"}
    # plain broadcast over HTTP
    trx3 = sign(follower, [transfer_op(3333)])
    reply = yield _http_call(site.port, "network_broadcast", "broadcast_transaction", [trx3])
    assert reply == {"id": 7, "jsonrpc": "2.0", "result": None}
    assert len(producer.pending_transactions) == 1
    produce(producer)
    yield wait_for(lambda: follower.head_block_num == 6)
    # broadcast_block goes upstream too (a block of another copy of the
    # producer's chain); the follower gets it back by following
    twin = new_chain(restart_of=producer)
    yield twin.replay()
    produce(twin)
    block = twin.get_block(7)
    assert (yield client.call("network_broadcast", "broadcast_block", block)) is None
    assert producer.head_block_id == twin.head_block_id
    yield wait_for(lambda: follower.head_block_num == 7)
    assert follower.head_block_id == twin.head_block_id
    client.dropConnection(abort=True)
    yield close(svc)
    yield site.stop()
    yield upstream.stop()


@pytest_twisted.inlineCallbacks
def test_upstream_errors_reach_the_client_unchanged(producer, follower):
    upstream, site, svc = yield _pair(producer, follower)
    direct = yield ws_connect(upstream.port)
    client = yield ws_connect(site.port)
    bad = sign(follower, [transfer_op(4444)], wifs=(OTHER_WIF,))  # not init0's key
    for function, args in (("broadcast_transaction", [bad]),
                           ("broadcast_transaction_with_callback", [3, bad]),
                           ("broadcast_transaction_synchronous", [bad])):
        theirs = yield direct.request("network_broadcast", "broadcast_transaction", [bad])
        mine = yield client.request("network_broadcast", function, args)
        assert theirs["error"]["code"] == 4010001 and "data" in theirs["error"]
        assert mine["error"] == theirs["error"]  # code, message, data
        assert mine["error"]["message"] == \
            "Execution error: missing required active authority: Missing Active Authority 1.2.6"
        if not function.endswith("callback"):  # HTTP: no callbacks
            reply = yield _http_call(site.port, "network_broadcast", function, args)
            assert reply["error"] == theirs["error"]
    assert producer.pending_transactions == [] == follower.pending_transactions
    # bad input: not a transaction at all is refused here, before anything is
    # sent; a transaction whose operation does not serialize is the upstream's
    # to refuse, for the callback form too (this node cannot even read it)
    for function in ("broadcast_transaction", "broadcast_transaction_with_callback"):
        args = [5] if function == "broadcast_transaction" else [1, 5]
        mine = yield client.request("network_broadcast", function, args)
        assert mine["error"]["message"] == \
            "Execution error: trx must be a transaction object, got int"
    garbled = dict(sign(follower, [transfer_op(1)]), operations=[[0, {"fee": "x"}]])
    theirs = yield direct.request("network_broadcast", "broadcast_transaction", [garbled])
    for function, args in (("broadcast_transaction", [garbled]),
                           ("broadcast_transaction_with_callback", [2, garbled]),
                           ("broadcast_transaction_synchronous", [garbled])):
        mine = yield client.request("network_broadcast", function, args)
        assert mine["error"] == theirs["error"] and mine["error"]["code"] == 10
    assert producer.pending_transactions == [] == follower.pending_transactions
    # a refusal only the upstream can make (the follower holds no pending
    # transactions): the same transaction twice is a duplicate there
    twice = sign(follower, [transfer_op(4545)])
    assert (yield client.call("network_broadcast", "broadcast_transaction", twice)) is None
    mine = yield client.request("network_broadcast", "broadcast_transaction", [twice])
    theirs = yield direct.request("network_broadcast", "broadcast_transaction", [twice])
    assert mine["error"] == theirs["error"] and "uplicate" in mine["error"]["message"]
    assert len(producer.pending_transactions) == 1 and follower.pending_transactions == []
    # nothing is left waiting: a later good broadcast is confirmed normally
    good = sign(follower, [transfer_op(5555)])
    yield client.call("network_broadcast", "broadcast_transaction_with_callback", 4, good)
    notice = client.next_notice()
    produce(producer)
    cb, (confirmation,) = yield notice
    assert cb == 4 and confirmation["block_num"] == 4
    assert [t["signatures"] for t in follower.get_block(4)["transactions"]] == \
        [twice["signatures"], good["signatures"]]
    # the callback needs a WebSocket: refused over HTTP, before anything is forwarded
    reply = yield _http_call(site.port, "network_broadcast",
                             "broadcast_transaction_with_callback", [1, good])
    assert reply["error"]["message"] == \
        "Execution error: callbacks need a WebSocket connection"
    # no upstream connected: a clear error, nothing sent
    yield upstream.stop()
    yield wait_for(lambda: svc.upstream() is None)
    reply = yield client.request("network_broadcast", "broadcast_transaction",
                                 [sign(follower, [transfer_op(6666)])])
    assert reply["error"]["data"]["name"] == "no_upstream"
    assert reply["error"]["message"].startswith(
        "Execution error: No upstream node is connected to pass broadcast_transaction on")
    assert follower.pending_transactions == []
    direct.dropConnection(abort=True)
    client.dropConnection(abort=True)
    yield close(svc)
    yield site.stop()


def test_upstream_error_objects_of_another_shape_are_not_passed_on():
    """Only an error object with an integer code and a string message is sent
    as it came; anything else is reported in the follower's own words."""
    from twisted.python.failure import Failure

    from nodeapi.peers.errors import PeerRpcError, UpstreamError
    from nodeapi.rpc.jsonrpc import error_from_failure

    good = {"code": 10, "message": "Execution error: no", "data": {"name": "x", "extra": [1]}}
    rpc = error_from_failure(Failure(UpstreamError(PeerRpcError("broadcast_transaction", good))))
    assert rpc.to_json() == good and rpc.http_status == 200
    for odd in ({"message": "no code"}, {"code": True, "message": "m"},
                {"code": 10, "message": ["m"]}, "just text"):
        rpc = error_from_failure(Failure(UpstreamError(PeerRpcError("broadcast_block", odd))))
        assert rpc.code == 10 and rpc.to_json()["data"]["name"] == "upstream_error"
        assert rpc.message.startswith("Execution error: The upstream refused the call: ")
