"""Fee payer, required authorities and impacted accounts of operations.

Reference: bitshares-core

- ``operation_get_required_authorities`` (libraries/protocol/operations.cpp):
  the fee payer always needs its active authority, then each operation's
  ``get_required_active_authorities`` / ``get_required_owner_authorities`` /
  ``get_required_authorities`` (other authorities, e.g. balance_claim's key);
- ``get_impacted_account_visitor`` (libraries/chain/db_notify.cpp): the
  accounts an operation shows up in the history of.  nodeapi's impacted set
  is the fee payer, every account whose authority is required, the accounts
  the operation names (to, account_to_list, issue_to_account, new_issuer,
  referrer, custom's required_auths) and the ``account_auths`` of the
  authorities it sets (wire-contract.md section 8).

account_create's new account is not known from the operation alone: its id
is the operation's result (``[1, "1.2.N"]``); pass ``result`` to
:func:`impacted_accounts` to include it, as the chain and history plugins do.
"""

from nodeapi.protocol.errors import UnknownOperation
from nodeapi.protocol.operations import operation_type

_FEE_PAYER = {
    0: "from", 1: "seller", 2: "fee_paying_account", 4: "account_id", 5: "registrar", 6: "account",
    7: "authorizing_account", 8: "account_to_upgrade", 10: "issuer", 11: "issuer",
    14: "issuer", 15: "payer", 16: "from_account", 35: "payer", 37: "deposit_to_account",
}

# operation type -> fields naming other impacted accounts
_NAMED = {0: ("to",), 5: ("referrer",), 7: ("account_to_list",), 11: ("new_issuer",),
          14: ("issue_to_account",)}


def _kind(op: list) -> int:
    kind = operation_type(op[0])
    if kind not in _FEE_PAYER:
        raise UnknownOperation(f"Operation type {kind} is not supported by this node's "
                               "authority rules")
    return kind


def fee_payer(op: list) -> str:
    """The account id paying the fee of ``[type, {...}]`` (graphene
    ``operation::fee_payer``); raises :class:`UnknownOperation`."""
    return op[1][_FEE_PAYER[_kind(op)]]


def _is_owner_update(data: dict) -> bool:
    ext = data.get("extensions")
    return data.get("owner") is not None or (
        isinstance(ext, dict) and ext.get("owner_special_authority") is not None)


def required_authorities(op: list) -> tuple[set, set]:
    """``(active account ids, owner account ids)`` whose authority ``op``
    needs, exactly as graphene's ``operation_get_required_authorities``: the
    fee payer is always in ``active``; account_update changing the owner
    (or the owner special authority) also needs the owner authority;
    account_create with buyback options needs the asset issuer's active
    authority; custom needs its ``required_auths``.  (An owner signature
    also satisfies an active requirement; see ``verify_authority``.)"""
    kind = _kind(op)
    data = op[1]
    active = {data[_FEE_PAYER[kind]]}
    owner = set()
    if kind == 6 and _is_owner_update(data):
        owner.add(data["account"])
    elif kind == 5:
        ext = data.get("extensions")
        buyback = ext.get("buyback_options") if isinstance(ext, dict) else None
        if buyback:
            active.add(buyback["asset_to_buy_issuer"])
    elif kind == 35:
        active.update(data.get("required_auths") or ())
    return active, owner


def other_authorities(op: list) -> list:
    """Authorities ``op`` needs besides accounts' (graphene
    ``get_required_authorities``): for balance_claim the authority
    ``{threshold 1, balance_owner_key: 1}``; empty for the others."""
    if operation_type(op[0]) == 37:
        return [{"weight_threshold": 1, "account_auths": [],
                 "key_auths": [[op[1]["balance_owner_key"], 1]], "address_auths": []}]
    return []


def _authority_accounts(auth, out: set) -> None:
    if auth:
        for pair in auth.get("account_auths") or ():
            out.add(pair[0])


def impacted_accounts(op: list, result: list | None = None) -> set:
    """Account ids whose history ``op`` belongs to (module docstring);
    with account_create's ``result`` (``[1, "1.2.N"]``) the new account is
    included.  Raises :class:`UnknownOperation` for unsupported types."""
    kind = _kind(op)
    data = op[1]
    active, owner = required_authorities(op)
    out = active | owner
    for field in _NAMED.get(kind, ()):
        value = data.get(field)
        if value is not None:
            out.add(value)
    if kind in (5, 6):
        _authority_accounts(data.get("owner"), out)
        _authority_accounts(data.get("active"), out)
    for auth in other_authorities(op):
        _authority_accounts(auth, out)
    if kind == 5 and result and result[0] == 1 and isinstance(result[1], str):
        out.add(result[1])
    return out
