"""The database API set (login accessor ``database``, access name
``database_api``): read access to the chain state plus callbacks.

Graphene reference: bitshares-core libraries/app/database_api.cpp and the
sections of its header, one :class:`~nodeapi.api.base.section` each (the
list, and where a new function or section goes: docs/DESIGN.rst,
``nodeapi/api/`` ``database/``; the functions clients use first:
docs/wire-contract.rst sections 5 and 6).

Every function reads ``node.chain.state``, the head state plus the pending
transactions, like graphene's database during its pending session.  Bad
arguments raise :class:`~nodeapi.errors.ApiError`
(:mod:`nodeapi.api.arguments`); limits are the ``api-limit-*`` options in
``node.limits``.
"""

from nodeapi.api.base import ApiSet, section
from nodeapi.api.database.accounts import Accounts
from nodeapi.api.database.assets import Assets
from nodeapi.api.database.authority import Authority
from nodeapi.api.database.balances import Balances
from nodeapi.api.database.blocks import Blocks
from nodeapi.api.database.claims import Claims
from nodeapi.api.database.funds import Funds
from nodeapi.api.database.governance import Governance
from nodeapi.api.database.htlc import Htlcs
from nodeapi.api.database.keys import Keys
from nodeapi.api.database.markets.debt import Debt
from nodeapi.api.database.markets.orders import Orders
from nodeapi.api.database.markets.subscriptions import MarketSubscriptions
from nodeapi.api.database.markets.tickers import Tickers
from nodeapi.api.database.objects import Objects
from nodeapi.api.database.pools import LiquidityPools
from nodeapi.api.database.properties import Globals
from nodeapi.api.database.subscriptions import Subscriptions
from nodeapi.api.database.withdrawals import Withdrawals


class DatabaseApi(ApiSet):
    """graphene ``database_api`` over :class:`nodeapi.chain.chain.Chain`,
    assembled from one section object per graphene section
    (docs/DESIGN.rst), each made on first use with what it names: the node,
    the session, the connection's :attr:`subscriptions`.  One instance per
    connection; :meth:`close` removes its chain observers."""

    name = "database"

    subscriptions = section(Subscriptions, "session")
    objects = section(Objects, "subscriptions")
    blocks = section(Blocks)
    globals = section(Globals)
    keys = section(Keys)
    accounts = section(Accounts, "subscriptions")
    balances = section(Balances)
    assets = section(Assets, "subscriptions")
    orders = section(Orders)
    debt = section(Debt)
    tickers = section(Tickers)
    market_subscriptions = section(MarketSubscriptions, "session", "subscriptions")
    pools = section(LiquidityPools, "subscriptions")
    funds = section(Funds)
    governance = section(Governance)
    authority = section(Authority)
    withdrawals = section(Withdrawals)
    htlcs = section(Htlcs, "subscriptions")
    claims = section(Claims)

    @property
    def chain(self):
        """The node's :class:`~nodeapi.chain.chain.Chain`."""
        return self.node.chain

    def close(self) -> None:
        """Connection closed: end every callback and subscription (if any
        section made the connection's subscriptions)."""
        subscriptions = self.__dict__.get("subscriptions")
        if subscriptions is not None:
            subscriptions.close()
