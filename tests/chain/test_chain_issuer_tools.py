"""Issuer tools of user-issued assets: override_transfer (38) with the
override_authority flag, asset_claim_fees (43) of accumulated market fees,
asset_claim_pool (47) and asset_update_issuer (48, owner authority); amounts
checked by hand, errors with bitshares-core's texts."""

import pytest

from nodeapi.chain.errors import InvalidOperation, MissingAuthority

from kit.chain import CORE, amt, asset_options
from kit.chain import push_wire as push
from kit.keys import OTHER_PUB, OTHER_WIF

INIT0, INIT1, INIT2 = "1.2.6", "1.2.7", "1.2.8"
OVERRIDE = 0x04
CHARGE_MARKET_FEE = 0x01


@pytest.fixture
def chain(funded_pair):
    return funded_pair


def new_asset(chain, symbol, flags=0, **opts):
    [[_t, aid]] = push(chain, [10, {"issuer": INIT0, "symbol": symbol, "precision": 3,
                                    "common_options": asset_options(flags=flags, perms=flags,
                                                                    **opts),
                                    "is_prediction_market": False, "extensions": []}])
    return aid


def test_override_transfer(chain):
    plain = new_asset(chain, "PLAIN")
    ctl = new_asset(chain, "CTL", OVERRIDE)
    for aid in (plain, ctl):
        push(chain, [14, {"issuer": INIT0, "asset_to_issue": amt(1000, aid),
                          "issue_to_account": INIT1, "extensions": []}])
    with pytest.raises(InvalidOperation, match="override_transfer not permitted"):
        push(chain, [38, {"issuer": INIT0, "from": INIT1, "to": INIT2,
                          "amount": amt(10, plain), "extensions": []}])
    push(chain, [38, {"issuer": INIT0, "from": INIT1, "to": INIT2, "amount": amt(400, ctl),
                      "extensions": []}])
    assert chain.state.balance(INIT1, ctl) == 600 and chain.state.balance(INIT2, ctl) == 400
    with pytest.raises(InvalidOperation, match="get_balance"):
        push(chain, [38, {"issuer": INIT0, "from": INIT1, "to": INIT2, "amount": amt(601, ctl),
                          "extensions": []}])


def test_claim_fees_and_pool(chain):
    # GOLD keeps 1 % of what buyers receive; init1 buys 1,000 GOLD sat
    gold = new_asset(chain, "GOLD", CHARGE_MARKET_FEE, percent=100, max_market_fee=10 ** 9)
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amt(100000, gold),
                      "issue_to_account": INIT0, "extensions": []}])
    push(chain, [1, {"seller": INIT0, "amount_to_sell": amt(1000, gold),
                     "min_to_receive": amt(2000, CORE), "expiration": "2030-01-01T00:00:00",
                     "fill_or_kill": False, "extensions": {}}])
    push(chain, [1, {"seller": INIT1, "amount_to_sell": amt(2000, CORE),
                     "min_to_receive": amt(1000, gold), "expiration": "2030-01-01T00:00:00",
                     "fill_or_kill": False, "extensions": {}}])
    dyn_id = chain.state.objects[gold]["dynamic_asset_data_id"]
    assert chain.state.objects[dyn_id]["accumulated_fees"] == 10  # 1 % of 1,000
    before = chain.state.balance(INIT0, gold)
    with pytest.raises(InvalidOperation, match="Attempt to claim more fees"):
        push(chain, [43, {"issuer": INIT0, "amount_to_claim": amt(11, gold), "extensions": {}}])
    with pytest.raises(InvalidOperation, match="may only be claimed by the issuer"):
        push(chain, [43, {"issuer": INIT1, "amount_to_claim": amt(1, gold), "extensions": {}}])
    push(chain, [43, {"issuer": INIT0, "amount_to_claim": amt(10, gold), "extensions": {}}])
    assert chain.state.balance(INIT0, gold) - before == 10
    assert chain.state.objects[dyn_id]["accumulated_fees"] == 0
    # the fee pool: funded with 5,000 core, 3,000 claimed back
    push(chain, [16, {"from_account": INIT0, "asset_id": gold, "amount": 5000,
                      "extensions": []}])
    pool = int(chain.state.objects[dyn_id]["fee_pool"])
    with pytest.raises(InvalidOperation, match="more fees than is available"):
        push(chain, [47, {"issuer": INIT0, "asset_id": gold,
                          "amount_to_claim": amt(pool + 1, CORE), "extensions": []}])
    core_before = chain.state.balance(INIT0, CORE)
    push(chain, [47, {"issuer": INIT0, "asset_id": gold, "amount_to_claim": amt(3000, CORE),
                      "extensions": []}])
    assert int(chain.state.objects[dyn_id]["fee_pool"]) == pool - 3000
    fee = chain.required_fee([47, {"fee": amt(0, CORE), "issuer": INIT0, "asset_id": gold,
                                   "amount_to_claim": amt(3000, CORE),
                                   "extensions": []}])["amount"]
    assert chain.state.balance(INIT0, CORE) - core_before == 3000 - fee


