"""Chain core: genesis, empty blocks, balance claim and transfer signed by
python-bitshares, and the rejection rules."""

import pytest

from bitsharesbase import operations

from nodeapi.chain import errors
from nodeapi.protocol.times import format_time
from nodeapi.protocol.errors import InvalidOperation
from nodeapi.protocol.transaction import sign_transaction

from kit.chain import claim_op, produce, transfer_op, transfer_wire
from kit.keys import CHAIN_ID, DEV_WIF
from kit.signing import chain_tapos, sign, sign_wire


def test_genesis_objects(chain):
    s = chain.state
    assert chain.chain_id == CHAIN_ID
    assert [s.get(f"1.2.{i}")["name"] for i in range(7)] == [
        "committee-account", "witness-account", "relaxed-committee-account", "null-account",
        "temp-account", "proxy-to-self", "init0"]
    assert s.get("1.2.6")["statistics"] == "2.7.6"
    assert s.get("1.3.0")["symbol"] == "TEST"
    assert s.get("2.3.0")["current_supply"] == 1000000000000000
    assert s.get("1.6.1")["witness_account"] == "1.2.6"
    assert s.get("1.15.0")["balance"]["amount"] == 1000000000000000
    assert s.get("2.11.0")["chain_id"] == CHAIN_ID


def test_empty_blocks(chain):
    produce(chain, 3)
    assert chain.head_block_num == 3
    assert chain.get_block(3)["previous"].startswith("00000002")
    assert chain.head_block_id.startswith("00000003")


def test_claim_and_transfer(chain):
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    assert chain.state.balance("1.2.6", "1.3.0") == 1000000000000000
    chain.push_transaction(sign(chain, [transfer_op(12345)]))
    produce(chain)
    assert chain.state.balance("1.2.7", "1.3.0") == 12345
    assert chain.state.balance("1.2.6", "1.3.0") == 1000000000000000 - 12345 - 2000000
    # core_in_balance is as of the last maintenance (db_maint.cpp
    # perform_account_maintenance): block 1's, after the claim; the balance
    # changed since, so it is flagged for the next one (account_balance_object)
    assert chain.state.get("2.7.6")["core_in_balance"] == 1000000000000000
    init0_core = chain.state.balance_by_owner["1.2.6"]["1.3.0"]
    assert init0_core == "2.5.1"  # 2.5.0: the committee account's, from genesis
    assert chain.state.get(init0_core)["maintenance_flag"] is True
    # graphene pay_fee: a fee <= cashback_vesting_threshold waits in
    # pending_vested_fees until maintenance; 2.3.0 is not touched
    assert chain.state.get("2.7.6")["pending_vested_fees"] == 2000000
    assert chain.state.get("2.7.6")["lifetime_fees_paid"] == 0
    assert chain.state.get("2.3.0")["accumulated_fees"] == 0
    # 2.5.0 is the committee account's (db_genesis.cpp), 2.5.1 init0's
    assert [b["id"] for b in chain.state.balances_of("1.2.7")] == ["2.5.2"]


@pytest.mark.parametrize("case,error", [
    ("expired", errors.TransactionExpired),
    ("fee", errors.InsufficientFee),
    ("balance", errors.InsufficientBalance),
    ("authority", errors.MissingAuthority),
    ("tapos", errors.BadTaposReference),
    ("duplicate", errors.DuplicateTransaction),
])
def test_rejections(chain, case, error):
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    if case == "expired":
        trx = sign(chain, [transfer_op(1)], expire_in=-1)
    elif case == "fee":
        trx = sign(chain, [transfer_op(1, fee=10)])
    elif case == "balance":
        trx = sign(chain, [transfer_op(1, frm="1.2.7", to="1.2.6")])
    elif case == "authority":
        other = "5JWcdkhL3w4RkVPcZMdJsjos22yB5cSkPExerktvKnRNZR5gx1S"
        trx = sign(chain, [transfer_op(1)], wifs=(other,))
    elif case == "tapos":
        # signed over the wrong prefix: the authority check comes first in
        # db_block.cpp _apply_transaction, so the signature must be good
        trx = sign_wire(chain, [transfer_wire(1)])
        trx = sign_transaction(dict(trx, ref_block_prefix=trx["ref_block_prefix"] + 1,
                                    signatures=[]), CHAIN_ID, [DEV_WIF], "TEST")
    else:
        trx = sign(chain, [transfer_op(1)])
        chain.push_transaction(trx)
    before = {k: dict(v) for k, v in chain.state.objects.items()}
    with pytest.raises(error):
        chain.push_transaction(trx)
    assert {k: dict(v) for k, v in chain.state.objects.items()} == before


