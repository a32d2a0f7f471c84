"""The ``grouped_orders`` plugin: open limit orders grouped by price ranges
of a configured width, for ``orders_api.get_grouped_limit_orders``.

Graphene reference: bitshares-core libraries/plugins/grouped_orders/
grouped_orders_plugin.cpp (``limit_order_group_index``: the groups of one
market and width follow the orders as they are inserted, modified and
removed; the option ``tracked-groups``, a JSON array of widths in 1/10000,
default ``[10,100]``, 0 ignored) and libraries/protocol/asset.cpp (price
order and ``price * ratio_type``).  Keys are ordered by width ascending,
then minimum price descending (graphene ``limit_order_group_key``); prices
compare by base asset id, quote asset id, then base per quote.

After each applied block the orders it changed are taken out of their
groups and the ones still open put back, in id order (graphene sees the
same changes one by one as the evaluators make them, so group boundaries
can differ where several changes in one block touch the same range).
"""

from bisect import bisect_left, bisect_right

from zope.interface import implementer

from nodeapi.protocol.ids import instance_number
from nodeapi.applied import IBlockConsumer, ICheckpointed
from nodeapi.protocol.asset import amount_of, price_key, price_max, price_min, times_ratio
from nodeapi.protocol.config import GRAPHENE_100_PERCENT



def _sort_key(group: int, p: dict) -> tuple:
    b, q, v = price_key(p)
    return (group, -b, -q, -v)


