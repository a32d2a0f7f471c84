"""Proposals over RPC with real clients: python-bitshares' ``proposer``
mode and ``approveproposal``, uptick ``--proposer``, ``proposals`` and
``approveproposal``; the proposed transfer moves exactly its amount once
approved."""

import pytest
import pytest_twisted
from twisted.internet import threads

from kit.chain import produce
from kit.clients import bitshares_client, live_node, run_uptick

INIT1, INIT2 = "1.2.7", "1.2.8"


@pytest.fixture
def live(genesis, new_chain):
    """A devnet with a 60 s maintenance interval; init1 holds 10,000 TEST."""
    from kit.chain import claim_wire, genesis_with, push_wire

    chain = new_chain(genesis_with(genesis, maintenance_interval=60))
    push_wire(chain, claim_wire())
    push_wire(chain, [0, {"from": "1.2.6", "to": INIT1,
                          "amount": {"amount": 10 ** 9, "asset_id": "1.3.0"},
                          "extensions": []}])
    produce(chain)
    node = live_node(chain)
    yield node
    pytest_twisted.blockon(node.stop())


def _propose_and_approve(url):
    """init0 proposes a 1.5 TEST transfer init1 -> init2 (python-bitshares
    proposer mode), then init1 approves it; returns the proposal id and the
    proposals python-bitshares saw in between."""
    from bitshares.instance import BlockchainInstance, set_shared_blockchain_instance
    from bitshares.proposal import Proposals

    bts = bitshares_client(url, proposer="init0", proposal_expiration=3600)
    bts.blocking = "head"
    # Proposals builds its Proposal objects on the shared instance
    set_shared_blockchain_instance(bts)
    try:
        created = bts.transfer("init2", 1.5, "TEST", account="init1")
        pid = created["operation_results"][0][1]
        seen = [p["id"] for p in Proposals("init1", blockchain_instance=bts)]
        approver = bitshares_client(url)
        approver.blocking = "head"
        approver.approveproposal([pid], account="init1")
    finally:
        BlockchainInstance.set_shared_blockchain_instance(None)
    return pid, seen


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_python_bitshares_proposer_and_approveproposal(live):
    state = live.chain.state
    before = state.balance(INIT1, "1.3.0"), state.balance(INIT2, "1.3.0")
    pid, seen = yield threads.deferToThread(_propose_and_approve, live.ws_url)
    assert pid.startswith("1.10.") and seen == [pid]
    yield live.blocks_later(1)
    assert state.find(pid) is None
    fee = live.chain.required_fee([0, {"fee": {"amount": 0, "asset_id": "1.3.0"},
                                       "from": INIT1, "to": INIT2,
                                       "amount": {"amount": 150000, "asset_id": "1.3.0"},
                                       "extensions": []}])["amount"]
    approval_fee = live.chain.required_fee([23, {
        "fee": {"amount": 0, "asset_id": "1.3.0"}, "fee_paying_account": INIT1,
        "proposal": pid, "active_approvals_to_add": [INIT1], "active_approvals_to_remove": [],
        "owner_approvals_to_add": [], "owner_approvals_to_remove": [],
        "key_approvals_to_add": [], "key_approvals_to_remove": [], "extensions": []}])["amount"]
    # 1.5 TEST = 150000 satoshis (precision 5), the transfer fee (executed
    # from init1) and the fee of init1's approval (fee 2000000 plus 10 per
    # KiB of a 60-byte operation, rounded down: 2000000)
    assert approval_fee == 2000000
    assert before[0] - state.balance(INIT1, "1.3.0") == 150000 + fee + approval_fee
    assert state.balance(INIT2, "1.3.0") - before[1] == 150000


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_uptick_proposer_proposals_and_approveproposal(live, tmp_path):
    state = live.chain.state
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "--blocking", "--proposer",
                                      "init0", "--proposal_expiration", "3600", "transfer",
                                      "init2", "2", "TEST", "--account", "init1",
                                      chain_id=live.chain.chain_id)
    assert code == 0, out + err
    [pid] = state.ids_of_type("1.10.")
    assert state.objects[pid]["required_active_approvals"] == [INIT1]
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "proposals", "init1",
                                      chain_id=live.chain.chain_id)
    assert code == 0, out + err
    assert pid in out and "init0" in out, out
    before = state.balance(INIT2, "1.3.0")
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "--blocking", "approveproposal",
                                      pid, "--account", "init1",
                                      chain_id=live.chain.chain_id)
    assert code == 0, out + err
    yield live.blocks_later(1)
    assert state.find(pid) is None
    assert state.balance(INIT2, "1.3.0") - before == 200000
