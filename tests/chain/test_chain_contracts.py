"""assert (36), withdraw permissions (25-28) and HTLCs (49-53) applied by the
chain and read over the node's real RPC site (HTTP JSON-RPC on loopback):
balances against hand-computed fees and amounts, withdrawal limits across
period boundaries on generated blocks, HTLC refunds at expiry as virtual
operations in account history, and graphene's error texts."""

import hashlib

import orjson
import pytest
import pytest_twisted
import treq

from nodeapi.protocol.times import format_time
from nodeapi.protocol.keys import ripemd160
from nodeapi.rpc.access import ApiAccess

from kit.chain import CORE, FEE0, claim_wire, open_chain, produce
from kit.keys import DEV_WIF
from kit.signing import sign_wire as sign
from kit.site import RunningSite, make_node


def core(amount):
    return {"amount": amount, "asset_id": CORE}


def produce_until(chain, when):
    """Generate blocks until the head block time is >= ``when``."""
    while chain.head_block_time < when:
        slot = max(chain.get_slot_at_time(when), 1)
        chain.generate_block(chain.get_slot_time(slot), chain.get_scheduled_witness(slot),
                             DEV_WIF)


def claim_genesis(chain):
    """init0 claims the genesis balance 1.15.0 (10^15), in a block."""
    chain.push_transaction(sign(chain, [claim_wire()]))
    produce(chain)


def custom_chain(genesis, path, **parameters):
    """A chain over a block log at ``path`` on the bundled genesis with
    ``parameters`` replaced."""
    import copy

    from nodeapi.chain.genesis import Genesis

    data = copy.deepcopy(genesis.data)
    data["initial_parameters"].update(parameters)
    return open_chain(Genesis(data, genesis.chain_id, genesis.address_prefix,
                              genesis.core_symbol), path)


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
    claim_genesis(chain)
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


@pytest_twisted.ensureDeferred
async def test_assert_symbol_and_block_id(genesis, tmp_path):
    """max_predicate_opcode 3: all three predicates allowed."""
    node = Node(custom_chain(genesis, tmp_path / "blocks", max_predicate_opcode=3))
    try:
        chain = node.chain
        claim_genesis(chain)
        produce(chain)
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
        node.chain.block_log.close()


# -- withdraw permissions ----------------------------------------------------

def permission_create(start, limit=1000, period=10, periods=3):
    return [25, {"fee": FEE0, "withdraw_from_account": "1.2.6", "authorized_account": "1.2.7",
                 "withdrawal_limit": core(limit), "withdrawal_period_sec": period,
                 "periods_until_expiration": periods, "period_start_time": format_time(start)}]


def claim(amount, permission="1.12.0"):
    return [27, {"fee": FEE0, "withdraw_permission": permission,
                 "withdraw_from_account": "1.2.6", "withdraw_to_account": "1.2.7",
                 "amount_to_withdraw": core(amount)}]


@pytest_twisted.ensureDeferred
async def test_withdraw_permission_periods(node):
    chain = node.chain
    await node.push([0, {"fee": FEE0, "from": "1.2.6", "to": "1.2.7",
                         "amount": core(10 ** 8), "extensions": []}])
    head = chain.head_block_time
    with pytest.raises(RpcError, match=r"Assert Exception: op.period_start_time > "
                                       r"d.head_block_time\(\)"):
        await node.push(permission_create(head))
    start = head + 5
    giver0, taker0 = await node.balance("init0"), await node.balance("init1")
    assert await node.push(permission_create(start)) == [100000]
    permit = await node.call("database", "get_objects", ["1.12.0"])
    assert permit == [{"id": "1.12.0", "withdraw_from_account": "1.2.6",
                       "authorized_account": "1.2.7", "withdrawal_limit": core(1000),
                       "withdrawal_period_sec": 10, "period_start_time": format_time(start),
                       "expiration": format_time(start + 30), "claimed_this_period": 0}]
    with pytest.raises(RpcError, match=r"permit.period_start_time <= head_block_time"):
        await node.push(claim(100))
    produce_until(chain, start)
    claimed = 0
    for amount in (600, 400):  # one period: 1000 in all
        assert await node.push(claim(amount)) == [2000000]
        claimed += amount
    with pytest.raises(RpcError, match=r"op.amount_to_withdraw <= "
                                       r"permit.available_this_period\( head_block_time \)"):
        await node.push(claim(1))
    produce_until(chain, start + 10)  # second period: the whole limit again
    await node.push(claim(1000))
    claimed += 1000
    by_giver = await node.call("database", "get_withdraw_permissions_by_giver", "init0",
                               "1.12.0", 10)
    assert by_giver[0]["period_start_time"] == format_time(start + 10)
    assert by_giver[0]["claimed_this_period"] == 1000
    produce_until(chain, start + 25)  # third period skipped into: starts at start + 20
    await node.push(claim(300))
    claimed += 300
    by_recipient = await node.call("database", "get_withdraw_permissions_by_recipient",
                                   "1.2.7", "1.12.0", 10)
    assert by_recipient[0]["period_start_time"] == format_time(start + 20)
    assert by_recipient[0]["claimed_this_period"] == 300
    assert await node.balance("init0") == giver0 - 100000 - claimed
    assert await node.balance("init1") == taker0 + claimed - 4 * 2000000
    full = await node.call("database", "get_full_accounts", ["init1"], False)
    assert [p["id"] for p in full[0][1]["withdraws_to"]] == ["1.12.0"]
    produce_until(chain, start + 30)  # expiration: removed
    assert await node.call("database", "get_objects", ["1.12.0"]) == [None]
    assert await node.call("database", "get_withdraw_permissions_by_giver", "init0",
                           "1.12.0", 10) == []


