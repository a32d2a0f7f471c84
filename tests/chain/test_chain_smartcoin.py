"""The life of a smartcoin on the chain: bitasset creation (10 with
bitasset_opts, 2.4.N), feed producers (13) and feeds (19), borrowing (3),
a feed rise that margin-calls a position against a resting sell order
(with the margin call fee), the issuer claiming collateral fees (43), a
force settlement (17) due after its delay with the offset and the BSIP 87
fee, a black swan that settles the asset globally, instant settlement from
the fund, a collateral bid (45) and the revival at maintenance.

Every amount is computed by hand in the comments from graphene's rules
(bitshares-core db_market.cpp, asset_evaluator.cpp, market_evaluator.cpp);
USD has precision 4, TEST (core) 5, prices are written DEBT / COLLATERAL in
satoshis."""

import pytest

from nodeapi.chain.errors import InsufficientFeeds, InvalidOperation

from nodeapi.protocol.flags import GLOBAL_SETTLE

from kit.chain import CORE, amt, asset_options, jump, produce
from kit.chain import push_wire as push
from kit.smartcoin import bitasset, bitasset_opts, borrow, dyn, fee_of, price, publish

INIT0, INIT1, INIT2 = "1.2.6", "1.2.7", "1.2.8"


def create_usd(chain, symbol="USD", perms=GLOBAL_SETTLE, **ext):
    [[_t, usd]] = push(chain, [10, {
        "issuer": INIT0, "symbol": symbol, "precision": 4,
        "common_options": asset_options(perms=perms),
        "bitasset_opts": bitasset_opts(**ext), "is_prediction_market": False,
        "extensions": []}])
    return usd


@pytest.fixture
def chain(funded_pair):
    applied = []
    funded_pair.add_consumer(type("C", (), {"block_applied": lambda self, b: applied.append(b)})())
    funded_pair.applied = applied
    return funded_pair


def last_vops(chain):
    """The virtual operations of the last applied block."""
    return [o.op for o in chain.applied[-1].operations if o.is_virtual]


@pytest.fixture
def usd(chain):
    usd = create_usd(chain, margin_call_fee_ratio=50, force_settle_fee_percent=100)
    push(chain, [13, {"issuer": INIT0, "asset_to_update": usd, "new_feed_producers": [INIT0],
                      "extensions": []}])
    publish(chain, usd, 1, 100)  # 1 USD sat = 100 TEST sat
    return usd


def test_bitasset_data_and_feed(chain, usd):
    asset = chain.state.objects[usd]
    b = bitasset(chain, usd)
    # the 2.4.N is created after the 2.3.N and before the 1.3.N, as graphene does
    assert asset["bitasset_data_id"].startswith("2.4.") and b["asset_id"] == usd
    assert b["current_feed"]["settlement_price"] == price(1, 100, usd)
    assert b["median_feed"] == b["current_feed"]
    assert b["current_feed"]["initial_collateral_ratio"] == 1750  # ICR defaults to MCR
    # ~(1/100) * 1750/1000 = 175 TEST sat per USD sat, reduced
    assert b["current_maintenance_collateralization"] == {"base": amt(175), "quote": amt(1, usd)}
    assert b["current_initial_collateralization"] == b["current_maintenance_collateralization"]
    assert [p for p, _ in b["feeds"]] == [INIT0]
    with pytest.raises(InvalidOperation, match="not in the set of allowed price feed producers"):
        publish(chain, usd, 1, 100, publisher=INIT1)
    with pytest.raises(InvalidOperation, match="Cannot manually issue a market-issued asset"):
        push(chain, [14, {"issuer": INIT0, "asset_to_issue": amt(1, usd),
                          "issue_to_account": INIT1, "extensions": []}])
    produce(chain)  # the same in a block
    assert bitasset(chain, usd)["current_feed"]["settlement_price"] == price(1, 100, usd)
    # at the end of the block, the feed's core exchange rate became the asset's
    assert chain.state.objects[usd]["options"]["core_exchange_rate"] == price(1, 100, usd)
    assert bitasset(chain, usd)["feed_cer_updated"] is False


