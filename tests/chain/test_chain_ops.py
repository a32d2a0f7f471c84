"""Chain evaluators with python-bitshares-signed transactions: accounts,
assets, limit orders (with fills), and a follower chain / replay."""

import re

import pytest
import pytest_twisted
from bitsharesbase import operations

from nodeapi.chain import errors
from nodeapi.chain.chain import Chain

from kit.chain import account_options, key_auth, produce, transfer_op, with_fee
from kit.keys import DEV_PUB, DEV_WIF, OTHER_WIF
from kit.signing import sign


def test_account_create_and_update(funded):
    chain = funded
    pub = chain.state.get("1.2.6")["active"]["key_auths"][0][0]
    op, fee = with_fee(chain, operations.Account_create, registrar="1.2.6", referrer="1.2.6",
                       referrer_percent=0, name="alice-1", owner=key_auth(pub),
                       active=key_auth(pub),
                       options=account_options(pub), extensions={})
    before = chain.state.balance("1.2.6", "1.3.0")
    res = chain.push_transaction(sign(chain, [op]))
    produce(chain)
    new_id = res["operation_results"][0][1]
    assert res["operation_results"][0][0] == 1
    acc = chain.state.get(new_id)
    assert acc["name"] == "alice-1" and acc["registrar"] == "1.2.6"
    assert chain.state.account_by_name["alice-1"] == new_id
    assert acc["statistics"] == "2.7." + new_id.split(".")[2]
    assert chain.state.balance("1.2.6", "1.3.0") == before - fee
    assert new_id in chain.state.key_references[pub]
    opts = dict(account_options(pub), num_witness=0)
    op, fee = with_fee(chain, operations.Account_update, account=new_id,
                       new_options=dict(opts, voting_account="1.2.6"), extensions={})
    # graphene's text (db_balance.cpp adjust_balance): "Insufficient Balance: ..."
    with pytest.raises(errors.InsufficientBalance,
                       match=r"^Assert Exception: delta\.amount > 0: Insufficient Balance: "
                             r"alice-1's balance of 0 TEST is less "
                             r"than required [\d.]+ TEST$"):
        chain.push_transaction(sign(chain, [op]))
    chain.push_transaction(sign(chain, [transfer_op(10 ** 8, to=new_id)]))
    chain.push_transaction(sign(chain, [op]))
    produce(chain)
    assert chain.state.get(new_id)["options"]["voting_account"] == "1.2.6"


