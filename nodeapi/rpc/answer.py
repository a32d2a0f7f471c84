"""One answer path for both transports: a parsed JSON-RPC request becomes
the reply bytes, the HTTP status and the metrics outcome.

The WebSocket protocol (:mod:`nodeapi.rpc.websocket`) and the HTTP resource
(:mod:`nodeapi.rpc.http`) parse their requests and deliver the replies in
their own ways (frames, back-pressure, in-flight limits; status lines,
Basic auth, one session per request); what happens in between is here, once:
the call through the session, the encoding of the result (a result that
cannot be encoded is an internal failure, -32603), the mapping of every
failure to its JSON-RPC error (:func:`~nodeapi.rpc.jsonrpc.error_from_failure`,
docs/wire-contract.rst section 4) and the metrics of the call.
"""

from typing import Any, NamedTuple, Union

from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from nodeapi.rpc.jsonrpc import Request, encode_error, encode_result, error_from_failure


class Answer(NamedTuple):
    """The reply to one request.

    :ivar status: the HTTP status of the reply (200; 4xx or 500 for
        errors, :attr:`RpcError.http_status`); WebSocket ignores it.
    :ivar body: the encoded JSON-RPC reply.
    :ivar outcome: ``"ok"`` or ``"error"``, the metrics label.
    """

    status: int
    body: bytes
    outcome: str


def failed(request: Request, failure: Failure) -> Answer:
    """The error reply for ``failure`` (mapped, logged when internal)."""
    error = error_from_failure(failure, request)
    return Answer(error.http_status, encode_error(error, request), "error")


def succeeded(request: Request, result: Any) -> Answer:
    """The reply carrying ``result``; -32603 when it cannot be encoded."""
    try:
        return Answer(200, encode_result(request, result), "ok")
    except Exception:
        return failed(request, Failure())


def _counted(metrics, request: Request, reply: Answer) -> Answer:
    if metrics is not None:
        metrics.rpc_call(request, reply.outcome)
    return reply


def answer(session, request: Request, metrics=None) -> Union[Answer, Deferred]:
    """Call the function ``request`` names on ``session``
    (:class:`~nodeapi.rpc.login.RpcSession`) and encode the reply, counted
    in ``metrics`` (:class:`~nodeapi.metrics.Metrics` or None).  Returns the
    :class:`Answer` at once for a synchronous function, else a Deferred
    firing with it (never failing but for a bug in the encoding of an
    error, which the transports log as their last resort)."""
    try:
        result = session.invoke(request)
    except Exception:
        return _counted(metrics, request, failed(request, Failure()))
    if isinstance(result, Deferred):
        result.addCallbacks(lambda r: succeeded(request, r), lambda f: failed(request, f))
        return result.addCallback(lambda reply: _counted(metrics, request, reply))
    return _counted(metrics, request, succeeded(request, result))
