"""The node context shared by every API set: what a connection can reach.

Built once by :func:`nodeapi.tap.makeService` and handed to the RPC site.
"""

from typing import Any, Optional

import attr


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ApiLimits:
    """The ``api-limit-*`` options: for each function, the largest ``limit``
    (number of items) a call may ask for; a larger one is refused with
    ``ApiError("limit can not be greater than N")``.  Defaults are graphene's
    ``application_options`` (libraries/app/include/graphene/app/
    application.hpp); wire-contract section 6.  Built from the options by
    :meth:`nodeapi.config.Options.api_limits`; immutable."""

    get_account_history: int = 100
    get_account_history_operations: int = 100
    get_relative_account_history: int = 100
    lookup_accounts: int = 1000
    get_full_accounts: int = 50
    get_account_balances: int = 1000
    get_assets: int = 101
    list_assets: int = 101
    get_objects: int = 100
    get_blocks: int = 100
    get_asset_holders: int = 100
    get_key_references: int = 100
    get_market_history: int = 200
    get_trade_history: int = 100
    get_trade_history_by_sequence: int = 100
    get_top_markets: int = 100


@attr.s(slots=True, auto_attribs=True)
class Node:
    """Everything the API sets read or drive.

    :ivar chain: the :class:`nodeapi.chain.chain.Chain`.
    :ivar history: the history plugin in use (provides
        :class:`nodeapi.applied.IAccountHistory`), or None.
    :ivar market_history: the ``market_history`` plugin
        (:class:`nodeapi.history.market_history.MarketHistory`), or None
        when it is not in ``plugins``.
    :ivar limits: the api-limit options.
    :ivar api_node_info: the operator's ``api-node-info`` string.
    :ivar enable_subscribe_to_all: the ``enable-subscribe-to-all`` option.
    :ivar peers: the network node (peers service) or None.
    :ivar witness: the witness service or None (debug API).
    :ivar options: the parsed daemon options, for ``get_config``.
    :ivar reactor: the reactor in use (``makeService`` resolves it once);
        the debug API returns to it between batches of blocks.
    """

    chain: Any
    history: Any = None
    market_history: Any = None
    limits: ApiLimits = attr.Factory(ApiLimits)
    api_node_info: str = ""
    enable_subscribe_to_all: bool = False
    peers: Any = None
    witness: Any = None
    options: dict = attr.Factory(dict)
    reactor: Optional[Any] = None
