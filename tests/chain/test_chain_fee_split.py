"""Where account fees go, checked in amounts computed by hand from
bitshares-core 7.x:

- account_evaluator.cpp ``account_create_evaluator::do_apply``: a new
  account's ``network_fee_percentage`` / ``lifetime_referrer_fee_percentage``
  are the chain parameters' ``network_percent_of_fee`` /
  ``lifetime_referrer_percent_of_fee``; the registration fee scaling by
  ``accounts_per_fee_scale`` / ``account_fee_scale_bitshifts``, undone by
  db_maint.cpp ``perform_chain_maintenance``;
- account_object.cpp ``account_statistics_object::process_fees``: the split
  of the pending fees at maintenance (network, lifetime referrer, referrer,
  registrar), ``cut_fee`` rounding down;
- account_evaluator.cpp ``account_upgrade_evaluator::do_apply``: the
  pending fees (the upgrade fee among them) are paid out before the account
  becomes its own referrer;
- db_genesis.cpp ``init_genesis``: the blockchain accounts' fixed shares,
  the initial accounts' account_create by the temp account.

The bundled genesis: network 20 %, lifetime referrer 30 %,
``cashback_vesting_threshold`` 10,000,000 satoshis, lifetime membership
1,000,000,000."""

import pytest
from bitsharesbase import operations

from nodeapi.chain import errors
from nodeapi.protocol.fee_parameters import schedule_entry

from kit.authority import K1, auth
from kit.chain import (
    FEE0, INIT, account_options, claim_wire, genesis_with, produce, push_wire, transfer_op,
    with_fee)
from kit.keys import DEV_PUB, DEV_WIF
from kit.signing import sign_canonical as sign, sign_wire

INIT0, INIT1 = INIT[0], INIT[1]


def maintain(chain):
    """One block at ``next_maintenance_time`` (runs the maintenance);
    returns the budget record it made.  The pending transactions go into
    a block first (they would expire before the maintenance block)."""
    produce(chain)
    when = chain.dgp["next_maintenance_time"]
    slot = chain.get_slot_at_time(when)
    chain.generate_block(when, chain.get_scheduled_witness(slot), DEV_WIF)
    last = max(chain.state.ids_of_type("2.13."), key=lambda i: int(i.split(".")[2]))
    return chain.state.get(last)["record"]


def cashback(chain, account_id):
    """Satoshis in the account's cashback vesting balance (0 without one)."""
    vb = chain.state.get(account_id).get("cashback_vb")
    return 0 if vb is None else chain.state.get(vb)["balance"]["amount"]


def register(chain, name, referrer_percent=5000, funds=0):
    """init0 registers ``name`` (key K1) with init1 as referrer, then sends
    it ``funds``; returns its id."""
    op, _ = with_fee(chain, operations.Account_create, registrar=INIT0, referrer=INIT1,
                     referrer_percent=referrer_percent, name=name,
                     owner=auth(1, [(K1[1], 1)]), active=auth(1, [(K1[1], 1)]),
                     options=account_options(DEV_PUB), extensions={})
    aid = chain.push_transaction(sign(chain, [op]))["operation_results"][0][1]
    if funds:
        chain.push_transaction(sign(chain, [transfer_op(funds, to=aid)]))
    return aid


def test_new_account_takes_the_parameters_shares(funded):
    chain = funded
    params = chain.state.get("2.0.0")["parameters"]
    assert (params["network_percent_of_fee"], params["lifetime_referrer_percent_of_fee"]) \
        == (2000, 3000)
    aid = register(chain, "payer-1")
    acc = chain.state.get(aid)
    assert (acc["network_fee_percentage"], acc["lifetime_referrer_fee_percentage"],
            acc["referrer_rewards_percentage"]) == (2000, 3000, 5000)
    assert (acc["registrar"], acc["referrer"], acc["lifetime_referrer"]) == (INIT0, INIT1, INIT1)
    # other parameters, other shares (the parameters as they are when the
    # account is made)
    params["network_percent_of_fee"], params["lifetime_referrer_percent_of_fee"] = 1500, 2500
    acc = chain.state.get(register(chain, "payer-2"))
    assert (acc["network_fee_percentage"], acc["lifetime_referrer_fee_percentage"]) \
        == (1500, 2500)


