"""network_broadcast and network_node API sets over real Chains; the peer
network is a real PeerService following a producer over loopback WebSocket
(the real RPC site)."""

import re

import pytest
import pytest_twisted
from twisted.internet import reactor

from nodeapi.api.broadcast import NetworkBroadcastApi
from nodeapi.api.network_node import NetworkNodeApi
from nodeapi.chain import errors
from nodeapi.errors import ApiError
from nodeapi.peers.errors import InvalidNodeParameter
from nodeapi.rpc.access import ApiAccess
from nodeapi.peers.service import PeerService
from nodeapi.protocol.errors import InvalidPeerAddress
from nodeapi.protocol.transaction import transaction_id

from kit.api import make_api
from kit.chain import claim_op, fund, produce, transfer_op
from kit.keys import DEV_WIF
from kit.peers import FAST, close
from kit.site import RunningSite, make_node
from kit.signing import sign
from kit.wait import wait_for


@pytest.fixture
def funded(chain):
    """init0 claimed the genesis balance; init1 got 12345 in block 2."""
    return fund(chain, init1=12345)


def trx_id(trx):
    return transaction_id(trx, "TEST")


def test_broadcast_transaction(funded):
    api, _ = make_api(funded, NetworkBroadcastApi)
    trx = sign(funded, [transfer_op(31)])
    assert api.call("broadcast_transaction", [trx]) is None
    assert funded.pending_transactions == [trx]
    with pytest.raises(errors.DuplicateTransaction):
        api.call("broadcast_transaction", [trx])
    with pytest.raises(errors.InsufficientBalance):
        api.call("broadcast_transaction", [sign(funded, [transfer_op(1, frm="1.2.9")])])
    with pytest.raises(ApiError, match="missing expiration"):
        api.call("broadcast_transaction", [{"ref_block_num": 1, "ref_block_prefix": 2,
                                            "operations": []}])
    with pytest.raises(ApiError, match="Malformed transaction"):
        api.call("broadcast_transaction", [dict(trx, operations=[[0, {"fee": 5}]])])
    # wire form: 64-bit numbers as strings are accepted
    wire = sign(funded, [transfer_op(32)])
    wire["ref_block_prefix"] = str(wire["ref_block_prefix"])
    wire["operations"][0][1]["amount"]["amount"] = "32"
    api.call("broadcast_transaction", [wire])
    produce(funded)
    assert funded.state.balance("1.2.7", "1.3.0") == 12345 + 31 + 32


def test_broadcast_with_callback_and_synchronous(funded):
    api, session = make_api(funded, NetworkBroadcastApi)
    t1 = sign(funded, [transfer_op(11)])
    t2 = sign(funded, [transfer_op(12), transfer_op(13)])
    assert api.call("broadcast_transaction_with_callback", [4, t1]) is None
    d = api.call("broadcast_transaction_synchronous", [t2])
    assert not d.called and session.notices == []
    produce(funded)
    num = funded.head_block_num
    ((cb, confirmation),) = session.notices
    assert cb == 4 and confirmation == {
        "id": trx_id(t1), "block_num": num, "trx_num": 0,
        "trx": dict(t1, operation_results=[[0, {}]])}
    assert d.result == {"id": trx_id(t2), "block_num": num, "trx_num": 1,
                        "trx": dict(t2, operation_results=[[0, {}], [0, {}]])}
    produce(funded)
    assert len(session.notices) == 1  # confirmed once
    # a refused transaction registers nothing
    with pytest.raises(errors.DuplicateTransaction):
        api.call("broadcast_transaction_with_callback", [5, t1])
    http, _ = make_api(funded, NetworkBroadcastApi, websocket=False)
    with pytest.raises(ApiError, match="WebSocket"):
        http.call("broadcast_transaction_with_callback", [1, sign(funded, [transfer_op(14)])])


