"""Governance over RPC with real clients on a devnet with a 60 s
maintenance interval: python-bitshares ``create_worker``,
``create_committee_member``, ``approvewitness`` and
``vesting_balance_withdraw``; uptick ``workers``, ``approveworker``,
``approvewitness`` and ``witnesses``; the objects, votes and amounts checked
on the chain (proposals: tests/clients/test_clients_proposals.py)."""

import datetime

import pytest
import pytest_twisted
from twisted.internet import threads

from kit.clients import bitshares_client, live_node, run_uptick

INIT0 = "1.2.6"


@pytest.fixture
def live(genesis, new_chain):
    from kit.chain import claim_wire, genesis_with, produce
    from kit.signing import sign_wire

    chain = new_chain(genesis_with(genesis, maintenance_interval=60))
    chain.push_transaction(sign_wire(chain, [claim_wire()]))
    produce(chain)
    node = live_node(chain)
    yield node
    pytest_twisted.blockon(node.stop())


def _create_worker(url):
    from bitshares.amount import Amount

    bts = bitshares_client(url)
    bts.blocking = "head"
    end = datetime.datetime.utcnow() + datetime.timedelta(days=30)
    result = bts.create_worker("devnet-tools", Amount(250, "TEST", blockchain_instance=bts), end,
                               url="https://example.org", payment_type="vesting",
                               pay_vesting_period_days=3, account="init0")
    return result["operation_results"][0][1]


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_python_bitshares_create_worker_and_uptick_approveworker(live, tmp_path):
    state = live.chain.state
    wid = yield threads.deferToThread(_create_worker, live.ws_url)
    worker = state.objects[wid]
    assert worker["worker_account"] == INIT0 and worker["name"] == "devnet-tools"
    assert int(worker["daily_pay"]) == 25000000  # 250 TEST, precision 5
    assert worker["worker"][0] == 1
    vb = state.objects[worker["worker"][1]["balance"]]
    assert vb["policy"][1]["vesting_seconds"] == 3 * 86400 and vb["balance_type"] == "worker"
    chain_id = live.chain.chain_id
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "workers", chain_id=chain_id)
    assert code == 0, out + err
    assert wid in out and "devnet-tools" in out, out
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "--blocking", "approveworker",
                                      wid, "--account", "init0", chain_id=chain_id)
    assert code == 0, out + err
    yield live.blocks_later(1)
    assert worker["vote_for"] in state.objects[INIT0]["options"]["votes"]


def _new_committee_member(url):
    """python-bitshares: init0 registers ``devnet-member`` (the development
    key for every role), funds it, upgrades it to lifetime member; it then
    creates its committee member."""
    from kit.keys import DEV_PUB

    bts = bitshares_client(url)
    bts.blocking = "head"
    bts.create_account("devnet-member", registrar="init0", referrer="init0",
                       owner_key=DEV_PUB, active_key=DEV_PUB, memo_key=DEV_PUB)
    bts.transfer("devnet-member", 100000, "TEST", account="init0")
    bts.upgrade_account(account="devnet-member")
    result = bts.create_committee_member(url="https://committee.example",
                                         account="devnet-member")
    return result["operation_results"][0][1]


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_python_bitshares_create_committee_member(live):
    state = live.chain.state
    next_vote = int(state.objects["2.0.0"]["next_available_vote_id"])
    cid = yield threads.deferToThread(_new_committee_member, live.ws_url)
    member = state.objects[cid]
    account = state.account_by_name_or_id("devnet-member")
    assert member["committee_member_account"] == account["id"]
    assert member["url"] == "https://committee.example"
    assert member["vote_id"] == f"0:{next_vote}" and member["total_votes"] == 0


def _approve_witness(url):
    bts = bitshares_client(url)
    bts.blocking = "head"
    bts.approvewitness(["init3"], account="init0")


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_approvewitness_with_python_bitshares_and_uptick(live, tmp_path):
    state = live.chain.state
    wit3 = state.witness_of(state.account_by_name_or_id("init3")["id"])
    wit4 = state.witness_of(state.account_by_name_or_id("init4")["id"])
    yield threads.deferToThread(_approve_witness, live.ws_url)
    assert state.objects[INIT0]["options"]["votes"] == [wit3["vote_id"]]
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "--blocking", "approvewitness",
                                      "init4", "--account", "init0",
                                      chain_id=live.chain.chain_id)
    assert code == 0, out + err
    yield live.blocks_later(1)
    votes = state.objects[INIT0]["options"]["votes"]
    assert sorted(votes) == sorted([wit3["vote_id"], wit4["vote_id"]])
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "witnesses",
                                      chain_id=live.chain.chain_id)
    assert code == 0, out + err
    assert "init3" in out and "init4" in out, out


def _withdraw_vesting(url, vbid):
    bts = bitshares_client(url)
    bts.blocking = "head"
    from bitshares.amount import Amount

    # python-bitshares packs int(amount) satoshis of amount["asset"]
    amount = Amount(0.4, "TEST", blockchain_instance=bts)
    bts.vesting_balance_withdraw(vbid, amount=amount, account="init0")


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_python_bitshares_vesting_balance_withdraw(live):
    """A vesting balance whose linear policy has vested everything (no
    cliff, 0 s duration) gives back what is withdrawn: 0.4 of 1 TEST."""
    from kit.chain import push_wire

    state = live.chain.state
    [[_t, vbid]] = push_wire(live.chain, [32, {
        "creator": INIT0, "owner": INIT0, "amount": {"amount": 100000, "asset_id": "1.3.0"},
        "policy": [0, {"begin_timestamp": "2016-01-01T00:00:00", "vesting_cliff_seconds": 0,
                       "vesting_duration_seconds": 0}]}])
    yield live.blocks_later(1)
    before = state.balance(INIT0, "1.3.0")
    yield threads.deferToThread(_withdraw_vesting, live.ws_url, vbid)
    fee = live.chain.required_fee([33, {"fee": {"amount": 0, "asset_id": "1.3.0"},
                                        "vesting_balance": vbid, "owner": INIT0,
                                        "amount": {"amount": 40000,
                                                   "asset_id": "1.3.0"}}])["amount"]
    assert state.balance(INIT0, "1.3.0") - before == 40000 - fee
    assert state.objects[vbid]["balance"]["amount"] == 60000


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_uptick_claim_takes_what_has_vested(live, tmp_path):
    """uptick ``claim`` withdraws everything claimable of a vesting balance
    whose linear policy has vested it all."""
    from kit.chain import push_wire

    state = live.chain.state
    [[_t, vbid]] = push_wire(live.chain, [32, {
        "creator": INIT0, "owner": INIT0, "amount": {"amount": 70000, "asset_id": "1.3.0"},
        "policy": [0, {"begin_timestamp": "2016-01-01T00:00:00", "vesting_cliff_seconds": 0,
                       "vesting_duration_seconds": 0}]}])
    yield live.blocks_later(1)
    before = state.balance(INIT0, "1.3.0")
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "--blocking", "claim", vbid,
                                      chain_id=live.chain.chain_id)
    assert code == 0, out + err
    yield live.blocks_later(1)
    fee = live.chain.required_fee([33, {"fee": {"amount": 0, "asset_id": "1.3.0"},
                                        "vesting_balance": vbid, "owner": INIT0,
                                        "amount": {"amount": 70000,
                                                   "asset_id": "1.3.0"}}])["amount"]
    assert state.objects[vbid]["balance"]["amount"] == 0
    assert state.balance(INIT0, "1.3.0") - before == 70000 - fee
