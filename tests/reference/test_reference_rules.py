"""Chain rules on bitshares-core 7.0.2's witness_node and on nodeapi side
by side (kit.side_by_side): the same operations on both chains, the same
outcome, and amounts computed by hand from the reference functions:

- is_authorized_asset.cpp ``_is_authorized_asset``: a buyback account takes
  only its ``allowed_assets``; the committee account passes every list;
- asset_evaluator.cpp ``asset_update_evaluator::do_evaluate``: no new
  precision for an asset backing a market-issued asset;
- ``asset_update_evaluator::do_apply`` / db_market.cpp ``cancel_bid``:
  setting ``disable_collateral_bidding`` cancels the open bids (a virtual
  bid_collateral of ``debt_covered`` 0 each), and a set "disable"
  permission bit forbids the flag change;
- db_update.cpp ``clear_expired_force_settlements``: under no settlement
  (1) the due settlements of a block share one price.

Prices are DEBT / COLLATERAL in satoshis; TEST has precision 5."""

import time

import pytest

from kit.keys import DEV_PUB
from kit.reference import requires_reference
from kit.side_by_side import Refused, amount, core, on_both, start_sides, stop_sides

pytestmark = [pytest.mark.reference, pytest.mark.slow, requires_reference]

INIT0, INIT1 = "1.2.6", "1.2.7"
WHITE_LIST, GLOBAL_SETTLE, DISABLE_COLLATERAL_BIDDING = 0x02, 0x20, 0x8000


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    """(reference, nodeapi); init1 holds 100,000 TEST on both."""
    pair = start_sides(tmp_path_factory.mktemp("rules"))
    try:
        both(pair, lambda side: side.push([0, {"from": INIT0, "to": INIT1,
                                               "amount": core(10 ** 10), "extensions": []}]))
        yield pair
    finally:
        stop_sides(pair)


def options(flags=0, perms=0, **extra):
    return dict({
        "max_supply": 10 ** 12, "market_fee_percent": 0, "max_market_fee": 0,
        "issuer_permissions": perms, "flags": flags,
        "core_exchange_rate": {"base": core(1), "quote": amount(1, "1.3.1")},
        "whitelist_authorities": [], "blacklist_authorities": [], "whitelist_markets": [],
        "blacklist_markets": [], "description": "", "extensions": []}, **extra)


def bitasset_options(backing="1.3.0", delay=3600, **extensions):
    return {"feed_lifetime_sec": 864000, "minimum_feeds": 1,
            "force_settlement_delay_sec": delay, "force_settlement_offset_percent": 100,
            "maximum_force_settlement_volume": 2000, "short_backing_asset": backing,
            "extensions": extensions}


def create(side, symbol, precision=3, bitasset=None, **opts):
    """init0's asset; its id (the same on both chains: same operations)."""
    data = {"issuer": INIT0, "symbol": symbol, "precision": precision,
            "common_options": options(**opts), "is_prediction_market": False,
            "extensions": []}
    if bitasset is not None:
        data["bitasset_opts"] = bitasset
    [[_tag, asset_id]] = side.push([10, data])
    return asset_id


def feed(asset_id, debt, collateral, mcr=1750, mssr=1100):
    settlement = {"base": amount(debt, asset_id), "quote": core(collateral)}
    return {"settlement_price": settlement, "maintenance_collateral_ratio": mcr,
            "maximum_short_squeeze_ratio": mssr, "core_exchange_rate": settlement}


def fed(side, asset_id, debt, collateral, **kw):
    """init0, the asset's only producer, publishes ``debt`` per ``collateral``."""
    side.push([19, {"publisher": INIT0, "asset_id": asset_id,
                    "feed": feed(asset_id, debt, collateral, **kw), "extensions": {}}])


def both(sides, fn):
    """``[fn(reference), fn(nodeapi)]``, run at once (kit.side_by_side.on_both)."""
    return on_both(sides, fn)


