"""Liquidity pools (59-63, 75) on the chain: creation binding a share asset,
first and proportional deposits, exchanges in both directions with the
pool's taker fee and the assets' market fees, withdrawals with the
withdrawal fee, updates and deletion; every amount computed by hand from
bitshares-core's liquidity_pool_evaluator.cpp integer rules."""

import pytest

from nodeapi.chain.errors import InvalidOperation

from kit.chain import CORE, asset_options, claim_wire, open_chain, produce
from kit.chain import push_wire as push

INIT0, INIT1 = "1.2.6", "1.2.7"
FEE0 = {"amount": 0, "asset_id": CORE}
CHARGE_MARKET_FEE = 0x01




def amount(n, asset_id):
    return {"amount": n, "asset_id": asset_id}


def create_asset(chain, symbol, **opts):
    [[_t, aid]] = push(chain, [10, {"issuer": INIT0, "symbol": symbol, "precision": 3,
                                    "common_options": asset_options(**opts),
                                    "is_prediction_market": False, "extensions": []}])
    return aid


@pytest.fixture
def chain(genesis, tmp_path):
    chain = open_chain(genesis, tmp_path / "pools")
    push(chain, claim_wire())
    produce(chain)
    yield chain
    chain.block_log.close()


@pytest.fixture
def pool(chain):
    """GOLD (1.3.1, 1 % market fee) and TEST; share asset LPS; a pool with
    a 0.3 % taker fee and a 1 % withdrawal fee; init0 holds 10^9 GOLD."""
    gold = create_asset(chain, "GOLD", flags=CHARGE_MARKET_FEE, perms=CHARGE_MARKET_FEE,
                        percent=100, max_market_fee=10 ** 12)
    lps = create_asset(chain, "LPS")
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amount(10 ** 9, gold),
                      "issue_to_account": INIT0, "extensions": []}])
    [[_t, result]] = push(chain, [59, {"account": INIT0, "asset_a": CORE, "asset_b": gold,
                                       "share_asset": lps, "taker_fee_percent": 30,
                                       "withdrawal_fee_percent": 100, "extensions": []}])
    [pid] = result["new_objects"]
    assert result["updated_objects"] == [lps]
    produce(chain)
    return pid, gold, lps


def test_create_binds_the_share_asset(chain, pool):
    pid, gold, lps = pool
    obj = chain.state.objects[pid]
    assert pid == "1.19.0"
    assert (obj["asset_a"], obj["asset_b"], obj["share_asset"]) == (CORE, gold, lps)
    assert (obj["balance_a"], obj["balance_b"], obj["virtual_value"]) == (0, 0, "0")
    assert chain.state.objects[lps]["for_liquidity_pool"] == pid
    other = create_asset(chain, "LPX")
    with pytest.raises(InvalidOperation, match="already bound to another liquidity pool"):
        push(chain, [59, {"account": INIT0, "asset_a": CORE, "asset_b": gold, "share_asset": lps,
                          "taker_fee_percent": 0, "withdrawal_fee_percent": 0,
                          "extensions": []}])
    del other


