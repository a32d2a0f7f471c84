"""network_broadcast takes the input forms fc's ``from_variant`` takes
(bitshares-fc static_variant.hpp reads an operation tag with ``as_uint64``,
so ``"0"`` is a transfer; integers may come as decimal strings or integral
floats) and stores the operation as graphene holds it."""

import orjson
import pytest
import pytest_twisted
import treq


from kit.chain import CORE, claim_wire, produce, transfer_wire
from kit.signing import sign_wire


async def call(site, api, method, *params):
    body = {"jsonrpc": "2.0", "id": 1, "method": "call", "params": [api, method, list(params)]}
    resp = await treq.post(site.url + "/rpc", data=orjson.dumps(body))
    return orjson.loads(await resp.content())


@pytest.fixture
def site(chain, site):
    """The shared site, the dev key's genesis balance claimed first."""
    chain.push_transaction(sign_wire(chain, [claim_wire()]))
    produce(chain)
    return site


@pytest_twisted.ensureDeferred
async def test_numeric_string_tag_and_float_integers_are_applied(chain, site):
    before = (await call(site, "database", "get_account_balances", "1.2.7", [CORE]))["result"]
    tag, body = transfer_wire(12345)
    op = ["0", dict(body, fee={"amount": float(body["fee"]["amount"]), "asset_id": CORE},
                    amount={"amount": "12345", "asset_id": CORE}, extensions=[])]
    trx = sign_wire(chain, [op])
    answer = await call(site, "network_broadcast", "broadcast_transaction", trx)
    assert "error" not in answer, answer
    produce(chain)
    after = (await call(site, "database", "get_account_balances", "1.2.7", [CORE]))["result"]
    assert int(after[0]["amount"]) - int(before[0]["amount"]) == 12345
    block = (await call(site, "database", "get_block", chain.head_block_num))["result"]
    stored = block["transactions"][0]["operations"][0]
    assert stored[0] == 0 and stored[1]["amount"] == {"amount": 12345, "asset_id": CORE}
    assert stored[1]["fee"]["amount"] == body["fee"]["amount"]
    assert stored[1]["extensions"] == []
    # an extensions_type written as an object is fc's bad cast (bitshares-fc
    # variant.cpp variant::get_array), as bitshares-core answers it
    bad = sign_wire(chain, [[0, dict(body, extensions=[])]])
    bad["operations"][0][1]["extensions"] = {}
    answer = await call(site, "network_broadcast", "broadcast_transaction", bad)
    assert answer["error"]["data"]["name"] == "bad_cast_exception"
    assert answer["error"]["message"] == ("Execution error: Bad Cast: Invalid cast from "
                                          "object_type to Array")
    assert answer["error"]["data"]["stack"][0]["format"] == "Invalid cast from ${type} to Array"
    # same bytes: the client's signatures verified over the canonical form
    assert block["transactions"][0]["signatures"] == trx["signatures"]


@pytest_twisted.ensureDeferred
async def test_out_of_range_and_wrong_types_are_refused(chain, site):
    """A double is truncated (fc ``as_int64``, see test_api_fc_inputs); what
    is beyond int64, not a decimal string or an object is refused."""
    tag, body = transfer_wire(1)
    for amount in (2 ** 63, "9" * 30, "1.5", {"amount": 1}):
        op = [0, dict(body, amount={"amount": amount, "asset_id": CORE})]
        answer = await call(site, "network_broadcast", "broadcast_transaction",
                            sign_wire(chain, [[0, body]]) | {"operations": [op]})
        assert answer["error"]["code"] != 0 and "Malformed transaction" in \
            answer["error"]["message"], (amount, answer)
    head = chain.head_block_num
    produce(chain)
    block = (await call(site, "database", "get_block", head + 1))["result"]
    assert block["transactions"] == []
