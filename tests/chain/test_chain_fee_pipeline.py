"""When the fee leaves the payer's balance: after the operation is applied.

bitshares-core evaluator.hpp (``evaluator<>::evaluate`` / ``apply``) and
evaluator.cpp: ``prepare_fee`` checks the fee (and, for a fee in another
asset, that the fee pool covers it) without debiting it; ``do_evaluate``
runs; then ``convert_fee``, ``pay_fee``, ``do_apply``; only then
``db_adjust_balance(fee_payer, -fee_from_account)``.  So an operation that
credits its payer can pay its own fee, each evaluator's checks see the
balance before the fee, and when the credit is short the whole operation
fails with db_balance.cpp ``adjust_balance``'s "Insufficient Balance".

init2 (1.2.8) holds no TEST on these chains: only init0 claimed the genesis
balance.  Fees are the bundled genesis schedule's (scale 100 %) or, for a
type it leaves out, the reference's default ``fee_params_t``."""

import pytest

from nodeapi.chain.errors import InsufficientBalance, InsufficientFee, InvalidOperation
from nodeapi.protocol.times import format_time

from kit.chain import CORE, FEE0, amt, asset_options, claim_wire, open_chain, produce
from kit.chain import push_wire as push
from kit.smartcoin import create_usd

INIT0, INIT1, INIT2 = "1.2.6", "1.2.7", "1.2.8"
#: the genesis schedule's fees: vesting_balance_withdraw (33),
#: withdraw_permission_claim (27, no memo), call_order_update (3),
#: asset_claim_fees (43), limit_order_create (1)
WITHDRAW_FEE = CLAIM_FEE = CALL_FEE = CLAIM_FEES_FEE = 2000000
ORDER_FEE = 500000
#: asset_claim_pool (47) has no entry: it takes asset_fund_fee_pool's (16)
CLAIM_POOL_FEE = 100000


@pytest.fixture
def chain(genesis, tmp_path):
    chain = open_chain(genesis, tmp_path / "fees")
    push(chain, claim_wire())
    produce(chain)
    assert chain.state.balance(INIT2, CORE) == 0
    yield chain
    chain.block_log.close()


def fee_of(chain, op):
    """The required core fee of wire ``op`` (its fee field set to 0)."""
    return chain.required_fee([op[0], dict(op[1], fee=FEE0)])["amount"]


def pending(chain, account):
    stats = chain.state.objects[chain.state.objects[account]["statistics"]]
    return int(stats["pending_fees"]) + int(stats["pending_vested_fees"])


def gold(chain, symbol="GOLD", issuer=INIT0):
    """init0's asset ``symbol`` (precision 3, 1 core : 1 unit), its fee pool
    funded with 10^8 core; issuer moved to ``issuer``; returns its id."""
    [[_t, aid]] = push(chain, [10, {"issuer": INIT0, "symbol": symbol, "precision": 3,
                                    "common_options": asset_options(), "is_prediction_market":
                                    False, "extensions": []}])
    push(chain, [16, {"from_account": INIT0, "asset_id": aid, "amount": 10 ** 8,
                      "extensions": []}])
    if issuer != INIT0:
        push(chain, [48, {"issuer": INIT0, "asset_to_update": aid, "new_issuer": issuer,
                          "extensions": []}])
    return aid


def issue(chain, aid, amount, to):
    push(chain, [14, {"issuer": chain.state.objects[aid]["issuer"],
                      "asset_to_issue": amt(amount, aid), "issue_to_account": to,
                      "extensions": []}])


def vesting_for(chain, owner, amount):
    """init0 gives ``owner`` a vesting balance of ``amount`` core, all of it
    withdrawable (linear, begun in 2015 before the genesis, 1 s to vest); its id."""
    [[_t, vb]] = push(chain, [32, {"creator": INIT0, "owner": owner, "amount": amt(amount),
                                   "policy": [0, {"begin_timestamp": "2015-01-01T00:00:00",
                                                  "vesting_cliff_seconds": 0,
                                                  "vesting_duration_seconds": 1}]}])
    return vb


# -- operations that credit their payer ---------------------------------------