def test_deposits_exchanges_withdrawals(chain, pool):
    pid, gold, lps = pool
    state = chain.state

    def bal(asset_id, who=INIT0):
        return state.balance(who, asset_id)

    # first deposit: shares = max(1,000,000, 2,000,000)
    [[_t, res]] = push(chain, [61, {"account": INIT0, "pool": pid,
                                    "amount_a": amount(1000000, CORE),
                                    "amount_b": amount(2000000, gold), "extensions": []}])
    assert res == {"paid": [amount(1000000, CORE), amount(2000000, gold)],
                   "received": [amount(2000000, lps)], "fees": []}
    obj = state.objects[pid]
    assert (obj["balance_a"], obj["balance_b"]) == (1000000, 2000000)
    assert obj["virtual_value"] == str(1000000 * 2000000)
    # a proportional deposit: shares = min(2e6 * 100000 // 1e6, 2e6 * 300000 // 2e6)
    #   = min(200000, 300000) = 200000; the pool takes ceil(200000 * 1e6 / 2e6)
    #   = 100000 TEST and ceil(200000 * 2e6 / 2e6) = 200000 GOLD
    [[_t, res]] = push(chain, [61, {"account": INIT0, "pool": pid,
                                    "amount_a": amount(100000, CORE),
                                    "amount_b": amount(300000, gold), "extensions": []}])
    assert res["paid"] == [amount(100000, CORE), amount(200000, gold)]
    assert res["received"] == [amount(200000, lps)]
    assert bal(lps) == 2200000
    # sell 50,000 TEST for GOLD: no market fee on TEST; the pool keeps 50,000;
    # new_a = 1,150,000; new_b = ceil(1,100,000 * 2,200,000 / 1,150,000)
    #   = ceil(2,104,347.8...) = 2,104,348; delta = 2,200,000 - 2,104,348 = 95,652;
    # pool taker fee = 95,652 * 30 // 10000 = 286; pool pays 95,366;
    # GOLD's taker market fee (1 %) = 953; init0 receives 94,413
    gold_before = bal(gold)
    [[_t, res]] = push(chain, [63, {"account": INIT0, "pool": pid,
                                    "amount_to_sell": amount(50000, CORE),
                                    "min_to_receive": amount(94413, gold), "extensions": []}])
    assert res == {"paid": [amount(50000, CORE)], "received": [amount(94413, gold)],
                   "fees": [amount(0, CORE), amount(953, gold), amount(286, gold)]}
    assert bal(gold) - gold_before == 94413
    obj = state.objects[pid]
    assert (obj["balance_a"], obj["balance_b"]) == (1150000, 2200000 - 95366)
    assert int(state.objects[state.objects[gold]["dynamic_asset_data_id"]]
               ["accumulated_fees"]) == 953
    # asking one satoshi more is refused
    with pytest.raises(InvalidOperation, match="Unable to exchange at expected price"):
        push(chain, [63, {"account": INIT0, "pool": pid, "amount_to_sell": amount(50000, CORE),
                          "min_to_receive": amount(10 ** 9, gold), "extensions": []}])
    # sell 10,000 GOLD: GOLD's maker fee 100 stays out, the pool keeps 9,900;
    # balances 1,150,000 / 2,104,634; new_b = 2,114,534;
    # new_a = ceil(1,150,000 * 2,104,634 / 2,114,534) = ceil(1,144,615.8...) = 1,144,616;
    # delta = 5,384; pool fee 16; init0 receives 5,368 TEST (no TEST market fee)
    core_before = bal(CORE)
    [[_t, res]] = push(chain, [63, {"account": INIT0, "pool": pid,
                                    "amount_to_sell": amount(10000, gold),
                                    "min_to_receive": amount(1, CORE), "extensions": []}])
    fee = chain.required_fee([63, {"fee": FEE0, "account": INIT0, "pool": pid,
                                   "amount_to_sell": amount(10000, gold),
                                   "min_to_receive": amount(1, CORE), "extensions": []}])
    assert res == {"paid": [amount(10000, gold)], "received": [amount(5368, CORE)],
                   "fees": [amount(100, gold), amount(0, CORE), amount(16, CORE)]}
    assert bal(CORE) - core_before == 5368 - fee["amount"]
    obj = state.objects[pid]
    assert (obj["balance_a"], obj["balance_b"]) == (1150000 - 5368, 2104634 + 9900)
    # withdraw 220,000 of 2,200,000 shares: a = 220,000 * 1,144,632 // 2,200,000
    #   = 114,463, fee 1 % = 1,144 -> 113,319; b = 220,000 * 2,114,534 // 2,200,000
    #   = 211,453, fee 2,114 -> 209,339
    [[_t, res]] = push(chain, [62, {"account": INIT0, "pool": pid,
                                    "share_amount": amount(220000, lps), "extensions": []}])
    assert res == {"paid": [amount(220000, lps)],
                   "received": [amount(113319, CORE), amount(209339, gold)],
                   "fees": [amount(1144, CORE), amount(2114, gold)]}
    assert int(state.objects[state.objects[lps]["dynamic_asset_data_id"]]
               ["current_supply"]) == 1980000
    # the rest of the supply takes the rest of the pool, without fee
    obj = state.objects[pid]
    rest_a, rest_b = obj["balance_a"], obj["balance_b"]
    assert (rest_a, rest_b) == (1144632 - 113319, 2114534 - 209339)
    [[_t, res]] = push(chain, [62, {"account": INIT0, "pool": pid,
                                    "share_amount": amount(1980000, lps), "extensions": []}])
    assert res["received"] == [amount(rest_a, CORE), amount(rest_b, gold)]
    assert res["fees"] == [amount(0, CORE), amount(0, gold)]
    obj = state.objects[pid]
    assert (obj["balance_a"], obj["balance_b"], obj["virtual_value"]) == (0, 0, "0")


def test_update_and_delete(chain, pool):
    pid, gold, lps = pool
    with pytest.raises(InvalidOperation, match="Taker fee percent can only be updated"):
        push(chain, [75, {"account": INIT0, "pool": pid, "taker_fee_percent": 50,
                          "extensions": []}])
    push(chain, [75, {"account": INIT0, "pool": pid, "taker_fee_percent": 50,
                      "withdrawal_fee_percent": 0, "extensions": []}])
    obj = chain.state.objects[pid]
    assert (obj["taker_fee_percent"], obj["withdrawal_fee_percent"]) == (50, 0)
    push(chain, [61, {"account": INIT0, "pool": pid, "amount_a": amount(1000, CORE),
                      "amount_b": amount(1000, gold), "extensions": []}])
    with pytest.raises(InvalidOperation, match="Can not delete a non-empty pool"):
        push(chain, [60, {"account": INIT0, "pool": pid, "extensions": []}])
    push(chain, [62, {"account": INIT0, "pool": pid, "share_amount": amount(1000, lps),
                      "extensions": []}])
    [[_t, res]] = push(chain, [60, {"account": INIT0, "pool": pid, "extensions": []}])
    assert res == {"new_objects": [], "updated_objects": [lps], "removed_objects": [pid]}
    assert chain.state.find(pid) is None
    assert "for_liquidity_pool" not in chain.state.objects[lps]
