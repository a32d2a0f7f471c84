"""Limit orders in the matching engine: market fees, filling, culling and
cancelling 1.7.N orders, and the match of two limit orders.

Reference: bitshares-core libraries/chain/db_market.cpp
(``calculate_market_fee``, ``pay_market_fees``, ``fill_limit_order``,
``maybe_cull_small_order``, ``cancel_limit_order``,
``cleanup_and_remove_limit_order``,
``match_limit_normal_limit``, ``pay_order``) and db_balance.cpp
(``deposit_market_fee_vesting_balance``), with the hardforks of the
current chain (342 rounding, 555 taker culling, 604 fee refunds in the paid
asset, 1774 and core-1800 market fee sharing, BSIP 85 maker discount, BSIP
86 network share).

A market fee is split (``pay_market_fees``): the committee parameter
``market_fee_network_percent`` of it goes to the committee account; of the
rest, the asset's ``reward_percent`` goes to the seller's registrar (when
the asset's ``whitelist_market_fee_sharing`` is empty or holds it, and the
registrar may hold the asset), of which the seller's
``referrer_rewards_percentage`` goes to its referrer (when it differs from
the registrar and may hold the asset); the temporary account's shares go to
the committee.  Each share is deposited in the receiver's one
``market_fee_sharing`` vesting balance 1.13.N of that asset (instant
policy, created on the first share); what is left joins the asset's
``accumulated_fees``.
"""

from nodeapi.chain.evaluators.context import VOID, ApplyContext

from nodeapi.chain.balances import adjust_balance
from nodeapi.chain.errors import InvalidOperation
from nodeapi.chain.fees import charge_statistics
from nodeapi.protocol.fee_schedule import operation_fee
from nodeapi.protocol.asset import amount_of, asset, core, mul_down, mul_up, percent_of
from nodeapi.chain.market.take_profit import process_on_fill, unlink
from nodeapi.chain.vesting import INSTANT, deposit
from nodeapi.chain.whitelist import is_authorized_asset
from nodeapi.protocol.config import COMMITTEE_ACCOUNT, CORE_ASSET, TEMP_ACCOUNT
from nodeapi.protocol.flags import CHARGE_MARKET_FEE



def chain_percent(state, name: str) -> int:
    """A percent (of 10000) among the chain parameters' extensions
    (``market_fee_network_percent``, ``maker_fee_discount_percent``), 0
    when unset (graphene ``chain_parameters::get_*``)."""
    ext = state.objects["2.0.0"]["parameters"].get("extensions") or {}
    return int(ext.get(name) or 0) if isinstance(ext, dict) else 0


def deposit_market_fee_vesting_balance(state, account: str, asset_id: str, amount: int) -> None:
    """graphene ``deposit_market_fee_vesting_balance``: ``amount`` of
    ``asset_id`` into ``account``'s market_fee_sharing vesting balance
    (module docstring)."""
    if amount <= 0:
        return
    vb_id = state.fee_sharing_balances.get((account, asset_id))
    if vb_id is not None:
        deposit(state, vb_id, amount, 0)  # instant policy: no time involved
        return
    state.create("1.13", {"owner": account, "balance": asset(amount, asset_id),
                          "policy": [INSTANT, {}], "balance_type": "market_fee_sharing"})


def core_in_orders(state, seller: str, asset_id: str, delta: int) -> None:
    """Add ``delta`` satoshis (negative: take them off) to ``seller``'s
    statistics ``total_core_in_orders`` when ``asset_id`` is the core asset
    (1.3.0); nothing otherwise.  The core an account holds in limit orders,
    debt positions' collateral and collateral bids, counted in its voting stake
    (graphene ``account_statistics_object::total_core_in_orders``, changed
    where the market evaluators and db_market.cpp move core)."""
    if asset_id == CORE_ASSET and delta:
        stats = state.modify(state.objects[seller]["statistics"])
        stats["total_core_in_orders"] += delta


