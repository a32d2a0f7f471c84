"""SameT funds (64-68): a flash loan borrowed and repaid in one transaction
with the fund fee rounded up, refused when left unpaid (also inside a
proposal), balance and fee rate updates, deletion; amounts by hand from
bitshares-core's samet_fund_evaluator.cpp."""

import pytest
import pytest_twisted

from nodeapi.chain.errors import InvalidOperation

from kit.chain import CORE, claim_wire, open_chain, produce
from kit.chain import push_wire as push

INIT0, INIT1 = "1.2.6", "1.2.7"
FEE0 = {"amount": 0, "asset_id": CORE}


def core(n):
    return {"amount": n, "asset_id": CORE}


@pytest.fixture
def chain(genesis, tmp_path):
    chain = open_chain(genesis, tmp_path / "samet")
    push(chain, claim_wire())
    push(chain, [0, {"from": INIT0, "to": INIT1, "amount": core(10 ** 9), "extensions": []}])
    produce(chain)
    yield chain
    chain.block_log.close()


@pytest.fixture
def fund(chain):
    """init0's fund of 1,000,000 core satoshis at a fee rate of 0.3 %
    (3000 millionths)."""
    [[_t, fid]] = push(chain, [64, {"owner_account": INIT0, "asset_type": CORE,
                                    "balance": 1000000, "fee_rate": 3000, "extensions": []}])
    produce(chain)
    return fid


def borrow(fid, amount):
    return [67, {"borrower": INIT1, "fund_id": fid, "borrow_amount": core(amount),
                 "extensions": []}]


def repay(fid, amount, fee):
    return [68, {"account": INIT1, "fund_id": fid, "repay_amount": core(amount),
                 "fund_fee": core(fee), "extensions": []}]


def test_flash_loan_in_one_transaction(chain, fund):
    state = chain.state
    assert state.objects[fund] == {"id": fund, "owner_account": INIT0, "asset_type": CORE,
                                   "balance": 1000000, "fee_rate": 3000, "unpaid_amount": 0}
    before = state.balance(INIT1, CORE)
    # 333,333 * 3000 / 1,000,000 = 999.999: the fee rounds up to 1000
    with pytest.raises(InvalidOperation, match="Insuffient fund fee, requires 1000, offered 999"):
        push(chain, borrow(fund, 333333), repay(fund, 333333, 999))
    results = push(chain, borrow(fund, 333333), repay(fund, 333333, 1000))
    assert results == [[5, {"impacted_accounts": [INIT0]}], [5, {"impacted_accounts": [INIT0]}]]
    obj = state.objects[fund]
    assert (obj["balance"], obj["unpaid_amount"]) == (1001000, 0)
    fees = sum(chain.required_fee(op)["amount"] for op in (
        [67, dict(borrow(fund, 333333)[1], fee=FEE0)],
        [68, dict(repay(fund, 333333, 1000)[1], fee=FEE0)]))
    assert before - state.balance(INIT1, CORE) == 1000 + fees


def test_the_fund_owner_has_the_loan_in_its_history(chain, fund):
    """account_history_plugin.cpp ``add_account_history``: the accounts of
    an operation's history entries include the ``impacted_accounts`` of an
    ``extendable_operation_result``; samet_fund_evaluator.cpp names the
    fund's owner there for samet_fund_borrow and samet_fund_repay, so
    init0 (owner, not the borrower) gets both entries: total_ops + 2, its
    latest entry the one just before init1's."""
    stats = chain.state.objects[chain.state.objects[INIT0]["statistics"]]
    before = int(stats["total_ops"])
    results = push(chain, borrow(fund, 1000), repay(fund, 1000, 3))
    assert results == [[5, {"impacted_accounts": [INIT0]}]] * 2
    produce(chain)
    stats = chain.state.objects[chain.state.objects[INIT0]["statistics"]]
    assert int(stats["total_ops"]) == before + 2
    # entries by (operation, account ascending): borrow 2.9.n (init0),
    # 2.9.n+1 (init1), repay 2.9.n+2 (init0), 2.9.n+3 (init1)
    borrower = chain.state.objects[chain.state.objects[INIT1]["statistics"]]
    mine = int(stats["most_recent_op"].split(".")[2])
    assert mine == int(borrower["most_recent_op"].split(".")[2]) - 1


def test_unpaid_debt_is_refused_and_changes_nothing(chain, fund):
    state = chain.state
    before = state.balance(INIT1, CORE)
    with pytest.raises(InvalidOperation, match="Unpaid SameT Fund debt detected"):
        push(chain, borrow(fund, 10), repay(fund, 5, 1))
    assert state.objects[fund]["unpaid_amount"] == 0
    assert state.balance(INIT1, CORE) == before
    with pytest.raises(InvalidOperation, match="unable to borrow"):
        push(chain, borrow(fund, 1000001), repay(fund, 1000001, 3001))


def test_update_and_delete(chain, fund):
    state = chain.state
    owner = {"owner_account": INIT0, "fund_id": fund, "extensions": []}
    push(chain, [66, dict(owner, delta_amount=core(-400000), new_fee_rate=100)])
    obj = state.objects[fund]
    assert (obj["balance"], obj["fee_rate"]) == (600000, 100)
    with pytest.raises(InvalidOperation, match="Insufficient balance in the SameT Fund"):
        push(chain, [66, dict(owner, delta_amount=core(-600000))])
    with pytest.raises(InvalidOperation, match="should not be the same"):
        push(chain, [66, dict(owner, new_fee_rate=100)])
    with pytest.raises(InvalidOperation, match="not the owner of the SameT Fund"):
        push(chain, [65, dict(owner, owner_account=INIT1)])
    before = state.balance(INIT0, CORE)
    [result] = push(chain, [65, owner])
    assert result == [2, core(600000)]
    assert state.find(fund) is None
    fee = chain.required_fee([65, dict(owner, fee=FEE0)])["amount"]
    assert state.balance(INIT0, CORE) - before == 600000 - fee


@pytest.mark.parametrize("scheme", ["ws", "http"])
@pytest_twisted.inlineCallbacks
def test_samet_fund_functions_over_rpc(chain, fund, vectors_site, scheme):
    """list_samet_funds / get_samet_funds_by_owner / _by_asset over the real
    RPC site with python-bitshares (in a thread: the reactor serves)."""
    from twisted.internet import threads

    def query():
        from kit.clients import bitshares_client

        bts = bitshares_client(f"{scheme}://127.0.0.1:{vectors_site.port}")
        return (bts.rpc.list_samet_funds(10, None), bts.rpc.get_samet_funds_by_owner("init0"),
                bts.rpc.get_samet_funds_by_asset("TEST", 10, None))
    listed, by_owner, by_asset = yield threads.deferToThread(query)
    expected = [{"id": fund, "owner_account": INIT0, "asset_type": CORE, "balance": 1000000,
                 "fee_rate": 3000, "unpaid_amount": 0}]
    assert listed == by_owner == by_asset == expected


def test_a_loan_by_another_account_is_in_the_fund_owners_history(chain, fund):
    """account_history_plugin.cpp ``add_account_history``: the accounts an
    ``extendable_operation_result`` names (``impacted_accounts``) get the
    operation in their history too, so init0, the fund's owner, gets
    init1's borrow and repay: two entries more (a fee of 1000 * 3000 /
    1,000,000 = 3)."""
    stats = chain.state.objects[INIT0]["statistics"]
    before = chain.state.objects[stats]["total_ops"]
    push(chain, borrow(fund, 1000), repay(fund, 1000, 3))
    produce(chain)
    assert chain.state.objects[stats]["total_ops"] == before + 2
