"""Market-issued asset evaluators: asset_update_bitasset (12),
asset_update_feed_producers (13), asset_settle (17), asset_global_settle
(18), asset_publish_feed (19), and the bitasset part of asset_create (10).

Reference: bitshares-core libraries/chain/asset_evaluator.cpp, with the
hardforks of today's chain (BSIP 48/75 permissions, BSIP 74 MCFR, BSIP 77
ICR, BSIP 87 force settle fee, core-2281 collateral bidding flag, core-2282
updates after a global settlement, core-2290 revival at the ICR, core-2481
instant matching of force settlements, core-2582 median feed checks,
core-2587 no settlement without a feed, core-2591 collateral fees of
settlements from the fund).

Black swan response methods (core-2467): global settlement (0), no
settlement (1), individual settlement to fund (2) and to order (3); the
method is checked (below 4) by the operation's validation.
"""

from nodeapi.chain.errors import InsufficientFeeds, fc_assert
from nodeapi.chain.evaluators.context import VOID, ApplyContext
from nodeapi.chain.balances import adjust_balance
from nodeapi.chain.market.bitasset_data import (
    COMMITTEE_FED, DISABLE_BSRM_UPDATE, DISABLE_FORCE_SETTLE, DISABLE_ICR_UPDATE,
    DISABLE_MCR_UPDATE, DISABLE_MSSR_UPDATE, GLOBAL_SETTLE, GLOBAL_SETTLEMENT,
    INDIVIDUAL_SETTLEMENT_TO_FUND, INDIVIDUAL_SETTLEMENT_TO_ORDER, NO_SETTLEMENT, WITNESS_FED,
    backing_asset, bitasset_of, bsrm, extensions, feed_with_icr, find_settled_debt_order,
    has_feed, is_globally_settled, is_individually_settled_to_fund, new_bitasset_data,
    update_bitasset_current_feed)
from nodeapi.chain.market.margin import apply_force_settlement, check_call_orders
from nodeapi.chain.market.positions import least_collateralized
from nodeapi.protocol.asset import (
    amount_of, asset, default_feed, is_null, make_price, margin_call_params_equal, mul_down,
    normal, value)
from nodeapi.chain.market.settle_funds import settle_from_gs_fund, settle_from_individual_pool
from nodeapi.chain.market.swan import globally_settle_asset, revive_bitasset
from nodeapi.chain.whitelist import is_authorized_asset
from nodeapi.protocol.ids import instance_number
from nodeapi.protocol.times import format_time
from nodeapi.protocol.config import CORE_ASSET


#: the black swan response methods this chain runs
def _check_bsrm_change(state, b: dict, new: dict, perms: int) -> bool:
    """asset_update_bitasset's rules for a changed method: only with the
    permission, never after a global settlement or while an individual
    settlement pool (2) or order (3) exists; True when the feed must be
    recomputed (no settlement (1) on either side)."""
    old_method = bsrm(b)
    new_method = int(extensions(new).get("black_swan_response_method") or GLOBAL_SETTLEMENT)
    if old_method == new_method:
        return False
    fc_assert(not perms & DISABLE_BSRM_UPDATE, "asset_obj.can_owner_update_bsrm()",
              "No permission to update BSRM")
    fc_assert(not is_globally_settled(b), "!current_bitasset_data.is_globally_settled()",
              "Unable to update BSRM when the asset has been globally settled")
    if old_method == INDIVIDUAL_SETTLEMENT_TO_FUND:
        fc_assert(not is_individually_settled_to_fund(b),
                  "!current_bitasset_data.is_individually_settled_to_fund()",
                  "Unable to update BSRM when the individual settlement pool (for "
                  "force-settlements) is not empty")
    elif old_method == INDIVIDUAL_SETTLEMENT_TO_ORDER:
        fc_assert(find_settled_debt_order(state, b["asset_id"]) is None,
                  "!d.find_settled_debt_order( op.asset_to_update )",
                  "Unable to update BSRM when there exists an individual settlement order")
    return NO_SETTLEMENT in (old_method, new_method)