def test_basic_account_fee_split_at_maintenance(funded):
    chain = funded
    payer = register(chain, "payer-1", funds=10 ** 8)
    maintain(chain)  # init0's own fees of the setup are paid out here
    init0_before, init1_before = cashback(chain, INIT0), cashback(chain, INIT1)
    # a fee of 2,000,000 (<= the threshold: pending_vested_fees)
    chain.push_transaction(sign(chain, [transfer_op(1, fee=2000000, frm=payer, to=INIT0)],
                                wifs=(K1[0],)))
    stats = chain.state.get(chain.state.get(payer)["statistics"])
    assert (stats["pending_fees"], stats["pending_vested_fees"]) == (0, 2000000)
    record = maintain(chain)
    # network 20 % = 400,000 (to accumulated_fees, then the budget);
    # lifetime referrer init1 30 % = 600,000; the rest 1,000,000: referrer
    # init1 50 % = 500,000, registrar init0 500,000
    assert record["from_accumulated_fees"] == 400000
    assert cashback(chain, INIT1) - init1_before == 600000 + 500000
    assert cashback(chain, INIT0) - init0_before == 500000
    assert chain.state.get(payer).get("cashback_vb") is None
    stats = chain.state.get(chain.state.get(payer)["statistics"])
    assert (stats["pending_fees"], stats["pending_vested_fees"]) == (0, 0)
    assert stats["lifetime_fees_paid"] == 2000000


def test_split_rounds_down_and_the_registrar_gets_the_rest(funded):
    chain = funded
    payer = register(chain, "payer-1", referrer_percent=3333, funds=10 ** 8)
    maintain(chain)
    init0_before, init1_before = cashback(chain, INIT0), cashback(chain, INIT1)
    chain.push_transaction(sign(chain, [transfer_op(1, fee=2000003, frm=payer, to=INIT0)],
                                wifs=(K1[0],)))
    record = maintain(chain)
    # cut_fee(2,000,003, 2000) = 400,000; cut_fee(2,000,003, 3000) = 600,000;
    # referral 1,000,003; cut_fee(1,000,003, 3333) = 333,300; registrar
    # 1,000,003 - 333,300 = 666,703
    assert record["from_accumulated_fees"] == 400000
    assert cashback(chain, INIT1) - init1_before == 600000 + 333300
    assert cashback(chain, INIT0) - init0_before == 666703


def test_fees_are_paid_out_in_name_order(funded):
    """db_maint.cpp ``perform_account_maintenance`` walks the statistics by
    name (``by_maintenance_seq``): "aa-payer-2" (the higher id) is paid out
    first, so its lifetime referrer init3 gets its cashback vesting
    balance before "zz-payer-1"'s referrer init2."""
    chain = funded
    ids = {}
    for name, referrer in (("zz-payer-1", INIT[2]), ("aa-payer-2", INIT[3])):
        op, _ = with_fee(chain, operations.Account_create, registrar=INIT0, referrer=referrer,
                         referrer_percent=0, name=name, owner=auth(1, [(K1[1], 1)]),
                         active=auth(1, [(K1[1], 1)]), options=account_options(DEV_PUB),
                         extensions={})
        ids[name] = chain.push_transaction(sign(chain, [op]))["operation_results"][0][1]
        chain.push_transaction(sign(chain, [transfer_op(10 ** 8, to=ids[name])]))
    assert ids["zz-payer-1"] < ids["aa-payer-2"]
    maintain(chain)
    assert cashback(chain, INIT[2]) == cashback(chain, INIT[3]) == 0
    for name in ("zz-payer-1", "aa-payer-2"):
        chain.push_transaction(sign(chain, [transfer_op(1, fee=2000000, frm=ids[name],
                                                        to=INIT0)], wifs=(K1[0],)))
    maintain(chain)
    first, second = (int(chain.state.get(a)["cashback_vb"].split(".")[2])
                     for a in (INIT[3], INIT[2]))
    assert first + 1 == second
    # each: 30 % lifetime referrer + the whole referral (referrer_percent 0
    # gives it to the registrar init0): 600,000
    assert cashback(chain, INIT[2]) == cashback(chain, INIT[3]) == 600000


def test_upgrade_pays_out_pending_fees_first(funded):
    chain = funded
    member = register(chain, "upgrader-1", funds=2 * 10 ** 9)
    maintain(chain)
    init0_before, init1_before = cashback(chain, INIT0), cashback(chain, INIT1)
    fees_before = chain.state.get("2.3.0")["accumulated_fees"]
    op, fee = with_fee(chain, operations.Account_upgrade, account_to_upgrade=member,
                       upgrade_to_lifetime_member=True, extensions=[])
    assert fee == 1000000000
    chain.push_transaction(sign(chain, [op], wifs=(K1[0],)))
    # at once, with the shares of the basic account: network 20 % =
    # 200,000,000; lifetime referrer init1 30 % = 300,000,000; referral
    # 500,000,000: init1 250,000,000, registrar init0 250,000,000
    assert chain.state.get("2.3.0")["accumulated_fees"] - fees_before == 200000000
    assert cashback(chain, INIT1) - init1_before == 300000000 + 250000000
    assert cashback(chain, INIT0) - init0_before == 250000000
    stats = chain.state.get(chain.state.get(member)["statistics"])
    assert (stats["pending_fees"], stats["pending_vested_fees"]) == (0, 0)
    assert stats["lifetime_fees_paid"] == 1000000000
    acc = chain.state.get(member)
    assert acc["lifetime_referrer_fee_percentage"] == 8000
    assert acc["referrer"] == acc["registrar"] == acc["lifetime_referrer"] == member
    # the upgrader got nothing back of its own upgrade fee
    maintain(chain)
    assert cashback(chain, member) == 0
    assert cashback(chain, INIT1) - init1_before == 550000000