def test_asset_create_issue_and_orders(funded):
    chain = funded
    opts = {"max_supply": 10 ** 12, "market_fee_percent": 0, "max_market_fee": 0,
            "issuer_permissions": 0, "flags": 0,
            "core_exchange_rate": {"base": {"amount": 1, "asset_id": "1.3.0"},
                                   "quote": {"amount": 1, "asset_id": "1.3.1"}},
            "whitelist_authorities": [], "blacklist_authorities": [],
            "whitelist_markets": [], "blacklist_markets": [], "description": "",
            "extensions": []}
    op, fee = with_fee(chain, operations.Asset_create, issuer="1.2.6", symbol="GOLD",
                       precision=3, common_options=opts, is_prediction_market=False,
                       extensions=[])
    res = chain.push_transaction(sign(chain, [op]))
    assert res["operation_results"][0] == [1, "1.3.1"]
    issue, _ = with_fee(chain, operations.Asset_issue, issuer="1.2.6",
                        asset_to_issue={"amount": 5000, "asset_id": "1.3.1"},
                        issue_to_account="1.2.7", extensions=[])
    chain.push_transaction(sign(chain, [issue]))
    chain.push_transaction(sign(chain, [transfer_op(10 ** 8)]))
    produce(chain)
    assert chain.state.get("1.3.1")["symbol"] == "GOLD"
    assert chain.state.get("2.3.1")["current_supply"] == 5000
    assert chain.state.balance("1.2.7", "1.3.1") == 5000
    # init0 sells 1000 TEST for 100 GOLD; init1 sells 100 GOLD for 1000 TEST.
    sell, f1 = with_fee(chain, operations.Limit_order_create, seller="1.2.6",
                        amount_to_sell={"amount": 1000, "asset_id": "1.3.0"},
                        min_to_receive={"amount": 100, "asset_id": "1.3.1"},
                        expiration="2030-01-01T00:00:00", fill_or_kill=False, extensions=[])
    r1 = chain.push_transaction(sign(chain, [sell]))
    assert r1["operation_results"][0] == [1, "1.7.0"]
    buy, f2 = with_fee(chain, operations.Limit_order_create, seller="1.2.7",
                       amount_to_sell={"amount": 100, "asset_id": "1.3.1"},
                       min_to_receive={"amount": 1000, "asset_id": "1.3.0"},
                       expiration="2030-01-01T00:00:00", fill_or_kill=False, extensions=[])
    core6 = chain.state.balance("1.2.6", "1.3.0")
    core7 = chain.state.balance("1.2.7", "1.3.0")
    seen = []
    chain.add_consumer(type("C", (), {"block_applied": lambda self, b: seen.append(b)})())
    chain.push_transaction(sign(chain, [buy]))
    produce(chain)
    assert "1.7.0" not in chain.state.objects and "1.7.1" not in chain.state.objects
    assert chain.state.balance("1.2.6", "1.3.1") == 100
    assert chain.state.balance("1.2.7", "1.3.1") == 4900
    assert chain.state.balance("1.2.7", "1.3.0") == core7 + 1000 - f2
    assert chain.state.balance("1.2.6", "1.3.0") == core6
    fills = [o for o in seen[-1].operations if o.is_virtual]
    assert [f.op[0] for f in fills] == [4, 4]
    assert fills[0].op[1]["order_id"] == "1.7.1" and fills[1].op[1]["is_maker"] is True


def _wrong_signature(chain, trx):
    """``trx``'s signature with its last byte changed (still canonical: the
    canonical test looks at the first bytes of r and s) and the unrelated key
    it recovers to."""
    from nodeapi.chain import authority as auth
    from nodeapi.protocol.transaction import signature_digest

    sig = trx["signatures"][0]
    bad = sig[:-2] + ("00" if sig[-2:] != "00" else "01")
    digest = signature_digest(trx, chain.chain_id, "TEST")
    return bad, auth.recover_key(bad, digest, "TEST")


def test_wrong_signature_rejected(funded):
    """graphene verify_authority: a signature that recovers to an unrelated
    key leaves the required authority unsatisfied -> missing authority
    (checked before unused signatures, so always this one error)."""
    chain = funded
    trx = sign(chain, [transfer_op(5)])
    bad, stranger = _wrong_signature(chain, trx)
    assert stranger != DEV_PUB
    trx["signatures"] = [bad]
    before = {k: dict(v) for k, v in chain.state.objects.items()}
    with pytest.raises(errors.MissingAuthority, match=r"^missing required active authority: "
                                                      r"Missing Active Authority 1\.2\.6$") as info:
        chain.push_transaction(trx)
    assert not isinstance(info.value, errors.InvalidSignature)
    assert {k: dict(v) for k, v in chain.state.objects.items()} == before
    assert chain.pending_transactions == []


def test_wrong_extra_signature_is_irrelevant(funded):
    """With the right signature present, the wrong one is an extra,
    unused signature: graphene tx_irrelevant_sig ("Unnecessary
    signature(s)"), naming the key it recovered to."""
    chain = funded
    trx = sign(chain, [transfer_op(5)])
    bad, stranger = _wrong_signature(chain, trx)
    trx["signatures"] = trx["signatures"] + [bad]
    with pytest.raises(errors.InvalidSignature,
                       match=f"^Unnecessary signature\\(s\\) by {stranger}$"):
        chain.push_transaction(trx)
    assert chain.pending_transactions == []


def test_unneeded_signature_rejected(funded):
    with pytest.raises(errors.InvalidSignature):
        funded.push_transaction(sign(funded, [transfer_op(5)], wifs=(DEV_WIF, OTHER_WIF)))


