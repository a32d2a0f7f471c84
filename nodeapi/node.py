"""The node context shared by every API set: what a connection can reach.

Built once by the mode's maker (:mod:`nodeapi.modes`) and handed to the RPC site.
"""

from typing import Any, Optional

import attr
import coincurve

from nodeapi.api.answers import ApiAnswers


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ApiLimits:
    """The ``api-limit-*`` options: for each function, the largest ``limit``
    (number of items) a call may ask for; a larger one is refused with
    ``ApiError("limit can not be greater than N")``.  Defaults are graphene's
    ``application_options`` (libraries/app/include/graphene/app/
    application.hpp); wire-contract section 6.  Built from the options by
    :meth:`nodeapi.config.Options.api_limits`; immutable."""

    # graphene application_options, in its order
    get_account_history: int = 100
    get_account_history_operations: int = 100
    get_account_history_by_operations: int = 100
    get_relative_account_history: int = 100
    get_market_history: int = 200
    get_trade_history: int = 100
    get_trade_history_by_sequence: int = 100
    get_liquidity_pool_history: int = 101
    get_top_markets: int = 100
    get_assets: int = 101
    get_asset_holders: int = 100
    get_key_references: int = 100
    get_full_accounts: int = 50
    get_full_accounts_lists: int = 500
    get_full_accounts_subscribe: int = 100
    get_top_voters: int = 200
    get_limit_orders: int = 300
    get_limit_orders_by_account: int = 101
    get_account_limit_orders: int = 101
    get_grouped_limit_orders: int = 101
    get_order_book: int = 50
    get_call_orders: int = 300
    get_settle_orders: int = 300
    get_collateral_bids: int = 100
    lookup_accounts: int = 1000
    lookup_witness_accounts: int = 1000
    lookup_committee_member_accounts: int = 1000
    lookup_vote_ids: int = 1000
    list_htlcs: int = 100
    get_htlc_by: int = 100
    get_withdraw_permissions_by_giver: int = 101
    get_withdraw_permissions_by_recipient: int = 101
    get_tickets: int = 101
    get_liquidity_pools: int = 101
    get_samet_funds: int = 101
    get_credit_offers: int = 101
    get_storage_info: int = 101
    # this node's own (wire-contract section 6)
    get_account_balances: int = 1000
    list_assets: int = 101
    get_objects: int = 100
    get_blocks: int = 100


@attr.s(slots=True, auto_attribs=True)
class Node:
    """Everything the API sets read or drive.

    :ivar chain: the :class:`nodeapi.chain.chain.Chain`.
    :ivar plugins: ``{name: what the API sets read}`` of the plugins in
        ``--plugins`` (the ``api`` part of their
        :class:`~nodeapi.plugins.interface.PluginParts`): ``account_history``
        (:class:`~nodeapi.plugins.account_history.history.AccountHistory`),
        ``searchdb`` (its
        :class:`~nodeapi.plugins.searchdb.service.SearchDBService`, whose
        ``history`` the history set reads), ``market_history``
        (:class:`~nodeapi.plugins.market_history.history.MarketHistory`,
        its ``pools`` the liquidity pool history), ``grouped_orders``
        (:class:`~nodeapi.plugins.grouped_orders.orders.GroupedOrders`),
        ``custom_operations``
        (:class:`~nodeapi.plugins.custom_operations.storage.AccountStorage`),
        ``witness`` (:class:`~nodeapi.plugins.witness.service.WitnessService`, the debug
        API); read ``node.plugins.get(name)``.
    :ivar limits: the api-limit options.
    :ivar api_node_info: the operator's ``api-node-info`` string.
    :ivar enable_subscribe_to_all: the ``enable-subscribe-to-all`` option.
    :ivar peers: the network node (peers service) or None.
    :ivar options: the parsed daemon options, for ``get_config``.
    :ivar reactor: the reactor in use (``makeService`` resolves it once);
        the debug API returns to it between batches of blocks.
    :ivar node_identity: ``{"node_public_key", "node_id"}`` (hex of
        compressed secp256k1 public keys, made at start like graphene's
        ``node_id``), for network_node ``get_info``.
    :ivar debug_streams: the debug API's object stream (shared by every
        connection, as graphene's debug_witness plugin holds one).
    :ivar account_lookup: without a chain (indexer mode), ``fn(name) ->
        Deferred[account id | None]`` resolving account names for the
        history API (the upstream's), or None.
    :ivar output_dir: the ``api-output-dir`` option: the directory under
        which API calls that write a file create it (a plain file name
        given by the caller, :func:`nodeapi.api.arguments.output_path`),
        or None: such calls are refused.
    :ivar devnet: the :class:`nodeapi.devnet.control.Devnet` of a node
        started with ``--devnet`` (the devnet API set drives it), or None.
    :ivar api_answers: the answers the API sets keep for reuse across
        connections (:class:`nodeapi.api.answers.ApiAnswers`).
    :ivar gateway: with ``--upstream``, the
        :class:`~nodeapi.gateway.apis.Gateway` the forwarded sets use, or
        None.
    :ivar block_subscribers: WebSocket sessions with a block-applied
        callback (``set_block_applied_callback``) now: following nodes and
        wallets.
    """

    chain: Any
    plugins: dict = attr.Factory(dict)
    limits: ApiLimits = attr.Factory(ApiLimits)
    api_node_info: str = ""
    enable_subscribe_to_all: bool = False
    peers: Any = None
    options: dict = attr.Factory(dict)
    reactor: Optional[Any] = None
    debug_streams: dict = attr.Factory(dict)
    node_identity: dict = attr.Factory(lambda: new_node_identity())
    account_lookup: Optional[Any] = None
    devnet: Optional[Any] = None
    output_dir: Optional[str] = None
    api_answers: ApiAnswers = attr.Factory(ApiAnswers)
    gateway: Optional[Any] = None
    block_subscribers: int = 0

    def account_history(self):
        """The :class:`~nodeapi.applied.IAccountHistory` the history API
        answers from: the ``account_history`` plugin's, else the
        ``searchdb`` plugin's (None in ``only_save`` mode), else None.
        bitshares-core libraries/app/api.cpp ``history_api`` reads the
        elasticsearch plugin when it is enabled, else the account_history
        plugin's indexes (the two cannot run together here)."""
        history = self.plugins.get("account_history")
        if history is not None:
            return history
        searchdb = self.plugins.get("searchdb")
        return searchdb.history if searchdb is not None else None


def new_node_identity() -> dict:
    """A fresh ``{"node_public_key", "node_id"}``: two random compressed
    public keys in hex (graphene libraries/net/node.cpp makes ``node_id``
    at start and keeps ``node_public_key`` in its P2P configuration; this
    node has no P2P listener, so both are made per process)."""
    return {name: coincurve.PrivateKey().public_key.format(compressed=True).hex()
            for name in ("node_public_key", "node_id")}