def calculate_market_fee(state, asset_id: str, amount: int, is_maker: bool) -> int:
    """graphene ``calculate_market_fee``: the issuer's cut of ``amount``."""
    asset = state.objects[asset_id]
    opts = asset["options"]
    if not int(opts.get("flags", 0)) & CHARGE_MARKET_FEE:
        return 0
    percent = int(opts.get("market_fee_percent", 0))
    ext = opts.get("extensions") or {}
    if not is_maker and isinstance(ext, dict) and ext.get("taker_fee_percent") is not None:
        percent = int(ext["taker_fee_percent"])
    fee = percent_of(amount, percent)
    return min(fee, int(opts.get("max_market_fee", 0)))


def record_fill(ctx: ApplyContext, order_id: str, account: str, pays: tuple, receives: tuple,
                fee: int, fill_price: dict, is_maker: bool, fee_asset: str | None = None) -> None:
    """The virtual fill_order (4) of an order (limit 1.7, call 1.8 or
    settle 1.4): ``pays``/``receives`` are ``(amount, asset id)``; the fee
    is in the received asset unless ``fee_asset`` says otherwise (a margin
    call's fee is collateral, graphene ``fill_order_operation``)."""
    ctx.virtual_ops.append(([4, {
        "fee": asset(fee, fee_asset or receives[1]),
        "order_id": order_id,
        "account_id": account,
        "pays": asset(pays[0], pays[1]),
        "receives": asset(receives[0], receives[1]),
        "fill_price": fill_price,
        "is_maker": is_maker,
    }], VOID))


def accumulate_fee(state, asset_id: str, fee_asset: str, amount: int) -> None:
    """graphene ``asset_object::accumulate_fee``: ``amount`` of
    ``fee_asset`` joins ``asset_id``'s ``accumulated_fees`` (its own asset)
    or ``accumulated_collateral_fees`` (its backing asset)."""
    if amount <= 0:
        return
    dyn = state.modify(state.objects[asset_id]["dynamic_asset_data_id"])
    field = "accumulated_fees" if fee_asset == asset_id else "accumulated_collateral_fees"
    dyn[field] = int(dyn.get(field, 0)) + amount


def pay_market_fees(state, recv_asset: str, receives: int, is_maker: bool,
                    seller: str | None = None, fee: int | None = None) -> int:
    """graphene ``pay_market_fees``: the market fee of ``receives`` of
    ``recv_asset`` received by ``seller`` (an account id, or None: no
    rewards), or ``fee`` when the caller computed it, shared as the module
    docstring says; returns the whole fee."""
    if fee is None:
        fee = calculate_market_fee(state, recv_asset, receives, is_maker)
    issuer_fees = fee
    if issuer_fees > 0:
        percent = chain_percent(state, "market_fee_network_percent")
        network = percent_of(issuer_fees, percent)
        if network > 0:
            deposit_market_fee_vesting_balance(state, COMMITTEE_ACCOUNT, recv_asset, network)
            issuer_fees -= network
    if issuer_fees <= 0:
        return fee
    reward = _pay_rewards(state, recv_asset, issuer_fees, seller) if seller else 0
    accumulate_fee(state, recv_asset, recv_asset, issuer_fees - reward)
    return fee


def _pay_rewards(state, recv_asset: str, issuer_fees: int, seller: str) -> int:
    """The registrar's and referrer's shares of ``issuer_fees`` (module
    docstring), deposited; returns their sum."""
    asset = state.objects[recv_asset]
    ext = asset["options"].get("extensions") or {}
    account = state.objects[seller]
    white_list = ext.get("whitelist_market_fee_sharing") if isinstance(ext, dict) else None
    if white_list and account["registrar"] not in white_list:
        return 0
    percent = int((ext.get("reward_percent") if isinstance(ext, dict) else 0) or 0)
    reward = percent_of(issuer_fees, percent)
    if reward <= 0 or not is_authorized_asset(state, account["registrar"], asset):
        return 0
    registrar_reward = reward
    registrar, referrer = account["registrar"], account["referrer"]
    registrar = COMMITTEE_ACCOUNT if registrar == TEMP_ACCOUNT else registrar  # core-1800
    referrer = COMMITTEE_ACCOUNT if referrer == TEMP_ACCOUNT else referrer
    if referrer != registrar:
        to_referrer = percent_of(reward, int(account["referrer_rewards_percentage"]))
        if to_referrer > 0 and is_authorized_asset(state, referrer, asset):
            registrar_reward -= to_referrer
            deposit_market_fee_vesting_balance(state, referrer, recv_asset, to_referrer)
    deposit_market_fee_vesting_balance(state, registrar, recv_asset, registrar_reward)
    return reward