@pytest_twisted.ensureDeferred
async def test_withdraw_permission_update_delete_and_limits(node):
    chain = node.chain
    start = chain.head_block_time + 5
    await node.push(permission_create(start), permission_create(start + 1, limit=5))
    update = [26, {"fee": FEE0, "withdraw_from_account": "1.2.6", "authorized_account": "1.2.7",
                   "permission_to_update": "1.12.0", "withdrawal_limit": core(7),
                   "withdrawal_period_sec": 20, "period_start_time": format_time(start + 2),
                   "periods_until_expiration": 4}]
    assert await node.push(update) == [100000]
    permit = (await node.call("database", "get_objects", ["1.12.0"]))[0]
    assert (permit["withdrawal_limit"], permit["withdrawal_period_sec"],
            permit["expiration"]) == (core(7), 20, format_time(start + 2 + 80))
    bad = [26, dict(update[1], authorized_account="1.2.8")]
    with pytest.raises(RpcError, match=r"permit.authorized_account == op.authorized_account"):
        await node.push(bad)
    assert [p["id"] for p in await node.call(
        "database", "get_withdraw_permissions_by_giver", "init0", "1.12.1", 10)] == ["1.12.1"]
    with pytest.raises(RpcError, match="limit can not be greater than 101"):
        await node.call("database", "get_withdraw_permissions_by_giver", "init0", "1.12.0",
                        102)
    delete = [28, {"fee": FEE0, "withdraw_from_account": "1.2.6", "authorized_account": "1.2.7",
                   "withdrawal_permission": "1.12.0"}]
    assert await node.push(delete) == [0]
    assert await node.call("database", "get_objects", ["1.12.0"]) == [None]


# -- HTLC --------------------------------------------------------------------

PREIMAGE = b"a secret preimage"
HASHERS = {0: ripemd160, 1: lambda b: hashlib.sha1(b).digest(),
           2: lambda b: hashlib.sha256(b).digest(),
           3: lambda b: ripemd160(hashlib.sha256(b).digest())}


def htlc_create(amount, period, which=2, size=len(PREIMAGE), preimage=PREIMAGE):
    return [49, {"fee": FEE0, "from": "1.2.6", "to": "1.2.7", "amount": core(amount),
                 "preimage_hash": [which, HASHERS[which](preimage).hex()],
                 "preimage_size": size, "claim_period_seconds": period, "extensions": {}}]


def htlc_redeem(htlc_id, preimage=PREIMAGE, redeemer="1.2.7"):
    return [50, {"fee": FEE0, "htlc_id": htlc_id, "redeemer": redeemer,
                 "preimage": preimage.hex(), "extensions": []}]


def htlc_extend(htlc_id, seconds, issuer="1.2.6"):
    return [52, {"fee": FEE0, "htlc_id": htlc_id, "update_issuer": issuer,
                 "seconds_to_add": seconds, "extensions": []}]


async def history_ops(node, account):
    """``[(op type, op)]`` of the account's history, oldest first."""
    entries = await node.call("history", "get_account_history", account, "1.11.0", 100,
                              "1.11.0")
    return [tuple(e["op"]) for e in reversed(entries)]


