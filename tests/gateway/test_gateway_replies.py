"""What an upstream may send the gateway (nodeapi.peers.replies): the
checks every upstream message passes before anything in it is used."""

import pytest

from nodeapi.peers.replies import MAX_DEPTH, BadReply, check_value, raw_result, read_message


def _read(payload: bytes):
    return read_message(payload, raw_result(payload))


def test_replies_in_fc_and_nodeapi_form_pass_with_their_own_bytes():
    msg = _read(b'{"id":7,"jsonrpc":"2.0","result":{"n":18446744073709551615,"v":[1,"2.5"]}}')
    assert (msg.call_id, msg.raw) == (7, b'{"n":18446744073709551615,"v":[1,"2.5"]}')
    assert msg.result == {"n": 2 ** 64 - 1, "v": [1, "2.5"]} and not msg.notice
    msg = _read(b'{"id":8,"result":-9223372036854775808}')
    assert (msg.call_id, msg.result, msg.raw) == (8, -2 ** 63, b"-9223372036854775808")


def test_other_forms_errors_and_notices_pass_decoded():
    msg = _read(b'{"result": [1, 2], "id": 3}')
    assert (msg.call_id, msg.result, msg.raw) == (3, [1, 2], None)
    msg = _read(b'{"id":4,"error":{"code":10,"message":"no"}}')
    assert (msg.call_id, msg.error) == (4, {"code": 10, "message": "no"})
    msg = _read(b'{"method":"notice","params":[5,[["1.2.3"]]]}')
    assert msg.notice and (msg.callback, msg.payload) == (5, [["1.2.3"]])
    # a second member after the result: not the fast form, read whole
    msg = _read(b'{"id":9,"result":1,"error":{"code":1,"message":"x"}}')
    assert msg.error == {"code": 1, "message": "x"}


@pytest.mark.parametrize("payload, why", [
    (b'{"id":1,"result":{', "invalid JSON"),
    (b'{"id":1,"jsonrpc":"2.0","result":[1,2}', "invalid JSON"),
    (b'{"id":1,"result":NaN}', "invalid JSON"),
    (b'[{"id":1,"result":1}]', "not an object"),
    (b'{"id":1,"id":2,"result":1}', "more than one id"),
    (b'{"id": 1, "result": 5, "id": 1}', "more than one id"),
    (b'{"id":"1","result":1}', "not an integer"),
    (b'{"id":true,"result":1}', "not an integer"),
    (b'{"result":1}', "not an integer"),
    (b'{"id":1}', "neither result nor error"),
    (b'{"method":"notice","params":[1,2]}', "notice whose params"),
    (b'{"method":"notice","params":["a",[]]}', "notice whose params"),
    (b'{"id":1,"method":"call","params":[]}', "request or notice of its own"),
    (b'{"id":1,"jsonrpc":"2.0","result":{"head_block_number":1000000000000000000000000000000}}',
     "beyond fc's 64-bit range"),
    (b'{"id":1,"result":18446744073709551616}', "beyond fc's 64-bit range"),
    (b'{"id":1,"result":-9223372036854775809}', "beyond fc's 64-bit range"),
    (b'{"id":1,"result":[1e300]}', "beyond fc's 64-bit range"),
    (b'{"id":1,"jsonrpc":"2.0","result":' + b"[" * 100000 + b"]" * 100000 + b"}",
     "invalid JSON"),  # past orjson's own limit
    (b'{"id":1,"jsonrpc":"2.0","result":' + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1)
     + b"}", "nested deeper than 200"),
    (b'{"method":"notice","params":[1,[' + b"{\"a\":" * MAX_DEPTH + b"1" + b"}" * MAX_DEPTH
     + b']]}', "nested deeper than 200"),
])
def test_what_does_not_pass(payload, why):
    with pytest.raises(BadReply, match=why):
        _read(payload)


def test_depth_and_numbers_at_the_bounds():
    check_value([[]] if MAX_DEPTH >= 2 else [])
    nested = []
    for _ in range(MAX_DEPTH - 1):
        nested = [nested]
    check_value(nested)  # MAX_DEPTH arrays
    with pytest.raises(BadReply):
        check_value([nested])
    check_value([2.5, -1e18, 1.8e19, {"x": -9.2e18}])
    with pytest.raises(BadReply):
        check_value({"x": [1.9e19]})