def test_borrow_rules(chain):
    usd = create_usd(chain)
    push(chain, [13, {"issuer": INIT0, "asset_to_update": usd, "new_feed_producers": [INIT0],
                      "extensions": []}])
    with pytest.raises(InsufficientFeeds, match="no price feed"):
        borrow(chain, INIT1, 400000, 1000, usd)
    publish(chain, usd, 1, 100)
    # 170 TEST per USD is below the initial collateralization of 175
    with pytest.raises(InvalidOperation, match="initial collateral ratio"):
        borrow(chain, INIT1, 170000, 1000, usd)
    # 100 TEST per USD is below ~MSSP = 110: an instant black swan
    with pytest.raises(InvalidOperation, match="trigger a blackswan event instantly"):
        borrow(chain, INIT1, 100000, 1000, usd)
    core_before = chain.state.balance(INIT1, CORE)
    call_id = borrow(chain, INIT1, 400000, 1000, usd, target_collateral_ratio=2000)
    call = chain.state.objects[call_id]
    assert (call["borrower"], call["collateral"], call["debt"]) == (INIT1, 400000, 1000)
    assert call["call_price"] == {"base": amt(1), "quote": amt(1, usd)}
    assert call["target_collateral_ratio"] == 2000
    assert chain.state.balance(INIT1, usd) == 1000 and dyn(chain, usd)["current_supply"] == 1000
    fee = fee_of(chain, 3)
    assert core_before - chain.state.balance(INIT1, CORE) == 400000 + fee
    stats = chain.state.objects[chain.state.objects[INIT1]["statistics"]]
    assert stats["total_core_in_orders"] == 400000
    with pytest.raises(InvalidOperation, match="Should claim all collateral"):
        borrow(chain, INIT1, -1, -1000, usd)
    # pay back everything: the position closes, the collateral returns
    borrow(chain, INIT1, -400000, -1000, usd)
    assert call_id not in chain.state.objects
    assert dyn(chain, usd)["current_supply"] == 0
    assert chain.state.objects[chain.state.objects[INIT1]["statistics"]][
        "total_core_in_orders"] == 0


