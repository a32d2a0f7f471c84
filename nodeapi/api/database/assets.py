"""database API, graphene section "Assets": assets by symbol or id, symbol
lookups and assets by issuer (a section of
:class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp section
"Assets" (``get_assets``, ``list_assets``, ``get_assets_by_issuer``,
``lookup_asset_symbols``).  Asset arguments accept a symbol or a ``1.3.N``
id.  These four answer graphene's ``extended_asset_object``
(:func:`extended_asset`); ``get_objects`` answers the asset object alone.
"""

from nodeapi.api.arguments import (
    check_count, check_limit, id_key, optional_bool, require_list, require_str,
    typed_id)
from nodeapi.api.base import Section, api_function
from nodeapi.api.lookup import find_asset, get_account, get_asset
from nodeapi.chain.market.positions import collateral_totals


def extended_asset(state, asset: dict | None) -> dict | None:
    """graphene ``extended_asset_object`` (database_api.cpp ``extend_asset``
    with the api_helper_indexes lookups, always on here): the asset with
    ``total_in_collateral`` and, for a market-issued asset,
    ``total_backing_collateral`` (:func:`collateral_totals`); None stays
    None."""
    if asset is None:
        return None
    held, backing = collateral_totals(state, asset["id"])
    out = dict(asset, total_in_collateral=held)
    if "bitasset_data_id" in asset:
        out["total_backing_collateral"] = backing
    return out


class Assets(Section):
    """Assets; what ``get_assets`` finds is subscribed through
    ``subscriptions``."""

    def __init__(self, node, subscriptions) -> None:
        super().__init__(node)
        self.subscriptions = subscriptions

    @api_function
    def get_asset_id_from_string(self, symbol_or_id):
        """The ``1.3.N`` id of an asset symbol or id; ``no such asset``."""
        return get_asset(self.chain.state, symbol_or_id)["id"]

    @api_function
    def get_assets(self, asset_symbols_or_ids, subscribe: bool | None = None):
        """``[asset | null]`` for symbols or ids, in order; found assets are
        subscribed.  At most ``api-limit-get-assets`` items."""
        items = require_list(asset_symbols_or_ids, "asset_symbols_or_ids")
        check_count(len(items), self.node.limits.get_assets, "assets")
        to_subscribe = self.subscriptions.whether_to_subscribe(
            optional_bool(subscribe, "subscribe"))
        result = []
        for item in items:
            asset = find_asset(self.chain.state, item)
            if asset is not None and to_subscribe:
                self.subscriptions.subscribe_to_item(asset["id"])
            result.append(extended_asset(self.chain.state, asset))
        return result

    @api_function
    def lookup_asset_symbols(self, symbols_or_ids):
        """``[asset | null]`` for symbols or ids (no subscription)."""
        items = require_list(symbols_or_ids, "symbols_or_ids")
        check_count(len(items), self.node.limits.get_assets, "assets")
        state = self.chain.state
        return [extended_asset(state, find_asset(state, item)) for item in items]

    @api_function
    def list_assets(self, lower_bound_symbol, limit: int):
        """Assets whose symbol is >= ``lower_bound_symbol``, by symbol, at
        most ``limit`` (<= ``api-limit-list-assets``)."""
        require_str(lower_bound_symbol, "lower_bound_symbol")
        check_limit(limit, self.node.limits.list_assets)
        state = self.chain.state
        symbols = sorted(s for s in state.asset_by_symbol if s >= lower_bound_symbol)
        return [extended_asset(state, state.objects[state.asset_by_symbol[s]])
                for s in symbols[:limit]]

    @api_function
    def get_asset_count(self):
        """Number of assets."""
        return len(self.chain.state.asset_by_symbol)

    @api_function
    def get_assets_by_issuer(self, issuer_name_or_id, start, limit: int):
        """Assets issued by the account, by id from ``start`` (``1.3.N``), at
        most ``limit`` (<= ``api-limit-get-assets``)."""
        check_limit(limit, self.node.limits.get_assets)
        issuer = get_account(self.chain.state, issuer_name_or_id)["id"]
        first = id_key(typed_id(start, "1.3", "start"))
        state = self.chain.state
        out = []
        for oid in state.ids_of_type("1.3."):
            if len(out) >= limit:
                break
            if id_key(oid) >= first and state.objects[oid]["issuer"] == issuer:
                out.append(extended_asset(state, state.objects[oid]))
        return out
