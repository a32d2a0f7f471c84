"""database API, graphene section "Accounts": accounts by name or id, name
lookups, references and full accounts (a mixin of
:class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp section
"Accounts" (``get_accounts``, ``get_full_accounts``, ``lookup_accounts``,
...) and libraries/app/include/graphene/app/api_objects.hpp
(``full_account``).  Account arguments accept a name or a ``1.2.N`` id.
Lists of things this chain does not model (call and settle orders,
proposals) are present in ``full_account`` and empty, because no such
object can exist here; withdraw permissions and HTLCs are listed as the
withdrawals and HTLC sections find them.
"""

from nodeapi.api.arguments import (
    api_limit, check_count, check_limit, id_key, optional_bool, require_list, require_name_or_id,
    require_str)
from nodeapi.api.base import api_function
from nodeapi.api.database.htlc import htlcs_of
from nodeapi.api.database.withdrawals import permissions_of
from nodeapi.api.database.listing import matching
from nodeapi.api.lookup import find_account, get_account
from nodeapi.chain.state import StateObject

# graphene api_limit_get_full_accounts_subscribe: accounts one connection can
# subscribe to through get_full_accounts.
FULL_ACCOUNTS_SUBSCRIBE = 100
#: full_account answers by (account id, list limit): (state, its version,
#: answer); a :class:`~nodeapi.chain.state.StateObject`, never changed once
#: made, so the RPC layer keeps its wire form too.
_FULL_ACCOUNTS: dict = {}
FULL_ACCOUNT_CACHE_SIZE = 1024

_MORE_DATA = ("balances", "vesting_balances", "limit_orders", "call_orders", "settle_orders",
              "proposals", "assets", "withdraws_from", "withdraws_to", "htlcs_from",
              "htlcs_to")