def test_expiration_window_as_the_reference_checks_it(chain):
    """db_block.cpp ``_apply_transaction``: ``FC_ASSERT( trx.expiration <=
    now + maximum_time_until_expiration, "", ...)`` then ``FC_ASSERT( now <=
    trx.expiration, "", ("now",now)("trx.exp",trx.expiration) )`` with
    ``now`` the head block time: a transaction expiring at the head time is
    still accepted, one a second before is refused with fc's assert (name
    ``assert_exception``, the expression as its text, both times as its
    values), and one beyond the window (86400 s here) likewise."""
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    head = chain.state.objects["2.1.0"]["time"]
    chain.push_transaction(sign(chain, [transfer_op(1)], expire_in=0))  # exp == now
    with pytest.raises(errors.TransactionExpired) as caught:
        chain.push_transaction(sign(chain, [transfer_op(2)], expire_in=-1))
    error = caught.value
    assert (error.name, error.code, error.what) == ("assert_exception", 10, "Assert Exception")
    assert error.message == "Assert Exception: now <= trx.expiration: "
    assert error.log_format == "now <= trx.expiration: "
    assert error.details["now"] == format_time(head) and error.details["trx.exp"] < format_time(head)
    with pytest.raises(errors.ExpirationTooFar) as caught:
        chain.push_transaction(sign(chain, [transfer_op(3)], expire_in=86401))
    assert caught.value.name == "assert_exception"
    assert caught.value.log_format == ("trx.expiration <= now + "
                                       "chain_parameters.maximum_time_until_expiration: ")
    assert caught.value.details["max_til_exp"] == 86400


def test_more_rejections(chain):
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    with pytest.raises(errors.ExpirationTooFar):
        chain.push_transaction(sign(chain, [transfer_op(1)], expire_in=86401))
    big = operations.Transfer(**{
        "fee": {"amount": 10 ** 9, "asset_id": "1.3.0"}, "from": "1.2.6", "to": "1.2.7",
        "amount": {"amount": 1, "asset_id": "1.3.0"}, "extensions": []})
    with pytest.raises(errors.TransactionTooLarge):
        chain.push_transaction(sign(chain, [big] * 100))
    trx = sign(chain, [transfer_op(3)])
    chain.push_transaction(trx)
    produce(chain)
    with pytest.raises(errors.DuplicateTransaction):
        chain.push_transaction(trx)


def forge_block(chain, transactions=(), when=None, **fields):
    """A block on ``chain``'s head signed by the scheduled witness (dev key),
    holding ``transactions`` (wire JSON); ``fields`` override header fields
    before signing."""
    from nodeapi.chain import authority as auth
    from nodeapi.protocol.block import block_signing_digest, merkle_root

    when = chain.get_slot_time(1) if when is None else when
    slot = chain.get_slot_at_time(when)
    block = {"previous": chain.head_block_id, "timestamp": format_time(when),
             "witness": chain.get_scheduled_witness(slot),
             "transaction_merkle_root": merkle_root(list(transactions), "TEST"),
             "extensions": []}
    block.update(fields)
    block["witness_signature"] = auth.sign_digest(block_signing_digest(block), DEV_WIF)
    block["transactions"] = list(transactions)
    return block


def unsigned_empty_trx(chain):
    return dict(chain_tapos(chain), operations=[], extensions=[], signatures=[])


def test_empty_transaction_rejected(chain):
    """graphene transaction::validate: ``FC_ASSERT( operations.size() > 0, "A
    transaction must have at least one operation", ...)``; neither
    push_transaction nor push_block accepts a transaction without one."""
    produce(chain)
    trx = unsigned_empty_trx(chain)
    before = {k: dict(v) for k, v in chain.state.objects.items()}
    with pytest.raises(errors.EmptyTransaction, match=r"^Assert Exception: operations.size\(\) "
                                                      r"> 0: A transaction must have at least "
                                                      r"one operation$"):
        chain.push_transaction(trx)
    assert chain.pending_transactions == []
    assert {k: dict(v) for k, v in chain.state.objects.items()} == before
    follower_head = chain.head_block_id
    with pytest.raises(errors.EmptyTransaction, match="at least one operation"):
        chain.push_block(forge_block(chain, [trx]))
    assert chain.head_block_id == follower_head and chain.head_block_num == 1
    assert {k: dict(v) for k, v in chain.state.objects.items()} == before


