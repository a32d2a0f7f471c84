"""Special authorities and buyback accounts: the account_create /
account_update extensions ``owner_special_authority``,
``active_special_authority`` and ``buyback_options``, and what maintenance
does with them.

Graphene reference: libraries/chain/account_evaluator.cpp (the extensions),
special_authority_evaluation.cpp, buyback.cpp
(``evaluate_buyback_account_options``), db_maint.cpp
(``update_top_n_authorities``, ``create_buyback_orders``), with every
hardfork passed.

- A ``top_holders_special_authority`` ``[1, {asset, num_top_holders}]``
  makes the account's owner or active authority, at each maintenance, the
  ``num_top_holders`` largest holders of ``asset`` (the account itself
  left out; ties by account id), weighted by their balances as
  graphene's ``vote_counter`` weighs votes; ``top_n_control_flags`` then
  has bit 1 (owner) / 2 (active).  An account with a special authority has
  a special authority object 2.14.N.
- A buyback account (``buyback_options``: ``asset_to_buy`` of
  ``asset_to_buy_issuer``, ``markets``) may hold only ``allowed_assets``
  (the markets and the asset to buy); a buyback object 2.15.N names the
  asset, whose ``buyback_account`` is set.  At each maintenance every
  other allowed holding of the account is offered for the asset at any
  price: the order (virtual limit_order_create, fee 0) matches what it can
  and the rest is cancelled (virtual limit_order_cancel).
"""

from nodeapi.protocol.ids import instance_number
from nodeapi.chain.errors import InvalidOperation
from nodeapi.chain.evaluators.context import set_asset_member
from nodeapi.errors import ChainError
from nodeapi.protocol.asset import asset, core

SPECIAL_AUTHORITY, BUYBACK = "2.14", "2.15"
TOP_HOLDERS = 1
NO_SPECIAL = [0, {}]
MAX_BUYBACK_MARKETS = 4  # GRAPHENE_DEFAULT_MAX_BUYBACK_MARKETS
TOP_N_OWNER, TOP_N_ACTIVE = 1, 2


def _ext(data: dict) -> dict:
    ext = data.get("extensions")
    return ext if isinstance(ext, dict) else {}


def check_extensions(state, data: dict) -> None:
    """account_create / account_update evaluation of the extensions: a
    top-holders asset exists; buyback options name the asset's issuer, an
    asset without buyback account yet and fewer than 4 markets."""
    ext = _ext(data)
    for field in ("owner_special_authority", "active_special_authority"):
        special = ext.get(field)
        if special is not None and int(special[0]) == TOP_HOLDERS:
            state.require(special[1]["asset"])
    bbo = ext.get("buyback_options")
    if bbo is not None:
        asset = state.require(bbo["asset_to_buy"])
        if asset["issuer"] != bbo["asset_to_buy_issuer"]:
            raise InvalidOperation("Incorrect asset issuer specified in buyback_account_options")
        if asset.get("buyback_account"):
            raise InvalidOperation("Cannot create buyback for asset which already has buyback")
        if len(bbo.get("markets") or ()) >= MAX_BUYBACK_MARKETS:
            raise InvalidOperation("Too many buyback markets")


def _has_special(acc: dict) -> bool:
    return (int(acc["owner_special_authority"][0]) != 0
            or int(acc["active_special_authority"][0]) != 0)


def _sa_object(state, account_id: str):
    for oid in state.ids_of_type(SPECIAL_AUTHORITY + "."):
        if state.objects[oid]["account"] == account_id:
            return oid
    return None