@implementer(IBlockConsumer, ICheckpointed)
class GroupedOrders:
    """Limit order groups by ``(group, min_price)``: ``{min_price,
    max_price, total_for_sale}``.

    :param chain: the :class:`nodeapi.chain.chain.Chain` (read after each
        block: its changed ``1.7.N`` orders).
    :param groups: the tracked widths (``tracked-groups``)."""

    def __init__(self, chain, groups) -> None:
        self.chain = chain
        self.tracked_groups = sorted({int(g) for g in groups} - {0})
        self._keys: list = []   # sort keys, ascending
        self._groups: dict = {}  # sort key -> [min_price, max_price, total_for_sale]
        self._seen: dict = {}    # order id -> the version last grouped

    # -- the index -------------------------------------------------------------------

    def _set(self, group: int, min_price: dict, max_price: dict, total: int) -> None:
        key = _sort_key(group, min_price)
        if key not in self._groups:
            self._keys.insert(bisect_left(self._keys, key), key)
        self._groups[key] = [min_price, max_price, total]

    def _erase(self, key: tuple) -> None:
        del self._groups[key]
        del self._keys[bisect_left(self._keys, key)]

    def _same_market(self, key: tuple, group: int, p: dict) -> bool:
        b, q, _v = price_key(p)
        return key[0] == group and key[1] == -b and key[2] == -q

    def _insert(self, o: dict) -> None:
        sp, for_sale = o["sell_price"], int(o["for_sale"])
        base_id, quote_id = sp["base"]["asset_id"], sp["quote"]["asset_id"]
        for group in self.tracked_groups:
            if not self._groups:
                self._set(group, sp, sp, for_sale)
                continue
            capped, capped_max, capped_min = sp, False, False
            most, least = price_max(base_id, quote_id), price_min(base_id, quote_id)
            if price_key(sp) > price_key(most):
                capped, capped_max = most, True
            elif price_key(sp) < price_key(least):
                capped, capped_min = least, True
            i = bisect_left(self._keys, _sort_key(group, capped))
            check_previous = False
            if i == len(self._keys) or not self._same_market(self._keys[i], group, sp):
                check_previous = True
            else:
                key = self._keys[i]
                data = self._groups[key]
                update_max = False
                if price_key(capped) > price_key(data[1]):
                    update_max = True
                    top = times_ratio(data[0], GRAPHENE_100_PERCENT + group, GRAPHENE_100_PERCENT)
                    if price_key(capped) > price_key(top):
                        check_previous = True
                if not check_previous:
                    if capped_min and price_key(sp) < price_key(data[0]):
                        max_price, total = data[1], for_sale + data[2]
                        self._erase(key)
                        self._set(group, sp, max_price, total)
                    else:
                        if update_max or (capped_max and price_key(sp) > price_key(data[1])):
                            data[1] = sp
                        data[2] += for_sale
            if check_previous:
                if i == 0 or not self._same_market(self._keys[i - 1], group, sp):
                    self._set(group, sp, sp, for_sale)
                    continue
                key = self._keys[i - 1]
                data = self._groups[key]
                bottom = times_ratio(data[1], GRAPHENE_100_PERCENT, GRAPHENE_100_PERCENT + group)
                if price_key(capped) < price_key(bottom):
                    self._set(group, sp, sp, for_sale)
                elif capped_max and price_key(sp) >= price_key(data[0]):
                    if price_key(sp) > price_key(data[1]):
                        data[1] = sp
                    data[2] += for_sale
                else:
                    max_price, total = data[1], for_sale + data[2]
                    self._erase(key)
                    self._set(group, sp, max_price, total)

    def _remove(self, o: dict, remove_empty: bool = True) -> None:
        sp, for_sale = o["sell_price"], int(o["for_sale"])
        base_id, quote_id = sp["base"]["asset_id"], sp["quote"]["asset_id"]
        for group in self.tracked_groups:
            i = bisect_left(self._keys, _sort_key(group, sp))
            if i == len(self._keys) or not self._same_market(self._keys[i], group, sp):
                continue
            key = self._keys[i]
            data = self._groups[key]
            if price_key(data[1]) < price_key(sp) or data[2] < for_sale:
                continue
            if not remove_empty or data[2] > for_sale:
                data[2] -= for_sale
            else:
                self._erase(key)

    checkpoint_key = "grouped_orders"

    def checkpoint_records(self):
        """No records (``ICheckpointed``): the groups follow from the
        chain's orders, regrouped in id order on restore, as graphene builds
        this secondary index when its object database is loaded."""
        return []

    def checkpoint_usable(self, meta: dict) -> bool:
        """``ICheckpointed``: always True (:meth:`restore_checkpoint` regroups
        the chain's orders)."""
        return True

    def restore_checkpoint(self, meta: dict, records: list) -> None:
        """Regroup the chain's orders from scratch (also after a devnet
        revert, when groups of a later state are still held)."""
        self._keys, self._groups, self._seen = [], {}, {}
        orders = [o for oid, o in self.chain.state.objects.items() if oid.startswith("1.7.")]
        orders.sort(key=lambda o: instance_number(o["id"]))
        for order in orders:
            self._insert(order)
            self._seen[order["id"]] = order

    def block_applied(self, applied) -> None:
        """Regroup the orders the block changed (module text)."""
        self._regroup([oid for oid in self.chain.changed_objects_of_last_block()
                       if oid.startswith("1.7.")])

    def block_popped(self, applied) -> None:
        """A block popped by a fork switch: regroup every order whose
        version differs from the one last grouped (the state is back as
        before the block; graphene's undo database takes the groups back
        with the orders)."""
        objects = self.chain.state.objects
        ids = set(self._seen) | set(self.chain.state.ids_of_type("1.7."))
        self._regroup([oid for oid in ids if self._seen.get(oid) is not objects.get(oid)])

    def _regroup(self, changed: list) -> None:
        objects = self.chain.state.objects
        changed.sort(key=instance_number)
        for oid in changed:
            old, new = self._seen.pop(oid, None), objects.get(oid)
            if old is not None:
                self._remove(old, remove_empty=new is None)
            if new is not None:
                self._insert(new)
                self._seen[oid] = new

    # -- queries -------------------------------------------------------------------------

    def groups(self, group: int, base_id: str, quote_id: str, start, limit: int) -> list:
        """Groups of width ``group`` of orders selling ``base_id`` for
        ``quote_id``, highest minimum price first, from price ``start``
        (a price of this market or None), at most ``limit``."""
        top = price_max(base_id, quote_id)
        bottom = price_min(base_id, quote_id)
        if start is not None and amount_of(start["base"]) != 0:
            top = max(min(top, start, key=price_key), bottom, key=price_key)
        lo = bisect_left(self._keys, _sort_key(group, top))
        hi = bisect_right(self._keys, _sort_key(group, bottom))
        out = []
        for key in self._keys[lo:hi][:limit]:
            min_price, max_price, total = self._groups[key]
            out.append({"min_price": min_price, "max_price": max_price,
                        "total_for_sale": total})
        return out
