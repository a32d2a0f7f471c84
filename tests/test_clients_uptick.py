"""The uptick command line (PyPI ``uptick``, on python-bitshares) against a
live node: the wallet flow every other uptick test builds on."""

import pytest
import pytest_twisted

from kit.clients import live_node, run_uptick


@pytest.fixture
def live(funded):
    node = live_node(funded)
    yield node
    pytest_twisted.blockon(node.stop())


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_uptick_transfer_moves_the_amount(live, tmp_path):
    state = live.chain.state
    init0 = state.account_by_name_or_id("init0")["id"]
    init1 = state.account_by_name_or_id("init1")["id"]
    before = state.balance(init1, "1.3.0"), state.balance(init0, "1.3.0")
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "balance", "init0")
    assert code == 0, out + err
    assert "TEST" in out
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "--blocking", "transfer",
                                      "init1", "2.5", "TEST", "--account", "init0")
    assert code == 0, out + err
    assert state.balance(init1, "1.3.0") - before[0] == 250000  # 2.5 TEST, precision 5
    assert before[1] - state.balance(init0, "1.3.0") > 250000  # the amount and a fee
