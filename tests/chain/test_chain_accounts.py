"""Account rules of the chain against bitshares-core
(libraries/protocol/account.cpp, libraries/chain/account_evaluator.cpp):
authority validation and ``verify_authority_accounts`` (membership limit,
existing accounts), canonical authority order, account names
(``is_valid_name``) and account_upgrade after hardfork 613."""

import pytest
from bitsharesbase import operations

from nodeapi.chain import errors
from nodeapi.chain.evaluators import account as evaluators_accounts
from nodeapi.chain.evaluators.context import ApplyContext
from nodeapi.chain.evaluators.registry import apply_operation
from nodeapi.protocol.config import MAX_TIME
from nodeapi.protocol.errors import InvalidOperation
from nodeapi.protocol.keys import public_key_bytes

from kit.authority import K1, K2, K3, K4, auth, create
from kit.chain import account_options, produce, transfer_op, with_fee
from kit.keys import key
from kit.signing import sign_canonical as sign


def _create_op(chain, name, owner, active=None, **extra):
    dev_pub = chain.state.get("1.2.6")["active"]["key_auths"][0][0]
    data = dict(registrar="1.2.6", referrer="1.2.6", referrer_percent=0, name=name,
                owner=owner, active=active or owner, options=account_options(dev_pub),
                extensions={})
    data.update(extra)
    op, _ = with_fee(chain, operations.Account_create, **data)
    return op


def _update_op(chain, account, **data):
    op, _ = with_fee(chain, operations.Account_update, account=account, extensions={}, **data)
    return op


def _keys(n):
    return [key(f"member-{i}")[1] for i in range(n)]


def test_membership_limit_on_create(funded):
    chain = funded
    limit = chain.state.get("2.0.0")["parameters"]["maximum_authority_membership"]
    assert limit == 10
    keys = _keys(limit + 1)
    ok = create(chain, "limit-ok", auth(1, [(k, 1) for k in keys[:limit]]))
    assert len(chain.state.get(ok)["owner"]["key_auths"]) == limit
    for owner, active in ((auth(1, [(k, 1) for k in keys]), auth(1, [(K1[1], 1)])),
                          (auth(1, [(K1[1], 1)]), auth(1, [(k, 1) for k in keys[:5]],
                                                        [(f"1.2.{i}", 1) for i in range(6, 12)]))):
        with pytest.raises(errors.InvalidOperation, match="maximum_authority_membership"):
            chain.push_transaction(sign(chain, [_create_op(chain, "limit-bad", owner, active)]))
    assert "limit-bad" not in chain.state.account_by_name


def test_membership_limit_follows_parameter(funded):
    chain = funded
    params = chain.state.get("2.0.0")["parameters"]
    params["maximum_authority_membership"] = 2
    try:
        owner = auth(1, [(K1[1], 1), (K2[1], 1), (K3[1], 1)])
        with pytest.raises(errors.InvalidOperation, match="maximum_authority_membership"):
            chain.push_transaction(sign(chain, [_create_op(chain, "three-1", owner)]))
    finally:
        params["maximum_authority_membership"] = 10
    create(chain, "three-1", auth(1, [(K1[1], 1), (K2[1], 1), (K3[1], 1)]))


def test_membership_limit_on_update(funded):
    chain = funded
    aid = create(chain, "upd-limit", auth(1, [(K1[1], 1)]), auth(1, [(K2[1], 1)]))
    too_many = auth(1, [(k, 1) for k in _keys(11)])
    with pytest.raises(errors.InvalidOperation, match="maximum_authority_membership"):
        chain.push_transaction(sign(chain, [_update_op(chain, aid, active=too_many)],
                                    wifs=(K2[0],)))
    with pytest.raises(errors.InvalidOperation, match="maximum_authority_membership"):
        chain.push_transaction(sign(chain, [_update_op(chain, aid, owner=too_many)],
                                    wifs=(K1[0],)))
    ten = auth(1, [(k, 1) for k in _keys(10)])
    chain.push_transaction(sign(chain, [_update_op(chain, aid, active=ten)], wifs=(K2[0],)))
    assert len(chain.state.get(aid)["active"]["key_auths"]) == 10


