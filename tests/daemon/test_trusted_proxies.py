"""Clients behind HAProxy keep their own address (README "Behind a reverse
proxy", nodeapi.rpc.proxies): a real ``twistd -n nodeapi`` daemon with
``--trusted-proxies 127.0.0.1`` behind Debian's haproxy running the shipped
etc/haproxy.cfg (X-Forwarded-For) and the same file with ``send-proxy-v2``
(PROXY protocol v2).  Clients connect from distinct loopback addresses
(127.0.0.3, 127.0.0.4 through HAProxy, 127.0.0.5 directly): the call rate
per address, the connection limit per address and the failed-login lines
(what fail2ban reads) are each client's own, and a direct client's
X-Forwarded-For or PROXY header claims nothing."""

import base64
import http.client
import socket

import orjson
import pytest

from kit.daemon import ACCESS, Daemon
from kit.haproxy import HAProxy
from kit.wait import wait_until

pytestmark = pytest.mark.slow

ALICE, BOB, DIRECT = "127.0.0.3", "127.0.0.4", "127.0.0.5"
#: calls per second per address and the bucket (HAProxy's health checks,
#: from the trusted 127.0.0.1, stay well within them)
RATE, BURST = 20, 40
BODY = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "get_chain_id", "params": []})


@pytest.fixture(scope="module")
def proxied(tmp_path_factory):
    """(node, HAProxy with X-Forwarded-For, HAProxy with PROXY v2)."""
    tmp = tmp_path_factory.mktemp("proxied")
    node = Daemon(tmp / "node", "--api-access", ACCESS, "--trusted-proxies", "127.0.0.1",
                  "--max-calls-per-second-per-ip", str(RATE),
                  "--max-call-burst-per-ip", str(BURST),
                  "--max-connections-per-ip", "2").start()
    proxies = []
    try:
        server = f"127.0.0.1:{node.port}"
        for send_proxy in (False, True):
            proxies.append(HAProxy(tmp, server, server, server,
                                   send_proxy=send_proxy).start())
        yield node, *proxies
    finally:
        for proxy in proxies:
            proxy.stop()
        node.stop()


def _http(port, source):
    return http.client.HTTPConnection("127.0.0.1", port, timeout=10,
                                      source_address=(source, 0))


def _post(conn, headers=()):
    """One get_chain_id over ``conn``: (status, reply)."""
    conn.request("POST", "/rpc", body=BODY,
                 headers={"Content-Type": "application/json", **dict(headers)})
    resp = conn.getresponse()
    return resp.status, orjson.loads(resp.read())


def _refused_calls(port, source, calls, headers=()):
    """How many of ``calls`` quick calls from ``source`` were refused."""
    conn = _http(port, source)
    try:
        replies = [_post(conn, headers) for _ in range(calls)]
    finally:
        conn.close()
    return sum(1 for _, reply in replies if "error" in reply)


def _failed_login(port, source, headers=()):
    conn = _http(port, source)
    try:
        token = base64.b64encode(b"user2:wrong").decode()
        status, reply = _post(conn, {"Authorization": "Basic " + token, **dict(headers)})
    finally:
        conn.close()
    assert "error" in reply, reply


def _failed_login_lines(node) -> list:
    return [line.split("Failed login from ", 1)[1] for line in node.log().splitlines()
            if "Failed login from " in line]