@pytest_twisted.inlineCallbacks
def test_follower_and_replay(funded, genesis, new_chain):
    chain = funded
    chain.push_transaction(sign(chain, [transfer_op(777)]))
    produce(chain, 3)
    follower = new_chain()
    for num in range(1, chain.head_block_num + 1):
        follower.push_block(chain.get_block(num))
    assert follower.head_block_id == chain.head_block_id
    assert follower.state.balance("1.2.7", "1.3.0") == 777
    bad = dict(chain.get_block(2), timestamp="2016-01-18T09:18:27")
    with pytest.raises(errors.InvalidBlock):
        new_chain().push_block(bad)
    replayed = Chain(genesis, chain.block_log)
    seen = []
    replayed.add_consumer(type("C", (), {"block_applied": lambda self, b: seen.append(b)})())
    count = yield replayed.replay()
    assert count == chain.head_block_num
    assert replayed.head_block_id == chain.head_block_id
    assert all(b.replay for b in seen)
    assert replayed.state.balance("1.2.6", "1.3.0") == chain.state.balance("1.2.6", "1.3.0")


def test_replay_in_chunks_with_progress(funded, genesis):
    from twisted.internet import task
    from twisted.logger import globalLogPublisher

    chain = funded
    produce(chain, 9)
    clock = task.Clock()
    coop = task.Cooperator(terminationPredicateFactory=lambda: lambda: True,
                           scheduler=lambda f: clock.callLater(0.01, f), started=True)
    replayed = Chain(genesis, chain.block_log, clock=clock)
    events = []
    globalLogPublisher.addObserver(events.append)
    try:
        d = replayed.replay(cooperator=coop, chunk=2, progress_every=0)
        results = []
        d.addCallback(results.append)
        steps = 0
        while not results and steps < 100:
            clock.advance(0.01)
            steps += 1
    finally:
        globalLogPublisher.removeObserver(events.append)
    assert results == [10]
    assert steps >= 5  # the work was spread over several reactor turns
    progress = [e for e in events if e.get("log_format", "").startswith("Replay: block")]
    assert progress and progress[0]["total"] == 10
    assert replayed.head_block_id == chain.head_block_id


def test_replay_runs_on_the_chain_clock(funded, genesis):
    """Without a cooperator, a chain given a reactor replays on that
    reactor (steps scheduled with its callLater), not on the global one."""
    from twisted.internet import task

    chain = funded
    produce(chain, 3)
    clock = task.Clock()
    replayed = Chain(genesis, chain.block_log, clock=clock)
    results = []
    replayed.replay(chunk=1).addCallback(results.append)
    assert results == [] and clock.getDelayedCalls()
    for _ in range(100):
        if results:
            break
        clock.advance(0.01)
    assert results == [chain.head_block_num]
    assert replayed.head_block_id == chain.head_block_id


def test_transfer_beyond_the_balance_with_the_reference_text(funded_pair):
    """transfer_evaluator::do_evaluate: FC_ASSERT( insufficient_balance,
    "Insufficient Balance: ${balance}, unable to transfer '${total_transfer}'
    from account '${a}' to '${t}'" ) inside FC_RETHROW_EXCEPTIONS( "Unable to
    transfer ${a} from ${f} to ${t}" ): fc's to_string joins both, amounts
    by database::to_pretty_string.  init1 holds 100,000 TEST (10^10 sat);
    1,000,000.00001 TEST is asked."""
    from kit.chain import amt, push_wire

    chain = funded_pair
    with pytest.raises(errors.InsufficientBalance) as info:
        push_wire(chain, [0, {"from": "1.2.7", "to": "1.2.6", "amount": amt(10 ** 11 + 1),
                              "extensions": []}])
    # the balance named is the one the evaluator sees (before or after the
    # fee, as the fee pipeline takes it)
    assert re.fullmatch(
        r"Assert Exception: insufficient_balance: Insufficient Balance: [\d.]+ TEST, unable to "
        r"transfer '1000000\.00001 TEST' from account 'init1' to 'init0' Unable to transfer "
        r"1000000\.00001 TEST from init1 to init0", str(info.value)), str(info.value)
