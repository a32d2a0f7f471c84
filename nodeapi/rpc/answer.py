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

from typing import Any, NamedTuple, Optional, Union

import orjson
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from nodeapi.api.answers import SHARED_REPLY_MAX, ApiAnswers, EncodedObjects
from nodeapi.chain.remote import NotHereYet, call_loading
from nodeapi.rpc.jsonrpc import (
    Request, encode_error, encode_result, encode_value, envelope, error_from_failure)


class Answer(NamedTuple):
    """The reply to one request.

    :ivar status: the HTTP status of the reply (200; 4xx or 500 for
        errors, :attr:`RpcError.http_status`); WebSocket ignores it.
    :ivar body: the encoded JSON-RPC reply.
    :ivar outcome: ``"ok"`` or ``"error"``, the metrics label.
    :ivar code: the JSON-RPC error code of an error, else None.
    """

    status: int
    body: bytes
    outcome: str
    code: Optional[int] = None


def failed(request: Request, failure: Failure) -> Answer:
    """The error reply for ``failure`` (mapped, logged when internal)."""
    error = error_from_failure(failure, request)
    return Answer(error.http_status, encode_error(error, request), "error", error.code)


def succeeded(request: Request, result: Any, objects: Optional[EncodedObjects] = None) -> Answer:
    """The reply carrying ``result`` (chain objects placed as their kept
    encodings in ``objects``); -32603 when it cannot be encoded."""
    try:
        return Answer(200, encode_result(request, result, objects), "ok")
    except Exception:
        return failed(request, Failure())


def _shared_result(answers: ApiAnswers, state: Any, instance, binding,
                   request: Request) -> Optional[bytes]:
    """The encoded result of a ``shared`` call of the set ``instance``,
    from :attr:`ApiAnswers.replies` while ``state`` has not changed since
    an identical call, else made now and kept (up to
    :data:`~nodeapi.api.answers.SHARED_REPLY_MAX` bytes); None when the
    arguments have no key (not JSON-encodable: cannot come from a parsed
    request).  A kept reply is answered without looking the function up
    (which makes its section of the set, per request over HTTP)."""
    try:
        key = (instance.name, request.function, orjson.dumps(request.args))
    except TypeError:
        return None
    stamp = (state, state.version)
    body = answers.replies.get(key, stamp)
    if body is None:
        result = getattr(instance, request.function)(*binding.bind(request.args))
        body = encode_value(result, answers.objects)
        if len(body) <= SHARED_REPLY_MAX:
            answers.replies.put(key, stamp, body)
    return body


def answer(session, request: Request, metrics=None) -> Union[Answer, Deferred]:
    """Call the function ``request`` names on ``session``
    (:class:`~nodeapi.rpc.login.RpcSession`) and encode the reply, counted
    in ``metrics`` (:class:`~nodeapi.metrics.Metrics` or None: the outcome,
    the time to the encoded reply and an error's code).  Returns the
    :class:`Answer` at once for a synchronous function, else a Deferred
    firing with it (never failing but for a bug in the encoding of an
    error, which the transports log as their last resort).

    A function marked ``shared`` (:func:`nodeapi.api.base.api_function`,
    synchronous) answers an identical call made while the chain state is
    unchanged with the result encoded then (:attr:`ApiAnswers.replies`).

    On a devnet forked lazily (:mod:`nodeapi.chain.remote`) a call that
    touches state not loaded yet is made again once it is fetched (every
    function is safe to run again after such a failure: it changed
    nothing); the reply waits for the fetch."""
    node = session.node
    answers = node.api_answers
    started = metrics.call_started() if metrics is not None else None
    method = None  # looked up only when called (a kept shared reply needs none)
    try:
        instance, binding = session.target(request)
        if binding is None:  # a gateway's forwarded set: the upstream answers
            return _settled(metrics, request, instance.forward(request), answers.objects,
                            started)
        shared = binding.shared
        if shared is not None and (shared is True or shared(
                getattr(instance, request.function).__self__, request.args)):
            body = _shared_result(answers, node.chain.state, instance, binding, request)
            if body is not None:
                return _counted(metrics, request, Answer(200, envelope(request, body), "ok"),
                                started)
        method = getattr(instance, request.function)
        result = method(*binding.bind(request.args))
    except NotHereYet as missing:  # a devnet's lazy fork: fetch, then call again
        if method is None:  # raised by a shared call's function
            method = getattr(instance, request.function)
        result = _load_and_retry(Failure(missing), method, binding, request)
    except Exception:
        return _counted(metrics, request, failed(request, Failure()), started)
    if isinstance(result, Deferred):
        result.addErrback(_load_and_retry, method, binding, request)
    return _settled(metrics, request, result, answers.objects, started)


def _load_and_retry(failure: Failure, method, binding, request: Request):
    """A call that failed with :class:`~nodeapi.chain.remote.NotHereYet`
    (a devnet's lazy fork), at once or through its Deferred: the want
    fetched, the call made again (:func:`~nodeapi.chain.remote.call_loading`),
    a Deferred of its result; any other failure as it is."""
    missing = failure.check(NotHereYet) and failure.value
    if not missing:
        return failure
    return missing.fetch().addCallback(
        lambda _: call_loading(lambda: method(*binding.bind(request.args))))


def _settled(metrics, request: Request, result: Any, objects,
             started: Optional[float]) -> Union[Answer, Deferred]:
    """The :class:`Answer` of a call's ``result`` (or a Deferred of it)."""
    if isinstance(result, Deferred):
        result.addCallbacks(lambda r: succeeded(request, r, objects),
                            lambda f: failed(request, f))
        return result.addCallback(lambda reply: _counted(metrics, request, reply, started))
    return _counted(metrics, request, succeeded(request, result, objects), started)


def _counted(metrics, request: Request, reply: Answer, started: Optional[float]) -> Answer:
    if metrics is not None:
        metrics.rpc_call(request, reply.outcome, started, reply.code)
    return reply
