"""Chains for tests: operations (python-bitshares objects and wire JSON),
block production with the development key, funding init0 from the genesis
balance, asset helpers and fresh chains over a real block log.

Operation shapes: bitshares-core libraries/protocol (transfer.hpp,
balance.hpp, asset_ops.hpp, account.hpp)."""

from bitsharesbase import operations
from bitsharesbase.operationids import operations as op_ids

from nodeapi.chain.blocklog import BlockLog
from nodeapi.chain.chain import Chain
from nodeapi.protocol.fee_schedule import operation_fee
from nodeapi.protocol.times import format_time

from kit.keys import DEV_PUB, DEV_WIF
from kit.signing import sign, sign_wire


CORE = "1.3.0"
FEE0 = {"amount": 0, "asset_id": CORE}
#: init0..init10, the genesis witnesses' accounts
INIT = [f"1.2.{i}" for i in range(6, 17)]


def open_chain(genesis, path, clock=None, sync=False, **chain_args):
    """A Chain over a BlockLog at ``path`` (created or reopened).  Test
    chains skip fdatasync (``sync=False``) unless asked: durability is
    tested in tests/chain/test_blocklog.py with a real kill -9.  ``chain_args``
    go to :class:`~nodeapi.chain.chain.Chain` (``statistics_type``)."""
    log = BlockLog(str(path), sync=sync)
    log.open()
    if clock is None:
        return Chain(genesis, log, **chain_args)
    return Chain(genesis, log, clock=clock, **chain_args)


def produce(chain, n=1):
    """Produce ``n`` blocks at the next slots, signed with the dev key."""
    for _ in range(n):
        when = chain.get_slot_time(1)
        chain.generate_block(when, chain.get_scheduled_witness(1), DEV_WIF)


def jump(chain, seconds: int) -> None:
    """Produce one block about ``seconds`` after the head (missed slots)."""
    slot = chain.get_slot_at_time(chain.head_block_time + seconds)
    when = chain.get_slot_time(slot)
    chain.generate_block(when, chain.get_scheduled_witness(slot), DEV_WIF)


def claim_op():
    """balance_claim of the genesis balance 1.15.0 into init0."""
    return operations.Balance_claim(**{
        "fee": {"amount": 0, "asset_id": CORE}, "deposit_to_account": "1.2.6",
        "balance_to_claim": "1.15.0", "balance_owner_key": DEV_PUB,
        "total_claimed": {"amount": 1000000000000000, "asset_id": CORE}, "prefix": "TEST"})


def transfer_op(amount, fee=2000000, frm="1.2.6", to="1.2.7"):
    return operations.Transfer(**{
        "fee": {"amount": fee, "asset_id": CORE}, "from": frm, "to": to,
        "amount": {"amount": amount, "asset_id": CORE}, "extensions": []})


def claim_wire():
    """:func:`claim_op` as wire JSON."""
    return [37, {"fee": {"amount": 0, "asset_id": CORE}, "deposit_to_account": "1.2.6",
                 "balance_to_claim": "1.15.0", "balance_owner_key": DEV_PUB,
                 "total_claimed": {"amount": 10 ** 15, "asset_id": CORE}}]


def transfer_wire(amount):
    """A transfer of ``amount`` from init0 to init1 as wire JSON."""
    return [0, {"fee": {"amount": 2000000, "asset_id": CORE}, "from": "1.2.6",
                "to": "1.2.7", "amount": {"amount": amount, "asset_id": CORE},
                "extensions": []}]


def scripted_block(chain, k):
    """Block k+1 of a deterministic chain: a claim, then one transfer of k
    per block (also run by the killed subprocess of tests/chain/test_blocklog.py)."""
    chain.push_transaction(sign_wire(chain, [claim_wire() if k == 0 else transfer_wire(k)]))
    when = chain.get_slot_time(1)
    return chain.generate_block(when, chain.get_scheduled_witness(1), DEV_WIF)


def fund(chain, init1=0):
    """init0 claims the genesis balance in block 1; with ``init1`` it
    then sends init1 that much in the next block.  Returns ``chain``."""
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    if init1:
        chain.push_transaction(sign(chain, [transfer_op(init1)]))
        produce(chain)
    return chain


def op_id(op_class):
    """The operation number of a bitsharesbase operation class."""
    return op_ids[op_class.__name__.lower()]


def with_fee(chain, op_class, **data):
    """Build the op once with fee 0, then with the exact required fee;
    returns (op, fee)."""
    op = op_class(fee=FEE0, prefix="TEST", **data)
    fee = operation_fee([op_id(op_class), op.json()],
                        chain.state.get("2.0.0")["parameters"]["current_fees"], chain.address_prefix)
    return op_class(fee={"amount": fee, "asset_id": CORE}, prefix="TEST", **data), fee


def key_auth(key):
    """An authority of the single key ``key`` (threshold 1)."""
    return {"weight_threshold": 1, "account_auths": [], "key_auths": [[key, 1]],
            "address_auths": []}


def account_options(key):
    """account_options with memo key ``key``, voting through proxy-to-self."""
    return {"memo_key": key, "voting_account": "1.2.5", "num_witness": 0,
            "num_committee": 0, "votes": [], "extensions": []}