def test_genesis_accounts(chain):
    """db_genesis.cpp: committee, witness, relaxed committee and temp
    accounts 20 % / 80 %, null-account and proxy-to-self 0 % / 100 %; the
    initial accounts made by account_create (registrar the temp account,
    referrer the committee account, the parameters' shares), lifetime
    members upgraded; all of them registrations of the first interval."""
    shares = {aid: (chain.state.get(aid)["network_fee_percentage"],
                    chain.state.get(aid)["lifetime_referrer_fee_percentage"])
              for aid in ("1.2.0", "1.2.1", "1.2.2", "1.2.3", "1.2.4", "1.2.5")}
    assert shares == {"1.2.0": (2000, 8000), "1.2.1": (2000, 8000), "1.2.2": (2000, 8000),
                      "1.2.3": (0, 10000), "1.2.4": (2000, 8000), "1.2.5": (0, 10000)}
    faucet = chain.state.get(chain.state.account_by_name["faucet"])
    assert (faucet["registrar"], faucet["referrer"], faucet["lifetime_referrer"]) \
        == ("1.2.4", "1.2.0", "1.2.0")
    assert (faucet["network_fee_percentage"], faucet["lifetime_referrer_fee_percentage"]) \
        == (2000, 3000)
    init0 = chain.state.get(INIT0)
    assert (init0["registrar"], init0["network_fee_percentage"],
            init0["lifetime_referrer_fee_percentage"]) == (INIT0, 2000, 8000)
    assert chain.dgp["accounts_registered_this_interval"] == 12


def _basic_fee(chain):
    schedule = chain.state.get("2.0.0")["parameters"]["current_fees"]
    return schedule_entry(schedule, 5)["basic_fee"]


def _create(name):
    return [5, {"registrar": INIT0, "referrer": INIT0, "referrer_percent": 0, "name": name,
                "owner": auth(1, [(K1[1], 1)]), "active": auth(1, [(K1[1], 1)]),
                "options": account_options(DEV_PUB), "extensions": {}}]


def test_registration_fee_scaling(genesis, new_chain):
    """Every 3rd registration of an interval shifts basic_fee left by 2
    bits; maintenance shifts it right by 2 * (registrations // 3)."""
    chain = new_chain(genesis_with(genesis, accounts_per_fee_scale=3,
                                   account_fee_scale_bitshifts=2))
    push_wire(chain, claim_wire())
    assert chain.dgp["accounts_registered_this_interval"] == 12
    maintain(chain)
    # graphene's genesis registers its 12 initial accounts while the fees
    # are zero (nothing to scale), yet the first maintenance removes their
    # scaling: 500,000 >> (2 * (12 // 3)) = 1,953
    assert chain.dgp["accounts_registered_this_interval"] == 0
    assert _basic_fee(chain) == 500000 >> 8 == 1953
    seen = []
    for n in range(1, 8):
        (result,) = push_wire(chain, _create(f"scaled-{n}"))
        assert result[0] == 1
        seen.append(_basic_fee(chain))
    # after registrations 1..7: scaled at the 3rd (x4) and the 6th (x16)
    assert seen == [1953, 1953, 7812, 7812, 7812, 31248, 31248]
    assert chain.dgp["accounts_registered_this_interval"] == 7
    # the next one costs the scaled fee plus its size part (a body under
    # 1 kB: less than one price_per_kbyte of 100,000)
    fee = chain.required_fee([5, dict(_create("scaled-8")[1], fee=FEE0)])["amount"]
    assert 31248 < fee < 31248 + 100000
    # the fee before the scaling is refused, nothing registered
    stale = [5, dict(_create("scaled-8")[1], fee={"amount": fee - 31248 + 1953,
                                                  "asset_id": "1.3.0"})]
    with pytest.raises(errors.InsufficientFee):
        chain.push_transaction(sign_wire(chain, [stale]))
    assert "scaled-8" not in chain.state.account_by_name
    maintain(chain)
    # 31,248 >> (2 * (7 // 3)) = 1,953
    assert _basic_fee(chain) == 1953
    assert chain.dgp["accounts_registered_this_interval"] == 0
