"""NodeService lifecycle over a real chain: ports are bound before anything
starts and serve only once the chain is replayed, a port that cannot be
bound is a startup failure (one log line, nothing started), a stop during a
long replay stops the replay before the block log is closed; makeService
builds the whole service tree."""

import shutil
import socket

import pytest
import pytest_twisted
from twisted.internet import defer, reactor, task
from twisted.internet.endpoints import TCP4ClientEndpoint, TCP4ServerEndpoint
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.testing import MemoryReactorClock
from twisted.logger import Logger, globalLogPublisher

from nodeapi.chain.blocklog import BlockLog
from nodeapi.chain.chain import Chain
from nodeapi.config import Options
from nodeapi.plugins.searchdb.service import SearchDBService
from nodeapi.peers.service import PeerService
from nodeapi.service import ListenFailed, ListeningService, NodeService
from nodeapi.tap import makeService
from nodeapi.plugins.witness.service import WitnessService

from kit.keys import DEV_WIF, WITNESS_KEYS


TOTAL = 3000


@pytest.fixture
def failures():
    """Every logged failure (``log.failure``) and error event while the test runs."""
    seen = []

    def observer(event):
        if "log_failure" in event or event.get("log_level") is not None and \
                event["log_level"].name in ("error", "critical"):
            seen.append(event)

    globalLogPublisher.addObserver(observer)
    yield seen
    globalLogPublisher.removeObserver(observer)


@pytest.fixture(scope="module")
def long_log(tmp_path_factory, genesis):
    """A block log file of TOTAL empty blocks (built once, unsynced)."""
    path = tmp_path_factory.mktemp("long") / "blocks"
    log = BlockLog(str(path), sync=False).open()
    chain = Chain(genesis, log)
    for _ in range(TOTAL):
        chain.generate_block(chain.get_slot_time(1), chain.get_scheduled_witness(1), DEV_WIF)
    log.close()
    return path


def open_copy(long_log, tmp_path, name="blocks"):
    path = tmp_path / name
    if not path.exists():
        shutil.copyfile(long_log, path)
    return BlockLog(str(path)).open()