def test_operation_type_must_be_an_integer(chain):
    """An operation type fc cannot read (a name, "transfer": fc's
    static_variant tag is ``as_uint64``) is refused when the transaction is
    serialized (protocol UnknownOperation naming the value), before anything
    is evaluated; the same transaction with the integer type is accepted."""
    from nodeapi.protocol.errors import UnknownOperation

    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    trx = sign(chain, [transfer_op(7)])
    bad = dict(trx, operations=[["transfer", trx["operations"][0][1]]])
    before = {k: dict(v) for k, v in chain.state.objects.items()}
    with pytest.raises(UnknownOperation, match="^transaction.operations: Operation type 'transfer' "
                                               "is not an integer"):
        chain.push_transaction(bad)
    with pytest.raises(UnknownOperation, match="Operation type 'transfer'"):
        chain.required_fee(bad["operations"][0])
    assert chain.pending_transactions == []
    assert {k: dict(v) for k, v in chain.state.objects.items()} == before
    with pytest.raises(errors.MalformedBlock,
                       match="^Malformed block: transaction 0: .*Operation type 'transfer' is not"):
        chain.push_block(dict(forge_block(chain, [trx]), transactions=[bad]))
    chain.push_transaction(trx)
    produce(chain)
    assert chain.state.balance("1.2.7", "1.3.0") == 7


def test_push_block_malformed(chain, genesis, new_chain):
    """push_block called directly: a block fc cannot unpack is a
    MalformedBlock naming the field, never a raw KeyError/ValueError."""
    from nodeapi.errors import ApiError

    produce(chain, 2)
    follower = new_chain()
    good = chain.get_block(1)
    cases = [
        (dict(good, timestamp="yesterday"), "Malformed block: signed_block_header.timestamp"),
        ({k: v for k, v in good.items() if k != "transactions"},
         "^Malformed block: missing field\\(s\\) transactions$"),
        ({"previous": good["previous"]}, "missing field\\(s\\) timestamp, witness, "),
        (dict(good, transactions={}), "transactions must be a list, got dict$"),
        (dict(good, transactions=[{"expiration": "x"}]), "Malformed block: transaction 0: "),
        (dict(good, witness_signature="zz"), "witness_signature"),
        ([good], "expected an object, got list$"),
    ]
    for block, message in cases:
        with pytest.raises(errors.MalformedBlock, match=message) as info:
            follower.push_block(block)
        assert isinstance(info.value, errors.InvalidBlock)
        assert not isinstance(info.value, ApiError)  # a chain error, not an API one
        assert info.value.name == "malformed_block"
    assert follower.head_block_num == 0 and follower.block_log.head_num == 0
    follower.push_block(good)
    assert follower.head_block_id == chain.get_block(2)["previous"]


def test_push_block_from_the_future(genesis, new_chain):
    """bitshares-core 7.x libraries/app/application.cpp handle_block:
    latency must be > -2500 ms; the wall time is the chain's injected clock,
    or push_block's ``now``."""
    from twisted.internet.task import Clock

    from nodeapi.chain.validation import FUTURE_BLOCK_TOLERANCE

    clock = Clock()
    follower = new_chain(clock=clock)
    block = forge_block(follower)
    ts = genesis.initial_timestamp + 1
    assert block["timestamp"] == format_time(ts) and FUTURE_BLOCK_TOLERANCE == 2.5
    clock.advance(ts - 2.5)
    with pytest.raises(errors.BlockFromFuture,
                       match="^Rejecting block with timestamp in the future: "
                             f"{block['timestamp']} is 2.5 s after the local clock "
                             f"{format_time(ts - 3)} \\(tolerance 2.5 s\\)$"):
        follower.push_block(block)
    with pytest.raises(errors.BlockFromFuture, match="is 60.0 s after"):
        follower.push_block(block, now=ts - 60)  # explicit now wins over the clock
    assert follower.head_block_num == 0
    clock.advance(0.5)  # 2.0 s ahead: within the reference's tolerance
    follower.push_block(block)
    assert follower.head_block_num == 1
    # a block long before the wall clock (a syncing node) is accepted
    follower.push_block(forge_block(follower), now=10 ** 10)
    assert follower.head_block_num == 2


