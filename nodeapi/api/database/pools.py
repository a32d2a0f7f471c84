"""database API, graphene section "Liquidity pools" (a section of
:class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp section
"Liquidity pools" and ``get_liquidity_pools_by_asset_x`` in
database_api_impl.hxx.  Pools are the ``1.19.N`` objects (``{id, asset_a,
asset_b, balance_a, balance_b, share_asset, taker_fee_percent,
withdrawal_fee_percent, virtual_value}``), answered as graphene's
``extended_liquidity_pool_object``: with ``statistics`` (the pool's ticker
``5.6.N`` of the ``market_history`` plugin) only when asked for and the
plugin has one.  Every limit is
``api-limit-get-liquidity-pools`` (101).  The lists are lookups over the
chain's pool objects (:mod:`~nodeapi.api.database.listing`).
"""

from nodeapi.api.arguments import id_key, optional_bool, require_list, typed_id
from nodeapi.api.base import Section, api_function
from nodeapi.api.database.listing import (
    matching, objects_of_kind, optional_limit, page, start_key)
from nodeapi.api.lookup import find_asset, get_account, get_asset
from nodeapi.errors import ApiError

POOL = "1.19"
#: graphene market_history plugin: ``liquidity_pool_ticker_object`` (5.6.N,
#: instance = the pool's instance).
TICKER = "5.6"


class LiquidityPools(Section):
    """Liquidity pools by id, asset, share asset and owner; pools fetched
    by id are subscribed through ``subscriptions``."""

    def __init__(self, node, subscriptions) -> None:
        super().__init__(node)
        self.subscriptions = subscriptions

    def _extend_pool(self, pool: dict, with_statistics) -> dict:
        if not optional_bool(with_statistics, "with_statistics"):
            return pool
        market_history = self.node.plugins.get("market_history")
        ticker = None if market_history is None else market_history.get_object(
            f"{TICKER}.{pool['id'].rsplit('.', 1)[1]}")
        return pool if ticker is None else dict(pool, statistics=ticker)

    def _pools_page(self, pools: list, limit, start_id, with_statistics) -> list:
        limit = optional_limit(limit, self.node.limits.get_liquidity_pools)
        start = start_key(start_id, POOL)
        return [self._extend_pool(p, with_statistics) for p in page(pools, start, limit)]

    @api_function
    def list_liquidity_pools(self, limit=None, start_id=None, with_statistics: bool | None = False):
        """Pools by id from ``start_id`` (``1.19.N``), at most ``limit``."""
        pools = objects_of_kind(self.chain.state, POOL)
        return self._pools_page(pools, limit, start_id, with_statistics)

    @api_function
    def get_liquidity_pools_by_asset_a(self, asset_symbol_or_id, limit=None, start_id=None,
                                       with_statistics: bool | None = False):
        """Pools whose ``asset_a`` is the asset, by id."""
        asset_id = get_asset(self.chain.state, asset_symbol_or_id)["id"]
        pools = matching(self.chain.state, POOL, asset_a=asset_id)
        return self._pools_page(pools, limit, start_id, with_statistics)

    @api_function
    def get_liquidity_pools_by_asset_b(self, asset_symbol_or_id, limit=None, start_id=None,
                                       with_statistics: bool | None = False):
        """Pools whose ``asset_b`` is the asset, by id."""
        asset_id = get_asset(self.chain.state, asset_symbol_or_id)["id"]
        pools = matching(self.chain.state, POOL, asset_b=asset_id)
        return self._pools_page(pools, limit, start_id, with_statistics)

    @api_function
    def get_liquidity_pools_by_one_asset(self, asset_symbol_or_id, limit=None, start_id=None,
                                         with_statistics: bool | None = False):
        """Pools holding the asset on either side, by id."""
        asset_id = get_asset(self.chain.state, asset_symbol_or_id)["id"]
        pools = [p for p in objects_of_kind(self.chain.state, POOL)
                 if asset_id in (p["asset_a"], p["asset_b"])]
        return self._pools_page(pools, limit, start_id, with_statistics)

    @api_function
    def get_liquidity_pools_by_both_assets(self, asset_symbol_or_id_a, asset_symbol_or_id_b,
                                           limit=None, start_id=None,
                                           with_statistics: bool | None = False):
        """Pools of the two assets (in either order), by id."""
        state = self.chain.state
        a = get_asset(state, asset_symbol_or_id_a)["id"]
        b = get_asset(state, asset_symbol_or_id_b)["id"]
        if id_key(a) > id_key(b):
            a, b = b, a
        pools = matching(state, POOL, asset_a=a, asset_b=b)
        return self._pools_page(pools, limit, start_id, with_statistics)

    @api_function
    def get_liquidity_pools(self, ids, subscribe: bool | None = None,
                            with_statistics: bool | None = False):
        """``[pool | null]`` for ``1.19.N`` ids, at most
        ``api-limit-get-liquidity-pools``; found pools are subscribed like
        ``get_objects``."""
        ids = require_list(ids, "ids")
        self._check_query_size(len(ids))
        return self._pools_subscribed(
            [self.chain.state.objects.get(typed_id(i, POOL, "liquidity pool id")) for i in ids],
            subscribe, with_statistics)

    @api_function
    def get_liquidity_pools_by_share_asset(self, asset_symbols_or_ids,
                                           subscribe: bool | None = None,
                                           with_statistics: bool | None = False):
        """``[pool | null]`` for share asset symbols or ids (null for an
        unknown asset or one that is no pool's share asset)."""
        assets = require_list(asset_symbols_or_ids, "asset_symbols_or_ids")
        self._check_query_size(len(assets))
        state = self.chain.state
        pools = []
        for name in assets:
            asset = find_asset(state, name)
            pool_id = asset.get("for_liquidity_pool") if asset is not None else None
            pools.append(state.objects.get(pool_id) if pool_id else None)
        return self._pools_subscribed(pools, subscribe, with_statistics)

    @api_function
    def get_liquidity_pools_by_owner(self, account_name_or_id, limit=None, start_id=None,
                                     with_statistics: bool | None = False):
        """Pools whose share asset the account issued, by share asset id
        from ``start_id`` (a ``1.3.N`` asset id)."""
        state = self.chain.state
        limit = optional_limit(limit, self.node.limits.get_liquidity_pools)
        owner = get_account(state, account_name_or_id)["id"]
        start = start_key(start_id, "1.3")
        out = []
        for asset in objects_of_kind(state, "1.3"):
            if len(out) >= limit:
                break
            pool_id = asset.get("for_liquidity_pool")
            if asset["issuer"] == owner and pool_id and id_key(asset["id"]) >= start:
                out.append(self._extend_pool(state.objects[pool_id], with_statistics))
        return out

    def _check_query_size(self, count: int) -> None:
        configured = self.node.limits.get_liquidity_pools
        if count > configured:
            raise ApiError(f"size of the querying list can not be greater than {configured}")

    def _pools_subscribed(self, pools: list, subscribe, with_statistics) -> list:
        to_subscribe = self.subscriptions.whether_to_subscribe(subscribe)
        out = []
        for pool in pools:
            if pool is not None:
                pool = self._extend_pool(pool, with_statistics)
                if to_subscribe:
                    self.subscriptions.subscribe_to_item(pool["id"])
                    if "statistics" in pool:
                        self.subscriptions.subscribe_to_item(pool["statistics"]["id"])
            out.append(pool)
        return out
