"""Fee payer, required authorities and impacted accounts of every operation
type 0-77, expected by hand from bitshares-core (operations.cpp
``operation_get_required_authorities``, the operation structs'
``get_required_*_authorities``, db_notify.cpp ``get_impacted_account_visitor``)
plus, as docs/wire-contract.rst says, the accounts whose authority a signed
operation needs."""

import pytest

from kit.operation_samples import DEV_PUB, KEY_AUTH, account_auth, sample

from nodeapi.protocol.errors import UnknownOperation
from nodeapi.protocol.impacted import (
    fee_payer, impacted_accounts, other_authorities, required_authorities)


def ids(*n):
    return {f"1.2.{i}" for i in n}


#: type -> (fee payer, active, owner, other authorities, impacted) where the
#: sample differs from "1.2.6 pays, needs its active, is the only one impacted"
SPECIAL = {
    0: ("1.2.6", ids(6), set(), [], ids(6, 7)),
    5: ("1.2.6", ids(6), set(), [], ids(6, 7)),          # + referrer
    7: ("1.2.6", ids(6), set(), [], ids(6, 7)),          # + account_to_list
    11: ("1.2.6", ids(6), set(), [], ids(6, 8)),         # + new_issuer
    14: ("1.2.6", ids(6), set(), [], ids(6, 7)),         # + issue_to_account
    22: ("1.2.6", ids(6), set(), [], ids(6, 7)),         # + what the proposed transfer needs
    23: ("1.2.6", ids(6, 7), ids(8), [{"weight_threshold": 1, "account_auths": [],
                                       "key_auths": [[DEV_PUB, 1]], "address_auths": []}],
         ids(6, 7, 8)),                                  # + the approvals (wire contract)
    25: ("1.2.6", ids(6), set(), [], ids(6, 7)), 26: ("1.2.6", ids(6), set(), [], ids(6, 7)),
    27: ("1.2.6", ids(6), set(), [], ids(6, 7)), 28: ("1.2.6", ids(6), set(), [], ids(6, 7)),
    31: ("1.2.0", ids(0), set(), [], ids(0)),            # the committee pays
    32: ("1.2.6", ids(6), set(), [], ids(6, 7)),         # + owner
    37: ("1.2.6", ids(6), set(), [KEY_AUTH], ids(6)),    # the balance key signs
    38: ("1.2.6", ids(6), set(), [], ids(6, 7, 8)),      # issuer, from, to
    39: ("1.2.6", ids(6), set(), [], ids(6, 9)),         # + outputs' account_auths
    40: ("1.2.4", ids(4), set(), [account_auth("1.2.10")], ids(4, 10, 11)),
    41: ("1.2.4", ids(4), set(), [account_auth("1.2.12")], ids(4, 6, 12)),
    48: ("1.2.6", ids(6), ids(6), [], ids(6, 7)),        # the issuer's owner
    49: ("1.2.6", ids(6), set(), [], ids(6, 7)),
    51: ("1.2.7", ids(7), set(), [], ids(6, 7)),         # from, and to (not the redeemer)
    74: ("1.2.7", ids(7), set(), [], ids(6, 7)),         # offer owner and borrower
}


@pytest.mark.parametrize("kind", range(78))
def test_every_type(kind):
    payer, active, owner, other, impacted = SPECIAL.get(
        kind, ("1.2.6", ids(6), set(), [], ids(6)))
    op = sample(kind)
    assert fee_payer(op) == payer
    assert required_authorities(op) == (active, owner)
    assert other_authorities(op) == other
    assert impacted_accounts(op) == impacted


def test_variants():
    update = sample(6)
    update[1]["owner"] = account_auth("1.2.20")
    update[1]["active"] = account_auth("1.2.21")
    assert required_authorities(update) == (ids(6), ids(6))
    assert impacted_accounts(update) == ids(6, 20, 21)
    custom = sample(35)
    custom[1]["required_auths"] = ["1.2.40", "1.2.41"]
    assert required_authorities(custom) == (ids(6, 40, 41), set())
    assert impacted_accounts(custom) == ids(6, 40, 41)
    redeemed = sample(51)
    redeemed[1]["redeemer"] = "1.2.7"
    assert impacted_accounts(redeemed) == ids(6)
    create = sample(5)
    create[1]["owner"] = account_auth("1.2.20")
    create[1]["extensions"] = {"buyback_options": {"asset_to_buy": "1.3.5",
                                                   "asset_to_buy_issuer": "1.2.30",
                                                   "markets": ["1.3.0"]}}
    assert required_authorities(create) == (ids(6, 30), set())
    # db_notify.cpp leaves the buyback issuer out; the wire contract counts
    # the accounts whose authority the operation needs
    assert impacted_accounts(create) == ids(6, 7, 20, 30)
    assert impacted_accounts(create, [1, "1.2.99"]) == ids(6, 7, 20, 30, 99)
    ca = sample(54)
    ca[1]["auth"] = account_auth("1.2.50")
    assert impacted_accounts(ca) == ids(6, 50)
    proposal = sample(22)
    proposal[1]["proposed_ops"].append({"op": sample(37)})
    proposal[1]["proposed_ops"].append({"op": sample(40)})
    assert impacted_accounts(proposal) == ids(6, 7, 4, 10)
    for bad in ([78, {}], ["transfer", {}], [0], [0, []]):
        with pytest.raises(UnknownOperation):
            impacted_accounts(bad)
