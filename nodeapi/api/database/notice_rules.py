"""Who receives an object notice: graphene's routing rules of the subscribe
callback, shared by the node's own subscriptions
(:mod:`nodeapi.api.database.subscriptions`) and the gateway's merged ones
(:mod:`nodeapi.gateway.subscriptions`).

Graphene reference: bitshares-core libraries/chain/db_notify.cpp
(``get_relevant_accounts``, ``notify_changed_objects``) and
libraries/app/database_api.cpp (``handle_object_changed``,
``is_impacted_account``, ``get_objects``).

- :func:`relevant_accounts`: the accounts an object belongs to, by its
  type (the table of ``get_relevant_accounts``), on the wire form of the
  object.
- :func:`object_wanted`: ``handle_object_changed``'s test of one id for
  one connection: forced (created or removed objects with
  ``notify_remove_create``), subscribed, or one of the connection's
  subscribed accounts among the ``impacted`` accounts.  bitshares-core
  passes the accounts of the whole batch (every object created, changed or
  removed by the block), so a connection whose account is touched receives
  the whole batch.
- Account statistics are 2.6.N in bitshares-core and 2.7.N on a chain
  made with ``statistics_type`` 7 (:func:`nodeapi.chain.genesis.statistics_space`):
  a 2.7 object with an ``owner`` is read as statistics, one with a ``trx``
  as transaction history.
- :data:`NEVER_SUBSCRIBED`: the object types ``get_objects`` does not
  subscribe (operation history, account history).
"""

from nodeapi.protocol.authorities import authority_accounts
from nodeapi.protocol.impacted import impacted_accounts

#: ``get_objects`` never subscribes these (``operation_history`` 1.11,
#: ``account_history`` 2.9): database_api.cpp ``get_objects``.
NEVER_SUBSCRIBED = ("1.11.", "2.9.")

# type prefix -> the fields holding the account(s) it belongs to
_ACCOUNT_FIELDS = {
    "1.3.": ("issuer",), "1.4.": ("owner",), "1.5.": ("committee_member_account",),
    "1.6.": ("witness_account",), "1.7.": ("seller",), "1.8.": ("borrower",),
    "1.12.": ("withdraw_from_account", "authorized_account"), "1.13.": ("owner",),
    "1.14.": ("worker_account",), "1.17.": ("account",), "1.18.": ("account",),
    "1.20.": ("owner_account",), "1.21.": ("owner_account",),
    "1.22.": ("offer_owner", "borrower"), "2.5.": ("owner",), "2.6.": ("owner",),
    "2.7.": ("owner",),
    "2.9.": ("account",), "2.17.": ("bidder",), "2.18.": ("offer_owner", "borrower"),
}


def _prefix(oid: str) -> str:
    return oid[:oid.index(".", 2) + 1]


def _transaction_accounts(trx, out: set) -> None:
    """graphene ``transaction_get_impacted_accs``: the impacted accounts of
    every operation of ``trx``."""
    for op in (trx or {}).get("operations") or ():
        out |= impacted_accounts(op)


def relevant_accounts(obj: dict) -> set:
    """The account ids (``"1.2.N"``) object ``obj`` (wire form, with its
    ``id``) belongs to: db_notify.cpp ``get_relevant_accounts``.  An account
    is its own; an asset its issuer's; orders, balances, statistics,
    vesting balances, tickets, funds, offers their owner's; an HTLC its
    sender's and receiver's; a proposal or transaction the impacted
    accounts of its operations; an operation history entry its
    operation's; a custom authority its account's and those of its
    authority; a blinded balance the accounts of its owner authority.
    Objects of no account (globals, asset data, liquidity pools, balance
    objects 1.15, block summaries...) give an empty set, as does an object
    without an id."""
    oid = obj.get("id")
    if not isinstance(oid, str) or oid.count(".") != 2:
        return set()
    out = set()
    if oid.startswith("1.2."):
        out.add(oid)
        return out
    prefix = _prefix(oid)
    for field in _ACCOUNT_FIELDS.get(prefix, ()):
        value = obj.get(field)
        if isinstance(value, str):
            out.add(value)
    if prefix == "1.10.":
        _transaction_accounts(obj.get("proposed_transaction"), out)
    elif prefix == "1.11.":
        if obj.get("op"):
            out |= impacted_accounts(obj["op"])
    elif prefix == "2.7.":
        _transaction_accounts(obj.get("trx"), out)
    elif prefix == "1.16.":
        transfer = obj.get("transfer") or {}
        out.update(v for v in (transfer.get("from"), transfer.get("to")) if isinstance(v, str))
    elif prefix == "1.17.":
        authority_accounts(obj.get("auth"), out)
    elif prefix == "2.10.":
        authority_accounts(obj.get("owner"), out)
    return out


def batch_accounts(objects) -> set:
    """The accounts of a batch of objects (db_notify.cpp
    ``notify_changed_objects``: the union of :func:`relevant_accounts`);
    items that are not objects (removed ids) add nothing."""
    out = set()
    for obj in objects:
        if type(obj) is dict:
            out |= relevant_accounts(obj)
    return out


def batch_wanted(force: bool, subscribed_accounts, impacted) -> bool:
    """The part of database_api.cpp ``handle_object_changed``'s test that
    holds for a whole batch: forced (``notify_remove_create`` for created or
    removed objects) or ``is_impacted_account`` (one of the connection's
    ``get_full_accounts`` accounts among the batch's ``impacted`` accounts,
    :func:`batch_accounts`): then every object of the batch goes to it."""
    return force or bool(subscribed_accounts and not subscribed_accounts.isdisjoint(impacted))


def object_wanted(oid: str, force: bool, subscribed_ids, subscribed_accounts,
                  impacted) -> bool:
    """database_api.cpp ``handle_object_changed``'s test for one connection:
    whether the notice of object ``oid`` goes to it.

    :param force: ``notify_remove_create`` for a created or removed object
        (false for a changed one).
    :param subscribed_ids: the ids the connection subscribed (a set).
    :param subscribed_accounts: the accounts it subscribed with
        ``get_full_accounts`` (a set).
    :param impacted: the accounts the change concerns (bitshares-core: the
        whole batch's, :func:`batch_accounts`)."""
    return oid in subscribed_ids or batch_wanted(force, subscribed_accounts, impacted)