def test_update_issuer_needs_the_owner(chain):
    aid = new_asset(chain, "HAND")
    # init0's owner authority: move it to another key, keep the active
    owner = {"weight_threshold": 1, "account_auths": [], "key_auths": [[OTHER_PUB, 1]],
             "address_auths": []}
    push(chain, [6, {"account": INIT0, "owner": owner, "extensions": {}}])
    op = [48, {"issuer": INIT0, "asset_to_update": aid, "new_issuer": INIT1, "extensions": []}]
    with pytest.raises(MissingAuthority, match="Missing Owner Authority 1.2.6"):
        push(chain, op)  # signed by the active key only
    with pytest.raises(InvalidOperation, match="Incorrect issuer for asset"):
        push(chain, [48, dict(op[1], issuer=INIT1, new_issuer=INIT2)])
    push(chain, op, wif=OTHER_WIF)
    assert chain.state.objects[aid]["issuer"] == INIT1


def test_asset_update_extensions_and_supply_flags(chain):
    LOCK_MAX_SUPPLY, DISABLE_NEW_SUPPLY = 0x200, 0x400
    aid = new_asset(chain, "PRECI")
    opts = dict(chain.state.objects[aid]["options"])
    update = {"issuer": INIT0, "asset_to_update": aid, "new_options": opts}
    # no supply yet: the precision may change, and the rate may be kept
    new_rate = {"base": amt(1, CORE), "quote": amt(5, aid)}
    push(chain, [11, dict(update, new_options=dict(opts, core_exchange_rate=new_rate),
                          extensions={"new_precision": 5, "skip_core_exchange_rate": True})])
    obj = chain.state.objects[aid]
    assert obj["precision"] == 5
    assert obj["options"]["core_exchange_rate"] == opts["core_exchange_rate"]
    with pytest.raises(InvalidOperation, match="does not change"):
        push(chain, [11, dict(update, extensions={"new_precision": 5})])
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amt(10, aid),
                      "issue_to_account": INIT1, "extensions": []}])
    with pytest.raises(InvalidOperation, match="Cannot update precision if current supply"):
        push(chain, [11, dict(update, extensions={"new_precision": 4})])
    with pytest.raises(InvalidOperation, match="Hardfork #199"):
        push(chain, [11, dict(update, new_issuer=INIT1, extensions={})])
    # lock_max_supply and disable_new_supply, permitted and set
    locked = new_asset(chain, "LOCKD", LOCK_MAX_SUPPLY | DISABLE_NEW_SUPPLY)
    lopts = dict(chain.state.objects[locked]["options"])
    with pytest.raises(InvalidOperation, match="Can not update max supply"):
        push(chain, [11, {"issuer": INIT0, "asset_to_update": locked,
                          "new_options": dict(lopts, max_supply=5), "extensions": {}}])
    with pytest.raises(InvalidOperation, match="Can not create new supply"):
        push(chain, [14, {"issuer": INIT0, "asset_to_issue": amt(1, locked),
                          "issue_to_account": INIT1, "extensions": []}])


def test_new_precision_refused_for_a_backing_asset_or_a_prediction_market(chain):
    """asset_update_evaluator::do_evaluate: a new precision must differ, not
    be a prediction market's, and not be of an asset some market-issued asset
    or prediction market is backed by (the by_short_backing_asset index)."""
    from kit.smartcoin import bitasset_opts

    back, pm_back = new_asset(chain, "BACK"), new_asset(chain, "PMBACK")
    [[_t, busd]] = push(chain, [10, {
        "issuer": INIT0, "symbol": "BUSD", "precision": 4,
        "common_options": asset_options(perms=0x200 | 0x20),
        "bitasset_opts": dict(bitasset_opts(), short_backing_asset=back),
        "is_prediction_market": False, "extensions": []}])
    [[_t, pred]] = push(chain, [10, {
        "issuer": INIT0, "symbol": "PREDX", "precision": 3,
        "common_options": asset_options(perms=0x200 | 0x20),
        "bitasset_opts": dict(bitasset_opts(), short_backing_asset=pm_back),
        "is_prediction_market": True, "extensions": []}])

    def update(aid, precision):
        return [11, {"issuer": INIT0, "asset_to_update": aid,
                     "new_options": dict(chain.state.objects[aid]["options"]),
                     "extensions": {"new_precision": precision}}]

    with pytest.raises(InvalidOperation, match=f"Asset {busd} is backed by this asset, "
                                               "can not update precision"):
        push(chain, update(back, 4))
    with pytest.raises(InvalidOperation, match=f"Asset {pred} is backed by this asset"):
        push(chain, update(pm_back, 4))
    # the unchanged precision is refused first, then the prediction market
    with pytest.raises(InvalidOperation, match="does not change"):
        push(chain, update(pred, 3))
    with pytest.raises(InvalidOperation, match="Can not update precision of a prediction"):
        push(chain, update(pred, 4))
    assert chain.state.objects[back]["precision"] == 3
    # the market-issued asset itself, without supply and backing nothing, may
    push(chain, update(busd, 6))
    assert chain.state.objects[busd]["precision"] == 6
