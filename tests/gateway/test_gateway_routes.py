"""The gateway's routes (``--upstream-routes``, nodeapi.gateway.routes):
the file's checks with errors naming the file and the entry, and over real
sockets two nodeapi upstreams of one chain, only the second serving the
history set: history routed to it is always answered (unrouted, the
other upstream's "not served" errors reach clients); cache lifetimes per
function: never, for good, for seconds (on a test clock)."""

import orjson
import pytest
import pytest_twisted
import treq
from twisted.internet import task
from twisted.python import usage

from nodeapi.api.registry import default_registry
from nodeapi.config import Options
from nodeapi.gateway.routes import ANYWHERE, Route, RoutesError, UpstreamRoutes
from nodeapi.protocol.node_address import parse_node_address
from nodeapi.rpc.access import ApiAccess

from kit.access import VECTORS
from kit.chain import produce
from kit.gateway import GatewaySite
from kit.site import RunningSite, make_node

ADMIN = ("bytemaster", "supersecret")
UPSTREAMS = [parse_node_address("ws://127.0.0.1:8091"), parse_node_address("ws://10.0.0.2:8090")]


# -- the file ------------------------------------------------------------------------

def _load(tmp_path, data):
    path = tmp_path / "routes.json"
    path.write_bytes(data if isinstance(data, bytes) else orjson.dumps(data))
    return UpstreamRoutes.load(str(path), UPSTREAMS), str(path)


def test_routes_by_function_then_set(tmp_path):
    routes, _ = _load(tmp_path, {"upstreams": [
        {"name": "history", "urls": ["ws://10.0.0.2:8090"]},
        {"name": "database_api.get_block", "ttl": -1},
        {"name": "database", "ttl": 0},
        {"name": "network_broadcast", "urls": ["ws://user:pw@127.0.0.1:8091"]}]})
    assert routes.route("history", "get_account_history") == Route(
        "history", None, frozenset({("10.0.0.2", 8090)}), -2)
    assert routes.route("database", "get_block").ttl == -1
    assert routes.route("database", "get_objects").ttl == 0
    assert routes.route("block", "get_blocks") is ANYWHERE
    assert routes.route("network_broadcast", "broadcast_transaction").upstreams == frozenset(
        {("127.0.0.1", 8091)})
    # a bare list is a file too
    assert _load(tmp_path, [{"name": "crypto", "ttl": 5}])[0].route("crypto", "x").ttl == 5


@pytest.mark.parametrize("data, message", [
    (b"{", "not JSON"),
    ({"routes": []}, "expected a list of routes or {\"upstreams\": [...]}"),
    ([["history"]], "route 1: expected an object"),
    ([{"urls": []}], "route 1: needs a \"name\""),
    ([{"name": "histroy"}], "route 1 ('histroy'): 'histroy' is not an API set the gateway"),
    ([{"name": "history"}, {"name": "database.Get-Block"}],
     "route 2 ('database.Get-Block'): 'Get-Block' is not a function name"),
    ([{"name": "history", "urls": ["ws://10.0.0.9:8090"]}],
     "route 1 ('history'): 'ws://10.0.0.9:8090' is not one of the --upstream nodes"),
    ([{"name": "history", "urls": []}], "\"urls\" must be a non-empty list"),
    ([{"name": "history", "urls": ["ws://"]}], "route 1 ('history'): 'ws://'"),
    ([{"name": "database", "ttl": -3}], "route 1 ('database'): \"ttl\" must be whole seconds"),
    ([{"name": "database", "ttl": 1.5}], "\"ttl\" must be whole seconds"),
    ([{"name": "database", "ttl": True}], "\"ttl\" must be whole seconds"),
    ([{"name": "database", "tll": 3}], "route 1 ('database'): unknown keys tll"),
    ([{"name": "network_broadcast", "ttl": 3}], "broadcasts are never cached"),
    ([{"name": "database"}, {"name": "database_api"}],
     "route 2 (database) repeats route 1"),
])
def test_bad_files_name_the_file_and_the_entry(tmp_path, data, message):
    with pytest.raises(RoutesError) as refused:
        _load(tmp_path, data)
    text = str(refused.value)
    assert text.startswith(str(tmp_path / "routes.json") + ": "), text
    assert message in text, text