def _check_backing(ctx: ApplyContext, issuer: str, backing_id: str) -> dict:
    """The backing asset rules of asset_create: no bitasset backed by a
    bitasset backed by a bitasset; committee assets backed by core."""
    state = ctx.state
    backing = state.require(backing_id)
    inner = bitasset_of(state, backing_id)
    if inner is not None:
        fc_assert(bitasset_of(state, backing_asset(inner)) is None,
                  "!backing_backing.is_market_issued()",
                  "May not create a bitasset backed by a bitasset backed by a bitasset.")
        ultimate = backing_asset(inner)
    else:
        ultimate = backing_id
    fc_assert(issuer != "1.2.0" or ultimate == CORE_ASSET,
              "op.issuer != GRAPHENE_COMMITTEE_ACCOUNT || backing.get_id() == asset_id_type()",
              "May not create a blockchain-controlled market asset which is not backed by CORE.")
    return backing


def _check_intervals(ctx: ApplyContext, options: dict) -> None:
    interval = int(ctx.parameters["block_interval"])
    fc_assert(int(options["feed_lifetime_sec"]) > interval,
              "op.new_options.feed_lifetime_sec > chain_parameters.block_interval",
              "Feed lifetime must exceed block interval.")
    fc_assert(int(options["force_settlement_delay_sec"]) > interval,
              "op.new_options.force_settlement_delay_sec > chain_parameters.block_interval",
              "Force settlement delay must exceed block interval.")


def create_bitasset_data(ctx: ApplyContext, data: dict, asset_id: str) -> str:
    """asset_create's bitasset part: check ``bitasset_opts`` and
    ``is_prediction_market`` and create the 2.4.N (before the 1.3.N, as
    graphene does); returns its id."""
    options = data["bitasset_opts"]
    backing = _check_backing(ctx, data["issuer"], options["short_backing_asset"])
    _check_intervals(ctx, options)
    if data.get("is_prediction_market"):
        fc_assert(int(data["precision"]) == int(backing["precision"]),
                  "op.precision == op.bitasset_opts->short_backing_asset(d).precision")
    return ctx.state.create("2.4", new_bitasset_data(
        asset_id, options, bool(data.get("is_prediction_market"))))["id"]


def _market_issued(state, asset_id: str, message: str) -> tuple:
    asset = state.require(asset_id)
    b = bitasset_of(state, asset_id)
    fc_assert(b is not None, "a.is_market_issued()", message)
    return asset, b


def _changed(old: dict, new: dict, name: str) -> bool:
    return extensions(old).get(name) != extensions(new).get(name)


