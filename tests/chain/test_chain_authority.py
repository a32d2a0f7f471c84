"""graphene ``verify_authority`` / ``sign_state`` on the chain, with real
transactions signed by python-bitshares: weighted key and account
thresholds, the ``max_authority_depth`` limit (and accounts approved
earlier counting at that limit), owner versus active, irrelevant signatures.

Reference: bitshares-core libraries/protocol/transaction.cpp.

python-bitshares orders multi-entry ``key_auths`` by address and leaves
``account_auths`` unsorted, while graphene (and nodeapi's serializer) packs
the canonical flat_map order (compressed key bytes, account instance); the
digest is therefore taken over the node's packing (:func:`sign`)."""

import pytest
from bitsharesbase import operations

from nodeapi.chain import authority as chain_auth
from nodeapi.chain import errors

from kit.authority import K1, K2, K3, K4, auth, chain_of_accounts, create, pay
from kit.chain import account_options, claim_op, produce, with_fee
from kit.keys import DEV_WIF, key
from kit.signing import sign_canonical as sign


def test_weighted_key_auths(funded):
    chain = funded
    aid = create(chain, "multi-1", auth(1, [(K4[1], 1)]),
                 auth(3, [(K1[1], 1), (K2[1], 2), (K3[1], 1)]))
    for wifs in ((K1[0],), (K2[0],), (K1[0], K3[0])):
        with pytest.raises(errors.MissingAuthority):
            chain.push_transaction(sign(chain, [pay(aid)], wifs=wifs))
    chain.push_transaction(sign(chain, [pay(aid, 1)], wifs=(K1[0], K2[0])))
    chain.push_transaction(sign(chain, [pay(aid, 2)], wifs=(K2[0], K3[0])))
    # keys are walked in canonical (compressed bytes) order K3, K1, K2: the
    # threshold is reached only at K2, so all three signatures are used
    chain.push_transaction(sign(chain, [pay(aid, 3)], wifs=(K1[0], K2[0], K3[0])))
    produce(chain)
    assert chain.state.balance(aid, "1.3.0") == 10 ** 8 - 6 - 3 * 2000000


def test_owner_satisfies_active_but_not_reverse(funded):
    chain = funded
    aid = create(chain, "owned-1", auth(1, [(K1[1], 1)]), auth(1, [(K2[1], 1)]))
    # the owner key alone satisfies an active requirement
    chain.push_transaction(sign(chain, [pay(aid)], wifs=(K1[0],)))
    # changing the owner needs the owner authority; active is not enough
    upd, _ = with_fee(chain, operations.Account_update, account=aid,
                      owner=auth(1, [(K3[1], 1)]), extensions={})
    with pytest.raises(errors.MissingAuthority):
        chain.push_transaction(sign(chain, [upd], wifs=(K2[0],)))
    chain.push_transaction(sign(chain, [upd], wifs=(K1[0],)))
    produce(chain)
    assert chain.state.get(aid)["owner"]["key_auths"] == [[K3[1], 1]]
    # a changed active (no owner field) is authorised by the active key
    upd, _ = with_fee(chain, operations.Account_update, account=aid,
                      active=auth(1, [(K4[1], 1)]), extensions={})
    chain.push_transaction(sign(chain, [upd], wifs=(K2[0],)))
    produce(chain)
    assert chain.state.get(aid)["active"]["key_auths"] == [[K4[1], 1]]


def test_irrelevant_signatures(funded):
    chain = funded
    aid = create(chain, "single-1", auth(1, [(K1[1], 1)]), auth(2, [(K2[1], 2), (K3[1], 1)]))
    with pytest.raises(errors.InvalidSignature) as info:
        chain.push_transaction(sign(chain, [pay(aid)], wifs=(K2[0], K4[0])))
    # one InvalidSignature class: the protocol's, also a ChainError
    from nodeapi.errors import ChainError, ProtocolError
    from nodeapi.protocol import errors as protocol_errors
    assert errors.InvalidSignature is protocol_errors.InvalidSignature
    assert isinstance(info.value, ChainError) and isinstance(info.value, ProtocolError)
    with pytest.raises(errors.InvalidSignature):
        chain.push_transaction(sign(chain, [pay(aid)], wifs=(K2[0], DEV_WIF)))
    chain.push_transaction(sign(chain, [pay(aid)], wifs=(K2[0],)))


