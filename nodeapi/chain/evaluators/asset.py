"""User-issued asset evaluators: asset_create (10), asset_update (11),
asset_issue (14), asset_reserve (15), asset_fund_fee_pool (16).

Market-issued (bitasset) and prediction-market assets get their 2.4.N from
:func:`nodeapi.chain.evaluators.bitasset.create_bitasset_data`; their own
operations are in :mod:`.bitasset`.
Reference: graphene libraries/chain/asset_evaluator.cpp.
"""

import json
import re

from nodeapi.chain.errors import InvalidOperation, fc_assert
from nodeapi.chain.evaluators.bitasset import create_bitasset_data
from nodeapi.chain.evaluators.context import VOID, ApplyContext, PhasedEvaluator
from nodeapi.chain.balances import adjust_balance, adjust_supply
from nodeapi.chain.market.bitasset_data import bitasset_of
from nodeapi.protocol.asset import amount_of, equal
from nodeapi.protocol.config import CORE_ASSET, GRAPHENE_100_PERCENT, MAX_SHARE_SUPPLY
from nodeapi.chain.market.settle_orders import cancel_settle_order, settle_orders_of
from nodeapi.chain.market.swan import cancel_bids
from nodeapi.chain.whitelist import is_authorized_asset
from nodeapi.protocol.flags import (
    ASSET_ISSUER_PERMISSION_MASK, DISABLE_BSRM_UPDATE, DISABLE_COLLATERAL_BIDDING,
    DISABLE_FORCE_SETTLE, DISABLE_NEW_SUPPLY,
    GLOBAL_SETTLE, LOCK_MAX_SUPPLY, NON_UIA_ONLY_ISSUER_PERMISSION_MASK,
    UIA_ASSET_ISSUER_PERMISSION_MASK, VALID_FLAGS_MASK, enabled_issuer_permissions)

#: asset_issuer_permission_flags (protocol/types.hpp)

_SYMBOL = re.compile(r"^[A-Z][A-Z0-9]*(\.[A-Z0-9]+)?[A-Z0-9]*$")


def _check_options(opts: dict) -> None:
    if not 0 < int(opts["max_supply"]) <= MAX_SHARE_SUPPLY:
        raise InvalidOperation(f"max_supply must be within 1..{MAX_SHARE_SUPPLY}")
    if not 0 <= int(opts.get("market_fee_percent", 0)) <= GRAPHENE_100_PERCENT:
        raise InvalidOperation(f"market_fee_percent must be within 0..{GRAPHENE_100_PERCENT}")
    cer = opts["core_exchange_rate"]
    if amount_of(cer["base"]) <= 0 or amount_of(cer["quote"]) <= 0:
        raise InvalidOperation("core_exchange_rate amounts must be positive")


def validate_flags(opts: dict, market_issued: bool) -> None:
    """graphene ``asset_options::validate_flags`` (core-2281): no
    permission-only bit in ``flags``, and no bitasset-only flag on a
    user-issued asset."""
    flags = int(opts["flags"])
    fc_assert(not flags & ~ASSET_ISSUER_PERMISSION_MASK,
              "0 == (flags & (uint16_t)(~ASSET_ISSUER_PERMISSION_MASK))",
              "Can not set an unknown bit in flags")
    for bit, name in ((0x800, "disable_mcr_update"), (0x1000, "disable_icr_update"),
                      (0x2000, "disable_mssr_update"), (0x4000, "disable_bsrm_update")):
        fc_assert(not flags & bit, f"0 == (flags & {name})",
                  f"Can not set {name} flag, it is for issuer permission only")
    if not market_issued:
        fc_assert(not flags & ~UIA_ASSET_ISSUER_PERMISSION_MASK,
                  "0 == (flags & (uint16_t)(~UIA_ASSET_ISSUER_PERMISSION_MASK))",
                  "Can not set a flag for bitassets only to UIA")


