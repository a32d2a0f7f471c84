"""The database reads that subscribe what they return, and what each one
subscribes: bitshares-core 7.x libraries/app/database_api.cpp (every
function calling ``subscribe_to_item`` after ``get_whether_to_subscribe``).

==================================  ========  ==================================
function                            subscribe  subscribes
                                    argument
==================================  ========  ==================================
``get_objects(ids, subscribe)``     1         each object found, except
                                              operation history (1.11) and
                                              account history (2.9)
``get_accounts(names_or_ids, s)``   1         each account found
``get_full_accounts(names_or_ids,   1         each account found, as an
s)``                                          account too (its objects' changes
                                              reach the client), up to
                                              ``api_limit_get_full_accounts_
                                              subscribe`` accounts
``lookup_accounts(lower, limit,     2         with ``limit`` 1 only: the
s)``                                          account found
``get_assets(symbols_or_ids, s)``   1         each asset found
``get_liquidity_pools(ids, s,       1         each pool found, and its
with_statistics)``                            statistics object when asked
``get_liquidity_pools_by_share_     1         the same
asset(assets, s, with_stats)``
``get_htlc(id, s)``                 1         the HTLC found (through
                                              ``get_objects``)
==================================  ========  ==================================

``lookup_asset_symbols`` calls ``get_assets(..., false)``: it never
subscribes.  A read subscribes when the connection has a subscribe callback
and its ``subscribe`` argument is true, or left out (null) while
auto-subscription is on (``get_whether_to_subscribe``).
"""

from nodeapi.api.base import fc_bool, fc_int
from nodeapi.api.database.notice_rules import NEVER_SUBSCRIBED
from nodeapi.errors import ApiError

#: The largest number of accounts one connection subscribes through
#: ``get_full_accounts`` (bitshares-core's default
#: ``api_limit_get_full_accounts_subscribe``).
FULL_ACCOUNTS_SUBSCRIBE_LIMIT = 100


def _found_ids(answer) -> list:
    return [item["id"] for item in answer or ()
            if type(item) is dict and type(item.get("id")) is str]


def _objects(answer) -> tuple:
    return [oid for oid in _found_ids(answer) if not oid.startswith(NEVER_SUBSCRIBED)], []


def _plain(answer) -> tuple:
    return _found_ids(answer), []


def _full_accounts(answer) -> tuple:
    accounts = []
    for pair in answer or ():
        if type(pair) is list and len(pair) == 2 and type(pair[1]) is dict:
            account = pair[1].get("account")
            if type(account) is dict and type(account.get("id")) is str:
                accounts.append(account["id"])
    return [], accounts


def _lookup(answer) -> tuple:
    if answer and type(answer[0]) is list and len(answer[0]) == 2:
        return [answer[0][1]], []
    return [], []


def _pools(answer) -> tuple:
    ids = []
    for pool in answer or ():
        if type(pool) is dict and type(pool.get("id")) is str:
            ids.append(pool["id"])
            stats = pool.get("statistics")
            if type(stats) is dict and type(stats.get("id")) is str:
                ids.append(stats["id"])
    return ids, []


def _htlc(answer) -> tuple:
    return _found_ids([answer]), []


#: function -> (index of its ``subscribe`` argument, extractor of
#: ``(object ids, accounts)`` from its answer).
SUBSCRIBING_READS = {
    "get_objects": (1, _objects),
    "get_accounts": (1, _plain),
    "get_full_accounts": (1, _full_accounts),
    "lookup_accounts": (2, _lookup),
    "get_assets": (1, _plain),
    "get_liquidity_pools": (1, _pools),
    "get_liquidity_pools_by_share_asset": (1, _pools),
    "get_htlc": (1, _htlc),
}


def subscribe_argument(function: str, args: list):
    """The ``subscribe`` argument of a call of ``function`` (one of
    :data:`SUBSCRIBING_READS`): True, False or None (left out or null).

    :raises nodeapi.errors.ApiError: it is not a boolean as fc reads one."""
    index = SUBSCRIBING_READS[function][0]
    value = args[index] if len(args) > index else None
    return None if value is None else fc_bool(value, "subscribe")


def may_subscribe(function: str, args: list) -> bool:
    """Whether a call can subscribe anything at all (``lookup_accounts``
    only with ``limit`` 1)."""
    if function == "lookup_accounts":
        try:
            return len(args) > 1 and fc_int(args[1], "limit") == 1
        except ApiError:
            return False
    return True


def with_subscribe(function: str, args: list) -> list:
    """``args`` with the ``subscribe`` argument true (padded with nulls
    before it), as the gateway sends a subscribing read upstream."""
    index = SUBSCRIBING_READS[function][0]
    out = list(args) + [None] * max(0, index + 1 - len(args))
    out[index] = True
    return out


def items_of(function: str, args: list, held) -> int:
    """The most subscription items (:mod:`nodeapi.api.budget`) a
    subscribing call of ``function`` with ``args`` may add to a client
    holding the ids ``held``: each id or name it names that is not held
    (never operation or account history), two per liquidity pool with its
    statistics, one for ``lookup_accounts`` (limit 1) and ``get_htlc``.
    Arguments of the wrong shape count nothing (the upstream refuses them)."""
    if function in ("lookup_accounts", "get_htlc"):
        return 1
    named = args[0] if args and type(args[0]) is list else []
    fresh = {x for x in named if type(x) is str and x not in held}
    if function == "get_objects":
        return len([x for x in fresh if not x.startswith(NEVER_SUBSCRIBED)])
    if function.startswith("get_liquidity_pools"):
        return 2 * len({x for x in named if type(x) in (str, int)})
    return len(fresh)


def subscribed_by(function: str, answer) -> tuple:
    """``(object ids, accounts)`` a subscribing call of ``function``
    subscribes, from its ``answer`` (wire JSON)."""
    return SUBSCRIBING_READS[function][1](answer)


def without_subscribe(function: str, args: list) -> list:
    """``args`` with a true ``subscribe`` argument made false (a read that
    subscribes nothing for its client, forwarded: the answer is the same).
    An argument that is no boolean is left for the upstream to refuse."""
    index = SUBSCRIBING_READS[function][0]
    if len(args) <= index or args[index] is None:
        return args
    try:
        if not fc_bool(args[index], "subscribe"):
            return args
    except ApiError:
        return args
    out = list(args)
    out[index] = False
    return out