def test_buyback_account_takes_only_its_allowed_assets(sides):
    """The buyback account's allowed_assets are its markets (TEST) and the
    asset it buys: another asset sent to it is refused with transfer's
    text; its own arrive."""
    def run(side):
        buy, other = create(side, "BUYB"), create(side, "OTHERB")
        null_auth = {"weight_threshold": 1, "account_auths": [["1.2.3", 1]], "key_auths": [],
                     "address_auths": []}
        [[_tag, bb]] = side.push([5, {
            "registrar": INIT0, "referrer": INIT0, "referrer_percent": 0,
            "name": "buyback-buyb", "owner": null_auth, "active": null_auth,
            "options": {"memo_key": DEV_PUB, "voting_account": "1.2.5", "num_witness": 0,
                        "num_committee": 0, "votes": [], "extensions": []},
            "extensions": {"buyback_options": {"asset_to_buy": buy, "asset_to_buy_issuer": INIT0,
                                               "markets": ["1.3.0"]}}}])
        side.push([14, {"issuer": INIT0, "asset_to_issue": amount(1000, other),
                        "issue_to_account": INIT1, "extensions": []}])
        refused = side.refusal([0, {"from": INIT1, "to": bb, "amount": amount(10, other),
                                    "extensions": []}])
        side.push([14, {"issuer": INIT0, "asset_to_issue": amount(10, buy),
                        "issue_to_account": bb, "extensions": []}])
        side.push([0, {"from": INIT1, "to": bb, "amount": core(7), "extensions": []}])
        return (bb, other, side.get(bb)["allowed_assets"], side.balance(bb, buy),
                side.balance(bb, "1.3.0"), side.balance(bb, other), refused["code"],
                refused["message"])

    theirs, mine = both(sides, run)
    assert theirs == mine
    bb, other, allowed, buy_held, core_held, other_held, code, text = theirs
    assert allowed == ["1.3.0", allowed[1]] and (buy_held, core_held, other_held) == (10, 7, 0)
    # transfer_to_account_not_whitelisted (3050002, "owner mismatch") and the
    # evaluator's rethrow; 10 sat of precision 3 is 0.010
    assert code == 3050002
    assert text == (f"Execution error: owner mismatch: 'to' account {bb} is not whitelisted "
                    f"for asset {other} Unable to transfer 0.010 OTHERB from init1 to "
                    f"buyback-buyb")


def test_the_committee_account_passes_the_lists(sides):
    """An asset white listed by init0 (who lists nobody): init1 is refused,
    the committee account 1.2.0 takes 500 sat."""
    def run(side):
        kyc = create(side, "KYCC", flags=WHITE_LIST, perms=WHITE_LIST,
                     whitelist_authorities=[INIT0])
        side.push([14, {"issuer": INIT0, "asset_to_issue": amount(500, kyc),
                        "issue_to_account": "1.2.0", "extensions": []}])
        refused = side.refusal([14, {"issuer": INIT0, "asset_to_issue": amount(500, kyc),
                                     "issue_to_account": INIT1, "extensions": []}])
        return side.balance("1.2.0", kyc), refused["message"]

    theirs, mine = both(sides, run)
    assert theirs == mine
    assert theirs[0] == 500
    assert theirs[1] == ("Execution error: Assert Exception: "
                         "is_authorized_asset( d, *to_account, a ): ")


def test_no_new_precision_for_a_backing_asset(sides):
    def run(side):
        back = create(side, "BACKP")
        busd = create(side, "BUSDP", precision=4, bitasset=bitasset_options(backing=back))
        refused = side.refusal([11, {"issuer": INIT0, "asset_to_update": back,
                                     "new_options": side.get(back)["options"],
                                     "extensions": {"new_precision": 4}}])
        return busd, refused["message"]

    theirs, mine = both(sides, run)
    assert theirs == mine
    assert theirs[1] == (f"Execution error: Assert Exception: !backing_another_asset: Asset "
                         f"{theirs[0]} is backed by this asset, can not update precision")


def test_disabling_collateral_bidding_cancels_the_bids(sides):
    """After the issuer's global settlement, init1 bids 50,000 TEST sat for
    1,000 debt and init0 30,000 for 500; setting the flag gives both their
    collateral back (init0 less the update's fee) and leaves no bid."""
    def run(side):
        usd = create(side, "CBIDX", precision=4, bitasset=bitasset_options(),
                     perms=GLOBAL_SETTLE)
        side.push([13, {"issuer": INIT0, "asset_to_update": usd,
                        "new_feed_producers": [INIT0], "extensions": []}])
        fed(side, usd, 1, 100)
        side.push([3, {"funding_account": INIT1, "delta_collateral": core(400000),
                       "delta_debt": amount(1000, usd), "extensions": {}}])
        side.push([18, {"issuer": INIT0, "asset_to_settle": usd,
                        "settle_price": {"base": amount(1, usd), "quote": core(100)},
                        "extensions": []}])
        side.push([45, {"bidder": INIT1, "additional_collateral": core(50000),
                        "debt_covered": amount(1000, usd), "extensions": []}],
                  [45, {"bidder": INIT0, "additional_collateral": core(30000),
                        "debt_covered": amount(500, usd), "extensions": []}])
        bids = len(side.call("get_collateral_bids", usd, 10, 0))
        before = side.balance(INIT0, "1.3.0"), side.balance(INIT1, "1.3.0")
        opts = side.get(usd)["options"]
        update = [11, {"issuer": INIT0, "asset_to_update": usd,
                       "new_options": dict(opts, flags=int(opts["flags"])
                                           | DISABLE_COLLATERAL_BIDDING),
                       "extensions": {}}]
        fee = int(side.with_fees([update])[0][1]["fee"]["amount"])
        side.push(update)
        after = side.balance(INIT0, "1.3.0"), side.balance(INIT1, "1.3.0")
        # the virtual bid_collateral of the cancel, init1's latest history entry
        [latest] = side.call("get_account_history", INIT1, "1.11.0", 1, "1.11.0", api="history")
        return (bids, after[0] - before[0] + fee, after[1] - before[1],
                side.call("get_collateral_bids", usd, 10, 0), usd, latest["op"])

    theirs, mine = both(sides, run)
    assert theirs[:4] == mine[:4] == (2, 30000, 50000, [])
    usd = theirs[4]
    assert theirs[5] == mine[5] == [45, {
        "fee": core(0), "bidder": INIT1, "additional_collateral": core(50000),
        "debt_covered": amount(0, usd), "extensions": []}]


