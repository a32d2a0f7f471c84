"""database API, graphene section "Accounts": accounts by name or id, name
lookups, references and full accounts (a section of
:class:`nodeapi.api.database.DatabaseApi`; the ``full_account`` answer is
:mod:`nodeapi.api.database.full_accounts`).

Graphene reference: bitshares-core libraries/app/database_api.cpp section
"Accounts" (``get_accounts``, ``get_full_accounts``, ``lookup_accounts``,
...) and libraries/app/include/graphene/app/api_objects.hpp
(``full_account``).  Account arguments accept a name or a ``1.2.N`` id.
"""

from nodeapi.api.arguments import (
    check_count, check_limit, id_key, optional_bool, require_list, require_name_or_id,
    require_str)
from nodeapi.api.base import Section, api_function
from nodeapi.api.database.full_accounts import cached_full_account
from nodeapi.api.lookup import find_account, get_account
from nodeapi.errors import ApiError

def not_subscribing(section, args: list) -> bool:
    """The ``shared`` rule (:func:`~nodeapi.api.base.api_function`) of a
    getter whose second argument is graphene's ``optional<bool>
    subscribe``: its reply may be shared unless this call subscribes
    (``get_whether_to_subscribe``: a subscribe callback is set and the
    argument is true, or left out with auto-subscription on).  A bad
    argument is not shared (the call itself reports it)."""
    subscribe = args[1] if len(args) > 1 else None
    try:
        return not section.subscriptions.whether_to_subscribe(
            optional_bool(subscribe, "subscribe"))
    except ApiError:
        return False


class Accounts(Section):
    """Accounts and full accounts; what is found is subscribed through
    ``subscriptions``."""

    def __init__(self, node, subscriptions) -> None:
        super().__init__(node)
        self.subscriptions = subscriptions

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
        check_count(len(names), self.node.limits.get_objects, "accounts")
        to_subscribe = self.subscriptions.whether_to_subscribe(
            optional_bool(subscribe, "subscribe"))
        for i, name in enumerate(names):
            require_name_or_id(name, f"account_names_or_ids[{i}]")
        result = []
        for name in names:
            account = find_account(self.chain.state, name)
            if account is not None and to_subscribe:
                self.subscriptions.subscribe_to_item(account["id"])
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
        check_count(len(names), self.node.limits.get_objects, "accounts")
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
        check_limit(limit, self.node.limits.lookup_accounts)
        if limit == 0:
            return []
        found = self.chain.state.accounts_by_name(lower_bound_name, limit)
        if limit == 1 and self.subscriptions.whether_to_subscribe(
                optional_bool(subscribe, "subscribe")):
            for _name, oid in found:
                self.subscriptions.subscribe_to_item(oid)
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

    @api_function(shared=not_subscribing)
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
        check_count(len(names), self.node.limits.get_full_accounts, "accounts")
        to_subscribe = self.subscriptions.whether_to_subscribe(
            optional_bool(subscribe, "subscribe"))
        list_limit = self.node.limits.get_full_accounts_lists
        subscribe_limit = self.node.limits.get_full_accounts_subscribe
        for i, name in enumerate(names):
            require_name_or_id(name, f"names_or_ids[{i}]")
        results = {}
        for name in names:
            account = find_account(self.chain.state, name)
            if account is None or name in results:
                continue
            if to_subscribe:
                self.subscriptions.subscribe_to_account(account["id"], subscribe_limit)
            results[name] = cached_full_account(self.node, account, list_limit)
        return [[name, results[name]] for name in sorted(results, key=lambda s: s.encode())]

    @api_function
    def get_top_voters(self, limit: int):
        """Account statistics of the accounts with the most active voting
        power (``vp_active`` descending, then id) counted at the last vote
        tally (``vote_tally_time`` >= the global ``last_vote_tally_time``),
        at most ``limit`` (<= ``api-limit-get-top-voters``, 200)."""
        check_limit(limit, self.node.limits.get_top_voters)
        state = self.chain.state
        tally = state.objects["2.1.0"]["last_vote_tally_time"]
        stats = [state.objects[state.objects[aid]["statistics"]]
                 for aid in state.ids_of_type("1.2.")]
        voters = [s for s in stats if s.get("vote_tally_time", 0) >= tally]
        voters.sort(key=lambda s: (-int(s.get("vp_active", 0)), id_key(s["id"])))
        return voters[:limit]