def test_synchronous_fails_on_expiry_and_close(funded):
    api, session = make_api(funded, NetworkBroadcastApi)
    # accepted, then dropped when the next block is produced past its expiration
    short = sign(funded, [transfer_op(21)], expire_in=2)
    d1 = api.call("broadcast_transaction_synchronous", [short])
    when = funded.get_slot_time(3)
    funded.generate_block(when, funded.get_scheduled_witness(3), DEV_WIF)
    failures = []
    d1.addErrback(failures.append)
    assert failures and "expired without being included" in str(failures[0].value)
    d2 = api.call("broadcast_transaction_synchronous", [sign(funded, [transfer_op(22)])])
    d2.addErrback(failures.append)
    session.close()
    assert "connection closed" in str(failures[1].value)
    assert funded._block_observers == []
    with pytest.raises(ApiError, match="connection closed"):
        api.call("broadcast_transaction_synchronous", [sign(funded, [transfer_op(23)])])


def test_broadcast_block(funded, genesis, new_chain):
    follower = new_chain()
    api, _ = make_api(follower, NetworkBroadcastApi)
    for n in (1, 2):
        block = dict(funded.get_block(n), block_id="x", signing_key="y", transaction_ids=[])
        assert api.call("broadcast_block", [block]) is None
    assert follower.head_block_id == funded.head_block_id
    assert follower.state.balance("1.2.7", "1.3.0") == 12345
    with pytest.raises(errors.InvalidBlock):
        api.call("broadcast_block", [funded.get_block(1)])
    for bad in ({"previous": follower.head_block_id}, [funded.get_block(2)], "block"):
        with pytest.raises(errors.MalformedBlock, match="^Malformed block: ") as info:
            api.call("broadcast_block", [bad])
        assert not isinstance(info.value, ApiError)


def test_network_node_without_peers(funded):
    api, _ = make_api(funded, NetworkNodeApi,
                      options={"rpc-endpoint": "tcp:8090:interface=127.0.0.1"})
    info = api.call("get_info", [])
    # graphene's keys first, then this node's own
    assert list(info)[:4] == ["listening_on", "node_public_key", "node_id", "connection_count"]
    assert re.fullmatch(r"0[23][0-9a-f]{64}", info["node_public_key"])
    assert re.fullmatch(r"0[23][0-9a-f]{64}", info["node_id"])
    assert info["node_id"] != info["node_public_key"]
    assert api.call("get_info", []) == info  # stable for the process
    assert info == dict(info, listening_on="127.0.0.1:8090", connection_count=0,
                        head_block_num=2, head_block_id=funded.head_block_id,
                        blocks_applied=None, blocks_from_peers=None)
    assert api.call("get_connected_peers", []) == [] == api.call("get_potential_peers", [])
    for fn, args in (("add_node", ["127.0.0.1:1"]), ("get_advanced_node_parameters", []),
                     ("set_advanced_node_parameters", [{}])):
        with pytest.raises(ApiError, match="No P2P network"):
            api.call(fn, args)


@pytest_twisted.inlineCallbacks
def test_network_node_and_relay_with_peers(genesis, new_chain):
    producer = new_chain()
    follower = new_chain()
    producer.push_transaction(sign(producer, [claim_op()]))
    produce(producer, 3)
    site = RunningSite(make_node(producer), ApiAccess.default())  # the real RPC site
    svc = PeerService(follower, reactor=reactor, parameters=FAST)
    svc.startService()
    node_api, _ = make_api(follower, NetworkNodeApi, peers=svc)
    address = f"127.0.0.1:{site.port}"
    assert (yield node_api.call("add_node", [address])) is None
    yield wait_for(lambda: follower.head_block_num == 3)
    (peer,) = node_api.call("get_connected_peers", [])
    assert peer["addr"] == address and peer["head_block_num"] == 3
    assert [p["addr"] for p in node_api.call("get_potential_peers", [])] == [address]
    info = node_api.call("get_info", [])
    assert info["connection_count"] == 1 and info["head_block_num"] == 3
    assert info["head_block_id"] == producer.head_block_id
    assert info["blocks_applied"] == 3 == info["blocks_from_peers"]
    assert node_api.call("set_advanced_node_parameters", [{"sync_batch_size": 5}]) is None
    assert node_api.call("get_advanced_node_parameters", [])["sync_batch_size"] == 5
    with pytest.raises(InvalidNodeParameter):
        node_api.call("set_advanced_node_parameters", [{"nope": 1}])
    with pytest.raises(ApiError, match="must be an object"):
        node_api.call("set_advanced_node_parameters", [[1]])
    with pytest.raises(InvalidPeerAddress):  # a NodeAPIError: code 10 on the wire
        yield node_api.call("add_node", ["no-port"])
    # a transaction broadcast on the follower (no witness) is forwarded to the producer
    bc_api, _ = make_api(follower, NetworkBroadcastApi, peers=svc)
    trx = sign(follower, [transfer_op(777)])
    assert (yield bc_api.call("broadcast_transaction", [trx])) is None
    assert len(producer.pending_transactions) == 1 and follower.pending_transactions == []
    produce(producer)
    yield wait_for(lambda: follower.head_block_num == 4)
    assert follower.state.balance("1.2.7", "1.3.0") == 777
    yield close(svc)
    yield site.stop()


