"""Credit offers and deals (69-73, 74 virtual, 76): borrowing against
collateral at the offer's price (rounded up), credit fees rounded up,
partial repayment releasing collateral rounded down, expiry giving the
collateral to the offer owner (virtual credit_deal_expired), automatic
repayment at expiry; amounts by hand from credit_offer_evaluator.cpp and
db_update.cpp."""

import pytest
import pytest_twisted

from nodeapi.chain.errors import InvalidOperation
from nodeapi.protocol.times import format_time

from kit.chain import CORE, amt, asset_options, jump, produce
from kit.chain import push_wire as push
from kit.history import Recorder

INIT0, INIT1 = "1.2.6", "1.2.7"
FEE0 = {"amount": 0, "asset_id": CORE}
DAY = 86400


@pytest.fixture
def chain(funded_pair):
    return funded_pair


@pytest.fixture
def offer(chain):
    """init0 lends 1,000,000 GOLD satoshis (1.3.1) at 1 % (10,000
    millionths) for 10 days against core at 3 core per 2 GOLD
    (price base 2 GOLD, quote 3 core)."""
    [[_t, gold]] = push(chain, [10, {"issuer": INIT0, "symbol": "GOLD", "precision": 3,
                                     "common_options": asset_options(),
                                     "is_prediction_market": False, "extensions": []}])
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amt(2000000, gold),
                      "issue_to_account": INIT0, "extensions": []}])
    [[_t, oid]] = push(chain, [69, {
        "owner_account": INIT0, "asset_type": gold, "balance": 1000000, "fee_rate": 10000,
        "max_duration_seconds": 10 * DAY, "min_deal_amount": 100, "enabled": True,
        "auto_disable_time": format_time(chain.head_block_time + 30 * DAY),
        "acceptable_collateral": [[CORE, {"base": amt(2, gold), "quote": amt(3, CORE)}]],
        "acceptable_borrowers": [], "extensions": []}])
    produce(chain)
    return oid, gold


def accept(offer_id, gold, borrow, collateral, auto_repay=None):
    data = {"borrower": INIT1, "offer_id": offer_id, "borrow_amount": amt(borrow, gold),
            "collateral": amt(collateral, CORE), "max_fee_rate": 10000,
            "min_duration_seconds": DAY, "extensions": {}}
    if auto_repay is not None:
        data["extensions"] = {"auto_repay": auto_repay}
    return [72, data]


def test_borrow_repay_in_part_then_in_full(chain, offer):
    oid, gold = offer
    state = chain.state
    # 1,001 GOLD sat need ceil(1001 * 3 / 2) = 1,502 core sat
    with pytest.raises(InvalidOperation, match="requires 1502, provided 1501"):
        push(chain, accept(oid, gold, 1001, 1501))
    [[_t, res]] = push(chain, accept(oid, gold, 1001, 1502))
    [deal] = res["new_objects"]
    assert res["impacted_accounts"] == [INIT0]
    obj = state.objects[deal]
    assert (obj["debt_amount"], obj["collateral_amount"], obj["fee_rate"]) == (1001, 1502, 10000)
    assert state.objects[oid]["current_balance"] == 1000000 - 1001
    [summary] = state.ids_of_type("2.18.")
    assert state.objects[summary]["total_debt_amount"] == 1001
    # repay 500: fee ceil(500 * 10000 / 1e6) = 5; releases 500 * 1502 // 1001 = 750
    with pytest.raises(InvalidOperation, match="requires 5, offered 4"):
        push(chain, [73, {"account": INIT1, "deal_id": deal, "repay_amount": amt(500, gold),
                          "credit_fee": amt(4, gold), "extensions": []}])
    core_before = state.balance(INIT1, CORE)
    [[_t, res]] = push(chain, [73, {"account": INIT1, "deal_id": deal,
                                    "repay_amount": amt(500, gold),
                                    "credit_fee": amt(5, gold), "extensions": []}])
    assert res["received"] == [amt(750, CORE)]
    fee = chain.required_fee([73, {"fee": FEE0, "account": INIT1, "deal_id": deal,
                                   "repay_amount": amt(500, gold),
                                   "credit_fee": amt(5, gold), "extensions": []}])["amount"]
    assert state.balance(INIT1, CORE) - core_before == 750 - fee
    obj = state.objects[deal]
    assert (obj["debt_amount"], obj["collateral_amount"]) == (501, 752)
    offer_obj = state.objects[oid]
    assert (offer_obj["total_balance"], offer_obj["current_balance"]) == (
        1000005, 1000000 - 1001 + 505)
    # the rest: fee ceil(501 * 0.01) = 6 (init1 gets the 11 GOLD it lacks);
    # all the collateral back
    push(chain, [0, {"from": INIT0, "to": INIT1, "amount": amt(11, gold), "extensions": []}])
    [[_t, res]] = push(chain, [73, {"account": INIT1, "deal_id": deal,
                                    "repay_amount": amt(501, gold),
                                    "credit_fee": amt(6, gold), "extensions": []}])
    assert res["received"] == [amt(752, CORE)] and res["removed_objects"] == [deal]
    assert state.find(deal) is None and state.ids_of_type("2.18.") == []
    assert state.objects[oid]["current_balance"] == state.objects[oid]["total_balance"] == 1000011
    # no deal open: the offer can go, its balance back to init0
    [[_t, released]] = push(chain, [70, {"owner_account": INIT0, "offer_id": oid,
                                         "extensions": []}])
    assert released == amt(1000011, gold)


