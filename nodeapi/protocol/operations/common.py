"""Fields and helpers shared by the operation families.

Every operation starts with ``fee`` (an asset) and most end with
``extensions`` (``future_extensions``); bitshares-core reflects a few with
other first fields (proposal_update, proposal_delete, fill_order ...), so
each family module lists its fields in ``FC_REFLECT`` order explicitly.
"""

from nodeapi.protocol.composite import FUTURE_EXTENSIONS, Struct
from nodeapi.protocol.types import ASSET

FEE = ("fee", ASSET)
EXT = ("extensions", FUTURE_EXTENSIONS)


def op(name: str, fields: list) -> Struct:
    """The struct of ``<name>_operation`` with ``fields`` in reflection order."""
    return Struct(name + "_operation", fields)


class Impacted:
    """What an operation adds to the accounts whose history it belongs to,
    beyond its fee payer and the accounts whose authority it requires
    (bitshares-core libraries/chain/db_notify.cpp
    ``get_impacted_account_visitor``, one ``operator()`` per operation;
    joined in :mod:`nodeapi.protocol.impacted`).

    :param named: fields naming accounts (optional ones may be absent).
    :param authorities: fields holding authorities whose ``account_auths``
        are impacted.
    :param blind: fields holding lists of blind inputs/outputs whose
        ``owner`` authority's ``account_auths`` are impacted.
    :param proposed: proposal_create: add what every proposed operation
        requires.
    :param result: account_create: add the new account named by the
        operation's result ``[1, "1.2.N"]``.
    :param only: ``rule(data) -> set`` of account ids replacing the fee
        payer and required authorities (virtual operations whose visitor
        does not insert ``fee_payer()``).
    """

    __slots__ = ("named", "authorities", "blind", "proposed", "result", "only")

    def __init__(self, named: tuple = (), authorities: tuple = (), blind: tuple = (),
                 proposed: bool = False, result: bool = False, only=None):
        self.named = named
        self.authorities = authorities
        self.blind = blind
        self.proposed = proposed
        self.result = result
        self.only = only


#: the rule of an operation that impacts only its fee payer and the
#: accounts whose authority it requires
FEE_PAYER_ONLY = Impacted()


# -- fee formulas (each operation's ``calculate_fee``) ----------------------
#
# A family's ``CALCULATE_FEE`` maps a type to ``fee(data, params, context)
# -> core satoshis`` before the schedule's scale: ``data`` is the operation
# body (JSON as graphene holds it), ``params`` its ``fee_params_t`` as
# ``{name: int}`` and ``context`` a
# :class:`~nodeapi.protocol.fee_schedule.FeeContext` (serialized sizes, the
# schedule's other entries).  Types not listed pay their flat ``fee``.


def data_fee(size: int, price_per_kbyte: int) -> int:
    """graphene ``base_operation::calculate_data_fee``: ``size * price /
    1024`` rounded down (bytes, satoshis per kilobyte)."""
    return size * price_per_kbyte // 1024


def flat_fee(data: dict, params: dict, context) -> int:
    """The ``fee`` parameter alone (most operations' ``calculate_fee``)."""
    return params["fee"]


def zero_fee(data: dict, params: dict, context) -> int:
    """0: the virtual operations and balance_claim (their ``calculate_fee``)."""
    return 0


def memo_priced_fee(data: dict, params: dict, context) -> int:
    """``fee`` plus ``price_per_kbyte`` over the ``optional`` memo's packed
    size (flag byte included), when there is a memo (transfer.cpp)."""
    memo = data.get("memo")
    if not memo:
        return params["fee"]
    return params["fee"] + data_fee(context.optional_memo(memo), params["price_per_kbyte"])


def body_priced_fee(data: dict, params: dict, context) -> int:
    """``fee`` plus ``price_per_kbyte`` over the packed operation struct
    (``fc::raw::pack_size(*this)``)."""
    return params["fee"] + data_fee(context.body(), params["price_per_kbyte"])


# -- required authorities beyond the fee payer's active --------------------
#
# A family's ``REQUIRED_AUTHORITIES`` maps a type to ``rule(data, active,
# owner)`` adding account ids to the two sets (the operation's
# ``get_required_active_authorities`` / ``get_required_owner_authorities``);
# its ``OTHER_AUTHORITIES`` maps a type to ``rule(data) -> [authority]``
# (``get_required_authorities``).  Types not listed need only their fee
# payer's active authority.


def key_authority(keys, threshold: int | None = None) -> dict:
    """An ``authority`` (JSON) over public keys, each of weight 1, with the
    given threshold (default: 1)."""
    return {"weight_threshold": 1 if threshold is None else threshold, "account_auths": [],
            "key_auths": [[k, 1] for k in sorted(set(keys))], "address_auths": []}
