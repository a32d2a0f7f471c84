"""Governance over RPC with real clients: python-bitshares
``create_worker`` / ``approveworker`` and ``create_committee_member``;
uptick ``workers`` and ``approveworker``; the objects and votes checked on
the chain."""

import datetime

import pytest
import pytest_twisted
from twisted.internet import threads

from kit.clients import bitshares_client, live_node, run_uptick

INIT0 = "1.2.6"


@pytest.fixture
def live(funded):
    node = live_node(funded)
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
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "workers")
    assert code == 0, out + err
    assert wid in out and "devnet-tools" in out, out
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "--blocking", "approveworker",
                                      wid, "--account", "init0")
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