def test_authority_accounts_must_exist(funded):
    chain = funded
    missing = auth(1, [], [("1.2.999", 1)])
    with pytest.raises(errors.UnknownObject, match="1.2.999"):
        chain.push_transaction(sign(chain, [_create_op(chain, "ghost-1", auth(1, [(K1[1], 1)]),
                                                       missing)]))
    aid = create(chain, "ghost-2", auth(1, [(K1[1], 1)]), auth(1, [(K2[1], 1)]))
    with pytest.raises(errors.UnknownObject, match="1.2.999"):
        chain.push_transaction(sign(chain, [_update_op(chain, aid, active=missing)],
                                    wifs=(K2[0],)))
    chain.push_transaction(sign(chain, [_update_op(chain, aid, active=auth(1, [], [("1.2.7", 1)]))],
                                wifs=(K2[0],)))
    assert chain.state.get(aid)["active"]["account_auths"] == [["1.2.7", 1]]


@pytest.mark.parametrize("bad", [
    auth(2, [(K1[1], 1)]),                     # impossible threshold
    auth(1, [], []),                           # no members
    auth(3, [(K1[1], 1)], [("1.2.6", 1)]),     # impossible with accounts
])
def test_invalid_authorities(funded, bad):
    """Refused by the operations' validate() (account.cpp), before evaluation."""
    chain = funded
    with pytest.raises(InvalidOperation, match="^Assert Exception: .*owner"):
        chain.push_transaction(sign(chain, [_create_op(chain, "bad-auth", bad)]))
    aid = create(chain, "bad-upd", auth(1, [(K1[1], 1)]))
    with pytest.raises(InvalidOperation, match="^Assert Exception: .*active"):
        chain.push_transaction(sign(chain, [_update_op(chain, aid, active=bad)],
                                    wifs=(K1[0],)))


def test_zero_threshold_is_possible(funded):
    """graphene ``is_impossible`` only compares the weight sum with the
    threshold: a threshold of 0 is accepted."""
    chain = funded
    aid = create(chain, "zero-1", auth(1, [(K1[1], 1)]), auth(0, [(K2[1], 1)]))
    assert chain.state.get(aid)["active"]["weight_threshold"] == 0


def test_authorities_stored_in_canonical_order(funded):
    chain = funded
    keys = [K1[1], K2[1], K3[1]]
    aid = create(chain, "order-1", auth(1, [(K4[1], 1)]),
                 auth(2, [(k, 1) for k in keys], [("1.2.8", 1), ("1.2.7", 1), ("1.2.10", 1)]))
    active = chain.state.get(aid)["active"]
    assert [k for k, _w in active["key_auths"]] == sorted(keys, key=public_key_bytes)
    assert [a for a, _w in active["account_auths"]] == ["1.2.7", "1.2.8", "1.2.10"]


def test_update_of_temp_and_committee_account_rejected(funded):
    """graphene ``account_update_operation::validate``; called on the
    evaluator itself because no signature can reach it for 1.2.0 and the
    always-approved temp account makes any signature irrelevant."""
    chain = funded
    ctx = ApplyContext(chain.state, chain.head_block_time, chain.head_block_num + 1, "TEST",
                       apply_operation=apply_operation)
    for account in ("1.2.0", "1.2.4"):
        before = dict(chain.state.get(account))
        with pytest.raises(errors.InvalidOperation, match=account):
            evaluators_accounts.account_update(ctx, {
                "fee": {"amount": 0, "asset_id": "1.3.0"}, "account": account,
                "active": auth(1, [(K1[1], 1)]), "extensions": {}})
        assert chain.state.get(account) == before


def test_voting_account_must_exist(funded):
    chain = funded
    op = _create_op(chain, "voter-1", auth(1, [(K1[1], 1)]),
                    options=dict(account_options(K1[1]), voting_account="1.2.999"))
    with pytest.raises(errors.InvalidOperation, match="proxy"):
        chain.push_transaction(sign(chain, [op]))


VALID_NAMES = [
    "a", "z", "a1", "ab", "abc", "a-b", "a--b", "a-1", "init0", "alice-1",
    "a.b", "a.b.c", "abc.def", "a1.b2.c3", "x" * 63, "a" * 30 + "." + "b" * 32,
    "com.x-y-z.q9", "bitshares-core", "a0-0",
]
INVALID_NAMES = [
    "", "A", "Alice", "aB", "1a", "-a", "a-", "a_b", "a b", "a..b", ".a", "a.",
    "a.1b", "a.-b", "a.b-", "x" * 64, "a" * 32 + "." + "b" * 31, "é", "alice!", "a.b.",
    "..", ".", "a.B", "a/b", "a@b",
]


@pytest.mark.parametrize("name", VALID_NAMES)
def test_valid_names(name):
    assert evaluators_accounts.is_valid_name(name)


@pytest.mark.parametrize("name", INVALID_NAMES)
def test_invalid_names(name):
    assert not evaluators_accounts.is_valid_name(name)


