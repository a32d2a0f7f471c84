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