@pytest_twisted.inlineCallbacks
def test_get_info_counts_every_applied_block(genesis, new_chain):
    """blocks_applied counts what the chain applied since start, whatever
    the source: blocks produced here (a producer without peers), replayed
    from the block log, pushed by broadcast_block; blocks_from_peers only
    those fetched from peers."""
    producer = new_chain()
    svc = PeerService(producer, reactor=reactor)
    api, _ = make_api(producer, NetworkNodeApi, peers=svc)
    produce(producer, 3)
    info = api.call("get_info", [])
    assert (info["blocks_applied"], info["blocks_from_peers"]) == (3, 0)
    assert info["head_block_num"] == 3 and info["connection_count"] == 0
    # a node restarted over (a copy of) that block log: the replay counts, then a
    # pushed block
    replayed = new_chain(restart_of=producer)
    svc2 = PeerService(replayed, reactor=reactor)
    count = yield replayed.replay()
    assert count == 3 and svc2.info()["blocks_applied"] == 3
    produce(producer)
    bc_api, _ = make_api(replayed, NetworkBroadcastApi, peers=svc2)
    bc_api.call("broadcast_block", [producer.get_block(4)])
    assert svc2.info()["blocks_applied"] == 4 and svc2.info()["blocks_from_peers"] == 0
    assert svc.info()["blocks_applied"] == 4  # the producer's fourth block


@pytest_twisted.inlineCallbacks
def test_network_node_over_p2p(genesis, new_chain):
    """A node with a P2P node: add_node("host:port") dials over graphene's
    peer protocol; the network_node answers show the P2P peer and the
    node key; a broadcast on this node (no witness, no RPC upstream) is
    pushed here and relayed over P2P to the producer."""
    producer = new_chain()
    follower = new_chain()
    produce(producer, 3)
    psvc = PeerService(producer, reactor=reactor, parameters=FAST, p2p_endpoint="127.0.0.1:0")
    psvc.startService()
    yield wait_for(lambda: psvc.p2p.listening_port is not None)
    address = f"127.0.0.1:{psvc.p2p.listening_port.getHost().port}"
    svc = PeerService(follower, reactor=reactor, parameters=FAST, p2p_endpoint="127.0.0.1:0")
    svc.startService()
    node_api, _ = make_api(follower, NetworkNodeApi, peers=svc)
    assert (yield node_api.call("add_node", [address])) is None
    yield wait_for(lambda: follower.head_block_num == 3)
    yield wait_for(lambda: node_api.call("get_connected_peers", []))
    (peer,) = node_api.call("get_connected_peers", [])
    assert peer["host"] == peer["info"]["addr"] == address
    assert peer["info"]["node_id"] == psvc.p2p.node_public_key
    assert peer["info"]["direction"] == "outbound" and peer["info"]["user_agent"] == "nodeapi"
    info = node_api.call("get_info", [])
    assert info["connection_count"] == 1 and info["p2p_connection_count"] == 1
    assert info["node_public_key"] == info["node_id"] == svc.p2p.node_public_key
    assert info["listening_on"] == f"127.0.0.1:{svc.p2p.listening_port.getHost().port}"
    assert info["blocks_from_peers"] == 3
    bc_api, _ = make_api(follower, NetworkBroadcastApi, peers=svc)
    trx = sign(follower, [claim_op()])
    assert (yield bc_api.call("broadcast_transaction", [trx])) is None
    assert len(follower.pending_transactions) == 1
    yield wait_for(lambda: len(producer.pending_transactions) == 1)
    produce(producer)
    yield wait_for(lambda: follower.head_block_num == 4)
    assert follower.state.balance("1.2.6", "1.3.0") > 0
    yield close(svc)
    yield close(psvc)
