"""Order and numbering of applied operations (nodeapi.chain.numbering), as
bitshares-core 7.x numbers them: libraries/chain/db_block.cpp
``_apply_block`` / ``_apply_transaction`` / ``apply_operation`` /
``push_applied_operation``.

An operation is pushed to ``_applied_ops`` before its evaluator runs and
the virtual operations it raises are pushed while it runs, so a
transaction [limit order that fills, transfer] is numbered order, fill,
fill, transfer.  ``_current_virtual_op`` is reset to 0 for every
operation of a transaction (the operation takes 0, its virtual operations
1, 2, ...) and once more after the transactions, where the block's own
virtual operations take ``trx_in_block`` = the number of transactions,
``op_in_trx`` 0 and ``virtual_op`` 0, 1, ..."""

import pytest
from bitsharesbase import operations

from nodeapi.plugins.account_history.history import AccountHistory
from nodeapi.protocol.times import format_time

from kit.chain import CORE, amt, asset_options, claim_wire, jump, open_chain, produce, transfer_op
from kit.chain import push_wire as push
from kit.chain import with_fee
from kit.keys import DEV_PUB
from kit.signing import sign

INIT0, INIT1 = "1.2.6", "1.2.7"
NO_TRX = "0" * 40


class Blocks:
    """A consumer keeping every AppliedBlock."""

    def __init__(self):
        self.seen = []

    def block_applied(self, applied):
        self.seen.append(applied)


@pytest.fixture
def market(genesis, tmp_path):
    """init0 funded and holding core; init1 holding 1000 GOLD (precision 3,
    no market fee) and selling 100 GOLD for 1000 core satoshis (1.7.0)."""
    chain = open_chain(genesis, tmp_path / "numbering")
    push(chain, claim_wire())
    produce(chain)
    [[_t, gold]] = push(chain, [10, {"issuer": INIT0, "symbol": "GOLD", "precision": 3,
                                     "common_options": asset_options(),
                                     "is_prediction_market": False, "extensions": []}])
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amt(1000, gold),
                      "issue_to_account": INIT1, "extensions": []}])
    push(chain, [0, {"from": INIT0, "to": INIT1, "amount": amt(10 ** 8), "extensions": []}])
    [[_t, maker]] = push(chain, [1, {"seller": INIT1, "amount_to_sell": amt(100, gold),
                                     "min_to_receive": amt(1000), "fill_or_kill": False,
                                     "expiration": "2030-01-01T00:00:00", "extensions": {}}])
    produce(chain)
    yield chain, gold, maker
    chain.block_log.close()


def taker_op(chain, gold, sell=1000, receive=100):
    op, _fee = with_fee(chain, operations.Limit_order_create, seller=INIT0,
                        amount_to_sell=amt(sell), min_to_receive=amt(receive, gold),
                        expiration="2030-01-01T00:00:00", fill_or_kill=False, extensions=[])
    return op


def shape(o):
    """What graphene's operation_history_object says of an applied
    operation: (M, type, trx_in_block, op_in_trx, virtual_op, is_virtual)."""
    return (o.id_num, o.op[0], o.trx_in_block, o.op_in_trx, o.virtual_op, o.is_virtual)


def test_virtual_operations_follow_the_operation_that_raised_them(market):
    chain, gold, maker = market
    blocks, history = Blocks(), AccountHistory()
    chain.add_consumer(blocks)
    chain.add_consumer(history)
    m = chain._numbering.next_op
    n = chain._numbering.next_ath
    # transaction 0: [limit order taking the whole maker order, transfer]
    chain.push_transaction(sign(chain, [taker_op(chain, gold), transfer_op(5)]))
    # transaction 1: [transfer, limit order that rests] - the counter
    # restarts for each operation, the order raises nothing
    chain.push_transaction(sign(chain, [transfer_op(6), taker_op(chain, gold, 10, 1)]))
    produce(chain)
    ops = blocks.seen[-1].operations
    # the taker's fill first, then the maker's (db_market.cpp match():
    # fill_limit_order of the taker, then of the maker); both are numbered
    # before the transfer that follows the order in the transaction
    assert [shape(o) for o in ops] == [
        (m, 1, 0, 0, 0, False),
        (m + 1, 4, 0, 0, 1, True),
        (m + 2, 4, 0, 0, 2, True),
        (m + 3, 0, 0, 1, 0, False),
        (m + 4, 0, 1, 0, 0, False),
        (m + 5, 1, 1, 1, 0, False),
    ]
    taker = ops[0].result[1]
    # the order takes 100 GOLD for 1000 core at the maker's price: both
    # orders are filled completely, no remainder, no market fee
    assert ops[1].op[1]["order_id"] == taker and ops[1].op[1]["is_maker"] is False
    assert ops[1].op[1]["pays"] == amt(1000) and ops[1].op[1]["receives"] == amt(100, gold)
    assert ops[2].op[1]["order_id"] == maker and ops[2].op[1]["is_maker"] is True
    assert ops[2].op[1]["pays"] == amt(100, gold) and ops[2].op[1]["receives"] == amt(1000)
    assert taker not in chain.state.objects and maker not in chain.state.objects
    # a virtual operation carries its transaction's id
    trx_ids = {o.trx_id for o in ops[:4]}
    assert len(trx_ids) == 1 and NO_TRX not in trx_ids
    # 2.9.N follow the same order: order (init0), fill (init0), fill
    # (init1), transfer (init0, init1), transfer (init0, init1), order (init0)
    entries = [(e.n, e.account, o.id_num) for o in ops for e in o.account_history]
    assert entries == [(n, INIT0, m), (n + 1, INIT0, m + 1), (n + 2, INIT1, m + 2),
                       (n + 3, INIT0, m + 3), (n + 4, INIT1, m + 3),
                       (n + 5, INIT0, m + 4), (n + 6, INIT1, m + 4), (n + 7, INIT0, m + 5)]
    # the history API answers in that order (newest first)
    got = history.get_account_history(INIT0, 0, 5, 0)
    assert [(h["id"], h["op"][0], h["op_in_trx"], h["virtual_op"]) for h in got] == [
        (f"1.11.{m + 5}", 1, 1, 0), (f"1.11.{m + 4}", 0, 0, 0), (f"1.11.{m + 3}", 0, 1, 0),
        (f"1.11.{m + 1}", 4, 0, 1), (f"1.11.{m}", 1, 0, 0)]