def asset_update_bitasset(ctx: ApplyContext, data: dict) -> list:
    """asset_update_bitasset (12): new bitasset options by the issuer.
    MCR, ICR and MSSR change only without their ``disable_*_update``
    permission; the backing asset only without supply or collateral fees;
    changed feed parameters recompute the feed and check margin calls."""
    state = ctx.state
    new = data["new_options"]
    asset, b = _market_issued(state, data["asset_to_update"],
                              "Cannot update BitAsset-specific settings on a non-BitAsset.")
    fc_assert(data["issuer"] == asset["issuer"], "op.issuer == asset_obj.issuer",
              "Only asset issuer can update bitasset_data of the asset.")
    if b["is_prediction_market"]:
        fc_assert(extensions(new).get("black_swan_response_method") is None,
                  "!op.new_options.extensions.value.black_swan_response_method.valid()",
                  "Can not set black_swan_response_method for Prediction Markets")
    old = b["options"]
    perms = int(asset["options"]["issuer_permissions"])
    for name, flag, what in (("maintenance_collateral_ratio", DISABLE_MCR_UPDATE, "MCR"),
                             ("initial_collateral_ratio", DISABLE_ICR_UPDATE, "ICR"),
                             ("maximum_short_squeeze_ratio", DISABLE_MSSR_UPDATE, "MSSR")):
        if perms & flag:
            fc_assert(not _changed(old, new, name), f"!{what.lower()}_changed",
                      f"No permission to update {what}")
    bsrm_feed_update = _check_bsrm_change(state, b, new, perms)
    backing_changed = new["short_backing_asset"] != old["short_backing_asset"]
    if backing_changed:
        fc_assert(not is_globally_settled(b), "!current_bitasset_data.is_globally_settled()",
                  "Cannot change backing asset after a global settlement has executed")
        dyn = state.objects[asset["dynamic_asset_data_id"]]
        fc_assert(int(dyn["current_supply"]) == 0, "dyn.current_supply == 0",
                  "Cannot change backing asset if there is already a current supply.")
        fc_assert(int(dyn.get("accumulated_collateral_fees", 0)) == 0,
                  "dyn.accumulated_collateral_fees == 0",
                  "Must claim collateral-denominated fees before changing backing asset.")
        fc_assert(new["short_backing_asset"] != asset["id"],
                  "op.new_options.short_backing_asset != asset_obj.get_id()",
                  "Cannot update an asset to be backed by itself.")
        backing = _check_backing(ctx, asset["issuer"], new["short_backing_asset"])
        if b["is_prediction_market"]:
            fc_assert(int(asset["precision"]) == int(backing["precision"]),
                      "asset_obj.precision == new_backing_asset.precision",
                      "The precision of the asset and backing asset must be equal.")
        for child in state.by_kind.get("2.4", ()):
            if backing_asset(state.objects[child]) == asset["id"]:
                fc_assert(bitasset_of(state, new["short_backing_asset"]) is None
                          and new["short_backing_asset"] != state.objects[child]["asset_id"],
                          "!new_backing_asset.is_market_issued()",
                          "A non-blockchain controlled BitAsset would be invalidated by "
                          "changing this backing asset.")
    _check_intervals(ctx, new)
    update_feeds = (int(new["minimum_feeds"]) != int(old["minimum_feeds"])
                    or int(new["feed_lifetime_sec"]) != int(old["feed_lifetime_sec"])
                    or backing_changed
                    or any(_changed(old, new, n) for n in (
                        "initial_collateral_ratio", "maintenance_collateral_ratio",
                        "maximum_short_squeeze_ratio")))
    mcfr_changed = _changed(old, new, "margin_call_fee_ratio")
    nb = state.modify(b["id"])
    nb["options"] = new
    if backing_changed:
        if int(asset["options"]["flags"]) & (WITNESS_FED | COMMITTEE_FED):
            nb["feeds"] = []
        else:
            nb["feeds"] = [[acc, [when, dict(feed, settlement_price=make_price(
                0, CORE_ASSET, 0, CORE_ASSET))]] for acc, (when, feed) in nb["feeds"]]
    feed_changed = False
    if update_feeds or bsrm_feed_update:
        old_current, old_median = b["current_feed"], b["median_feed"]
        update_bitasset_current_feed(state, b["id"], ctx.now, skip_median_update=not update_feeds)
        nb = state.objects[b["id"]]
        feed_changed = not margin_call_params_equal(old_current, nb["current_feed"]) \
            or not margin_call_params_equal(old_median, nb["median_feed"])
    if feed_changed or mcfr_changed:
        check_call_orders(ctx, asset["id"], True)
    return VOID


def asset_update_feed_producers(ctx: ApplyContext, data: dict) -> list:
    """asset_update_feed_producers (13): the issuer names who may publish
    feeds; feeds of others are dropped and the median recomputed."""
    state = ctx.state
    producers = list(data["new_feed_producers"])
    fc_assert(len(producers) <= int(ctx.parameters["maximum_asset_feed_publishers"]),
              "o.new_feed_producers.size() <= maximum_asset_feed_publishers",
              "Cannot specify more feed producers than maximum allowed")
    asset, b = _market_issued(state, data["asset_to_update"],
                              "Cannot update feed producers on a non-BitAsset.")
    flags = int(asset["options"]["flags"])
    fc_assert(not flags & COMMITTEE_FED, "0 == (a.options.flags & committee_fed_asset)",
              "Cannot set feed producers on a committee-fed asset.")
    fc_assert(not flags & WITNESS_FED, "0 == (a.options.flags & witness_fed_asset)",
              "Cannot set feed producers on a witness-fed asset.")
    fc_assert(asset["issuer"] == data["issuer"], "a.issuer == o.issuer",
              "Only asset issuer can update feed producers of an asset")
    for account in producers:
        state.require(account)
    kept = {acc: entry for acc, entry in b["feeds"] if acc in producers}
    empty = [format_time(0), default_feed()]
    nb = state.modify(b["id"])
    nb["feeds"] = [[acc, kept.get(acc, empty)] for acc in sorted(set(producers),
                                                                   key=instance_number)]
    update_bitasset_current_feed(state, b["id"], ctx.now)
    check_call_orders(ctx, asset["id"], True)
    return VOID