def asset_create(ctx: ApplyContext, data: dict) -> list:
    """asset_create (10): asset 1.3.N with dynamic data 2.3.N; result
    ``[1, "1.3.N"]``.

    The lower half of the fee's core value (``core_fee_paid // 2``) seeds
    the new asset's fee pool, the upper half was booked on the issuer's
    statistics by :func:`~nodeapi.chain.evaluators.pay_fee` (graphene
    ``asset_create_evaluator::pay_fee`` / ``do_apply`` after HF core-429; a
    fee paid in another asset was converted from that asset's pool, so core
    is neither created nor taken from 2.3.0).  The non-core side of
    ``core_exchange_rate`` gets the new asset's id (graphene)."""
    state = ctx.state
    symbol = data["symbol"]
    if not (3 <= len(symbol) <= 16 and _SYMBOL.match(symbol)):
        raise InvalidOperation(f"Invalid asset symbol {symbol!r}")
    if symbol in state.asset_by_symbol:
        raise InvalidOperation(f"Asset symbol {symbol} already exists")
    if "." in symbol:
        parent = state.asset_by_symbol.get(symbol.split(".")[0])
        if parent is None or state.objects[parent]["issuer"] != data["issuer"]:
            raise InvalidOperation(f"Only the issuer of {symbol.split('.')[0]} may create "
                                   f"{symbol}")
    if data.get("is_prediction_market"):
        fc_assert(data.get("bitasset_opts"), "op.bitasset_opts")
    if not 0 <= int(data["precision"]) <= 12:
        raise InvalidOperation("precision must be within 0..12")
    state.require(data["issuer"])
    opts = data["common_options"]
    _check_options(opts)
    validate_flags(opts, bool(data.get("bitasset_opts")))
    n = state.next_instance.get("1.3", 0)
    pool = ctx.core_fee_paid // 2
    cer = opts["core_exchange_rate"]
    if cer["base"]["asset_id"] == CORE_ASSET:
        cer = dict(cer, quote=dict(cer["quote"], asset_id=f"1.3.{n}"))
    else:
        cer = dict(cer, base=dict(cer["base"], asset_id=f"1.3.{n}"))
    state.create("2.3", {"current_supply": 0, "confidential_supply": 0,
                         "accumulated_fees": 0, "accumulated_collateral_fees": 0,
                         "fee_pool": pool})
    bitasset_id = create_bitasset_data(ctx, data, f"1.3.{n}") if data.get("bitasset_opts") \
        else None
    fields = {
        "symbol": symbol, "precision": int(data["precision"]), "issuer": data["issuer"],
        "options": dict(opts, max_supply=int(opts["max_supply"]),
                        max_market_fee=int(opts.get("max_market_fee", 0)),
                        core_exchange_rate=cer),
        "dynamic_asset_data_id": f"2.3.{n}",
    }
    if bitasset_id is not None:
        fields["bitasset_data_id"] = bitasset_id
    # asset_evaluator.cpp asset_create_evaluator::do_apply (7.x)
    fields["creation_block_num"] = ctx.block_num
    fields["creation_time"] = ctx.block_time
    asset = state.create("1.3", fields)
    return [1, asset["id"]]


def _issued_by(ctx: ApplyContext, asset_id: str, issuer: str, message: str = "") -> dict:
    """The asset, or graphene's ``FC_ASSERT( o.issuer == a.issuer, message )``
    refusal (``message`` formatted with ``{o}`` / ``{a}``, the two issuers)."""
    asset = ctx.state.require(asset_id)
    fc_assert(asset["issuer"] == issuer, "o.issuer == a.issuer",
              message.format(o=issuer, a=asset["issuer"]))
    return asset


def _backed_by(state, asset_id: str) -> str | None:
    """The first market-issued asset (prediction markets included) whose
    ``short_backing_asset`` is ``asset_id``, in bitasset data order (graphene's
    ``by_short_backing_asset`` index), or None."""
    for bid in state.ids_of_type("2.4."):
        bitasset = state.objects[bid]
        if bitasset["options"]["short_backing_asset"] == asset_id:
            return bitasset["asset_id"]
    return None


