"""Impacted accounts of every operation type 0-77: the accounts an operation
shows up in the history of.

Reference: bitshares-core libraries/chain/db_notify.cpp
``get_impacted_account_visitor`` / ``operation_get_impacted_accounts``.
Each type adds its fee payer plus what its family module's ``IMPACTED``
entry (:class:`~nodeapi.protocol.operations.common.Impacted`) names, and
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
    VIRTUAL_OPERATIONS, authority_accounts, fee_payer, kind_of, other_authorities, payer_of,
    required_authorities, required_of)
from nodeapi.protocol.operations.common import FEE_PAYER_ONLY
from nodeapi.protocol.operations.table import IMPACTED


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
    return _impacted(kind, op[1], None, result)


def payer_and_impacted(op: list, result: list | None = None) -> tuple[str, set]:
    """``(fee payer, impacted accounts)`` of ``op``: :func:`fee_payer` and
    :func:`impacted_accounts` with the operation's type read once.  Raises
    :class:`~nodeapi.protocol.errors.UnknownOperation` for a type that is
    not 0-77."""
    kind = kind_of(op)
    data = op[1]
    payer = payer_of(kind, data)
    return payer, _impacted(kind, data, payer, result)


def _impacted(kind: int, data: dict, payer: str | None, result: list | None) -> set:
    """:func:`impacted_accounts` of type ``kind`` with body ``data`` (its
    fee payer ``payer``, read here when None and needed)."""
    rule = IMPACTED.get(kind, FEE_PAYER_ONLY)
    if rule.only is not None:
        return rule.only(data)
    if payer is None:
        payer = payer_of(kind, data)
    out = {payer}
    if kind not in VIRTUAL_OPERATIONS:
        active, owner = required_of(kind, data, payer)
        out.update(active, owner)
    for field in rule.named:
        value = data.get(field)
        if value is not None:
            out.add(value)
    for field in rule.authorities:
        authority_accounts(data.get(field), out)
    for field in rule.blind:
        for item in data.get(field) or ():
            authority_accounts(item.get("owner"), out)
    if rule.proposed:
        _proposed_required(data, out)
    if rule.result and result and result[0] == 1 and isinstance(result[1], str):
        out.add(result[1])
    return out
