"""The RPC port against web pages (nodeapi.rpc.browser_guard), on a real
site over loopback sockets: a WebSocket from a foreign origin, a
``text/plain`` POST (no CORS preflight), a rebound DNS name (``Host:
evil.example``) are refused with a JSON-RPC error naming the header and
the option; loopback pages, non-browser clients (no ``Origin``) and
``application/json; charset=utf-8`` keep working; the options widen the
lists (``*``, a scheme and port, the bound address)."""

import pytest
import pytest_twisted
from twisted.internet import threads

from nodeapi.rpc.access import ApiAccess
from nodeapi.rpc.browser_guard import BrowserGuard, OriginRule

from kit.raw_http import WS_UPGRADE, json_rpc, raw_request
from kit.site import RunningSite, make_node

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def running(funded):
    site = RunningSite(make_node(funded), ApiAccess.default())
    yield site
    site.stop_blocking()


def _send(site, *args, **kwargs):
    return threads.deferToThread(raw_request, site.port, *args, **kwargs)


def _refused(answer, status, *words):
    assert answer.status == status, answer
    error = answer.json()["error"]
    assert error["code"] == -32600
    for word in words:
        assert word in error["message"], error
    return error["message"]


@pytest_twisted.inlineCallbacks
def test_a_websocket_from_a_foreign_origin_is_refused(running, captured):
    """A page of http://evil.example opening ws://127.0.0.1:port gets 403
    at the handshake (before: 101 and every anonymous set), logged once a
    minute (the operator sees why); a page on a loopback origin, and a
    client sending no Origin, are upgraded."""
    for origin in ("http://evil.example", "https://127.0.0.1.evil.example", "null",
                   "http://localhost.evil.example:8090"):
        answer = yield _send(running, "GET", "/", headers=dict(WS_UPGRADE, Origin=origin))
        _refused(answer, 403, f"Origin '{origin}' is not allowed", "--rpc-allowed-origins")
        assert running.site.ws_factory.connections == set()
    lines = [text for _level, text, event in captured if event.get("kind") == "browser_refused"
             or "refused: Origin" in text]
    assert len(lines) == 1 and "refused: Origin 'http://evil.example' is not allowed" in lines[0]
    for origin in ("http://localhost:3000", "https://127.0.0.1", "http://[::1]:8080", None):
        headers = dict(WS_UPGRADE) if origin is None else dict(WS_UPGRADE, Origin=origin)
        answer = yield _send(running, "GET", "/", headers=headers)
        assert answer.status == 101, (origin, answer)


@pytest_twisted.inlineCallbacks
def test_a_text_plain_post_is_refused(running):
    """The POSTs a page may send without a CORS preflight (text/plain,
    a form, an untyped body with an Origin) get 415 and run nothing;
    application/json with or without a charset, and an untyped body from
    a client without Origin (treq, curl --data-binary), are answered."""
    body = json_rpc("get_chain_id")
    for headers in ({"Content-Type": "text/plain"},
                    {"Content-Type": "text/plain", "Origin": "http://localhost"},
                    {"Content-Type": "application/x-www-form-urlencoded"},
                    {"Content-Type": "multipart/form-data; boundary=x"},
                    {"Origin": "http://localhost:3000"}):
        answer = yield _send(running, body=body, headers=headers)
        _refused(answer, 415, "Content-Type", "application/json")
        assert "result" not in answer.json()
    for headers in (JSON, {"Content-Type": "application/json; charset=utf-8"},
                    {"Content-Type": "APPLICATION/JSON", "Origin": "http://localhost:3000"},
                    {}):
        answer = yield _send(running, body=body, headers=headers)
        assert answer.status == 200 and answer.json()["result"] == running.node.chain.chain_id


@pytest_twisted.inlineCallbacks
def test_a_rebound_dns_name_is_refused(running):
    """A page whose name now resolves to 127.0.0.1 sends Host: evil.example
    (and no foreign Origin: it is "same-origin"): 403 on HTTP, on the
    WebSocket upgrade and on every path; loopback names with or without a
    port, and a request without Host (HTTP/1.0 clients), pass."""
    port = running.port
    for host in (f"evil.example:{port}", "evil.example", "127.0.0.1.evil.example",
                 "localhost.:1:2"):
        answer = yield _send(running, body=json_rpc("get_chain_id"), headers=JSON, host=host)
        _refused(answer, 403, "Host", "--rpc-allowed-hosts")
        answer = yield _send(running, "GET", "/", headers=WS_UPGRADE, host=host)
        _refused(answer, 403, "--rpc-allowed-hosts")
    answer = yield _send(running, "GET", "/elsewhere", host="evil.example")
    _refused(answer, 403, "--rpc-allowed-hosts")
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", f"[::1]:{port}",
                 "localhost.", None):
        answer = yield _send(running, body=json_rpc("get_chain_id"), headers=JSON, host=host)
        assert answer.status == 200, (host, answer)


@pytest_twisted.inlineCallbacks
def test_the_options_widen_the_lists(funded):
    """``*`` allows any host; an origin rule with a scheme and port allows
    only that one; ``*`` origins allow any page (a public node that wants
    browser dapps everywhere)."""
    guard = BrowserGuard.from_options(["*"], ["https://wallet.example:8443", "localhost"])
    site = RunningSite(make_node(funded), ApiAccess.default(), browser_guard=guard)
    try:
        answer = yield _send(site, body=json_rpc("get_chain_id"), headers=JSON,
                             host="api.example.org")
        assert answer.status == 200
        for origin, status in (("https://wallet.example:8443", 101),
                               ("http://wallet.example:8443", 403),
                               ("https://wallet.example", 403),
                               ("http://localhost:1234", 101)):
            answer = yield _send(site, "GET", "/", headers=dict(WS_UPGRADE, Origin=origin))
            assert answer.status == status, (origin, answer)
    finally:
        yield site.stop()
    guard = BrowserGuard.from_options(["api.example.org"], ["*"])
    site = RunningSite(make_node(funded), ApiAccess.default(), browser_guard=guard)
    try:
        answer = yield _send(site, "GET", "/", host="api.example.org",
                             headers=dict(WS_UPGRADE, Origin="http://anything.example"))
        assert answer.status == 101
        answer = yield _send(site, body=json_rpc("get_chain_id"), headers=JSON)
        _refused(answer, 403, "Host '127.0.0.1' is not allowed", "api.example.org")
    finally:
        yield site.stop()


def test_the_defaults_add_the_bound_address():
    """The address --rpc-endpoint binds is a default host and origin; an
    endpoint on every interface adds nothing (its operator names the
    public names)."""
    guard = BrowserGuard.from_options(endpoint="tcp:8090:interface=10.1.2.3")
    assert guard.hosts == {"localhost", "127.0.0.1", "::1", "10.1.2.3"}
    assert OriginRule("10.1.2.3") in guard.origins
    assert not guard.loopback_only
    for endpoint in ("tcp:8090", "tcp:8090:interface=0.0.0.0", "tcp6:8090:interface=\\:\\:"):
        assert BrowserGuard.from_options(endpoint=endpoint).loopback_only
    guard = BrowserGuard.from_options(endpoint="tcp6:8090:interface=fe80\\:\\:1")
    assert "fe80::1" in guard.hosts