def test_the_option_reads_and_checks_the_file(tmp_path):
    path = tmp_path / "routes.json"
    path.write_bytes(orjson.dumps([{"name": "history", "urls": ["ws://127.0.0.1:9"]}]))
    options = Options()
    with pytest.raises(usage.UsageError, match="upstream-routes: .*routes.json: route 1 "
                                               r"\('history'\): 'ws://127.0.0.1:9' is not one"):
        options.parseOptions(["--data-dir", str(tmp_path / "d"), "--upstream",
                              "ws://127.0.0.1:8", "--upstream-routes", str(path)])
    options = Options()
    options.parseOptions(["--data-dir", str(tmp_path / "d"), "--upstream", "ws://127.0.0.1:9",
                          "--upstream-routes", str(path)])
    assert options.upstream_routes().route("history", "x").upstreams == frozenset(
        {("127.0.0.1", 9)})
    options = Options()
    with pytest.raises(usage.UsageError, match="cannot be read"):
        options.parseOptions(["--data-dir", str(tmp_path / "d"), "--upstream",
                              "ws://127.0.0.1:9", "--upstream-routes", str(tmp_path / "none")])
    options = Options()
    with pytest.raises(usage.UsageError, match="a gateway's"):
        options.parseOptions(["--data-dir", str(tmp_path / "d"), "--upstream-routes",
                              str(path)])


# -- over real sockets -------------------------------------------------------------------

@pytest.fixture
def upstreams(funded_pair):
    """Two sites of one chain; the first serves no history set."""
    produce(funded_pair, 12)
    no_history = {k: v for k, v in default_registry().items() if k != "history"}
    sites = [RunningSite(make_node(funded_pair), ApiAccess.from_json(VECTORS),
                         registry=registry) for registry in (no_history, default_registry())]
    yield sites
    for site in sites:
        site.stop_blocking()


def _url(site):
    return f"ws://{ADMIN[0]}:{ADMIN[1]}@127.0.0.1:{site.port}"


@pytest_twisted.inlineCallbacks
def _gateway(upstreams, routes=None, **kwargs):
    """A started GatewaySite over ``upstreams`` with ``routes`` (JSON)."""
    urls = [_url(s) for s in upstreams]
    if routes is not None:
        routes = UpstreamRoutes.from_json(routes, [parse_node_address(u) for u in urls])
    gateway = GatewaySite(urls, ApiAccess.from_json(VECTORS), routes=routes, **kwargs)
    yield gateway.start()
    return gateway


@pytest_twisted.inlineCallbacks
def _call(port, api, method, *args):
    body = orjson.dumps({"jsonrpc": "2.0", "id": 5, "method": "call",
                         "params": [api, method, list(args)]})
    response = yield treq.post(f"http://127.0.0.1:{port}/rpc", data=body, auth=ADMIN)
    return orjson.loads((yield response.content()))


HISTORY = ("history", "get_account_history", "init1", "1.11.0", 10, "1.11.0")


@pytest_twisted.inlineCallbacks
def test_history_goes_to_the_upstreams_that_keep_it(upstreams):
    direct = yield _call(upstreams[1].port, *HISTORY)
    assert "result" in direct, direct
    unrouted = yield _gateway(upstreams)
    try:
        replies = []
        for _ in range(6):
            replies.append((yield _call(unrouted.port, *HISTORY)))
        assert any("error" in r for r in replies)  # half of them reach the first
    finally:
        yield unrouted.stop()
    routed = yield _gateway(upstreams, [{"name": "history", "urls": [_url(upstreams[1])]}])
    try:
        calls = [u.calls for u in routed.pool.upstreams]
        replies = []
        for _ in range(6):
            replies.append((yield _call(routed.port, *HISTORY)))
        assert all("result" in r and r["result"] == direct["result"] for r in replies), replies
        # other sets still go to both
        for _ in range(6):
            assert "result" in (yield _call(routed.port, "database", "get_objects", ["2.1.0"]))
        assert all(u.calls > c + 1 for u, c in zip(routed.pool.upstreams, calls))
    finally:
        yield routed.stop()