@pytest_twisted.ensureDeferred
async def test_htlc_create_redeem_every_hash(node):
    chain = node.chain
    await node.push([0, {"fee": FEE0, "from": "1.2.6", "to": "1.2.7",
                         "amount": core(10 ** 8), "extensions": []}])
    giver0, taker0 = await node.balance("init0"), await node.balance("init1")
    # fee + fee_per_day per started day (defaults 100000 each: not in the genesis schedule)
    assert await node.push(htlc_create(10000, 86401)) == [100000 + 2 * 100000]
    head = chain.head_block_time - 1  # the time the block applying it started from
    htlc = await node.call("database", "get_htlc", "1.16.0")
    assert htlc == {"id": "1.16.0",
                    "transfer": {"from": "1.2.6", "to": "1.2.7", "amount": 10000,
                                 "asset_id": CORE},
                    "conditions": {"hash_lock": {
                        "preimage_hash": [2, hashlib.sha256(PREIMAGE).hexdigest()],
                        "preimage_size": len(PREIMAGE)},
                        "time_lock": {"expiration": format_time(head + 86401)}}}
    assert await node.balance("init0") == giver0 - 300000 - 10000
    wrong = b"x" * len(PREIMAGE)
    with pytest.raises(RpcError, match=r"Provided preimage does not generate correct hash\."):
        await node.push(htlc_redeem("1.16.0", wrong))
    with pytest.raises(RpcError, match=r"Preimage size mismatch\."):
        await node.push(htlc_redeem("1.16.0", PREIMAGE + b"!"))
    # fee + fee_per_kb per started KiB of preimage
    assert await node.push(htlc_redeem("1.16.0")) == [100000 + 100000]
    assert await node.balance("init1") == taker0 + 10000 - 200000
    assert await node.call("database", "get_htlc", "1.16.0") is None
    redeemed = [op for t, op in await history_ops(node, "init1") if t == 51]
    assert redeemed == [{"fee": FEE0, "htlc_id": "1.16.0", "from": "1.2.6", "to": "1.2.7",
                         "redeemer": "1.2.7", "amount": core(10000),
                         "htlc_preimage_hash": [2, hashlib.sha256(PREIMAGE).hexdigest()],
                         "htlc_preimage_size": len(PREIMAGE), "preimage": PREIMAGE.hex()}]
    # ripemd160, sha1, hash160; a zero preimage_size takes any length
    await node.push(htlc_create(1, 60, which=0), htlc_create(2, 60, which=1),
                    htlc_create(3, 60, which=3), htlc_create(4, 60, size=0))
    assert [h["id"] for h in await node.call("database", "list_htlcs", "1.16.2", 10)] == [
        "1.16.2", "1.16.3", "1.16.4"]
    assert [h["id"] for h in await node.call("database", "get_htlc_by_to", "init1",
                                             "1.16.0", 2)] == ["1.16.1", "1.16.2"]
    taker1 = await node.balance("init1")
    await node.push(*(htlc_redeem(f"1.16.{n}") for n in range(1, 5)))
    assert await node.balance("init1") == taker1 + 1 + 2 + 3 + 4 - 4 * 200000
    assert await node.call("database", "list_htlcs", "1.16.0", 10) == []


@pytest_twisted.ensureDeferred
async def test_htlc_extend_and_refund_at_expiry(node):
    chain = node.chain
    with pytest.raises(RpcError, match="HTLC Timeout exceeds allowed length"):
        await node.push(htlc_create(5000, 2592001))
    await node.push([0, {"fee": FEE0, "from": "1.2.6", "to": "1.2.7",
                         "amount": core(10 ** 8), "extensions": []}])
    giver0 = await node.balance("init0")
    await node.push(htlc_create(5000, 5))
    created = chain.head_block_time - 1
    with pytest.raises(RpcError, match=r"HTLC may only be extended by its creator\."):
        await node.push(htlc_extend("1.16.0", 10, issuer="1.2.7"))
    with pytest.raises(RpcError, match="Extension pushes contract too far into the future"):
        await node.push(htlc_extend("1.16.0", 2592000))
    assert await node.push(htlc_extend("1.16.0", 10)) == [100000 + 100000]
    htlc = await node.call("database", "get_htlc_by_from", "init0", "1.16.0", 10)
    assert htlc[0]["conditions"]["time_lock"]["expiration"] == format_time(created + 15)
    produce_until(chain, created + 14)
    assert await node.call("database", "get_htlc", "1.16.0") is not None
    produce_until(chain, created + 15)  # expiration <= head block time: refunded
    assert await node.call("database", "get_htlc", "1.16.0") is None
    assert await node.balance("init0") == giver0 - 200000 - 200000
    refunds = [op for t, op in await history_ops(node, "init0") if t == 53]
    assert refunds == [{"fee": FEE0, "htlc_id": "1.16.0", "to": "1.2.6",
                        "original_htlc_recipient": "1.2.7", "htlc_amount": core(5000),
                        "htlc_preimage_hash": [2, hashlib.sha256(PREIMAGE).hexdigest()],
                        "htlc_preimage_size": len(PREIMAGE)}]
    # graphene db_notify.cpp: a refund impacts its fee payer (the sender) only
    assert [t for t, _ in await history_ops(node, "init1")] == [0, 49]
    with pytest.raises(RpcError, match="limit can not be greater than 100"):
        await node.call("database", "list_htlcs", "1.16.0", 101)


@pytest.mark.parametrize("options, error", [
    (None, r"HTLC Committee options are not set\."),
    ({"max_timeout_secs": 60, "max_preimage_size": 16},
     "HTLC preimage length exceeds allowed length"),
])
@pytest_twisted.ensureDeferred
async def test_htlc_committee_options(genesis, tmp_path, options, error):
    """Without ``updatable_htlc_options`` htlc_create is refused; with them,
    ``max_preimage_size`` bounds ``preimage_size`` (a uint16: the bundled
    1024000 cannot be exceeded)."""
    chain = custom_chain(genesis, tmp_path / "blocks", extensions=(
        {} if options is None else {"updatable_htlc_options": options}))
    node = Node(chain)
    try:
        claim_genesis(chain)
        with pytest.raises(RpcError, match=error):
            await node.push(htlc_create(5000, 60))
    finally:
        await node.site.stop()
        node.chain.block_log.close()
