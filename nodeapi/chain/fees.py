"""The fee schedule: required fee of an operation, in core satoshis.

Graphene reference: ``fee_schedule::calculate_fee`` and each operation's
``calculate_fee`` (libraries/protocol/*.cpp).  ``price_per_kbyte`` charges
``bytes * price_per_kbyte / 1024`` over the serialized size of the memo
(transfer, asset_issue), of the data (custom) or of the whole operation
(other operations with that parameter); the sum is multiplied by
``scale / 10000``.  Fees paid in another asset are converted through the
asset's ``core_exchange_rate``.
"""

from nodeapi.protocol.operations import serialize_operation_body
from nodeapi.protocol.types import MEMO

_MEMO_OPS = {0, 14}


def _data_fee(size: int, price_per_kbyte: int) -> int:
    return size * int(price_per_kbyte) // 1024


def op_size(op: list, prefix: str = "TEST") -> int:
    """Serialized size of the operation body (without its type tag)."""
    return len(serialize_operation_body(op, prefix))


def memo_size(memo: dict, prefix: str = "TEST") -> int:
    """Serialized size of a ``memo_data``."""
    out = bytearray()
    MEMO.pack(memo, out, prefix)
    return len(out)


def _is_cheap_name(name: str) -> bool:
    """graphene ``is_cheap_name``: a digit, '-', '.' or '/', or no vowel."""
    if any(c.isdigit() or c in "-./" for c in name):
        return True
    return not any(c in "aeiouy" for c in name)


def core_fee(op: list, schedule: dict, prefix: str = "TEST") -> int:
    """Required fee of ``op`` in core satoshis under ``schedule``
    (``current_fees``: ``{"parameters": [[type, {...}]], "scale": N}``)."""
    kind, data = op
    params = {}
    for k, p in schedule["parameters"]:
        if k == kind:
            params = p
            break
    if kind == 5:
        fee = int(params.get("basic_fee" if _is_cheap_name(data["name"]) else "premium_fee", 0))
    elif kind == 10:
        n = len(data["symbol"])
        fee = int(params.get("symbol3" if n == 3 else "symbol4" if n == 4 else "long_symbol", 0))
    elif kind == 8:
        fee = int(params.get("membership_lifetime_fee" if data.get("upgrade_to_lifetime_member")
                             else "membership_annual_fee", 0))
    else:
        fee = int(params.get("fee", 0))
    ppk = params.get("price_per_kbyte")
    if ppk:
        if kind in _MEMO_OPS:
            if data.get("memo"):
                fee += _data_fee(memo_size(data["memo"], prefix), ppk)
        elif kind == 35:
            fee += _data_fee(len(bytes.fromhex(data.get("data", ""))), ppk)
        else:
            fee += _data_fee(op_size(op, prefix), ppk)
    return fee * int(schedule.get("scale", 10000)) // 10000


def fee_in_core(amount: int, asset: dict) -> int:
    """Value of ``amount`` of ``asset`` in core satoshis via its
    ``core_exchange_rate`` (graphene ``asset * price``)."""
    if asset["id"] == "1.3.0":
        return amount
    cer = asset["options"]["core_exchange_rate"]
    base, quote = cer["base"], cer["quote"]
    if base["asset_id"] == asset["id"]:
        return amount * int(quote["amount"]) // int(base["amount"])
    return amount * int(base["amount"]) // int(quote["amount"])