@pytest_twisted.inlineCallbacks
def test_cache_lifetimes_per_function(upstreams, funded_pair):
    clock = task.Clock()
    gateway = yield _gateway(upstreams, {"upstreams": [
        {"name": "database.get_chain_id", "ttl": 0},
        {"name": "database.get_account_by_name", "ttl": -1},
        {"name": "database.get_dynamic_global_properties", "ttl": 30}]}, cache_clock=clock)
    cache = gateway.gateway.cache
    try:
        for _ in range(3):
            assert "result" in (yield _call(gateway.port, "database", "get_chain_id"))
        assert (cache.hits, len(cache)) == (0, 0)  # never kept, not even as a constant
        for _ in range(3):
            reply = yield _call(gateway.port, "database", "get_account_by_name", "init1")
            assert reply["result"]["id"] == "1.2.7"
        assert (cache.hits, len(cache)) == (2, 1)
        first = (yield _call(gateway.port, "database", "get_dynamic_global_properties"))
        produce(funded_pair, 2)
        clock.advance(29)
        again = yield _call(gateway.port, "database", "get_dynamic_global_properties")
        assert again == first  # up to 30 s old
        clock.advance(1)
        fresh = yield _call(gateway.port, "database", "get_dynamic_global_properties")
        assert (fresh["result"]["head_block_number"]
                == first["result"]["head_block_number"] + 2)
        assert cache.hits == 3
    finally:
        yield gateway.stop()


# -- as operators run it -----------------------------------------------------------------

@pytest.mark.slow
def test_a_gateway_daemon_reads_its_routes(tmp_path):
    """``twistd -n nodeapi --upstream ... --upstream-routes FILE``: a bad
    file stops it at start with the file and route named; a good one
    keeps ``get_dynamic_global_properties`` 60 s (the head it answers
    stays while the producer makes blocks) and routes history."""
    import subprocess

    from kit.daemon import ACCESS, ROOT, Daemon, twistd_command
    from kit.wait import wait_until

    producer = Daemon(tmp_path / "producer", "--api-access", ACCESS).start()
    gateway = None
    try:
        upstream = f"ws://bytemaster:supersecret@127.0.0.1:{producer.port}"
        bad = tmp_path / "bad.json"
        bad.write_text('[{"name": "history", "urls": ["ws://127.0.0.1:1"]}]')
        proc = subprocess.run(
            twistd_command("-n", "--pidfile=", "nodeapi", "--data-dir", str(tmp_path / "gw0"),
                           "--upstream", upstream, "--upstream-routes", str(bad)),
            cwd=ROOT, capture_output=True, timeout=60)
        out = (proc.stdout + proc.stderr).decode()
        assert proc.returncode != 0, out
        assert (f"upstream-routes: {bad}: route 1 ('history'): 'ws://127.0.0.1:1' is not one "
                f"of the --upstream nodes") in out, out
        good = tmp_path / "routes.json"
        good.write_text(orjson.dumps({"upstreams": [
            {"name": "history", "urls": [f"ws://127.0.0.1:{producer.port}"]},
            {"name": "database.get_dynamic_global_properties", "ttl": 60}]}).decode())
        gateway = Daemon(tmp_path / "gw", "--api-access", ACCESS, "--upstream", upstream,
                         "--upstream-routes", str(good)).start()
        first = gateway.head()
        wait_until(lambda: producer.head()[0] >= first[0] + 2, what="two more blocks")
        assert gateway.head() == first
        assert gateway.call("get_account_history", "init1", "1.11.0", 10, "1.11.0",
                            api="history") == []
    finally:
        for node in (gateway, producer):
            if node is not None:
                node.stop()
