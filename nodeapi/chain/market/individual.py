"""Individual settlement (BSIP 2467 ``black_swan_response_method`` 2 and
3): an undercollateralized debt position is closed on its own, its debt
and collateral joining the asset's individual settlement pool
(``individual_settlement_debt``, ``individual_settlement_fund`` of the
2.4.N) instead of settling the whole asset.

The pool receives the position's collateral at its own collateral ratio
divided by the margin call pays ratio; the rest of the collateral is the
margin call fee (``accumulated_collateral_fees``).  The debt stays in the
supply: holders settle it against the pool (method 2, asset_settle) or buy
the pool's collateral through the settled-debt limit order (method 3).

Reference: bitshares-core libraries/chain/db_market.cpp
(``individually_settle``), asset_object.hpp (``individual_settlement_debt``,
``individual_settlement_fund``, ``get_individual_settlement_price``).
"""

from nodeapi.chain.evaluators.context import ApplyContext
from nodeapi.chain.market.bitasset_data import (
    INDIVIDUAL_SETTLEMENT_TO_FUND, bitasset_of, bsrm, mcpr, update_bitasset_current_feed)
from nodeapi.chain.market.positions import collateralization, fill_call_order
from nodeapi.protocol.asset import divide_ratio, invert, mul_up


def individually_settle(ctx: ApplyContext, mia_id: str, call: dict) -> None:
    """graphene ``individually_settle``: close ``call`` (a 1.8.N of
    ``mia_id``) into the pool.  The pool receives
    ``ceil(debt * collateral/debt / MCPR)`` (at most the collateral) at the
    fund receives price ``~collateralization / MCPR`` (DEBT per
    COLLATERAL); the position pays all its collateral, the difference being
    the margin call fee; the supply is unchanged.  Under method 2 the
    current feed is re-capped by the pool's price."""
    state = ctx.state
    b = bitasset_of(state, mia_id)
    debt, collateral = int(call["debt"]), int(call["collateral"])
    fund_receives_price = divide_ratio(invert(collateralization(call)), *mcpr(b))
    fund_receives = min(mul_up(debt, mia_id, fund_receives_price), collateral)
    nb = state.modify(b["id"])
    nb["individual_settlement_debt"] = int(nb["individual_settlement_debt"]) + debt
    nb["individual_settlement_fund"] = int(nb["individual_settlement_fund"]) + fund_receives
    fill_call_order(ctx, call["id"], collateral, debt, fund_receives_price, True,
                    collateral - fund_receives, reduce_current_supply=False)
    if bsrm(nb) == INDIVIDUAL_SETTLEMENT_TO_FUND:
        update_bitasset_current_feed(state, b["id"], ctx.now, skip_median_update=True)