def test_vesting_balance_withdraw_pays_its_own_fee(chain):
    # vesting_balance_evaluator.cpp withdraw: 10,000,000 into init2's
    # balance, then the 2,000,000 fee leaves it: 8,000,000
    vb = vesting_for(chain, INIT2, 10000000)
    op = [33, {"vesting_balance": vb, "owner": INIT2, "amount": amt(10000000)}]
    assert fee_of(chain, op) == WITHDRAW_FEE
    push(chain, op)
    assert chain.state.balance(INIT2, CORE) == 8000000
    assert chain.state.objects[vb]["balance"]["amount"] == 0
    # pay_fee: 2,000,000 <= cashback_vesting_threshold 10,000,000
    stats = chain.state.objects[chain.state.objects[INIT2]["statistics"]]
    assert (stats["pending_fees"], stats["pending_vested_fees"]) == (0, 2000000)


def test_a_credit_short_of_the_fee_fails_the_whole_operation(chain):
    # the final db_adjust_balance asserts: 1,000,000 credited, 2,000,000 due
    vb = vesting_for(chain, INIT2, 1000000)
    produce(chain)
    with pytest.raises(InsufficientBalance,
                       match=r"^Assert Exception: abo->get_balance\(\) >= -delta: "
                             r"Insufficient Balance: init2's balance of 10 TEST is less "
                             r"than required 20 TEST$"):
        push(chain, [33, {"vesting_balance": vb, "owner": INIT2, "amount": amt(1000000)}])
    assert chain.state.objects[vb]["balance"]["amount"] == 1000000
    assert chain.state.balance(INIT2, CORE) == 0
    assert pending(chain, INIT2) == 0


def test_asset_claim_pool_pays_its_fee_from_the_pool(chain):
    # asset_claim_pool_evaluator: 5,000,000 core out of the pool, then the
    # 100,000 core fee: 4,900,000
    aid = gold(chain, issuer=INIT2)
    dyn_id = chain.state.objects[aid]["dynamic_asset_data_id"]
    pool = chain.state.objects[dyn_id]["fee_pool"]
    op = [47, {"issuer": INIT2, "asset_id": aid, "amount_to_claim": amt(5000000),
               "extensions": []}]
    assert fee_of(chain, op) == CLAIM_POOL_FEE
    push(chain, op)
    assert chain.state.balance(INIT2, CORE) == 4900000
    assert chain.state.objects[dyn_id]["fee_pool"] == pool - 5000000


def test_asset_claim_fees_pays_its_fee_in_the_claimed_asset(chain):
    aid = gold(chain)
    dyn_id = chain.state.objects[aid]["dynamic_asset_data_id"]
    issue(chain, aid, 5000001, INIT0)
    # init0 pays 5,000,000 GOLD sat (5,000,000 core at 1:1) for a transfer:
    # GOLD's accumulated_fees 5,000,000
    chain.push_transaction(_signed(chain, [0, {"fee": amt(5000000, aid), "from": INIT0,
                                               "to": INIT1, "amount": amt(1, aid),
                                               "extensions": []}]))
    push(chain, [48, {"issuer": INIT0, "asset_to_update": aid, "new_issuer": INIT2,
                      "extensions": []}])
    pool = chain.state.objects[dyn_id]["fee_pool"]
    assert chain.state.objects[dyn_id]["accumulated_fees"] == 5000000
    claim = {"fee": amt(CLAIM_FEES_FEE, aid), "issuer": INIT2, "extensions": {}}
    # do_evaluate sees accumulated_fees before this operation's fee is
    # converted into them: 6,000,000 > 5,000,000 is refused
    with pytest.raises(InvalidOperation, match="Attempt to claim more fees than have "
                                               "accumulated"):
        chain.push_transaction(_signed(chain, [43, dict(claim,
                                                        amount_to_claim=amt(6000000, aid))]))
    chain.push_transaction(_signed(chain, [43, dict(claim, amount_to_claim=amt(5000000, aid))]))
    # init2 held no GOLD: 5,000,000 claimed - 2,000,000 fee; the fee is
    # accumulated again and its 2,000,000 core left the pool
    assert chain.state.balance(INIT2, aid) == 3000000
    assert chain.state.objects[dyn_id]["accumulated_fees"] == 2000000
    assert chain.state.objects[dyn_id]["fee_pool"] == pool - 2000000
    assert pending(chain, INIT2) == 2000000