def asset_publish_feed(ctx: ApplyContext, data: dict) -> list:
    """asset_publish_feed (19): a producer's feed (with its optional ICR)
    joins the asset's feeds; the median is recomputed, a globally settled
    asset whose fund is now healthy at the ICR is revived, margin calls
    are checked."""
    state = ctx.state
    asset, b = _market_issued(state, data["asset_id"],
                              "Can only publish price feeds for market-issued assets")
    feed = data["feed"]
    if b["is_prediction_market"]:
        fc_assert(not is_globally_settled(b), "!bitasset.is_globally_settled()",
                  "No further feeds may be published after a settlement event")
    fc_assert(feed["settlement_price"]["quote"]["asset_id"] == backing_asset(b),
              "o.feed.settlement_price.quote.asset_id == bitasset.options.short_backing_asset",
              "Quote asset type in settlement price should be same as backing asset of this "
              "asset")
    if not is_null(feed["core_exchange_rate"]):
        fc_assert(feed["core_exchange_rate"]["quote"]["asset_id"] == CORE_ASSET,
                  "o.feed.core_exchange_rate.quote.asset_id == asset_id_type()",
                  "Quote asset in core exchange rate should be CORE asset")
    flags = int(asset["options"]["flags"])
    publisher = data["publisher"]
    if flags & WITNESS_FED:
        fc_assert(any(a == publisher for a, _ in state.objects["1.2.1"]["active"]["account_auths"]),
                  "d.get(GRAPHENE_WITNESS_ACCOUNT).active.account_auths.count(o.publisher) > 0",
                  "Only active witnesses are allowed to publish price feeds for this asset")
    elif flags & COMMITTEE_FED:
        fc_assert(any(a == publisher for a, _ in state.objects["1.2.0"]["active"]["account_auths"]),
                  "d.get(GRAPHENE_COMMITTEE_ACCOUNT).active.account_auths.count(o.publisher) > 0",
                  "Only active committee members are allowed to publish price feeds for this "
                  "asset")
    else:
        fc_assert(any(a == publisher for a, _ in b["feeds"]),
                  "bitasset.feeds.count(o.publisher) > 0",
                  "The account is not in the set of allowed price feed producers of this asset")
    ext = data.get("extensions") if isinstance(data.get("extensions"), dict) else {}
    entry = [format_time(ctx.now), feed_with_icr(feed, ext.get("initial_collateral_ratio"))]
    feeds = {acc: e for acc, e in b["feeds"]}
    feeds[publisher] = entry
    old_median = b["median_feed"]
    state.modify(b["id"])["feeds"] = [[acc, feeds[acc]] for acc in sorted(feeds,
                                                                          key=instance_number)]
    update_bitasset_current_feed(state, b["id"], ctx.now)
    b = state.objects[b["id"]]
    if margin_call_params_equal(old_median, b["median_feed"]):
        return VOID
    if is_globally_settled(b) and has_feed(b):
        supply = int(state.objects[asset["dynamic_asset_data_id"]]["current_supply"])
        fund = make_price(b["settlement_fund"], backing_asset(b), supply, asset["id"])
        if supply == 0 or value(fund) > value(b["current_initial_collateralization"]):
            revive_bitasset(ctx, asset["id"])
    check_call_orders(ctx, asset["id"], True)
    return VOID


def asset_global_settle(ctx: ApplyContext, data: dict) -> list:
    """asset_global_settle (18): the issuer (with the ``global_settle``
    permission) settles the asset at ``settle_price``, which the least
    collateralized position must be able to pay."""
    state = ctx.state
    asset, b = _market_issued(state, data["asset_to_settle"],
                              "Can only globally settle market-issued assets")
    fc_assert(int(asset["options"]["issuer_permissions"]) & GLOBAL_SETTLE,
              "asset_to_settle->can_global_settle()",
              "The global_settle permission of this asset is disabled")
    fc_assert(asset["issuer"] == data["issuer"], "asset_to_settle->issuer == op.issuer",
              "Only asset issuer can globally settle an asset")
    supply = int(state.objects[asset["dynamic_asset_data_id"]]["current_supply"])
    fc_assert(supply > 0, "asset_to_settle->dynamic_data(d).current_supply > 0",
              "Can not globally settle an asset with zero supply")
    fc_assert(not is_globally_settled(b), "!_bitasset_data.is_globally_settled()",
              "This asset has been globally settled, cannot globally settle again")
    price = normal(data["settle_price"])
    fc_assert(price["quote"]["asset_id"] == backing_asset(b),
              "op.settle_price.quote.asset_id == bitasset.options.short_backing_asset",
              "The settlement price must be in the backing asset")
    call = least_collateralized(state, asset["id"])
    if call is not None:
        fc_assert(mul_down(int(call["debt"]), asset["id"], price) <= int(call["collateral"]),
                  "( least_collateralized_short->get_debt() * op.settle_price ) <= "
                  "least_collateralized_short->get_collateral()",
                  "Cannot globally settle at supplied price: least collateralized short lacks "
                  "sufficient collateral to settle.")
    globally_settle_asset(ctx, asset["id"], price)
    return VOID


