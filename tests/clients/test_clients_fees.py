"""A fee split seen by python-bitshares on a devnet with a 60 s maintenance
interval: an account registered by init0 with init1 as referrer (50 %)
pays a transfer fee through python-bitshares; after the next maintenance
its registrar, referrer and the network have their shares, read back over
RPC (``get_vesting_balances``, the budget record 2.13.N).

Reference, amounts by hand: account_evaluator.cpp
``account_create_evaluator::do_apply`` (the new account's network 20 % and
lifetime referrer 30 % from the chain parameters) and account_object.cpp
``account_statistics_object::process_fees`` at maintenance (db_maint.cpp
``perform_chain_maintenance``): of a 2,000,000 fee, 400,000 to the network,
600,000 to the lifetime referrer init1, of the remaining 1,000,000 half to
the referrer init1 and half to the registrar init0."""

import pytest
import pytest_twisted
from twisted.internet import threads

from kit.chain import FEE0, INIT, account_options, claim_wire, genesis_with, produce, push_wire
from kit.clients import bitshares_client, live_node
from kit.keys import DEV_PUB, DEV_WIF
from kit.wait import wait_for

INIT0, INIT1 = INIT[0], INIT[1]


@pytest.fixture
def live(genesis, new_chain):
    """The devnet after one maintenance: init0 registered ``fee-payer-1``
    (referrer init1, 50 %) and sent it 100 TEST; those fees are paid out
    already, so the next maintenance pays out only the payer's."""

    chain = new_chain(genesis_with(genesis, maintenance_interval=60))
    push_wire(chain, claim_wire())
    owner = {"weight_threshold": 1, "account_auths": [], "key_auths": [[DEV_PUB, 1]],
             "address_auths": []}
    [[_t, payer]] = push_wire(chain, [5, {
        "fee": FEE0, "registrar": INIT0, "referrer": INIT1, "referrer_percent": 5000,
        "name": "fee-payer-1", "owner": owner, "active": owner,
        "options": account_options(DEV_PUB), "extensions": {}}])
    push_wire(chain, [0, {"from": INIT0, "to": payer,
                          "amount": {"amount": 10 ** 7, "asset_id": "1.3.0"},
                          "extensions": []}])
    produce(chain)
    when = chain.dgp["next_maintenance_time"]
    slot = chain.get_slot_at_time(when)
    chain.generate_block(when, chain.get_scheduled_witness(slot), DEV_WIF)
    node = live_node(chain)
    yield node
    pytest_twisted.blockon(node.stop())


def _cashback(bts, account_id):
    return sum(int(vb["balance"]["amount"]) for vb in bts.rpc.get_vesting_balances(account_id)
               if vb["balance_type"] == "cashback")


def _pay(url):
    """python-bitshares: the shares before, then fee-payer-1 pays 0.01 TEST
    to init0 (no memo: the transfer fee of 20 TEST, 2,000,000 satoshis)."""
    bts = bitshares_client(url)
    bts.blocking = "head"
    before = {a: _cashback(bts, a) for a in (INIT0, INIT1)}
    trx = bts.transfer("init0", 0.01, "TEST", account="fee-payer-1")
    return before, int(trx["operations"][0][1]["fee"]["amount"])


def _after(url, payer):
    bts = bitshares_client(url)
    shares = {a: _cashback(bts, a) for a in (INIT0, INIT1, payer)}
    stats = bts.rpc.get_objects([bts.rpc.get_objects([payer])[0]["statistics"]])[0]
    return shares, stats


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_fee_split_after_maintenance_seen_by_python_bitshares(live):
    chain = live.chain
    payer = chain.state.account_by_name["fee-payer-1"]
    account = chain.state.objects[payer]
    assert (account["network_fee_percentage"], account["lifetime_referrer_fee_percentage"],
            account["referrer_rewards_percentage"]) == (2000, 3000, 5000)
    before, fee = yield threads.deferToThread(_pay, live.ws_url)
    assert fee == 2000000
    # the next maintenance pays the fee out (and makes the latest budget
    # record, the next one is a minute later)
    stats_id = account["statistics"]
    yield wait_for(lambda: int(chain.state.objects[stats_id]["lifetime_fees_paid"]) == fee,
                   timeout=90.0)
    shares, stats = yield threads.deferToThread(_after, live.ws_url, payer)
    assert shares[INIT1] - before[INIT1] == 600000 + 500000
    assert shares[INIT0] - before[INIT0] == 500000
    assert shares[payer] == 0
    assert int(stats["lifetime_fees_paid"]) == 2000000
    assert int(stats["pending_fees"]) == int(stats["pending_vested_fees"]) == 0
    last = max(chain.state.ids_of_type("2.13."), key=lambda i: int(i.split(".")[2]))
    assert chain.state.objects[last]["record"]["from_accumulated_fees"] == 400000