def _signed(chain, op):
    from kit.signing import sign_wire
    return sign_wire(chain, [op])


def test_samet_fund_flash_loan_pays_the_borrow_fee(chain):
    # samet_fund_evaluator.cpp: the borrow credits 1,000,000, its fee leaves
    # that; init0 sends the rest of what the repayment needs in the same
    # transaction; the fund fee is 1,000,000 * 0.3 % = 3,000
    [[_t, fid]] = push(chain, [64, {"owner_account": INIT0, "asset_type": CORE,
                                    "balance": 10000000, "fee_rate": 3000, "extensions": []}])
    borrow = [67, {"borrower": INIT2, "fund_id": fid, "borrow_amount": amt(1000000),
                   "extensions": []}]
    repay = [68, {"account": INIT2, "fund_id": fid, "repay_amount": amt(1000000),
                  "fund_fee": amt(3000), "extensions": []}]
    fees = fee_of(chain, borrow) + fee_of(chain, repay)
    topup = [0, {"from": INIT0, "to": INIT2, "amount": amt(fees + 3000), "extensions": []}]
    push(chain, borrow, topup, repay)
    assert chain.state.balance(INIT2, CORE) == 0
    assert chain.state.objects[fid]["balance"] == 10003000


def test_call_order_update_releasing_core_collateral_pays_its_fee(chain):
    # market_evaluator.cpp call_order_update: 50,000,000 collateral back,
    # then the 2,000,000 fee: 48,000,000
    usd = create_usd(chain)  # 1 USD sat = 100 TEST sat, MCR 175 %
    push(chain, [0, {"from": INIT0, "to": INIT2, "amount": amt(100000000 + CALL_FEE),
                     "extensions": []}])
    open_ = [3, {"funding_account": INIT2, "delta_collateral": amt(100000000),
                 "delta_debt": amt(100000, usd), "extensions": {}}]
    assert fee_of(chain, open_) == CALL_FEE
    push(chain, open_)
    assert chain.state.balance(INIT2, CORE) == 0
    push(chain, [3, {"funding_account": INIT2, "delta_collateral": amt(-50000000),
                     "delta_debt": amt(0, usd), "extensions": {}}])
    assert chain.state.balance(INIT2, CORE) == 48000000
    [call] = [o for o in chain.state.objects.values()
              if o["id"].startswith("1.8.") and o["borrower"] == INIT2]
    assert (int(call["collateral"]), int(call["debt"])) == (50000000, 100000)


@pytest.fixture
def pool(chain):
    """A TEST/GOLD pool without taker or withdrawal fee, 10^9 of each in
    it; init0 holds its 10^9 LPS shares."""
    aid = gold(chain)
    [[_t, lps]] = push(chain, [10, {"issuer": INIT0, "symbol": "LPS", "precision": 3,
                                    "common_options": asset_options(), "is_prediction_market":
                                    False, "extensions": []}])
    issue(chain, aid, 2 * 10 ** 9, INIT0)
    [[_t, result]] = push(chain, [59, {"account": INIT0, "asset_a": CORE, "asset_b": aid,
                                       "share_asset": lps, "taker_fee_percent": 0,
                                       "withdrawal_fee_percent": 0, "extensions": []}])
    [pid] = result["new_objects"]
    push(chain, [61, {"account": INIT0, "pool": pid, "amount_a": amt(10 ** 9),
                      "amount_b": amt(10 ** 9, aid), "extensions": []}])
    assert chain.state.balance(INIT0, lps) == 10 ** 9
    return pid, aid, lps


def test_liquidity_pool_exchange_pays_its_fee_from_what_it_buys(chain, pool):
    pid, aid, _lps = pool
    issue(chain, aid, 10 ** 8, INIT2)
    op = [63, {"account": INIT2, "pool": pid, "amount_to_sell": amt(10 ** 8, aid),
               "min_to_receive": amt(1), "extensions": []}]
    fee = fee_of(chain, op)
    push(chain, op)
    # liquidity_pool_evaluator.cpp exchange: balance_b 1.1e9, balance_a
    # ceil(1e18 / 1.1e9) = 909,090,910, so the pool pays 90,909,090
    assert chain.state.balance(INIT2, CORE) == 90909090 - fee
    assert chain.state.balance(INIT2, aid) == 0
    assert chain.state.objects[pid]["balance_a"] == 909090910