def test_push_block_extensions_and_size(chain, genesis, new_chain):
    from nodeapi.protocol.block import block_header_bytes
    from nodeapi.protocol.transaction import serialize_processed_transaction

    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    follower = new_chain()
    with pytest.raises(errors.BlockExtensionsNotEmpty,
                       match="^Block extensions must be empty, got 1$"):
        follower.push_block(forge_block(follower, extensions=[[0, {}]]))
    block = chain.get_block(1)
    size = (len(block_header_bytes(block)) + 1
            + len(serialize_processed_transaction(block["transactions"][0], "TEST")))
    params = follower.state.objects["2.0.0"]["parameters"]
    params["maximum_block_size"] = size - 1
    with pytest.raises(errors.BlockTooLarge,
                       match=f"^Block of {size} bytes exceeds maximum_block_size {size - 1}$"):
        follower.push_block(block)
    assert follower.head_block_num == 0
    params["maximum_block_size"] = size
    follower.push_block(block)
    assert follower.head_block_id == chain.head_block_id
    assert follower.state.balance("1.2.6", "1.3.0") == 1000000000000000


def test_observers_and_changed_objects(chain):
    seen_trx, seen_blocks = [], []
    chain.add_pending_observer(seen_trx.append)
    chain.add_block_observer(
        lambda b: seen_blocks.append((b, chain.changed_objects_of_last_block())))
    trx = sign(chain, [claim_op()])
    chain.push_transaction(trx)
    assert seen_trx == [trx]
    produce(chain)
    applied, changed = seen_blocks[-1]
    assert applied.block_num == 1 and not applied.replay
    assert [o.op[0] for o in applied.operations] == [37]
    assert applied.operations[0].id == "1.11.0"
    assert applied.operations[0].result == [0, {}]
    assert {"1.15.0", "2.1.0", "2.5.1"} <= changed
    produce(chain)
    assert "1.15.0" not in seen_blocks[-1][1]
    chain.remove_block_observer(chain._block_observers[0])
    produce(chain)
    assert len(seen_blocks) == 2


def test_slots_and_schedule(chain):
    t0 = chain.genesis.initial_timestamp
    assert chain.get_slot_time(0) == 0
    assert chain.get_slot_time(1) == t0 + 1
    assert chain.get_slot_at_time(t0) == 0
    assert chain.get_slot_at_time(t0 + 5) == 5
    active = chain.state.get("2.0.0")["active_witnesses"]
    assert chain.get_scheduled_witness(1) == active[1]
    with pytest.raises(errors.InvalidBlock):
        chain.generate_block(t0 + 1, active[2], DEV_WIF)
    chain.generate_block(t0 + 3, active[3], DEV_WIF)  # two slots missed
    dgp = chain.state.get("2.1.0")
    assert dgp["current_aslot"] == 3 and dgp["current_witness"] == active[3]
    assert int(dgp["recent_slots_filled"]) & 0b111 == 0b100
    # block 1 ran the first maintenance: the next maintenance_skip_slots
    # (3) slots are skipped (db_witness_schedule.cpp get_slot_time)
    assert chain.get_slot_time(1) == t0 + 3 + 4


def test_required_fee(chain):
    op = transfer_op(1).json()
    assert chain.required_fee([0, op]) == {"amount": 2000000, "asset_id": "1.3.0"}
    assert chain.required_fee([37, claim_op().json()])["amount"] == 0