def test_call_rate_and_failed_logins_by_client_address(proxied):
    node, forwarded, _ = proxied
    # Alice (behind HAProxy) exhausts her bucket...
    assert _refused_calls(forwarded.port, ALICE, 3 * BURST) >= BURST // 2
    # ...which is hers: Bob behind the same proxy and a direct client are served
    assert _refused_calls(forwarded.port, BOB, 10) == 0
    # a direct (untrusted) client claiming to be behind a proxy as Bob, or
    # as 127.0.0.1, is charged as itself: Bob's and the proxy's buckets stay
    assert _refused_calls(node.port, DIRECT, 10,
                          {"X-Forwarded-For": f"{BOB}, 127.0.0.1"}) == 0
    assert _refused_calls(forwarded.port, BOB, 10) == 0
    # Alice's own X-Forwarded-For through HAProxy (a spoof) is to the left of
    # the address HAProxy appends: her failed login is logged as hers
    before = len(_failed_login_lines(node))
    _failed_login(forwarded.port, ALICE, {"X-Forwarded-For": "10.6.6.6"})
    _failed_login(node.port, DIRECT, {"X-Forwarded-For": "10.6.6.6"})
    # the same over WebSocket: the upgrade's X-Forwarded-For
    wrong = b"Authorization: Basic " + base64.b64encode(b"user2:wrong") + b"\r\n"
    for port, source in ((forwarded.port, BOB), (node.port, DIRECT)):
        sock, _ = _upgrade(port, source, headers=wrong + b"X-Forwarded-For: 10.6.6.6\r\n")
        sock.close()
    wait_until(lambda: len(_failed_login_lines(node)) >= before + 4, what="failed-login lines")
    lines = _failed_login_lines(node)[before:]
    assert lines == [f'{ALICE} user "user2" via http', f'{DIRECT} user "user2" via http',
                     f'{BOB} user "user2" via websocket',
                     f'{DIRECT} user "user2" via websocket'], lines


def _upgrade(port, source, prefix=b"", headers=b""):
    """A WebSocket upgrade from ``source`` (``headers``: more header
    lines): (open socket, status line)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10,
                                    source_address=(source, 0))
    sock.sendall(prefix + b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n" + headers
                 + b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                 b"Sec-WebSocket-Version: 13\r\n\r\n")
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    except ConnectionResetError:
        pass
    return sock, data.split(b"\r\n", 1)[0]


def _proxy_v2(source: str, port: int = 40000) -> bytes:
    """A PROXY protocol v2 header (TCP over IPv4) claiming ``source``."""
    addresses = (socket.inet_aton(source) + socket.inet_aton("127.0.0.1")
                 + port.to_bytes(2, "big") + (8090).to_bytes(2, "big"))
    return (b"\r\n\r\n\x00\r\nQUIT\n" + bytes([0x21, 0x11])
            + len(addresses).to_bytes(2, "big") + addresses)


def test_connection_limit_per_address_through_proxy_protocol(proxied):
    """With send-proxy-v2 each client's WebSocket connections count toward
    its own --max-connections-per-ip (2), not HAProxy's."""
    node, _, proxy_v2 = proxied
    opened = []
    try:
        for _ in range(2):
            sock, status = _upgrade(proxy_v2.port, ALICE)
            opened.append(sock)
            assert status == b"HTTP/1.1 101 Switching Protocols", status
        sock, status = _upgrade(proxy_v2.port, ALICE)  # Alice's third: refused
        opened.append(sock)
        assert not status.startswith(b"HTTP/1.1 101"), status
        for _ in range(2):  # Bob's are his own
            sock, status = _upgrade(proxy_v2.port, BOB)
            opened.append(sock)
            assert status == b"HTTP/1.1 101 Switching Protocols", status
        assert "connection from 127.0.0.3 refused" in node.log()
        assert "connection from 127.0.0.4 refused" not in node.log()
    finally:
        for sock in opened:
            sock.close()


def test_direct_client_cannot_claim_an_address_with_a_proxy_header(proxied):
    """A PROXY v2 header from an untrusted peer is not read: the bytes are
    no HTTP request, the connection is refused, and nothing is charged
    to or logged for the address it claims."""
    node, _, _ = proxied
    sock, status = _upgrade(node.port, DIRECT, prefix=_proxy_v2("10.7.7.7"))
    sock.close()
    assert not status.startswith(b"HTTP/1.1 101"), status
    # a trusted peer's header is read (the same bytes from 127.0.0.1)
    sock, status = _upgrade(node.port, "127.0.0.1", prefix=_proxy_v2("10.8.8.8"))
    sock.close()
    assert status == b"HTTP/1.1 101 Switching Protocols", status
    assert "10.7.7.7" not in node.log()
