"""Every function of every API set called with wrong-typed values (strings
with a NUL byte, huge and negative numbers, floats, NaN, nested lists,
objects, null, booleans) answers a result or a clear error, never -32603
"Internal error" (an unexpected exception and a traceback in the log); the
chain is unchanged by a refused call."""

import math
import os

import pytest_twisted
from twisted.internet import defer
from twisted.python.failure import Failure

from nodeapi.api.registry import default_registry
from nodeapi.rpc.access import ApiAccess
from nodeapi.rpc.jsonrpc import error_from_failure
from nodeapi.rpc.login import LoginApi, RpcSession

from kit.site import make_node

WRONG = ["a\x00b", "\x00", "1.2.6\x00", 2 ** 70, -(2 ** 63) - 1, -1, 1.5, math.nan,
         math.inf, None, True, [], [[["x"]]], {}, {"a": "\x00"}, [None, 2 ** 64]]


def _functions(registry):
    sets = dict(registry, login=LoginApi)
    for name, cls in sorted(sets.items()):
        for function in sorted(cls.function_names()):
            yield name, cls, function


@pytest_twisted.inlineCallbacks
def test_every_function_answers_wrong_types_without_internal_error(funded, tmp_path,
                                                                   monkeypatch):
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)  # a file name a call might create lands here
    node = make_node(funded)
    registry = default_registry()
    session = RpcSession(node, ApiAccess.default(), registry)
    head = funded.head_block_num
    internal, calls = [], 0
    for name, cls, function in _functions(registry):
        instance = cls(node, session)
        binding = instance._bindings[function]
        arity = max(len(binding.params), 1)
        for value in WRONG:
            for args in ([value] * arity, [value]):
                calls += 1
                try:
                    result = getattr(instance, function)(*binding.bind(args))
                    if isinstance(result, defer.Deferred):
                        yield result
                except Exception:
                    error = error_from_failure(Failure())
                    if error.code == -32603:
                        internal.append((name, function, args))
                    continue
    assert internal == [], internal[:20]
    assert calls > 2000
    assert funded.head_block_num == head  # nothing was produced or pushed


@pytest_twisted.inlineCallbacks
def test_debug_stream_json_objects_refuses_a_nul_byte(funded, tmp_path, monkeypatch):
    """The file name is a plain name in --api-output-dir: NUL, an empty
    name or another type is a clear invalid-argument error, as for any
    other wrong value, and nothing is created."""
    from nodeapi.api.debug import DebugApi
    from nodeapi.errors import ApiError

    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    node = make_node(funded, output_dir=str(work))
    api = DebugApi(node, RpcSession(node, ApiAccess.default(), default_registry()))
    for bad in ("x\x00y", "", 7, None):
        try:
            api.debug_stream_json_objects(bad)
        except ApiError as exc:
            assert "filename must be a plain file name" in str(exc)
        else:
            raise AssertionError(f"{bad!r} accepted")
    assert os.listdir(work) == []
    try:
        yield api.debug_push_blocks("dir\x00", 1)
    except ApiError as exc:
        assert "src_filename must not contain a NUL character" in str(exc)
    else:
        raise AssertionError("NUL accepted")
    assert list(work.iterdir()) == []