def test_account_statistics_follow_history_numbering(chain):
    """2.7.N total_ops / most_recent_op, numbered like the history plugins
    (claim: 2.9.0 for init0; transfer: 2.9.1 init0, 2.9.2 init1)."""
    from nodeapi.plugins.account_history.history import AccountHistory

    history = AccountHistory()
    chain.add_consumer(history)
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    chain.push_transaction(sign(chain, [transfer_op(12345)]))
    produce(chain)
    s = chain.state
    assert (s.get("2.7.6")["total_ops"], s.get("2.7.6")["most_recent_op"]) == (2, "2.9.1")
    assert (s.get("2.7.7")["total_ops"], s.get("2.7.7")["most_recent_op"]) == (1, "2.9.2")
    assert (s.get("2.7.8")["total_ops"], s.get("2.7.8")["most_recent_op"]) == (0, "2.9.0")
    assert [history.account_total_ops(a) for a in ("1.2.6", "1.2.7", "1.2.8")] == [2, 1, 0]


def test_generate_block_postpones_transactions_over_maximum_block_size(genesis, new_chain):
    """graphene ``_generate_block``: a pending transaction that would take
    the block (header + 3 bytes for the count + packed transactions) over
    ``maximum_block_size`` is left out and stays pending; later smaller ones
    still go in.  The chain's genesis sets a small maximum_block_size."""
    import copy

    from nodeapi.chain.genesis import Genesis
    from nodeapi.chain.validation import check_block_form
    from nodeapi.protocol.block import block_header_bytes
    from nodeapi.protocol.transaction import serialize_processed_transaction

    def done(trx):  # as the block carries it: its results cleared
        return dict(trx, operation_results=[])

    def size(trx):
        return len(serialize_processed_transaction(done(trx), "TEST"))

    def small_chain(limit):
        data = copy.deepcopy(genesis.data)
        data["initial_parameters"]["maximum_block_size"] = limit
        chain = new_chain(Genesis(data, genesis.chain_id, genesis.address_prefix,
                                 genesis.core_symbol))
        chain.push_transaction(sign(chain, [claim_op()]))
        produce(chain)
        assert chain.head_block_num == 1 and chain.pending_transactions == []
        return chain

    def three(chain):
        t1 = sign(chain, [transfer_op(1)])
        t2 = sign(chain, [transfer_op(2), transfer_op(20)])
        t3 = sign(chain, [transfer_op(3)])
        for trx in (t1, t2, t3):
            chain.push_transaction(trx)
        return t1, t2, t3

    probe = small_chain(2048000)
    header = len(block_header_bytes(probe.get_block(1))) + 3
    t1, t2, t3 = three(probe)
    assert size(t1) == size(t3) < size(t2) < 2 * size(t1)
    limit = header + size(t1) + size(t3)

    chain = small_chain(limit)
    assert chain.state.get("2.0.0")["parameters"]["maximum_block_size"] == limit
    t1, t2, t3 = three(chain)
    produce(chain)
    block = chain.get_block(2)
    assert block["transactions"] == [done(t1), done(t3)]
    assert check_block_form(block, "TEST")[1] == limit - 2  # the count took 1 of the 3 bytes
    assert chain.pending_transactions == [t2]
    assert chain.state.balance("1.2.7", "1.3.0") == 1 + 3 + 2 + 20  # t2 applied as pending
    produce(chain)
    assert chain.get_block(3)["transactions"] == [done(t2)]
    assert chain.pending_transactions == []
    assert chain.state.balance("1.2.7", "1.3.0") == 26
    # a follower with the same genesis accepts every produced block
    follower = new_chain(chain.genesis)
    for num in (1, 2, 3):
        follower.push_block(chain.get_block(num))
    assert follower.head_block_id == chain.head_block_id

    # one byte less: t3 no longer fits after t1 either; both wait, in order
    tight = small_chain(limit - 1)
    t1, t2, t3 = three(tight)
    produce(tight)
    assert tight.get_block(2)["transactions"] == [done(t1)]
    assert tight.pending_transactions == [t2, t3]
    produce(tight)
    assert tight.get_block(3)["transactions"] == [done(t2)]
    produce(tight)
    assert tight.get_block(4)["transactions"] == [done(t3)]
    assert tight.pending_transactions == []

    # the block takes a transaction as bitshares-core 7.x does, its results
    # cleared (db_block.cpp _generate_block), so it is measured without them:
    # a block of exactly header + t2 + t1 holds both
    exact = small_chain(header + size(t2) + size(t1))
    before = exact.state.balance("1.2.7", "1.3.0")
    t2 = sign(exact, [transfer_op(2), transfer_op(20)])
    t1 = sign(exact, [transfer_op(1)])
    exact.push_transaction(t2)
    exact.push_transaction(t1)
    produce(exact)
    assert exact.get_block(2)["transactions"] == [done(t2), done(t1)]
    assert exact.pending_transactions == []
    assert exact.state.balance("1.2.7", "1.3.0") == before + 22 + 1