def asset_update(ctx: ApplyContext, data: dict) -> list:
    """asset_update (11): new options, by the issuer.

    Checks of graphene ``asset_update_evaluator::do_evaluate``: no
    market-issued-only permission bit on a
    user-issued asset, no ``disable_bsrm_update`` and always
    ``global_settle`` on a prediction market (core-2467); while
    ``current_supply`` is not 0, no issuer permission may be re-enabled
    (``get_enabled_issuer_permissions_mask``: setting a ``disable_*`` bit
    revokes, clearing it re-enables; a user-issued asset's market-issued-only
    bits and a prediction market's ``disable_bsrm_update`` may be cleared)
    and ``max_supply`` may not go below ``current_supply``; a flag may
    change only when the current permissions enable it (``(new.flags ^
    old.flags) & check_bits & ~get_enabled_issuer_permissions_mask() ==
    0``: an enable bit set, a disable bit - lock_max_supply,
    disable_new_supply, disable_collateral_bidding - not set);
    ``lock_max_supply`` freezes ``max_supply``; the ``new_precision``
    extension (only without supply, not on a prediction market, not on an
    asset backing a market-issued asset or prediction market) and
    ``skip_core_exchange_rate`` (the old rate stays) are applied; the
    issuer changes only through asset_update_issuer (48).  Setting
    ``disable_force_settle`` cancels the open force settlements, setting
    ``disable_collateral_bidding`` the open collateral bids
    (:func:`~nodeapi.chain.market.swan.cancel_bids`).  Raises
    :class:`InvalidOperation`."""
    asset = _issued_by(ctx, data["asset_to_update"], data["issuer"],
                       "Incorrect issuer for asset! ({o} != {a})")
    if data.get("new_issuer"):
        raise InvalidOperation("Since Hardfork #199, updating issuer requires the use of "
                               "asset_update_issuer_operation.")
    opts = data["new_options"]
    _check_options(opts)
    validate_flags(opts, bool(asset.get("bitasset_data_id")))
    ext = data.get("extensions") if isinstance(data.get("extensions"), dict) else {}
    new_precision = ext.get("new_precision")
    old = asset["options"]
    old_perms, new_perms = int(old["issuer_permissions"]), int(opts["issuer_permissions"])
    b = bitasset_of(ctx.state, asset["id"])
    prediction_market = b is not None and b["is_prediction_market"]
    if b is None:
        fc_assert(not new_perms & NON_UIA_ONLY_ISSUER_PERMISSION_MASK,
                  "0 == ( o.new_options.issuer_permissions & NON_UIA_ONLY_ISSUER_PERMISSION_MASK )",
                  "Unable to set non-UIA issuer permission bits on UIA")
    elif prediction_market:
        fc_assert(not new_perms & DISABLE_BSRM_UPDATE,
                  "0 == ( o.new_options.issuer_permissions & disable_bsrm_update )",
                  "Unable to set disable_bsrm_update issuer permission bit on PM")
    enabled_old = enabled_issuer_permissions(old_perms)
    if prediction_market:
        fc_assert(new_perms & GLOBAL_SETTLE, "a_copy.can_global_settle()",
                  "The global_settle permission should be enabled for prediction markets")
        enabled_old |= GLOBAL_SETTLE
    supply = int(ctx.state.objects[asset["dynamic_asset_data_id"]]["current_supply"])
    if supply != 0:
        reinstated = enabled_issuer_permissions(new_perms) & ~enabled_old
        if b is None:
            fc_assert(not reinstated & UIA_ASSET_ISSUER_PERMISSION_MASK,
                      "0 == ( ( o.new_options.get_enabled_issuer_permissions_mask() & "
                      "(uint16_t)(~enabled_issuer_permissions_mask) ) & "
                      "UIA_ASSET_ISSUER_PERMISSION_MASK )",
                      "Cannot reinstate previously revoked issuer permissions on a UIA if current "
                      "supply is non-zero, unless to unset non-UIA issuer permission bits.")
        elif prediction_market:
            fc_assert(not reinstated & ~DISABLE_BSRM_UPDATE,
                      "0 == ( ( o.new_options.get_enabled_issuer_permissions_mask() & "
                      "(uint16_t)(~enabled_issuer_permissions_mask) ) & "
                      "(uint16_t)(~disable_bsrm_update) )",
                      "Cannot reinstate previously revoked issuer permissions on a PM if current "
                      "supply is non-zero, unless to unset the disable_bsrm_update issuer "
                      "permission bit.")
        else:
            fc_assert(not reinstated,
                      "0 == ( o.new_options.get_enabled_issuer_permissions_mask() & "
                      "(uint16_t)(~enabled_issuer_permissions_mask) )",
                      "Cannot reinstate previously revoked issuer permissions on an asset if "
                      "current supply is non-zero.")
        fc_assert(new_precision is None, "!o.extensions.value.new_precision.valid()",
                  "Cannot update precision if current supply is non-zero")
        fc_assert(supply <= int(opts["max_supply"]),
                  "dyn_data.current_supply <= o.new_options.max_supply",
                  "Max supply should not be smaller than current supply")
    # changed flags within the enabled permissions (BSIP 48/75): the enable
    # bits set and the disable bits (lock_max_supply, disable_new_supply,
    # disable_collateral_bidding) not set; an invalid bit may always go
    check_bits = VALID_FLAGS_MASK if b is not None else UIA_ASSET_ISSUER_PERMISSION_MASK
    fc_assert(not (int(opts["flags"]) ^ int(old["flags"])) & check_bits & ~enabled_old,
              "0 == ( (o.new_options.flags ^ a.options.flags) & check_bits & "
              "(uint16_t)(~enabled_issuer_permissions_mask) )",
              "Flag change is forbidden by issuer permissions")
    fc_assert(not int(old["flags"]) & LOCK_MAX_SUPPLY
              or int(old["max_supply"]) == int(opts["max_supply"]),
              "a.can_update_max_supply() || a.options.max_supply == o.new_options.max_supply",
              "Can not update max supply")
    bitasset = bitasset_of(ctx.state, asset["id"])
    if new_precision is not None:
        fc_assert(int(new_precision) != int(asset["precision"]),
                  "*o.extensions.value.new_precision != a.precision",
                  "Specified a new precision but it does not change")
        fc_assert(bitasset is None or not bitasset["is_prediction_market"],
                  "!bitasset_data->is_prediction_market",
                  "Can not update precision of a prediction market")
        backed = _backed_by(ctx.state, asset["id"])
        fc_assert(backed is None, "!backing_another_asset",
                  f"Asset {backed} is backed by this asset, can not update precision")
    limit = int(ctx.parameters["maximum_asset_whitelist_authorities"])
    for field in ("whitelist_authorities", "blacklist_authorities"):
        fc_assert(len(opts.get(field) or ()) <= limit,
                  f"o.new_options.{field}.size() <= "
                  "chain_parameters.maximum_asset_whitelist_authorities")
        for account in opts.get(field) or ():
            ctx.state.require(account)
    if int(opts["flags"]) & DISABLE_FORCE_SETTLE and not int(old["flags"]) & DISABLE_FORCE_SETTLE:
        for settle in settle_orders_of(ctx.state, asset["id"]):
            cancel_settle_order(ctx, settle["id"])
    if int(opts["flags"]) & DISABLE_COLLATERAL_BIDDING \
            and not int(old["flags"]) & DISABLE_COLLATERAL_BIDDING:
        cancel_bids(ctx, asset["id"])
    if bitasset is not None and ext.get("skip_core_exchange_rate") is None \
            and not equal(old["core_exchange_rate"], opts["core_exchange_rate"]) \
            and not bitasset["asset_cer_updated"]:
        ctx.state.modify(bitasset["id"])["asset_cer_updated"] = True
    asset = ctx.state.modify(data["asset_to_update"])
    new = dict(opts, max_supply=int(opts["max_supply"]),
               max_market_fee=int(opts.get("max_market_fee", 0)))
    if ext.get("skip_core_exchange_rate") is not None:
        new["core_exchange_rate"] = old["core_exchange_rate"]
    asset["options"] = new
    if new_precision is not None:
        asset["precision"] = int(new_precision)
    return VOID


