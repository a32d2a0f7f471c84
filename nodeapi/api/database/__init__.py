"""The database API set (login accessor ``database``, access name
``database_api``): read access to the chain state plus callbacks.

Graphene reference: bitshares-core libraries/app/database_api.cpp, whose
header groups the functions in sections.  :class:`DatabaseApi` declares
one :class:`~nodeapi.api.base.section` per graphene section, each in the
module named for it (wire-contract sections 5 and 6 list the functions
clients use first):

==========================  =====================================
graphene section            module of ``nodeapi.api.database``
==========================  =====================================
Objects                     :mod:`~.objects`
Subscriptions               :mod:`~.subscriptions`
Blocks and transactions     :mod:`~.blocks`
Globals                     :mod:`~.properties`
Keys                        :mod:`~.keys`
Accounts                    :mod:`~.accounts` (answer: :mod:`~.full_accounts`)
Balances                    :mod:`~.balances`
Assets                      :mod:`~.assets`
Markets / feeds             :mod:`~.markets` (a package; decimal strings:
                            :mod:`~.amounts`)
Liquidity pools             :mod:`~.pools`
SameT funds, Credit offers  :mod:`~.funds`
and credit deals
Witnesses, Committee        :mod:`~.governance`
members, Workers, Votes
Authority / validation      :mod:`~.authority`
Withdrawals                 :mod:`~.withdrawals`
HTLC                        :mod:`~.htlc`
Proposed transactions,      :mod:`~.claims`
Blinded balances, Tickets
==========================  =====================================

The sections that subscribe what they fetch are given the connection's
:class:`~.subscriptions.Subscriptions`.  Sections never call
each other: what two of them share is a module function over the chain
state in the module of the section it belongs to (``fetch_objects``,
``vesting_balances_of``, ``vote_objects``, ``positions_of``,
``proposals_of``, ``order_book``, ...), and the paged lookups by key and id
are :mod:`~nodeapi.api.database.listing`.  Answers kept across connections
(full accounts, order books) are the node's
(:mod:`nodeapi.api.answers`).

A function graphene adds to one of these sections goes into its module (a
section too large for one module is a package of that name with one module
per concept, like ``markets``); a new section gets a module of its own named
for it, and its section class is declared once in :class:`DatabaseApi`
(``name = section(Class, *needs)``).

Every function reads ``node.chain.state``, which is the head state plus the
pending transactions, like graphene's database during its pending session.
Bad arguments raise :class:`~nodeapi.errors.ApiError`
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
    assembled from one section object per graphene section (module
    docstring), each made on first use with what it names: the node, the
    session, the connection's :attr:`subscriptions`.  One instance per
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
