"""Market fee sharing (bitshares-core db_market.cpp ``pay_market_fees``,
db_balance.cpp ``deposit_market_fee_vesting_balance``; BSIP 86 network
share, hardforks 1774 and core-1800 rewards) and the BSIP 85 maker
discount of ``fill_limit_order``: amounts by hand."""

import pytest

from kit.chain import CORE, account_options, amt, asset_options, key_auth
from kit.chain import push_wire as push
from kit.keys import DEV_PUB

INIT0, INIT1, INIT2 = "1.2.6", "1.2.7", "1.2.8"
CHARGE_MARKET_FEE = 0x01
WHITE_LIST = 0x02
EXPIRATION = "2030-01-01T00:00:00"


def set_parameters(chain, **percents):
    """The committee's chain parameter extensions, as a passed proposal
    would leave them (test_chain_governance covers the proposal path)."""
    params = chain.state.modify("2.0.0")["parameters"]
    params["extensions"] = dict(params.get("extensions") or {}, **percents)


@pytest.fixture
def chain(funded_pair):
    return funded_pair


def alice(chain, referrer_percent=3000):
    """``alice``: registered by init0, referred by init1 with 30 % of the
    rewards, funded with 1,000,000 TEST satoshis."""
    [[_t, account]] = push(chain, [5, {
        "registrar": INIT0, "referrer": INIT1, "referrer_percent": referrer_percent,
        "name": "alice", "owner": key_auth(DEV_PUB), "active": key_auth(DEV_PUB),
        "options": account_options(DEV_PUB), "extensions": {}}])
    push(chain, [0, {"from": INIT0, "to": account, "amount": amt(10 ** 9, CORE),
                     "extensions": []}])
    return account


def gold(chain, **extensions):
    """GOLD: 10 % market fee, ``extensions`` in its options; init0 holds
    1,000 GOLD (precision 3)."""
    options = asset_options(flags=CHARGE_MARKET_FEE, perms=CHARGE_MARKET_FEE | WHITE_LIST,
                            percent=1000, max_market_fee=10 ** 9)
    options["extensions"] = extensions
    [[_t, aid]] = push(chain, [10, {"issuer": INIT0, "symbol": "GOLD", "precision": 3,
                                    "common_options": options, "is_prediction_market": False,
                                    "extensions": []}])
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amt(10 ** 6, aid),
                      "issue_to_account": INIT0, "extensions": []}])
    return aid


def buy(chain, buyer, aid, gold_amount=100000):
    """init0 offers ``gold_amount`` GOLD sat for 2x TEST sat; ``buyer``
    takes it all."""
    push(chain, [1, {"seller": INIT0, "amount_to_sell": amt(gold_amount, aid),
                     "min_to_receive": amt(2 * gold_amount, CORE), "expiration": EXPIRATION,
                     "fill_or_kill": False, "extensions": {}}])
    push(chain, [1, {"seller": buyer, "amount_to_sell": amt(2 * gold_amount, CORE),
                     "min_to_receive": amt(gold_amount, aid), "expiration": EXPIRATION,
                     "fill_or_kill": False, "extensions": {}}])


def sharing_balance(chain, owner, aid):
    vb_id = chain.state.fee_sharing_balances.get((owner, aid))
    if vb_id is None:
        return None
    vbo = chain.state.objects[vb_id]
    assert vbo["balance_type"] == "market_fee_sharing" and vbo["policy"] == [2, {}]
    return int(vbo["balance"]["amount"])


def accumulated(chain, aid):
    return int(chain.state.objects[chain.state.objects[aid]["dynamic_asset_data_id"]]
               ["accumulated_fees"])