def test_margin_call_settlement_black_swan_and_revival(chain, usd):
    state = chain.state
    init1_call = borrow(chain, INIT1, 400000, 1000, usd)   # 400 TEST per USD
    init0_call = borrow(chain, INIT0, 200000, 1000, usd)   # 200 TEST per USD
    # init1 offers 500 USD for 60,000 TEST (120 TEST per USD): no margin call yet
    [[_t, order]] = push(chain, [1, {"seller": INIT1, "amount_to_sell": amt(500, usd),
                                     "min_to_receive": amt(60000), "fill_or_kill": False,
                                     "expiration": "2030-01-01T00:00:00", "extensions": {}}])
    core1 = state.balance(INIT1, CORE)

    # -- the feed rises to 120 TEST per USD: maintenance at 210 TEST per USD
    # margin-calls init0 (200).  MCOP = 1/120 * 1000/1050 = 1/126: the order
    # (1/120) reaches it.  The call pays at 1/120 * MCPR (1050/1100) = 7/880:
    # limit receives 500 * 60000/500 = 60,000 TEST, the call receives
    # ceil(60000 * 500/60000) = 500 USD and pays floor(500 * 880/7) = 62,857
    # TEST; the margin call fee is 62,857 - 60,000 = 2,857 TEST.
    publish(chain, usd, 1, 120)
    call = state.objects[init0_call]
    assert (call["debt"], call["collateral"]) == (500, 200000 - 62857)
    assert order not in state.objects
    assert state.balance(INIT1, CORE) - core1 == 60000
    assert dyn(chain, usd)["current_supply"] == 1500
    assert dyn(chain, usd)["accumulated_collateral_fees"] == 2857
    produce(chain)
    call = state.objects[init0_call]
    assert (call["debt"], call["collateral"]) == (500, 137143)
    fills = [op for op in last_vops(chain) if op[0] == 4]
    assert {(f[1]["order_id"], f[1]["pays"]["amount"], f[1]["receives"]["amount"],
             f[1]["fee"]["amount"], f[1]["is_maker"]) for f in fills} == {
        (init0_call, 62857, 500, 2857, False), (order, 500, 60000, 0, True)}

    # -- the issuer claims the collateral fees of USD
    with pytest.raises(InvalidOperation, match="more backing-asset fees"):
        push(chain, [43, {"issuer": INIT0, "amount_to_claim": amt(2858),
                          "extensions": {"claim_from_asset_id": usd}}])
    core0 = state.balance(INIT0, CORE)
    push(chain, [43, {"issuer": INIT0, "amount_to_claim": amt(2857),
                      "extensions": {"claim_from_asset_id": usd}}])
    fee43 = fee_of(chain, 43)
    assert state.balance(INIT0, CORE) - core0 == 2857 - fee43
    assert dyn(chain, usd)["accumulated_collateral_fees"] == 0

    # -- init1 force-settles 100 USD: due in an hour, at the feed less 1 %
    [[tag, result]] = push(chain, [17, {"account": INIT1, "amount": amt(100, usd),
                                        "extensions": []}])
    assert tag == 5  # extendable_operation_result, as on mainnet (tests/fixtures es)
    settle_id = result["new_objects"][0]
    assert state.objects[settle_id]["balance"] == amt(100, usd)
    assert state.balance(INIT1, usd) == 400
    produce(chain)
    core1 = state.balance(INIT1, CORE)
    jump(chain, 3601)
    # price 1/120 / 0.99 = 5/594; volume cap 20 % of 1,500 = 300.  The least
    # collateralized position (init0, 274 TEST per USD) pays
    # floor(100 * 594/5) = 11,880 TEST for 100 USD; 1 % BSIP 87 fee = 118.
    assert settle_id not in state.objects
    call = state.objects[init0_call]
    assert (call["debt"], call["collateral"]) == (400, 137143 - 11880)
    assert state.balance(INIT1, CORE) - core1 == 11880 - 118
    assert dyn(chain, usd)["accumulated_collateral_fees"] == 118
    assert bitasset(chain, usd)["force_settled_volume"] == 100
    assert dyn(chain, usd)["current_supply"] == 1400

    # -- a black swan: 1,000 TEST per USD.  The least collateralized
    # position (125,263 / 400) is below MSSP (1/1100): global settlement at
    # 400/125263; both positions are margin calls (CR <= 1,750) and pay at
    # that price, the fund receives at 400/125263 * 1100/1000 = 440/125263.
    # init0: pays 125,263, fund ceil(400 * 125263/440) = 113,876, fee 11,387.
    # init1: pays ceil(1000 * 125263/400) = 313,158, fund
    # ceil(1000 * 125263/440) = 284,689, fee 28,469; 86,842 TEST back.
    core1 = state.balance(INIT1, CORE)
    publish(chain, usd, 1, 1000)
    b = bitasset(chain, usd)
    assert b["settlement_price"] == {"base": amt(1400, usd), "quote": amt(113876 + 284689)}
    assert b["settlement_fund"] == 398565
    assert init0_call not in state.objects and init1_call not in state.objects
    assert state.balance(INIT1, CORE) - core1 == 86842
    assert dyn(chain, usd)["accumulated_collateral_fees"] == 118 + 11387 + 28469
    assert dyn(chain, usd)["current_supply"] == 1400
    with pytest.raises(InvalidOperation, match="globally settled"):
        borrow(chain, INIT1, 400000, 1000, usd)

    # -- instant settlement from the fund: floor(100 * 398565/1400) = 28,468
    # TEST; MCOP at the feed (1,050 TEST per USD) asks more, so no
    # collateral fee.
    core1 = state.balance(INIT1, CORE)
    [[tag, result]] = push(chain, [17, {"account": INIT1, "amount": amt(100, usd),
                                        "extensions": []}])
    assert tag == 5 and result == {"paid": [amt(100, usd)], "received": [amt(28468)], "fees": [amt(0)]}
    fee17 = fee_of(chain, 17)
    assert state.balance(INIT1, CORE) - core1 == 28468 - fee17
    assert bitasset(chain, usd)["settlement_fund"] == 398565 - 28468
    assert dyn(chain, usd)["current_supply"] == 1300

    # -- a bid of 500,000 TEST for the whole 1,300 USD; a feed of 300 TEST per
    # USD leaves the fund (370,097 / 1,300 = 285) below the ICR (525): no
    # revival yet
    with pytest.raises(InvalidOperation, match="Can't find bid to cancel"):
        push(chain, [45, {"bidder": INIT1, "additional_collateral": amt(0),
                          "debt_covered": amt(0, usd), "extensions": []}])
    core1 = state.balance(INIT1, CORE)
    push(chain, [45, {"bidder": INIT1, "additional_collateral": amt(500000),
                      "debt_covered": amt(1300, usd), "extensions": []}])
    fee45 = fee_of(chain, 3)  # bid_collateral is charged call_order_update's fee
    assert core1 - state.balance(INIT1, CORE) == 500000 + fee45
    publish(chain, usd, 1, 300)
    assert bitasset(chain, usd)["settlement_fund"] == 370097
    produce(chain)
    # -- maintenance: the bid covers the supply; its position would hold
    # floor(1300 * 398565/1400) + 500,000 = 870,096 TEST, healthy at the ICR,
    # so the bid takes the debt and the whole fund: 500,000 + 370,097.
    jump(chain, 86400)
    b = bitasset(chain, usd)
    assert b["settlement_price"] == {"base": amt(0), "quote": amt(0)}
    assert b["settlement_fund"] == 0
    [call] = [state.objects[c] for c in state.calls_by_asset[usd]]
    assert (call["borrower"], call["debt"], call["collateral"]) == (INIT1, 1300, 870097)
    vops = last_vops(chain)
    assert [46, {"fee": amt(0), "bidder": INIT1, "debt": amt(1300, usd),
                 "collateral": amt(870097)}] in vops


