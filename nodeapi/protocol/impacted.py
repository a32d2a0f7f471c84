"""Impacted accounts of every operation type 0-77: the accounts an operation
shows up in the history of.

Reference: bitshares-core libraries/chain/db_notify.cpp
``get_impacted_account_visitor`` / ``operation_get_impacted_accounts``.
Each type adds its fee payer plus the accounts in :data:`NAMED`, and
(docs/wire-contract.rst, "the accounts whose authority the operation needs")
every account whose active or owner authority a signed operation requires -
beyond db_notify.cpp that adds account_create's buyback issuer and
proposal_update's active/owner approvals; these add more:

- account_create (5) / account_update (6): the ``account_auths`` of the
  ``owner`` and ``active`` authorities they set;
- proposal_create (22): the active and owner accounts every proposed
  operation requires, and the ``account_auths`` of their other authorities;
- the blind transfers (39-41): the ``account_auths`` of the inputs' and
  outputs' owners;
- htlc_redeemed (51): ``from``, and ``to`` unless it is the redeemer (not the
  fee payer);
- credit_deal_expired (74): ``offer_owner`` and ``borrower`` (not the fee
  payer as such);
- custom_authority_create/update (54/55): the ``account_auths`` of
  ``auth`` / ``new_auth``.

account_create's new account is not known from the operation alone: its id
is the operation's result (``[1, "1.2.N"]``); pass ``result`` to
:func:`impacted_accounts` to include it, as the history plugins do.

The fee payer and required authorities are in
:mod:`nodeapi.protocol.authorities` (re-exported here).
"""

from nodeapi.protocol.authorities import (  # noqa: F401 (re-exported)
    VIRTUAL_OPERATIONS, authority_accounts, fee_payer, kind_of, other_authorities,
    required_authorities)

#: type -> fields naming other impacted accounts (optional ones may be absent)
NAMED = {
    0: ("to",), 5: ("referrer",), 7: ("account_to_list",), 11: ("new_issuer",),
    14: ("issue_to_account",), 25: ("authorized_account",), 26: ("authorized_account",),
    27: ("withdraw_from_account",), 28: ("authorized_account",), 32: ("owner",),
    38: ("to", "from"), 41: ("to",), 48: ("new_issuer",), 49: ("to",),
}

#: type -> fields holding authorities whose ``account_auths`` are impacted
_AUTHORITIES = {5: ("owner", "active"), 6: ("owner", "active"), 54: ("auth",),
                55: ("new_auth",)}

#: type -> fields holding lists of blind inputs/outputs (their ``owner``)
_BLIND = {39: ("outputs",), 40: ("inputs", "outputs"), 41: ("inputs",)}


def _proposed_required(data: dict, out: set) -> None:
    """proposal_create: what every proposed operation requires."""
    for wrapper in data.get("proposed_ops") or ():
        inner = wrapper["op"] if isinstance(wrapper, dict) else wrapper
        active, owner = required_authorities(inner)
        out.update(active, owner)
        for auth in other_authorities(inner):
            authority_accounts(auth, out)


def impacted_accounts(op: list, result: list | None = None) -> set:
    """Account ids whose history ``op`` belongs to (module docstring); with
    account_create's ``result`` (``[1, "1.2.N"]``) the new account is
    included.  Raises :class:`~nodeapi.protocol.errors.UnknownOperation` for a
    type that is not 0-77."""
    kind = kind_of(op)
    data = op[1]
    out = set()
    if kind == 51:
        out.add(data["from"])
        if data["to"] != data["redeemer"]:
            out.add(data["to"])
        return out
    if kind == 74:
        return {data["offer_owner"], data["borrower"]}
    out.add(fee_payer(op))
    if kind not in VIRTUAL_OPERATIONS:
        active, owner = required_authorities(op)
        out.update(active, owner)
    for field in NAMED.get(kind, ()):
        value = data.get(field)
        if value is not None:
            out.add(value)
    for field in _AUTHORITIES.get(kind, ()):
        authority_accounts(data.get(field), out)
    for field in _BLIND.get(kind, ()):
        for item in data.get(field) or ():
            authority_accounts(item.get("owner"), out)
    if kind == 22:
        _proposed_required(data, out)
    if kind == 5 and result and result[0] == 1 and isinstance(result[1], str):
        out.add(result[1])
    return out