class FaultyEvaluator:
    """Wraps a real evaluator; raises ``exc`` (when set) instead of running
    it - a rejected operation (ChainError) or an evaluator bug (KeyError)."""

    def __init__(self, real):
        self.real = real
        self.exc = None

    def __call__(self, ctx, data):
        if self.exc is not None:
            raise self.exc
        return self.real(ctx, data)


@pytest.fixture
def faulty_claim(monkeypatch):
    from nodeapi.chain.evaluators import registry as evaluators

    faulty = FaultyEvaluator(evaluators.EVALUATORS[37])
    monkeypatch.setitem(evaluators.EVALUATORS, 37, faulty)
    return faulty


def _events(chain):
    from twisted.logger import Logger

    events = []
    # the chain's own events, those of its block production and pending transactions
    chain.log = chain.blocks.log = chain.pending.log = Logger(namespace="chain",
                                                              observer=events.append)
    return events


@pytest.mark.parametrize("exc,quiet", [
    (errors.InvalidOperation("now refused"), True),
    (KeyError("balance_owner_key"), False),
])
def test_generate_block_drops_failing_transaction(chain, faulty_claim, exc, quiet):
    events = _events(chain)
    trx = sign(chain, [claim_op()])
    chain.push_transaction(trx)
    faulty_claim.exc = exc
    when = chain.get_slot_time(1)
    block = chain.generate_block(when, chain.get_scheduled_witness(1), DEV_WIF)
    assert block["transactions"] == [] and chain.pending_transactions == []
    assert chain.head_block_num == 1 and chain.state.get("1.15.0") is not None
    dropped = [e for e in events if e["log_format"].startswith("Dropped transaction")]
    assert len(dropped) == 1
    if quiet:
        assert dropped[0]["log_level"].name == "info" and "log_failure" not in dropped[0]
        assert dropped[0]["error"] == "now refused"
    else:
        assert dropped[0]["log_level"].name == "critical"
        assert dropped[0]["log_failure"].check(KeyError)
    faulty_claim.exc = None  # production goes on
    chain.push_transaction(sign(chain, [claim_op()], expire_in=61))
    produce(chain)
    assert chain.state.get("1.15.0") is None


@pytest.mark.parametrize("exc,level", [
    (errors.InvalidOperation("now refused"), "debug"),
    (TypeError("bug"), "critical"),
])
def test_restore_pending_drops_failing_transaction(chain, genesis, faulty_claim, exc, level):
    from nodeapi.chain.chain import Chain

    source = Chain(genesis, type(chain.block_log)(chain.block_log.path + "-source").open())
    produce(source)
    events = _events(chain)
    chain.push_transaction(sign(chain, [claim_op()]))
    faulty_claim.exc = exc
    chain.push_block(source.get_block(1), now=1e10)
    assert chain.head_block_id == source.head_block_id and chain.pending_transactions == []
    dropped = [e for e in events if e["log_format"].startswith("Dropped pending")]
    assert [e["log_level"].name for e in dropped] == [level]
    assert ("log_failure" in dropped[0]) == (level == "critical")
    source.block_log.close()


def test_a_virtual_operation_is_refused_by_its_validate(chain):
    """A virtual operation in a transaction is refused by its ``validate()``
    (market.hpp fill_order: ``FC_ASSERT( !"virtual operation" )``, run by
    transaction::validate), fc's assert, as bitshares-core refuses it."""
    trx = dict(sign(chain, [transfer_op(1)]))
    trx["operations"] = [trx["operations"][0], [4, {
        "fee": {"amount": 0, "asset_id": "1.3.0"}, "order_id": "1.7.0", "account_id": "1.2.6",
        "pays": {"amount": 1, "asset_id": "1.3.0"}, "receives": {"amount": 1, "asset_id": "1.3.0"},
        "fill_price": {"base": {"amount": 1, "asset_id": "1.3.0"},
                       "quote": {"amount": 1, "asset_id": "1.3.0"}}}]]
    with pytest.raises(InvalidOperation) as caught:
        chain.push_transaction(trx)
    assert caught.value.message == 'Assert Exception: !"virtual operation": '
    assert caught.value.name == "assert_exception"
    assert chain.pending_transactions == []