def test_global_settle_by_issuer_and_revival_by_feed(chain, usd):
    borrow(chain, INIT1, 400000, 1000, usd)
    with pytest.raises(InvalidOperation, match="Only asset issuer can globally settle"):
        push(chain, [18, {"issuer": INIT1, "asset_to_settle": usd,
                          "settle_price": price(1, 100, usd), "extensions": []}])
    # 1 USD per 1,000 TEST would need 1,000,000 TEST of the 400,000
    with pytest.raises(InvalidOperation, match="lacks sufficient collateral"):
        push(chain, [18, {"issuer": INIT0, "asset_to_settle": usd,
                          "settle_price": price(1, 1000, usd), "extensions": []}])
    core1 = chain.state.balance(INIT1, CORE)
    push(chain, [18, {"issuer": INIT0, "asset_to_settle": usd,
                      "settle_price": price(1, 100, usd), "extensions": []}])
    # the position pays 1000 * 100 = 100,000 TEST into the fund, no fee
    b = bitasset(chain, usd)
    assert b["settlement_fund"] == 100000
    assert b["settlement_price"] == {"base": amt(1000, usd), "quote": amt(100000)}
    assert chain.state.balance(INIT1, CORE) - core1 == 300000
    # a new feed under which the fund is healthy (100 TEST per USD at a
    # feed of 1/50: ICR collateralization 87.5) revives the asset at once:
    # the issuer takes the whole debt and fund
    publish(chain, usd, 1, 50)
    b = bitasset(chain, usd)
    assert b["settlement_fund"] == 0 and b["settlement_price"]["base"]["amount"] == 0
    [call] = [chain.state.objects[c] for c in chain.state.calls_by_asset[usd]]
    assert (call["borrower"], call["debt"], call["collateral"]) == (INIT0, 1000, 100000)


def test_target_collateral_ratio_limits_the_margin_call(chain, usd):
    # init0 borrows at 200 TEST per USD with a TCR of 2.5
    call_id = borrow(chain, INIT0, 200000, 1000, usd, target_collateral_ratio=2500)
    borrow(chain, INIT1, 1000000, 2000, usd)
    push(chain, [1, {"seller": INIT1, "amount_to_sell": amt(2000, usd),
                     "min_to_receive": amt(240000), "fill_or_kill": False,
                     "expiration": "2030-01-01T00:00:00", "extensions": {}}])
    publish(chain, usd, 1, 120)  # maintenance 210 TEST per USD: init0 is called
    # The call pays at 2000/240000 * 1050/1100 = 7/880 (125.71 TEST per USD)
    # and sells only until its ratio passes the TCR at the feed, 300 TEST per
    # USD: (200000 - 880/7 x) / (1000 - x) > 300 gives x > 573.77, so it buys
    # back 574 USD for ceil(574 * 880/7) = 72,160 TEST; the seller receives
    # 574 * 120 = 68,880 TEST; the margin call fee is 3,280 TEST.
    call = chain.state.objects[call_id]
    assert (call["debt"], call["collateral"]) == (426, 127840)
    assert dyn(chain, usd)["accumulated_collateral_fees"] == 3280