def test_liquidity_pool_withdraw_pays_its_fee_from_what_it_returns(chain, pool):
    pid, aid, lps = pool
    push(chain, [0, {"from": INIT0, "to": INIT2, "amount": amt(10 ** 8, lps),
                     "extensions": []}])
    op = [62, {"account": INIT2, "pool": pid, "share_amount": amt(10 ** 8, lps),
               "extensions": []}]
    fee = fee_of(chain, op)
    push(chain, op)
    # a tenth of the shares: 10^8 of each asset back
    assert chain.state.balance(INIT2, CORE) == 10 ** 8 - fee
    assert chain.state.balance(INIT2, aid) == 10 ** 8


def test_htlc_redeem_pays_its_fee_from_the_redeemed_amount(chain):
    import hashlib
    preimage = b"fee pipeline"
    [[_t, hid]] = push(chain, [49, {"from": INIT0, "to": INIT2, "amount": amt(10000000),
                                    "preimage_hash": [2, hashlib.sha256(preimage).hexdigest()],
                                    "preimage_size": len(preimage),
                                    "claim_period_seconds": 3600, "extensions": {}}])
    op = [50, {"htlc_id": hid, "redeemer": INIT2, "preimage": preimage.hex(),
               "extensions": []}]
    fee = fee_of(chain, op)
    push(chain, op)
    assert chain.state.balance(INIT2, CORE) == 10000000 - fee
    assert chain.state.find(hid) is None


def test_credit_offer_accept_pays_its_fee_from_the_loan(chain):
    aid = gold(chain)
    issue(chain, aid, 2000000, INIT2)
    [[_t, offer]] = push(chain, [69, {
        "owner_account": INIT0, "asset_type": CORE, "balance": 10000000, "fee_rate": 10000,
        "max_duration_seconds": 86400 * 10, "min_deal_amount": 100, "enabled": True,
        "auto_disable_time": format_time(chain.head_block_time + 86400 * 30),
        "acceptable_collateral": [[aid, {"base": amt(2), "quote": amt(3, aid)}]],
        "acceptable_borrowers": [], "extensions": []}])
    op = [72, {"borrower": INIT2, "offer_id": offer, "borrow_amount": amt(1000000),
               "collateral": amt(1500000, aid), "max_fee_rate": 10000,
               "min_duration_seconds": 86400, "extensions": {}}]
    fee = fee_of(chain, op)
    push(chain, op)
    # credit_offer_evaluator.cpp accept: 1,000,000 core lent against
    # ceil(1,000,000 * 3 / 2) = 1,500,000 GOLD sat
    assert chain.state.balance(INIT2, CORE) == 1000000 - fee
    assert chain.state.balance(INIT2, aid) == 500000


def test_credit_deal_repay_pays_its_fee_from_the_released_collateral(chain):
    # init2 borrows 1,000,000 GOLD sat against ceil(1,000,000 * 3 / 2) =
    # 1,500,000 core sat, all the core it held past the accept fee
    aid = gold(chain)
    issue(chain, aid, 2000000, INIT0)
    [[_t, offer]] = push(chain, [69, {
        "owner_account": INIT0, "asset_type": aid, "balance": 1000000, "fee_rate": 10000,
        "max_duration_seconds": 86400 * 10, "min_deal_amount": 100, "enabled": True,
        "auto_disable_time": format_time(chain.head_block_time + 86400 * 30),
        "acceptable_collateral": [[CORE, {"base": amt(2, aid), "quote": amt(3)}]],
        "acceptable_borrowers": [], "extensions": []}])
    accept = [72, {"borrower": INIT2, "offer_id": offer, "borrow_amount": amt(1000000, aid),
                   "collateral": amt(1500000), "max_fee_rate": 10000,
                   "min_duration_seconds": 86400, "extensions": {}}]
    push(chain, [0, {"from": INIT0, "to": INIT2, "amount": amt(1500000 + fee_of(chain, accept)),
                     "extensions": []}],
         # the credit fee: ceil(1,000,000 * 1 %) = 10,000 GOLD sat
         [0, {"from": INIT0, "to": INIT2, "amount": amt(10000, aid), "extensions": []}])
    [[_t, res]] = push(chain, accept)
    [deal] = res["new_objects"]
    assert chain.state.balance(INIT2, CORE) == 0
    repay = [73, {"account": INIT2, "deal_id": deal, "repay_amount": amt(1000000, aid),
                  "credit_fee": amt(10000, aid), "extensions": []}]
    fee = fee_of(chain, repay)
    [[_t, res]] = push(chain, repay)
    # credit_offer_evaluator.cpp credit_deal_repay: the whole collateral
    # back, then the fee out of it
    assert res["received"] == [amt(1500000)]
    assert chain.state.balance(INIT2, CORE) == 1500000 - fee
    assert chain.state.balance(INIT2, aid) == 0
    assert chain.state.find(deal) is None