def asset_settle(ctx: ApplyContext, data: dict) -> list:
    """asset_settle (17): settle ``amount`` of a market-issued asset.
    From a globally settled asset's fund at once; from the individual
    settlement pool (method 2) at once, the rest (when it empties the
    pool and force settlement is enabled) as a force settlement; otherwise a force
    settlement 1.4.N due after ``force_settlement_delay_sec`` that first
    takes positions in margin call territory (core-2481).  Result (an
    extendable_operation_result) ``[5, {"new_objects": ["1.4.N"]}]`` or
    the instant settlement's ``paid``/``received``/``fees``."""
    state = ctx.state
    amount = data["amount"]
    settled, b = _market_issued(state, amount["asset_id"],
                              "Can only force settle a predition market or a market issued asset")
    fc_assert(not int(settled["options"]["flags"]) & DISABLE_FORCE_SETTLE or is_globally_settled(b)
              or is_individually_settled_to_fund(b),
              "asset_to_settle->can_force_settle() || bitasset.is_globally_settled() || "
              "bitasset.is_individually_settled_to_fund()",
              "Either the asset need to have the force_settle flag enabled, or it need to be "
              "globally settled, or the individual settlement pool (for force-settlements) is "
              "not empty")
    if b["is_prediction_market"]:
        fc_assert(is_globally_settled(b), "bitasset.is_globally_settled()",
                  "Global settlement must occur before force settling a prediction market")
    elif not has_feed(b) and not is_globally_settled(b) \
            and not is_individually_settled_to_fund(b):
        raise InsufficientFeeds("Cannot force settle with no price feed if the asset is not "
                                "globally settled and the individual settlement pool (for "
                                "force-settlements) is not empty")
    fc_assert(state.balance(data["account"], settled["id"]) >= amount_of(amount),
              "d.get_balance( op.account, op.amount.asset_id ) >= op.amount",
              "Insufficient balance")
    fc_assert(is_authorized_asset(state, data["account"], settled),
              "is_authorized_asset( d, *fee_paying_account, *asset_to_settle )",
              "The account is not allowed to settle the asset")
    fc_assert(is_authorized_asset(state, data["account"], state.objects[backing_asset(b)]),
              "is_authorized_asset( d, *fee_paying_account, bitasset.options.short_backing_asset(d) )",
              "The account is not allowed to receive the backing asset")
    account, to_settle = data["account"], amount_of(amount)
    if is_globally_settled(b):
        return [5, settle_from_gs_fund(ctx, account, to_settle, settled["id"])]
    result = {}
    if is_individually_settled_to_fund(b):
        result = settle_from_individual_pool(ctx, account, to_settle, settled["id"])
        b = bitasset_of(state, settled["id"])
        if is_individually_settled_to_fund(b) \
                or int(settled["options"]["flags"]) & DISABLE_FORCE_SETTLE:
            return [5, result]
        to_settle -= amount_of(result["paid"][0])
    if to_settle == 0 or not has_feed(b):
        return [5, result]
    adjust_balance(state, account, settled["id"], -to_settle)
    settle = state.create("1.4", {
        "owner": account,
        "balance": asset(to_settle, settled["id"]),
        "settlement_date": ctx.now + int(b["options"]["force_settlement_delay_sec"]),
    })
    apply_force_settlement(ctx, settle["id"], settled["id"])
    return [5, {"new_objects": [settle["id"]], **result}]
