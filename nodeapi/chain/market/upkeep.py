"""The per-block and per-maintenance upkeep of market-issued assets.

Per block (graphene ``_apply_block`` after the transactions):
:func:`clear_expired_force_settlements` (settle_orders), then
:func:`update_expired_feeds` (a current feed older than
``feed_lifetime_sec`` is recomputed, margin calls checked, the core exchange
rate refreshed) and :func:`update_core_exchange_rates`.

At maintenance, :func:`process_bitassets`: ``force_settled_volume`` back to
0, expired feeds of witness- and committee-fed assets dropped, and the
collateral bids of globally settled assets processed.

Reference: bitshares-core libraries/chain/db_update.cpp
(``update_expired_feeds``, ``update_core_exchange_rates``), db_maint.cpp
(``process_bitassets``).
"""

from nodeapi.chain.evaluators.context import ApplyContext
from nodeapi.chain.market.bitasset_data import (
    COMMITTEE_FED, WITNESS_FED, feed_expiration_time, has_feed, is_globally_settled,
    update_bitasset_current_feed)
from nodeapi.chain.market.margin import check_call_orders
from nodeapi.protocol.asset import equal, is_null, margin_call_params_equal
from nodeapi.chain.market.settle_orders import clear_expired_force_settlements
from nodeapi.chain.market.swan import process_bids
from nodeapi.protocol.ids import instance_number
from nodeapi.protocol.times import parse_time

BITASSET_DATA = "2.4"

__all__ = ["clear_expired_force_settlements", "update_expired_feeds",
           "update_core_exchange_rates", "process_bitassets", "bitasset_upkeep"]


def _copy_cer(state, b: dict) -> None:
    """Reset the CER flags of 2.4.N ``b`` and copy its current feed's core
    exchange rate to the asset when they differ."""
    new = state.modify(b["id"])
    new["asset_cer_updated"] = new["feed_cer_updated"] = False
    cer = b["current_feed"]["core_exchange_rate"]
    asset = state.objects[b["asset_id"]]
    if not equal(asset["options"]["core_exchange_rate"], cer):
        state.modify(asset["id"])["options"] = dict(asset["options"], core_exchange_rate=cer)


def _needs_cer(b: dict) -> bool:
    return (b["feed_cer_updated"] or b["asset_cer_updated"]) \
        and not is_null(b["current_feed"]["core_exchange_rate"])


def update_expired_feeds(ctx: ApplyContext) -> None:
    """graphene ``update_expired_feeds``: every bitasset whose current feed
    expired by ``ctx.now`` (by expiration, then asset id) gets its median
    recomputed; a changed feed triggers margin calls."""
    state = ctx.state
    if not state.by_kind.get(BITASSET_DATA):  # no market-issued assets
        return
    expired = [state.objects[i] for i in state.by_kind.get(BITASSET_DATA, ())
               if feed_expiration_time(state.objects[i]) <= ctx.now]
    expired.sort(key=lambda b: (feed_expiration_time(b), instance_number(b["asset_id"])))
    for b in expired:
        old_current, old_median = b["current_feed"], b["median_feed"]
        update_bitasset_current_feed(state, b["id"], ctx.now)
        b = state.objects[b["id"]]
        if has_feed(b) and not margin_call_params_equal(b["current_feed"], old_current):
            check_call_orders(ctx, b["asset_id"], True)
        elif not is_null(b["median_feed"]["settlement_price"]) \
                and not margin_call_params_equal(b["median_feed"], old_median):
            check_call_orders(ctx, b["asset_id"], True)
        b = state.objects[b["id"]]
        if _needs_cer(b):
            _copy_cer(state, b)


def update_core_exchange_rates(state) -> None:
    """graphene ``update_core_exchange_rates``: the remaining bitassets
    whose feed (or issuer) changed the core exchange rate."""
    if not state.by_kind.get(BITASSET_DATA):  # no market-issued assets
        return
    for bid in sorted(state.by_kind.get(BITASSET_DATA, ()), key=instance_number):
        b = state.objects[bid]
        if _needs_cer(b):
            _copy_cer(state, b)


def bitasset_upkeep(ctx: ApplyContext) -> None:
    """The per-block steps of the module docstring, in order."""
    clear_expired_force_settlements(ctx)
    update_expired_feeds(ctx)
    update_core_exchange_rates(ctx.state)


def process_bitassets(ctx: ApplyContext) -> None:
    """graphene ``process_bitassets`` (maintenance)."""
    state = ctx.state
    for bid in sorted(state.by_kind.get(BITASSET_DATA, ()), key=instance_number):
        b = state.modify(bid)
        b["force_settled_volume"] = 0
        flags = int(state.objects[b["asset_id"]]["options"]["flags"])
        lifetime = int(b["options"]["feed_lifetime_sec"])
        if flags & (WITNESS_FED | COMMITTEE_FED) and lifetime < ctx.now:
            oldest = ctx.now - lifetime
            b["feeds"] = [f for f in b["feeds"] if parse_time(f[1][0]) >= oldest]
        if is_globally_settled(b):
            process_bids(ctx, b["asset_id"])
