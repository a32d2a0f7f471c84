"""Errors a developer reads on a devnet (in process, ``task.Clock``): an
overdraft's text is bitshares-core's (db_balance.cpp ``adjust_balance``:
"Insufficient Balance: ${a}'s balance of ${b} is less than required ${r}"
with the account's name and pretty amounts), its data adds the account
and asset ids; the failing operation of several is named by its index;
the devnet logs every transaction it refuses with the reason."""

import time

import pytest
from twisted.internet import task
from twisted.logger import globalLogPublisher

from nodeapi.chain.errors import InsufficientBalance
from nodeapi.devnet.control import Devnet, DevnetOptions

from kit.chain import open_chain
from kit.keys import DEV_WIF
from kit.signing import sign_wire

CORE = "1.3.0"


@pytest.fixture
def devnet(genesis, tmp_path):
    chain = open_chain(genesis, tmp_path / "blocks.log")
    clock = task.Clock()
    clock.advance(time.time())
    net = Devnet(chain, DevnetOptions(accounts=2, key=DEV_WIF), clock=clock)
    net.startService()
    yield net
    net.stopService()
    chain.block_log.close()


def _transfer_op(frm, to, amount):
    return [0, {"fee": {"amount": 2000000, "asset_id": CORE}, "from": frm, "to": to,
                "amount": {"amount": amount, "asset_id": CORE}, "extensions": []}]


def test_an_overdraft_in_the_second_operation(devnet):
    chain = devnet.chain
    dev0 = chain.state.account_by_name["dev0"]
    have = chain.state.balance(dev0, CORE)  # 100,000,000,000: 1,000,000 TEST
    # op 0 pays 1 TEST + its 20 TEST fee; op 1 wants all 1,000,000 TEST
    trx = sign_wire(chain, [_transfer_op(dev0, "1.2.6", 100_000),
                            _transfer_op(dev0, "1.2.6", have)], wif=devnet.accounts[0].wif)
    seen = []
    globalLogPublisher.addObserver(seen.append)
    try:
        with pytest.raises(InsufficientBalance) as info:
            chain.push_transaction(trx)
    finally:
        globalLogPublisher.removeObserver(seen.append)
    error = info.value
    # transfer_evaluator's check (graphene transfer_evaluator::do_evaluate):
    # 1,000,000 - 1 - 20 (op 0's amount and fee) = 999,979 TEST left
    assert str(error) == ("Assert Exception: insufficient_balance: Insufficient Balance: "
                          "999979 TEST, unable to transfer '1000000 TEST' from account "
                          "'dev0' to 'init0' Unable to transfer 1000000 TEST from dev0 "
                          "to init0")
    assert error.details == {"account": dev0, "account_name": "dev0", "asset": CORE,
                             "symbol": "TEST", "balance": "999979 TEST",
                             "required": "1000000 TEST", "to": "1.2.6", "op_index": 1,
                             # the values of the reference's format (its stack's data)
                             "a": "dev0", "t": "init0", "total_transfer": "1000000 TEST"}
    assert error.log_format == ("insufficient_balance: Insufficient Balance: ${balance}, "
                                "unable to transfer '${total_transfer}' from account '${a}' "
                                "to '${t}'")
    [event] = [e for e in seen if e.get("log_event") == "devnet_rejected"]
    assert event["operations"] == ["transfer", "transfer"]
    assert event["details"]["op_index"] == 1
    assert "Insufficient Balance" in event["error"]
    assert chain.pending_transactions == []


def test_one_operation_carries_no_index(devnet):
    chain = devnet.chain
    dev0 = chain.state.account_by_name["dev0"]
    trx = sign_wire(chain, [_transfer_op(dev0, "1.2.6", 10 ** 14)], wif=devnet.accounts[0].wif)
    with pytest.raises(InsufficientBalance) as info:
        chain.push_transaction(trx)
    assert "op_index" not in info.value.details
    assert info.value.details["required"] == "1000000000 TEST"
    assert info.value.details["account"] == dev0