def cancel_limit_order(state, order_id: str, virtual_ops, prefix: str) -> dict:
    """graphene ``database::cancel_limit_order``: refund the remainder and
    the deferred fee of 1.7.N and remove it; returns the refunded
    ``{"amount", "asset_id"}``.  When ``virtual_ops`` is a list (automatic
    cancellation) the limit_order_cancel fee is first taken from the
    deferred fee (booked on the seller's statistics; in the paid asset, the
    proportional part rounded up goes to its ``accumulated_fees``) and the
    virtual operation ``(op, result)`` is appended, its result the refund
    ``[2, {"amount", "asset_id"}]`` (graphene ``set_applied_operation_result``
    there).  ``prefix`` is the chain's key prefix (the fee's size)."""
    order = state.objects[order_id]
    seller = order["seller"]
    deferred = int(order.get("deferred_fee", 0))
    paid = dict(order.get("deferred_paid_fee") or core(0))
    paid["amount"] = amount_of(paid)
    vop = None
    if virtual_ops is not None:
        vop = [2, {"fee": core(0), "fee_paying_account": seller,
                   "order": order_id, "extensions": []}]
        if deferred > 0:
            cancel_fee = min(operation_fee(vop, state.objects["2.0.0"]["parameters"]["current_fees"],
                                           prefix), deferred)
            if cancel_fee > 0:
                charge_statistics(state, seller, cancel_fee)
                if paid["amount"] == 0:
                    vop[1]["fee"] = core(cancel_fee)
                else:
                    in_paid = -(-paid["amount"] * cancel_fee // deferred)
                    dyn = state.objects[paid["asset_id"]]["dynamic_asset_data_id"]
                    state.modify(dyn)["accumulated_fees"] += in_paid
                    paid["amount"] -= in_paid
                    vop[1]["fee"] = asset(in_paid, paid["asset_id"])
                deferred -= cancel_fee
    sold = order["sell_price"]["base"]["asset_id"]
    refunded = int(order["for_sale"])
    core_in_orders(state, seller, sold, -refunded)
    adjust_balance(state, seller, sold, refunded)
    if int((order.get("deferred_paid_fee") or {}).get("amount", 0)) == 0:
        adjust_balance(state, seller, CORE_ASSET, deferred)
    else:
        adjust_balance(state, seller, paid["asset_id"], paid["amount"])
        dyn = state.objects[paid["asset_id"]]["dynamic_asset_data_id"]
        state.modify(dyn)["fee_pool"] += deferred
    if vop is not None:
        virtual_ops.append((vop, [2, asset(refunded, sold)]))
    unlink(state, order)
    state.remove(order_id)
    return asset(refunded, sold)


def maybe_cull(ctx: ApplyContext, order_id: str) -> bool:
    """graphene ``maybe_cull_small_order``: cancel an order that would
    receive nothing for its remainder; True when it did."""
    order = ctx.state.objects[order_id]
    if mul_down(int(order["for_sale"]), order["sell_price"]["base"]["asset_id"],
                order["sell_price"]) == 0:
        cancel_limit_order(ctx.state, order_id, ctx.virtual_ops, ctx.prefix)
        return True
    return False


def fill_limit_order(ctx: ApplyContext, order_id: str, pays: int, receives: int, price: dict,
                     cull_if_small: bool, is_maker: bool) -> bool:
    """graphene ``fill_limit_order``: pay the seller, record the fill, book
    the deferred fee, run the order's take-profit action on what it
    received net of the market fee
    (:func:`~nodeapi.chain.market.take_profit.process_on_fill`); True when
    the order is gone.  A take-profit order created for an order that
    remains is linked to it both ways (``take_profit_order_id``)."""
    state = ctx.state
    order = state.objects[order_id]
    seller = order["seller"]
    sell_asset = order["sell_price"]["base"]["asset_id"]
    recv_asset = order["sell_price"]["quote"]["asset_id"]
    fee = pay_market_fees(state, recv_asset, receives, is_maker, seller)
    core_in_orders(state, seller, sell_asset, -pays)
    adjust_balance(state, seller, recv_asset, receives - fee)
    record_fill(ctx, order_id, seller, (pays, sell_asset), (receives, recv_asset), fee, price,
                is_maker)
    _book_deferred_fee(state, order, is_maker)
    new_take_profit = process_on_fill(ctx, order_id, receives - fee)
    order = state.objects[order_id]
    if pays == int(order["for_sale"]):
        unlink(state, order)
        state.remove(order_id)
        return True
    if new_take_profit is not None:
        state.modify(new_take_profit)["take_profit_order_id"] = order_id
    order = state.modify(order_id)
    order["for_sale"] = int(order["for_sale"]) - pays
    order["filled_amount"] = str(int(order.get("filled_amount", 0)) + pays)
    order["deferred_fee"] = 0
    order["deferred_paid_fee"] = dict(order["deferred_paid_fee"], amount=0)
    if new_take_profit is not None:
        order["take_profit_order_id"] = new_take_profit
    return maybe_cull(ctx, order_id) if cull_if_small else False


def _book_deferred_fee(state, order: dict, is_maker: bool) -> None:
    """graphene ``fill_limit_order``'s deferred fee: a maker gets
    ``maker_fee_discount_percent`` of it back (BSIP 85; paid in another
    asset: of the paid amount, and the same part of the core value goes
    back to that asset's fee pool); the rest of the paid amount joins that
    asset's ``accumulated_fees``, the rest of the core value is booked on
    the seller's statistics."""
    seller = order["seller"]
    discount = chain_percent(state, "maker_fee_discount_percent") if is_maker else 0
    deferred = int(order.get("deferred_fee", 0))
    paid = order.get("deferred_paid_fee") or {}
    paid_amount = int(paid.get("amount", 0))
    if paid_amount > 0:
        pool_refund = 0
        refund = percent_of(paid_amount, discount)
        if refund > 0:
            adjust_balance(state, seller, paid["asset_id"], refund)
            paid_amount -= refund
            pool_refund = percent_of(deferred, discount)
            deferred -= pool_refund
        dyn = state.modify(state.objects[paid["asset_id"]]["dynamic_asset_data_id"])
        dyn["accumulated_fees"] = int(dyn["accumulated_fees"]) + paid_amount
        dyn["fee_pool"] = int(dyn["fee_pool"]) + pool_refund
    elif deferred > 0:
        refund = percent_of(deferred, discount)
        if refund > 0:
            adjust_balance(state, seller, CORE_ASSET, refund)
            deferred -= refund
    charge_statistics(state, seller, deferred)


def match_limit_limit(ctx: ApplyContext, taker_id: str, maker_id: str) -> tuple:
    """graphene ``match_limit_normal_limit`` at the maker's price; returns
    ``(taker gone, maker gone)``.

    :raises InvalidOperation: neither is gone (graphene's
        ``result != match_result_type::none_filled`` assertion)."""
    state = ctx.state
    taker, maker = state.objects[taker_id], state.objects[maker_id]
    price = maker["sell_price"]
    x_asset, y_asset = price["quote"]["asset_id"], price["base"]["asset_id"]
    t_for_sale, m_for_sale = int(taker["for_sale"]), int(maker["for_sale"])
    cull_taker = False
    if t_for_sale <= mul_down(m_for_sale, y_asset, price):
        taker_receives = mul_down(t_for_sale, x_asset, price)
        if taker_receives == 0:
            return True, False  # paying something for nothing: culled by the caller
        maker_receives = mul_up(taker_receives, y_asset, price)
        cull_taker = True
    else:
        maker_receives = mul_down(m_for_sale, y_asset, price)
        taker_receives = mul_up(maker_receives, x_asset, price)
    taker_gone = fill_limit_order(ctx, taker_id, maker_receives, taker_receives, price, cull_taker, False)
    maker_gone = fill_limit_order(ctx, maker_id, taker_receives, maker_receives, price, True, True)
    if not (taker_gone or maker_gone):
        # graphene asserts it; a take-profit action topping up one of the
        # two orders during their own match can reach it
        raise InvalidOperation("Assert Exception: result != match_result_type::none_filled: ")
    return taker_gone, maker_gone