def test_names_on_chain(funded):
    chain = funded
    owner = auth(1, [(K1[1], 1)])
    for name in ("q", "a.b", "x" * 63, "web.shop-1"):
        aid = create(chain, name, owner)
        produce(chain)  # the funding transfers are identical otherwise
        assert chain.state.account_by_name[name] == aid
    for name in ("1abc", "ab-", "a..b", "x" * 64, "Upper"):
        # python-bitshares matches "Assert Exception: is_valid_name( name )"
        with pytest.raises(InvalidOperation,
                           match=r"^Assert Exception: is_valid_name\( name \)"):
            chain.push_transaction(sign(chain, [_create_op(chain, name, owner)]))
    with pytest.raises(errors.InvalidOperation, match="already exists"):
        chain.push_transaction(sign(chain, [_create_op(chain, "a.b", owner)]))


def _upgrade_op(chain, account, lifetime):
    op, fee = with_fee(chain, operations.Account_upgrade, account_to_upgrade=account,
                       upgrade_to_lifetime_member=lifetime, extensions=[])
    return op, fee


def _member(chain, name):
    """A basic account holding 20000 TEST (enough for a lifetime upgrade)."""
    aid = create(chain, name, auth(1, [(K1[1], 1)]))
    chain.push_transaction(sign(chain, [transfer_op(2 * 10 ** 9, to=aid)]))
    return aid


#: account_evaluator.cpp account_upgrade_evaluator::do_apply, both annual
#: paths: FC_ASSERT( d.head_block_time() <= HARDFORK_613_TIME )
HF613 = r"^Assert Exception: d\.head_block_time\(\) <= HARDFORK_613_TIME: $"


def test_annual_upgrade_of_basic_account_rejected(funded):
    chain = funded
    aid = _member(chain, "basic-1")
    op, _ = _upgrade_op(chain, aid, False)
    with pytest.raises(errors.InvalidOperation, match=HF613):
        chain.push_transaction(sign(chain, [op], wifs=(K1[0],)))
    assert chain.state.get(aid)["membership_expiration_date"] == 0  # the epoch


def test_annual_renewal_of_unexpired_member_rejected(funded):
    """An annual membership still in effect (as held before HARDFORK_613)
    cannot be renewed; it can still be upgraded to lifetime."""
    chain = funded
    aid = _member(chain, "annual-1")
    acc = chain.state.get(aid)
    acc["membership_expiration_date"] = chain.head_block_time + 100 * 86400
    expiry = acc["membership_expiration_date"]
    op, _ = _upgrade_op(chain, aid, False)
    with pytest.raises(errors.InvalidOperation, match=HF613):
        chain.push_transaction(sign(chain, [op], wifs=(K1[0],)))
    assert chain.state.get(aid)["membership_expiration_date"] == expiry
    op, fee = _upgrade_op(chain, aid, True)
    assert fee == 1000000000
    before = chain.state.balance(aid, "1.3.0")
    chain.push_transaction(sign(chain, [op], wifs=(K1[0],)))
    produce(chain)
    acc = chain.state.get(aid)
    assert acc["membership_expiration_date"] == MAX_TIME
    assert acc["referrer"] == acc["registrar"] == acc["lifetime_referrer"] == aid
    assert acc["lifetime_referrer_fee_percentage"] == 10000 - acc["network_fee_percentage"]
    assert chain.state.balance(aid, "1.3.0") == before - fee


def test_lifetime_member_cannot_upgrade(funded):
    chain = funded
    for lifetime in (True, False):
        op, _ = _upgrade_op(chain, "1.2.6", lifetime)
        with pytest.raises(errors.InvalidOperation, match="already a lifetime member"):
            chain.push_transaction(sign(chain, [op]))


def test_lifetime_member_registers_accounts(funded):
    chain = funded
    aid = _member(chain, "newlife-1")
    op = _create_op(chain, "child-1", auth(1, [(K2[1], 1)]), registrar=aid, referrer=aid)
    with pytest.raises(errors.InvalidOperation, match="Lifetime members"):
        chain.push_transaction(sign(chain, [op], wifs=(K1[0],)))
    up, _ = _upgrade_op(chain, aid, True)
    chain.push_transaction(sign(chain, [up], wifs=(K1[0],)))
    res = chain.push_transaction(sign(chain, [op], wifs=(K1[0],)))
    child = chain.state.get(res["operation_results"][0][1])
    assert child["registrar"] == child["referrer"] == child["lifetime_referrer"] == aid