def asset_issue(ctx: ApplyContext, data: dict) -> list:
    """asset_issue (14): new supply to ``issue_to_account``, up to max_supply."""
    amount = data["asset_to_issue"]
    asset = _issued_by(ctx, amount["asset_id"], data["issuer"])
    fc_assert(not asset.get("bitasset_data_id"), "!a.is_market_issued()",
              "Cannot manually issue a market-issued asset.")
    value = amount_of(amount)
    if value <= 0:
        raise InvalidOperation("Issued amount must be positive")
    ctx.state.require(data["issue_to_account"])
    fc_assert(not int(asset["options"]["flags"]) & DISABLE_NEW_SUPPLY,
              "a.can_create_new_supply()", "Can not create new supply")
    fc_assert(is_authorized_asset(ctx.state, data["issue_to_account"], asset),
              "is_authorized_asset( d, *to_account, a )")
    supply = int(ctx.state.objects[asset["dynamic_asset_data_id"]]["current_supply"])
    if supply + value > int(asset["options"]["max_supply"]):
        raise InvalidOperation(f"Issuing {value} would exceed max_supply of {asset['symbol']}")
    adjust_supply(ctx.state, asset["id"], value)
    adjust_balance(ctx.state, data["issue_to_account"], asset["id"], value)
    return VOID


