"""graphene's ``full_account``: an account with everything belonging to it,
what ``get_full_accounts`` answers (:mod:`nodeapi.api.database.accounts`).

Graphene reference: bitshares-core libraries/app/database_api.cpp
``get_full_accounts`` and libraries/app/include/graphene/app/api_objects.hpp
(``full_account``).  Each list is read with the function of the section it
belongs to (vesting balances, votes, call orders, proposals, withdraw
permissions, HTLCs), over the chain state.  Lists of things this chain does
not model are present and empty, because no such object can exist here.
"""

from nodeapi.api.database.balances import vesting_balances_of
from nodeapi.api.database.claims import proposals_of
from nodeapi.api.database.governance import vote_objects
from nodeapi.api.database.htlc import htlcs_of
from nodeapi.api.database.listing import matching
from nodeapi.api.database.markets.debt import positions_of
from nodeapi.api.database.withdrawals import permissions_of
from nodeapi.chain.state import StateObject
from nodeapi.protocol.config import CORE_ASSET

_MORE_DATA = ("balances", "vesting_balances", "limit_orders", "call_orders", "settle_orders",
              "proposals", "assets", "withdraws_from", "withdraws_to", "htlcs_from",
              "htlcs_to")


def cached_full_account(node, account: dict, list_limit: int) -> StateObject:
    """:func:`full_account` of ``account`` over ``node.chain.state``, kept
    in ``node.api_answers.full_accounts`` (:mod:`nodeapi.api.answers`) and
    made again once the state changed (its ``version``)."""
    state = node.chain.state
    key = (account["id"], list_limit)
    stamp = (state, state.version)
    cache = node.api_answers.full_accounts
    answer = cache.get(key, stamp)
    if answer is None:
        answer = cache.put(key, stamp, StateObject(full_account(state, account, list_limit)))
    return answer


def cashback_balance(state, account: dict) -> dict:
    """``{"cashback_balance": vesting balance}`` when the account has a
    cashback vesting balance (``cashback_vb``), else ``{}`` (graphene
    leaves the optional out)."""
    vb = state.objects.get(account.get("cashback_vb") or "")
    return {} if vb is None else {"cashback_balance": vb}


def full_account(state, account: dict, list_limit: int) -> dict:
    """graphene ``full_account`` of ``account`` (its object): ``{account,
    statistics, registrar_name, referrer_name, lifetime_referrer_name,
    votes, cashback_balance?, balances, vesting_balances, limit_orders,
    call_orders, settle_orders, proposals, assets (ids of the assets it
    issued), withdraws_from, withdraws_to, htlcs_from, htlcs_to,
    more_data_available}``; each list holds at most ``list_limit`` items,
    ``more_data_available[list]`` true when there were more."""
    objects = state.objects
    aid = account["id"]
    more = dict.fromkeys(_MORE_DATA, False)

    def capped(items: list, name: str) -> list:
        if len(items) > list_limit:
            more[name] = True
            return items[:list_limit]
        return items

    assets = [oid for oid in state.ids_of_type("1.3.") if objects[oid]["issuer"] == aid]
    votes = vote_objects(state, list(account["options"].get("votes", [])))
    return {
        "account": account,
        "statistics": objects[account["statistics"]],
        "registrar_name": objects[account["registrar"]]["name"],
        "referrer_name": objects[account["referrer"]]["name"],
        "lifetime_referrer_name": objects[account["lifetime_referrer"]]["name"],
        "votes": votes,
        **cashback_balance(state, account),
        "balances": capped(state.balances_of(aid), "balances"),
        "vesting_balances": capped(vesting_balances_of(state, aid), "vesting_balances"),
        "limit_orders": capped(state.limit_orders_of(aid), "limit_orders"),
        "call_orders": capped(positions_of(state, aid, CORE_ASSET, list_limit + 1), "call_orders"),
        "settle_orders": capped(matching(state, "1.4", owner=aid), "settle_orders"),
        "proposals": capped(proposals_of(state, aid), "proposals"),
        "assets": capped(assets, "assets"),
        "withdraws_from": capped(permissions_of(state, "withdraw_from_account", aid),
                                 "withdraws_from"),
        "withdraws_to": capped(permissions_of(state, "authorized_account", aid), "withdraws_to"),
        "htlcs_from": capped(htlcs_of(state, "from", aid), "htlcs_from"),
        "htlcs_to": capped(htlcs_of(state, "to", aid), "htlcs_to"),
        "more_data_available": more,
    }