def test_prediction_market(chain):
    """A prediction market (bitshares-core asset_evaluator.cpp,
    market_evaluator.cpp): positions take equal debt and collateral, no feed
    is needed, no margin call happens; holders settle only after the
    issuer's global settlement, from the fund at its price."""
    [[_t, pred]] = push(chain, [10, {
        "issuer": INIT0, "symbol": "PRED", "precision": 5,
        "common_options": asset_options(perms=GLOBAL_SETTLE),
        "bitasset_opts": bitasset_opts(), "is_prediction_market": True, "extensions": []}])
    assert bitasset(chain, pred)["is_prediction_market"] is True
    with pytest.raises(InvalidOperation, match="Debt amount and collateral amount should be same"):
        borrow(chain, INIT1, 2000, 1000, pred)
    borrow(chain, INIT1, 100000, 100000, pred)  # no feed needed
    push(chain, [0, {"from": INIT1, "to": INIT0, "amount": amt(40000, pred), "extensions": []}])
    with pytest.raises(InvalidOperation, match="Global settlement must occur before"):
        push(chain, [17, {"account": INIT0, "amount": amt(40000, pred), "extensions": []}])
    # the outcome: "yes", one PRED is worth one TEST
    push(chain, [18, {"issuer": INIT0, "asset_to_settle": pred,
                      "settle_price": {"base": amt(1, pred), "quote": amt(1)},
                      "extensions": []}])
    assert bitasset(chain, pred)["settlement_fund"] == 100000
    core0 = chain.state.balance(INIT0, CORE)
    [[_t, result]] = push(chain, [17, {"account": INIT0, "amount": amt(40000, pred),
                                       "extensions": []}])
    assert result == {"paid": [amt(40000, pred)], "received": [amt(40000)], "fees": [amt(0)]}
    assert chain.state.balance(INIT0, CORE) - core0 == 40000 - fee_of(chain, 17)
    assert bitasset(chain, pred)["settlement_fund"] == 60000
    assert dyn(chain, pred)["current_supply"] == 60000


def test_flags_follow_the_asset_kind(chain):
    """validate_flags (core-2281): a user-issued asset may not carry the
    bitasset-only flags; nobody may set the permission-only ones."""
    WITNESS_FED, DISABLE_MCR_UPDATE = 0x80, 0x800
    with pytest.raises(InvalidOperation, match="Can not set a flag for bitassets only to UIA"):
        push(chain, [10, {"issuer": INIT0, "symbol": "UIAF", "precision": 3,
                          "common_options": asset_options(flags=WITNESS_FED, perms=WITNESS_FED),
                          "is_prediction_market": False, "extensions": []}])
    with pytest.raises(InvalidOperation, match="disable_mcr_update flag, it is for issuer"):
        push(chain, [10, {"issuer": INIT0, "symbol": "MIAF", "precision": 3,
                          "common_options": asset_options(flags=DISABLE_MCR_UPDATE,
                                                          perms=DISABLE_MCR_UPDATE),
                          "bitasset_opts": bitasset_opts(), "is_prediction_market": False,
                          "extensions": []}])
    # a witness-fed smartcoin takes feeds from the witness account's active
    # authority only (empty on this chain until its first maintenance)
    usd = create_usd(chain, "WUSD", perms=WITNESS_FED)
    opts = dict(chain.state.objects[usd]["options"], flags=WITNESS_FED)
    push(chain, [11, {"issuer": INIT0, "asset_to_update": usd, "new_options": opts,
                      "extensions": {}}])
    with pytest.raises(InvalidOperation, match="Only active witnesses are allowed"):
        publish(chain, usd, 1, 100, publisher=INIT0)