def asset_options(cer_quote="1.3.1", base=1, quote=1, flags=0, perms=0, max_supply=10 ** 12,
                  percent=0, max_market_fee=10 ** 6):
    """asset_options with a core exchange rate ``base`` core : ``quote``."""
    return {"max_supply": max_supply, "market_fee_percent": percent,
            "max_market_fee": max_market_fee, "issuer_permissions": perms, "flags": flags,
            "core_exchange_rate": {"base": {"amount": base, "asset_id": CORE},
                                   "quote": {"amount": quote, "asset_id": cer_quote}},
            "whitelist_authorities": [], "blacklist_authorities": [],
            "whitelist_markets": [], "blacklist_markets": [], "description": "",
            "extensions": []}


def create_asset(chain, symbol, **opts):
    """init0 creates ``symbol`` (precision 3); returns (asset id, fee)."""
    op, fee = with_fee(chain, operations.Asset_create, issuer="1.2.6", symbol=symbol,
                       precision=3, common_options=asset_options(**opts),
                       is_prediction_market=False, extensions=[])
    res = chain.push_transaction(sign(chain, [op]))
    return res["operation_results"][0][1], fee


def issue(chain, asset_id, amount, to="1.2.7"):
    """init0 issues ``amount`` of ``asset_id`` to ``to``."""
    op, _ = with_fee(chain, operations.Asset_issue, issuer="1.2.6",
                     asset_to_issue={"amount": amount, "asset_id": asset_id},
                     issue_to_account=to, extensions=[])
    chain.push_transaction(sign(chain, [op]))


def limit_order(chain, seller, sell, receive):
    """``seller`` (signed with the dev key) offers ``sell`` for
    ``receive`` until 2030; returns the order id."""
    op, _ = with_fee(chain, operations.Limit_order_create, seller=seller,
                     amount_to_sell=sell, min_to_receive=receive,
                     expiration="2030-01-01T00:00:00", fill_or_kill=False, extensions=[])
    return chain.push_transaction(sign(chain, [op]))["operation_results"][0][1]


def genesis_with(genesis, initial_timestamp=None, **parameters):
    """A copy of ``genesis`` whose ``initial_parameters`` take
    ``parameters`` (e.g. ``maintenance_interval=60``,
    ``maintenance_skip_slots=0``): a devnet with a short maintenance
    interval, as the governance tests run it; ``initial_timestamp`` (wire
    time) another genesis time (a chain past a hardfork's date).  Its
    chain id is the digest of the new file's bytes, registered with
    python-bitshares' ``known_chains`` so real clients sign for it."""
    import copy
    import hashlib
    import json

    from bitsharesbase.chains import known_chains

    data = copy.deepcopy(genesis.data)
    data["initial_parameters"].update(parameters)
    if initial_timestamp is not None:
        data["initial_timestamp"] = initial_timestamp
    chain_id = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
    known_chains[f"TESTNODE-{chain_id[:8]}"] = {
        "chain_id": chain_id, "core_symbol": genesis.core_symbol,
        "prefix": genesis.address_prefix}
    return type(genesis)(data, chain_id, genesis.address_prefix, genesis.core_symbol)


def amt(n: int, asset_id: str = CORE) -> dict:
    """The wire asset ``{"amount": n, "asset_id": asset_id}``."""
    return {"amount": n, "asset_id": asset_id}


def with_fees(chain, ops) -> list:
    """Wire ``ops`` ``[type, {...}]`` with each fee set to the exact
    required core fee (a proposal_create's own fee, not the ones
    get_required_fees lists beside it)."""
    zero = [[t, dict(d, fee=FEE0)] for t, d in ops]
    fees = [chain.required_fee(op) for op in zero]
    return [[t, dict(d, fee=f[0] if isinstance(f, list) else f)]
            for (t, d), f in zip(zero, fees)]


def signed_wire(chain, *ops, wif=DEV_WIF) -> dict:
    """A transaction of wire ``ops`` (:func:`with_fees`) over the head,
    signed with ``wif``."""
    return sign_wire(chain, with_fees(chain, ops), wif)


def push_wire(chain, *ops, wif=DEV_WIF):
    """Push wire-JSON ``ops`` (:func:`with_fees`) in one transaction signed
    with ``wif``; returns the operation results."""
    return chain.push_transaction(signed_wire(chain, *ops, wif=wif))["operation_results"]


#: The signed_block fields of :func:`fake_blocks`.
FAKE_BLOCK_SHAPE = {"witness": "1.6.1", "transaction_merkle_root": "0" * 40, "extensions": [],
         "witness_signature": "00" * 65, "transactions": []}


def fake_blocks(n):
    """n blocks that link by number and have the signed_block fields
    (enough for the log's own checks)."""
    out = []
    for num in range(1, n + 1):
        out.append(dict(FAKE_BLOCK_SHAPE, previous=f"{num - 1:08x}" + "ab" * 16,
                        timestamp=format_time(1_500_000_000 + num),
                        transactions=[{"n": num, "pad": "x" * (num * 7)}]))
    return out
