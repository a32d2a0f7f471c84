"""The secondary indexes of the object store
(:class:`~nodeapi.chain.state.ObjectStore`), as graphene keeps them beside
its object tables (``account_index``, ``account_balance_index``,
``limit_order_index``, ``call_order_index``, ...): which fields of which
object kinds are indexed, and how an object enters and leaves them.

The indexes are attributes of the store (read-only for its callers), each
holding ids, never objects, so a copy-on-write change that keeps the
indexed fields needs no update:

- ``account_by_name``: name -> ``1.2.N``
- ``asset_by_symbol``: symbol -> ``1.3.N``
- ``balance_by_owner``: account id -> {asset id -> ``2.5.N``}
  (graphene ``account_balance_index`` by_account_asset)
- ``holders_by_asset``: asset id -> {account id -> ``2.5.N``}
- ``witness_by_account``: account id -> ``1.6.N``
- ``committee_member_by_account``: account id -> ``1.5.N``
- ``key_references``: public key string -> set of account ids using it in
  owner/active/memo (graphene ``account_member_index``)
- ``orders_by_seller``: account id -> set of ``1.7.N``
- ``orders_by_market``: (sell asset id, receive asset id) -> set of ``1.7.N``
- ``genesis_balances_by_owner``: address -> set of ``1.15.N``
- ``withdraw_permission_ids``: set of ``1.12.N`` (withdraw permissions)
- ``htlc_ids``: set of ``1.16.N`` (HTLCs)
- ``calls_by_asset``: debt asset id -> set of ``1.8.N`` (call orders)
- ``call_by_borrower``: (borrower, debt asset id) -> ``1.8.N``
  (graphene ``call_order_index`` by_account)
- ``settles_by_asset``: asset id -> set of ``1.4.N`` (force settlements)
- ``bids_by_asset``: debt asset id -> set of ``2.17.N`` (collateral bids)
- ``fee_sharing_balances``: (owner, asset id) -> ``1.13.N`` of type
  ``market_fee_sharing``
- ``by_kind``: ``space.type`` -> set of ids
  (:meth:`~nodeapi.chain.state.ObjectStore.ids_of_type`)
- ``books``: (sell asset id, receive asset id) -> the ordered list of its
  open orders (:meth:`~nodeapi.chain.state.ObjectStore.book`), built on
  demand and dropped when an order of the market changes.
- ``order_expiry``: the earliest expiration of an open order (or None),
  found on demand and dropped when any order changes.
"""


def order_market(order: dict) -> tuple:
    """``(sell asset id, receive asset id)`` of a 1.7 order: its key in
    ``orders_by_market`` and ``books``."""
    price = order["sell_price"]
    return price["base"]["asset_id"], price["quote"]["asset_id"]


#: an index entry read by the store itself, never guarded: the lazy
#: indexes of a fork (:mod:`nodeapi.chain.remote`) refuse readers an entry
#: not loaded yet, not the store keeping it
_entry = dict.get


def index_object(store, obj: dict, add: bool) -> None:
    """Enter ``obj`` (a chain object of ``store``, an
    :class:`~nodeapi.chain.state.ObjectStore`) into the store's indexes
    (``add``) or take it out; a changed 1.7 order also drops its market's
    cached book.  The store calls it for each object it creates, removes or
    rolls back, and :meth:`~nodeapi.chain.state.ObjectStore.reindex` after
    a change of an indexed field."""
    oid = obj["id"]
    kind = oid[: oid.rfind(".")]
    if add:
        store.by_kind.setdefault(kind, set()).add(oid)
    else:
        store.by_kind.get(kind, set()).discard(oid)
    if kind == "1.2":
        keys = {k for k, _ in obj["owner"]["key_auths"]}
        keys.update(k for k, _ in obj["active"]["key_auths"])
        keys.add(obj["options"]["memo_key"])
        if add:
            store.account_by_name[obj["name"]] = oid
            for k in keys:
                store.key_references.setdefault(k, set()).add(oid)
        else:
            store.account_by_name.pop(obj["name"], None)
            for k in keys:
                refs = _entry(store.key_references, k)
                if refs:
                    refs.discard(oid)
    elif kind == "2.5":
        owner, asset = obj["owner"], obj["asset_type"]
        if add:
            store.balance_by_owner.setdefault(owner, {})[asset] = oid
            store.holders_by_asset.setdefault(asset, {})[owner] = oid
        else:
            _entry(store.balance_by_owner, owner, {}).pop(asset, None)
            store.holders_by_asset.get(asset, {}).pop(owner, None)
    elif kind == "1.3":
        if add:
            store.asset_by_symbol[obj["symbol"]] = oid
        else:
            store.asset_by_symbol.pop(obj["symbol"], None)
    elif kind == "1.7":
        market = order_market(obj)
        store.books.pop(market, None)
        store.order_expiry = None
        if add:
            store.orders_by_seller.setdefault(obj["seller"], set()).add(oid)
            store.orders_by_market.setdefault(market, set()).add(oid)
        else:
            _entry(store.orders_by_seller, obj["seller"], set()).discard(oid)
            _entry(store.orders_by_market, market, set()).discard(oid)
    elif kind == "1.6":
        if add:
            store.witness_by_account[obj["witness_account"]] = oid
        else:
            store.witness_by_account.pop(obj["witness_account"], None)
    elif kind == "1.5":
        if add:
            store.committee_member_by_account[obj["committee_member_account"]] = oid
        else:
            store.committee_member_by_account.pop(obj["committee_member_account"], None)
    elif kind == "1.15":
        if add:
            store.genesis_balances_by_owner.setdefault(obj["owner"], set()).add(oid)
        else:
            _entry(store.genesis_balances_by_owner, obj["owner"], set()).discard(oid)
    elif kind == "1.8":
        debt = obj["call_price"]["quote"]["asset_id"]
        if add:
            store.calls_by_asset.setdefault(debt, set()).add(oid)
            store.call_by_borrower[(obj["borrower"], debt)] = oid
        else:
            _entry(store.calls_by_asset, debt, set()).discard(oid)
            store.call_by_borrower.pop((obj["borrower"], debt), None)
    elif kind in ("1.4", "2.17"):
        if kind == "1.4":
            index, asset = store.settles_by_asset, obj["balance"]["asset_id"]
        else:
            index, asset = store.bids_by_asset, obj["inv_swan_price"]["quote"]["asset_id"]
        if add:
            index.setdefault(asset, set()).add(oid)
        else:
            _entry(index, asset, set()).discard(oid)
    elif kind == "1.13" and obj.get("balance_type") == "market_fee_sharing":
        key = (obj["owner"], obj["balance"]["asset_id"])
        if add:
            store.fee_sharing_balances[key] = oid
        else:
            store.fee_sharing_balances.pop(key, None)
    elif kind in ("1.12", "1.16"):
        ids = store.withdraw_permission_ids if kind == "1.12" else store.htlc_ids
        if add:
            ids.add(oid)
        else:
            ids.discard(oid)