def test_block_virtual_operations_count_from_zero_after_the_transactions(market):
    """Expired orders are cancelled after the transactions
    (``clear_expired_orders``): ``trx_in_block`` = number of transactions,
    ``op_in_trx`` 0, ``virtual_op`` 0, 1, ... (a per-block count that does
    not go on from the transactions' virtual operations)."""
    chain, gold, _maker = market
    blocks = Blocks()
    chain.add_consumer(blocks)
    soon = chain.get_slot_time(2)
    for k in range(2):
        push(chain, [1, {"seller": INIT1, "amount_to_sell": amt(10 + k, gold),
                         "min_to_receive": amt(10 ** 6), "fill_or_kill": False,
                         "expiration": format_time(soon), "extensions": {}}])
    produce(chain)
    m = chain._numbering.next_op
    # the block at ``soon``: the filling transaction, then the expiries
    chain.push_transaction(sign(chain, [taker_op(chain, gold), transfer_op(5)]))
    produce(chain)
    assert chain.head_block_time == soon
    ops = blocks.seen[-1].operations
    assert [shape(o) for o in ops] == [
        (m, 1, 0, 0, 0, False), (m + 1, 4, 0, 0, 1, True), (m + 2, 4, 0, 0, 2, True),
        (m + 3, 0, 0, 1, 0, False),
        (m + 4, 2, 1, 0, 0, True), (m + 5, 2, 1, 0, 1, True)]
    assert [o.trx_id for o in ops[4:]] == [NO_TRX, NO_TRX]
    # db_market.cpp cancel_limit_order: the virtual cancel's result is
    # the refund (set_applied_operation_result)
    assert [o.result for o in ops[4:]] == [[2, amt(10, gold)], [2, amt(11, gold)]]
    assert chain.state.limit_orders_of(INIT1) == []


def test_maintenance_virtual_operations(genesis, tmp_path):
    """Buyback orders at maintenance (db_maint.cpp ``create_buyback_orders``
    applies a limit_order_create, which fills against a resting order, then
    the cancel of its remainder): pushed after the block's one transaction
    with ``trx_in_block`` 1, ``op_in_trx`` 0 and ``virtual_op`` 0, 1, 2, ..."""
    chain = open_chain(genesis, tmp_path / "maint")
    push(chain, claim_wire())
    produce(chain)
    [[_t, buy]] = push(chain, [10, {"issuer": INIT0, "symbol": "BUY", "precision": 3,
                                    "common_options": asset_options(),
                                    "is_prediction_market": False, "extensions": []}])
    nobody = {"weight_threshold": 1, "account_auths": [["1.2.3", 1]], "key_auths": [],
              "address_auths": []}
    options = {"memo_key": DEV_PUB, "voting_account": "1.2.5", "num_witness": 0,
               "num_committee": 0, "votes": [], "extensions": []}
    [[_t, bb]] = push(chain, [5, {
        "registrar": INIT0, "referrer": INIT0, "referrer_percent": 0, "name": "buyback-buy",
        "owner": nobody, "active": nobody, "options": options,
        "extensions": {"buyback_options": {"asset_to_buy": buy, "asset_to_buy_issuer": INIT0,
                                           "markets": [CORE]}}}])
    push(chain, [0, {"from": INIT0, "to": bb, "amount": amt(1000), "extensions": []}])
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amt(100, buy),
                      "issue_to_account": INIT0, "extensions": []}])
    [[_t, resting]] = push(chain, [1, {
        "seller": INIT0, "amount_to_sell": amt(10, buy), "min_to_receive": amt(500),
        "expiration": "2030-01-01T00:00:00", "fill_or_kill": False, "extensions": {}}])
    produce(chain)
    blocks = Blocks()
    chain.add_consumer(blocks)
    # the slot before maintenance, then the maintenance block with a transfer
    interval = int(chain.state.objects["2.0.0"]["parameters"]["block_interval"])
    due = chain.dgp["next_maintenance_time"]
    jump(chain, due - chain.head_block_time - interval)
    assert chain.head_block_time < due
    m = chain._numbering.next_op
    push(chain, [0, {"from": INIT0, "to": INIT1, "amount": amt(7), "extensions": []}])
    produce(chain)
    assert blocks.seen[-1].timestamp >= due
    ops = blocks.seen[-1].operations
    assert shape(ops[0]) == (m, 0, 0, 0, 0, False)
    vops = ops[1:]
    assert [o.op[0] for o in vops] == [1, 4, 4, 2]
    assert [shape(o) for o in vops] == [(m + 1 + k, t, 1, 0, k, True)
                                        for k, t in enumerate([1, 4, 4, 2])]
    order = vops[0].result[1]
    assert vops[1].op[1]["order_id"] == order and vops[2].op[1]["order_id"] == resting
    assert vops[3].op[1]["order"] == order
    assert all(o.trx_id == NO_TRX for o in vops)
    chain.block_log.close()