def test_expiry_gives_the_collateral_to_the_owner(chain, offer):
    oid, gold = offer
    state = chain.state
    rec = Recorder()
    chain.add_consumer(rec)
    [[_t, res]] = push(chain, accept(oid, gold, 2000, 3000))
    [deal] = res["new_objects"]
    produce(chain)
    owner_core = state.balance(INIT0, CORE)
    jump(chain, 10 * DAY + 5)
    assert state.find(deal) is None
    assert state.balance(INIT0, CORE) - owner_core == 3000
    assert state.objects[oid]["total_balance"] == 1000000 - 2000
    [expired] = [op for b in rec.blocks for op in b.operations if op.op[0] == 74]
    assert expired.is_virtual
    assert expired.op[1]["unpaid_amount"] == amt(2000, gold)
    assert expired.op[1]["collateral"] == amt(3000, CORE)


def test_automatic_full_repayment_at_expiry(chain, offer):
    oid, gold = offer
    state = chain.state
    # init1 needs GOLD for the fee: 2000 + ceil(2000 * 0.01) = 2020
    push(chain, [0, {"from": INIT0, "to": INIT1, "amount": amt(100, gold), "extensions": []}])
    [[_t, res]] = push(chain, accept(oid, gold, 2000, 3000, auto_repay=1))
    [deal] = res["new_objects"]
    with pytest.raises(InvalidOperation, match="does not change"):
        push(chain, [76, {"account": INIT1, "deal_id": deal, "auto_repay": 1,
                          "extensions": []}])
    produce(chain)
    core_before = state.balance(INIT1, CORE)
    jump(chain, 10 * DAY + 5)
    assert state.find(deal) is None
    assert state.balance(INIT1, gold) == 2100 - 2020
    assert state.balance(INIT1, CORE) - core_before == 3000
    assert state.objects[oid]["total_balance"] == 1000020


def test_partial_automatic_repayment_and_an_empty_balance(chain, offer):
    """db_update.cpp ``update_credit_offers_and_deals``, auto_repay 2
    (partial allowed): with 1,010 GOLD the borrower repays
    1,010 * 10^6 // (10^6 + 10^4) = 1,000, releasing 1,000 * 3,000 // 2,000
    = 1,500 core (the repay recomputed from it: ceil(1,500 * 2,000 / 3,000)
    = 1,000; fee ceil(1,000 * 1 %) = 10); the rest (1,000 GOLD, 1,500
    core) expires to the owner.  With an empty balance the repayment is 0,
    which ``try_push_virtual_operation``'s ``operation_validate`` refuses:
    no credit_deal_repay is recorded, only the expiry."""
    oid, gold = offer
    state = chain.state
    rec = Recorder()
    chain.add_consumer(rec)
    [[_t, res]] = push(chain, accept(oid, gold, 2000, 3000, auto_repay=2))
    [partial] = res["new_objects"]
    [[_t, res]] = push(chain, accept(oid, gold, 500, 750, auto_repay=2))
    [empty] = res["new_objects"]
    # init1 keeps 1,010 of the 2,500 GOLD it borrowed
    push(chain, [0, {"from": INIT1, "to": INIT0, "amount": amt(1490, gold), "extensions": []}])
    produce(chain)
    owner_core, borrower_core = state.balance(INIT0, CORE), state.balance(INIT1, CORE)
    jump(chain, 10 * DAY + 5)
    assert state.find(partial) is None and state.find(empty) is None
    repaid = [op.op[1] for b in rec.blocks for op in b.operations if op.op[0] == 73]
    assert [(r["deal_id"], r["repay_amount"], r["credit_fee"]) for r in repaid] \
        == [(partial, amt(1000, gold), amt(10, gold))]
    expired = [op.op[1] for b in rec.blocks for op in b.operations if op.op[0] == 74]
    assert [(e["deal_id"], e["unpaid_amount"], e["collateral"]) for e in expired] \
        == [(partial, amt(1000, gold), amt(1500, CORE)), (empty, amt(500, gold), amt(750, CORE))]
    assert state.balance(INIT1, gold) == 0
    assert state.balance(INIT1, CORE) - borrower_core == 1500
    assert state.balance(INIT0, CORE) - owner_core == 1500 + 750


@pytest_twisted.inlineCallbacks
def test_offers_and_deals_over_rpc(chain, offer, vectors_site):
    """A deal accepted through ``broadcast_transaction`` over the real RPC
    vectors_site, then the credit database functions, with python-bitshares (in a
    thread: the reactor serves)."""
    from twisted.internet import threads

    from kit.clients import bitshares_client
    from kit.signing import sign_wire

    oid, gold = offer
    op = accept(oid, gold, 1000, 1500)
    op = [op[0], dict(op[1], fee=chain.required_fee([op[0], dict(op[1], fee=FEE0)]))]
    trx = sign_wire(chain, [op])

    def broadcast():
        bitshares_client(f"ws://127.0.0.1:{vectors_site.port}").rpc.broadcast_transaction(
            trx, api="network_broadcast")

    def query():
        bts = bitshares_client(f"ws://127.0.0.1:{vectors_site.port}")
        return (bts.rpc.list_credit_offers(10, None),
                bts.rpc.get_credit_offers_by_owner("init0", 10, None),
                bts.rpc.get_credit_deals_by_borrower("init1", 10, None),
                bts.rpc.list_credit_deals(10, None))
    yield threads.deferToThread(broadcast)
    produce(chain)
    offers, by_owner, deals, listed = yield threads.deferToThread(query)
    [deal] = chain.state.ids_of_type("1.22.")
    assert [o["id"] for o in offers] == [o["id"] for o in by_owner] == [oid]
    assert offers[0]["current_balance"] == 1000000 - 1000
    assert [d["id"] for d in deals] == [d["id"] for d in listed] == [deal]
    assert (deals[0]["debt_amount"], deals[0]["collateral_amount"]) == (1000, 1500)