def test_weighted_account_auths(funded):
    chain = funded
    alice = create(chain, "alice-1", auth(1, [(K1[1], 1)]))
    bob = create(chain, "bob-1", auth(1, [(K2[1], 1)]))
    carol = create(chain, "carol-1", auth(1, [(K3[1], 1)]))
    corp = create(chain, "corp-1", auth(1, [(K4[1], 1)]),
                  auth(3, [(K4[1], 1)], [(alice, 1), (bob, 2), (carol, 1)]))
    for wifs in ((K1[0],), (K2[0],), (K1[0], K3[0])):
        with pytest.raises(errors.MissingAuthority):
            chain.push_transaction(sign(chain, [pay(corp)], wifs=wifs))
    chain.push_transaction(sign(chain, [pay(corp, 1)], wifs=(K1[0], K2[0])))
    chain.push_transaction(sign(chain, [pay(corp, 2)], wifs=(K2[0], K3[0])))
    # the owner key K4 (weight 1 in active too) plus alice
    chain.push_transaction(sign(chain, [pay(corp, 3)], wifs=(K4[0],)))
    produce(chain)
    assert chain.state.balance(corp, "1.3.0") == 10 ** 8 - 6 - 3 * 2000000


def test_nested_account_owner_counts(funded):
    """After bitshares-core #584 an account inside account_auths may be
    satisfied by its owner authority."""
    chain = funded
    inner = create(chain, "inner-1", auth(1, [(K1[1], 1)]), auth(1, [(K2[1], 1)]))
    outer = create(chain, "outer-1", auth(1, [(K4[1], 1)]), auth(1, [], [(inner, 1)]))
    chain.push_transaction(sign(chain, [pay(outer, 1)], wifs=(K1[0],)))
    chain.push_transaction(sign(chain, [pay(outer, 2)], wifs=(K2[0],)))
    with pytest.raises(errors.MissingAuthority):
        chain.push_transaction(sign(chain, [pay(outer, 3)], wifs=(K3[0],)))


def test_max_authority_depth(funded):
    chain = funded
    params = chain.state.get("2.0.0")["parameters"]
    assert params["max_authority_depth"] == 2
    leaf, pre, l2, l1, top = chain_of_accounts(chain)
    # two levels of accounts below the required one: within depth 2
    chain.push_transaction(sign(chain, [pay(l1, 1)], wifs=(K1[0],)))
    # three levels: leaf would be checked at depth 3
    with pytest.raises(errors.MissingAuthority):
        chain.push_transaction(sign(chain, [pay(top, 2)], wifs=(K1[0],)))
    # raising the global parameter lets the same transaction through
    params["max_authority_depth"] = 3
    chain.push_transaction(sign(chain, [pay(top, 3)], wifs=(K1[0],)))
    params["max_authority_depth"] = 1
    with pytest.raises(errors.MissingAuthority):
        chain.push_transaction(sign(chain, [pay(l1, 4)], wifs=(K1[0],)))
    params["max_authority_depth"] = 2


def test_account_approved_earlier_counts_at_max_depth(funded):
    """graphene counts an account already in ``approved_by`` even where the
    depth limit forbids looking into it: ``pre`` (lower id, checked first)
    approves ``leaf`` at depth 1, so ``top``'s chain reaching ``leaf`` at
    depth 3 > max_authority_depth still passes."""
    chain = funded
    leaf, pre, l2, l1, top = chain_of_accounts(chain)
    with pytest.raises(errors.MissingAuthority):
        chain.push_transaction(sign(chain, [pay(top, 1)], wifs=(K1[0],)))
    chain.push_transaction(sign(chain, [pay(top, 2), pay(pre, 3)], wifs=(K1[0],)))
    produce(chain)
    assert chain.state.balance(top, "1.3.0") == 10 ** 8 - 2 - 2000000


def test_required_accounts_checked_in_id_order(funded):
    """Required actives are visited as graphene's flat_set (numeric id
    order, 1.2.9 before 1.2.10), which decides what ``approved_by`` holds."""
    chain = funded
    accounts = [create(chain, f"pad-{i}", auth(1, [(K4[1], 1)])) for i in range(2)]
    leaf, pre, l2, l1, top = chain_of_accounts(chain)
    assert accounts and int(pre.rsplit(".", 1)[1]) < int(top.rsplit(".", 1)[1])
    # pushing in reverse operation order must not matter
    chain.push_transaction(sign(chain, [pay(pre, 5), pay(top, 6)], wifs=(K1[0],)))


