"""Special authorities (top holders) and buyback accounts at maintenance
(bitshares-core account_evaluator.cpp extensions, db_maint.cpp
update_top_n_authorities / create_buyback_orders); weights and amounts by
hand."""

import pytest

from nodeapi.chain.errors import InvalidOperation

from kit.chain import CORE, amt, asset_options, claim_wire, jump, open_chain, produce
from kit.chain import push_wire as push
from kit.keys import DEV_PUB

INIT0, INIT1, INIT2, INIT3, INIT4 = (f"1.2.{i}" for i in range(6, 11))


@pytest.fixture
def chain(genesis, tmp_path):
    chain = open_chain(genesis, tmp_path / "special")
    push(chain, claim_wire())
    for who in (INIT1, INIT2, INIT3, INIT4):
        push(chain, [0, {"from": INIT0, "to": who, "amount": amt(10 ** 9, CORE),
                         "extensions": []}])
    produce(chain)
    yield chain
    chain.block_log.close()


def new_asset(chain, symbol):
    [[_t, aid]] = push(chain, [10, {"issuer": INIT0, "symbol": symbol, "precision": 3,
                                    "common_options": asset_options(),
                                    "is_prediction_market": False, "extensions": []}])
    return aid


def to_maintenance(chain):
    jump(chain, chain.dgp["next_maintenance_time"] - chain.head_block_time + 1)


def test_a_maintenance_without_votes_changes_the_voted_accounts(chain):
    """db_maint.cpp ``update_active_witnesses`` modifies the witness
    account, ``update_active_committee_members`` the committee and relaxed
    committee accounts, even when no vote changes their authorities: all
    three are objects the maintenance block changed (the first two keep
    their authorities)."""
    before = {a: chain.state.objects[a]["active"] for a in ("1.2.0", "1.2.1")}
    to_maintenance(chain)
    assert {"1.2.0", "1.2.1", "1.2.2"} <= chain.changed_objects_of_last_block()
    assert {a: chain.state.objects[a]["active"] for a in before} == before


def test_top_holders_become_the_active_authority(chain):
    hold = new_asset(chain, "HOLD")
    for who, n in ((INIT1, 3000), (INIT2, 1000), (INIT3, 2000)):
        push(chain, [14, {"issuer": INIT0, "asset_to_issue": amt(n, hold),
                          "issue_to_account": who, "extensions": []}])
    push(chain, [6, {"account": INIT4, "extensions": {
        "active_special_authority": [1, {"asset": hold, "num_top_holders": 2}]}}])
    acc = chain.state.objects[INIT4]
    assert acc["active_special_authority"] == [1, {"asset": hold, "num_top_holders": 2}]
    [sa] = chain.state.ids_of_type("2.14.")
    assert chain.state.objects[sa]["account"] == INIT4
    produce(chain)
    to_maintenance(chain)
    acc = chain.state.objects[INIT4]
    # the two largest holders, init1 (3000) and init3 (2000), by weight;
    # threshold = total // 2 + 1 = 2501
    assert acc["active"] == {"weight_threshold": 2501, "account_auths": [[INIT1, 3000],
                                                                         [INIT3, 2000]],
                             "key_auths": [], "address_auths": []}
    assert acc["top_n_control_flags"] == 2


def test_top_holder_ties_go_to_the_lower_account_id(chain):
    """db_maint.cpp update_top_n_authorities walks the by_asset_balance
    index (asset, balance descending, owner ascending): at the N-th place a
    tie goes to the lower account id, whichever balance object is older."""
    hold = new_asset(chain, "TIE")
    # init3 (1.2.9) gets its balance object before init2 (1.2.8)
    for who, n in ((INIT3, 2000), (INIT2, 2000), (INIT1, 3000)):
        push(chain, [14, {"issuer": INIT0, "asset_to_issue": amt(n, hold),
                          "issue_to_account": who, "extensions": []}])
    bal = {chain.state.objects[b]["owner"]: b for b in chain.state.ids_of_type("2.5.")
           if chain.state.objects[b]["asset_type"] == hold}
    assert int(bal[INIT3].split(".")[2]) < int(bal[INIT2].split(".")[2])
    push(chain, [6, {"account": INIT4, "extensions": {
        "active_special_authority": [1, {"asset": hold, "num_top_holders": 2}]}}])
    produce(chain)
    to_maintenance(chain)
    # init1 (3000) and, of the two at 2000, init2; threshold 5000 // 2 + 1
    assert chain.state.objects[INIT4]["active"] == {
        "weight_threshold": 2501, "account_auths": [[INIT1, 3000], [INIT2, 2000]],
        "key_auths": [], "address_auths": []}


def test_buyback_account_buys_at_maintenance(chain):
    buy = new_asset(chain, "BUY")
    # a buyback account answers to nobody: graphene's null authority
    key = {"weight_threshold": 1, "account_auths": [["1.2.3", 1]], "key_auths": [],
           "address_auths": []}
    options = {"memo_key": DEV_PUB, "voting_account": "1.2.5", "num_witness": 0,
               "num_committee": 0, "votes": [], "extensions": []}
    create = [5, {"registrar": INIT0, "referrer": INIT0, "referrer_percent": 0,
                  "name": "buyback-buy", "owner": key, "active": key, "options": options,
                  "extensions": {"buyback_options": {"asset_to_buy": buy,
                                                     "asset_to_buy_issuer": INIT1,
                                                     "markets": [CORE]}}}]
    with pytest.raises(InvalidOperation, match="Incorrect asset issuer"):
        push(chain, create)
    create[1]["extensions"]["buyback_options"]["asset_to_buy_issuer"] = INIT0
    [[_t, bb]] = push(chain, create)
    assert chain.state.objects[bb]["allowed_assets"] == [CORE, buy]
    assert chain.state.objects[buy]["buyback_account"] == bb
    [bbo] = chain.state.ids_of_type("2.15.")
    assert chain.state.objects[bbo]["asset_to_buy"] == buy
    create[1]["name"] = "buyback-two"
    with pytest.raises(InvalidOperation, match="already has buyback"):
        push(chain, create)
    # 1000 core for the buyback; init0 offers 10 BUY sat for 500 core sat
    push(chain, [0, {"from": INIT0, "to": bb, "amount": amt(1000, CORE), "extensions": []}])
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amt(100, buy),
                      "issue_to_account": INIT0, "extensions": []}])
    push(chain, [1, {"seller": INIT0, "amount_to_sell": amt(10, buy),
                     "min_to_receive": amt(500, CORE), "expiration": "2030-01-01T00:00:00",
                     "fill_or_kill": False, "extensions": {}}])
    produce(chain)
    to_maintenance(chain)
    # the buyback offered its 1000 core at any price: it took the whole
    # maker order (10 BUY for 500 core) and the rest was cancelled back
    assert chain.state.balance(bb, buy) == 10
    assert chain.state.balance(bb, CORE) == 500
    assert chain.state.limit_orders_of(bb) == []