def test_disabling_collateral_bidding_cancels_the_open_bids(chain):
    """asset_update_evaluator::do_apply: setting disable_collateral_bidding
    cancels every open bid on the asset in the by_price order (most
    collateral per debt first), each with database::cancel_bid: the
    collateral back to the bidder and a virtual bid_collateral of
    debt_covered 0 (no execute_bid)."""
    # disable_collateral_bidding is a "disable" permission bit: clear, the
    # issuer may set the flag (asset_update_evaluator: the enabled mask)
    usd = create_usd(chain, perms=GLOBAL_SETTLE)
    push(chain, [13, {"issuer": INIT0, "asset_to_update": usd, "new_feed_producers": [INIT0],
                      "extensions": []}])
    publish(chain, usd, 1, 100)
    borrow(chain, INIT1, 400000, 1000, usd)
    push(chain, [18, {"issuer": INIT0, "asset_to_settle": usd,
                      "settle_price": price(1, 100, usd), "extensions": []}])
    produce(chain)
    # init1 bids 50,000 TEST for 1,000 USD (50 TEST per USD), init0 30,000
    # TEST for 500 USD (60 TEST per USD)
    push(chain, [45, {"bidder": INIT1, "additional_collateral": amt(50000),
                      "debt_covered": amt(1000, usd), "extensions": []}])
    push(chain, [45, {"bidder": INIT0, "additional_collateral": amt(30000),
                      "debt_covered": amt(500, usd), "extensions": []}])
    assert len(chain.state.bids_by_asset[usd]) == 2
    core0, core1 = chain.state.balance(INIT0, CORE), chain.state.balance(INIT1, CORE)
    opts = dict(chain.state.objects[usd]["options"])
    push(chain, [11, {"issuer": INIT0, "asset_to_update": usd,
                      "new_options": dict(opts, flags=int(opts["flags"]) | 0x8000),
                      "extensions": {}}])
    fee11 = fee_of(chain, 11)
    # init0 pays the update's fee and takes back its 30,000; init1 its 50,000
    assert chain.state.balance(INIT0, CORE) - core0 == 30000 - fee11
    assert chain.state.balance(INIT1, CORE) - core1 == 50000
    assert not chain.state.bids_by_asset.get(usd)
    produce(chain)
    vops = [op for op in last_vops(chain) if op[0] in (45, 46)]
    assert vops == [
        [45, {"fee": amt(0), "bidder": INIT0, "additional_collateral": amt(30000),
              "debt_covered": amt(0, usd), "extensions": []}],
        [45, {"fee": amt(0), "bidder": INIT1, "additional_collateral": amt(50000),
              "debt_covered": amt(0, usd), "extensions": []}]]
    with pytest.raises(InvalidOperation, match="Collateral bidding is disabled"):
        push(chain, [45, {"bidder": INIT1, "additional_collateral": amt(50000),
                          "debt_covered": amt(1000, usd), "extensions": []}])


def test_a_disable_permission_bit_set_forbids_the_flag_change(chain):
    """asset_update_evaluator::do_evaluate: (new.flags ^ old.flags) &
    check_bits & ~get_enabled_issuer_permissions_mask() must be 0; for the
    "disable" bits (disable_collateral_bidding 0x8000, lock_max_supply,
    disable_new_supply) the permission bit set means the issuer gave the
    change up."""
    usd = create_usd(chain, "NOBID", perms=GLOBAL_SETTLE | 0x8000)
    opts = dict(chain.state.objects[usd]["options"])
    with pytest.raises(InvalidOperation, match="Flag change is forbidden by issuer permissions"):
        push(chain, [11, {"issuer": INIT0, "asset_to_update": usd,
                          "new_options": dict(opts, flags=int(opts["flags"]) | 0x8000),
                          "extensions": {}}])
    # an enable bit (white_list 0x02) needs its permission bit set
    with pytest.raises(InvalidOperation, match="Flag change is forbidden by issuer permissions"):
        push(chain, [11, {"issuer": INIT0, "asset_to_update": usd,
                          "new_options": dict(opts, flags=int(opts["flags"]) | 0x02),
                          "extensions": {}}])
    assert chain.state.objects[usd]["options"]["flags"] == opts["flags"]