@pytest.mark.parametrize("op, message", [
    ([39, {}], r"^Operation type 39 \(transfer_to_blind\) is not applied by this chain: "
               r"confidential transfers need Pedersen commitments and range proofs "
               r"\(libsecp256k1-zkp\), which no maintained Python library provides$"),
    ([9, {}], r"^Operation type 9 \(account_transfer\) is not applied by this chain: "
              r"bitshares-core defines account_transfer but has no evaluator for it"),
])
def test_operation_the_chain_does_not_apply_is_refused_naming_it(chain, op, message):
    """An operation type without an evaluator is refused at push time, before
    serialization and signatures, naming the operation (nodeapi.chain.
    evaluators.registry)."""
    trx = dict(sign(chain, [transfer_op(1)]))
    trx["operations"] = [trx["operations"][0], op]
    with pytest.raises(errors.UnsupportedOperation, match=message):
        chain.push_transaction(trx)
    assert chain.pending_transactions == []


@pytest.mark.parametrize("tag", ["0", "00"])
def test_numeric_string_tag_is_applied_as_its_operation(funded, tag):
    """A transaction whose operation tag is a numeric string is held in the
    canonical form (nodeapi.protocol.operations.canonical_operation, graphene
    from_variant): ``["0", {...}]`` is applied as a transfer, its pending and
    block copies carry the integer tag, and its id is unchanged."""
    from nodeapi.protocol.transaction import transaction_id

    trx = sign_wire(funded, [transfer_wire(12345)])
    trx["operations"][0][0] = tag
    processed = funded.push_transaction(trx)
    assert processed["operations"][0][0] == 0
    assert processed["operation_results"] == [[0, {}]]
    assert funded.pending_transactions[0]["operations"][0][0] == 0
    produce(funded)
    block = funded.get_block(funded.head_block_num)
    assert [t["operations"][0][0] for t in block["transactions"]] == [0]
    assert transaction_id(block["transactions"][0]) == transaction_id(trx)


def test_validate_transaction_reads_numeric_string_tags(funded):
    """validate_transaction reads the transaction as push_transaction does:
    ``["0", {...}]`` is a transfer; a hostile operation count is refused
    before packing (nodeapi.chain.validation.received_transaction)."""
    trx = sign_wire(funded, [transfer_wire(12345)])
    trx["operations"][0][0] = "0"
    processed = funded.validate_transaction(trx)
    assert processed["operations"][0][0] == 0 and processed["operation_results"] == [[0, {}]]
    assert funded.pending_transactions == []
    with pytest.raises(errors.TransactionTooLarge, match="100000 operations"):
        funded.validate_transaction(dict(trx, operations=trx["operations"] * 100000))


def test_last_irreversible_block_at_70_percent_of_11_witnesses(chain):
    """db_update.cpp update_last_irreversible_block: offset (10000 - 7000)
    * 11 / 10000 = 3 in the witnesses' last confirmed blocks, ascending,
    and never lower than before.  While the first round fills, the witnesses
    that have not signed yet count 0: with 11 - k of them the offset-3
    entry is 0 until k = 8 signers; 75 % (offset 2) would trail it by one
    signer."""
    lib_before, differs = 0, 0
    for _b in range(14):
        produce(chain)
        confirmed = sorted(chain.state.get(w)["last_confirmed_block_num"]
                           for w in chain.state.get("2.0.0")["active_witnesses"])
        assert len(confirmed) == 11
        lib = chain.state.get("2.1.0")["last_irreversible_block_num"]
        assert lib == max(lib_before, confirmed[3])
        differs += confirmed[3] != confirmed[2]
        lib_before = lib
    assert lib > 0 and differs > 0
    # after 14 blocks at least 8 witnesses signed: the 4th lowest confirmed
    assert lib >= 14 - 10


