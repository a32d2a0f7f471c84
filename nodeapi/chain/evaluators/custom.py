"""Custom evaluators: custom (35).

The family's later members (assert 36, custom_authority 54-56) belong here.
Reference: graphene libraries/chain/custom_evaluator.cpp.
"""

from nodeapi.chain.evaluators.context import VOID, ApplyContext


def custom(ctx: ApplyContext, data: dict) -> list:
    """custom (35): no state change beyond the fee; every account of
    ``required_auths`` must exist (:class:`~nodeapi.chain.errors.UnknownObject`).
    Result void."""
    for aid in data.get("required_auths", []):
        ctx.state.require(aid)
    return VOID
