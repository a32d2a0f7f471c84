"""The asset API set (login accessor ``asset``, access name ``asset_api``):
who holds an asset.

Graphene reference: bitshares-core libraries/app/api.cpp ``asset_api``
(``get_asset_holders`` walks the ``by_asset_balance`` index: balance
descending, then account id, skipping zero balances).  One deliberate
difference: graphene's ``get_asset_holders_count`` and
``get_all_asset_holders`` report the number of balance objects minus one
(zero balances included); here the count is the number of accounts holding a
non-zero balance, i.e. exactly the entries ``get_asset_holders`` pages
through.
"""

from nodeapi.api.arguments import check_limit, id_key
from nodeapi.api.base import ApiSet, api_function
from nodeapi.api.lookup import get_asset
from nodeapi.errors import ApiError


class AssetApi(ApiSet):
    """graphene ``asset_api`` over the chain's account balances."""

    name = "asset"

    def _holders(self, asset_id: str) -> list:
        """Non-zero 2.5.N balances of ``asset_id``: largest first, then by
        account id."""
        state = self.node.chain.state
        balances = [state.objects[bid] for bid in state.holders_by_asset.get(asset_id, {}).values()]
        balances = [b for b in balances if b["balance"] != 0]
        balances.sort(key=lambda b: (-b["balance"], id_key(b["owner"])))
        return balances

    @api_function
    def get_asset_holders(self, asset, start: int, limit: int):
        """``[{name, account_id, amount}]``: holders of ``asset`` (symbol or
        id) from position ``start`` (0-based) in the order above, at most
        ``limit`` (<= ``api-limit-get-asset-holders``).  ``no such asset``
        for an unknown asset."""
        check_limit(limit, self.node.limits.get_asset_holders)
        if start < 0:
            raise ApiError(f"start must not be negative, got {start}")
        state = self.node.chain.state
        asset_id = get_asset(state, asset)["id"]
        return [{"name": state.objects[b["owner"]]["name"], "account_id": b["owner"],
                 "amount": b["balance"]}
                for b in self._holders(asset_id)[start:start + limit]]

    @api_function
    def get_asset_holders_count(self, asset):
        """Number of accounts holding a non-zero balance of ``asset``."""
        return len(self._holders(get_asset(self.node.chain.state, asset)["id"]))

    @api_function
    def get_all_asset_holders(self):
        """``[{asset_id, count}]`` for every asset, by id."""
        state = self.node.chain.state
        return [{"asset_id": oid, "count": len(self._holders(oid))}
                for oid in state.ids_of_type("1.3.")]
