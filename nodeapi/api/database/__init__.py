"""The database API set (login accessor ``database``, access name
``database_api``): read access to the chain state plus callbacks.

Graphene reference: bitshares-core libraries/app/database_api.cpp, whose
header groups the functions in sections; :class:`DatabaseApi` is composed of
one mixin per section, each in the module named for it (wire-contract
sections 5 and 6 list the functions clients use first):

==========================  =====================================================
graphene section            module of ``nodeapi.api.database``
==========================  =====================================================
Objects                     :mod:`~nodeapi.api.database.objects`
Subscriptions               :mod:`~nodeapi.api.database.subscriptions`
Blocks and transactions     :mod:`~nodeapi.api.database.blocks`
Globals                     :mod:`~nodeapi.api.database.properties`
Keys                        :mod:`~nodeapi.api.database.keys`
Accounts                    :mod:`~nodeapi.api.database.accounts`
Balances                    :mod:`~nodeapi.api.database.balances`
Assets                      :mod:`~nodeapi.api.database.assets`
Markets / feeds             :mod:`~nodeapi.api.database.markets` (a package:
                            orders, collateralized debt, tickers,
                            subscriptions; decimal strings:
                            :mod:`~nodeapi.api.database.amounts`)
Liquidity pools             :mod:`~nodeapi.api.database.pools`
SameT funds, Credit offers  :mod:`~nodeapi.api.database.funds`
and credit deals
Witnesses, Committee        :mod:`~nodeapi.api.database.governance`
members, Workers, Votes
Authority / validation      :mod:`~nodeapi.api.database.authority`
Withdrawals                 :mod:`~nodeapi.api.database.withdrawals`
HTLC                        :mod:`~nodeapi.api.database.htlc`
Proposed transactions,      :mod:`~nodeapi.api.database.claims`
Blinded balances, Tickets
==========================  =====================================================

Paged lookups by key and id shared by these sections:
:mod:`~nodeapi.api.database.listing`.

A function graphene adds to one of these sections goes into its module (a
section too large for one module is a package of that name with one module
per concept, like ``markets``); a new section gets a module of its own named
for it, and a mixin here.

Every function reads ``node.chain.state``, which is the head state plus the
pending transactions, like graphene's database during its pending session.
Bad arguments raise :class:`~nodeapi.errors.ApiError`
(:mod:`nodeapi.api.arguments`); limits are the ``api-limit-*`` options in
``node.limits``.
"""

from nodeapi.api.base import ApiSet
from nodeapi.api.database.accounts import AccountsMixin
from nodeapi.api.database.assets import AssetsMixin
from nodeapi.api.database.authority import AuthorityMixin
from nodeapi.api.database.balances import BalancesMixin
from nodeapi.api.database.blocks import BlocksMixin
from nodeapi.api.database.claims import ClaimsMixin
from nodeapi.api.database.funds import FundsMixin
from nodeapi.api.database.governance import GovernanceMixin
from nodeapi.api.database.htlc import HtlcMixin
from nodeapi.api.database.keys import KeysMixin
from nodeapi.api.database.markets import MarketsMixin
from nodeapi.api.database.objects import ObjectsMixin
from nodeapi.api.database.pools import LiquidityPoolsMixin
from nodeapi.api.database.properties import PropertiesMixin
from nodeapi.api.database.subscriptions import SubscriptionsMixin
from nodeapi.api.database.withdrawals import WithdrawalsMixin


class DatabaseApi(SubscriptionsMixin, ObjectsMixin, BlocksMixin, PropertiesMixin, KeysMixin,
                  AccountsMixin, BalancesMixin, AssetsMixin, MarketsMixin,
                  LiquidityPoolsMixin, FundsMixin, GovernanceMixin, AuthorityMixin,
                  WithdrawalsMixin, HtlcMixin, ClaimsMixin, ApiSet):
    """graphene ``database_api`` over :class:`nodeapi.chain.chain.Chain`
    (see the module docstring for the sections).  One instance per
    connection; :meth:`close` removes its chain observers."""

    name = "database"

    def __init__(self, node, session) -> None:
        super().__init__(node, session)
        self._init_subscriptions()
        self._init_market_subscriptions()

    @property
    def chain(self):
        """The node's :class:`~nodeapi.chain.chain.Chain` (every section reads it)."""
        return self.node.chain