def test_withdraw_permission_claim_pays_its_fee_from_the_withdrawal(chain):
    [[_t, permit]] = push(chain, [25, {
        "withdraw_from_account": INIT0, "authorized_account": INIT2,
        "withdrawal_limit": amt(10000000), "withdrawal_period_sec": 3600,
        "periods_until_expiration": 2,
        "period_start_time": format_time(chain.head_block_time + 1)}])
    produce(chain)
    op = [27, {"withdraw_permission": permit, "withdraw_from_account": INIT0,
               "withdraw_to_account": INIT2, "amount_to_withdraw": amt(10000000)}]
    assert fee_of(chain, op) == CLAIM_FEE
    push(chain, op)
    assert chain.state.balance(INIT2, CORE) == 8000000


def test_limit_order_update_pays_with_the_refunded_deferred_fee(chain):
    aid = gold(chain)
    issue(chain, aid, 1000, INIT2)
    push(chain, [0, {"from": INIT0, "to": INIT2, "amount": amt(ORDER_FEE), "extensions": []}])
    [[_t, oid]] = push(chain, [1, {"seller": INIT2, "amount_to_sell": amt(1000, aid),
                                   "min_to_receive": amt(10 ** 9),
                                   "expiration": "2030-01-01T00:00:00", "fill_or_kill": False,
                                   "extensions": {}}])
    assert chain.state.balance(INIT2, CORE) == 0
    assert chain.state.objects[oid]["deferred_fee"] == ORDER_FEE
    op = [77, {"seller": INIT2, "order": oid, "new_expiration": "2029-01-01T00:00:00",
               "extensions": []}]
    fee = fee_of(chain, op)
    push(chain, op)
    # process_deferred_fee: limit_order_cancel's fee is 0, so the whole
    # 500,000 comes back; the update's fee leaves it after do_apply and
    # becomes the order's deferred fee
    assert chain.state.balance(INIT2, CORE) == ORDER_FEE - fee
    assert chain.state.objects[oid]["deferred_fee"] == fee
    assert pending(chain, INIT2) == 0


def test_an_order_filled_at_once_pays_its_fee_from_the_proceeds(chain):
    aid = gold(chain)
    issue(chain, aid, 1000, INIT2)
    push(chain, [1, {"seller": INIT0, "amount_to_sell": amt(1000000),
                     "min_to_receive": amt(1000, aid), "expiration": "2030-01-01T00:00:00",
                     "fill_or_kill": False, "extensions": {}}])
    [[_t, oid]] = push(chain, [1, {"seller": INIT2, "amount_to_sell": amt(1000, aid),
                                   "min_to_receive": amt(1000000),
                                   "expiration": "2030-01-01T00:00:00", "fill_or_kill": True,
                                   "extensions": {}}])
    # market_evaluator.cpp: the order is filled by do_apply (1,000,000 core
    # received), then the 500,000 fee leaves init2's balance; the filled
    # order's deferred fee is booked on its statistics
    assert chain.state.find(oid) is None
    assert chain.state.balance(INIT2, CORE) == 1000000 - ORDER_FEE
    assert chain.state.balance(INIT2, aid) == 0
    assert pending(chain, INIT2) == ORDER_FEE


