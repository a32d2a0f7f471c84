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


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_uptick_htlc_create_from_secret_and_redeem(live, tmp_path):
    """uptick ``htlc create-from-secret`` locks 10 TEST for init1 under
    sha256("opensesame"); ``htlc redeem`` with the secret releases exactly
    that amount to init1 (the redeemer, init0, pays only its fee)."""
    import hashlib

    state = live.chain.state
    init0 = state.account_by_name_or_id("init0")["id"]
    init1 = state.account_by_name_or_id("init1")["id"]
    before1 = state.balance(init1, "1.3.0")
    out, err, code = yield run_uptick(
        tmp_path, live.ws_url, "htlc", "create-from-secret", "init1", "10", "TEST",
        "--type", "sha256", "--secret", "opensesame", "--expiration", "3600",
        "--account", "init0")
    assert code == 0, out + err
    [htlc_id] = state.ids_of_type("1.16.")
    htlc = state.objects[htlc_id]
    assert htlc["transfer"] == {"from": init0, "to": init1, "amount": 1000000,
                                "asset_id": "1.3.0"}
    assert htlc["conditions"]["hash_lock"]["preimage_hash"] == [
        2, hashlib.sha256(b"opensesame").hexdigest()]
    before0 = state.balance(init0, "1.3.0")
    redeem_fee = live.chain.required_fee([50, {
        "fee": {"amount": 0, "asset_id": "1.3.0"}, "htlc_id": htlc_id, "redeemer": init0,
        "preimage": b"opensesame".hex(), "extensions": []}])["amount"]
    out, err, code = yield run_uptick(tmp_path, live.ws_url, "--blocking", "htlc", "redeem",
                                      htlc_id, "--secret", "opensesame", "--account", "init0")
    assert code == 0, out + err
    yield live.blocks_later(1)
    assert state.find(htlc_id) is None
    assert state.balance(init1, "1.3.0") - before1 == 1000000
    assert before0 - state.balance(init0, "1.3.0") == redeem_fee