class AccountsMixin:
    """Accounts and full accounts."""

    @api_function
    def get_account_id_from_string(self, name_or_id):
        """The ``1.2.N`` id of an account name or id; ``no such account``."""
        return get_account(self.chain.state, name_or_id)["id"]

    @api_function
    def get_accounts(self, account_names_or_ids, subscribe: bool | None = None):
        """``[account | null]`` for names or ids, in order; found accounts are
        subscribed (graphene auto-subscription rules).  Every item must be a
        non-empty string (:func:`require_name_or_id`)."""
        names = require_list(account_names_or_ids, "account_names_or_ids")
        check_count(len(names), api_limit(self.node, "get_objects", 100), "accounts")
        to_subscribe = self._whether_to_subscribe(optional_bool(subscribe, "subscribe"))
        for i, name in enumerate(names):
            require_name_or_id(name, f"account_names_or_ids[{i}]")
        result = []
        for name in names:
            account = find_account(self.chain.state, name)
            if account is not None and to_subscribe:
                self._subscribe_to_item(account["id"])
            result.append(account)
        return result

    @api_function
    def get_account_by_name(self, name):
        """The account named ``name`` (exact name, not an id), or null."""
        state = self.chain.state
        oid = state.account_by_name.get(require_str(name, "name"))
        return state.objects.get(oid) if oid else None

    @api_function
    def lookup_account_names(self, account_names):
        """``[account | null]`` for exact names (ids are not looked up)."""
        names = require_list(account_names, "account_names")
        check_count(len(names), api_limit(self.node, "get_objects", 100), "accounts")
        state = self.chain.state
        out = []
        for name in names:
            oid = state.account_by_name.get(name) if isinstance(name, str) else None
            out.append(state.objects.get(oid) if oid else None)
        return out

    @api_function
    def lookup_accounts(self, lower_bound_name, limit: int, subscribe: bool | None = None):
        """``[[name, id], ...]`` of accounts whose name is >= ``lower_bound_name``,
        by name, at most ``limit`` (<= ``api-limit-lookup-accounts``).  With
        ``limit`` 1 the account found is subscribed (graphene)."""
        require_str(lower_bound_name, "lower_bound_name")
        check_limit(limit, api_limit(self.node, "lookup_accounts", 1000))
        if limit == 0:
            return []
        found = self.chain.state.accounts_by_name(lower_bound_name, limit)
        if limit == 1 and self._whether_to_subscribe(optional_bool(subscribe, "subscribe")):
            for _name, oid in found:
                self._subscribe_to_item(oid)
        return [[name, oid] for name, oid in found]

    @api_function
    def get_account_count(self):
        """Number of accounts."""
        return len(self.chain.state.account_by_name)

    @api_function
    def get_account_references(self, account_id_or_name):
        """Ids of the accounts naming this account in their owner or active
        authority (graphene ``account_member_index``), ascending."""
        account = get_account(self.chain.state, account_id_or_name)
        aid = account["id"]
        objects = self.chain.state.objects
        out = []
        for oid in self.chain.state.ids_of_type("1.2."):
            obj = objects[oid]
            members = [a for a, _ in obj["owner"]["account_auths"]]
            members += [a for a, _ in obj["active"]["account_auths"]]
            if aid in members:
                out.append(oid)
        return out

    # -- full accounts -----------------------------------------------------------

    def _cashback_balance(self, account: dict) -> dict:
        """``{"cashback_balance": vesting balance}`` when the account has a
        cashback vesting balance (``cashback_vb``), else ``{}`` (graphene
        leaves the optional out)."""
        vb = self.chain.state.objects.get(account.get("cashback_vb") or "")
        return {} if vb is None else {"cashback_balance": vb}

    def _cached_full_account(self, account: dict, list_limit: int) -> dict:
        """:meth:`_full_account`, computed once per state version."""
        state = self.chain.state
        key = (account["id"], list_limit)
        cached = _FULL_ACCOUNTS.get(key)
        if cached is not None and cached[0] is state and cached[1] == state.version:
            return cached[2]
        answer = StateObject(self._full_account(account, list_limit))
        if len(_FULL_ACCOUNTS) >= FULL_ACCOUNT_CACHE_SIZE:
            _FULL_ACCOUNTS.clear()
        _FULL_ACCOUNTS[key] = (state, state.version, answer)
        return answer

    def _full_account(self, account: dict, list_limit: int) -> dict:
        """graphene ``full_account`` of one account."""
        state = self.chain.state
        objects = state.objects
        aid = account["id"]
        more = dict.fromkeys(_MORE_DATA, False)

        def capped(items: list, name: str) -> list:
            if len(items) > list_limit:
                more[name] = True
                return items[:list_limit]
            return items

        assets = [oid for oid in state.ids_of_type("1.3.") if objects[oid]["issuer"] == aid]
        votes = self._vote_objects(list(account["options"].get("votes", [])))
        return {
            "account": account,
            "statistics": objects[account["statistics"]],
            "registrar_name": objects[account["registrar"]]["name"],
            "referrer_name": objects[account["referrer"]]["name"],
            "lifetime_referrer_name": objects[account["lifetime_referrer"]]["name"],
            "votes": votes,
            **self._cashback_balance(account),
            "balances": capped(state.balances_of(aid), "balances"),
            "vesting_balances": capped(self._vesting_balances_of(aid), "vesting_balances"),
            "limit_orders": capped(state.limit_orders_of(aid), "limit_orders"),
            "call_orders": capped(self._positions(aid, "1.3.0", list_limit + 1), "call_orders"),
            "settle_orders": capped(matching(state, "1.4", owner=aid), "settle_orders"),
            "proposals": capped(self.get_proposed_transactions(aid), "proposals"),
            "assets": capped(assets, "assets"),
            "withdraws_from": capped(permissions_of(state, "withdraw_from_account", aid),
                                     "withdraws_from"),
            "withdraws_to": capped(permissions_of(state, "authorized_account", aid),
                                   "withdraws_to"),
            "htlcs_from": capped(htlcs_of(state, "from", aid), "htlcs_from"),
            "htlcs_to": capped(htlcs_of(state, "to", aid), "htlcs_to"),
            "more_data_available": more,
        }

    @api_function
    def get_full_accounts(self, names_or_ids, subscribe: bool | None = None):
        """``[[input, full_account], ...]`` sorted by the input string (a
        graphene ``map<string, full_account>``); unknown inputs are left out.

        full_account: ``{account, statistics, registrar_name, referrer_name,
        lifetime_referrer_name, votes, balances, vesting_balances,
        limit_orders, call_orders, settle_orders, proposals, assets (ids of
        assets it issued), withdraws_from, withdraws_to, htlcs_from,
        htlcs_to, more_data_available}``; each list holds at most
        ``api-limit-get-full-accounts-lists`` (500) items.  At most
        ``api-limit-get-full-accounts`` inputs.  When subscribing, the
        account and the objects belonging to it are notified on change (up to
        100 accounts per connection)."""
        names = require_list(names_or_ids, "names_or_ids")
        check_count(len(names), api_limit(self.node, "get_full_accounts", 50), "accounts")
        to_subscribe = self._whether_to_subscribe(optional_bool(subscribe, "subscribe"))
        list_limit = api_limit(self.node, "get_full_accounts_lists", 500)
        subscribe_limit = api_limit(self.node, "get_full_accounts_subscribe",
                                    FULL_ACCOUNTS_SUBSCRIBE)
        for i, name in enumerate(names):
            require_name_or_id(name, f"names_or_ids[{i}]")
        results = {}
        for name in names:
            account = find_account(self.chain.state, name)
            if account is None or name in results:
                continue
            if to_subscribe and len(self._subscribed_accounts) < subscribe_limit:
                self._subscribed_accounts.add(account["id"])
                self._subscribe_to_item(account["id"])
            results[name] = self._cached_full_account(account, list_limit)
        return [[name, results[name]] for name in sorted(results, key=lambda s: s.encode())]

    @api_function
    def get_top_voters(self, limit: int):
        """Account statistics of the accounts with the most active voting
        power (``vp_active`` descending, then id) counted at the last vote
        tally (``vote_tally_time`` >= the global ``last_vote_tally_time``),
        at most ``limit`` (<= ``api-limit-get-top-voters``, 200)."""
        check_limit(limit, api_limit(self.node, "get_top_voters", 200))
        state = self.chain.state
        tally = state.objects["2.1.0"]["last_vote_tally_time"]
        stats = [state.objects[state.objects[aid]["statistics"]]
                 for aid in state.ids_of_type("1.2.")]
        voters = [s for s in stats if s.get("vote_tally_time", "") >= tally]
        voters.sort(key=lambda s: (-int(s.get("vp_active", 0)), id_key(s["id"])))
        return voters[:limit]