def asset_reserve(ctx: ApplyContext, data: dict) -> list:
    """asset_reserve (15): burn the payer's ``amount_to_reserve``."""
    amount = data["amount_to_reserve"]
    asset = ctx.state.require(amount["asset_id"])
    if asset.get("bitasset_data_id"):
        raise InvalidOperation(f"Cannot reserve {asset['symbol']} because it is a "
                               f"market-issued asset")
    value = amount_of(amount)
    if value <= 0:
        raise InvalidOperation("Reserved amount must be positive")
    fc_assert(is_authorized_asset(ctx.state, data["payer"], asset),
              "is_authorized_asset( d, *from_account, a )")
    adjust_balance(ctx.state, data["payer"], asset["id"], -value)
    adjust_supply(ctx.state, asset["id"], -value)
    return VOID


def asset_fund_fee_pool(ctx: ApplyContext, data: dict) -> list:
    """asset_fund_fee_pool (16): move core from ``from_account`` to the pool."""
    asset = ctx.state.require(data["asset_id"])
    value = amount_of(data)
    if value <= 0:
        raise InvalidOperation("Fee pool amount must be positive")
    adjust_balance(ctx.state, data["from_account"], CORE_ASSET, -value)
    ctx.state.modify(asset["dynamic_asset_data_id"])["fee_pool"] += value
    return VOID


def asset_update_issuer(ctx: ApplyContext, data: dict) -> list:
    """asset_update_issuer (48): the issuer (with its owner authority,
    protocol/authorities.py) hands the asset to ``new_issuer``."""
    state = ctx.state
    asset = state.require(data["asset_to_update"])
    fc_assert(state.find(data["new_issuer"]) is not None, "d.find(new_issuer)",
              "New issuer account does not exist")
    fc_assert(asset["issuer"] == data["issuer"], "o.issuer == a.issuer",
              f"Incorrect issuer for asset! ({data['issuer']} != {asset['issuer']})")
    state.modify(asset["id"])["issuer"] = data["new_issuer"]
    return VOID