def test_core_in_balance_as_of_the_last_maintenance(chain):
    """account_object.hpp core_in_balance "Only updates on maintenance":
    account_balance_object::adjust_balance sets a core balance's
    maintenance_flag, db_maint.cpp perform_account_maintenance copies the
    flagged balances to core_in_balance and clears the flag."""
    from kit.chain import jump

    state = chain.state
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    before = state.get("2.7.6")["core_in_balance"]  # as of the last maintenance
    chain.push_transaction(sign(chain, [transfer_op(12345)]))
    produce(chain)
    bal0, bal1 = (state.balance_by_owner[a]["1.3.0"] for a in ("1.2.6", "1.2.7"))
    assert state.get(bal0)["maintenance_flag"] and state.get(bal1)["maintenance_flag"]
    assert state.get("2.7.6")["core_in_balance"] == before
    assert state.get("2.7.7")["core_in_balance"] == 0  # init1 held nothing before
    jump(chain, state.get("2.1.0")["next_maintenance_time"] - chain.head_block_time)
    # 10^15 claimed, 12,345 sent with a fee of 2,000,000
    assert state.get("2.7.6")["core_in_balance"] == 10 ** 15 - 12345 - 2000000
    assert state.get("2.7.7")["core_in_balance"] == 12345
    assert not state.get(bal0)["maintenance_flag"] and not state.get(bal1)["maintenance_flag"]
    # a transfer after it moves the balances, not core_in_balance, until the next
    chain.push_transaction(sign(chain, [transfer_op(1000)]))
    produce(chain)
    assert state.balance("1.2.7", "1.3.0") == 13345
    assert state.get("2.7.7")["core_in_balance"] == 12345
    assert state.get(bal1)["maintenance_flag"]


def test_last_irreversible_block_is_confirmed_by_70_percent(chain):
    """db_update.cpp update_last_irreversible_block: with 11 active
    witnesses the offset is (100 % - GRAPHENE_IRREVERSIBLE_THRESHOLD 70 %)
    * 11 / 100 % = 3 (rounded down), so the block the 4th least recent
    confirmation names (8 of 11 witnesses confirmed it or later); 75 %
    would take the 3rd (offset 2)."""
    produce(chain, 14)
    active = chain.state.get("2.0.0")["active_witnesses"]
    assert len(active) == 11 and (10000 - 7000) * 11 // 10000 == 3
    confirmed = sorted(chain.state.get(w)["last_confirmed_block_num"] for w in active)
    assert confirmed[3] != confirmed[2]  # the two rules differ here
    assert chain.dgp["last_irreversible_block_num"] == confirmed[3]
def test_genesis_committee_core_balance(genesis):
    """db_genesis.cpp ``init_genesis``: the first account_balance_object,
    2.5.0, is the committee account's core, created holding
    GRAPHENE_MAX_SHARE_SUPPLY (10^15); the bundled genesis hands out 10^15
    core, so ``adjust_balance(GRAPHENE_COMMITTEE_ACCOUNT, -balance)`` leaves
    it 0 with its maintenance flag set, which the first maintenance
    clears.  A genesis handing out no core leaves the committee the
    whole supply."""
    import copy

    from nodeapi.chain.balances import update_core_in_balances
    from nodeapi.chain.genesis import Genesis, init_genesis

    state = init_genesis(genesis)
    assert dict(state.objects["2.5.0"]) == {"id": "2.5.0", "owner": "1.2.0",
                                            "asset_type": "1.3.0", "balance": 0,
                                            "maintenance_flag": True}
    assert state.balance("1.2.0", "1.3.0") == 0
    assert state.objects["2.3.0"]["current_supply"] == 10 ** 15
    assert state.objects[state.objects["1.2.0"]["statistics"]]["core_in_balance"] == 10 ** 15
    update_core_in_balances(state)  # the first maintenance's account pass
    assert state.objects["2.5.0"]["maintenance_flag"] is False
    assert state.objects[state.objects["1.2.0"]["statistics"]]["core_in_balance"] == 0
    data = copy.deepcopy(genesis.data)
    data["initial_balances"] = []
    bare = init_genesis(Genesis(data, genesis.chain_id, genesis.address_prefix,
                                genesis.core_symbol))
    assert (bare.objects["2.5.0"]["balance"], bare.objects["2.5.0"]["maintenance_flag"]) == (
        10 ** 15, False)
    assert bare.objects["2.3.0"]["current_supply"] == 10 ** 15
    assert bare.objects[bare.objects["1.2.0"]["statistics"]]["core_in_balance"] == 10 ** 15
