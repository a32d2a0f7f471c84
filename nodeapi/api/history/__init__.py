"""The history API set (login accessor ``history``, access name
``history_api``): graphene's ``history_api`` (bitshares-core
libraries/app/api.cpp; wire-contract section 6), assembled from one section
object per concept, each built with the node (the sections and their
modules: docs/DESIGN.rst, ``nodeapi/api/`` ``history/``).

Operation answers come from ``node.account_history()`` (an
:class:`nodeapi.applied.IAccountHistory`, which may return Deferreds;
without a history plugin they are ``[]``), market data from
``node.plugins["market_history"]``, pool histories from its ``pools``.  A
limit above the node's ``api-limit-*`` option is
:class:`~nodeapi.errors.ApiLimitExceeded`; a malformed argument
:class:`~nodeapi.errors.ApiError`.
"""

from nodeapi.api.base import ApiSet, section
from nodeapi.api.history.accounts import AccountHistory
from nodeapi.api.history.arguments import parse_operation_history_id
from nodeapi.api.history.blocks import BlockHistory
from nodeapi.api.history.markets import MarketHistory
from nodeapi.api.history.pools import PoolHistory

__all__ = ["HistoryApi", "parse_operation_history_id"]


class HistoryApi(ApiSet):
    """graphene ``history_api`` (module docstring).  One instance per
    connection; it keeps no state of its own."""

    name = "history"
    accounts = section(AccountHistory)
    blocks = section(BlockHistory)
    markets = section(MarketHistory)
    pools = section(PoolHistory)