def held_port():
    """A socket bound and listening on 127.0.0.1; returns (socket, port)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    return s, s.getsockname()[1]


class Hello(Protocol):
    """Says hello to whoever connects."""

    def connectionMade(self):
        self.transport.write(b"hello")


def listener(port, what="RPC (WebSocket and HTTP)"):
    endpoint = TCP4ServerEndpoint(reactor, port, interface="127.0.0.1")
    return ListeningService(endpoint, Factory.forProtocol(Hello),
                            f"tcp:{port}:interface=127.0.0.1", what)


def node_of(chain, block_log, *children, **kwargs):
    """A NodeService with ``children`` attached in order."""
    node = NodeService(chain, block_log, **kwargs)
    for child in children:
        child.setServiceParent(node)
    return node


class Received(Protocol):
    """Client side: what the server sent before the connection closed."""

    def __init__(self):
        self.data = b""
        self.closed = defer.Deferred()

    def dataReceived(self, data):
        self.data += data
        self.transport.loseConnection()

    def connectionLost(self, reason):
        self.closed.callback(self.data)


@defer.inlineCallbacks
def greeting(port):
    """What a client connecting to ``port`` receives before the close."""
    client = Received()
    yield TCP4ClientEndpoint(reactor, "127.0.0.1", port).connect(
        Factory.forProtocol(lambda: client))
    data = yield client.closed
    return data


@pytest_twisted.inlineCallbacks
def test_ports_are_bound_before_start_and_serve_once_replayed(chain, block_log):
    """``twistd`` binds in privilegedStartService (as root with ``--uid``),
    then starts; until the replay is done a connection is closed at once."""
    rpc = listener(0)
    node = node_of(chain, block_log, rpc)
    node.privilegedStartService()
    assert not rpc.running and rpc.port is not None  # bound, not started
    bound = rpc.port.getHost().port
    assert (yield greeting(bound)) == b""  # refused: the node is not ready
    node.startService()
    yield node.whenStarted()
    assert rpc.running and rpc.port.getHost().port == bound  # the same port
    assert (yield greeting(bound)) == b"hello"
    yield node.stopService()
    assert rpc.port is None and not rpc.running


@pytest_twisted.inlineCallbacks
def test_listen_failure_is_a_startup_failure(chain, block_log):
    held, port = held_port()
    events = []
    clock = task.Clock()
    clock.advance(chain.genesis.initial_timestamp + 10)
    witness = WitnessService(chain, WITNESS_KEYS, enable_stale_production=True, clock=clock)
    rpc = listener(port)
    metrics = listener(0, "Prometheus metrics")
    node = node_of(chain, block_log, witness, rpc, metrics)
    node.log = Logger(observer=events.append)
    replays = []
    chain.replay = lambda: replays.append(1)
    try:
        node.privilegedStartService()
        assert metrics.port is not None  # bound
        node.startService()
        with pytest.raises(ListenFailed) as err:
            yield node.whenStarted()
        message = str(err.value)
        assert f"cannot listen on tcp:{port}:interface=127.0.0.1" in message
        assert "Address already in use" in message
        # one line naming the endpoint and the error, no traceback
        errors = [e for e in events if e["log_level"].name == "error"]
        assert [e["error"] for e in errors] == [message]
        assert not any("log_failure" in e for e in events)
        # found before the replay: nothing started
        assert replays == []
        assert not witness.running and not rpc.running and not metrics.running
        assert rpc.port is None
        yield node.stopService()
        assert metrics.port is None  # the port that was bound is closed
        assert not clock.getDelayedCalls()
        assert block_log._fd is None  # closed
        with pytest.raises(ListenFailed):
            yield node.whenStarted()  # a later observer sees the same outcome
    finally:
        held.close()


@pytest_twisted.inlineCallbacks
def test_listening_service_stops_with_and_without_a_port(chain, block_log):
    rpc = listener(0)
    node = node_of(chain, block_log, rpc)
    node.startService()
    yield node.whenStarted()
    bound = rpc.port.getHost().port
    assert bound > 0
    yield node.stopService()
    assert rpc.port is None
    with socket.socket() as s:  # the port was released
        s.bind(("127.0.0.1", bound))
    # a ListeningService that never listened stops at once
    assert listener(0).stopService().called


@pytest.mark.parametrize("how", ["reactor", "inside_replay"])
@pytest_twisted.inlineCallbacks
def test_stop_during_replay_stops_it_and_a_restart_replays_all(
        long_log, tmp_path, genesis, failures, how):
    block_log = open_copy(long_log, tmp_path)
    chain = Chain(genesis, block_log)
    node = node_of(chain, block_log, listener(0))
    stopped = defer.Deferred()
    seen = {}

    class StopEarly:
        def block_applied(self, applied):
            assert applied.replay
            if applied.block_num == 250 and not seen:
                if how == "reactor":  # SIGTERM: twistd stops the node between steps
                    seen["at"] = applied.block_num
                    reactor.callLater(0, lambda: node.stopService().chainDeferred(stopped))
                else:  # a consumer stopping the node from inside apply_block
                    seen["at"] = applied.block_num
                    node.stopService().chainDeferred(stopped)

    chain.add_consumer(StopEarly())
    node.startService()
    started = node.whenStarted()
    yield stopped
    assert 250 <= chain.head_block_num < TOTAL
    if how == "inside_replay":
        assert chain.head_block_num == 250  # the block in hand finished, no other
    with pytest.raises(defer.CancelledError):
        yield started
    assert block_log._fd is None  # closed by stopService
    head = chain.head_block_num
    yield task.deferLater(reactor, 0.05, lambda: None)  # no step runs afterwards
    assert chain.head_block_num == head
    assert failures == []

    again_log = open_copy(long_log, tmp_path)
    assert again_log.head_num == TOTAL and again_log.truncated == 0
    again = Chain(genesis, again_log)
    node2 = node_of(again, again_log, listener(0))
    node2.startService()
    yield node2.whenStarted()
    assert again.head_block_num == TOTAL
    yield node2.stopService()
    assert failures == []


@pytest.mark.parametrize("plugins, names", [
    ("witness account_history", ["witness", "peers", "checkpoints", "rpc", "metrics"]),
    ("searchdb", ["searchdb", "peers", "checkpoints", "rpc", "metrics"]),
    ("witness searchdb es_objects", ["searchdb", "searchdb-objects", "witness", "peers",
                                     "checkpoints", "rpc", "metrics"]),
])
def test_make_service_attaches_every_service(tmp_path, plugins, names):
    """The tree is built in makeService: every service is a named child of
    the NodeService, in start order, nothing running and nothing bound."""
    options = Options()
    options.parseOptions(["--data-dir", str(tmp_path / "data"), "--plugins", plugins,
                          "--metrics-endpoint", "tcp:9100:interface=127.0.0.1"])
    memory = MemoryReactorClock()
    top = makeService(options, memory)
    assert isinstance(top, NodeService) and top.reactor is memory
    assert [s.name for s in top] == names
    from nodeapi.checkpoints import CheckpointService
    from nodeapi.plugins.searchdb_objects.service import ObjectsService

    kinds = {"searchdb": SearchDBService, "witness": WitnessService, "peers": PeerService,
             "rpc": ListeningService, "metrics": ListeningService,
             "searchdb-objects": ObjectsService, "checkpoints": CheckpointService}
    assert all(isinstance(s, kinds[s.name]) for s in top)
    assert all(s.reactor is memory for s in top
               if s.name in ("searchdb", "peers", "searchdb-objects"))
    objects = [s for s in top if s.name == "searchdb-objects"]
    assert all(s in top.chain._consumers for s in objects)
    assert top.checkpoints is top.getServiceNamed("checkpoints")
    assert top.chain._consumers[-1] is top.checkpoints  # sees blocks after every plugin
    assert not any(s.running for s in top) and memory.tcpServers == []
    top.block_log.close()


@pytest_twisted.inlineCallbacks
def test_make_service_binds_first_and_starts_after_replay(tmp_path):
    options = Options()
    options.parseOptions(["--data-dir", str(tmp_path / "data"),
                          "--metrics-endpoint", "tcp:9100:interface=127.0.0.1"])
    memory = MemoryReactorClock()
    top = makeService(options, memory)
    top.privilegedStartService()
    assert [(port, interface) for port, _factory, _backlog, interface in memory.tcpServers] \
        == [(8090, "127.0.0.1"), (9100, "127.0.0.1")]
    rpc_factory = memory.tcpServers[0][1]
    assert rpc_factory.buildProtocol(None) is None  # refused until started
    top.startService()
    started = top.whenStarted()
    for _ in range(1000):  # the replay runs on the reactor makeService was given
        if started.called:
            break
        memory.advance(0.01)
    yield started
    assert all(s.running for s in top)
    assert rpc_factory.buildProtocol(None) is not None
    yield top.stopService()
    assert not any(s.running for s in top)


@pytest_twisted.inlineCallbacks
def test_the_checkpoint_of_a_clean_stop_holds_the_last_block_produced(tmp_path):
    """The checkpoints stop last: the witness and the peers have stopped
    when the clean stop's checkpoint is written (before, it was written
    first, and a block the witness produced while it was being written was
    left out of it)."""
    from twisted.internet import reactor

    from nodeapi.chain.checkpoint import checkpoint_files

    from kit.wait import wait_for

    options = Options()
    options.parseOptions(["--data-dir", str(tmp_path / "data"), "--rpc-endpoint",
                          "tcp:0:interface=127.0.0.1", "--checkpoint-interval", "0"])
    top = makeService(options, reactor)
    order = []
    for svc in top:
        def stop(svc=svc, original=svc.stopService):
            order.append(svc.name)
            return original()
        svc.stopService = stop
    top.privilegedStartService()
    top.startService()
    yield top.whenStarted()
    yield wait_for(lambda: top.chain.head_block_num >= 2, timeout=10)
    yield top.stopService()
    assert order[-1] == "checkpoints" and order.index("witness") < order.index("checkpoints")
    newest = max(num for num, _path in checkpoint_files(str(tmp_path / "data" / "checkpoints")))
    assert newest == top.chain.head_block_num


@pytest_twisted.inlineCallbacks
def test_metrics_port_serves_during_the_replay(long_log, tmp_path):
    """The metrics port serves as soon as it is bound: while the node
    replays, /healthz answers 503 "replaying" and /status shows the
    progress (the RPC port still refuses until the node is ready)."""
    from twisted.internet.testing import StringTransport

    data = tmp_path / "data"
    data.mkdir()
    shutil.copyfile(long_log, data / "blocks.log")
    options = Options()
    options.parseOptions(["--data-dir", str(data), "--checkpoint-interval", "0",
                          "--metrics-endpoint", "tcp:9100:interface=127.0.0.1"])
    memory = MemoryReactorClock()
    top = makeService(options, memory)
    top.privilegedStartService()
    rpc_factory, metrics_factory = memory.tcpServers[0][1], memory.tcpServers[1][1]

    def get(path):
        proto = metrics_factory.buildProtocol(None)
        transport = StringTransport()
        proto.makeConnection(transport)
        proto.dataReceived(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        return transport.value().decode()

    seen = {}

    class During:
        """Asks the metrics port while block 400 is replayed."""

        def block_applied(self, applied):
            if applied.block_num == 400:
                seen["rpc"] = rpc_factory.buildProtocol(None)
                seen["healthz"], seen["status"] = get("/healthz"), get("/status")

    top.chain.add_consumer(During())
    top.startService()
    started = top.whenStarted()
    for _ in range(1000):
        if started.called:
            break
        memory.advance(0.01)
    yield started
    assert seen["rpc"] is None
    assert seen["healthz"].startswith("HTTP/1.1 503 ")
    assert f"replaying: block 400 of {TOTAL}" in seen["healthz"]
    assert f'id="replay">block 400 of {TOTAL} (13.3%)<' in seen["status"]
    assert top.chain.replay_target is None
    assert "replaying" not in get("/healthz")
    yield top.stopService()
