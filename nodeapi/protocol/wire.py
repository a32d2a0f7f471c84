"""Wire JSON back to the in-memory form (docs/DESIGN.rst: wire JSON is the
in-memory form everywhere, except that the RPC layer writes 64-bit integers
outside int32 as strings, docs/wire-contract.rst section 3).

Used where blocks and transactions arrive over RPC: network_broadcast
(``broadcast_transaction``, ``broadcast_block``) and the peer follower
(blocks fetched with ``get_blocks`` / ``get_block``).
"""

# Fields graphene's database get_block adds to a signed block
# (signed_block_with_info, bitshares-core libraries/app/database_api.cpp).
_INFO_FIELDS = ("block_id", "signing_key", "transaction_ids")
# 64-bit (or uint32) integer fields of the supported operations and of a
# transaction that the RPC layer writes as strings when outside int32.
_WIRE_INT_FIELDS = frozenset(("amount", "max_supply", "max_market_fee", "ref_block_prefix"))


def wire_ints(value, key=None):
    """``value`` (any JSON value) with the numeric strings of the 64-bit
    fields (``amount``, ``max_supply``, ``max_market_fee``,
    ``ref_block_prefix``) made ints again, so a node stores (and its plugins
    see) exactly the producer's in-memory block.  Other strings (memos, ids)
    are untouched.  Recursive: a value nested deeper than Python's recursion
    limit raises ``RecursionError``."""
    if isinstance(value, dict):
        return {k: wire_ints(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [wire_ints(v) for v in value]
    if key in _WIRE_INT_FIELDS and isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return value


def strip_block_info(block: dict) -> dict:
    """A signed block (dict) without the ``block_id``/``signing_key``/
    ``transaction_ids`` fields that ``get_block`` adds, with wire integers
    converted back (:func:`wire_ints`).  Raises ``AttributeError`` when
    ``block`` is not a dict."""
    return wire_ints({k: v for k, v in block.items() if k not in _INFO_FIELDS})
