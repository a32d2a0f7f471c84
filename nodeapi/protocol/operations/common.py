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
