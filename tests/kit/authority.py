"""Accounts with weighted key/account authorities for the authority tests
(bitshares-core libraries/protocol/transaction.cpp ``verify_authority``).
Transactions are signed with :func:`kit.signing.sign_canonical`."""

from bitsharesbase import operations

from kit.chain import account_options, transfer_op, with_fee
from kit.keys import key
from kit.signing import sign_canonical

K1, K2, K3, K4 = key("1"), key("2"), key("3"), key("4")


def auth(threshold, keys=(), accounts=()):
    """An authority: ``keys`` [(pub, weight)], ``accounts`` [(id, weight)]."""
    return {"weight_threshold": threshold, "address_auths": [],
            "key_auths": [[k, w] for k, w in keys],
            "account_auths": [[a, w] for a, w in accounts]}


def create(chain, name, owner, active=None):
    """account_create registered by init0 (signed with the dev key), funded
    with 1000 TEST; returns the new account id."""
    dev_pub = chain.state.get("1.2.6")["active"]["key_auths"][0][0]
    op, _ = with_fee(chain, operations.Account_create, registrar="1.2.6", referrer="1.2.6",
                     referrer_percent=0, name=name, owner=owner, active=active or owner,
                     options=account_options(dev_pub), extensions={})
    res = chain.push_transaction(sign_canonical(chain, [op]))
    aid = res["operation_results"][0][1]
    chain.push_transaction(sign_canonical(chain, [transfer_op(10 ** 8, to=aid)]))
    return aid


def pay(frm, amount=1):
    """A transfer from ``frm`` to init0 (needs ``frm``'s active authority)."""
    return transfer_op(amount, frm=frm, to="1.2.6")


def chain_of_accounts(chain):
    """leaf (key K1); pre -> leaf; l2 -> leaf; l1 -> l2; top -> l1.
    Ids ascend in that order; returns (leaf, pre, l2, l1, top)."""
    leaf = create(chain, "leaf-1", auth(1, [(K4[1], 1)]), auth(1, [(K1[1], 1)]))
    own = auth(1, [(K4[1], 1)])
    pre = create(chain, "pre-1", own, auth(1, [], [(leaf, 1)]))
    l2 = create(chain, "level-2", own, auth(1, [], [(leaf, 1)]))
    l1 = create(chain, "level-1", own, auth(1, [], [(l2, 1)]))
    top = create(chain, "top-1", own, auth(1, [], [(l1, 1)]))
    return leaf, pre, l2, l1, top
