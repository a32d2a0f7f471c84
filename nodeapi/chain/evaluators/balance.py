"""Genesis balance evaluators: balance_claim (37).

Reference: graphene libraries/chain/balance_evaluator.cpp.
"""

from nodeapi.chain.errors import OperationRefused, fc_assert
from nodeapi.chain.evaluators.context import VOID, ApplyContext
from nodeapi.chain.balances import adjust_balance
from nodeapi.protocol.keys import PublicKey, balance_addresses
from nodeapi.protocol.asset import amount_of


def key_addresses(key: str, prefix: str) -> set:
    """The addresses a public key can own a genesis balance under (graphene
    ``balance_claim_evaluator``: pts and graphene, compressed or not)."""
    return {a.to_str(prefix) for a in balance_addresses(PublicKey.from_str(key))}


def balance_claim(ctx: ApplyContext, data: dict) -> list:
    """balance_claim (37): move a genesis balance 1.15.N to
    ``deposit_to_account``; the claimed amount must be the whole balance and
    ``balance_owner_key`` must own it.  Result void.

    :raises InvalidOperation: wrong owner key, asset or amount.
    :raises UnknownObject: the balance or the account does not exist."""
    state = ctx.state
    bal = state.require(data["balance_to_claim"])
    # balance_evaluator.cpp do_evaluate's checks, names and texts
    if bal["owner"] not in key_addresses(data["balance_owner_key"], ctx.prefix):
        raise OperationRefused(
            "balance_claim", "owner_mismatch",
            "Balance owner key was specified as '${op}' but balance's actual owner is '${bal}'",
            {"op": data["balance_owner_key"], "bal": bal["owner"]})
    claimed = data["total_claimed"]
    fc_assert(claimed["asset_id"] == bal["balance"]["asset_id"],
              "op.total_claimed.asset_id == balance->asset_type()")
    fc_assert(amount_of(claimed) == amount_of(bal["balance"]),
              "op.total_claimed == balance->balance")
    state.require(data["deposit_to_account"])
    state.remove(bal["id"])
    adjust_balance(state, data["deposit_to_account"], claimed["asset_id"], amount_of(claimed))
    return VOID