def test_an_order_that_does_not_fill_cannot_pay_from_nothing(chain):
    # the negative: init2 holds GOLD but no TEST and its order rests, so
    # the final debit of the 500,000 fee fails and nothing stays
    aid = gold(chain)
    issue(chain, aid, 1000, INIT2)
    with pytest.raises(InsufficientBalance, match=r"^Assert Exception: delta\.amount > 0: "
                                                  r"Insufficient Balance: init2's balance "
                                                  r"of 0 TEST is less than required 5 TEST$"):
        push(chain, [1, {"seller": INIT2, "amount_to_sell": amt(1000, aid),
                         "min_to_receive": amt(1000000), "expiration": "2030-01-01T00:00:00",
                         "fill_or_kill": False, "extensions": {}}])
    assert chain.state.balance(INIT2, aid) == 1000
    assert not chain.state.orders_by_seller.get(INIT2)


def test_a_check_sees_the_balance_before_the_fee(chain):
    # transfer_evaluator.cpp do_evaluate compares the whole balance with the
    # amount; only the final debit needs amount + fee
    push(chain, [0, {"from": INIT0, "to": INIT2, "amount": amt(3000000), "extensions": []}])
    with pytest.raises(InsufficientBalance,
                       match=r"^Assert Exception: insufficient_balance: Insufficient Balance: "
                             r"30 TEST, unable to transfer '30\.00001 TEST' from account "
                             r"'init2' to 'init1' Unable to transfer 30\.00001 TEST "
                             r"from init2 to init1$"):
        push(chain, [0, {"from": INIT2, "to": INIT1, "amount": amt(3000001),
                         "extensions": []}])
    with pytest.raises(InsufficientBalance, match=r"^Assert Exception: abo->get_balance\(\) "
                                                  r">= -delta: Insufficient Balance: init2's "
                                                  r"balance of 0 TEST is less than required "
                                                  r"20 TEST$"):
        push(chain, [0, {"from": INIT2, "to": INIT1, "amount": amt(3000000),
                         "extensions": []}])
    push(chain, [0, {"from": INIT2, "to": INIT1, "amount": amt(1000000), "extensions": []}])
    assert chain.state.balance(INIT2, CORE) == 0


def test_a_fee_pool_short_of_the_fee_is_prepare_fees_assertion(chain):
    # evaluator.cpp prepare_fee: FC_ASSERT( core_fee_paid <= fee_pool ),
    # amounts in whole units: a pool of 10^8 core sat is 1000 TEST; a fee of
    # 100,000,001 GOLD sat (precision 3) is 100000.001 GOLD, 1000.00001 TEST
    aid = gold(chain)
    issue(chain, aid, 10 ** 9, INIT0)
    dyn_id = chain.state.objects[aid]["dynamic_asset_data_id"]
    extra = chain.state.objects[dyn_id]["fee_pool"] - 10 ** 8  # asset_create's half fee
    push(chain, [47, {"issuer": INIT0, "asset_id": aid, "amount_to_claim": amt(extra),
                      "extensions": []}])
    assert chain.state.objects[dyn_id]["fee_pool"] == 10 ** 8
    with pytest.raises(InvalidOperation,
                       match=r"^Assert Exception: core_fee_paid <= fee_asset_dyn_data->fee_pool: "
                             r"Fee pool balance of '1000 TEST' is less than the 1000\.00001 TEST "
                             r"required to convert 100000\.001 GOLD$"):
        chain.push_transaction(_signed(chain, [0, {"fee": amt(10 ** 8 + 1, aid), "from": INIT0,
                                                   "to": INIT1, "amount": amt(1, aid),
                                                   "extensions": []}]))


def test_a_fee_below_the_schedule_is_insufficient_fee(chain):
    # evaluator.hpp evaluate: GRAPHENE_ASSERT( core_fee_paid >= required_fee,
    # insufficient_fee, "Insufficient Fee Paid" ); the transfer's fee is
    # 2,000,000 (the genesis schedule, no memo)
    op = [0, {"fee": amt(1999999), "from": INIT0, "to": INIT1, "amount": amt(5),
              "extensions": []}]
    with pytest.raises(InsufficientFee,
                       match="^insufficient fee: Insufficient Fee Paid$") as caught:
        chain.push_transaction(_signed(chain, op))
    assert caught.value.details == {"core_fee_paid": 1999999, "required": 2000000}