def test_network_share_rewards_and_issuer_part(chain):
    buyer = alice(chain)
    aid = gold(chain, reward_percent=2000)
    set_parameters(chain, market_fee_network_percent=500)
    before = chain.state.balance(buyer, aid)
    buy(chain, buyer, aid)
    # alice receives 100,000 GOLD sat; the market fee is 10 %: 10,000
    assert chain.state.balance(buyer, aid) - before == 90000
    # 5 % of it to the committee: 500; of the 9,500 left, 20 % (1,900) is
    # the reward: 30 % of it (570) to the referrer init1, 1,330 to the
    # registrar init0; 7,600 to the issuer
    assert sharing_balance(chain, "1.2.0", aid) == 500
    assert sharing_balance(chain, INIT1, aid) == 570
    assert sharing_balance(chain, INIT0, aid) == 1330
    assert accumulated(chain, aid) == 7600
    # a second fill adds to the same balances
    buy(chain, buyer, aid, 10000)  # fee 1,000: 50 network, 950 left, reward 190
    assert sharing_balance(chain, "1.2.0", aid) == 550
    assert sharing_balance(chain, INIT1, aid) == 570 + 57
    assert sharing_balance(chain, INIT0, aid) == 1330 + 133
    assert accumulated(chain, aid) == 7600 + 760
    assert len([v for v in chain.state.by_kind["1.13"]
                if chain.state.objects[v]["balance_type"] == "market_fee_sharing"]) == 3
    # the registrar withdraws its share (instant vesting)
    vb_id = chain.state.fee_sharing_balances[(INIT0, aid)]
    held = chain.state.balance(INIT0, aid)
    push(chain, [33, {"vesting_balance": vb_id, "owner": INIT0, "amount": amt(1463, aid)}])
    assert chain.state.balance(INIT0, aid) - held == 1463
    assert sharing_balance(chain, INIT0, aid) == 0


def test_no_reward_outside_the_sharing_white_list(chain):
    buyer = alice(chain)
    aid = gold(chain, reward_percent=2000, whitelist_market_fee_sharing=[INIT2])
    buy(chain, buyer, aid)
    assert sharing_balance(chain, INIT0, aid) is None
    assert sharing_balance(chain, INIT1, aid) is None
    assert accumulated(chain, aid) == 10000


def test_registrar_in_the_white_list_and_no_referrer_cut(chain):
    buyer = alice(chain, referrer_percent=0)
    aid = gold(chain, reward_percent=10000, whitelist_market_fee_sharing=[INIT0])
    buy(chain, buyer, aid)
    # 100 % of the fee is the reward, all of it to the registrar
    assert sharing_balance(chain, INIT0, aid) == 10000
    assert sharing_balance(chain, INIT1, aid) is None
    assert accumulated(chain, aid) == 0


def test_maker_discount_refunds_part_of_the_creation_fee(chain):
    aid = gold(chain)
    set_parameters(chain, maker_fee_discount_percent=4000)
    order_fee = chain.required_fee([1, {
        "fee": amt(0, CORE), "seller": INIT0, "amount_to_sell": amt(100000, aid),
        "min_to_receive": amt(200000, CORE), "expiration": EXPIRATION, "fill_or_kill": False,
        "extensions": {}}])["amount"]
    assert order_fee > 0
    core_before = chain.state.balance(INIT0, CORE)
    stats_id = chain.state.objects[INIT0]["statistics"]
    pending = sum(int(chain.state.objects[stats_id][k])
                  for k in ("pending_fees", "pending_vested_fees"))
    taker_before = chain.state.balance(INIT1, CORE)
    buy(chain, INIT1, aid)
    # init0, the maker: paid the fee, got 40 % of it back and 200,000 TEST
    refund = order_fee * 4000 // 10000
    assert chain.state.balance(INIT0, CORE) - core_before == 200000 - order_fee + refund
    booked = sum(int(chain.state.objects[stats_id][k])
                 for k in ("pending_fees", "pending_vested_fees")) - pending
    assert booked == order_fee - refund
    # init1, the taker: no discount
    assert taker_before - chain.state.balance(INIT1, CORE) == 200000 + order_fee
