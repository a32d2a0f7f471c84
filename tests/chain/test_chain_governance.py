"""Governance on the chain: the witness schedule object, witnesses and
committee members, votes tallied at maintenance (active sets, authorities),
the budget and witness pay, vesting balances (values checked by hand from
bitshares-core's db_maint.cpp, db_witness_schedule.cpp and
vesting_balance_object.cpp rules)."""

import pytest

from kit.chain import push_wire as push
from kit.keys import DEV_WIF

from nodeapi.chain import errors
from nodeapi.chain.schedule import shuffle_witnesses
from nodeapi.protocol.times import format_time

ALICE_KEY = "TEST6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV"


def produce(chain, when=None):
    slot = 1 if when is None else chain.get_slot_at_time(when)
    chain.generate_block(chain.get_slot_time(slot), chain.get_scheduled_witness(slot), DEV_WIF)


def to_maintenance(chain):
    produce(chain, chain.dgp["next_maintenance_time"])


def _auth(key):
    return {"weight_threshold": 1, "account_auths": [], "key_auths": [[key, 1]],
            "address_auths": []}


def _options(votes=(), proxy="1.2.5", num_witness=0, num_committee=0):
    return {"memo_key": ALICE_KEY, "voting_account": proxy, "num_witness": num_witness,
            "num_committee": num_committee, "votes": list(votes), "extensions": []}


@pytest.fixture
def funded(chain):
    push(chain, (37, {"deposit_to_account": "1.2.6", "balance_to_claim": "1.15.0",
                      "balance_owner_key": ALICE_KEY,
                      "total_claimed": {"amount": 10 ** 15, "asset_id": "1.3.0"}}))
    produce(chain)
    return chain


def _new_member(chain, name, lifetime=True):
    (kind, aid), = push(chain, (5, {"registrar": "1.2.6", "referrer": "1.2.6",
                                    "referrer_percent": 0, "name": name,
                                    "owner": _auth(ALICE_KEY), "active": _auth(ALICE_KEY),
                                    "options": _options(), "extensions": {}}))
    push(chain, (0, {"from": "1.2.6", "to": aid,
                     "amount": {"amount": 10 ** 11, "asset_id": "1.3.0"}, "extensions": []}))
    if lifetime:
        push(chain, (8, {"account_to_upgrade": aid, "upgrade_to_lifetime_member": True,
                         "extensions": []}))
    return aid


def test_schedule_object_shuffled_each_round(funded):
    chain = funded
    active = chain.state.get("2.0.0")["active_witnesses"]
    assert len(active) == 11
    while chain.head_block_num % 11:
        produce(chain)
    shuffled = chain.state.get("2.12.0")["current_shuffled_witnesses"]
    assert shuffled == shuffle_witnesses(active, chain.head_block_time)
    assert sorted(shuffled, key=lambda w: int(w[4:])) == active and shuffled != active
    aslot = chain.dgp["current_aslot"]
    assert chain.get_scheduled_witness(1) == shuffled[(aslot + 1) % 11]
    # one missed slot: the witness scheduled for it misses, recently_missed_count += 4
    missed = chain.get_scheduled_witness(1)
    before = chain.state.get(missed)["total_missed"]
    produce(chain, chain.get_slot_time(2))
    assert chain.state.get(missed)["total_missed"] == before + 1
    assert chain.dgp["recently_missed_count"] == 4


def test_shuffle_is_graphene_xorshift():
    # k for i=0, now=1: (1 << 32) -> xorshift64* by hand:
    k = 1 << 32
    k ^= k >> 12
    k ^= (k << 25) & (2 ** 64 - 1)
    k ^= k >> 27
    k = (k * 2685821657736338717) % 2 ** 64
    first = k % 3
    out = shuffle_witnesses(["1.6.1", "1.6.2", "1.6.3"], 1)
    assert out[0] == ["1.6.1", "1.6.2", "1.6.3"][first]
    assert sorted(out) == ["1.6.1", "1.6.2", "1.6.3"]