def _claim_fees_evaluate(ctx: ApplyContext, data: dict) -> tuple:
    """asset_claim_fees' checks (``asset_claim_fees_evaluator::do_evaluate``),
    before the operation's own fee is converted: a fee paid in the asset
    whose ``accumulated_fees`` are claimed cannot be claimed by the same
    operation.  Returns ``(container asset id, own)``, ``own`` when the
    claim is of the container's own ``accumulated_fees``."""
    state = ctx.state
    claim = data["amount_to_claim"]
    ext = data.get("extensions")
    container_id = (ext.get("claim_from_asset_id") if isinstance(ext, dict) else None) \
        or claim["asset_id"]
    container = state.require(container_id)
    fc_assert(container["issuer"] == data["issuer"], "container_asset->issuer == o.issuer",
              "Asset fees may only be claimed by the issuer")
    bitasset = bitasset_of(state, container["id"])
    own = container["id"] == claim["asset_id"]
    fc_assert(own or (bitasset is not None
                      and bitasset["options"]["short_backing_asset"] == claim["asset_id"]),
              "container_asset->can_accumulate_fee(d,o.amount_to_claim)",
              f"Asset {container['symbol']} ({container['id']}) is not backed by asset "
              f"({claim['asset_id']}) and does not hold it as fees.")
    dyn = state.objects[container["dynamic_asset_data_id"]]
    amount = amount_of(claim)
    # asset_evaluator.cpp asset_claim_fees_evaluator::do_evaluate's texts, values
    # and formats
    values = {"a": container["symbol"], "id": container["id"], "fid": claim["asset_id"],
              "ddo": dict(dyn), "claim": dict(claim)}
    ddo = json.dumps(dyn, separators=(",", ":"))
    paid = json.dumps(claim, separators=(",", ":"))
    if own:
        fc_assert(amount <= int(dyn["accumulated_fees"]),
                  "o.amount_to_claim.amount <= container_ddo->accumulated_fees",
                  f"Attempt to claim more fees than have accumulated within asset "
                  f"{container['symbol']} ({container['id']}). Asset DDO: {ddo}. "
                  f"Fee claim: {paid}.", values,
                  "Attempt to claim more fees than have accumulated within asset ${a} "
                  "(${id}). Asset DDO: ${ddo}. Fee claim: ${claim}.")
    else:
        fc_assert(amount <= int(dyn.get("accumulated_collateral_fees", 0)),
                  "o.amount_to_claim.amount <= container_ddo->accumulated_collateral_fees",
                  f"Attempt to claim more backing-asset fees than have accumulated within asset "
                  f"{container['symbol']} ({container['id']}) backed by ({claim['asset_id']}). "
                  f"Asset DDO: {ddo}. Fee claim: {paid}.", values,
                  "Attempt to claim more backing-asset fees than have accumulated within "
                  "asset ${a} (${id}) backed by (${fid}). Asset DDO: ${ddo}. Fee claim: "
                  "${claim}.")
    return container["id"], own


def _claim_fees_apply(ctx: ApplyContext, data: dict, checked: tuple) -> list:
    """asset_claim_fees' changes (``asset_claim_fees_evaluator::do_apply``)."""
    state = ctx.state
    container_id, own = checked
    claim = data["amount_to_claim"]
    dyn = state.modify(state.objects[container_id]["dynamic_asset_data_id"])
    field = "accumulated_fees" if own else "accumulated_collateral_fees"
    dyn[field] = int(dyn[field]) - amount_of(claim)
    adjust_balance(state, data["issuer"], claim["asset_id"], amount_of(claim))
    return VOID


#: asset_claim_fees (43): the issuer takes ``amount_to_claim`` out of the
#: asset's ``accumulated_fees``, or, with ``claim_from_asset_id`` naming a
#: market-issued asset backed by the claimed asset, out of that asset's
#: ``accumulated_collateral_fees`` (margin call, force settlement and
#: settlement fund fees, BSIP 74/87).  In two phases: its checks see the
#: accumulated fees before its own fee is converted into them.
asset_claim_fees = PhasedEvaluator(_claim_fees_evaluate, _claim_fees_apply)


def asset_claim_pool(ctx: ApplyContext, data: dict) -> list:
    """asset_claim_pool (47): the issuer takes core out of the asset's fee
    pool."""
    state = ctx.state
    asset = state.require(data["asset_id"])
    fc_assert(asset["issuer"] == data["issuer"], "o.asset_id(db()).issuer == o.issuer",
              "Asset fee pool may only be claimed by the issuer")
    amount = amount_of(data["amount_to_claim"])
    dyn = state.objects[asset["dynamic_asset_data_id"]]
    fc_assert(amount <= int(dyn["fee_pool"]), "o.amount_to_claim.amount <= addo.fee_pool",
              "Attempt to claim more fees than is available")
    dyn = state.modify(asset["dynamic_asset_data_id"])
    dyn["fee_pool"] = int(dyn["fee_pool"]) - amount
    adjust_balance(state, data["issuer"], data["amount_to_claim"]["asset_id"], amount)
    return VOID