def apply_extensions(state, acc: dict, data: dict, created: bool) -> None:
    """Store the extensions on the account being created or updated
    (``acc``, already open for modification) and keep the special
    authority and buyback objects (account_create/update do_apply)."""
    ext = _ext(data)
    before = False if created else _has_special(acc)
    for field in ("owner_special_authority", "active_special_authority"):
        if ext.get(field) is not None:
            acc[field] = ext[field]
            acc["top_n_control_flags"] = 0
    after = _has_special(acc)
    if after and not before:
        state.create(SPECIAL_AUTHORITY, {"account": acc["id"]})
    elif before and not after:
        oid = _sa_object(state, acc["id"])
        if oid is not None:
            state.remove(oid)
    bbo = ext.get("buyback_options")
    if created and bbo is not None:
        allowed = set(bbo.get("markets") or ()) | {bbo["asset_to_buy"]}
        acc["allowed_assets"] = sorted(allowed, key=instance_number)
        state.create(BUYBACK, {"asset_to_buy": bbo["asset_to_buy"]})
        set_asset_member(state, bbo["asset_to_buy"], "buyback_account", acc["id"])


def update_top_n_authorities(state, vote_authority) -> None:
    """graphene ``update_top_n_authorities`` (db_maint.cpp): for each top
    holders authority (special authority objects in id order, the owner's
    before the active), the ``num_top_holders`` largest balances of the
    asset other than the account's own, in the ``by_asset_balance`` order
    (balance descending, ties by the owner's account id), weighted by
    ``vote_authority([(account, weight)])``, the maintenance's vote
    counter."""
    for oid in state.ids_of_type(SPECIAL_AUTHORITY + "."):
        account_id = state.objects[oid]["account"]
        for field, auth_field, flag in (("owner_special_authority", "owner", TOP_N_OWNER),
                                        ("active_special_authority", "active", TOP_N_ACTIVE)):
            special = state.objects[account_id][field]
            if int(special[0]) != TOP_HOLDERS:
                continue
            wanted = int(special[1]["num_top_holders"])
            if wanted == 0:
                continue
            asset_id = special[1]["asset"]
            # the by_asset_balance index: balance descending, then owner id
            holders = sorted(((int(b["balance"]), b["owner"])
                              for b in (state.objects[bid] for bid in state.ids_of_type("2.5."))
                              if b["asset_type"] == asset_id and b["owner"] != account_id),
                             key=lambda h: (-h[0], instance_number(h[1])))
            authority = vote_authority([(owner, bal) for bal, owner in holders[:wanted]])
            if authority is not None:
                acc = state.modify(account_id)
                acc[auth_field] = authority
                acc["top_n_control_flags"] = int(acc["top_n_control_flags"]) | flag


def create_buyback_orders(ctx) -> None:
    """graphene ``create_buyback_orders``: each buyback account offers its
    other allowed holdings for its asset; ``ctx`` an ApplyContext whose
    ``virtual_ops`` receive the orders (and cancels)."""
    from nodeapi.chain.evaluators.market import limit_order_cancel, limit_order_create

    state = ctx.state
    for oid in state.ids_of_type(BUYBACK + "."):
        asset_to_buy = state.objects[oid]["asset_to_buy"]
        account_id = state.objects[asset_to_buy].get("buyback_account")
        if not account_id:
            continue
        allowed = state.objects[account_id].get("allowed_assets")
        if allowed is None:
            continue
        for bal in list(state.balances_of(account_id)):
            sell_id, amount = bal["asset_type"], int(bal["balance"])
            if sell_id == asset_to_buy or amount == 0 or sell_id not in allowed:
                continue
            create = [1, {"fee": core(0), "seller": account_id,
                          "amount_to_sell": asset(amount, sell_id),
                          "min_to_receive": asset(1, asset_to_buy),
                          "expiration": "2106-02-07T06:28:15", "fill_or_kill": False,
                          "extensions": {}}]
            state.begin()
            at = len(ctx.virtual_ops)
            try:
                ctx.core_fee_paid, ctx.fee_paid = 0, core(0)
                result = limit_order_create(ctx, create[1])
                ctx.virtual_ops.insert(at, (create, result))
                order_id = result[1]
                if state.find(order_id) is not None:
                    cancel = [2, {"fee": core(0),
                                  "fee_paying_account": account_id, "order": order_id,
                                  "extensions": []}]
                    ctx.virtual_ops.append((cancel, limit_order_cancel(ctx, cancel[1])))
            except ChainError:
                # graphene logs and skips (e.g. the buyback account is blacklisted)
                state.rollback()
                del ctx.virtual_ops[at:]
                continue
            state.commit()