def test_witness_committee_votes_and_maintenance(funded):
    chain = funded
    alice = _new_member(chain, "alice")
    (_, wid), = push(chain, (20, {"witness_account": alice, "url": "https://a",
                                  "block_signing_key": ALICE_KEY}))
    (_, cid), = push(chain, (29, {"committee_member_account": alice, "url": "u"}))
    assert (wid, cid) == ("1.6.12", "1.5.11")
    assert chain.state.get(wid)["vote_id"] == "1:22"
    assert chain.state.get(cid)["vote_id"] == "0:23"
    assert chain.state.get("2.0.0")["next_available_vote_id"] == 24
    with pytest.raises(errors.ChainError, match="already has witness"):
        push(chain, (20, {"witness_account": alice, "url": "", "block_signing_key": ALICE_KEY}))
    bob = _new_member(chain, "bob", lifetime=False)
    with pytest.raises(errors.ChainError, match="not a lifetime member"):
        push(chain, (29, {"committee_member_account": bob, "url": ""}))
    push(chain, (21, {"witness": wid, "witness_account": alice, "new_url": "https://b"}))
    push(chain, (30, {"committee_member": cid, "committee_member_account": alice,
                      "new_url": "v"}))
    with pytest.raises(errors.ChainError, match="belongs to"):
        push(chain, (21, {"witness": "1.6.1", "witness_account": alice, "new_url": "x"}))
    # verify_account_votes
    with pytest.raises(errors.ChainError, match=r"Can not vote for 1:99 which does not exist"):
        push(chain, (6, {"account": alice, "new_options": _options(["1:99"], num_witness=1),
                         "extensions": {}}))
    with pytest.raises(errors.ChainError, match=r"Can not vote for 0:22 which does not exist"):
        push(chain, (6, {"account": alice, "new_options": _options(["0:22"], num_committee=1),
                         "extensions": {}}))
    push(chain, (6, {"account": alice, "new_options": _options(["0:23", "1:22"], num_witness=1,
                                                                num_committee=1),
                     "extensions": {}}))
    # init0 proxies to alice
    push(chain, (6, {"account": "1.2.6", "new_options": _options(proxy=alice),
                     "extensions": {}}))
    produce(chain)
    assert chain.state.get(wid)["url"] == "https://b" and chain.state.get(cid)["url"] == "v"
    assert chain.state.get(alice)["num_committee_voted"] == 1
    assert chain.state.get(chain.state.get(alice)["statistics"])["is_voting"] is True
    # voting stake: core in open orders (core-2262); a second asset to sell core for
    (_, gold), = push(chain, (10, {
        "issuer": "1.2.6", "symbol": "GOLD", "precision": 3, "is_prediction_market": False,
        "common_options": {"max_supply": 10 ** 12, "market_fee_percent": 0,
                           "max_market_fee": 0, "issuer_permissions": 0, "flags": 0,
                           "core_exchange_rate": {"base": {"amount": 1, "asset_id": "1.3.0"},
                                                  "quote": {"amount": 1, "asset_id": "1.3.1"}},
                           "whitelist_authorities": [], "blacklist_authorities": [],
                           "whitelist_markets": [], "blacklist_markets": [],
                           "description": "", "extensions": []},
        "extensions": []}))

    def order(seller, amount):
        push(chain, (1, {"seller": seller, "amount_to_sell": {"amount": amount,
                                                              "asset_id": "1.3.0"},
                         "min_to_receive": {"amount": 1, "asset_id": gold},
                         "expiration": "2100-01-01T00:00:00", "fill_or_kill": False,
                         "extensions": []}))
    order(alice, 10 ** 9)
    order("1.2.6", 3 * 10 ** 9)
    produce(chain)
    assert chain.state.get(wid)["total_votes"] == 0
    to_maintenance(chain)
    tally_time = chain.dgp["time"]
    assert chain.dgp["last_vote_tally_time"] == tally_time
    assert chain.dgp["next_maintenance_time"] == tally_time + 86400
    votes = 4 * 10 ** 9  # alice's and her delegator's orders
    assert chain.state.get(wid)["total_votes"] == votes
    assert chain.state.get(cid)["total_votes"] == votes
    assert chain.state.get("1.6.1")["total_votes"] == 0
    # num_witness 1 abstains on the count: the minimum 11, the most voted
    # elected; active_witnesses is a flat_set<witness_id_type>
    # (global_property_object.hpp): in id order, wid last; the committee is a
    # vector filled in vote order (db_maint.cpp update_active_committee_members)
    active = chain.state.get("2.0.0")["active_witnesses"]
    assert active == [f"1.6.{i}" for i in range(1, 11)] + [wid]
    assert chain.state.get("2.0.0")["active_committee_members"] == [cid] + [
        f"1.5.{i}" for i in range(10)]
    # vote_counter: 4e9 has 32 bits, keep 16: 4e9 >> 16 = 61035, threshold 30518
    expected = {"weight_threshold": 30518, "account_auths": [[alice, 61035]],
                "key_auths": [], "address_auths": []}
    assert chain.state.get("1.2.1")["active"] == expected
    assert chain.state.get("1.2.0")["active"] == expected
    assert chain.state.get("1.2.2")["active"] == expected
    stats = chain.state.get(chain.state.get(alice)["statistics"])
    assert stats["vp_witness"] == votes and stats["vote_tally_time"] == tally_time
    # the new witness is scheduled from the next round on
    while wid not in chain.state.get("2.12.0")["current_shuffled_witnesses"]:
        produce(chain)
    assert "1.6.11" not in chain.state.get("2.12.0")["current_shuffled_witnesses"]