# -- what operations require: the protocol's operation_get_required_authorities


CLAIMER_OWNER, CLAIMER_ACTIVE = key("claimer-owner"), key("claimer-active")


@pytest.fixture
def claimer_chain(genesis, new_chain):
    """A fresh chain whose genesis adds account ``claimer`` (1.2.18) with an
    owner key and an active key that both differ from the dev key, which
    owns the genesis balance 1.15.0."""
    import copy

    from nodeapi.chain.genesis import Genesis

    data = copy.deepcopy(genesis.data)
    data["initial_accounts"].append({"name": "claimer", "owner_key": CLAIMER_OWNER[1],
                                     "active_key": CLAIMER_ACTIVE[1],
                                     "is_lifetime_member": False})
    chain = new_chain(Genesis(data, genesis.chain_id, genesis.address_prefix,
                              genesis.core_symbol))
    assert chain.state.get("1.2.18")["name"] == "claimer"
    return chain


def _claim_to(account):
    return operations.Balance_claim(**dict(claim_op().json(), deposit_to_account=account,
                                           prefix="TEST"))


def test_balance_claim_needs_the_depositing_accounts_active_authority(claimer_chain):
    """graphene: the fee payer of balance_claim is ``deposit_to_account``,
    whose active authority is required besides the balance key."""
    chain = claimer_chain
    with pytest.raises(errors.MissingAuthority, match="^missing required active authority: "
                                                      "Missing Active Authority 1.2.18$"):
        chain.push_transaction(sign(chain, [_claim_to("1.2.18")]))
    with pytest.raises(errors.MissingAuthority,
                       match="^missing required other authority: Missing Authority$"):
        chain.push_transaction(sign(chain, [_claim_to("1.2.18")], wifs=(CLAIMER_ACTIVE[0],)))
    assert chain.pending_transactions == [] and chain.state.get("1.15.0") is not None
    chain.push_transaction(sign(chain, [_claim_to("1.2.18")],
                                wifs=(DEV_WIF, CLAIMER_ACTIVE[0])))
    produce(chain)
    assert chain.state.balance("1.2.18", "1.3.0") == 10 ** 15
    assert [t["operations"][0][0] for t in chain.get_block(1)["transactions"]] == [37]


def test_account_update_of_owner_needs_owner_authority(claimer_chain):
    """graphene account_update: the owner authority when it changes the
    owner, the active authority (fee payer) always - an owner signature
    satisfies both."""
    chain = claimer_chain
    chain.push_transaction(sign(chain, [_claim_to("1.2.18")],
                                wifs=(DEV_WIF, CLAIMER_ACTIVE[0])))
    produce(chain)
    new_owner = auth(1, [(K1[1], 1)])
    op, _fee = with_fee(chain, operations.Account_update, account="1.2.18",
                        owner=new_owner, extensions={})
    with pytest.raises(errors.MissingAuthority,
                       match="^missing required owner authority: Missing Owner Authority 1.2.18$"):
        chain.push_transaction(sign(chain, [op], wifs=(CLAIMER_ACTIVE[0],)))
    chain.push_transaction(sign(chain, [op], wifs=(CLAIMER_OWNER[0],)))
    produce(chain)
    assert chain.state.get("1.2.18")["owner"] == new_owner
    # without an owner change, the active authority is what is needed
    memo, _fee = with_fee(chain, operations.Account_update, account="1.2.18",
                          new_options=account_options(CLAIMER_ACTIVE[1]), extensions={})
    chain.push_transaction(sign(chain, [memo], wifs=(CLAIMER_ACTIVE[0],)))
    produce(chain)
    assert chain.state.get("1.2.18")["options"]["memo_key"] == CLAIMER_ACTIVE[1]


def test_chain_uses_the_protocol_requirements():
    """One implementation: the chain's verify_authority takes what each
    operation requires from nodeapi.protocol.impacted."""
    from nodeapi.protocol import impacted

    assert chain_auth.required_authorities is impacted.required_authorities
    assert chain_auth.other_authorities is impacted.other_authorities
