"""The database API set (login accessor ``database``, access name
``database_api``): read access to the chain state plus callbacks.

Graphene reference: bitshares-core libraries/app/database_api.cpp, whose
header groups the functions in sections.  :class:`DatabaseApi` is assembled
from one section object per graphene section (a
:class:`~nodeapi.api.base.Section`), each in the module named for it
(wire-contract sections 5 and 6 list the functions clients use first); the
set's functions are the ``@api_function`` methods of its sections
(:attr:`~nodeapi.api.base.ApiSet.sections`):

==========================  ==========================  =========================
graphene section            module of                   section class, built with
                            ``nodeapi.api.database``
==========================  ==========================  =========================
Objects                     :mod:`~.objects`            ``Objects(node, subs)``
Subscriptions               :mod:`~.subscriptions`      ``Subscriptions(node,
                                                        session)`` (``subs``)
Blocks and transactions     :mod:`~.blocks`             ``Blocks(node)``
Globals                     :mod:`~.properties`         ``Globals(node)``
Keys                        :mod:`~.keys`               ``Keys(node)``
Accounts                    :mod:`~.accounts` (answer:  ``Accounts(node, subs)``
                            :mod:`~.full_accounts`)
Balances                    :mod:`~.balances`           ``Balances(node)``
Assets                      :mod:`~.assets`             ``Assets(node, subs)``
Markets / feeds             :mod:`~.markets` (a         ``Orders(node)``,
                            package: ``orders``,        ``Debt(node)``,
                            ``debt``, ``tickers``,      ``Tickers(node)``,
                            ``subscriptions``; decimal  ``MarketSubscriptions(
                            strings: :mod:`~.amounts`)  node, session, subs)``
Liquidity pools             :mod:`~.pools`              ``LiquidityPools(node,
                                                        subs)``
SameT funds, Credit offers  :mod:`~.funds`              ``Funds(node)``
and credit deals
Witnesses, Committee        :mod:`~.governance`         ``Governance(node)``
members, Workers, Votes
Authority / validation      :mod:`~.authority`          ``Authority(node)``
Withdrawals                 :mod:`~.withdrawals`        ``Withdrawals(node)``
HTLC                        :mod:`~.htlc`               ``Htlcs(node, subs)``
Proposed transactions,      :mod:`~.claims`             ``Claims(node)``
Blinded balances, Tickets
==========================  ==========================  =========================

``subs`` is the connection's :class:`~.subscriptions.Subscriptions`: the
sections that subscribe what they fetch are given it.  Sections never call
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
for it, with its section class listed in :attr:`DatabaseApi.sections` and
built by the property of that name.

Every function reads ``node.chain.state``, which is the head state plus the
pending transactions, like graphene's database during its pending session.
Bad arguments raise :class:`~nodeapi.errors.ApiError`
(:mod:`nodeapi.api.arguments`); limits are the ``api-limit-*`` options in
``node.limits``.
"""

from functools import cached_property

from nodeapi.api.base import ApiSet
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
    docstring), each made on first use with its dependencies: the node,
    the session, the connection's :attr:`subscriptions`
    (:class:`~nodeapi.api.database.subscriptions.Subscriptions`).  One
    instance per connection; :meth:`close` removes its chain observers."""

    name = "database"
    sections = {
        "subscriptions": Subscriptions, "objects": Objects, "blocks": Blocks,
        "globals": Globals, "keys": Keys, "accounts": Accounts, "balances": Balances,
        "assets": Assets, "orders": Orders, "debt": Debt, "tickers": Tickers,
        "market_subscriptions": MarketSubscriptions, "pools": LiquidityPools, "funds": Funds,
        "governance": Governance, "authority": Authority, "withdrawals": Withdrawals,
        "htlcs": Htlcs, "claims": Claims,
    }

    # -- the sections, each built on first use (a connection, an HTTP request,
    # often calls one function) with what it depends on -----------------------

    @cached_property
    def subscriptions(self) -> Subscriptions:
        return Subscriptions(self.node, self.session)

    @cached_property
    def objects(self) -> Objects:
        return Objects(self.node, self.subscriptions)

    @cached_property
    def blocks(self) -> Blocks:
        return Blocks(self.node)

    @cached_property
    def globals(self) -> Globals:
        return Globals(self.node)

    @cached_property
    def keys(self) -> Keys:
        return Keys(self.node)

    @cached_property
    def accounts(self) -> Accounts:
        return Accounts(self.node, self.subscriptions)

    @cached_property
    def balances(self) -> Balances:
        return Balances(self.node)

    @cached_property
    def assets(self) -> Assets:
        return Assets(self.node, self.subscriptions)

    @cached_property
    def orders(self) -> Orders:
        return Orders(self.node)

    @cached_property
    def debt(self) -> Debt:
        return Debt(self.node)

    @cached_property
    def tickers(self) -> Tickers:
        return Tickers(self.node)

    @cached_property
    def market_subscriptions(self) -> MarketSubscriptions:
        return MarketSubscriptions(self.node, self.session, self.subscriptions)

    @cached_property
    def pools(self) -> LiquidityPools:
        return LiquidityPools(self.node, self.subscriptions)

    @cached_property
    def funds(self) -> Funds:
        return Funds(self.node)

    @cached_property
    def governance(self) -> Governance:
        return Governance(self.node)

    @cached_property
    def authority(self) -> Authority:
        return Authority(self.node)

    @cached_property
    def withdrawals(self) -> Withdrawals:
        return Withdrawals(self.node)

    @cached_property
    def htlcs(self) -> Htlcs:
        return Htlcs(self.node, self.subscriptions)

    @cached_property
    def claims(self) -> Claims:
        return Claims(self.node)

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