def test_budget_and_witness_pay(funded):
    chain = funded
    push(chain, (0, {"from": "1.2.6", "to": "1.2.7",
                     "amount": {"amount": 1, "asset_id": "1.3.0"}, "extensions": []}))
    produce(chain)
    # the first budget, block 1's (db_maint.cpp initialize_budget_record:
    # last_budget_time the epoch): nothing released
    first = chain.state.get("2.13.0")["record"]
    assert first["time_since_last_budget"] == 0 and first["total_budget"] == 0
    to_maintenance(chain)
    # the second: the fee's network share (400,000) is the whole reserve;
    # ceil(400,000 * 52,894 s (block 1 at 09:18:26 to midnight) * 17 / 2^32)
    # = ceil(83.7) = 84 is released as witness budget, the rest returns
    rec = chain.state.get("2.13.1")["record"]
    assert rec["time_since_last_budget"] == 52894 and rec["total_budget"] == 84
    assert rec["supply_delta"] == 84 - 400000
    assert chain.dgp["witness_budget"] == 84
    assert chain.dgp["last_budget_time"] == chain.dgp["time"]
    supply = chain.state.get("2.3.0")["current_supply"]
    to_maintenance(chain)  # its block pays its witness the 84 first
    rec = chain.state.get("2.13.2")["record"]
    assert rec["from_unused_witness_budget"] == 0
    reserve = 10 ** 15 - supply
    assert rec["time_since_last_budget"] == 86400 and rec["from_initial_reserve"] == reserve
    total = -(-reserve * 86400 * 17 // 2 ** 32)
    assert rec["total_budget"] == total
    requested = 1000000 * 86400  # witness_pay_per_block * blocks to the next maintenance
    assert rec["requested_witness_budget"] == requested
    assert rec["witness_budget"] == min(requested, total) == chain.dgp["witness_budget"]
    assert chain.state.get("2.3.0")["current_supply"] == supply + rec["witness_budget"]
    budget = chain.dgp["witness_budget"]
    produce(chain)
    wit = chain.state.get(chain.dgp["current_witness"])
    vb = chain.state.get(wit["pay_vb"])
    assert vb["balance"] == {"amount": min(1000000, budget), "asset_id": "1.3.0"}
    assert vb["balance_type"] == "witness" and vb["policy"][1]["vesting_seconds"] == 86400
    assert chain.dgp["witness_budget"] == budget - min(1000000, budget)


def test_vesting_create_and_withdraw(funded):
    chain = funded
    produce(chain)  # one slot a block from here (block 1's maintenance skipped 3)
    now = chain.head_block_time
    (_, lin), = push(chain, (32, {"creator": "1.2.6", "owner": "1.2.7",
                                  "amount": {"amount": 1000, "asset_id": "1.3.0"},
                                  "policy": [0, {"begin_timestamp": format_time(now),
                                                 "vesting_cliff_seconds": 2,
                                                 "vesting_duration_seconds": 10}]}))
    (_, cdd), = push(chain, (32, {"creator": "1.2.6", "owner": "1.2.6",
                                  "amount": {"amount": 1000, "asset_id": "1.3.0"},
                                  "policy": [1, {"start_claim": format_time(now),
                                                 "vesting_seconds": 10}]}))
    produce(chain)  # now + 1
    assert chain.state.get(lin)["policy"][1]["begin_balance"] == 1000
    push(chain, (0, {"from": "1.2.6", "to": "1.2.7",
                     "amount": {"amount": 10 ** 8, "asset_id": "1.3.0"}, "extensions": []}))
    # vesting_balance_evaluator.cpp: FC_ASSERT( vbo.is_withdraw_allowed( now,
    # op.amount ), "", ...) - the expression, no message
    with pytest.raises(errors.ChainError, match=r"^Assert Exception: vbo\.is_withdraw_allowed\( "
                                                r"now, op\.amount \): $"):
        push(chain, (33, {"vesting_balance": lin, "owner": "1.2.7",
                          "amount": {"amount": 1, "asset_id": "1.3.0"}}))
    for _ in range(3):
        produce(chain)  # head at now + 4: linear 1000 * 4 / 10 = 400
    before = chain.state.balance("1.2.7", "1.3.0")
    push(chain, (33, {"vesting_balance": lin, "owner": "1.2.7",
                      "amount": {"amount": 400, "asset_id": "1.3.0"}}))
    # all 400 vested were withdrawn: not even 1 more (the reference's values:
    # the operation and the vesting balance object)
    with pytest.raises(errors.ChainError, match="is_withdraw_allowed") as caught:
        push(chain, (33, {"vesting_balance": lin, "owner": "1.2.7",
                          "amount": {"amount": 1, "asset_id": "1.3.0"}}))
    assert caught.value.details["op"]["amount"] == {"amount": 1, "asset_id": "1.3.0"}
    assert caught.value.details["vbo"]["id"] == lin
    # cdd: 1000 coins * 4 s since creation (at the head time then) / 10 s = 400
    with pytest.raises(errors.ChainError, match="is_withdraw_allowed"):
        push(chain, (33, {"vesting_balance": cdd, "owner": "1.2.6",
                          "amount": {"amount": 401, "asset_id": "1.3.0"}}))
    push(chain, (33, {"vesting_balance": cdd, "owner": "1.2.6",
                      "amount": {"amount": 400, "asset_id": "1.3.0"}}))
    with pytest.raises(errors.ChainError, match="belongs to"):
        push(chain, (33, {"vesting_balance": cdd, "owner": "1.2.7",
                          "amount": {"amount": 1, "asset_id": "1.3.0"}}))
    produce(chain)
    fee = chain.required_fee([33, {"fee": {"amount": 0, "asset_id": "1.3.0"},
                                   "vesting_balance": lin, "owner": "1.2.7",
                                   "amount": {"amount": 400, "asset_id": "1.3.0"}}])["amount"]
    assert chain.state.balance("1.2.7", "1.3.0") == before + 400 - fee
    assert chain.state.get(lin)["balance"]["amount"] == 600
    assert chain.state.get(cdd)["balance"]["amount"] == 600
    assert chain.state.get(cdd)["policy"][1]["coin_seconds_earned"] == "0"
