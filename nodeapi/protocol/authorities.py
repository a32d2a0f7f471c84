"""Fee payer and required authorities of every operation type 0-77.

Reference: bitshares-core libraries/protocol/operations.cpp
``operation_get_required_authorities``: the fee payer (each operation's
``fee_payer()``) always needs its active authority; then the operation's
``get_required_active_authorities`` / ``get_required_owner_authorities`` /
``get_required_authorities`` (other authorities) add to that, as declared in
libraries/protocol/include/graphene/protocol/*.hpp and proposal.cpp:

- account_create (5) with ``buyback_options``: the asset issuer's active;
- account_update (6) changing ``owner`` or the owner special authority:
  the account's owner (its active stays required as the fee payer);
- proposal_update (23): the active / owner approvals added or removed, and
  one authority over the key approvals added or removed (threshold = number
  of keys, each key weight 1);
- custom (35): ``required_auths`` (ignored before HARDFORK_CORE_210, 2020;
  nodeapi's chains run after it);
- balance_claim (37): ``{threshold 1, balance_owner_key: 1}``;
- transfer_from_blind (41) / blind_transfer (40): each input's ``owner``;
- asset_update_issuer (48): the issuer's owner.

Operations are in their wire (JSON) form ``[type, {...}]``.
"""

from nodeapi.protocol.errors import UnknownOperation
from nodeapi.protocol.operations import VIRTUAL_OPERATIONS, operation_type  # noqa: F401
from nodeapi.protocol.operations.table import FEE_PAYER


def kind_of(op) -> int:
    """The type number of ``[type, {...}]`` (its tag read by
    :func:`~nodeapi.protocol.operations.operation_type`, like fc's
    ``from_variant``) with a dict body; raises :class:`UnknownOperation`
    otherwise (graphene cannot deserialize such an ``operation``)."""
    if not isinstance(op, (list, tuple)) or len(op) != 2 or not isinstance(op[1], dict):
        raise UnknownOperation(f"Malformed operation {str(op)[:80]}: expected [type, {{...}}]")
    return operation_type(op[0])


#: type -> the fixed fee payer of the types that name one (``"=1.2.0"``)
_FIXED_PAYER = {k: v[1:] for k, v in FEE_PAYER.items() if v.startswith("=")}


def fee_payer(op: list) -> str:
    """The account id paying the fee of ``[type, {...}]`` (graphene
    ``fee_payer()``, each family module's ``FEE_PAYER``); raises
    :class:`UnknownOperation`."""
    kind = kind_of(op)
    return payer_of(kind, op[1])


def payer_of(kind: int, data: dict) -> str:
    """:func:`fee_payer` of an operation whose type ``kind`` (a valid type
    number, :func:`kind_of`) and body ``data`` are known; raises KeyError
    when the body lacks the payer's field."""
    fixed = _FIXED_PAYER.get(kind)
    return data[FEE_PAYER[kind]] if fixed is None else fixed


def is_owner_update(data: dict) -> bool:
    """account_update's ``is_owner_update()``: sets ``owner`` or the owner
    special authority."""
    ext = data.get("extensions")
    return data.get("owner") is not None or (
        isinstance(ext, dict) and ext.get("owner_special_authority") is not None)


def _ext(data: dict) -> dict:
    ext = data.get("extensions")
    return ext if isinstance(ext, dict) else {}


def required_authorities(op: list) -> tuple[set, set]:
    """``(active account ids, owner account ids)`` whose authority ``op``
    needs (module docstring; graphene ``operation_get_required_authorities``).
    An owner signature also satisfies an active requirement (see
    ``verify_authority``).  Raises :class:`UnknownOperation`."""
    kind = kind_of(op)
    data = op[1]
    return required_of(kind, data, payer_of(kind, data))


def required_of(kind: int, data: dict, payer: str) -> tuple[set, set]:
    """:func:`required_authorities` of an operation whose type ``kind``,
    body ``data`` and fee payer ``payer`` are known."""
    active = {payer}
    owner = set()
    if kind == 5:
        buyback = _ext(data).get("buyback_options")
        if buyback:
            active.add(buyback["asset_to_buy_issuer"])
    elif kind == 6:
        if is_owner_update(data):
            owner.add(data["account"])
    elif kind == 23:
        active.update(data.get("active_approvals_to_add") or ())
        active.update(data.get("active_approvals_to_remove") or ())
        owner.update(data.get("owner_approvals_to_add") or ())
        owner.update(data.get("owner_approvals_to_remove") or ())
    elif kind == 35:
        active.update(data.get("required_auths") or ())
    elif kind == 48:
        owner.add(data["issuer"])
    return active, owner


def key_authority(keys, threshold: int | None = None) -> dict:
    """An ``authority`` (JSON) over public keys, each of weight 1, with the
    given threshold (default: 1)."""
    return {"weight_threshold": 1 if threshold is None else threshold, "account_auths": [],
            "key_auths": [[k, 1] for k in sorted(set(keys))], "address_auths": []}


def other_authorities(op: list) -> list:
    """Authorities ``op`` needs besides accounts' (graphene
    ``get_required_authorities``, module docstring), as authority dicts;
    empty for most types.  Raises :class:`UnknownOperation`."""
    kind = kind_of(op)
    data = op[1]
    if kind == 37:
        return [key_authority([data["balance_owner_key"]])]
    if kind == 23:
        keys = set(data.get("key_approvals_to_add") or ())
        keys.update(data.get("key_approvals_to_remove") or ())
        return [key_authority(keys, len(keys))] if keys else []
    if kind in (40, 41):
        return [i["owner"] for i in data.get("inputs") or ()]
    return []


def authority_accounts(auth, out: set) -> None:
    """Add the ``account_auths`` accounts of an authority dict to ``out``
    (graphene ``add_authority_accounts``)."""
    if auth:
        for pair in auth.get("account_auths") or ():
            out.add(pair[0])