def test_a_disable_permission_bit_forbids_the_flag(sides):
    """The disable_collateral_bidding permission bit set: the flag cannot
    be set (the enabled mask has the disable bits that are clear)."""
    def run(side):
        usd = create(side, "NOBIDX", precision=4, bitasset=bitasset_options(),
                     perms=GLOBAL_SETTLE | DISABLE_COLLATERAL_BIDDING)
        opts = side.get(usd)["options"]
        return side.refusal([11, {"issuer": INIT0, "asset_to_update": usd,
                                  "new_options": dict(opts, flags=int(opts["flags"])
                                                      | DISABLE_COLLATERAL_BIDDING),
                                  "extensions": {}}])["message"]

    theirs, mine = both(sides, run)
    assert theirs == mine == (
        "Execution error: Assert Exception: 0 == ( (o.new_options.flags ^ a.options.flags) & "
        "check_bits & (uint16_t)(~enabled_issuer_permissions_mask) ): Flag change is "
        "forbidden by issuer permissions")


def test_no_settlement_due_settlements_share_one_price(sides):
    """Black swan response method 1: init1 borrows 1,000 with 200,000 TEST
    sat; init0 and init1 each force-settle 100 in one transaction (due in
    20 s); the feed falls to 180 TEST sat per sat (MCR 1.05, MSSR 1.5), so
    the current feed is capped at 1000/200000 * 1.5 = 3/400.  Both due
    settlements fill at 3/400 less the 1 % offset = 1/132: 100 * 132 =
    13,200 TEST sat each (the second re-priced from the feed the first
    re-capped, 27/3736, would get 13,698); the position keeps 800 debt and
    200,000 - 26,400 = 173,600 collateral."""
    def run(side):
        usd = create(side, "NSUX", precision=4,
                     bitasset=bitasset_options(delay=20, black_swan_response_method=1))
        side.push([13, {"issuer": INIT0, "asset_to_update": usd,
                        "new_feed_producers": [INIT0], "extensions": []}])
        fed(side, usd, 1, 100, mcr=1050, mssr=1500)
        side.push([3, {"funding_account": INIT1, "delta_collateral": core(200000),
                       "delta_debt": amount(1000, usd), "extensions": {}}])
        side.push([0, {"from": INIT1, "to": INIT0, "amount": amount(100, usd),
                       "extensions": []}])
        side.push([17, {"account": INIT0, "amount": amount(100, usd), "extensions": []}],
                  [17, {"account": INIT1, "amount": amount(100, usd), "extensions": []}])
        fed(side, usd, 1, 180, mcr=1050, mssr=1500)
        capped = side.get(side.get(usd)["bitasset_data_id"])["current_feed"]
        before = side.balance(INIT0, "1.3.0"), side.balance(INIT1, "1.3.0")
        deadline = time.time() + 60
        while side.call("get_settle_orders", usd, 10):
            if time.time() > deadline:
                raise AssertionError(f"{side.name}: the settlements never came due")
            time.sleep(0.5)
        after = side.balance(INIT0, "1.3.0"), side.balance(INIT1, "1.3.0")
        [position] = side.call("get_call_orders", usd, 10)
        return (capped["settlement_price"], after[0] - before[0], after[1] - before[1],
                int(position["debt"]), int(position["collateral"]))

    theirs, mine = both(sides, run)
    assert theirs == mine
    price, paid0, paid1, debt, collateral = theirs
    assert (int(price["base"]["amount"]), int(price["quote"]["amount"])) == (3, 400)
    assert (paid0, paid1, debt, collateral) == (13200, 13200, 800, 173600)


def test_core_in_balance_waits_for_maintenance(sides):
    """account_object.hpp core_in_balance, "Only updates on maintenance":
    init1 received 100,000 TEST after the last maintenance (block 1's), so
    its statistics still say 0 while its core balance object is flagged."""
    def run(side):
        stats = side.get(side.get(INIT1)["statistics"])
        held = side.balance(INIT1, "1.3.0")
        return int(stats["core_in_balance"]), held > 0

    assert both(sides, run) == [(0, True), (0, True)]
