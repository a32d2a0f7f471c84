"""One HTTP request written byte for byte to a loopback port, as a browser
or a hostile page would send it (any ``Host``, ``Origin``, ``Content-Type``,
or a WebSocket upgrade), and its answer read back: blocking (call it from a
worker thread in a reactor test, ``threads.deferToThread``)."""

import json
import socket

#: the upgrade headers of a WebSocket handshake (RFC 6455 section 4.1)
WS_UPGRADE = {"Upgrade": "websocket", "Connection": "Upgrade",
              "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13"}


class RawAnswer:
    """``status`` (int), ``headers`` (lower-case names), ``body`` (bytes);
    :meth:`json` decodes the body."""

    def __init__(self, status: int, headers: dict, body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)

    def __repr__(self) -> str:
        return f"RawAnswer({self.status}, {self.body[:300]!r})"


def raw_request(port: int, method: str = "POST", path: str = "/rpc", *, headers=None,
                body: bytes = b"", host: str | None = "127.0.0.1", timeout: float = 10.0
                ) -> RawAnswer:
    """Send one request to ``127.0.0.1:port`` with exactly ``headers``
    (``host``: the Host header, default ``127.0.0.1``; None: none) and
    ``body`` (a Content-Length is added with a body), ``Connection:
    close`` unless the headers upgrade; the answer's status line, headers
    and body (up to the connection's end, or the headers only for a 101)."""
    lines = [f"{method} {path} HTTP/1.1"]
    if host is not None:
        lines.append(f"Host: {host}")
    headers = dict(headers or {})
    if body:
        headers.setdefault("Content-Length", str(len(body)))
    headers.setdefault("Connection", "close")
    lines += [f"{k}: {v}" for k, v in headers.items()]
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
        head, _, rest = received.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split()[1])
        answer_headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            answer_headers[name.strip().lower()] = value.strip()
        if status != 101:
            length = int(answer_headers.get("content-length", -1))
            while length < 0 or len(rest) < length:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                rest += chunk
        return RawAnswer(status, answer_headers, rest)


def json_rpc(method: str, *params, api: str | None = None) -> bytes:
    """A JSON-RPC 2.0 body: ``method(*params)``, or ``call(api, method,
    params)`` with ``api``."""
    doc = ({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
           if api is None else
           {"jsonrpc": "2.0", "id": 1, "method": "call", "params": [api, method, list(params)]})
    return json.dumps(doc).encode()
