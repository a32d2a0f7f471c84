"""The HTTP transport: JSON-RPC on ``POST /rpc`` and ``POST /``.

Every request is a fresh session, logged in from its ``Authorization: Basic``
header or as ``login("", "")`` (wire-contract.md section 1), so restricted
sets are reachable over HTTP only with credentials that allow them; ids other
than 0 and 1 mean nothing here (forms 2, 3 and 4 of node-rpc-access.md).
Status codes and bodies: wire-contract.md section 4; a malformed Basic
header is refused with 400 before the body is read as JSON-RPC (see
:func:`nodeapi.rpc.websocket.basic_credentials`).
"""

from typing import Optional

import orjson
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.server import NOT_DONE_YET

from nodeapi.rpc.jsonrpc import (RpcError, encode_error, encode_result, error_from_failure,
                                 parse_request)
from nodeapi.rpc.login import RpcSession
from nodeapi.rpc.websocket import MalformedCredentials, basic_credentials

log = Logger()


def write_json(request, status: int, body: Optional[bytes]) -> None:
    """Finish ``request`` with ``status`` and a JSON ``body`` (None: 204)."""
    request.setResponseCode(status)
    if body is None:
        request.finish()
        return
    request.setHeader(b"content-type", b"application/json")
    request.setHeader(b"content-length", str(len(body)).encode())
    request.write(body)
    request.finish()


def plain_error(status: int, code: int, message: str) -> bytes:
    """A JSON-RPC error body for requests that never reached RPC parsing
    (wrong path or method, body too large)."""
    return orjson.dumps({"id": None, "jsonrpc": "2.0",
                         "error": {"code": code, "message": message}})


class HttpRpc:
    """Answers one HTTP JSON-RPC request.

    :param node, access, registry: as for :class:`RpcSession`.
    :param max_message_size: largest accepted body in bytes (413 above).
    """

    def __init__(self, node, access, registry, max_message_size: int, metrics=None) -> None:
        self.node, self.access, self.registry = node, access, registry
        self.max_message_size = max_message_size
        self.metrics = metrics

    def render_POST(self, request):
        length = request.getHeader(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_message_size:
            write_json(request, 413, plain_error(
                413, -32600, f"Request body over {self.max_message_size} bytes"))
            return NOT_DONE_YET
        body = request.content.read(self.max_message_size + 1)
        if len(body) > self.max_message_size:
            write_json(request, 413, plain_error(
                413, -32600, f"Request body over {self.max_message_size} bytes"))
            return NOT_DONE_YET
        header = request.getHeader(b"authorization")
        try:
            creds = basic_credentials(header.decode("latin-1") if header is not None else None)
        except MalformedCredentials as exc:
            write_json(request, 400, plain_error(400, -32600, str(exc)))
            return NOT_DONE_YET
        try:
            rpc_request = parse_request(body)
        except RpcError as exc:
            write_json(request, exc.http_status, encode_error(exc))
            return NOT_DONE_YET
        session = RpcSession(self.node, self.access, self.registry, websocket=False)
        session.auto_login(creds)
        gone = []
        request.notifyFinish().addErrback(lambda _: gone.append(True))

        def failed(failure):
            error = error_from_failure(failure, rpc_request)
            return error.http_status, encode_error(error, rpc_request), "error"

        def ok(result):
            # a result that cannot be encoded is an internal failure: answer
            # -32603 / 500 (logged by error_from_failure), never leave the
            # request unfinished
            try:
                return 200, encode_result(rpc_request, result), "ok"
            except Exception:
                return failed(Failure())

        def respond(answer):
            status, payload, outcome = answer
            session.close()
            if self.metrics is not None:
                self.metrics.rpc_call(rpc_request, outcome)
            if gone:
                return
            if rpc_request.wants_reply:
                write_json(request, status, payload)
            else:
                write_json(request, 204, None)

        def last_resort(failure):
            log.failure("HTTP reply to {where} failed", failure,
                        where=f"{rpc_request.api}.{rpc_request.function}")
            if not gone and not request.finished:
                write_json(request, 500, plain_error(500, -32603, "Internal error"))

        d = session.dispatch(rpc_request)
        d.addCallbacks(ok, failed).addCallback(respond)
        d.addErrback(last_resort)
        return NOT_DONE_YET
