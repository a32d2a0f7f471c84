"""assert (36), withdraw permissions (25-28) and HTLCs (49-53) applied by the
chain and read over the node's real RPC site (HTTP JSON-RPC on loopback):
balances against hand-computed fees and amounts, withdrawal limits across
period boundaries on generated blocks, HTLC refunds at expiry as virtual
operations in account history, and graphene's error texts."""

import hashlib
import struct

import orjson
import pytest
import pytest_twisted
import treq

from conftest import DEV_PUB, DEV_WIF

from nodeapi.chain.genesis import format_time
from nodeapi.protocol.keys import ripemd160
from nodeapi.protocol.transaction import sign_transaction
from nodeapi.rpc.access import ApiAccess

from rpcserver import RunningSite, make_node

CORE = "1.3.0"
FEE0 = {"amount": 0, "asset_id": CORE}


def core(amount):
    return {"amount": amount, "asset_id": CORE}


def sign(chain, ops, expire_in=60):
    """A transaction of wire-JSON ``ops`` signed with the dev key."""
    num = chain.head_block_num & 0xFFFF
    prefix = struct.unpack_from("<I", bytes.fromhex(chain.head_block_id), 4)[0]
    trx = {"ref_block_num": num, "ref_block_prefix": prefix,
           "expiration": format_time(chain.head_block_time + expire_in),
           "operations": ops, "extensions": [], "signatures": []}
    return sign_transaction(trx, chain.chain_id, [DEV_WIF], chain.address_prefix)


def produce(chain, n=1):
    for _ in range(n):
        chain.generate_block(chain.get_slot_time(1), chain.get_scheduled_witness(1), DEV_WIF)


def produce_until(chain, when):
    """Generate blocks until the head block time is >= ``when``."""
    while chain.head_block_time < when:
        slot = max(chain.get_slot_at_time(when), 1)
        chain.generate_block(chain.get_slot_time(slot), chain.get_scheduled_witness(slot),
                             DEV_WIF)


class Node:
    """The chain behind a RunningSite; :meth:`call` / :meth:`push` over HTTP."""

    def __init__(self, chain):
        self.chain = chain
        self.site = RunningSite(make_node(chain), ApiAccess.default())

    async def call(self, api, method, *params):
        """The result; an error answer raises ``RpcError(message)``."""
        body = {"jsonrpc": "2.0", "id": 1, "method": "call", "params": [api, method,
                                                                         list(params)]}
        resp = await treq.post(self.site.url + "/rpc", data=orjson.dumps(body))
        answer = orjson.loads(await resp.content())
        if "error" in answer:
            raise RpcError(answer["error"]["message"])
        return answer["result"]

    async def push(self, *ops):
        """Broadcast ``ops`` with their required fees, then generate a block;
        returns the fees paid."""
        fees = [self.chain.required_fee([op[0], dict(op[1], fee=FEE0)])["amount"]
                for op in ops]
        ops = [[op[0], dict(op[1], fee=core(fee))] for op, fee in zip(ops, fees)]
        await self.call("network_broadcast", "broadcast_transaction", sign(self.chain, ops))
        produce(self.chain)
        return fees

    async def balance(self, account):
        return int((await self.call("database", "get_account_balances", account, [CORE]))[0][
            "amount"])


class RpcError(Exception):
    pass


@pytest.fixture
def node(chain):
    claim = [37, {"fee": FEE0, "deposit_to_account": "1.2.6", "balance_to_claim": "1.15.0",
                  "balance_owner_key": DEV_PUB, "total_claimed": core(10 ** 15)}]
    chain.push_transaction(sign(chain, [claim]))
    produce(chain)
    running = Node(chain)
    yield running
    running.site.stop_blocking()


# -- assert ------------------------------------------------------------------

def assert_op(*predicates):
    return [36, {"fee": FEE0, "fee_paying_account": "1.2.6", "predicates": list(predicates),
                 "required_auths": [], "extensions": []}]


@pytest_twisted.ensureDeferred
async def test_assert_account_name(node):
    before = await node.balance("init0")
    fees = await node.push(assert_op([0, {"account_id": "1.2.6", "name": "init0"}],
                                     [0, {"account_id": "1.2.7", "name": "init1"}]))
    assert fees == [2 * 100000]  # fee (genesis 100000) per predicate
    assert await node.balance("init0") == before - 200000
    with pytest.raises(RpcError, match=r"Assert Exception: p.account_id\(db\).name == p.name"):
        await node.push(assert_op([0, {"account_id": "1.2.6", "name": "init1"}]))
    # max_predicate_opcode is 1 on the bundled genesis: symbols and block ids refused
    with pytest.raises(RpcError, match=r"unsigned\(p.which\(\)\) < max_predicate_opcode"):
        await node.push(assert_op([1, {"asset_id": CORE, "symbol": "TEST"}]))
    assert await node.balance("init0") == before - 200000


@pytest.fixture
def all_predicates(genesis, block_log):
    """A chain whose max_predicate_opcode allows all three predicates."""
    import copy

    from nodeapi.chain.chain import Chain
    from nodeapi.chain.genesis import Genesis

    data = copy.deepcopy(genesis.data)
    data["initial_parameters"]["max_predicate_opcode"] = 3
    return Chain(Genesis(data, genesis.chain_id, genesis.address_prefix, genesis.core_symbol),
                 block_log)


@pytest_twisted.ensureDeferred
async def test_assert_symbol_and_block_id(all_predicates):
    node = Node(all_predicates)
    try:
        chain = node.chain
        claim = [37, {"fee": FEE0, "deposit_to_account": "1.2.6",
                      "balance_to_claim": "1.15.0", "balance_owner_key": DEV_PUB,
                      "total_claimed": core(10 ** 15)}]
        chain.push_transaction(sign(chain, [claim]))
        produce(chain, 2)
        head = chain.head_block_id
        await node.push(assert_op([1, {"asset_id": CORE, "symbol": "TEST"}],
                                  [2, {"id": head}]))
        with pytest.raises(RpcError, match=r"p.asset_id\(db\).symbol == p.symbol"):
            await node.push(assert_op([1, {"asset_id": CORE, "symbol": "BTS"}]))
        wrong = head[:8] + "0" * 32
        with pytest.raises(RpcError, match=r"block_summary_id_type.*\.block_id == p.id"):
            await node.push(assert_op([2, {"id": wrong}]))
    finally:
        await node.site.stop()
